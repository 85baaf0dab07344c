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
	sessions prometheus.Gauge
	pooled   prometheus.Gauge
	origin   prometheus.Counter
	requests *prometheus.CounterVec
	loops    *prometheus.CounterVec
	links    *prometheus.CounterVec
	panics   prometheus.Counter
	derived  *prometheus.CounterVec
	// rywWaits and rywWaitSeconds: read-your-writes' waits for a changes
	// dataset to apply a session's commit (consistency.go).
	rywWaits       *prometheus.CounterVec
	rywWaitSeconds prometheus.Histogram

	// The series every statement counts in (pgaccel_queries_total,
	// pgaccel_statements_total, pgaccel_query_duration_seconds and
	// pgaccel_event_loop_lane_round_trips_total) are striped (stripes.go)
	// and collected by stats.
	stats      *statementStats
	lane       *stripedCounter
	statements sync.Map // [2]string{route, reason} -> *stripedCounter
	queries    sync.Map // queryLabels -> *stripedCounter
	durations  sync.Map // route -> *stripedHistogram
	// children caches a statement's two counters by its labels.
	children sync.Map // queryLabels -> *routeCounters
	// durAccel, durOrigin and durFallb are the durations of the three
	// routes (no lookup per statement).
	durAccel, durOrigin, durFallb *stripedHistogram
}

// queryLabels keys a statement's counters (dataset: its first, or "").
type queryLabels struct {
	route, dataset, reason string
}

// lastCounters are the counters a session counted its last few kinds of
// statement in (a pgbench TPC-B transaction counts in three: transaction,
// write and no_dataset), the most recent first.
type lastCounters struct {
	keys [4]queryLabels
	cs   [4]*routeCounters
}

// find returns the counters of key the session has, nil when it has none.
func (l *lastCounters) find(key queryLabels) *routeCounters {
	for i, c := range l.cs {
		if c != nil && l.keys[i] == key {
			return c
		}
	}
	return nil
}

// put keeps c as key's counters, first.
func (l *lastCounters) put(key queryLabels, c *routeCounters) {
	copy(l.keys[1:], l.keys[:len(l.keys)-1])
	copy(l.cs[1:], l.cs[:len(l.cs)-1])
	l.keys[0], l.cs[0] = key, c
}

// routeCounters are the children a statement of a route, reason and
// (first) dataset counts in: one map lookup per statement.
type routeCounters struct {
	statement, query *stripedCounter
}

// NewMetrics registers the proxy's collectors on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pgaccel_client_sessions",
			Help: "Client sessions past authentication.",
		}),
		pooled: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pgaccel_origin_pool_connections",
			Help: "Idle origin connections the pool keeps for the next session of the same role, database and startup parameters (auth.mode proxy): left by sessions that ended, or released after auth.origin_idle_timeout idle; each is closed after that timeout unused.",
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
			Help: "Sessions an event loop took (event=taken; event=promoted counts those of them that came back from goroutines), and those it handed back to goroutines: a write the client or origin socket could not take (event=write_blocked), more than one turn may relay (event=busy), a statement that must run on goroutines, such as an accelerated read (event=handed_off), or an idle origin connection to release (event=released), or a session that ended with its origin connection going to the pool (event=pooled).",
		}, []string{"event"}),
		links: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgaccel_origin_links_total",
			Help: "Origin links of sessions with datasets, by event: login (auth.mode proxy: a login that logged in at the origin), login_without_origin (auth.mode proxy: a login completed from what an earlier session of the same role and settings started with, no origin connection opened), reconnected (an origin connection opened for a session that had none, its settings and prepared statements set up again), detached (the origin connection broke while the session was idle and the session went on), stand_in (a statement needed the origin and it could not be reached: the client got ERROR 08006), released (an idle session's origin connection, after auth.origin_idle_timeout, or that of a session that ended, reset into the pool, or closed), reused (a session took a pooled connection instead of logging in), login_refused (a wrong password, or an unknown role).",
		}, []string{"event"}),
		derived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgaccel_derived_descriptions_total",
			Help: "Row and parameter descriptions pgaccel works out itself for reads the origin cannot describe during an outage (planner.Describe), by result: used (a read answered with one during an outage), matched or differed (checked against the origin's own description of a new text while the origin answers; a text whose description differed is not worked out again, and the log says which), declined (a new text pgaccel cannot describe itself: during an outage it would need one of the same shape described before).",
		}, []string{"result"}),
		rywWaits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgaccel_read_your_writes_waits_total",
			Help: "Reads of a changes dataset by a session whose own commit (runtime.read_your_writes) the acceleration had not applied yet, by outcome: reached (it applied the commit within read_your_writes.max_wait and answered), timeout (it did not; the origin answered), origin (a point read, or max_wait 0: the origin answered without waiting). Every read sent to the origin for read-your-writes counts in pgaccel_statements_total with reason read_your_writes.",
		}, []string{"outcome"}),
		rywWaitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "pgaccel_read_your_writes_wait_seconds",
			Help:    "How long reads waited for a changes dataset to apply their session's commit (runtime.read_your_writes), whatever the outcome.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .2, .5, 1},
		}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pgaccel_session_panics_total",
			Help: "Client sessions closed because their handling panicked (a bug in pgaccel; the log has the stack): the session ends, the proxy goes on.",
		}),
	}
	m.stats = newStatementStats(m)
	m.lane = new(stripedCounter)
	m.durAccel = m.durationOf(routeAccelerated)
	m.durOrigin = m.durationOf(routeOrigin)
	m.durFallb = m.durationOf(routeFallback)
	if reg != nil {
		reg.MustRegister(m.stats, m.sessions, m.pooled, m.origin, m.requests, m.loops, m.links, m.panics, m.derived, m.rywWaits, m.rywWaitSeconds)
	}
	return m
}

