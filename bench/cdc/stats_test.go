package main

import (
	"testing"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestPercentile_NearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, ms(i))
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{0.5, ms(50)}, {0.9, ms(90)}, {0.99, ms(99)}, {1, ms(100)}, {0.001, ms(1)},
	} {
		if got, ok := percentile(ds, tc.q); !ok || got != tc.want {
			t.Errorf("percentile(1..100 ms, %v) = %v, %v; want %v", tc.q, got, ok, tc.want)
		}
	}
	if got, ok := percentile([]time.Duration{ms(7)}, 0.99); !ok || got != ms(7) {
		t.Errorf("one sample: %v, %v", got, ok)
	}
	if _, ok := percentile(nil, 0.5); ok {
		t.Error("no samples: ok")
	}
	if ds[0] != ms(100) {
		t.Error("percentile sorted its argument")
	}
	if got := mean([]time.Duration{ms(1), ms(2), ms(6)}); got != ms(3) {
		t.Errorf("mean = %v", got)
	}
}

func TestTrendOf_GrowingOnlyWhenTheLagClimbs(t *testing.T) {
	steady := func(n int) []time.Duration {
		var out []time.Duration
		for i := range n {
			out = append(out, ms(80+(i*37)%60)) // 80..139 ms, no direction
		}
		return out
	}
	climbing := func(n int) []time.Duration {
		var out []time.Duration
		for i := range n {
			out = append(out, ms(100+i*20)) // +20 ms per marker
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		lags    []time.Duration
		growing bool
		ok      bool
	}{
		{"steady", steady(300), false, true},
		{"climbing", climbing(300), true, true},
		// Small in absolute terms: 50 → 150 ms is not growth that matters.
		{"doubling but small", append(append(repeat(ms(50), 10), repeat(ms(100), 10)...), repeat(ms(150), 10)...), false, true},
		// Large in absolute terms but not relative: 2.0 → 2.25 s.
		{"high and flat", append(repeat(ms(2000), 10), append(repeat(ms(2100), 10), repeat(ms(2250), 10)...)...), false, true},
		{"too few", []time.Duration{ms(1), ms(2)}, false, false},
	} {
		got := trendOf(tc.lags)
		if got.growing != tc.growing || got.ok != tc.ok {
			t.Errorf("%s: %+v, want growing %v ok %v", tc.name, got, tc.growing, tc.ok)
		}
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestBisect(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   int
		ok     bool
	}{
		{5000, 7700, 6400, true},
		{5012, 10000, 7500, true},
		{5000, 5150, 0, false},
		{6400, 6500, 0, false},
	} {
		got, ok := bisect(tc.lo, tc.hi)
		if got != tc.want || ok != tc.ok {
			t.Errorf("bisect(%v, %v) = %d, %v; want %d, %v", tc.lo, tc.hi, got, ok, tc.want, tc.ok)
		}
	}
}
