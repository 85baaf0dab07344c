package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// freeAddr returns a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for a process writing and a test
// reading.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// pgaccelProcess is `pgaccel run` started by a test.
type pgaccelProcess struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan error
}

func startPgaccel(t *testing.T, bin, cfg string, env ...string) *pgaccelProcess {
	t.Helper()
	p := &pgaccelProcess{stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, "run", "-c", cfg, "-log-format", "json")
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// cli runs a pgaccel command and returns its output.
func cli(t *testing.T, bin string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// datasetStatus reads one dataset of GET /v1/datasets?status=true.
func datasetStatus(t *testing.T, admin, token, name string) map[string]any {
	t.Helper()
	code, body := adminGet(t, admin, "/v1/datasets?status=true", token)
	if code != 200 {
		return nil
	}
	var ds []map[string]any
	if err := json.Unmarshal([]byte(body), &ds); err != nil {
		t.Fatalf("datasets: %v\n%s", err, body)
	}
	for _, d := range ds {
		if d["name"] == name {
			return d
		}
	}
	return nil
}

// The binary end to end: the CLI's status and refresh, kill -9 in the
// middle of a refresh, a restart that serves the last complete
// acceleration, an origin outage, and SIGTERM's drain.
func TestOutage_KillRestartAndOriginDown(t *testing.T) {
	bin := pgaccelBinary(t)
	mustExec(t, `DROP TABLE IF EXISTS out_big, out_small;
		CREATE TABLE out_big (id bigint, s text);
		INSERT INTO out_big SELECT g, md5(g::text) FROM generate_series(1, 2000000) g;
		CREATE TABLE out_small (id int, v text);
		INSERT INTO out_small SELECT g, 'v' || g FROM generate_series(1, 100) g;
		ANALYZE out_big;
		GRANT SELECT ON out_big, out_small TO app;`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS out_big, out_small") })

	listen, admin := freeAddr(t), freeAddr(t)
	const token = "outage-token"
	cfg := filepath.Join(t.TempDir(), "pgaccel.yaml")
	body := fmt.Sprintf(`origin:
  dsn: ${env:TEST_ORIGIN_DSN}
server:
  listen: %s
  shutdown_grace: 20s
admin:
  listen: %s
  token: ${env:TEST_ADMIN_TOKEN}
runtime:
  data_dir: %s
datasets:
  - from: postgres:public.out_big
    acceleration:
      mode: file
  - from: postgres:public.out_small
    acceleration:
      mode: file
`, listen, admin, t.TempDir())
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"TEST_ORIGIN_DSN=" + origin.SuperDSN(), "TEST_ADMIN_TOKEN=" + token}
	dsn := "postgres://app:app-pass@" + listen + "/" + origin.Database + "?sslmode=disable"
	count := func(table string) (string, error) {
		out, err := runPsql(t, psqlPath(t), dsn, "-Atc", "SELECT count(*) FROM "+table)
		return strings.TrimSpace(out), err
	}

	p1 := startPgaccel(t, bin, cfg, env...)
	pgtest.WaitFor(t, "both datasets loaded", func() bool {
		out, err := cli(t, bin, env, "status", "-c", cfg)
		return err == nil && strings.Count(out, " Ready ") == 2
	})
	out, _ := cli(t, bin, env, "status", "-c", cfg)
	if !strings.Contains(out, "out_big") || !strings.Contains(out, "2000000") || !strings.Contains(out, "DATASET") {
		t.Errorf("pgaccel status:\n%s", out)
	}
	if out, err := cli(t, bin, env, "status", "-c", cfg, "-token", "wrong"); err == nil || !strings.Contains(out, "401") {
		t.Errorf("status with a wrong token: %v\n%s", err, out)
	}

	// kill -9 in the middle of a refresh of out_big with new rows.
	mustExec(t, "INSERT INTO out_big SELECT g, 'new' FROM generate_series(2000001, 2100000) g")
	if out, err := cli(t, bin, env, "refresh", "-c", cfg, "out_big"); err != nil || !strings.Contains(out, "Dataset refresh triggered for out_big.") {
		t.Fatalf("pgaccel refresh: %v\n%s", err, out)
	}
	pgtest.WaitFor(t, "the refresh's COPY at the origin", func() bool {
		n, err := originCount(`SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'pgaccel refresh' AND query LIKE 'COPY%out_big%'`)
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	// Its progress shows in the dataset's status.
	pgtest.WaitFor(t, "refresh progress", func() bool {
		d := datasetStatus(t, admin, token, "out_big")
		p, _ := d["refresh_progress"].(map[string]any)
		return p != nil && p["rows_loaded"].(float64) > 0 && p["rows_estimated"] == float64(2000000) && d["status"] == "Refreshing"
	})
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p1.done
	p1.done <- nil // for the cleanup

	// Restart: the last complete acceleration is served at once, without a
	// reload (refresh_on_startup: auto, no schedule).
	p2 := startPgaccel(t, bin, cfg, env...)
	pgtest.WaitFor(t, "the restarted pgaccel", func() bool {
		// Both ports: the admin one is bound just after the pgwire one.
		for _, addr := range []string{listen, admin} {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return false
			}
			c.Close()
		}
		return true
	})
	pgtest.WaitFor(t, "out_big registered from its file", func() bool {
		d := datasetStatus(t, admin, token, "out_big")
		return d != nil && d["status"] == "Ready"
	})
	if n, err := count("out_big"); err != nil || n != "2000000" {
		t.Errorf("after kill -9 and restart: count %q, %v; want the complete 2000000", n, err)
	}
	if d := datasetStatus(t, admin, token, "out_big"); d["rows"] != float64(2000000) || d["last_refresh"] == nil {
		t.Errorf("restored state: %v", d)
	}

	// The origin goes down. New sessions get 08006; /v1/ready stays 200
	// (the datasets were Ready); a refresh fails with the spec's warning
	// and status Error.
	resume := origin.PauseDuring(t)
	if out, err := runPsql(t, psqlPath(t), dsn, "-Atc", "SELECT 1"); err == nil || !strings.Contains(out, "cannot connect to the origin") {
		t.Errorf("psql while the origin is down: %v\n%s", err, out)
	}
	if _, err := pgx.Connect(context.Background(), dsn); pgErrCode(err) != "08006" {
		t.Errorf("new session while the origin is down: %v, want SQLSTATE 08006", err)
	}
	if out, err := cli(t, bin, env, "refresh", "-c", cfg, "out_small"); err != nil {
		t.Fatalf("refresh while down: %v\n%s", err, out)
	}
	pgtest.WaitFor(t, "out_small in Error", func() bool {
		d := datasetStatus(t, admin, token, "out_small")
		return d != nil && d["status"] == "Error" && d["rows"] == float64(100)
	})
	if code, body := adminGet(t, admin, "/v1/ready", ""); code != 200 {
		t.Errorf("/v1/ready while the origin is down: %d %s", code, body)
	}
	pgtest.WaitFor(t, "the outage warning", func() bool {
		return strings.Contains(p2.stderr.String(), "Failed to connect to the source for dataset out_small. Serving data from the existing acceleration for out_small while retrying the connection.")
	})
	if err := resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, "out_small Ready again", func() bool {
		d := datasetStatus(t, admin, token, "out_small")
		return d != nil && d["status"] == "Ready"
	})

	// SIGTERM with a statement running: ShuttingDown and 503 while it
	// drains, then a clean exit.
	sleeping := make(chan error, 1)
	go func() {
		_, err := runPsql(t, psqlPath(t), dsn, "-Atc", "SELECT pg_sleep(3)")
		sleeping <- err
	}()
	pgtest.WaitFor(t, "the sleeping statement", func() bool {
		n, _ := originCount(`SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(3)'`)
		return n > 0
	})
	if err := p2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, "readiness 503 while draining", func() bool {
		code, _ := adminGet(t, admin, "/v1/ready", "")
		return code == 503
	})
	if d := datasetStatus(t, admin, token, "out_big"); d == nil || d["status"] != "ShuttingDown" {
		t.Errorf("status while draining: %v", d)
	}
	if err := <-sleeping; err != nil {
		t.Errorf("the running statement did not finish: %v", err)
	}
	select {
	case err := <-p2.done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, p2.stderr.String())
		}
		p2.done <- nil
	case <-time.After(60 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}

// originCount runs a count(*) query on a superuser connection of its own,
// closed before it returns, so a check polled by WaitFor holds no backend
// between polls (a connection left open per poll crowds the origin's
// max_connections and shuts out the sessions under test).
func originCount(sql string, args ...any) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, origin.SuperDSN())
	if err != nil {
		return 0, err
	}
	defer c.Close(context.Background())
	var n int
	err = c.QueryRow(ctx, sql, args...).Scan(&n)
	return n, err
}

// originConn is a superuser connection to the origin, closed with the test.
func originConn(t *testing.T) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), origin.SuperDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