// laneTrip counts a round trip of the origin lane (lane.go).
func (m *Metrics) laneTrip(stripe uint8) {
	if m != nil {
		m.lane.inc(stripe)
	}
}

// derivedDescription counts a description pgaccel worked out
// (pgaccel_derived_descriptions_total).
func (m *Metrics) derivedDescription(result string) {
	if m != nil {
		m.derived.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) loopEvent(event string) {
	if m == nil {
		return
	}
	m.loops.WithLabelValues(event).Inc()
}

// count counts one statement that reads datasets (none: nil) and took
// route, for reason: once in pgaccel_statements_total, once per dataset
// in pgaccel_queries_total. stripe is the session's (newStripe).
func (m *Metrics) count(stripe uint8, route string, datasets []string, reason string) {
	m.countWith(stripe, nil, route, datasets, reason)
}

// countWith is count with last, a session's last counters: a session's
// statements mostly count in the same series, found then without the
// map's hashing.
func (m *Metrics) countWith(stripe uint8, last *lastCounters, route string, datasets []string, reason string) {
	if m == nil {
		return
	}
	first := ""
	if len(datasets) > 0 {
		first = datasets[0]
	}
	key := queryLabels{route: route, dataset: first, reason: reason}
	var c *routeCounters
	if last != nil {
		c = last.find(key)
	}
	if c == nil {
		c = m.counters(key)
		if last != nil {
			last.put(key, c)
		}
	}
	m.countIn(stripe, c, route, datasets, reason)
}

// countersOf are the counters a statement of route, datasets and reason
// counts in first (countIn).
func (m *Metrics) countersOf(route string, datasets []string, reason string) *routeCounters {
	first := ""
	if len(datasets) > 0 {
		first = datasets[0]
	}
	return m.counters(queryLabels{route: route, dataset: first, reason: reason})
}

// countIn counts a statement in c, countersOf(route, datasets, reason).
func (m *Metrics) countIn(stripe uint8, c *routeCounters, route string, datasets []string, reason string) {
	c.statement.inc(stripe)
	c.query.inc(stripe)
	for i := 1; i < len(datasets); i++ {
		m.counters(queryLabels{route: route, dataset: datasets[i], reason: reason}).query.inc(stripe)
	}
}

func (m *Metrics) counters(key queryLabels) *routeCounters {
	c, ok := m.children.Load(key)
	if !ok {
		st, _ := m.statements.LoadOrStore([2]string{key.route, key.reason}, new(stripedCounter))
		q, _ := m.queries.LoadOrStore(key, new(stripedCounter))
		c, _ = m.children.LoadOrStore(key, &routeCounters{statement: st.(*stripedCounter), query: q.(*stripedCounter)})
	}
	return c.(*routeCounters)
}

// durationOf is route's pgaccel_query_duration_seconds.
func (m *Metrics) durationOf(route string) *stripedHistogram {
	h, ok := m.durations.Load(route)
	if !ok {
		h, _ = m.durations.LoadOrStore(route, new(stripedHistogram))
	}
	return h.(*stripedHistogram)
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

// Events of pgaccel_origin_links_total.
const (
	linkLoginWithout = "login_without_origin"
	linkLogin        = "login"
	linkReconnected  = "reconnected"
	linkDetached     = "detached"
	linkStandInEvent = "stand_in"
	linkLoginRefused = "login_refused"
	linkReleased     = "released"
	linkReused       = "reused"
)

// rywWait counts a read-your-writes wait of d by outcome.
func (m *Metrics) rywWait(outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.rywWaits.WithLabelValues(outcome).Inc()
	if outcome != "origin" {
		m.rywWaitSeconds.Observe(d.Seconds())
	}
}

func (m *Metrics) link(event string) {
	if m != nil {
		m.links.WithLabelValues(event).Inc()
	}
}

// observeDuration records the duration d of a statement of route, in
// stripe (the session's).
func (m *Metrics) observeDuration(stripe uint8, route string, d time.Duration) {
	if m == nil {
		return
	}
	var o *stripedHistogram
	switch route {
	case routeOrigin:
		o = m.durOrigin
	case routeAccelerated:
		o = m.durAccel
	case routeFallback:
		o = m.durFallb
	default:
		o = m.durationOf(route)
	}
	o.observe(stripe, d.Seconds())
}

func (m *Metrics) panicked() {
	if m != nil {
		m.panics.Inc()
	}
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
