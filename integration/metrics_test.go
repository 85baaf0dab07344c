package integration

import (
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/pgaccel/pgaccel/app"
)

// metricSeries returns the values of the counter or histogram name by the
// given labels' values joined with "|" (a histogram's sample count).
func metricSeries(t *testing.T, a *app.App, name string, labels ...string) map[string]float64 {
	t.Helper()
	mfs, err := a.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := ""
			for i, want := range labels {
				if i > 0 {
					key += "|"
				}
				for _, l := range m.GetLabel() {
					if l.GetName() == want {
						key += l.GetValue()
					}
				}
			}
			out[key] += value(m)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	if h := m.GetHistogram(); h != nil {
		return float64(h.GetSampleCount())
	}
	return m.GetCounter().GetValue()
}

// TestMetrics_RoutesDatasetsAndDurations: every route is timed, a
// statement is counted once per dataset it reads (also on the origin
// route), and pgaccel_statements_total counts it once.
func TestMetrics_RoutesDatasetsAndDurations(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	c := connect(t, appDSN(a, appUser, appPass))
	delta := func(name string, labels []string, fn func()) map[string]float64 {
		before := metricSeries(t, a, name, labels...)
		fn()
		after := metricSeries(t, a, name, labels...)
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
	unsupported := "SELECT upper(name) FROM acc_customers c JOIN acc_orders o ON o.customer_id = c.id WHERE o.id = 3"
	if got := delta("pgaccel_queries_total", byDataset, func() { mustQuery(t, c, unsupported) }); len(got) != 2 ||
		got["origin|acc_orders"] != 1 || got["origin|acc_customers"] != 1 {
		t.Errorf("a read of two datasets sent to the origin: %v, want both datasets labelled", got)
	}
	if got := delta("pgaccel_query_duration_seconds", []string{"route"}, func() {
		mustQuery(t, c, unsupported)
		mustQuery(t, c, join)
		mustQuery(t, c, "SELECT date_trunc('month', day) AS m, count(*) FROM acc_orders GROUP BY 1 ORDER BY 1") // DuckDB cannot: falls back
	}); got["origin"] != 1 || got["accelerated"] != 1 || got["fallback"] != 1 {
		t.Errorf("durations observed: %v, want one each of origin, accelerated and fallback", got)
	}
}
