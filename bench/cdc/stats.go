package main

import (
	"math"
	"slices"
	"time"
)

var posInf = math.Inf(1)

// percentile is the nearest-rank q-quantile (0 < q ≤ 1) of ds, ok false
// when ds is empty.
func percentile(ds []time.Duration, q float64) (time.Duration, bool) {
	if len(ds) == 0 {
		return 0, false
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(q * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1], true
}

// mean is the average of ds, 0 for none.
func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// Lag growth: the median lag of the last third of a run against the
// first third's. A stream that keeps up stays within its batching delay;
// one that does not falls further behind every second.
const (
	growthAbs = 200 * time.Millisecond
	growthRel = 1.25
)

// trend compares the first and last thirds of a run's lags.
type trend struct {
	first, last time.Duration // medians
	growing     bool
	ok          bool // enough samples (at least 3)
}

// trendOf is the trend of lags in commit order.
func trendOf(lags []time.Duration) trend {
	n := len(lags) / 3
	if n == 0 {
		return trend{}
	}
	first, _ := percentile(lags[:n], 0.5)
	last, _ := percentile(lags[len(lags)-n:], 0.5)
	t := trend{first: first, last: last, ok: true}
	t.growing = last-first > growthAbs && float64(last) > growthRel*float64(first)
	return t
}

// bisect picks the next rate to try between the highest sustained rate lo
// and the lowest unsustained one hi, rounded to 100 ops/s; ok is false
// when they are too close to split.
func bisect(lo, hi float64) (int, bool) {
	if hi-lo < 200 {
		return 0, false
	}
	mid := int(math.Round((lo+hi)/2/100) * 100)
	if float64(mid) <= lo || float64(mid) >= hi {
		return 0, false
	}
	return mid, true
}
