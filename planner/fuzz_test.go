package planner

import (
	"context"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgaccel/pgaccel/catalog"
)

// FuzzPlan checks that no text makes Plan panic, and that an accelerated
// decision always carries SQL and datasets.
func FuzzPlan(f *testing.F) {
	for _, c := range planCases {
		f.Add(c.sql)
	}
	for _, s := range []string{
		`SELECT * FROM orders o1, LATERAL (WITH RECURSIVE x AS (SELECT 1 UNION SELECT * FROM x) SELECT * FROM x) y`,
		`SELECT (o).id FROM orders o`,
		`SELECT ARRAY(SELECT id FROM orders)`,
		`SELECT * FROM ROWS FROM (generate_series(1, 3)) AS g(n) JOIN orders ON orders.id = g.n`,
		`SELECT json_agg(t) FROM (SELECT id FROM orders) t`,
		`SELECT 1 FROM orders GROUP BY GROUPING SETS ((id), ())`,
		`SELECT * FROM XMLTABLE('/r' PASSING '<r/>' COLUMNS a int)`,
		`WITH a AS MATERIALIZED (SELECT * FROM orders) SELECT * FROM a`,
		"SELECT $1::int, $2 FROM orders WHERE id = ANY($3)",
		"\x00", ";;;", "SELECT", "/* */ SELECT 1 -- x",
		"SELECT amount FROM orders WHERE id = 1", "SELECT * FROM orders o WHERE o.id = '1' AND status = 'x'",
		// Relative time (clock.go) and floored divisions (floordiv.go).
		"SELECT now(), CURRENT_DATE, LOCALTIMESTAMP(2), statement_timestamp() FROM orders WHERE created_at > now() - interval '7 days'",
		"SELECT (SELECT now() FROM orders LIMIT 1), * FROM orders, LATERAL (SELECT current_timestamp) t WHERE $1 = id",
		"SELECT floor(extract(epoch from now())/3600)*3600, floor(amount / 10) FROM orders GROUP BY 1, 2",
	} {
		f.Add(s)
	}
	reg := testRegistry(f)
	// The same datasets with on_zero_results: use_source and a retention
	// inverse, so that the fallback form is built too.
	useSource := testRegistry(f)
	for _, name := range useSource.Names() {
		d, _ := useSource.Dataset(name)
		nd := *d
		nd.Acceleration.OnZeroResults = catalog.ZeroResultsUseSource
		useSource.ReplaceDataset(&nd)
		useSource.Update(name, func(s *catalog.DatasetState) {
			s.FallbackReady, s.FallbackFilter = true, `(NOT (id = '1') OR (id = '1') IS NULL)`
		})
	}
	res := newFakeResolver()
	keyed := testRegistry(f)
	keyed.Update("orders", func(s *catalog.DatasetState) { s.Columns[0].KeyPart = 1 })
	f.Fuzz(func(t *testing.T, sql string) {
		// A text whose shape was planned as a point read goes to the
		// origin without a parse; the full plan must agree that it
		// changes nothing tracked (that it would accelerate it at most
		// costs speed).
		pr := New(keyed, res, Options{PointReadsToOrigin: true})
		pr.Plan(context.Background(), sql, defaultSession())
		sibling := strings.NewReplacer("1", "2", "'", "'").Replace(sql)
		if d := pr.Plan(context.Background(), sibling, defaultSession()); d.Reason == ReasonPointRead {
			full := New(keyed, res, Options{NoFastPath: true, PointReadsToOrigin: true}).Plan(context.Background(), sibling, defaultSession())
			if full.Reason != ReasonParseError && (full.Writes() || full.SetsSearchPath || full.Kind != KindSelect) {
				t.Fatalf("point-read shape of %q decides %+v for %q; the full path: %+v", sql, d, sibling, full)
			}
		}
		// The fast path may only send to the origin what the full path
		// sends there, and never a statement that writes or changes the
		// session.
		if fd, ok := New(reg, res, Options{}).quickDecision(sql); ok {
			full := New(reg, res, Options{NoFastPath: true})
			for _, s := range []*Session{defaultSession(), {SearchPath: []string{"sales", "public"}}} {
				d := full.Plan(context.Background(), sql, s)
				// Text the parser rejects is an error at the origin too,
				// whatever the fast path calls it.
				if d.Reason == ReasonParseError {
					continue
				}
				if d.Route != RouteOrigin || d.Writes() != fd.Writes() || d.SetsSearchPath || d.Kind != fd.Kind {
					t.Fatalf("fast path decides %+v for %q; the full path: %+v", fd, sql, d)
				}
			}
		}
		// In a transaction that has written, the same holds for every read.
		if fd, ok := New(reg, res, Options{}).QuickTxWrote(sql); ok {
			d := New(reg, res, Options{NoFastPath: true}).Plan(context.Background(), sql, &Session{TxWrote: true})
			if d.Reason != ReasonParseError && (d.Route != RouteOrigin || d.Writes() != fd.Writes() || d.SetsSearchPath || d.Kind != fd.Kind) {
				t.Fatalf("fast path in a written transaction decides %+v for %q; the full path: %+v", fd, sql, d)
			}
		}
		for _, r := range []*catalog.Registry{reg, useSource} {
			p := New(r, res, Options{CacheSize: 4, NoFastPath: true})
			for _, s := range []*Session{defaultSession(), {SearchPath: []string{"sales", "public"}, TempTables: map[string]bool{"t": true}}} {
				d := p.Plan(context.Background(), sql, s)
				if d.Route == RouteAccelerate && (d.SQL == "" || len(d.Datasets) == 0 || d.Reason != "") {
					t.Fatalf("accelerated decision %+v for %q", d, sql)
				}
				if d.Route == RouteOrigin && d.Reason == "" {
					t.Fatalf("origin decision without reason for %q", sql)
				}
				if r == useSource && d.Route == RouteAccelerate {
					if d.FallbackSQL == "" {
						t.Fatalf("use_source without a fallback form for %q", sql)
					}
					if _, err := pg_query.Parse(d.FallbackSQL); err != nil {
						t.Fatalf("fallback form %q of %q does not parse: %v", d.FallbackSQL, sql, err)
					}
				}
			}
		}
	})
}
