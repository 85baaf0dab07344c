package integration

import (
	"context"
	"fmt"
	"github.com/prometheus/client_golang/prometheus"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/integration/corpora"
	"github.com/rs/zerolog"
)

// accelSchema creates the acc_* tables (corpora.AccelSchema).
var accelSchema = corpora.AccelSchema

// corpus is the acceleration tests' differential corpus.
var corpus = corpora.Accel

// The routes a statement takes, as the route counters label them.
const (
	acc      = corpora.Accelerated
	org      = corpora.Origin
	fbk      = corpora.Fallback
	anyRoute = corpora.AnyRoute
)

// startApp starts a whole pgaccel (proxy, engine, refresh, admin) from a
// config whose datasets section is given, and waits until every dataset
// has loaded.
func startApp(t testing.TB, datasets string) *app.App {
	t.Helper()
	return startAppWith(t, datasets, true)
}

func startAppWith(t testing.TB, datasets string, wait bool) *app.App {
	t.Helper()
	return startAppTop(t, "", datasets, wait)
}

// startAppTop is startAppWith with extra top-level YAML (blocks other than
// origin, server, runtime and datasets, such as admin). Point reads are
// accelerated (runtime.point_reads: acceleration), so that the tests that
// check DuckDB's answers row by row with WHERE id = ... still reach DuckDB;
// startAppRuntime keeps the default.
func startAppTop(t testing.TB, top, datasets string, wait bool) *app.App {
	t.Helper()
	return startAppRuntime(t, top, "  point_reads: acceleration\n", datasets, wait)
}

// startAppRuntime starts pgaccel with top-level YAML top and runtime keys
// runtime (indented YAML lines) besides data_dir.
func startAppRuntime(t testing.TB, top, runtime, datasets string, wait bool) *app.App {
	t.Helper()
	return startAppOrigin(t, origin.SuperDSN(), top, runtime, datasets, wait)
}

// startAppOrigin is startAppRuntime with the origin DSN given (another
// database of the harness's server).
func startAppOrigin(t testing.TB, originDSN, top, runtime, datasets string, wait bool) *app.App {
	t.Helper()
	if top == "" {
		top = "admin:\n  listen: 127.0.0.1:0\n"
	}
	if !strings.Contains(runtime, "verify:") {
		runtime += testVerify
	}
	cfgText := fmt.Sprintf("origin:\n  dsn: %q\nserver:\n  listen: 127.0.0.1:0\n%sruntime:\n  data_dir: %q\n%sdatasets:\n%s",
		originDSN, top, t.TempDir(), runtime, datasets)
	a := startAppText(t, cfgText)
	t.Cleanup(func() { checkVerified(t, a) })
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	if !wait {
		return a
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return a
}

// testVerify turns shadow verification on for every statement in the
// tests' configs (startAppRuntime): every accelerated answer of a table
// unchanged since its load is run again at the origin and compared, and a
// difference fails the test (checkVerified).
const testVerify = "  verify:\n    enabled: true\n    sample_rate: 100%\n    origin_time_per_minute: 20s\n"

// checkVerified fails the test when shadow verification found an
// accelerated answer different from the origin's (the log says which).
func checkVerified(t testing.TB, a *app.App) {
	t.Helper()
	got := metricSums(t, a.Metrics, "pgaccel_verify_total", "result")
	if got["differed"] != 0 {
		t.Errorf("shadow verification found %v accelerated answers different from the origin's (the log says which): %v", got["differed"], got)
	}
}

// startAppText starts pgaccel from the config text cfgText (the caller
// shuts it down), logging at warn level, or debug with PGACCEL_TEST_DEBUG.
func startAppText(t testing.TB, cfgText string) *app.App {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pgaccel.yaml")
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := catalog.Load(path)
	if err != nil {
		t.Fatalf("config: %v\n%s", err, cfgText)
	}
	level := zerolog.WarnLevel
	if os.Getenv("PGACCEL_TEST_DEBUG") != "" {
		level = zerolog.DebugLevel
	}
	a, err := app.Start(cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(level))
	if err != nil {
		t.Fatalf("start pgaccel: %v", err)
	}
	return a
}

// appDSN is a connection string through a's proxy.
func appDSN(a *app.App, user, password string) string {
	return "postgres://" + user + ":" + password + "@" + a.Addr() + "/" + origin.Database + "?sslmode=disable"
}

// routeCounts sums pgaccel_statements_total by route.
func routeCounts(t testing.TB, a *app.App) map[string]float64 {
	return metricSums(t, a.Metrics, "pgaccel_statements_total", "route")
}

// metricSums sums the counter (or histogram's sample count) name by the
// values of labels, joined with "|".
func metricSums(t testing.TB, g prometheus.Gatherer, name string, labels ...string) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			values := make([]string, len(labels))
			for i, want := range labels {
				for _, l := range m.GetLabel() {
					if l.GetName() == want {
						values[i] = l.GetValue()
					}
				}
			}
			v := m.GetCounter().GetValue()
			if g := m.GetGauge(); g != nil {
				v = g.GetValue()
			}
			if h := m.GetHistogram(); h != nil {
				v = float64(h.GetSampleCount())
			}
			out[strings.Join(values, "|")] += v
		}
	}
	return out
}

