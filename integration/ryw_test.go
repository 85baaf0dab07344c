package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/integration/s3test"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// Read-your-writes (runtime.read_your_writes): clients write through
// pgaccel and read back what they wrote, and no read may return a state
// older than the client's own write. Each client inserts rows numbered
// 1, 2, 3 ... of its own and, after each commit, reads the highest number
// of its rows (an aggregate, which the acceleration answers); a read that
// returns less than the number just committed is stale. The same workload
// with read_your_writes off shows stale reads, so the test can fail.
//
// PGACCEL_RYW_PAIRS sets the write-then-read pairs per client (default 250
// in make test; the run is 12,500 per client, 100,000 in all).

// rywPairs is the pairs each client runs.
func rywPairs(t *testing.T) int {
	if v := os.Getenv("PGACCEL_RYW_PAIRS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("PGACCEL_RYW_PAIRS=%q is not a positive number", v)
		}
		return n
	}
	return 250
}

// rywClients is how many clients write and read at once.
const rywClients = 8

// rywModes are the refresh modes tested, as the datasets entry of table.
var rywModes = []struct {
	mode    string
	dataset func(table string) string
}{
	{"changes", changesDatasetYAML},
	{"full", func(table string) string {
		return fmt.Sprintf("  - from: postgres:public.%s\n    acceleration:\n      refresh_mode: full\n      refresh_check_interval: 1s\n", table)
	}},
	{"append", func(table string) string {
		return fmt.Sprintf("  - from: postgres:public.%s\n    time_column: ts\n    acceleration:\n      refresh_mode: append\n      refresh_check_interval: 1s\n      refresh_append_overlap: 1h\n      primary_key: [id]\n", table)
	}},
	{"caching", func(table string) string {
		return fmt.Sprintf("  - from: postgres:public.%s\n    acceleration:\n      refresh_mode: caching\n      refresh_check_interval: 2s\n", table)
	}},
	{"snapshot", nil}, // a follower of a writer's snapshots (rywFleet)
}

// rywFleet is a snapshot fleet for the snapshot mode: an object store and
// a writer that loads the table every second and publishes a snapshot of
// each load.
type rywFleet struct {
	srv    *s3test.Server
	writer *app.App
}

// startRYWApp starts pgaccel with runtime lines and mode m's dataset of
// table; the snapshot mode starts a follower of fleet's writer (the fleet
// made at its first use).
func startRYWApp(t *testing.T, fleet **rywFleet, mode string, dataset func(string) string, table, runtime string) *app.App {
	t.Helper()
	if dataset != nil {
		return startAppRuntime(t, "", runtime, dataset(table), true)
	}
	const bucket = "rywfleet"
	if *fleet == nil {
		srv, _ := s3Fleet(t, bucket)
		writer := startFleetApp(t, srv, bucket, table, "      mode: file\n      refresh_check_interval: 1s\n      snapshots: create_only\n")
		*fleet = &rywFleet{srv: srv, writer: writer}
	}
	return startFleetAppRuntime(t, (*fleet).srv, bucket, table, "      mode: file\n      snapshots: enabled\n      refresh_mode: snapshot\n      refresh_check_interval: 1s\n", runtime)
}

