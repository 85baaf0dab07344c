package planner

import (
	"context"
	"strings"
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// wordsRegistry is a registry of one dataset, public.vals, in a database
// whose default collation is en_US.UTF-8 (established): w text and v
// varchar of that collation (and LC_CTYPE), c text COLLATE "C", s text of
// a collation not established, tags text[], n int, doc jsonb.
func wordsRegistry(t *testing.T) *catalog.Registry {
	t.Helper()
	en := func(name string, oid uint32, typeName string) catalog.ColumnInfo {
		return catalog.ColumnInfo{Name: name, TypeOID: oid, TypeName: typeName, TypeMod: -1, Accelerated: true,
			CollationLocale: "en_US.UTF-8", CaseLocale: "en_US.UTF-8"}
	}
	stale := catalog.ColumnInfo{Name: "s", TypeOID: 25, TypeName: "text", TypeMod: -1, Accelerated: true,
		CollationNote: "its collation comes from glibc 1.0 at the origin", CaseNote: "its LC_CTYPE comes from glibc 1.0"}
	return valsWith(t, map[string][]catalog.ColumnInfo{
		"vals": {plainColumn("id", 23, "integer"), en("w", 25, "text"), en("v", 1043, "character varying"),
			plainColumn("c", 25, "text"), stale, en("tags", 1009, "text[]"), plainColumn("n", 23, "integer"), plainColumn("doc", 3802, "jsonb")},
		"other": {plainColumn("id", 23, "integer"), en("w", 25, "text")},
	})
}

// valsWith is a registry of valsConfig's datasets, each ready with the
// columns given.
func valsWith(t testing.TB, columns map[string][]catalog.ColumnInfo) *catalog.Registry {
	t.Helper()
	cfg, err := catalog.Parse([]byte(valsConfig), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := catalog.NewRegistry(cfg)
	for name, cols := range columns {
		if !reg.Update(name, func(s *catalog.DatasetState) {
			s.Status, s.Loaded, s.SubsetReady = catalog.StatusReady, true, true
			s.Columns = cols
		}) {
			t.Fatalf("no dataset %s", name)
		}
	}
	return reg
}

// plainColumn is an accelerated column ordered and case-mapped bytewise.
func plainColumn(name string, oid uint32, typeName string) catalog.ColumnInfo {
	return catalog.ColumnInfo{Name: name, TypeOID: oid, TypeName: typeName, TypeMod: -1, Accelerated: true, BinaryCollation: true, ASCIICase: true}
}

// TestPlan_LinguisticOrderIsKeyed: text of an established linguistic
// collation is ordered and range-compared by pgaccel_collkey; what cannot
// be keyed, and a collation not established, go to the origin with the
// collation's reason.
func TestPlan_LinguisticOrderIsKeyed(t *testing.T) {
	p := New(wordsRegistry(t), valsResolver(), Options{})
	session := &Session{User: "app", SearchPath: []string{"public"}, DefaultCollationLocale: "en_US.UTF-8"}
	const key = "pgaccel_collkey("
	checkPlanCases(t, p, session, []sortCase{
		{sql: "SELECT id, w FROM vals ORDER BY w, id", route: RouteAccelerate, want: []string{"ORDER BY pgaccel_collkey(w, 'en_US.UTF-8')"}},
		{sql: "SELECT id, w AS x FROM vals ORDER BY x DESC", route: RouteAccelerate, want: []string{"ORDER BY pgaccel_collkey(w, 'en_US.UTF-8') DESC"}},
		{sql: "SELECT id, v FROM vals ORDER BY 2", route: RouteAccelerate, want: []string{"ORDER BY pgaccel_collkey(v, 'en_US.UTF-8')"}},
		{sql: "SELECT id FROM vals WHERE w > 'b' AND v <= $1", route: RouteAccelerate,
			want: []string{"pgaccel_collkey(w, 'en_US.UTF-8') > pgaccel_collkey('b', 'en_US.UTF-8')", "pgaccel_collkey($1, 'en_US.UTF-8')"}},
		{sql: "SELECT id FROM vals WHERE w BETWEEN 'a' AND 'c'", route: RouteAccelerate, want: []string{"pgaccel_collkey(w, 'en_US.UTF-8') BETWEEN"}},
		{sql: "SELECT min(w), max(v) OVER () FROM vals", route: RouteAccelerate,
			want: []string{"arg_min(w, pgaccel_collkey(w, 'en_US.UTF-8'))", "arg_max(v, pgaccel_collkey(v, 'en_US.UTF-8')) OVER ()"}},
		{sql: "SELECT string_agg(w, ',' ORDER BY w) FROM vals", route: RouteAccelerate, want: []string{"ORDER BY pgaccel_collkey(w, 'en_US.UTF-8')"}},
		{sql: "SELECT row_number() OVER (PARTITION BY w ORDER BY v) FROM vals", route: RouteAccelerate,
			want: []string{"PARTITION BY w ORDER BY pgaccel_collkey(v, 'en_US.UTF-8')"}},
		{sql: "SELECT id FROM vals ORDER BY doc->>'k'", route: RouteAccelerate, want: []string{key}},
		{sql: "SELECT id FROM vals ORDER BY n::text", route: RouteAccelerate, want: []string{key}},
		{sql: "SELECT id FROM vals ORDER BY substr(w, 2) || 'x'", route: RouteAccelerate, want: []string{key}},
		{sql: "SELECT id, upper(w), lower(v), initcap(w) FROM vals WHERE w ILIKE 'a%'", route: RouteAccelerate,
			want: []string{"pgaccel_upper(w, 'en_US.UTF-8')", "pgaccel_lower(v, 'en_US.UTF-8')", "pgaccel_initcap(w, 'en_US.UTF-8')",
				"like_escape(pgaccel_lower(w, 'en_US.UTF-8'), pgaccel_lower('a%', 'en_US.UTF-8')"}},
		// No key where none is needed.
		{sql: "SELECT id, w FROM vals WHERE w = 'x' OR w IN ('a', 'b') ORDER BY id", route: RouteAccelerate, notWant: []string{key}},
		{sql: "SELECT w, count(*) FROM vals GROUP BY w ORDER BY count(*)", route: RouteAccelerate, notWant: []string{key}},
		{sql: "SELECT id, c FROM vals ORDER BY c", route: RouteAccelerate, notWant: []string{key}},
		{sql: "SELECT upper(c) FROM vals", route: RouteAccelerate, want: []string{"translate(c"}},
		// To the origin.
		{sql: "SELECT greatest(w, 'm') FROM vals", route: RouteOrigin},
		{sql: "SELECT id FROM vals ORDER BY tags", route: RouteOrigin},
		{sql: "SELECT w FROM vals UNION ALL SELECT w FROM other ORDER BY 1", route: RouteOrigin},
		{sql: "SELECT mode() WITHIN GROUP (ORDER BY w) FROM vals", route: RouteOrigin},
		{sql: "SELECT string_agg(DISTINCT w, ',') FROM vals", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE w < ANY (SELECT w FROM other)", route: RouteOrigin},
		{sql: "SELECT id FROM vals ORDER BY s", route: RouteOrigin},
		{sql: "SELECT upper(s) FROM vals", route: RouteOrigin},
		{sql: "SELECT upper(w), upper(c) FROM vals", route: RouteOrigin},
	})
	// The reason names the collation.
	d := p.Plan(context.Background(), "SELECT id FROM vals ORDER BY s", session)
	if d.Reason != ReasonCollation || !strings.Contains(d.Detail, "glibc 1.0") {
		t.Errorf("ordering by s: %s: %s, want the collation's reason", d.Reason, d.Detail)
	}
	// The default collation not established: its text is the origin's.
	d = p.Plan(context.Background(), "SELECT id FROM vals ORDER BY doc->>'k'", &Session{User: "app", SearchPath: []string{"public"}})
	if d.Route != RouteOrigin || d.Reason != ReasonCollation {
		t.Errorf("default collation not established: %v %s: %s", d.Route, d.Reason, d.Detail)
	}
}

// TestPlan_RewriteReadsBack: a statement whose rewritten text would not
// parse back to the tree it was printed from (pg_query's deparser drops
// the parentheses of (a IS NOT DISTINCT FROM b) NOT IN (...)) goes to the
// origin; the common forms read back and are accelerated.
func TestPlan_RewriteReadsBack(t *testing.T) {
	p := New(testRegistry(t), newFakeResolver(), Options{})
	for _, c := range []struct {
		sql   string
		route Route
	}{
		{"SELECT id FROM orders WHERE (id IS NOT DISTINCT FROM customer_id) NOT IN (true, false)", RouteOrigin},
		{"SELECT id FROM orders WHERE (id IS DISTINCT FROM customer_id) = (status = 'x')", RouteAccelerate},
		{"SELECT weight::text, 'w=' || weight, CAST(id AS int8) + 1 FROM orders WHERE status IN ('a', 'b') AND NOT (id > 3 OR id < 1)", RouteAccelerate},
	} {
		d := p.Plan(context.Background(), c.sql, defaultSession())
		if d.Route != c.route {
			t.Errorf("%s: %v (%s: %s), want %v\n  SQL %s", c.sql, d.Route, d.Reason, d.Detail, c.route, d.SQL)
		}
	}
}
