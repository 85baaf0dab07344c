package catalog

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseFrom_Forms(t *testing.T) {
	tests := []struct {
		from          string
		schema, table string
		ok            bool
	}{
		{"postgres:public.orders", "public", "orders", true},
		{"postgres:orders", "public", "orders", true},
		{"postgres:Sales.Orders", "sales", "orders", true},
		{`postgres:"Sales"."Order ""Items"""`, "Sales", `Order "Items"`, true},
		{"postgres:app.order_2024$", "app", "order_2024$", true},
		{" postgres:public.orders ", "public", "orders", true},
		{"", "", "", false},
		{"mysql:orders", "", "", false},
		{"s3://bucket/orders", "", "", false},
		{"postgres:", "", "", false},
		{"postgres:db.public.orders", "", "", false},
		{"postgres:public.", "", "", false},
		{"postgres:1orders", "", "", false},
		{`postgres:""`, "", "", false},
		{`postgres:"unterminated`, "", "", false},
		{"postgres:public orders", "", "", false},
	}
	for _, tt := range tests {
		schema, table, err := parseFrom(tt.from)
		if (err == nil) != tt.ok || schema != tt.schema || table != tt.table {
			t.Errorf("parseFrom(%q) = %q, %q, %v; want %q, %q, ok=%v", tt.from, schema, table, err, tt.schema, tt.table, tt.ok)
		}
	}
}

func TestParseRetentionSQL_Shapes(t *testing.T) {
	tests := []struct {
		sql    string
		target []string
		where  string
		ok     bool
	}{
		{"DELETE FROM orders WHERE deleted_at IS NOT NULL", []string{"orders"}, "deleted_at IS NOT NULL", true},
		{"delete from public.orders where status = 'archived';", []string{"public", "orders"}, "status = 'archived'", true},
		{"DELETE FROM orders\nWHERE a = 1\n  AND b = 2\n", []string{"orders"}, "a = 1\n  AND b = 2", true},
		{"DELETE FROM orders", nil, "", false},
		{"UPDATE orders SET x = 1 WHERE y", nil, "", false},
		{"DELETE FROM (SELECT 1) WHERE true", nil, "", false},
	}
	for _, tt := range tests {
		got, err := parseRetentionSQL(tt.sql)
		if (err == nil) != tt.ok || !reflect.DeepEqual(got.target, tt.target) || got.where != tt.where {
			t.Errorf("parseRetentionSQL(%q) = %+v, %v; want %q %q ok=%v", tt.sql, got, err, tt.target, tt.where, tt.ok)
		}
	}
}

func TestParseRefreshSQL_Shapes(t *testing.T) {
	tests := []struct {
		sql     string
		columns []string
		target  []string
		where   string
		ok      bool
	}{
		{"SELECT * FROM posts", nil, []string{"posts"}, "", true},
		{"SELECT * FROM posts WHERE updated_at > now() - interval '1' day", nil, []string{"posts"}, "updated_at > now() - interval '1' day", true},
		{`select City, "State" from app.cities where city = 'Bellevue';`, []string{"city", "State"}, []string{"app", "cities"}, "city = 'Bellevue'", true},
		{"SELECT upper(city) FROM cities", nil, nil, "", false},
		{"SELECT city AS c FROM cities", nil, nil, "", false},
		{"SELECT * FROM a JOIN b ON a.id = b.id", nil, nil, "", false},
		{"DELETE FROM cities WHERE true", nil, nil, "", false},
	}
	for _, tt := range tests {
		got, err := parseRefreshSQL(tt.sql)
		if (err == nil) != tt.ok || !reflect.DeepEqual(got.columns, tt.columns) || !reflect.DeepEqual(got.target, tt.target) || got.where != tt.where {
			t.Errorf("parseRefreshSQL(%q) = %+v, %v; want %q %q %q ok=%v", tt.sql, got, err, tt.columns, tt.target, tt.where, tt.ok)
		}
	}
}

func TestParseRefreshSQL_NamesTheRuleBroken(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SELECT * FROM t WHERE id IN (SELECT id FROM u)", "subqueries"},
		{"SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u)", "subqueries"},
		{"SELECT * FROM t WHERE a = 1 ORDER BY a", "ORDER BY"},
		{"SELECT DISTINCT a FROM t", "DISTINCT"},
		{"SELECT a AS b FROM t", "not expressions or aliases"},
		{"SELECT a + 1 FROM t", "not expressions or aliases"},
		{"SELECT * FROM t JOIN u ON u.id = t.id", "one table"},
		{"SELECT * FROM t WHERE a = 1 UNION SELECT * FROM t", "UNION"},
		{"SELECT * FROM t WHERE (", "not valid SQL"},
	}
	for _, tt := range tests {
		_, err := parseRefreshSQL(tt.sql)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.sql, err, tt.want)
		}
	}
	if _, err := parseRefreshSQL(`SELECT id, "Kind" FROM public.t WHERE kind = 'a' AND at > now() - interval '1 day'`); err != nil {
		t.Errorf("a valid refresh_sql: %v", err)
	}
}
