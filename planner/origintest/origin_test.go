package origintest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/pgaccel/pgaccel/planner"
)

var srv *pgtest.Server

func TestMain(m *testing.M) { pgtest.RunMain(m, &srv) }

// fixture creates two schemas that both hold an orders table, tables with
// and without grants and one with row level security, and returns a pool
// of the superuser (standing in for the refresh account).
func fixture(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	err := srv.Exec(ctx, `
DROP SCHEMA IF EXISTS pa_one CASCADE;
DROP SCHEMA IF EXISTS pa_two CASCADE;
DROP ROLE IF EXISTS pa_reader;
CREATE SCHEMA pa_one;
CREATE SCHEMA pa_two;
CREATE TABLE pa_one.orders (id int);
CREATE TABLE pa_two.orders (id int);
CREATE TABLE pa_two.only_two (id int);
CREATE SEQUENCE pa_one.counter;
CREATE TABLE pa_two.counter (id int);
CREATE TABLE pa_two.pg_class (id int);
CREATE TABLE pa_one.open_t (id int);
CREATE TABLE pa_one.closed_t (id int);
CREATE TABLE pa_one.rls_t (id int);
ALTER TABLE pa_one.rls_t ENABLE ROW LEVEL SECURITY;
GRANT USAGE ON SCHEMA pa_one, pa_two TO PUBLIC;
GRANT SELECT ON pa_one.open_t, pa_one.rls_t, pa_two.orders TO app;
CREATE ROLE pa_reader;
GRANT SELECT ON pa_one.closed_t TO pa_reader;
GRANT pa_reader TO noaccess;
`)
	if err != nil {
		t.Fatalf("create fixture: %v", err)
	}
	pool, err := pgxpool.New(ctx, srv.SuperDSN())
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func tableRef(ds string) string { return fmt.Sprintf(`"ds_%s"."main"."t"`, ds) }

func TestOriginResolver_SearchPath(t *testing.T) {
	pool := fixture(t)
	r := planner.NewOriginResolver(pool, tableRef, planner.ResolverOptions{})
	ctx := context.Background()
	cases := []struct {
		path             []string
		name             string
		schema           string
		inCatalog, found bool
	}{
		{[]string{"pa_one", "pa_two"}, "orders", "pa_one", false, true},
		{[]string{"pa_two", "pa_one"}, "orders", "pa_two", false, true},
		{[]string{"pa_one", "pa_two"}, "only_two", "pa_two", false, true},
		{[]string{"pa_one"}, "only_two", "", false, false},
		{[]string{"pa_one", "pa_two"}, "nosuch", "", false, false},
		// A sequence shadows a later table of the same name, as in Postgres.
		{[]string{"pa_one", "pa_two"}, "counter", "pa_one", false, true},
		// pg_catalog is searched first.
		{[]string{"pa_two"}, "pg_class", "pa_two", true, true},
		{[]string{"pa_one"}, "pg_type", "", true, false},
		{nil, "orders", "", false, false},
	}
	for _, c := range cases {
		schema, inCatalog, found, err := r.Relation(ctx, c.path, c.name)
		if err != nil {
			t.Fatalf("Relation(%v, %s): %v", c.path, c.name, err)
		}
		if schema != c.schema || inCatalog != c.inCatalog || found != c.found {
			t.Errorf("Relation(%v, %s) = %q %v %v, want %q %v %v",
				c.path, c.name, schema, inCatalog, found, c.schema, c.inCatalog, c.found)
		}
	}
	if got := r.TableRef("orders"); got != `"ds_orders"."main"."t"` {
		t.Errorf("TableRef %s", got)
	}
}

func TestOriginResolver_CachesBriefly(t *testing.T) {
	pool := fixture(t)
	const ttl = 300 * time.Millisecond
	r := planner.NewOriginResolver(pool, tableRef, planner.ResolverOptions{TTL: ttl})
	ctx := context.Background()
	path := []string{"pa_one", "pa_two"}
	if s, _, _, _ := r.Relation(ctx, path, "orders"); s != "pa_one" {
		t.Fatalf("schema %q", s)
	}
	if err := srv.Exec(ctx, `DROP TABLE pa_one.orders`); err != nil {
		t.Fatal(err)
	}
	if s, _, _, _ := r.Relation(ctx, path, "orders"); s != "pa_one" {
		t.Fatalf("answer not cached: %q", s)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	if s, _, _, _ := r.Relation(ctx, path, "orders"); s != "pa_two" {
		t.Fatalf("after the TTL: %q, want pa_two", s)
	}
}

func TestPrivileges_CanSelect(t *testing.T) {
	pool := fixture(t)
	p := planner.NewPrivileges(pool, planner.PrivilegesOptions{})
	ctx := context.Background()
	tbl := func(s, n string) planner.TableID { return planner.TableID{Schema: s, Name: n} }
	cases := []struct {
		role   string
		tables []planner.TableID
		ok     bool
		reason string
	}{
		{pgtest.AppUser, []planner.TableID{tbl("pa_one", "open_t")}, true, ""},
		{pgtest.AppUser, []planner.TableID{tbl("pa_one", "open_t"), tbl("pa_two", "orders")}, true, ""},
		{pgtest.AppUser, []planner.TableID{tbl("pa_one", "closed_t")}, false, planner.ReasonPrivilege},
		{pgtest.AppUser, []planner.TableID{tbl("pa_one", "open_t"), tbl("pa_one", "closed_t")}, false, planner.ReasonPrivilege},
		{pgtest.AppUser, []planner.TableID{tbl("pa_one", "rls_t")}, false, planner.ReasonRowSecurity},
		{pgtest.NoAccessUser, []planner.TableID{tbl("pa_one", "open_t")}, false, planner.ReasonPrivilege},
		// Through membership of pa_reader.
		{pgtest.NoAccessUser, []planner.TableID{tbl("pa_one", "closed_t")}, true, ""},
		// A superuser may read everything, but never an RLS table from the acceleration.
		{srv.SuperUser, []planner.TableID{tbl("pa_one", "closed_t")}, true, ""},
		{srv.SuperUser, []planner.TableID{tbl("pa_one", "rls_t")}, false, planner.ReasonRowSecurity},
		{pgtest.AppUser, []planner.TableID{tbl("pa_one", "nosuch")}, false, planner.ReasonUnresolved},
	}
	for _, c := range cases {
		ok, reason, err := p.CanSelect(ctx, c.role, c.tables)
		if err != nil {
			t.Fatalf("CanSelect(%s, %v): %v", c.role, c.tables, err)
		}
		if ok != c.ok || reason != c.reason {
			t.Errorf("CanSelect(%s, %v) = %v %q, want %v %q", c.role, c.tables, ok, reason, c.ok, c.reason)
		}
	}
	if _, _, err := p.CanSelect(ctx, "pa_no_such_role", []planner.TableID{tbl("pa_one", "open_t")}); err == nil {
		t.Error("unknown role: no error")
	}
}

func TestPrivileges_CachesBriefly(t *testing.T) {
	pool := fixture(t)
	const ttl = 300 * time.Millisecond
	p := planner.NewPrivileges(pool, planner.PrivilegesOptions{TTL: ttl})
	ctx := context.Background()
	tables := []planner.TableID{{Schema: "pa_one", Name: "open_t"}}
	if ok, _, err := p.CanSelect(ctx, pgtest.AppUser, tables); !ok || err != nil {
		t.Fatalf("before REVOKE: %v %v", ok, err)
	}
	if err := srv.Exec(ctx, `REVOKE SELECT ON pa_one.open_t FROM app`); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := p.CanSelect(ctx, pgtest.AppUser, tables); !ok {
		t.Fatal("answer not cached")
	}
	time.Sleep(ttl + 100*time.Millisecond)
	if ok, reason, _ := p.CanSelect(ctx, pgtest.AppUser, tables); ok || reason != planner.ReasonPrivilege {
		t.Fatalf("after the TTL: %v %q", ok, reason)
	}
}

// TestPlanner_WithOrigin plans through the real resolver and privilege
// check, with the search path read from a real session the way the proxy
// reads it.
func TestPlanner_WithOrigin(t *testing.T) {
	pool := fixture(t)
	ctx := context.Background()
	cfg, err := catalog.Parse([]byte(`
origin:
  dsn: postgres://localhost/x
datasets:
  - from: postgres:pa_two.orders
    name: two_orders
  - from: postgres:pa_one.rls_t
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := catalog.NewRegistry(cfg)
	for _, n := range reg.Names() {
		reg.Update(n, func(s *catalog.DatasetState) { s.Status, s.Loaded = catalog.StatusReady, true })
	}
	res := planner.NewOriginResolver(pool, tableRef, planner.ResolverOptions{})
	p := planner.New(reg, res, planner.Options{Privileges: planner.NewPrivileges(pool, planner.PrivilegesOptions{}), NoFastPath: true})

	conn, err := pgx.Connect(ctx, srv.DSN(pgtest.AppUser, pgtest.AppPassword))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	session := func() *planner.Session {
		var path []string
		var user string
		if err := conn.QueryRow(ctx, `SELECT current_user, current_schemas(false)`).Scan(&user, &path); err != nil {
			t.Fatal(err)
		}
		return &planner.Session{User: user, SearchPath: path}
	}
	plan := func(sql string) planner.Decision { return p.Plan(ctx, sql, session()) }

	if _, err := conn.Exec(ctx, `SET search_path = pa_two, pa_one`); err != nil {
		t.Fatal(err)
	}
	d := plan(`SELECT id FROM orders`)
	if d.Route != planner.RouteAccelerate || d.SQL != `SELECT id FROM ds_two_orders.main.t orders` {
		t.Fatalf("pa_two first: %v %q %s", d.Route, d.Reason, d.SQL)
	}
	if _, err := conn.Exec(ctx, `SET search_path = pa_one, pa_two`); err != nil {
		t.Fatal(err)
	}
	if d := plan(`SELECT id FROM orders`); d.Reason != planner.ReasonNotAccelerated {
		t.Fatalf("pa_one first: %v %q", d.Route, d.Reason)
	}
	if d := plan(`SELECT id FROM rls_t`); d.Reason != planner.ReasonRowSecurity {
		t.Fatalf("RLS table: %v %q", d.Route, d.Reason)
	}
	if d := plan(`SELECT * FROM pg_class`); d.Reason != planner.ReasonCatalog {
		t.Fatalf("pg_class: %v %q", d.Route, d.Reason)
	}
}
