package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// testConfig has datasets over public.orders, public.customers,
// sales.orders (shadowed by public.orders on the default path),
// public.items (not ready), public.events (with a column the acceleration
// lacks), public.archive (disabled), public."Mixed" and public.subset
// (refresh_sql selecting two columns).
const testConfig = `
origin:
  dsn: postgres://app@localhost/shop
datasets:
  - from: postgres:public.orders
  - from: postgres:public.customers
  - from: postgres:sales.orders
    name: sales_orders
  - from: postgres:public.items
  - from: postgres:public.events
  - from: postgres:public.archive
    acceleration:
      enabled: false
  - from: postgres:public."Mixed"
    name: mixed
  - from: postgres:public.subset
    acceleration:
      refresh_sql: SELECT id, name FROM public.subset
`

// fakeResolver is an in-memory origin catalog: schema -> relation names.
type fakeResolver struct {
	schemas map[string]map[string]bool
	fail    error
	calls   atomic.Int64
}

func newFakeResolver() *fakeResolver {
	return &fakeResolver{schemas: map[string]map[string]bool{
		"pg_catalog":         {"pg_class": true, "pg_namespace": true, "pg_type": true, "pg_stat_activity": true},
		"information_schema": {"tables": true, "columns": true},
		"public": {"orders": true, "customers": true, "items": true, "events": true, "archive": true,
			"Mixed": true, "subset": true, "plain": true, "logs_seq": true},
		"sales":   {"orders": true, "regions": true},
		"private": {"pg_class": true},
	}}
}

func (f *fakeResolver) Relation(_ context.Context, searchPath []string, name string) (string, bool, bool, error) {
	f.calls.Add(1)
	if f.fail != nil {
		return "", false, false, f.fail
	}
	inCatalog := f.schemas["pg_catalog"][name]
	for _, s := range searchPath {
		if f.schemas[s][name] {
			return s, inCatalog, true, nil
		}
	}
	return "", inCatalog, false, nil
}

func (f *fakeResolver) TableRef(dataset string) string {
	return fmt.Sprintf(`"ds_%s"."main"."%s"`, dataset, strings.ToLower(dataset))
}

// testRegistry builds the registry of testConfig with every enabled
// dataset loaded except items; events has a column "secret" the
// acceleration does not hold.
func testRegistry(t testing.TB) *catalog.Registry {
	t.Helper()
	cfg, err := catalog.Parse([]byte(testConfig), "test.yaml")
	if err != nil {
		t.Fatalf("parse test config: %v", err)
	}
	reg := catalog.NewRegistry(cfg)
	cols := func(names ...string) []catalog.ColumnInfo {
		var out []catalog.ColumnInfo
		for _, n := range names {
			out = append(out, catalog.ColumnInfo{Name: n, TypeOID: 25, TypeName: "text", Accelerated: true, BinaryCollation: true})
		}
		return out
	}
	load := func(name string, c []catalog.ColumnInfo) {
		if !reg.Update(name, func(s *catalog.DatasetState) {
			if s.Status != catalog.StatusDisabled {
				s.Status = catalog.StatusReady
			}
			s.Loaded = true
			s.Columns = c
			s.SubsetReady = true // the whole table
		}) {
			t.Fatalf("no dataset %s", name)
		}
	}
	oc := cols("id", "customer_id", "amount", "status", "created_at", "note")
	oc = append(oc, catalog.ColumnInfo{Name: "weight", TypeOID: 701, TypeName: "double precision", Accelerated: true})
	load("orders", oc)
	load("customers", cols("id", "name", "region"))
	load("sales_orders", cols("id", "region", "amount"))
	ev := cols("id", "kind", "payload")
	ev = append(ev, catalog.ColumnInfo{Name: "secret", TypeName: "tsvector", Accelerated: false})
	load("events", ev)
	load("archive", cols("id"))
	load("mixed", cols("id"))
	load("subset", cols("id", "name"))
	return reg
}

func defaultSession() *Session {
	return &Session{User: "app", SearchPath: []string{"public"}, TextBytewise: true}
}

var errOriginDown = errors.New("origin down")
