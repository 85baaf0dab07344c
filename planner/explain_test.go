package planner

import "testing"

func TestExplainTarget(t *testing.T) {
	for _, c := range []struct {
		sql, inner  string
		analyze, ok bool
	}{
		{"EXPLAIN SELECT * FROM orders", "SELECT * FROM orders", false, true},
		{"explain analyze select count(*) from orders where id > 3", "SELECT count(*) FROM orders WHERE id > 3", true, true},
		{"EXPLAIN (ANALYZE) SELECT 1", "SELECT 1", true, true},
		{"EXPLAIN (ANALYZE false) SELECT 1", "SELECT 1", false, true},
		{"EXPLAIN (ANALYZE off) SELECT 1", "SELECT 1", false, true},
		{"EXPLAIN VERBOSE SELECT 1", "", false, false},
		{"EXPLAIN (FORMAT JSON) SELECT 1", "", false, false},
		{"EXPLAIN (ANALYZE, BUFFERS) SELECT 1", "", false, false},
		{"EXPLAIN DELETE FROM orders", "", false, false},
		{"EXPLAIN SELECT * FROM orders WHERE id = $1", "", false, false},
		{"EXPLAIN SELECT 1; SELECT 2", "", false, false},
		{"SELECT 1", "", false, false},
		{"EXPLAIN", "", false, false},
	} {
		inner, analyze, ok := ExplainTarget(c.sql)
		if inner != c.inner || analyze != c.analyze || ok != c.ok {
			t.Errorf("ExplainTarget(%q) = %q, %v, %v; want %q, %v, %v", c.sql, inner, analyze, ok, c.inner, c.analyze, c.ok)
		}
	}
}
