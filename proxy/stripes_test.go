package proxy

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The striped series expose what Prometheus' own counters and histogram
// did: the same names, labels and types, and every count from every
// stripe, also while sessions count concurrently.
func TestStripedMetrics_Exposition(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stripe := newStripe()
			for range 1000 {
				m.count(stripe, routeOrigin, nil, "no_dataset")
				m.count(stripe, routeAccelerated, []string{"orders", "customers"}, "")
				m.observeDuration(stripe, routeOrigin, time.Duration(g)*time.Millisecond+time.Microsecond) // at least g ms, as a time.Since would be
				m.laneTrip(stripe)
			}
		}()
	}
	wg.Wait()
	want := `
# HELP pgaccel_event_loop_lane_round_trips_total Round trips of sessions with datasets that an event loop relayed to the origin without decoding them: a simple Query, or an extended-protocol stretch up to its Sync, of SELECTs the routing's fast path sends to the origin and that change nothing the session tracks, repeated as the session sent them before.
# TYPE pgaccel_event_loop_lane_round_trips_total counter
pgaccel_event_loop_lane_round_trips_total 8000
# HELP pgaccel_queries_total Statements executed, by route (accelerated, origin, fallback), dataset read and reason for not accelerating: a statement counts once for each dataset it reads (a join of two datasets in both series), once with dataset="" when it reads none. pgaccel_statements_total counts each statement once.
# TYPE pgaccel_queries_total counter
pgaccel_queries_total{dataset="",reason="no_dataset",route="origin"} 8000
pgaccel_queries_total{dataset="customers",reason="",route="accelerated"} 8000
pgaccel_queries_total{dataset="orders",reason="",route="accelerated"} 8000
# HELP pgaccel_statements_total Statements executed, by route (accelerated, origin, fallback) and reason for not accelerating, each once whatever it reads. Statements of sessions without datasets configured are relayed without being counted.
# TYPE pgaccel_statements_total counter
pgaccel_statements_total{reason="",route="accelerated"} 8000
pgaccel_statements_total{reason="no_dataset",route="origin"} 8000
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "pgaccel_event_loop_lane_round_trips_total", "pgaccel_queries_total", "pgaccel_statements_total"); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "pgaccel_query_duration_seconds" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			route := mt.GetLabel()[0].GetValue()
			routes[route] = true
			h := mt.GetHistogram()
			want := uint64(0)
			if route == routeOrigin {
				want = 8000
			}
			if h.GetSampleCount() != want {
				t.Errorf("route %s: %d observations, want %d", route, h.GetSampleCount(), want)
			}
			var prev uint64
			for i, b := range h.GetBucket() {
				if b.GetUpperBound() != durationBuckets[i] || b.GetCumulativeCount() < prev || b.GetCumulativeCount() > h.GetSampleCount() {
					t.Errorf("route %s: bucket %d: le %g, %d", route, i, b.GetUpperBound(), b.GetCumulativeCount())
				}
				prev = b.GetCumulativeCount()
			}
			// Sessions 1-7 observed at least g ms each, 1000 times.
			if route == routeOrigin && (h.GetSampleSum() < 28 || h.GetBucket()[2].GetCumulativeCount() < 1000) {
				t.Errorf("route origin: sum %g, %d at or under 6.4 ms", h.GetSampleSum(), h.GetBucket()[2].GetCumulativeCount())
			}
		}
	}
	if len(routes) != 3 {
		t.Errorf("duration series of routes %v, want the three", routes)
	}
}
