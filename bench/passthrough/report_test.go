package main

import "testing"

func TestMedian_OddAndEven(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestQuartiles(t *testing.T) {
	tests := []struct {
		in     []float64
		lo, hi float64
	}{
		{[]float64{2}, 2, 2},
		{[]float64{4, 1}, 1, 4},
		{[]float64{5, 1, 3}, 1, 5},
		{[]float64{7, 1, 3, 5, 9, 11, 13}, 3, 11},
		{[]float64{4, 1, 3, 2}, 1.5, 3.5},
	}
	for _, tt := range tests {
		if lo, hi := quartiles(tt.in); lo != tt.lo || hi != tt.hi {
			t.Errorf("quartiles(%v) = %v, %v, want %v, %v", tt.in, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestPairedRatios_ByRound(t *testing.T) {
	c := benchCase{workload: workload{name: "w"}, clients: clients{conns: 1, threads: 1}}
	r := newResults()
	for _, v := range [][2]float64{{90, 100}, {100, 100}, {120, 100}} {
		r.add(c, "a", outcome{tps: v[0]})
		r.add(c, "b", outcome{tps: v[1]})
	}
	r.add(c, "a", outcome{tps: 50}) // a round b did not run
	got := r.pairedRatios(c, "a", "b").String()
	if want := "1.00 [0.90, 1.20]; ≥0.95: 2/3, ≥1: 2/3"; got != want {
		t.Errorf("pairedRatios = %q, want %q", got, want)
	}
}

func TestParseCells(t *testing.T) {
	got, err := parseCells("select-only-simple:1, tpcb-like-simple:8")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].String() != "select-only simple, 1 client(s)" || got[1].clients != (clients{conns: 8, threads: 2}) {
		t.Errorf("parseCells = %v", got)
	}
	for _, bad := range []string{"select-only-simple", "select-only-simple:0", "nope:1", "select-only-simple:x"} {
		if _, err := parseCells(bad); err == nil {
			t.Errorf("parseCells(%q): no error", bad)
		}
	}
}