// createRYWTable (re)creates the workload's table.
func createRYWTable(t *testing.T, table string) {
	t.Helper()
	mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
		CREATE TABLE %[1]s (id bigint PRIMARY KEY, client int NOT NULL, seq bigint NOT NULL, ts timestamptz NOT NULL DEFAULT clock_timestamp());
		CREATE INDEX ON %[1]s (client, seq);
		INSERT INTO %[1]s SELECT g, -1, g, clock_timestamp() FROM generate_series(1, 100) g;
		GRANT SELECT, INSERT ON %[1]s TO app;`, table))
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS "+table) })
}

// rywResult is what a workload saw.
type rywResult struct {
	pairs, stale atomic.Int64
	firstStale   atomic.Pointer[string]
}

// runRYW runs the workload against pool: each client writes then reads on
// one connection (sameConn, as an application that holds a connection for
// a request does), or on whichever connection the pool gives each
// statement.
func runRYW(t *testing.T, pool *pgxpool.Pool, table string, base, pairs int, sameConn bool) *rywResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var res rywResult
	var wg sync.WaitGroup
	errs := make(chan error, rywClients)
	for c := range rywClients {
		c := base + c
		wg.Go(func() {
			insert := fmt.Sprintf("INSERT INTO %s (id, client, seq) VALUES ($1, $2, $3)", table)
			read := fmt.Sprintf("SELECT coalesce(max(seq), 0) FROM %s WHERE client = $1", table)
			for i := 1; i <= pairs; i++ {
				id := int64(1_000_000*(c+1) + i)
				var got int64
				var err error
				if sameConn {
					err = func() error {
						conn, err := pool.Acquire(ctx)
						if err != nil {
							return err
						}
						defer conn.Release()
						if _, err := conn.Exec(ctx, insert, id, c, i); err != nil {
							return err
						}
						return conn.QueryRow(ctx, read, c).Scan(&got)
					}()
				} else {
					if _, err = pool.Exec(ctx, insert, id, c, i); err == nil {
						err = pool.QueryRow(ctx, read, c).Scan(&got)
					}
				}
				if err != nil {
					errs <- fmt.Errorf("client %d pair %d: %w", c, i, err)
					return
				}
				res.pairs.Add(1)
				if got < int64(i) {
					if res.stale.Add(1) == 1 {
						msg := fmt.Sprintf("client %d wrote %d and read %d", c, i, got)
						res.firstStale.Store(&msg)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return &res
}

// rywPool opens a pgx pool of rywClients connections through a.
func rywPool(t *testing.T, a *app.App) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(appDSN(a, appUser, appPass))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = rywClients
	pool, err := pgxpool.NewWithConfig(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestReadYourWrites_EachRefreshMode runs the workload with a pgx pool for
// each refresh mode, read_your_writes at its default (session; each
// client's write and read on one connection) and with scope role (write
// and read on any of the pool's connections), then off.
func TestReadYourWrites_EachRefreshMode(t *testing.T) {
	pairs := rywPairs(t)
	var fleet *rywFleet
	for _, m := range rywModes {
		t.Run(m.mode, func(t *testing.T) {
			table := "ryw_" + m.mode
			if m.mode == "changes" {
				dropCDCSlots(t, table)
				t.Cleanup(func() { dropCDCSlots(t, table) })
			}
			for ri, run := range []struct {
				scope    string
				sameConn bool
			}{{"session", true}, {"role", false}, {"off", true}} {
				createRYWTable(t, table)
				runtime := ""
				if run.scope != "session" {
					runtime = "  read_your_writes: " + run.scope + "\n"
				}
				a := startRYWApp(t, &fleet, m.mode, m.dataset, table, runtime)
				pool := rywPool(t, a)
				n := pairs
				if run.scope == "off" {
					n = min(pairs, 100)
				}
				start := time.Now()
				// Clients numbered apart in each run: a snapshot of the
				// table as an earlier run left it holds none of theirs.
				res := runRYW(t, pool, table, 100*ri, n, run.sameConn)
				routes := appRoutes(t, a)()
				waits := metricSums(t, a.Metrics, "pgaccel_read_your_writes_waits_total", "outcome")
				t.Logf("%s, read_your_writes %s: %d pairs in %v, %d stale; routes %s; waits %v", m.mode, run.scope, res.pairs.Load(),
					time.Since(start).Round(time.Millisecond), res.stale.Load(), renderRoutes(routes), waits)
				switch run.scope {
				case "off":
					if m.mode == "caching" {
						// Its answers are dropped at every commit that
						// may write it (for every session), whatever
						// read_your_writes says.
						if s := res.stale.Load(); s != 0 {
							t.Errorf("caching with read_your_writes off: %d stale reads (first: %s)", s, *res.firstStale.Load())
						}
						break
					}
					if res.stale.Load() == 0 {
						t.Errorf("%s with read_your_writes off: no stale read in %d pairs (the test cannot tell the guarantee from its absence)", m.mode, res.pairs.Load())
					}
				default:
					if s := res.stale.Load(); s != 0 {
						t.Errorf("%s, read_your_writes %s: %d of %d reads returned a state older than the client's own write (first: %s)",
							m.mode, run.scope, s, res.pairs.Load(), *res.firstStale.Load())
					}
					switch m.mode {
					case "changes":
						// The reads wait for the stream to apply the write.
						if waits["reached"]+waits["timeout"]+waits["origin"] == 0 {
							t.Errorf("changes, read_your_writes %s: no read waited for its write: waits %v, %s", run.scope, waits, renderRoutes(routes))
						}
					case "full", "append", "snapshot":
						if routes["origin|"+"read_your_writes"] == 0 {
							t.Errorf("%s, read_your_writes %s: no read went to the origin for read-your-writes: %s", m.mode, run.scope, renderRoutes(routes))
						}
					}
				}
				if m.mode == "changes" && run.scope == "session" && prefixSum(routes, acc+"|") == 0 {
					t.Errorf("changes: no read was answered from the acceleration after waiting for its write: %s, waits %v", renderRoutes(routes), waits)
				}
				shutdownApp(t, a)
			}
		})
	}
}

// renderRoutes renders statements counted by route and reason.
func renderRoutes(m map[string]float64) string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s=%v", k, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// prefixSum sums the counts whose key starts with prefix.
func prefixSum(m map[string]float64, prefix string) float64 {
	var n float64
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

// rywDriver is a driver program of testdata/ryw and how to run it.
type rywDriver struct {
	name string
	argv func(host, port, table string, base, clients, pairs int) []string
}

func rywDrivers(t *testing.T) []rywDriver {
	t.Helper()
	if _, err := os.Stat(debianPython); err != nil {
		t.Fatal(debianPython + " not found: install it with `" + psycopgInstall + "`")
	}
	if out, err := exec.Command(debianPython, "-c", "import psycopg, psycopg2").CombinedOutput(); err != nil {
		t.Fatalf("psycopg or psycopg2 missing (%v: %s): install them with `%s`", err, strings.TrimSpace(string(out)), psycopgInstall)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal("java not found: install it with `" + jdbcInstall + "`")
	}
	if _, err := os.Stat(pgjdbcJar); err != nil {
		t.Fatal(pgjdbcJar + " not found: install it with `" + jdbcInstall + "`")
	}
	py := func(driver string) func(host, port, table string, base, clients, pairs int) []string {
		return func(host, port, table string, base, clients, pairs int) []string {
			return []string{debianPython, "testdata/ryw/ryw_check.py", driver, host, port, origin.Database, appUser, appPass, table,
				strconv.Itoa(base), strconv.Itoa(clients), strconv.Itoa(pairs)}
		}
	}
	return []rywDriver{
		{"psycopg", py("pg3")},
		{"psycopg2", py("pg2")},
		{"pgjdbc", func(host, port, table string, base, clients, pairs int) []string {
			return []string{java, "-cp", pgjdbcJar, "testdata/ryw/RywCheck.java", host, port, origin.Database, appUser, appPass, table,
				strconv.Itoa(base), strconv.Itoa(clients), strconv.Itoa(pairs)}
		}},
	}
}

// runRYWProgram runs a driver program and returns its pairs and stale
// reads, and the first stale read.
func runRYWProgram(t *testing.T, argv []string) (pairs, stale int, first string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, text)
	}
	line := text[strings.LastIndex(text, "\n")+1:]
	if _, err := fmt.Sscanf(line, "RESULT pairs=%d stale=%d", &pairs, &stale); err != nil {
		t.Fatalf("%s: no result line: %v\n%s", strings.Join(argv, " "), err, text)
	}
	_, first, _ = strings.Cut(line, "first=")
	return pairs, stale, first
}

// TestReadYourWrites_Drivers runs the workload with psycopg 3, psycopg2
// and pgjdbc (one connection per client, read_your_writes at its
// default), then with read_your_writes off, for each refresh mode.
func TestReadYourWrites_Drivers(t *testing.T) {
	drivers := rywDrivers(t)
	pairs := rywPairs(t) / 2
	var fleet *rywFleet
	for _, m := range rywModes {
		t.Run(m.mode, func(t *testing.T) {
			table := "ryw_drv_" + m.mode
			if m.mode == "changes" {
				dropCDCSlots(t, table)
				t.Cleanup(func() { dropCDCSlots(t, table) })
			}
			for si, scope := range []string{"session", "off"} {
				if scope == "off" && (m.mode == "caching" || m.mode == "append") {
					continue // caching: its own invalidation; append: as full
				}
				createRYWTable(t, table)
				runtime := ""
				if scope == "off" {
					runtime = "  read_your_writes: off\n"
				}
				a := startRYWApp(t, &fleet, m.mode, m.dataset, table, runtime)
				host, port, _ := net.SplitHostPort(a.Addr())
				for i, d := range drivers {
					n := pairs
					if scope == "off" {
						n = min(pairs, 50)
					}
					start := time.Now()
					got, stale, first := runRYWProgram(t, d.argv(host, port, table, 100*si+10*i, rywClients, n))
					t.Logf("%s, %s, read_your_writes %s: %d pairs in %v, %d stale", m.mode, d.name, scope, got, time.Since(start).Round(time.Millisecond), stale)
					if got != rywClients*n {
						t.Errorf("%s, %s: %d pairs, want %d", m.mode, d.name, got, rywClients*n)
					}
					switch {
					case scope == "off" && stale == 0:
						t.Errorf("%s, %s with read_your_writes off: no stale read in %d pairs (the test cannot tell the guarantee from its absence)", m.mode, d.name, got)
					case scope != "off" && stale != 0:
						t.Errorf("%s, %s: %d of %d reads returned a state older than the client's own write (first: %s)", m.mode, d.name, stale, got, first)
					}
				}
				t.Logf("%s, read_your_writes %s: routes %s", m.mode, scope, renderRoutes(appRoutes(t, a)()))
				shutdownApp(t, a)
			}
		})
	}
}

// After a write through pgaccel, SHOW pgaccel.last_route says why a read of
// a full dataset went to the origin, and the reads are accelerated again
// once a refresh that started after the write has completed; another
// session (scope session) reads the acceleration meanwhile.
func TestReadYourWrites_LastRouteAndBack(t *testing.T) {
	const table = "ryw_back"
	createRYWTable(t, table)
	a := startAppRuntime(t, "", "", fmt.Sprintf("  - from: postgres:public.%s\n    acceleration:\n      refresh_check_interval: 2s\n", table), true)
	writer := connect(t, appDSN(a, appUser, appPass))
	other := connect(t, appDSN(a, appUser, appPass))
	route := func(conn *pgx.Conn) string { return countAndRoute(t, conn, table) }
	if r := route(writer); !strings.HasPrefix(r, "100 accelerated") {
		t.Fatalf("before the write: %s", r)
	}
	mustExecOn(t, writer, "INSERT INTO "+table+" (id, client, seq) VALUES (1000, 1, 1)")
	if r := route(writer); !strings.HasPrefix(r, "101 origin: read_your_writes: dataset "+table+" has not been refreshed since") {
		t.Errorf("after the write: %s", r)
	}
	if r := route(other); !strings.HasPrefix(r, "100 accelerated") {
		t.Errorf("another session after the write: %s", r)
	}
	pgtest.WaitFor(t, "a refresh after the write", func() bool { return strings.HasPrefix(route(writer), "101 accelerated") })
}

// refresh_mode: snapshot: a follower that serves a writer's snapshots
// answers a session that wrote through it from the origin until it serves
// a snapshot whose data was loaded after the write (data_as_of), then
// from the acceleration again; the snapshots record data_as_of.
func TestReadYourWrites_SnapshotFollower(t *testing.T) {
	srv, store := s3Fleet(t, "ryw")
	const table = "ryw_snap"
	createRYWTable(t, table)
	start := func(opt string) *app.App {
		t.Helper()
		return startFleetApp(t, srv, "ryw", table, "      mode: file\n      primary_key: id\n      snapshots: "+opt+"\n")
	}
	writer := start("create_only")
	s1 := currentSnapshot(t, store, table, "")
	if s1.DataAsOf.IsZero() {
		t.Fatalf("the snapshot has no data_as_of: %+v", s1)
	}
	follower := start("enabled\n      refresh_mode: snapshot\n      refresh_check_interval: 1s")
	conn := connect(t, appDSN(follower, appUser, appPass))
	ctx := ctxT(t)
	route := func() string { return countAndRoute(t, conn, table) }
	if r := route(); !strings.HasPrefix(r, "100 accelerated") {
		t.Fatalf("before the write: %s", r)
	}
	mustExecOn(t, conn, "INSERT INTO "+table+" (id, client, seq) VALUES (1000, 1, 1)")
	for range 3 {
		if r := route(); !strings.HasPrefix(r, "101 origin: read_your_writes") {
			t.Fatalf("after the write, before a newer snapshot: %s", r)
		}
	}
	if err := writer.Runner.Refresh(ctx, table); err != nil {
		t.Fatal(err)
	}
	s2 := currentSnapshot(t, store, table, s1.ID)
	if !s2.DataAsOf.After(s1.DataAsOf) {
		t.Fatalf("data_as_of %v, then %v", s1.DataAsOf, s2.DataAsOf)
	}
	pgtest.WaitFor(t, "the follower on the newer snapshot", func() bool { return strings.HasPrefix(route(), "101 accelerated") })
}

// countAndRoute reads table's row count on conn and says how the read was
// routed: "<count> <SHOW pgaccel.last_route>".
func countAndRoute(t *testing.T, conn *pgx.Conn, table string) string {
	t.Helper()
	var n int64
	if err := conn.QueryRow(ctxT(t), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var r string
	if err := conn.QueryRow(ctxT(t), "SHOW pgaccel.last_route").Scan(&r); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", n, r)
}
