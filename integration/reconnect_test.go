package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/pgaccel/pgaccel/refresh"
)

// TestOutage_RestartDuringOutageServesAndReconnects: a file-mode dataset
// whose next refresh is an hour away, restarted while the origin is down,
// keeps answering reads from its acceleration, connects to the origin in
// the background (status Error with the cause after the first failed
// attempt, the spec's warning once however many attempts fail) and is
// Ready again once the origin is back, within the backoff.
func TestOutage_RestartDuringOutageServesAndReconnects(t *testing.T) {
	setupProxyAuth(t)
	dataDir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "pgaccel.yaml")
	cfgText := fmt.Sprintf(`origin:
  dsn: %q
server:
  listen: 127.0.0.1:0
admin:
  listen: 127.0.0.1:0
auth:
  mode: proxy
  max_stale: 1h
  persist: true
runtime:
  data_dir: %q
datasets:
  - from: postgres:public.sess_orders
    acceleration:
      mode: file
      refresh_check_interval: 1h
`, origin.SuperDSN(), dataDir)
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func(log zerolog.Logger) *app.App {
		cfg, err := catalog.Load(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		// A short backoff, so that the test sees several attempts.
		a, err := app.StartWith(cfg, log, app.Options{RefreshBackoff: refresh.Backoff{First: 100 * time.Millisecond, Max: 500 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	count := func(a *app.App, sql string) (int64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, appDSN(a, sessUser, sessPass))
		if err != nil {
			return 0, err
		}
		defer c.Close(ctx)
		var n int64
		err = c.QueryRow(ctx, sql).Scan(&n)
		return n, err
	}

	// The first run loads the acceleration; the role reads it once, so
	// that its login and the origin's answers about the table are kept.
	a := start(zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel))
	if err := a.WaitReady(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if n, err := count(a, "SELECT count(*) FROM sess_orders"); err != nil || n != 200 {
		t.Fatalf("first read: %d, %v", n, err)
	}
	shutdownApp(t, a)

	resume := origin.PauseDuring(t)
	logs := &syncBuffer{}
	b := start(zerolog.New(logs).Level(zerolog.DebugLevel))
	t.Cleanup(func() {
		shutdownApp(t, b)
		if t.Failed() {
			t.Logf("pgaccel's log:\n%s", logs.String())
		}
	})
	pgtest.WaitFor(t, "status Error after a failed connection", func() bool {
		d := datasetStatus(t, b.AdminAddr(), "", "sess_orders")
		return d != nil && d["status"] == "Error"
	})
	d := datasetStatus(t, b.AdminAddr(), "", "sess_orders")
	if msg, _ := d["error_message"].(string); !strings.Contains(msg, "connect") || d["rows"] != float64(200) {
		t.Errorf("status while the origin is down: %v", d)
	}
	if n, err := count(b, "SELECT count(*) FROM sess_orders WHERE id > 150"); err != nil || n != 50 {
		t.Errorf("read while the origin is down: %d, %v; want 50 from the acceleration", n, err)
	}
	if code, body := adminGet(t, b.AdminAddr(), "/v1/ready", ""); code != 200 {
		t.Errorf("/v1/ready while the origin is down: %d %s", code, body)
	}
	warning := "Failed to connect to the source for dataset sess_orders. Serving data from the existing acceleration for sess_orders while retrying the connection."
	lines := func(subs ...string) int {
		n := 0
		for _, l := range strings.Split(logs.String(), "\n") {
			ok := true
			for _, s := range subs {
				ok = ok && strings.Contains(l, s)
			}
			if ok {
				n++
			}
		}
		return n
	}
	pgtest.WaitFor(t, "several failed attempts", func() bool { return lines(warning) >= 4 })
	if n := lines(`"level":"warn"`, warning); n != 1 {
		t.Errorf("%d warnings over %d failed attempts, want 1 (then at most every 5 minutes)", n, lines(warning))
	}

	if err := resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, "Ready once the origin is back", func() bool {
		d := datasetStatus(t, b.AdminAddr(), "", "sess_orders")
		return d != nil && d["status"] == "Ready"
	})
	if d := datasetStatus(t, b.AdminAddr(), "", "sess_orders"); d["error_message"] != nil || d["rows"] != float64(200) {
		t.Errorf("status after reconnecting: %v", d)
	}
	if lines(`"level":"info"`, "Reconnected to the source for dataset sess_orders") != 1 {
		t.Error("no log of the reconnection")
	}
	if lines("refresh done") != 0 {
		t.Error("a refresh ran before it was due")
	}
}
