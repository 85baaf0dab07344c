package main

import (
	"strings"
	"testing"
)

// -pool reads the TPS-by-round tables of two reports and pairs their
// rounds target by target.
func TestPool_ReadRuns(t *testing.T) {
	report := func(a, p string) string {
		return "| Workload | Clients | pgaccel/pgbouncer |\n|---|--:|---|\n| select-only simple | 1 | 0.97 [0.90, 1.11] |\n\n" +
			"Every run, TPS by round:\n\n| Workload | Clients | Target | 1 | 2 |\n|---|--:|---|--:|--:|\n" +
			"| select-only simple | 1 | pgaccel | " + a + " |\n| select-only simple | 1 | pgaccel-passthrough | " + p + " |\n\nWhere the rest is.\n| not | a | row |\n"
	}
	runs := poolRuns{}
	for _, r := range []string{report("90 | 100", "100 | 100"), report("95 | 120", "100 | 100")} {
		if err := readRuns(strings.NewReader(r), runs); err != nil {
			t.Fatal(err)
		}
	}
	c := runs["select-only simple|1"]
	if len(runs) != 1 || len(c) != 2 || len(c[targetPgaccel]) != 4 || len(c[targetPlain]) != 4 {
		t.Fatalf("runs %v", runs)
	}
	xs := roundRatios(c[targetPgaccel], c[targetPlain])
	if got := median(xs); got != 0.975 {
		t.Errorf("median of %v: %v, want 0.975", xs, got)
	}
	if lo, hi := bootstrapMedian(xs); lo < 0.9 || hi > 1.2 || lo > hi {
		t.Errorf("interval [%v, %v]", lo, hi)
	}
	if err := readRuns(strings.NewReader("Every run, TPS by round:\n| a | 1 | pgaccel | x |\n"), poolRuns{}); err == nil {
		t.Error("a TPS that is no number was read")
	}
}
