package proxy

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Route labels of the query metrics.
const (
	routeAccelerated = "accelerated"
	routeOrigin      = "origin"
	routeFallback    = "fallback"
)

// Metrics are the proxy's Prometheus collectors. Labels are bounded: route,
// dataset (from the config) and reason (a fixed set of planner labels).
type Metrics struct {
	queries  *prometheus.CounterVec
	duration *prometheus.HistogramVec
	sessions prometheus.Gauge
	origin   prometheus.Counter
	requests *prometheus.CounterVec
	loops    *prometheus.CounterVec

	// counters caches queries' children: every statement is counted,
	// and WithLabelValues hashes and locks each time.
	counters sync.Map // queryLabels -> prometheus.Counter
}

type queryLabels struct{ route, dataset, reason string }

// NewMetrics registers the proxy's collectors on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgaccel_queries_total",
			Help: "Statements executed, by route (accelerated, origin, fallback), dataset and reason for not accelerating.",
		}, []string{"route", "dataset", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pgaccel_query_duration_seconds",
			Help:    "Time from a statement's arrival to its last result row, by route (accelerated and fallback; origin statements are relayed and not timed).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"route"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pgaccel_client_sessions",
			Help: "Client sessions past authentication.",
		}),
		origin: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pgaccel_origin_connection_errors_total",
			Help: "Client sessions that could not connect to the origin.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgaccel_origin_requests_total",
			Help: "Requests the proxy made on a client's origin connection for itself, by kind: session_info (user, search_path and settings before accelerating), describe (a new statement text, while DuckDB runs it), describe_statement and describe_portal (inside an extended-protocol stretch, when the client did not describe what it executes), zero_results (on_zero_results: use_source).",
		}, []string{"kind"}),
		loops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgaccel_event_loop_sessions_total",
			Help: "Pass-through sessions an event loop took (event=taken), and those it handed back to goroutines: a write the client or origin socket could not take (event=write_blocked), or more messages than one turn may relay (event=busy).",
		}, []string{"event"}),
	}
	if reg != nil {
		reg.MustRegister(m.queries, m.duration, m.sessions, m.origin, m.requests, m.loops)
	}
	return m
}

// Event-loop events (pgaccel_event_loop_sessions_total).
const (
	loopTaken        = "taken"
	loopWriteBlocked = "write_blocked"
	loopBusy         = "busy"
)

func (m *Metrics) loopEvent(event string) {
	if m == nil {
		return
	}
	m.loops.WithLabelValues(event).Inc()
}

func (m *Metrics) count(route, dataset, reason string) {
	if m == nil {
		return
	}
	key := queryLabels{route, dataset, reason}
	c, ok := m.counters.Load(key)
	if !ok {
		c, _ = m.counters.LoadOrStore(key, m.queries.WithLabelValues(route, dataset, reason))
	}
	c.(prometheus.Counter).Inc()
}

// Kinds of the proxy's own requests to the origin.
const (
	requestSessionInfo       = "session_info"
	requestDescribe          = "describe"
	requestDescribeStatement = "describe_statement"
	requestDescribePortal    = "describe_portal"
	requestZeroResults       = "zero_results"
	requestPointRead         = "point_read"
)

func (m *Metrics) request(kind string) {
	if m != nil {
		m.requests.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) observe(route string, since time.Time) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(route).Observe(time.Since(since).Seconds())
}

func (m *Metrics) originFailed() {
	if m != nil {
		m.origin.Inc()
	}
}

func (m *Metrics) sessionDelta(d float64) {
	if m == nil {
		return
	}
	m.sessions.Add(d)
}