const accelDatasets = `  - from: postgres:public.acc_types
  - from: postgres:public.acc_customers
  - from: postgres:public.acc_orders
  - from: postgres:public.acc_secret
  - from: postgres:public.acc_rls
  - from: postgres:public.acc_time24
  - from: postgres:public.acc_coll
  - from: postgres:public.acc_special
`

// textArgs renders args as text-format parameters.
func textArgs(args []any) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(fmt.Sprint(a))
	}
	return out
}

// corpusSession runs q every way a client can: simple protocol, extended
// with text results, extended with binary results, and pgx's own prepared
// statements with binary parameters.
func corpusSession(q corpora.Query) func(t *testing.T, c *pgx.Conn, tr *transcript) {
	return func(t *testing.T, c *pgx.Conn, tr *transcript) {
		ctx := ctxT(t)
		simple(ctx, c, tr, corpora.Inline(q.SQL, q.Args))
		extended(ctx, c, tr, q.SQL, textArgs(q.Args), nil)
		extended(ctx, c, tr, q.SQL, textArgs(q.Args), []int16{1})
		rows, err := c.Query(ctx, q.SQL, q.Args...)
		if err != nil {
			tr.err(err)
			return
		}
		for _, f := range rows.FieldDescriptions() {
			tr.printf("pgx col %s %d %d fmt %d", f.Name, f.DataTypeOID, f.TypeModifier, f.Format)
		}
		for rows.Next() {
			vals := rows.RawValues()
			parts := make([]string, len(vals))
			for i, v := range vals {
				if v == nil {
					parts[i] = "NULL"
				} else {
					parts[i] = fmt.Sprintf("%x", v)
				}
			}
			tr.printf("pgx row %s", strings.Join(parts, " "))
		}
		if err := rows.Err(); err != nil {
			tr.err(err)
		}
		tr.printf("pgx tag %s", rows.CommandTag())
	}
}

func TestAccel_DifferentialCorpus(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	runCorpus(t, a, origin.DSN(appUser, appPass), appDSN(a, appUser, appPass))
	checkDerivedDescriptions(t, a)
}

// runCorpus runs each statement of the corpus at the origin (direct) and
// through pgaccel (proxied), compares the answers and checks the route.
func runCorpus(t *testing.T, a *app.App, direct, proxied string) {
	for _, q := range corpus {
		t.Run(q.Name, func(t *testing.T) {
			before := routeCounts(t, a)
			differentialDSN(t, direct, proxied, corpusSession(q))
			after := routeCounts(t, a)
			delta := func(r string) float64 { return after[r] - before[r] }
			switch q.Route {
			case acc:
				if delta(acc) != 4 || delta(fbk) != 0 {
					t.Errorf("route: want 4 accelerated executions, got accelerated=%v fallback=%v origin=%v", delta(acc), delta(fbk), delta(org))
				}
			case fbk:
				if delta(acc) != 0 || delta(fbk) < 1 {
					t.Errorf("route: want a fallback, got accelerated=%v fallback=%v origin=%v", delta(acc), delta(fbk), delta(org))
				}
			case org:
				if delta(acc) != 0 || delta(fbk) != 0 {
					t.Errorf("route: want origin, got accelerated=%v fallback=%v origin=%v", delta(acc), delta(fbk), delta(org))
				}
			}
		})
	}
}

// checkDerivedDescriptions fails the test when a description the planner
// worked out for a read (planner.Describe) differed from the origin's:
// every new accelerated text of a corpus is checked while the origin
// describes it (proxy.checkDerived), which makes each corpus a
// differential test of Describe's rules too.
func checkDerivedDescriptions(t *testing.T, a *app.App) {
	t.Helper()
	got := metricSums(t, a.Metrics, "pgaccel_derived_descriptions_total", "result")
	if got["differed"] != 0 {
		t.Errorf("planner.Describe differed from the origin's description %v times (the log says which): %v", got["differed"], got)
	}
	t.Logf("descriptions the planner worked out, checked against the origin's: %v", got)
}

// TestAccel_DifferentialCorpusLinguistic: the corpus in an en_US.UTF-8
// database and in an ICU en-US one (issue 45: the databases people run),
// every statement answered as the origin answers it and routed as in the
// C database: text ordered under the linguistic collation is keyed
// (collorder.go), not sent to the origin.
func TestAccel_DifferentialCorpusLinguistic(t *testing.T) {
	requireLocales(t, "en_US.UTF-8")
	requireICU(t)
	for _, c := range []struct{ label, db, options string }{
		{"en_US.UTF-8", "pgaccel_accel_enus", "LOCALE 'en_US.UTF-8'"},
		{"ICU en-US", "pgaccel_accel_icu", icuDatabase},
	} {
		if c.label == "ICU en-US" && !allLocales() {
			continue // see allLocales
		}
		t.Run(c.label, func(t *testing.T) {
			dsn := otherDatabase(t, c.db, c.options, accelSchema)
			t.Cleanup(func() { mustExec(t, "DROP DATABASE IF EXISTS "+c.db+" WITH (FORCE)") })
			a := startAppOrigin(t, dsn(origin.SuperUser, origin.SuperPassword), "", "  point_reads: acceleration\n", accelDatasets, true)
			proxied := strings.Replace(appDSN(a, appUser, appPass), "/"+origin.Database+"?", "/"+c.db+"?", 1)
			runCorpus(t, a, dsn(appUser, appPass), proxied)
			checkDerivedDescriptions(t, a)
		})
	}
}
