package benchutil

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// MetricSums sums the counters of the metric g gathers by the value of
// their label label (pgaccel_statements_total by route, say).
func MetricSums(g prometheus.Gatherer, metric, label string) (map[string]float64, error) {
	mfs, err := g.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather metrics: %w", err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out, nil
}
