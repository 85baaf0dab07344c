package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestHistogram_SubAndQuantile(t *testing.T) {
	before := histogram{bounds: []float64{0.1, 0.5, 1}, counts: []uint64{10, 20, 20}, count: 20}
	after := histogram{bounds: []float64{0.1, 0.5, 1}, counts: []uint64{10, 70, 118}, count: 120}
	d := after.sub(before) // 0 ≤ 0.1, 50 in (0.1, 0.5], 48 in (0.5, 1], 2 above
	if d.count != 100 {
		t.Fatalf("count = %d", d.count)
	}
	for _, tc := range []struct {
		q    float64
		want float64
	}{{0.5, 0.5}, {0.51, 1}, {0.98, 1}, {0.99, math.Inf(1)}} {
		if got, ok := d.quantile(tc.q); !ok || got != tc.want {
			t.Errorf("quantile(%v) = %v, %v; want %v", tc.q, got, ok, tc.want)
		}
	}
	if _, ok := (histogram{}).quantile(0.5); ok {
		t.Error("empty histogram: ok")
	}
}

// stepWith is a step at target whose markers have lags, one every 25 ms.
func stepWith(target int, tps float64, lags ...time.Duration) *stepResult {
	s := &stepResult{target: target, pg: pgbenchResult{tps: tps, perSecond: []float64{tps}}, loadAvg: "1.00 1.00 1.00", check: "equal", equal: true}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i, l := range lags {
		c := t0.Add(time.Duration(i) * 25 * time.Millisecond)
		s.markers = append(s.markers, marker{id: int64(-i - 1), committed: c, seen: c.Add(l)})
	}
	s.drain = marker{committed: t0, seen: t0.Add(120 * time.Millisecond)}
	s.polls, s.accelerated = 10, 10
	return s
}

func TestReport_TargetsAndHighestSustained(t *testing.T) {
	r := &report{
		command: "go run ./bench/cdc -rates 1000,5000,max",
		opts:    options{duration: 10 * time.Second, rows: 1000, clients: 8, threads: 2, mode: "file", markerEvery: 25 * time.Millisecond, pollEvery: 50 * time.Millisecond, syncCommit: "on"},
		machine: machineInfo{nproc: 2, started: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		steps: []*stepResult{
			stepWith(1000, 998, repeat(ms(90), 30)...),
			stepWith(5000, 4990, append(repeat(ms(150), 29), ms(1500))...),
			stepWith(0, 7700, append(append(repeat(ms(300), 10), repeat(ms(900), 10)...), repeat(ms(2000), 10)...)...),
		},
		catchUp: &catchUpResult{rows: 100001, resumeAt: 100 * time.Millisecond, doneAt: 2100 * time.Millisecond, hasResume: true, check: "equal"},
	}
	if hs, above := r.highestSustained(); hs == nil || hs.target != 5000 || len(above) != 0 {
		t.Fatalf("highest sustained = %+v, above %v", hs, above)
	}
	lo, hi, ok := r.bounds()
	if !ok || lo != 4990 || hi != 7700 {
		t.Errorf("bounds = %v, %v, %v", lo, hi, ok)
	}
	md := r.markdown()
	for _, want := range []string{
		"p99 lag under 1s at 5000 ops/s: **1500 ms** at 4990 ops/s achieved (NOT met)",
		"catch-up at least 50k rows/s: **50000 rows/s** (met)",
		"**Highest rate applied without growing lag: 4990 ops/s**",
		"| max (unthrottled) | 7700 |",
		"(growing)",
		"no: lag grows",
		"Sequin: 55 ms average, 253 ms p99",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	// Rows sorted by target, max last.
	if i, j := strings.Index(md, "| 1000 |"), strings.Index(md, "| max (unthrottled) |"); i < 0 || j < i {
		t.Errorf("row order:\n%s", md)
	}
}

// A sustained rate above one that was not is not the headline.
func TestReport_HighestSustainedIsBelowTheFirstFailure(t *testing.T) {
	r := &report{steps: []*stepResult{
		stepWith(1000, 998, repeat(ms(90), 30)...),
		stepWith(5000, 4990, append(repeat(ms(100), 15), repeat(ms(900), 15)...)...),
		stepWith(0, 7800, repeat(ms(1000), 30)...),
		stepWith(10000, 9200, append(repeat(ms(100), 15), repeat(ms(900), 15)...)...),
	}}
	hs, above := r.highestSustained()
	if hs == nil || hs.target != 1000 || len(above) != 1 || above[0].target != 0 {
		t.Fatalf("highest sustained = %+v, above %+v", hs, above)
	}
	if lo, hi, ok := r.bounds(); !ok || lo != 998 || hi != 5000 {
		t.Errorf("bounds = %v, %v, %v", lo, hi, ok)
	}
	if !r.tried(5000) || r.tried(3000) {
		t.Error("tried")
	}
}
