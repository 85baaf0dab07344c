package planner

import (
	"context"
	"strings"
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// TestPlan_DetailSaysWhichRule: a statement sent to the origin carries the
// rule that sent it there, beyond the metrics' label.
func TestPlan_DetailSaysWhichRule(t *testing.T) {
	reg := testRegistry(t)
	reg.Update("events", func(s *catalog.DatasetState) { s.Columns[3].NotAccelerated = "type tsvector has no DuckDB type" })
	p := New(reg, newFakeResolver(), Options{})
	for _, tc := range []struct{ sql, reason, detail string }{
		{"SELECT upper(status) FROM orders", ReasonUnsupported, "upper, lower or ILIKE of status"},
		{"SELECT w::text FROM (SELECT weight * 2 AS w FROM orders) s", ReasonUnsupported, "cast to text of w"},
		{"SELECT clock_timestamp(), amount FROM orders", ReasonFunction, "function clock_timestamp"},
		{"SELECT status FROM orders WHERE status ILIKE 'x%'", ReasonUnsupported, "ILIKE"},
		{"SELECT * FROM ONLY orders", ReasonUnsupported, "FROM ONLY orders"},
		{"SELECT secret FROM events", ReasonColumnNotAccelerated, "column secret of dataset events is not accelerated: type tsvector"},
		{"SELECT sum(weight) FROM orders", ReasonFloatAggregate, "float column weight of dataset orders"},
		{"SELECT 2 * avg(amount) FROM orders", ReasonUnsupported, "avg inside an expression"},
		{"SELECT * FROM orders FOR UPDATE", ReasonLocking, "locking clause"},
		{"SELECT o.id FROM plain p JOIN orders o ON p.id = o.id", ReasonNotAccelerated, "public.plain is not a dataset"},
	} {
		d := p.Plan(context.Background(), tc.sql, defaultSession())
		if d.Reason != tc.reason || !strings.Contains(d.Detail, tc.detail) {
			t.Errorf("%s: reason %q, detail %q; want %q with %q", tc.sql, d.Reason, d.Detail, tc.reason, tc.detail)
		}
	}
	// The datasets of a read sent to the origin are known for the
	// metrics, also those after a relation that is no dataset.
	d := p.Plan(context.Background(), "SELECT 1 FROM plain p, orders o, customers c, orders o2", defaultSession())
	if strings.Join(d.Datasets, ",") != "orders,customers" {
		t.Errorf("datasets of a read with a relation that is no dataset: %v", d.Datasets)
	}
}
