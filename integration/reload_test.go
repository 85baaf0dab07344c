package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgaccel/pgaccel/internal/pgtest"
)

const reloadSchema = `DROP TABLE IF EXISTS rl_a, rl_b;
	CREATE TABLE rl_a (id bigint PRIMARY KEY, v int);
	CREATE TABLE rl_b (id bigint PRIMARY KEY, v int);
	INSERT INTO rl_a SELECT g, g FROM generate_series(1, 5000) g;
	INSERT INTO rl_b SELECT g, 2 * g FROM generate_series(1, 5000) g;
	GRANT SELECT ON rl_a, rl_b TO app;`

// reloadPost posts /v1/reload and returns the status and body.
func reloadPost(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/v1/reload", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var c bytes.Buffer
	if json.Compact(&c, b) == nil {
		return resp.StatusCode, c.String()
	}
	return resp.StatusCode, string(b)
}

// lastRouteOf runs sql on conn and returns SHOW pgaccel.last_route after it.
func lastRouteOf(t *testing.T, conn *pgx.Conn, sql string) string {
	t.Helper()
	ctx := ctxT(t)
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var r string
	if err := conn.QueryRow(ctx, "SHOW pgaccel.last_route").Scan(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Reload under load: datasets added, changed and removed while sessions
// read them, and refused changes; no session is dropped and every answer
// stays right.
func TestReload_DatasetsUnderLoad(t *testing.T) {
	mustExec(t, reloadSchema)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS rl_a, rl_b") })
	dsA := "  - from: postgres:public.rl_a\n"
	dsB := "  - from: postgres:public.rl_b\n    acceleration:\n      refresh_check_interval: 1m\n"
	a := startAppRuntime(t, "", "  verify:\n    enabled: false\n", dsA, true)
	path := a.Config.File()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(string(orig), dsA)
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// The load: 4 sessions (2 simple, 2 extended) read both tables and a
	// join until the end, checking every answer.
	checks := []struct {
		sql  string
		want int64
	}{
		{"SELECT sum(v) FROM rl_a", 12502500},
		{"SELECT sum(v) FROM rl_b WHERE id > 0", 25005000},
		{"SELECT count(*) FROM rl_a JOIN rl_b USING (id) WHERE rl_b.v = 2 * rl_a.v", 5000},
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var reads atomic.Int64
	errs := make(chan error, 16)
	for i := range 4 {
		var conn *pgx.Conn
		if i%2 == 0 {
			conn = connectSimple(t, appDSN(a, appUser, appPass))
		} else {
			conn = connect(t, appDSN(a, appUser, appPass))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				c := checks[n%len(checks)]
				var got int64
				if err := conn.QueryRow(context.Background(), c.sql).Scan(&got); err != nil {
					errs <- fmt.Errorf("session %d: %s: %w", i, c.sql, err)
					return
				}
				if got != c.want {
					errs <- fmt.Errorf("session %d: %s: %d, want %d", i, c.sql, got, c.want)
					return
				}
				reads.Add(1)
			}
		}()
	}
	t.Cleanup(func() { stop(); wg.Wait() })
	probe := connect(t, appDSN(a, appUser, appPass))
	progress := func(step string) {
		t.Helper()
		r := reads.Load()
		pgtest.WaitFor(t, "reads during "+step, func() bool { return reads.Load() > r+20 })
		select {
		case err := <-errs:
			t.Fatalf("%s: %v", step, err)
		default:
		}
	}
	if r := lastRouteOf(t, probe, checks[1].sql); !strings.HasPrefix(r, "origin") {
		t.Fatalf("rl_b before: %s", r)
	}
	progress("start")

	// Added.
	write(base + dsA + dsB)
	if code, body := reloadPost(t, a.AdminAddr()); code != http.StatusOK || !strings.Contains(body, `"added":["rl_b"]`) {
		t.Fatalf("reload adding rl_b: %d %s", code, body)
	}
	pgtest.WaitFor(t, "rl_b accelerated", func() bool { return strings.HasPrefix(lastRouteOf(t, probe, checks[1].sql), "accelerated") })
	if r := lastRouteOf(t, probe, checks[2].sql); !strings.HasPrefix(r, "accelerated") {
		t.Errorf("the join once both are datasets: %s", r)
	}
	progress("added")

	// Changed: the data loaded serves while it reloads.
	write(base + dsA + strings.Replace(dsB, "1m", "2m", 1))
	if code, body := reloadPost(t, a.AdminAddr()); code != http.StatusOK || !strings.Contains(body, `"changed":["rl_b"]`) {
		t.Fatalf("reload changing rl_b: %d %s", code, body)
	}
	if r := lastRouteOf(t, probe, checks[1].sql); !strings.HasPrefix(r, "accelerated") {
		t.Errorf("rl_b right after its change: %s", r)
	}
	progress("changed")

	// Refused: a setting outside datasets, an invalid file. Nothing
	// changes.
	write(strings.Replace(base, "listen: 127.0.0.1:0", "listen: 127.0.0.1:1", 1) + dsB)
	if code, body := reloadPost(t, a.AdminAddr()); code != http.StatusConflict || !strings.Contains(body, "server.listen") || !strings.Contains(body, "nothing was reloaded") {
		t.Errorf("reload changing server.listen: %d %s", code, body)
	}
	write(base + dsA + "  - from: postgres:public.rl_b\n    acceleration:\n      refresh_mode: sometimes\n")
	if code, body := reloadPost(t, a.AdminAddr()); code != http.StatusConflict || !strings.Contains(body, "refresh_mode") {
		t.Errorf("reload of an invalid file: %d %s", code, body)
	}
	if r := lastRouteOf(t, probe, checks[0].sql); !strings.HasPrefix(r, "accelerated") {
		t.Errorf("rl_a after refused reloads: %s", r)
	}
	progress("refused")

	// Removed.
	write(base + dsB)
	if code, body := reloadPost(t, a.AdminAddr()); code != http.StatusOK || !strings.Contains(body, `"removed":["rl_a"]`) {
		t.Fatalf("reload removing rl_a: %d %s", code, body)
	}
	if r := lastRouteOf(t, probe, checks[0].sql); !strings.HasPrefix(r, "origin") {
		t.Errorf("rl_a after its removal: %s", r)
	}
	if _, ok := a.Registry.State("rl_a"); ok {
		t.Error("rl_a is still registered")
	}
	progress("removed")

	// Added again: it loads again.
	write(base + dsA + dsB)
	if code, body := reloadPost(t, a.AdminAddr()); code != http.StatusOK || !strings.Contains(body, `"added":["rl_a"]`) {
		t.Fatalf("reload adding rl_a again: %d %s", code, body)
	}
	pgtest.WaitFor(t, "rl_a accelerated again", func() bool { return strings.HasPrefix(lastRouteOf(t, probe, checks[0].sql), "accelerated") })
	progress("added again")

	// PGACCEL_RELOAD_CYCLES=n: n more removals and additions of rl_a under
	// the same load (a soak, run before resolving; not in make test).
	cycles, _ := strconv.Atoi(os.Getenv("PGACCEL_RELOAD_CYCLES"))
	for i := range cycles {
		write(base + dsB)
		if code, body := reloadPost(t, a.AdminAddr()); code != http.StatusOK {
			t.Fatalf("cycle %d, removal: %d %s", i, code, body)
		}
		progress(fmt.Sprintf("cycle %d removed", i))
		write(base + dsA + dsB)
		if code, body := reloadPost(t, a.AdminAddr()); code != http.StatusOK {
			t.Fatalf("cycle %d, addition: %d %s", i, code, body)
		}
		pgtest.WaitFor(t, "rl_a accelerated again", func() bool { return strings.HasPrefix(lastRouteOf(t, probe, checks[0].sql), "accelerated") })
		progress(fmt.Sprintf("cycle %d added", i))
	}

	stop()
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	t.Logf("%d reads by 4 sessions through %d reloads", reads.Load(), 6+2*cycles)
}

// pgaccel run reloads on SIGHUP: a dataset added to the file is served
// after the signal, a session open across it stays, and a change that
// needs a restart is refused and logged.
func TestCLI_SIGHUPReloads(t *testing.T) {
	mustExec(t, reloadSchema)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS rl_a, rl_b") })
	bin := pgaccelBinary(t)
	listen := freeAddr(t)
	head := fmt.Sprintf("origin:\n  dsn: ${env:TEST_ORIGIN_DSN}\nserver:\n  listen: %s\nadmin:\n  listen: 127.0.0.1:0\nruntime:\n  data_dir: %s\ndatasets:\n  - from: postgres:public.rl_a\n", listen, t.TempDir())
	cfg := writeConfig(t, head)
	p := startPgaccel(t, bin, cfg, "TEST_ORIGIN_DSN="+origin.SuperDSN())
	pgtest.WaitFor(t, "pgaccel run listening", func() bool {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("pgaccel run exited:\n%s", p.stderr.String())
		default:
		}
		c, err := net.Dial("tcp", listen)
		if err == nil {
			c.Close()
		}
		return err == nil && strings.Contains(p.stderr.String(), "pgaccel started")
	})
	conn := connect(t, "postgres://app:app-pass@"+listen+"/"+origin.Database+"?sslmode=disable")
	hup := func(want string) {
		t.Helper()
		n := strings.Count(p.stderr.String(), "SIGHUP received")
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		pgtest.WaitFor(t, "the SIGHUP logged", func() bool { return strings.Count(p.stderr.String(), "SIGHUP received") > n })
		lines := strings.Split(p.stderr.String(), "\n")
		last := ""
		for _, l := range lines {
			if strings.Contains(l, "SIGHUP received") {
				last = l
			}
		}
		if !strings.Contains(last, want) {
			t.Errorf("the SIGHUP line %s, want %q", last, want)
		}
	}
	hup("no dataset changed")
	if err := os.WriteFile(cfg, []byte(head+"  - from: postgres:public.rl_b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hup("added rl_b")
	pgtest.WaitFor(t, "rl_b accelerated", func() bool {
		return strings.HasPrefix(lastRouteOf(t, conn, "SELECT sum(v) FROM rl_b"), "accelerated")
	})
	if err := os.WriteFile(cfg, []byte(strings.Replace(head, "admin:\n  listen: 127.0.0.1:0", "admin:\n  listen: 127.0.0.1:1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	hup("admin.listen changed, which only a restart applies")
	var sum int64
	if err := conn.QueryRow(ctxT(t), "SELECT sum(v) FROM rl_b").Scan(&sum); err != nil || sum != 25005000 {
		t.Fatalf("the session open across the reloads: %d %v", sum, err)
	}
	if strings.Contains(p.stderr.String(), "shutting down") {
		t.Errorf("SIGHUP started a shutdown:\n%s", p.stderr.String())
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- nil // for startPgaccel's cleanup
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, p.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}
