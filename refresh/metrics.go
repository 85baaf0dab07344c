package refresh

import (
	"time"

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

	// refresh_mode: changes.
	lagMs        *prometheus.GaugeVec
	lagBytes     *prometheus.GaugeVec
	applied      *prometheus.CounterVec
	applyLags    *prometheus.HistogramVec
	rebuilds     *prometheus.CounterVec
	reconnects   *prometheus.CounterVec
	orphanBytes  *prometheus.GaugeVec
	snapBytes    *prometheus.CounterVec
	snapDuration *prometheus.HistogramVec
	snapFailures *prometheus.CounterVec
	snapCreated  *prometheus.GaugeVec
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
			Help: "Rows the dataset's acceleration holds (after the last refresh, change batch or retention pass; not the rows a refresh read).",
		}, []string{"dataset"}),
		retention: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dataset_acceleration_retention_deleted_rows_total",
			Help: "Rows removed from the dataset's acceleration by its retention policy.",
		}, []string{"dataset"}),
		lagMs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dataset_replication_lag_ms",
			Help: "refresh_mode: changes: how long the oldest change committed at the origin and not yet applied has waited, in milliseconds (0 when caught up).",
		}, []string{"dataset"}),
		lagBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dataset_replication_lag_bytes",
			Help: "refresh_mode: changes: the origin's WAL past the applied position, in bytes, as the origin last reported it.",
		}, []string{"dataset"}),
		applied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dataset_replication_applied_total",
			Help: "refresh_mode: changes: origin transactions, and row inserts, updates and deletes, applied to the acceleration (kind transaction, insert, update, delete).",
		}, []string{"dataset", "kind"}),
		applyLags: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dataset_replication_apply_lag_seconds",
			Help:    "refresh_mode: changes: from a batch's oldest origin commit to its commit in the acceleration.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 10),
		}, []string{"dataset"}),
		rebuilds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dataset_replication_rebuilds_total",
			Help: "refresh_mode: changes: full loads from a new slot's snapshot (the first, a lost slot or history, a schema change the stream cannot follow, an on-demand refresh).",
		}, []string{"dataset"}),
		reconnects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dataset_replication_reconnects_total",
			Help: "refresh_mode: changes: change stream sessions that ended in an error and reconnect (the acceleration keeps serving meanwhile).",
		}, []string{"dataset"}),
		snapBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dataset_acceleration_snapshot_bytes_total",
			Help: "Bytes of acceleration snapshots uploaded (direction=upload) and downloaded (direction=download) for the dataset.",
		}, []string{"dataset", "direction"}),
		snapDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dataset_acceleration_snapshot_duration_seconds",
			Help:    "Duration of successful snapshot operations: create (copy, upload, metadata), bootstrap and load (download, check, swap).",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"dataset", "operation"}),
		snapFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dataset_acceleration_snapshot_failures_total",
			Help: "Failed snapshot operations (create, bootstrap, load) by reason: schema (the snapshot does not fit the config or the served columns), checksum (size or SHA-256 differ from the metadata), not_found (an object the metadata lists is missing), conflict (metadata writers kept colliding), unknown_outcome (a metadata write got no answer and reading the metadata again could not tell whether it was applied: its object is kept), store (any other error of the location), other.",
		}, []string{"dataset", "operation", "reason"}),
		snapCreated: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dataset_acceleration_snapshot_created_unix_time_ms",
			Help: "When the snapshot the dataset serves was created, in Unix milliseconds (its age: now minus this).",
		}, []string{"dataset"}),
		orphanBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pgaccel_replication_orphan_slot_retained_bytes",
			Help: "Replication slots named by pgaccel (pgaccel_<instance>_...) that no dataset of this instance streams from, by slot, with the WAL each holds at the origin.",
		}, []string{"slot"}),
	}
	reg.MustRegister(m.errors, m.lastRefresh, m.duration, m.rows, m.retention,
		m.lagMs, m.lagBytes, m.applied, m.applyLags, m.rebuilds, m.reconnects, m.orphanBytes,
		m.snapBytes, m.snapDuration, m.snapFailures, m.snapCreated)
	return m
}

// snapshotDone records a successful snapshot operation and its bytes
// (direction upload or download).
func (m *Metrics) snapshotDone(dataset, operation, direction string, bytes int64, d time.Duration) {
	if m != nil {
		m.snapBytes.WithLabelValues(dataset, direction).Add(float64(bytes))
		m.snapDuration.WithLabelValues(dataset, operation).Observe(d.Seconds())
	}
}

func (m *Metrics) snapshotFailed(dataset, operation, reason string) {
	if m != nil {
		m.snapFailures.WithLabelValues(dataset, operation, reason).Inc()
	}
}

func (m *Metrics) snapshotServed(dataset string, created time.Time) {
	if m != nil {
		m.snapCreated.WithLabelValues(dataset).Set(float64(created.UnixMilli()))
	}
}

func (m *Metrics) replicationLag(dataset string, ms, bytes int64) {
	if m != nil {
		m.lagMs.WithLabelValues(dataset).Set(float64(ms))
		m.lagBytes.WithLabelValues(dataset).Set(float64(bytes))
	}
}

// changesApplied counts n applied of kind (insert, update, delete,
// transaction).
func (m *Metrics) changesApplied(dataset, kind string, n int) {
	if m != nil && n > 0 {
		m.applied.WithLabelValues(dataset, kind).Add(float64(n))
	}
}

func (m *Metrics) applyLag(dataset string, d time.Duration) {
	if m != nil {
		m.applyLags.WithLabelValues(dataset).Observe(d.Seconds())
	}
}

func (m *Metrics) reconnected(dataset string) {
	if m != nil {
		m.reconnects.WithLabelValues(dataset).Inc()
	}
}

func (m *Metrics) rebuilt(dataset string) {
	if m != nil {
		m.rebuilds.WithLabelValues(dataset).Inc()
	}
}

// orphanSlots sets the retained WAL of the orphan slots, forgetting the
// others.
func (m *Metrics) orphanSlots(slots map[string]int64) {
	if m == nil {
		return
	}
	m.orphanBytes.Reset()
	for name, n := range slots {
		m.orphanBytes.WithLabelValues(name).Set(float64(n))
	}
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
	m.rows.WithLabelValues(dataset).Set(float64(st.total)) // held, not read: an append reads only the new rows
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
