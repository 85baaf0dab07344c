package integration

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/integration/corpora"
)

// TestCoverage_DifferentialCorpus runs the BI-style coverage corpus
// (integration/corpora/coverage.sql) directly and through pgaccel in the
// simple protocol, the extended protocol with text and binary results and
// pgx's prepared statements, compares the answers byte for byte, and checks
// that each statement takes the route recorded in coverage_routes.txt. With
// PGACCEL_UPDATE_ROUTES=1 it writes the routes it saw there instead.
func TestCoverage_DifferentialCorpus(t *testing.T) {
	qs, err := corpora.Coverage()
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 250 {
		t.Fatalf("the coverage corpus has %d statements, want at least 250", len(qs))
	}
	mustExec(t, corpora.CoverageSchema)
	var ds strings.Builder
	for _, name := range corpora.CoverageDatasets {
		ds.WriteString("  - from: postgres:public." + name + "\n")
	}
	a := startApp(t, ds.String())
	update := os.Getenv("PGACCEL_UPDATE_ROUTES") != ""
	var mu sync.Mutex
	seen := map[string]string{}
	for _, q := range qs {
		t.Run(q.Name, func(t *testing.T) {
			before, binBefore := routeCounts(t, a), binaryArrayRoutes(t, a)
			differentialDSN(t, origin.DSN(appUser, appPass), appDSN(a, appUser, appPass), corpusSession(q))
			after := routeCounts(t, a)
			delta := func(r string) float64 { return after[r] - before[r] }
			// An accelerated array slice asked for in binary goes to the
			// origin (Postgres's binary array keeps the NULL flag of the
			// array sliced): accelerated wherever it can be.
			bin := binaryArrayRoutes(t, a) - binBefore
			var got string
			switch {
			case delta(acc) == 4 && delta(fbk) == 0, delta(acc) > 0 && delta(acc)+bin == 4 && delta(fbk) == 0:
				got = acc
			case delta(acc) == 0 && delta(fbk) >= 1:
				got = fbk
			case delta(acc) == 0 && delta(fbk) == 0:
				got = org
			default:
				t.Errorf("mixed routes: accelerated=%v fallback=%v origin=%v", delta(acc), delta(fbk), delta(org))
				return
			}
			mu.Lock()
			seen[q.Name] = got
			mu.Unlock()
			if !update && q.Route != anyRoute && got != q.Route {
				t.Errorf("route: want %s (coverage_routes.txt), got %s", q.Route, got)
			}
		})
	}
	checkDerivedDescriptions(t, a)
	if update {
		path := filepath.Join("corpora", "coverage_routes.txt")
		if err := os.WriteFile(path, []byte(corpora.FormatRoutes(qs, seen)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d routes to %s", len(seen), path)
	}
}

// binaryArrayRoutes counts the statements sent to the origin because they
// slice arrays and ask for binary results (reason binary_array).
func binaryArrayRoutes(t testing.TB, a *app.App) float64 {
	return metricSums(t, a.Metrics, "pgaccel_statements_total", "route", "reason")["origin|binary_array"]
}
