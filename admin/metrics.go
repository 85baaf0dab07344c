package admin

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgaccel/pgaccel/catalog"
)

// statusCollector exports each dataset's status from the registry at
// scrape time: dataset_acceleration_status{dataset,status} is 1 for the
// current status (Initializing, Ready, Refreshing, Error, ShuttingDown).
type statusCollector struct {
	reg  *catalog.Registry
	desc *prometheus.Desc
	// age: pgaccel_dataset_data_age_seconds, how old the data served is
	// (catalog.DatasetState.DataAge), for the datasets where it is known.
	age *prometheus.Desc
}

// NewStatusCollector returns the collector of dataset statuses.
func NewStatusCollector(reg *catalog.Registry) prometheus.Collector {
	return &statusCollector{reg: reg, desc: prometheus.NewDesc("dataset_acceleration_status",
		"1 for the dataset's current status (Initializing, Ready, Refreshing, Error, ShuttingDown).",
		[]string{"dataset", "status"}, nil),
		age: prometheus.NewDesc("pgaccel_dataset_data_age_seconds",
			"How old the data a dataset serves is: the time since a moment before which every transaction committed at the origin is in it (the start of the load or append served, the snapshot's, the change stream's last caught-up moment). Reads of a dataset older than its acceleration.max_staleness go to the origin. Not for caching datasets.",
			[]string{"dataset"}, nil)}
}

func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc; ch <- c.age }

func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	for _, st := range c.reg.States() {
		if st.Status == catalog.StatusDisabled {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1, st.Name, st.Status.Display())
		if d, ok := c.reg.Dataset(st.Name); ok {
			if age, ok := st.ServedAge(d, now); ok {
				ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age.Seconds(), st.Name)
			}
		}
	}
}
