package planner

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
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
		{"SELECT * FROM orders WHERE id IN (1)", "id"},
		{"SELECT * FROM orders WHERE id IN (1, $2, '3'::int)", "id"},
		{"SELECT * FROM orders WHERE id NOT IN (1)", ""},
		{"SELECT * FROM orders WHERE id IN (1, qty)", ""},
		{"SELECT * FROM orders WHERE id IN (SELECT 1)", ""},
		{"SELECT * FROM orders WHERE id = ANY($1)", ""},
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

func TestPlan_PointReadsByKey(t *testing.T) {
	reg := testRegistry(t)
	reg.Update("orders", func(s *catalog.DatasetState) { s.Columns[0].KeyPart = 1 })      // id
	reg.Update("customers", func(s *catalog.DatasetState) { s.Columns[1].Unique = true }) // name
	reg.Update("sales_orders", func(s *catalog.DatasetState) { s.Columns[0].KeyPart, s.Columns[1].KeyPart = 1, 2 })
	p := New(reg, newFakeResolver(), Options{PointReadsToOrigin: true})
	ctx := context.Background()
	for _, tc := range []struct {
		sql    string
		reason string
	}{
		{"SELECT amount FROM orders WHERE id = '1'", ReasonPointRead},
		{"SELECT amount FROM orders WHERE id = 'x' AND status = 'paid'", ReasonPointRead},
		{"SELECT amount FROM orders WHERE customer_id = '1'", ""}, // not the key
		{"SELECT amount FROM orders WHERE id > '1'", ""},
		{"SELECT name FROM customers WHERE id = '1'", ""}, // no key known
		{"SELECT id FROM customers WHERE name = 'x'", ReasonPointRead},
		{"SELECT amount FROM sales.orders WHERE region = 'x' AND id = '1'", ReasonPointRead}, // the whole composite key
		{"SELECT amount FROM sales.orders WHERE id = '1'", ""},                               // part of it
	} {
		d := p.Plan(ctx, tc.sql, defaultSession())
		if d.Reason != tc.reason {
			t.Errorf("%s: reason %q (route %v), want %q", tc.sql, d.Reason, d.Route, tc.reason)
		}
		if d.Reason == ReasonPointRead && len(d.Datasets) != 1 {
			t.Errorf("%s: datasets %v, want the one read (the metrics' label)", tc.sql, d.Datasets)
		}
	}
	// The same shape with other values takes the shape's decision without
	// a parse (the analysis cache does not grow).
	before := p.cache.len()
	for _, v := range []string{"2", "3", "'it''s'", "4.5e3"} {
		d := p.Plan(ctx, "SELECT amount FROM orders WHERE id = "+v, defaultSession())
		if d.Route != RouteOrigin || d.Reason != ReasonPointRead || strings.Join(d.Datasets, ",") != "orders" {
			t.Errorf("id = %s: %+v, want point_read of orders", v, d)
		}
	}
	if got := p.cache.len(); got != before { // the shape of id = '1' above
		t.Errorf("analysis cache grew from %d to %d, want no parse", before, got)
	}
	// A shape sibling that is not a plain read is planned in full.
	if d := p.Plan(ctx, "SELECT amount FROM orders WHERE id = 7 FOR UPDATE", defaultSession()); d.Reason != ReasonLocking {
		t.Errorf("FOR UPDATE: %+v", d)
	}
	// Without the option, point reads are accelerated.
	q := New(reg, newFakeResolver(), Options{})
	if d := q.Plan(ctx, "SELECT amount FROM orders WHERE id = '1'", defaultSession()); d.Route != RouteAccelerate {
		t.Errorf("point_reads: acceleration: %+v", d)
	}
}

