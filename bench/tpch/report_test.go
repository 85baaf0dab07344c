package main

import (
	"strings"
	"testing"
	"time"
)

func TestCompareRows_TiesAndDifferences(t *testing.T) {
	tests := []struct {
		origin, proxy []string
		equal         bool
		want          string
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, true, "equal"},
		{[]string{"a", "b"}, []string{"b", "a"}, true, "equal rows, ties ordered differently"},
		{[]string{"a", "b"}, []string{"a", "c"}, false, `DIFFERENT (2 vs 2 rows; row 2: origin "b", pgaccel "c")`},
		{[]string{"a"}, nil, false, `DIFFERENT (1 vs 0 rows; row 1: origin "a", pgaccel "(none)")`},
	}
	for _, tt := range tests {
		got, equal := compareRows(tt.origin, tt.proxy)
		if got != tt.want || equal != tt.equal {
			t.Errorf("compareRows(%q, %q) = %q, %v; want %q, %v", tt.origin, tt.proxy, got, equal, tt.want, tt.equal)
		}
	}
}

// The summary says what bare DuckDB reaches, the bound of the proxy's
// speedup, over all accelerated queries and over the issue's list.
func TestSummary_BareDuckDBBound(t *testing.T) {
	var r report
	for i, name := range issueQueries {
		ms := func(v int) []time.Duration { return []time.Duration{time.Duration(v) * time.Millisecond} }
		r.queries = append(r.queries, &queryResult{
			q:     query{name: name},
			route: routeAccelerated,
			equal: true,
			times: map[string][]time.Duration{targetOrigin: ms(100 * (i + 1)), targetPgaccel: ms(10 * (i + 1)), targetDuckDB: ms(5 * (i + 1))},
		})
	}
	var b strings.Builder
	r.summary(&b)
	for _, want := range []string{
		"all 10 queries: 10.00×",
		"Bare DuckDB (the planner's rewrite on the engine) over the origin, geometric mean: 20.00× over the 10 accelerated queries",
		"over the issue's Q1 Q3 Q5 Q6 Q10 Q12 Q14 Q17 Q18 Q19: 20.00× (pgaccel 10.00×)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
