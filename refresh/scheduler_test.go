package refresh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// counterValue reads a counter.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestScheduler_CronWithJitterOnAManualClock(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS cron_t; CREATE TABLE cron_t (id int); INSERT INTO cron_t VALUES (1);`)
	cfg := parseConfig(t, "", t.TempDir(), dataset("cron_t", "memory", `refresh_cron: "*/5 * * * *"
refresh_jitter_enabled: true
refresh_jitter_max: 30s`))
	clock := NewManualClock(time.Date(2026, 11, 30, 10, 2, 0, 0, time.UTC))
	highest := func(n int64) int64 { return n - 1 }
	h := newHarness(t, cfg, Options{Clock: clock, Rand: highest})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.run.Start(ctx)

	// The initial load waits for its jitter (30 s with this random source).
	if !clock.WaitTimers(1, 10*time.Second) {
		t.Fatal("no timer for the initial load")
	}
	if p := clock.Pending(); p[0] != time.Date(2026, 11, 30, 10, 2, 30, 0, time.UTC) {
		t.Errorf("initial load at %v, want 10:02:30", p[0])
	}
	if st := h.state(t, "cron_t"); st.Loaded {
		t.Fatal("loaded before the jitter passed")
	}
	clock.Advance(30 * time.Second)
	if err := h.run.WaitReady(ctx, "cron_t"); err != nil {
		t.Fatal(err)
	}
	// next_refresh is the cron time, then the jittered start once it passes.
	at := func(h, m, s int) time.Time { return time.Date(2026, 11, 30, h, m, s, 0, time.UTC) }
	pgtest.WaitFor(t, "next_refresh 10:05", func() bool { return h.state(t, "cron_t").NextRefresh.Equal(at(10, 5, 0)) })
	originExec(t, "INSERT INTO cron_t VALUES (2)")
	clock.Set(at(10, 5, 0))
	pgtest.WaitFor(t, "next_refresh 10:05:30", func() bool { return h.state(t, "cron_t").NextRefresh.Equal(at(10, 5, 30)) })
	if st := h.state(t, "cron_t"); st.Rows != 1 {
		t.Fatalf("refreshed before the jitter: %+v", st)
	}
	clock.Set(at(10, 5, 30))
	pgtest.WaitFor(t, "the cron refresh", func() bool { return h.state(t, "cron_t").Rows == 2 })
	pgtest.WaitFor(t, "next_refresh 10:10", func() bool { return h.state(t, "cron_t").NextRefresh.Equal(at(10, 10, 0)) })
}