// TestPlan_PointReadsThroughTheSubset: a point read of a dataset whose
// acceleration holds a subset of the table goes to the origin through that
// subset (Decision.OriginSQL); while the subset is not known it is
// accelerated; a read of a column the acceleration lacks is no point read.
func TestPlan_PointReadsThroughTheSubset(t *testing.T) {
	reg := testRegistry(t)
	reg.Update("orders", func(s *catalog.DatasetState) {
		s.Columns[0].KeyPart = 1
		s.SubsetFilter = "(status <> 'cancelled')"
	})
	p := New(reg, newFakeResolver(), Options{PointReadsToOrigin: true})
	ctx := context.Background()
	for _, tc := range []struct{ sql, origin string }{
		{"SELECT amount FROM orders WHERE id = 7",
			`SELECT amount FROM (SELECT * FROM public.orders WHERE status <> 'cancelled') orders WHERE id = 7`},
		{"SELECT o.amount FROM public.orders o WHERE o.id = $1",
			`SELECT o.amount FROM (SELECT * FROM public.orders WHERE status <> 'cancelled') o WHERE o.id = $1`},
	} {
		for range 2 { // planned, then from the caches
			d := p.Plan(ctx, tc.sql, defaultSession())
			if d.Route != RouteOrigin || d.Reason != ReasonPointRead || d.OriginSQL != tc.origin {
				t.Errorf("%s: %v %q, OriginSQL %q, want point_read with %q", tc.sql, d.Route, d.Reason, d.OriginSQL, tc.origin)
			}
		}
	}
	// A name that is no column of the acceleration.
	if d := p.Plan(ctx, "SELECT amount, hidden FROM orders WHERE id = 7", defaultSession()); d.Reason == ReasonPointRead {
		t.Errorf("a column the acceleration lacks: %+v", d)
	}
	reg.Update("orders", func(s *catalog.DatasetState) { s.SubsetReady = false })
	if d := p.Plan(ctx, "SELECT amount FROM orders WHERE id = 8", defaultSession()); d.Route != RouteAccelerate {
		t.Errorf("subset not known: %+v, want accelerated", d)
	}
}

