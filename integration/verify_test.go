package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/rs/zerolog"
)

// startAppWithOptions starts pgaccel from config text with app options.
func startAppWithOptions(t *testing.T, cfgText string, opts app.Options) *app.App {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pgaccel.yaml")
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := catalog.Load(path)
	if err != nil {
		t.Fatalf("config: %v\n%s", err, cfgText)
	}
	a, err := app.StartWith(cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel), opts)
	if err != nil {
		t.Fatalf("start pgaccel: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestVerify_PlantedWrongAnswerIsFoundAndDemoted: with runtime.verify on
// (every statement sampled), an accelerated answer made wrong on purpose
// (a test-only rewrite adds 1 to a count) is found different from the
// origin's, counted, shown in the dataset's status, and statements of its
// shape go to the origin from then on, in the simple and the extended
// protocol; correct answers are counted equal; an answer of a table
// changed since the load is not compared (skipped), and nothing correct
// is demoted.
func TestVerify_PlantedWrongAnswerIsFoundAndDemoted(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS verify_items;
		CREATE TABLE verify_items (id int PRIMARY KEY, n int, t text);
		INSERT INTO verify_items SELECT g, g % 7, 'v' || g FROM generate_series(1, 100) g;
		GRANT SELECT ON verify_items TO app;`)
	cfgText := fmt.Sprintf(`origin:
  dsn: %q
server:
  listen: 127.0.0.1:0
admin:
  listen: 127.0.0.1:0
runtime:
  data_dir: %q
  point_reads: acceleration
  results_cache:
    enabled: false
  verify:
    enabled: true
    sample_rate: 100%%
    origin_time_per_minute: 30s
datasets:
  - from: postgres:public.verify_items
    acceleration:
      refresh_check_interval: 1h
`, origin.SuperDSN(), t.TempDir())
	a := startAppWithOptions(t, cfgText, app.Options{
		VerifyConfirm: 200 * time.Millisecond,
		TestRewrite: func(sql string) string {
			return strings.ReplaceAll(sql, "count(*) AS planted", "count(*) + 1 AS planted")
		},
	})
	verified := func() map[string]float64 { return metricSums(t, a.Metrics, "pgaccel_verify_total", "result") }
	waitVerified := func(result string, want float64) {
		t.Helper()
		pgtest.WaitFor(t, fmt.Sprintf("%v %s verifications", want, result), func() bool { return verified()[result] >= want })
	}
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))
	lastRoute := func() string {
		var r string
		if err := c.QueryRow(ctx, "SHOW pgaccel.last_route", pgx.QueryExecModeSimpleProtocol).Scan(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}

	// Correct answers: equal.
	for _, q := range []string{
		"SELECT count(*) AS ok FROM verify_items",
		"SELECT n, count(*), min(t) FROM verify_items GROUP BY n ORDER BY n",
		"SELECT id, t FROM verify_items WHERE n = 3",
	} {
		if _, err := c.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, q, pgx.QueryExecModeExec); err != nil {
			t.Fatal(err)
		}
	}
	waitVerified("equal", 6)
	direct := connect(t, origin.DSN(appUser, appPass))

	// The planted wrong answer, in both protocols.
	for _, tc := range []struct {
		name string
		sql  string
		args []any
		mode pgx.QueryExecMode
	}{
		{"simple", "SELECT count(*) AS planted FROM verify_items", nil, pgx.QueryExecModeSimpleProtocol},
		{"extended", "SELECT count(*) AS planted FROM verify_items WHERE n > $1", []any{2}, pgx.QueryExecModeExec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := 0
			if err := direct.QueryRow(ctx, strings.Replace(tc.sql, "$1", "2", 1)).Scan(&want); err != nil {
				t.Fatal(err)
			}
			before := verified()["differed"]
			var got int
			if err := c.QueryRow(ctx, tc.sql, append([]any{tc.mode}, tc.args...)...).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want+1 || lastRoute() != "accelerated" {
				t.Fatalf("the planted answer: %d (%s), want %d accelerated", got, lastRoute(), want+1)
			}
			waitVerified("differed", before+1)
			if err := c.QueryRow(ctx, tc.sql, append([]any{tc.mode}, tc.args...)...).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if r := lastRoute(); got != want || !strings.Contains(r, "verify_differed") {
				t.Fatalf("after the difference: %d (%s), want %d from the origin (verify_differed)", got, r, want)
			}
		})
	}

	// The dataset's status shows it.
	resp, err := http.Get("http://" + a.AdminAddr() + "/v1/datasets?status=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var status []struct {
		Name   string `json:"name"`
		Verify *struct {
			Equal, Differed, Skipped uint64
			Fingerprint              string `json:"last_difference_fingerprint"`
		} `json:"verify"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&status); err != nil {
		t.Fatal(err)
	}
	if len(status) != 1 || status[0].Verify == nil || status[0].Verify.Differed != 2 || status[0].Verify.Fingerprint == "" {
		t.Fatalf("status: %+v", status)
	}

	// A change at the origin since the load: answers are stale by design,
	// and not compared; nothing is demoted.
	mustExec(t, "INSERT INTO verify_items VALUES (101, 1, 'late')")
	time.Sleep(1500 * time.Millisecond) // the origin flushes its counters
	skipped := verified()["skipped"]
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM verify_items WHERE id > 0", pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil || n != 100 {
		t.Fatalf("stale count: %d %v (%s)", n, err, lastRoute())
	}
	waitVerified("skipped", skipped+1)
	if got := verified()["differed"]; got != 2 {
		t.Fatalf("differed %v after a stale answer, want 2", got)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM verify_items WHERE id > 0", pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil || lastRoute() != "accelerated" {
		t.Fatalf("the stale shape: %v %s, want still accelerated", err, lastRoute())
	}
}