func TestScheduler_AutoResumesTheIntervalFromTheCheckpointAndAlwaysReloads(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS auto_t; CREATE TABLE auto_t (id int); INSERT INTO auto_t VALUES (1);`)
	dir := t.TempDir()
	clock := NewManualClock(time.Now().Truncate(time.Second))
	cfg := parseConfig(t, "", dir, dataset("auto_t", "file", "refresh_check_interval: 1h"))
	h := newHarness(t, cfg, Options{Clock: clock})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.run.Start(ctx)
	if err := h.run.WaitReady(ctx, "auto_t"); err != nil {
		t.Fatal(err)
	}
	first := h.state(t, "auto_t")
	h.close(t)
	originExec(t, "INSERT INTO auto_t VALUES (2)")

	// auto: serves the file at once, next refresh an hour after the stored
	// one; nothing is read from the origin meanwhile.
	h2 := newHarness(t, parseConfig(t, "", dir, dataset("auto_t", "file", "refresh_check_interval: 1h")), Options{Clock: clock})
	h2.run.Start(ctx)
	if err := h2.run.WaitReady(ctx, "auto_t"); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, "next_refresh", func() bool { return !h2.state(t, "auto_t").NextRefresh.IsZero() })
	st := h2.state(t, "auto_t")
	if st.Rows != 1 || st.Generation != 1 || !st.NextRefresh.Equal(first.LastRefresh.Truncate(time.Microsecond).Add(time.Hour)) {
		t.Errorf("auto restart: %+v, want 1 row and next refresh an hour after %v", st, first.LastRefresh)
	}
	if len(h2.logs.matching("refresh done")) != 0 {
		t.Error("auto restart refreshed")
	}
	// The interval elapses: it refreshes.
	clock.Set(st.NextRefresh)
	pgtest.WaitFor(t, "the due refresh", func() bool { return h2.state(t, "auto_t").Rows == 2 })
	h2.close(t)

	// always: reloads at start.
	originExec(t, "INSERT INTO auto_t VALUES (3)")
	h3 := newHarness(t, parseConfig(t, "", dir, dataset("auto_t", "file", "refresh_check_interval: 1h\nrefresh_on_startup: always")), Options{Clock: clock})
	h3.run.Start(ctx)
	pgtest.WaitFor(t, "the startup reload", func() bool { return h3.state(t, "auto_t").Rows == 3 })
	h3.close(t)

	// auto with a refresh_sql changed since the checkpoint: reloads too.
	h4 := newHarness(t, parseConfig(t, "", dir, dataset("auto_t", "file", "refresh_check_interval: 1h\nrefresh_sql: SELECT * FROM auto_t WHERE id > 1")), Options{Clock: clock})
	h4.run.Start(ctx)
	pgtest.WaitFor(t, "the reload for the new refresh_sql", func() bool { return h4.state(t, "auto_t").Rows == 2 && h4.state(t, "auto_t").Generation == 2 })
	if len(h4.logs.matching("refresh_sql changed")) != 1 {
		t.Error("no log of the refresh_sql change")
	}
}

func TestScheduler_OnDemandReplacesARefreshInProgress(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS ondemand_t;
		CREATE TABLE ondemand_t (id bigint, s text);
		INSERT INTO ondemand_t SELECT g, md5(g::text) FROM generate_series(1, 1500000) g;`)
	cfg := parseConfig(t, "", t.TempDir(), dataset("ondemand_t", "memory", ""))
	h := newHarness(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h.run.Start(ctx)
	// While the initial load's COPY runs, an on-demand refresh arrives.
	pgtest.WaitFor(t, "the initial COPY", func() bool {
		return len(originQuery(t, `SELECT 1 FROM pg_stat_activity WHERE application_name = '`+applicationName+`' AND query LIKE 'COPY%ondemand_t%'`)) > 0
	})
	if err := h.run.Refresh(ctx, "ondemand_t"); err != nil {
		t.Fatal(err)
	}
	if len(h.logs.matching("on-demand refresh replaces it")) != 1 {
		t.Errorf("the initial load was not replaced: %v", h.logs.matching("ondemand_t"))
	}
	if st := h.state(t, "ondemand_t"); st.Rows != 1500000 || st.Generation != 1 || st.Status != catalog.StatusReady {
		t.Errorf("state = %+v, want one completed load", st)
	}
	// Unknown and non-refreshable datasets are refused.
	if err := h.run.Trigger("nope"); !errors.Is(err, ErrUnknownDataset) {
		t.Errorf("Trigger(nope) = %v", err)
	}
}

func TestScheduler_RetriesTransientErrorsUntilTheOriginIsBack(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS retry_t; CREATE TABLE retry_t (id int); INSERT INTO retry_t VALUES (1), (2);`)
	cfg := parseConfig(t, "", t.TempDir(), dataset("retry_t", "memory", ""))
	reg := prometheus.NewRegistry()
	h := newHarness(t, cfg, Options{Metrics: NewMetrics(reg)})
	resume := srv.PauseDuring(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h.run.Start(ctx)
	// Two failures (retried after about 1 s, then 2 s), then the origin is
	// back.
	pgtest.WaitFor(t, "two failed attempts", func() bool {
		return counterValue(t, h.run.metrics.errors.WithLabelValues("retry_t", reasonConnection)) >= 2
	})
	if st := h.state(t, "retry_t"); st.Status != catalog.StatusError || st.Loaded {
		t.Errorf("state while down = %+v", st)
	}
	if err := resume(ctx); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, "the recovery", func() bool { return h.state(t, "retry_t").Loaded })
	if st := h.state(t, "retry_t"); st.Rows != 2 || st.Status != catalog.StatusReady {
		t.Errorf("state after recovery = %+v", st)
	}
	if len(h.logs.matching(`"level":"warn"`, "retrying", `"retry":1`)) != 1 {
		t.Error("the first failure was not a warning")
	}
	pgtest.WaitFor(t, "the recovery log", func() bool { return len(h.logs.matching("refresh recovered")) == 1 })
}

func TestScheduler_ConfigurationErrorsAreNotRetried(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS missing_t;`)
	cfg := parseConfig(t, "", t.TempDir(), dataset("missing_t", "memory", ""))
	reg := prometheus.NewRegistry()
	clock := NewManualClock(time.Now())
	h := newHarness(t, cfg, Options{Metrics: NewMetrics(reg), Clock: clock})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h.run.Start(ctx)
	if err := h.run.WaitReady(ctx, "missing_t"); err == nil {
		t.Fatal("a missing table loaded")
	}
	clock.Advance(time.Hour) // no retry timer to fire
	time.Sleep(200 * time.Millisecond)
	if n := counterValue(t, h.run.metrics.errors.WithLabelValues("missing_t", reasonSchema)); n != 1 {
		t.Errorf("errors{reason=schema} = %v, want 1 (not retried)", n)
	}
	pgtest.WaitFor(t, "one error log naming the dataset and cause", func() bool {
		return len(h.logs.matching(`"level":"error"`, `"dataset":"missing_t"`, "retrying cannot fix", "table not found")) == 1
	})
	if p := clock.Pending(); len(p) != 0 {
		t.Errorf("timers pending after a configuration error: %v", p)
	}
}