func TestLiteralShape(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"SELECT a FROM t WHERE id = 42", "SELECT a FROM t WHERE id = ?"},
		{"SELECT a FROM t WHERE id = 'it''s' AND x = 1.5e-3", "SELECT a FROM t WHERE id = ? AND x = ?"},
		{`SELECT "a1" FROM t2 WHERE "x""y" = .5`, `SELECT "a1" FROM t2 WHERE "x""y" = ?`},
		{"SELECT a FROM t WHERE id = $1", ""},
		{"SELECT a FROM t WHERE id = E'x'", ""},
		{"SELECT a FROM t -- c", ""},
		{"SELECT 'open", ""},
	} {
		got, ok := literalShape(tc.sql)
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("literalShape(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

// TestPlan_PointLookup: an accelerated read in the plainest point-read
// shape carries how the point index answers it (Decision.Point); any other
// shape does not. A text of a remembered shape with other key values is
// planned without a parse when the caller allows it (PointOnly), and
// carries the new values.
func TestPlan_PointLookup(t *testing.T) {
	reg := testRegistry(t)
	reg.Update("orders", func(s *catalog.DatasetState) {
		s.Columns[0].KeyPart = 1
		s.Columns[0].TypeOID, s.Columns[0].TypeName = 23, "integer"
	})
	reg.Update("sales_orders", func(s *catalog.DatasetState) { s.Columns[0].KeyPart, s.Columns[1].KeyPart = 2, 1 })
	p := New(reg, newFakeResolver(), Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		sql  string
		want string // columns and keys, "" for no lookup
	}{
		{"SELECT amount, status FROM orders WHERE id = 7", "amount,status|id=7"},
		{"SELECT o.amount AS a FROM public.orders o WHERE o.id = $1", "amount|id=$1"},
		{"SELECT * FROM orders WHERE 7 = id LIMIT 1", "id,customer_id,amount,status,created_at,note,weight|id=7"},
		{"SELECT amount FROM sales.orders WHERE id = 'x' AND region = $2", "amount|region=$2,id=x"},
		{"SELECT amount FROM orders WHERE id = '7'", ""},                // the origin reads '7' as an integer
		{"SELECT amount FROM orders WHERE id = 7.0", ""},                // a numeric comparison
		{"SELECT amount FROM orders WHERE id = 7::bigint", ""},          // a cast
		{"SELECT amount FROM orders WHERE id = 7 AND amount = 'x'", ""}, // more than the key
		{"SELECT amount FROM orders WHERE id = 7 OR id = 8", ""},
		{"SELECT amount FROM orders WHERE id = 7 ORDER BY amount", ""},
		{"SELECT amount FROM orders WHERE id = 7 LIMIT 0", ""},
		{"SELECT upper(amount) FROM orders WHERE id = 7", ""},
		{"SELECT amount FROM orders WHERE id = 7 FOR UPDATE", ""},
		{"SELECT DISTINCT amount FROM orders WHERE id = 7", ""},
		{"SELECT amount FROM sales.orders WHERE id = 'x'", ""}, // part of the key
		{"SELECT weight FROM orders WHERE id = 7", "weight|id=7"},
	} {
		d := p.Plan(ctx, tc.sql, defaultSession())
		if got := describeLookup(d.Point); got != tc.want {
			t.Errorf("%s: lookup %q (route %v %s), want %q", tc.sql, got, d.Route, d.Reason, tc.want)
		}
		if d.Point != nil && (d.Route != RouteAccelerate || d.SQL == "") {
			t.Errorf("%s: %+v, want accelerated with its SQL", tc.sql, d)
		}
	}
	// Other values of a remembered shape: no parse with PointOnly.
	s := defaultSession()
	s.PointOnly = true
	before := p.cache.len()
	for _, v := range []string{"8", "9", "123456789012"} {
		d := p.Plan(ctx, "SELECT amount, status FROM orders WHERE id = "+v, s)
		if d.Route != RouteAccelerate || d.SQL != "" || describeLookup(d.Point) != "amount,status|id="+v {
			t.Errorf("id = %s: %+v, want a lookup of %s without SQL", v, d, v)
		}
	}
	if got := p.cache.len(); got != before {
		t.Errorf("analysis cache grew from %d to %d, want no parse", before, got)
	}
	// Without PointOnly, or with another kind of literal, the text is
	// planned in full.
	if d := p.Plan(ctx, "SELECT amount, status FROM orders WHERE id = 10", defaultSession()); d.SQL == "" || d.Point == nil {
		t.Errorf("without PointOnly: %+v", d)
	}
	for _, sql := range []string{
		"SELECT amount, status FROM orders WHERE id = '11'",
		"SELECT amount, status FROM orders WHERE id = 1.5",
		"SELECT amount, status FROM orders WHERE id = 99999999999999999999",
	} {
		if d := p.Plan(ctx, sql, s); d.Point != nil {
			t.Errorf("%s: %+v, want no lookup", sql, d)
		}
	}
	// A shape whose literal is not only the key's (LIMIT 1) is not
	// remembered: LIMIT 0 must not take its plan.
	p.Plan(ctx, "SELECT amount FROM orders WHERE id = 7 LIMIT 1", defaultSession())
	if d := p.Plan(ctx, "SELECT amount FROM orders WHERE id = 7 LIMIT 0", s); d.Point != nil {
		t.Errorf("LIMIT 0 after LIMIT 1: %+v", d)
	}
	// A session that has written reads the origin.
	w := *s
	w.TxWrote = true
	if d := p.Plan(ctx, "SELECT amount, status FROM orders WHERE id = 12", &w); d.Route != RouteOrigin {
		t.Errorf("tx wrote: %+v", d)
	}
}

func describeLookup(pl *PointLookup) string {
	if pl == nil {
		return ""
	}
	var keys []string
	for _, k := range pl.Keys {
		if k.Param > 0 {
			keys = append(keys, fmt.Sprintf("%s=$%d", k.Column, k.Param))
		} else {
			keys = append(keys, fmt.Sprintf("%s=%v", k.Column, k.Value))
		}
	}
	return strings.Join(pl.Columns, ",") + "|" + strings.Join(keys, ",")
}

// FuzzQuickLookup: a text planned from a remembered lookup shape without a
// parse (PointOnly) gets the lookup its own parse would give, or none;
// never another statement's. The fuzzer picks the texts; each is planned
// in full first (remembering its shape), then every other text of the
// corpus of the same shape is compared.
func FuzzQuickLookup(f *testing.F) {
	for _, s := range []string{
		"SELECT amount, status FROM orders WHERE id = 7",
		"SELECT amount, status FROM orders WHERE id = 8",
		"SELECT amount, status FROM orders WHERE id = '8'",
		"SELECT amount, status FROM orders WHERE id = 8.5",
		"SELECT amount, status FROM orders WHERE id = 99999999999999999999",
		"SELECT amount, status FROM orders WHERE id = -8",
		"SELECT * FROM orders WHERE id = 9 LIMIT 1",
		"SELECT * FROM orders WHERE id = 9 LIMIT 0",
		"SELECT amount FROM sales.orders WHERE id = 'x' AND region = 'y'",
		"SELECT amount FROM sales.orders WHERE id = 'it''s' AND region = 'y'",
		"SELECT amount FROM sales.orders WHERE id = 'a' 'b' AND region = 'y'",
		"SELECT amount FROM sales.orders WHERE region = 'y' AND id = 'x'",
	} {
		f.Add(s)
	}
	reg := testRegistry(f)
	reg.Update("orders", func(s *catalog.DatasetState) {
		s.Columns[0].KeyPart = 1
		s.Columns[0].TypeOID, s.Columns[0].TypeName = 23, "integer"
	})
	reg.Update("sales_orders", func(s *catalog.DatasetState) { s.Columns[0].KeyPart, s.Columns[1].KeyPart = 2, 1 })
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, sql string) {
		first := New(reg, newFakeResolver(), Options{})
		second := New(reg, newFakeResolver(), Options{})
		full := first.Plan(ctx, sql, defaultSession())
		if full.Point == nil || full.Point.Shape == "" {
			return
		}
		// Every literal of the text replaced by each literal of the
		// seeds in turn.
		shape, lits, ok := scanLiterals(sql, true)
		if !ok {
			t.Fatalf("%q: a lookup shape but no scan", sql)
		}
		s := defaultSession()
		s.PointOnly = true
		for _, other := range []string{"1", "42", "2147483648", "'x'", "'it''s'", "''", "4.5", "1e3"} {
			text := sql
			for i := len(lits) - 1; i >= 0; i-- {
				// Each literal its own value, so that a swap shows.
				lit := other + strconv.Itoa(i)
				if strings.HasPrefix(other, "'") {
					lit = other[:len(other)-1] + strconv.Itoa(i) + "'"
				}
				text = replaceLiteral(text, i, lit)
			}
			if sh, _, ok := scanLiterals(text, true); !ok || sh != shape {
				continue // not of the shape: planned in full anyway
			}
			quick := first.Plan(ctx, text, s)
			own := second.Plan(ctx, text, defaultSession())
			if quick.Point == nil {
				continue // planned in full, or not a lookup
			}
			if quick.SQL == "" && own.Point != nil && describeLookup(quick.Point) != describeLookup(own.Point) {
				t.Fatalf("%q after %q: quick lookup %q, its own parse %q", text, sql, describeLookup(quick.Point), describeLookup(own.Point))
			}
			if quick.SQL == "" && own.Point == nil {
				// The parse finds no lookup: only a key no row can have
				// (an integer beyond int4 read as numeric) may differ.
				if !strings.Contains(text, "2147483648") {
					t.Fatalf("%q after %q: quick lookup %q, its own parse none (%s)", text, sql, describeLookup(quick.Point), own.Reason)
				}
			}
		}
	})
}

