package refresh

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the refresh scheduler's Prometheus metrics. A nil *Metrics
// records nothing.
type Metrics struct {
	errors      *prometheus.CounterVec
	lastRefresh *prometheus.GaugeVec
	duration    *prometheus.HistogramVec
	rows        *prometheus.GaugeVec
	retention   *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dataset_acceleration_refresh_errors_total",
			Help: "Failed refreshes of a dataset's acceleration, by cause (connection, timeout, origin_restart, serialization, resources, auth, tls, schema, sql, config, other).",
		}, []string{"dataset", "reason"}),
		lastRefresh: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dataset_acceleration_last_refresh_unix_time_ms",
			Help: "When the dataset's last successful refresh completed, in Unix milliseconds.",
		}, []string{"dataset"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dataset_acceleration_refresh_duration_seconds",
			Help:    "Duration of successful refreshes.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"dataset", "mode"}),
		rows: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dataset_acceleration_rows",
			Help: "Rows in the dataset's acceleration.",
		}, []string{"dataset"}),
		retention: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dataset_acceleration_retention_deleted_rows_total",
			Help: "Rows removed from the dataset's acceleration by its retention policy.",
		}, []string{"dataset"}),
	}
	reg.MustRegister(m.errors, m.lastRefresh, m.duration, m.rows, m.retention)
	return m
}

func (m *Metrics) refreshFailed(dataset, reason string) {
	if m != nil {
		m.errors.WithLabelValues(dataset, reason).Inc()
	}
}

func (m *Metrics) refreshed(dataset, mode string, st loadOutcome) {
	if m == nil {
		return
	}
	m.lastRefresh.WithLabelValues(dataset).Set(float64(st.completed.UnixMilli()))
	m.duration.WithLabelValues(dataset, mode).Observe(st.duration.Seconds())
	m.rows.WithLabelValues(dataset).Set(float64(st.rows))
}

func (m *Metrics) restored(dataset string, lastMs int64, rows int64) {
	if m == nil {
		return
	}
	m.lastRefresh.WithLabelValues(dataset).Set(float64(lastMs))
	m.rows.WithLabelValues(dataset).Set(float64(rows))
}

func (m *Metrics) retained(dataset string, deleted, rows int64) {
	if m == nil {
		return
	}
	m.retention.WithLabelValues(dataset).Add(float64(deleted))
	m.rows.WithLabelValues(dataset).Set(float64(rows))
}