func TestScheduler_StoredAppendDatasetIsReadyAfterItsFirstAppend(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS appready_t; CREATE TABLE appready_t (id int, at timestamptz);
		INSERT INTO appready_t SELECT g, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute' FROM generate_series(1, 10) g;`)
	dir := t.TempDir()
	yaml := `  - from: postgres:public.appready_t
    time_column: at
    acceleration:
      mode: file
      refresh_mode: append
`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := newHarness(t, parseConfig(t, "", dir, yaml))
	h.run.Start(ctx)
	if err := h.run.WaitReady(ctx, "appready_t"); err != nil {
		t.Fatal(err)
	}
	h.close(t)
	originExec(t, "INSERT INTO appready_t VALUES (11, timestamptz '2026-01-02 00:00:00+00')")

	// With the origin out of reach, the stored rows are not served: the
	// dataset waits for its first append.
	h2 := newHarness(t, parseConfig(t, "postgres://nobody@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", dir, yaml))
	h2.run.Start(ctx)
	_ = h2.run.WaitReady(ctx, "appready_t")
	if st := h2.state(t, "appready_t"); st.Loaded || st.Rows != 10 || st.LastRefresh.IsZero() ||
		!strings.HasPrefix(st.Error, "Not served: waits for its source because it uses `refresh_mode: append`. Cause: ") {
		t.Errorf("stored append dataset before its first append: %+v", st)
	}
	pgtest.WaitFor(t, "the INFO line", func() bool {
		return len(h2.logs.matching(`"level":"info"`, "Dataset 'appready_t' waits for its source before serving because it uses `refresh_mode: append`.")) == 1
	})
	h2.close(t)

	// With the origin there, it is ready once the append ran.
	h3 := newHarness(t, parseConfig(t, "", dir, yaml))
	h3.run.Start(ctx)
	if err := h3.run.WaitReady(ctx, "appready_t"); err != nil {
		t.Fatal(err)
	}
	if st := h3.state(t, "appready_t"); !st.Loaded || st.Rows != 11 {
		t.Errorf("after the first append: %+v", st)
	}
}