// replaceLiteral replaces the i-th literal (from 0) of sql as scanLiterals
// reads them with lit.
func replaceLiteral(sql string, i int, lit string) string {
	n := 0
	for at := 0; at < len(sql); at++ {
		c := sql[at]
		switch {
		case c == '\'':
			end, ok := skipString(sql, at, false)
			if !ok {
				return sql
			}
			if n == i {
				return sql[:at] + lit + sql[end:]
			}
			n++
			at = end - 1
		case c == '"':
			end, ok := skipQuotedIdent(sql, at)
			if !ok {
				return sql
			}
			at = end - 1
		case c >= '0' && c <= '9' || c == '.' && at+1 < len(sql) && sql[at+1] >= '0' && sql[at+1] <= '9':
			if at > 0 && (isIdentChar(sql[at-1]) || sql[at-1] >= 0x80) {
				continue // part of a name (t2)
			}
			j := at
			for j < len(sql) && (sql[j] >= '0' && sql[j] <= '9' || sql[j] == '.' || sql[j] == 'e' || sql[j] == 'E' ||
				(sql[j] == '+' || sql[j] == '-') && j > at && (sql[j-1] == 'e' || sql[j-1] == 'E')) {
				j++
			}
			if n == i {
				return sql[:at] + lit + sql[j:]
			}
			n++
			at = j - 1
		}
	}
	return sql
}

