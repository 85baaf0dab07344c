package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/integration/corpora"
)

// TestTPCH_SmallDifferential: the 22 TPC-H queries over a few thousand
// rows of TPC-H's value domains (corpora.TPCHSmallData), answered by the
// acceleration byte for byte as the origin answers them, in both
// protocols, in a C database under UTC and in an en_US.UTF-8 one under
// Australia/Sydney (issue 45: the corpora in the databases people run);
// every query selects rows, and every one is accelerated in both.
func TestTPCH_SmallDifferential(t *testing.T) {
	schema := corpora.TPCHSchema + corpora.TPCHSmallData + "GRANT SELECT ON region, nation, part, supplier, partsupp, customer, orders, lineitem TO app;"
	var datasets strings.Builder
	for _, name := range corpora.TPCHTables {
		datasets.WriteString("  - from: postgres:public." + name + "\n")
	}
	run := func(t *testing.T, a *app.App, direct, proxied string) {
		// The premise: each query selects rows at the origin.
		c, err := pgx.Connect(ctxT(t), direct)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		var cases []routeCase
		for _, q := range corpora.TPCH(1) {
			rows, err := c.Query(ctxT(t), q.SQL)
			if err != nil {
				t.Fatalf("%s at the origin: %v", q.Name, err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			if n == 0 || rows.Err() != nil {
				t.Errorf("%s: %d rows at the origin (%v); the data should give it some", q.Name, n, rows.Err())
			}
			cases = append(cases, routeCase{q.SQL, q.Route})
		}
		checkRouteCases(t, a, direct, proxied, cases)
	}
	for _, c := range []struct{ name, db, options, zone string }{
		{"C, UTC", "pgaccel_tpch_c", "LOCALE 'C'", "&timezone=UTC"},
		{"en_US.UTF-8, Australia/Sydney", "pgaccel_tpch_enus", "LOCALE 'en_US.UTF-8'", "&timezone=Australia%2FSydney"},
		{"ICU en-US, America/New_York", "pgaccel_tpch_icu", icuDatabase, "&timezone=America%2FNew_York"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.options != "LOCALE 'C'" {
				requireLocales(t, "en_US.UTF-8")
				requireICU(t)
			}
			dsn := otherDatabase(t, c.db, c.options, schema)
			t.Cleanup(func() { mustExec(t, "DROP DATABASE IF EXISTS "+c.db+" WITH (FORCE)") })
			a := startAppOrigin(t, dsn(origin.SuperUser, origin.SuperPassword), "", "", datasets.String(), true)
			proxied := strings.Replace(appDSN(a, appUser, appPass), "/"+origin.Database+"?", "/"+c.db+"?", 1)
			run(t, a, dsn(appUser, appPass)+c.zone, proxied+c.zone)
		})
	}
}