func TestScheduler_BoundsConcurrentRefreshes(t *testing.T) {
	var yaml string
	for _, n := range []string{"conc_a", "conc_b", "conc_c"} {
		originExec(t, "DROP TABLE IF EXISTS "+n+"; CREATE TABLE "+n+" (id bigint, s text); INSERT INTO "+n+" SELECT g, md5(g::text) FROM generate_series(1, 400000) g;")
		yaml += dataset(n, "memory", "")
	}
	h := newHarness(t, parseConfig(t, "", t.TempDir(), yaml), Options{Concurrency: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h.run.Start(ctx)
	most := 0
	for {
		rows := originQuery(t, `SELECT count(*) FROM pg_stat_activity WHERE application_name = '`+applicationName+`' AND query LIKE 'COPY%conc_%' AND state = 'active'`)
		if n := int(parseInt(t, *rows[0][0])); n > most {
			most = n
		}
		done := true
		for _, n := range []string{"conc_a", "conc_b", "conc_c"} {
			done = done && h.state(t, n).Loaded
		}
		if done {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the datasets did not load")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if most > 1 {
		t.Errorf("%d refreshes ran at once with Concurrency 1", most)
	}
	if most == 0 {
		t.Log("no COPY was caught running; the bound is not observed this time")
	}
}

func parseInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestScheduler_RetryMaxAttemptsBoundsRetries(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS maxretry_t; CREATE TABLE maxretry_t (id int); INSERT INTO maxretry_t VALUES (1);`)
	cfg := parseConfig(t, "", t.TempDir(), dataset("maxretry_t", "memory", "refresh_retry_max_attempts: 2"))
	clock := NewManualClock(time.Now())
	reg := prometheus.NewRegistry()
	h := newHarness(t, cfg, Options{Clock: clock, Metrics: NewMetrics(reg)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h.run.Start(ctx)
	if err := h.run.WaitReady(ctx, "maxretry_t"); err != nil {
		t.Fatal(err)
	}
	// The source answered once; now it goes away and an on-demand refresh
	// fails: retry settings apply.
	srv.PauseDuring(t)
	if err := h.run.Trigger("maxretry_t"); err != nil {
		t.Fatal(err)
	}
	failures := func() float64 {
		return counterValue(t, h.run.metrics.errors.WithLabelValues("maxretry_t", reasonConnection))
	}
	for want := 1.0; want <= 3; want++ {
		pgtest.WaitFor(t, fmt.Sprintf("attempt %v", want), func() bool { return failures() >= want })
		if want < 3 {
			if !clock.WaitTimers(1, 10*time.Second) {
				t.Fatalf("no retry timer after attempt %v", want)
			}
			clock.Advance(10 * time.Second) // past the 1..2.5 s backoff
		}
	}
	// The first attempt and two retries; then nothing until an on-demand
	// refresh (there is no schedule).
	time.Sleep(200 * time.Millisecond)
	clock.Advance(time.Hour)
	time.Sleep(200 * time.Millisecond)
	if n := failures(); n != 3 {
		t.Errorf("attempts = %v, want 3", n)
	}
	pgtest.WaitFor(t, "the log of the exhausted retries", func() bool { return len(h.logs.matching("retries are exhausted")) == 1 })
}

func TestScheduler_UnreachableSourceIsRetriedWithoutLimitUntilItAnswers(t *testing.T) {
	// refresh_retry_enabled: false does not stop the first connection:
	// the dataset is registered once its source answers.
	originExec(t, `DROP TABLE IF EXISTS connect_t; CREATE TABLE connect_t (id int); INSERT INTO connect_t VALUES (1);`)
	cfg := parseConfig(t, "", t.TempDir(), dataset("connect_t", "memory", "refresh_retry_enabled: false"))
	clock := NewManualClock(time.Now())
	reg := prometheus.NewRegistry()
	h := newHarness(t, cfg, Options{Clock: clock, Metrics: NewMetrics(reg)})
	resume := srv.PauseDuring(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h.run.Start(ctx)
	failures := func() float64 {
		return counterValue(t, h.run.metrics.errors.WithLabelValues("connect_t", reasonConnection))
	}
	for want := 1.0; want <= 4; want++ {
		pgtest.WaitFor(t, fmt.Sprintf("attempt %v", want), func() bool { return failures() >= want })
		if !clock.WaitTimers(1, 10*time.Second) {
			t.Fatalf("no retry after attempt %v", want)
		}
		if want < 4 {
			clock.Advance(10 * time.Second) // past the backoff of the first retries
		}
	}
	if st := h.state(t, "connect_t"); st.Status != catalog.StatusError || st.Loaded {
		t.Errorf("state while the source is down: %+v", st)
	}
	if len(h.logs.matching(`"level":"warn"`, "Failed to connect to the source for dataset connect_t")) != 1 {
		t.Errorf("want one warning (then at most every 5 minutes): %v", h.logs.matching("Failed to connect"))
	}
	if err := resume(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(retryCap)
	pgtest.WaitFor(t, "the load once the source answers", func() bool { return h.state(t, "connect_t").Loaded })
}

func TestScheduler_RejectedCredentialsAreAnErrorAndServeTheStoredData(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS creds_t; CREATE TABLE creds_t (id int); INSERT INTO creds_t VALUES (1), (2);`)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := newHarness(t, parseConfig(t, "", dir, dataset("creds_t", "file", "refresh_on_startup: always")))
	h.run.Start(ctx)
	if err := h.run.WaitReady(ctx, "creds_t"); err != nil {
		t.Fatal(err)
	}
	h.close(t)

	reg := prometheus.NewRegistry()
	h2 := newHarness(t, parseConfig(t, srv.DSN(srv.SuperUser, "wrong-password"), dir, dataset("creds_t", "file", "refresh_on_startup: always")),
		Options{Metrics: NewMetrics(reg)})
	h2.run.Start(ctx)
	pgtest.WaitFor(t, "the configuration error", func() bool {
		return len(h2.logs.matching(`"level":"error"`, "Dataset 'creds_t' cannot connect to its source because of its configuration, so it is served from its existing acceleration and will not refresh until the configuration is fixed.")) == 1
	})
	st := h2.state(t, "creds_t")
	if !st.Loaded || st.Rows != 2 || st.Status != catalog.StatusError || !strings.Contains(st.Error, "password authentication failed") || strings.Contains(st.Error, "wrong-password") {
		t.Errorf("state = %+v", st)
	}
	time.Sleep(2 * time.Second) // no retry comes
	if n := counterValue(t, h2.run.metrics.errors.WithLabelValues("creds_t", reasonAuth)); n != 1 {
		t.Errorf("errors{reason=auth} = %v, want 1 (not retried)", n)
	}
}