// TestPlan_PointReadsWithUseSource: a point read of an on_zero_results:
// use_source dataset goes to the origin only when the rows the
// acceleration holds are the rows its fallback reads (one read of the
// origin answers both); otherwise it takes the accelerated route, whose
// empty answer falls back.
func TestPlan_PointReadsWithUseSource(t *testing.T) {
	cfg, err := catalog.Parse([]byte(`
origin:
  dsn: postgres://app@localhost/shop
datasets:
  - from: postgres:public.orders
    acceleration:
      on_zero_results: use_source
  - from: postgres:public.customers
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const (
		subset = "(status <> 'cancelled')"
		retain = "(NOT (status = 'archived') OR (status = 'archived') IS NULL)"
	)
	for _, tc := range []struct {
		name                       string
		dataset                    string
		subset, fallback           string
		subsetReady, fallbackReady bool
		wantOrigin                 bool
	}{
		{"use_source, whole table, no retention", "orders", "", "", true, true, true},
		{"use_source, retention checked", "orders", retain, retain, true, true, true},
		{"use_source, refresh_sql subset", "orders", subset, "", true, true, false},
		{"use_source, refresh_sql subset and retention", "orders", subset + " AND " + retain, retain, true, true, false},
		{"use_source, retention not checked", "orders", "", retain, true, true, false},
		{"use_source, fallback filter not known", "orders", "", "", true, false, false},
		{"return_empty, refresh_sql subset", "customers", subset, "", true, true, true},
		{"return_empty, whole table", "customers", "", "", true, true, true},
	} {
		reg := catalog.NewRegistry(cfg)
		reg.Update(tc.dataset, func(s *catalog.DatasetState) {
			s.Status, s.Loaded = catalog.StatusReady, true
			for _, n := range []string{"id", "status", "amount"} {
				s.Columns = append(s.Columns, catalog.ColumnInfo{Name: n, TypeOID: 25, TypeName: "text", Accelerated: true, BinaryCollation: true})
			}
			s.Columns[0].KeyPart = 1
			s.SubsetReady, s.SubsetFilter = tc.subsetReady, tc.subset
			s.FallbackReady, s.FallbackFilter = tc.fallbackReady, tc.fallback
		})
		p := New(reg, newFakeResolver(), Options{PointReadsToOrigin: true})
		// Twice each: planned in full, then a text of the same shape.
		for _, sql := range []string{"SELECT amount FROM " + tc.dataset + " WHERE id = '7'", "SELECT amount FROM " + tc.dataset + " WHERE id = '8'"} {
			d := p.Plan(context.Background(), sql, defaultSession())
			if got := d.Reason == ReasonPointRead; got != tc.wantOrigin {
				t.Errorf("%s: %s: %v %q, want point read at the origin: %v", tc.name, sql, d.Route, d.Reason, tc.wantOrigin)
			}
		}
	}
}
