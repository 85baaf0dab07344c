package integration

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgaccel/pgaccel/app"
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
}

// createRYWTable (re)creates the workload's table.
func createRYWTable(t *testing.T, table string) {
	t.Helper()
	mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
		CREATE TABLE %[1]s (id bigint PRIMARY KEY, client int NOT NULL, seq bigint NOT NULL, ts timestamptz NOT NULL DEFAULT clock_timestamp());
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
func runRYW(t *testing.T, pool *pgxpool.Pool, table string, pairs int, sameConn bool) *rywResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var res rywResult
	var wg sync.WaitGroup
	errs := make(chan error, rywClients)
	for c := range rywClients {
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
	for _, m := range rywModes {
		t.Run(m.mode, func(t *testing.T) {
			table := "ryw_" + m.mode
			if m.mode == "changes" {
				dropCDCSlots(t, table)
				t.Cleanup(func() { dropCDCSlots(t, table) })
			}
			for _, run := range []struct {
				scope    string
				sameConn bool
			}{{"session", true}, {"role", false}, {"off", true}} {
				createRYWTable(t, table)
				runtime := ""
				if run.scope != "session" {
					runtime = "  read_your_writes: " + run.scope + "\n"
				}
				a := startAppRuntime(t, "", runtime, m.dataset(table), true)
				pool := rywPool(t, a)
				n := pairs
				if run.scope == "off" {
					n = min(pairs, 100)
				}
				start := time.Now()
				res := runRYW(t, pool, table, n, run.sameConn)
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
					case "full", "append":
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
