package stmtstats

import "github.com/prometheus/client_golang/prometheus"

// adviceMetricTables is how many of the advisor's tables the metrics
// export (bounded cardinality).
const adviceMetricTables = 10

// collector exports the store's size and the advisor's top tables at
// scrape time.
type collector struct {
	s       *Store
	input   func() AdviceInput
	entries *prometheus.Desc
	evicted *prometheus.Desc
	advice  *prometheus.Desc
}

// NewCollector exports s: pgaccel_statement_stats_entries,
// pgaccel_statement_stats_evicted_total and, for the advisor's first ten
// tables, pgaccel_advisor_origin_seconds{table}.
func NewCollector(s *Store, input func() AdviceInput) prometheus.Collector {
	return &collector{s: s, input: input,
		entries: prometheus.NewDesc("pgaccel_statement_stats_entries",
			"Statements (fingerprint, role, database) the statement statistics hold (runtime.statement_stats.max_statements bounds them).", nil, nil),
		evicted: prometheus.NewDesc("pgaccel_statement_stats_evicted_total",
			"Statements dropped from the statement statistics because they were full (since the last reset), their counts kept in the totals.", nil, nil),
		advice: prometheus.NewDesc("pgaccel_advisor_origin_seconds",
			"The origin time of the read statements, since the statistics' reset, that accelerating table (not a dataset) would let pgaccel answer: the advisor's first ten tables (pgaccel advise).",
			[]string{"table"}, nil)}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.entries
	ch <- c.evicted
	ch <- c.advice
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	info := c.s.Info()
	ch <- prometheus.MustNewConstMetric(c.entries, prometheus.GaugeValue, float64(info.Entries))
	ch <- prometheus.MustNewConstMetric(c.evicted, prometheus.CounterValue, float64(info.Evicted))
	if c.input == nil {
		return
	}
	a := Advise(c.s.Snapshot(Filter{}), c.input())
	for i, t := range a.Tables {
		if i == adviceMetricTables {
			break
		}
		ch <- prometheus.MustNewConstMetric(c.advice, prometheus.GaugeValue, t.OriginMS/1000, t.Table)
	}
}
