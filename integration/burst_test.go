package integration

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
)

// TestSessions_BurstOfNewReadersNeedsFewBackends: with auth.mode proxy, a
// burst of new sessions of one role that only read an accelerated dataset
// (a pool filling up at an application's start, psycopg2 workers) opens a
// few origin connections, not one each: the first login of the burst goes
// to the origin and reads the session info there at once, the others wait
// for it and start without the origin (keyFlights); the first session to
// need the origin's description of a new text asks for it, the others wait
// for its answer. The same holds once what sessions start with is older
// than cache_ttl. Before, each session of a cold burst logged in at the
// origin or reconnected there to describe, and held a backend for
// origin_idle_timeout.
func TestSessions_BurstOfNewReadersNeedsFewBackends(t *testing.T) {
	setupProxyAuth(t)
	const cacheTTL = 3 * time.Second
	a, _ := startProxyAuthApp(t, t.TempDir(), cacheTTL.String(), true)
	dsn := appDSN(a, sessUser, sessPass)

	// The origin connections pgaccel opened for sessions: logins there,
	// pooled connections taken, and reconnections for a statement.
	opened := func() float64 {
		m := metricSums(t, a.Metrics, "pgaccel_origin_links_total", "event")
		return m["login"] + m["reused"] + m["reconnected"]
	}
	const n = 40
	// Four texts (two per protocol) may each be described once, and one
	// login goes to the origin.
	const most = 5
	burst := func(round string) {
		before := opened()
		began := time.Now()
		pgxBurst(t, dsn, n)
		if got := opened() - before; got > most {
			t.Errorf("%s: %d new sessions that only read opened %v origin connections in %v, want at most %d (%v)", round, n, got,
				time.Since(began).Round(time.Millisecond), most, metricSums(t, a.Metrics, "pgaccel_origin_links_total", "event"))
		}
	}
	burst("cold")
	time.Sleep(cacheTTL + 500*time.Millisecond)
	burst("after cache_ttl")

	// psycopg2 (the simple protocol, a BEGIN before the first statement).
	psycopgBurst(t, a, 20)
}

// pgxBurst opens n sessions at once (half in the simple protocol), each
// reading the dataset, and closes them once all have read.
func pgxBurst(t *testing.T, dsn string, n int) {
	t.Helper()
	ctx := ctxT(t)
	var start, read sync.WaitGroup
	start.Add(1)
	read.Add(n)
	errs := make(chan error, n)
	var done sync.WaitGroup
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			cfg, err := pgx.ParseConfig(dsn)
			if err != nil {
				errs <- err
				read.Done()
				return
			}
			if i%2 == 1 {
				cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
			}
			c, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				errs <- fmt.Errorf("session %d: %w", i, err)
				read.Done()
				return
			}
			defer c.Close(context.Background())
			if got, err := readAll(ctx, c); err != nil || got != wantReads {
				errs <- fmt.Errorf("session %d: %q %v", i, got, err)
			}
			read.Done()
			read.Wait() // every session open until all have read
		}()
	}
	start.Done()
	done.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// psycopgBurst runs n psycopg2 sessions at once (testdata/psycopg/burst.py)
// and checks that they opened few origin connections.
func psycopgBurst(t *testing.T, a *app.App, n int) {
	t.Helper()
	if out, err := exec.Command(debianPython, "-c", "import psycopg2").CombinedOutput(); err != nil {
		t.Fatalf("psycopg2 missing (%v: %s): install it with `%s`", err, strings.TrimSpace(string(out)), psycopgInstall)
	}
	before := metricSums(t, a.Metrics, "pgaccel_origin_links_total", "event")
	host, port, _ := net.SplitHostPort(a.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, debianPython, "testdata/psycopg/burst.py", host, port, origin.Database, sessUser, sessPass, fmt.Sprint(n)).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "OK" {
		t.Fatalf("psycopg2 burst: %v: %s", err, out)
	}
	after := metricSums(t, a.Metrics, "pgaccel_origin_links_total", "event")
	got := 0.0
	for _, e := range []string{"login", "reused", "reconnected"} {
		got += after[e] - before[e]
	}
	// One new text (its description), and perhaps a login once
	// cache_ttl has passed.
	if got > 2 {
		t.Errorf("%d psycopg2 sessions that only read opened %v origin connections, want at most 2 (%v)", n, got, after)
	}
}
