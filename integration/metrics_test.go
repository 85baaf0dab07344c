package integration

import (
	"testing"
)

// TestMetrics_RoutesDatasetsAndDurations: every route is timed, a
// statement is counted once per dataset it reads (also on the origin
// route), and pgaccel_statements_total counts it once.
func TestMetrics_RoutesDatasetsAndDurations(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	c := connect(t, appDSN(a, appUser, appPass))
	delta := func(name string, labels []string, fn func()) map[string]float64 {
		before := metricSums(t, a.Metrics, name, labels...)
		fn()
		after := metricSums(t, a.Metrics, name, labels...)
		for k, v := range before {
			after[k] -= v
			if after[k] == 0 {
				delete(after, k)
			}
		}
		return after
	}
	byDataset := []string{"route", "dataset"}
	join := "SELECT count(*) FROM acc_orders o JOIN acc_customers c ON c.id = o.customer_id"
	if got := delta("pgaccel_queries_total", byDataset, func() { mustQuery(t, c, join) }); len(got) != 2 ||
		got["accelerated|acc_orders"] != 1 || got["accelerated|acc_customers"] != 1 {
		t.Errorf("a join of two datasets: %v, want one count in each dataset's series", got)
	}
	if got := delta("pgaccel_statements_total", []string{"route"}, func() { mustQuery(t, c, join) }); got["accelerated"] != 1 || len(got) != 1 {
		t.Errorf("statements of a join: %v, want 1 accelerated", got)
	}
	unsupported := "SELECT format('%s', name) FROM acc_customers c JOIN acc_orders o ON o.customer_id = c.id WHERE o.id = 3"
	if got := delta("pgaccel_queries_total", byDataset, func() { mustQuery(t, c, unsupported) }); len(got) != 2 ||
		got["origin|acc_orders"] != 1 || got["origin|acc_customers"] != 1 {
		t.Errorf("a read of two datasets sent to the origin: %v, want both datasets labelled", got)
	}
	if got := delta("pgaccel_query_duration_seconds", []string{"route"}, func() {
		mustQuery(t, c, unsupported)
		mustQuery(t, c, join)
		mustQuery(t, c, "SELECT to_char(sum(amount), 'FM999999990.00') FROM acc_orders") // DuckDB cannot: falls back
	}); got["origin"] != 1 || got["accelerated"] != 1 || got["fallback"] != 1 {
		t.Errorf("durations observed: %v, want one each of origin, accelerated and fallback", got)
	}
}
