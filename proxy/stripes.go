package proxy

import (
	"math"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Striped series. Every statement a session with datasets runs counts in
// two counters and a histogram, and every lane round trip in a counter.
// As Prometheus' own, with sessions on two cores they are atomic adds on
// the same cache lines, which then move between the cores on every
// statement: in BenchmarkLane/parallel (two sessions, one per core) that
// was about 0.3 µs of each round trip. Here each series is kept in
// metricStripes stripes of their own cache lines, a session counts in
// its own (newStripe), and a scrape sums them (statementStats): two
// sessions share a line only when their stripes are the same. The
// exposition is as before: the same names, help, labels and types.

// metricStripes is how many stripes a series has (a power of two).
const metricStripes = 16

// stripeNext hands out the sessions' stripes in turn.
var stripeNext atomic.Uint32

// newStripe is a new session's stripe.
func newStripe() uint8 { return uint8(stripeNext.Add(1) % metricStripes) }

// stripedCounter is a counter in stripes, each on its own cache lines
// (128 bytes: the adjacent-line prefetcher moves lines in pairs).
type stripedCounter struct {
	s [metricStripes]struct {
		n atomic.Uint64
		_ [120]byte
	}
}

func (c *stripedCounter) inc(stripe uint8) { c.s[stripe%metricStripes].n.Add(1) }

func (c *stripedCounter) value() float64 {
	var t uint64
	for i := range c.s {
		t += c.s[i].n.Load()
	}
	return float64(t)
}

// durationBuckets are pgaccel_query_duration_seconds' upper bounds.
var durationBuckets = prometheus.ExponentialBuckets(0.0001, 4, durationBucketCount)

const durationBucketCount = 10

// stripedHistogram is a histogram of durations in stripes: a stripe's
// counts per bucket (the last: above every bound) and sum.
type stripedHistogram struct {
	s [metricStripes]struct {
		counts [durationBucketCount + 1]atomic.Uint64
		sum    atomic.Uint64 // float64 bits
		_      [32]byte
	}
}

func (h *stripedHistogram) observe(stripe uint8, v float64) {
	s := &h.s[stripe%metricStripes]
	// The first bound at or above v (Prometheus' le).
	i := 0
	for i < durationBucketCount && v > durationBuckets[i] {
		i++
	}
	s.counts[i].Add(1)
	for {
		old := s.sum.Load()
		if s.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// snapshot sums the stripes: the count, the sum and the cumulative counts
// by upper bound, as prometheus.MustNewConstHistogram takes them. The
// count is the buckets' total, so the two agree even while observations
// arrive (the sum may then lag or lead by one).
func (h *stripedHistogram) snapshot() (count uint64, sum float64, buckets map[float64]uint64) {
	var counts [durationBucketCount + 1]uint64
	for i := range h.s {
		s := &h.s[i]
		for j := range counts {
			counts[j] += s.counts[j].Load()
		}
		sum += math.Float64frombits(s.sum.Load())
	}
	buckets = make(map[float64]uint64, durationBucketCount)
	for j, upper := range durationBuckets {
		count += counts[j]
		buckets[upper] = count
	}
	count += counts[durationBucketCount]
	return count, sum, buckets
}

// statementStats collects the striped series of m.
type statementStats struct {
	m                                   *Metrics
	queries, statements, duration, lane *prometheus.Desc
}

func newStatementStats(m *Metrics) *statementStats {
	return &statementStats{
		m: m,
		queries: prometheus.NewDesc("pgaccel_queries_total",
			"Statements executed, by route (accelerated, origin, fallback), dataset read and reason for not accelerating: a statement counts once for each dataset it reads (a join of two datasets in both series), once with dataset=\"\" when it reads none. pgaccel_statements_total counts each statement once.",
			[]string{"route", "dataset", "reason"}, nil),
		statements: prometheus.NewDesc("pgaccel_statements_total",
			"Statements executed, by route (accelerated, origin, fallback) and reason for not accelerating, each once whatever it reads. Statements of sessions without datasets configured are relayed without being counted.",
			[]string{"route", "reason"}, nil),
		duration: prometheus.NewDesc("pgaccel_query_duration_seconds",
			"Time from a statement's arrival (a Query, or an Execute) to its last result (the origin's ReadyForQuery of a Query, or an Execute's completion), by route: accelerated, origin (relayed) and fallback.",
			[]string{"route"}, nil),
		lane: prometheus.NewDesc("pgaccel_event_loop_lane_round_trips_total",
			"Round trips of sessions with datasets that an event loop relayed to the origin without decoding them: a simple Query, or an extended-protocol stretch up to its Sync, of SELECTs the routing's fast path sends to the origin and that change nothing the session tracks, repeated as the session sent them before.",
			nil, nil),
	}
}

func (c *statementStats) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.queries
	ch <- c.statements
	ch <- c.duration
	ch <- c.lane
}

func (c *statementStats) Collect(ch chan<- prometheus.Metric) {
	c.m.queries.Range(func(k, v any) bool {
		l := k.(queryLabels)
		ch <- prometheus.MustNewConstMetric(c.queries, prometheus.CounterValue, v.(*stripedCounter).value(), l.route, l.dataset, l.reason)
		return true
	})
	c.m.statements.Range(func(k, v any) bool {
		l := k.([2]string)
		ch <- prometheus.MustNewConstMetric(c.statements, prometheus.CounterValue, v.(*stripedCounter).value(), l[0], l[1])
		return true
	})
	c.m.durations.Range(func(k, v any) bool {
		count, sum, buckets := v.(*stripedHistogram).snapshot()
		ch <- prometheus.MustNewConstHistogram(c.duration, count, sum, buckets, k.(string))
		return true
	})
	ch <- prometheus.MustNewConstMetric(c.lane, prometheus.CounterValue, c.m.lane.value())
}
