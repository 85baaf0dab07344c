package planner

import (
	"strings"
	"testing"
)

func TestPointColumns(t *testing.T) {
	for _, tt := range []struct{ sql, want string }{
		{"SELECT * FROM orders WHERE id = 1", "id"},
		{"SELECT * FROM orders WHERE (id = $1) AND status = 'x'", "id,status"},
		{"SELECT * FROM orders WHERE 1 = id", "id"},
		{"SELECT * FROM orders WHERE id = '7'::bigint", "id"},
		{"SELECT * FROM public.orders o WHERE o.id = 1", "id"},
		{"SELECT * FROM orders o WHERE orders.id = 1", ""}, // the alias hides the name
		{"SELECT * FROM orders WHERE orders.id = 1", "id"},
		{"SELECT * FROM orders WHERE id = 1 OR id = 2", ""},
		{"SELECT * FROM orders WHERE id = qty", ""},
		{"SELECT * FROM orders WHERE id > 1", ""},
		{"SELECT * FROM orders WHERE id IN (1)", ""},
		{"SELECT * FROM orders, customers WHERE orders.id = 1", ""},
		{"SELECT * FROM orders JOIN customers USING (id) WHERE id = 1", ""},
		{"WITH o AS (SELECT * FROM orders) SELECT * FROM o WHERE id = 1", ""},
		{"SELECT * FROM orders WHERE id = 1 UNION SELECT * FROM orders WHERE id = 2", ""},
		{"SELECT * FROM (SELECT * FROM orders) s WHERE id = 1", ""},
		{"SELECT * FROM orders", ""},
	} {
		a, _ := analyze(tt.sql)
		if got := strings.Join(a.pointCols, ","); got != tt.want {
			t.Errorf("%s: point columns %q, want %q", tt.sql, got, tt.want)
		}
	}
}
