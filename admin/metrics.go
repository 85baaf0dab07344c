package admin

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgaccel/pgaccel/catalog"
)

// statusCollector exports each dataset's status from the registry at
// scrape time: dataset_acceleration_status{dataset,status} is 1 for the
// current status (Initializing, Ready, Refreshing, Error, ShuttingDown).
type statusCollector struct {
	reg  *catalog.Registry
	desc *prometheus.Desc
}

// NewStatusCollector returns the collector of dataset statuses.
func NewStatusCollector(reg *catalog.Registry) prometheus.Collector {
	return &statusCollector{reg: reg, desc: prometheus.NewDesc("dataset_acceleration_status",
		"1 for the dataset's current status (Initializing, Ready, Refreshing, Error, ShuttingDown).",
		[]string{"dataset", "status"}, nil)}
}

func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.reg.States() {
		if st.Status == catalog.StatusDisabled {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1, st.Name, st.Status.Display())
	}
}
