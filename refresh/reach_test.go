package refresh

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// storedDataset loads table (created by the caller) into a file-mode
// acceleration in a new directory with the given acceleration keys, and
// returns the directory and the state after the load.
func storedDataset(t *testing.T, table, extra string) (string, catalog.DatasetState) {
	t.Helper()
	dir := t.TempDir()
	h := newHarness(t, parseConfig(t, "", dir, dataset(table, "file", extra)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h.run.Start(ctx)
	if err := h.run.WaitReady(ctx, table); err != nil {
		t.Fatal(err)
	}
	st := h.state(t, table)
	h.close(t)
	return dir, st
}

const outageWarning = "Failed to connect to the source for dataset %[1]s. Serving data from the existing acceleration for %[1]s while retrying the connection."

// TestReach_StoredAccelerationConnectsToItsSourceAtStart: a file-mode
// dataset restarted while the origin is down, whose next refresh is an
// hour away, serves its acceleration and connects to the source in the
// background: status Error with the cause after the first failed attempt,
// the spec's warning once (not at every retry), and Ready again once the
// source answers, without a refresh before it is due.
func TestReach_StoredAccelerationConnectsToItsSourceAtStart(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS reach_t; CREATE TABLE reach_t (id int); INSERT INTO reach_t VALUES (1), (2);`)
	dir, first := storedDataset(t, "reach_t", "refresh_check_interval: 1h")

	resume := srv.PauseDuring(t)
	clock := NewManualClock(time.Now())
	h := newHarness(t, parseConfig(t, "", dir, dataset("reach_t", "file", "refresh_check_interval: 1h")), Options{Clock: clock, Metrics: NewMetrics(prometheus.NewRegistry())})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h.run.Start(ctx)
	pgtest.WaitFor(t, "status Error after the first failed connection", func() bool { return h.state(t, "reach_t").Status == catalog.StatusError })
	st := h.state(t, "reach_t")
	if !st.Loaded || !st.Servable() || st.Rows != 2 || !strings.Contains(st.Error, "connect") {
		t.Errorf("state while the source is down = %+v, want the stored 2 rows served and the cause", st)
	}
	attempts := func() int {
		return len(h.logs.matching(fmt.Sprintf(outageWarning, "reach_t")))
	}
	// More attempts, after 1, 2, 3 ... seconds.
	for want := 2; want <= 4; want++ {
		if !clock.WaitTimers(1, 10*time.Second) {
			t.Fatalf("no retry after attempt %d", want-1)
		}
		clock.Advance(10 * time.Second)
		pgtest.WaitFor(t, fmt.Sprintf("attempt %d", want), func() bool { return attempts() >= want })
	}
	if n := len(h.logs.matching(`"level":"warn"`, fmt.Sprintf(outageWarning, "reach_t"))); n != 1 {
		t.Errorf("%d warnings over %d failed attempts, want 1 (then at most every 5 minutes)", n, attempts())
	}
	if n := counterValue(t, h.run.metrics.errors.WithLabelValues("reach_t", reasonConnection)); n != 0 {
		t.Errorf("connection attempts counted as %v failed refreshes", n)
	}

	if err := resume(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(retryCap)
	pgtest.WaitFor(t, "Ready once the source answers", func() bool { return h.state(t, "reach_t").Status == catalog.StatusReady })
	st = h.state(t, "reach_t")
	if st.Error != "" || st.Rows != 2 || st.Generation != first.Generation || !st.SchemaResolved {
		t.Errorf("state after reconnecting = %+v", st)
	}
	if n := len(h.logs.matching("refresh done")); n != 0 {
		t.Errorf("a refresh ran before it was due")
	}
	if want := first.LastRefresh.Truncate(time.Microsecond).Add(time.Hour); !st.NextRefresh.Equal(want) {
		t.Errorf("next_refresh = %v, want %v (the schedule from the stored refresh)", st.NextRefresh, want)
	}
	pgtest.WaitFor(t, "the reconnection log", func() bool {
		return len(h.logs.matching(`"level":"info"`, "Reconnected to the source for dataset reach_t")) == 1
	})
}

// TestReach_TheMissedRefreshRunsOnceTheSourceAnswers: when the refresh
// falls due while the source is still down, it runs (and is retried) until
// the source answers.
func TestReach_TheMissedRefreshRunsOnceTheSourceAnswers(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS missed_t; CREATE TABLE missed_t (id int); INSERT INTO missed_t VALUES (1);`)
	dir, first := storedDataset(t, "missed_t", "refresh_check_interval: 1h")
	originExec(t, "INSERT INTO missed_t VALUES (2)")

	resume := srv.PauseDuring(t)
	clock := NewManualClock(time.Now())
	h := newHarness(t, parseConfig(t, "", dir, dataset("missed_t", "file", "refresh_check_interval: 1h")), Options{Clock: clock})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h.run.Start(ctx)
	pgtest.WaitFor(t, "status Error", func() bool { return h.state(t, "missed_t").Status == catalog.StatusError })
	clock.Set(first.LastRefresh.Add(time.Hour + time.Second)) // the refresh is due
	pgtest.WaitFor(t, "the due refresh failing", func() bool {
		return len(h.logs.matching(`"dataset":"missed_t"`, "refresh dataset missed_t")) > 0
	})
	if err := resume(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(retryCap)
	pgtest.WaitFor(t, "the missed refresh", func() bool { return h.state(t, "missed_t").Rows == 2 })
	if st := h.state(t, "missed_t"); st.Status != catalog.StatusReady || st.Error != "" {
		t.Errorf("state after the missed refresh = %+v", st)
	}
}

// TestReach_RejectedCredentialsAreAnErrorAtOnce: the background connection
// of a restarted dataset whose credentials the source rejects logs the
// spec's configuration error at once, is not retried, and the stored
// acceleration keeps serving.
func TestReach_RejectedCredentialsAreAnErrorAtOnce(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS badpw_t; CREATE TABLE badpw_t (id int); INSERT INTO badpw_t VALUES (1), (2);`)
	dir, _ := storedDataset(t, "badpw_t", "refresh_check_interval: 1h")

	clock := NewManualClock(time.Now())
	h := newHarness(t, parseConfig(t, srv.DSN(srv.SuperUser, "wrong-password"), dir, dataset("badpw_t", "file", "refresh_check_interval: 1h")), Options{Clock: clock})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h.run.Start(ctx)
	configError := "Dataset 'badpw_t' cannot connect to its source because of its configuration, so it is served from its existing acceleration and will not refresh until the configuration is fixed."
	pgtest.WaitFor(t, "the configuration error", func() bool {
		return len(h.logs.matching(`"level":"error"`, configError, "password authentication failed")) == 1
	})
	st := h.state(t, "badpw_t")
	if !st.Servable() || st.Rows != 2 || st.Status != catalog.StatusError || !strings.Contains(st.Error, "password authentication failed") || strings.Contains(st.Error, "wrong-password") {
		t.Errorf("state = %+v", st)
	}
	// No retry: the only timer is the scheduled refresh's, an hour on.
	if !clock.WaitTimers(1, 10*time.Second) {
		t.Fatal("no timer for the scheduled refresh")
	}
	clock.Advance(10 * time.Minute)
	time.Sleep(200 * time.Millisecond)
	if n := len(h.logs.matching(`"dataset":"badpw_t"`, "password authentication failed")); n != 1 {
		t.Errorf("%d attempts logged, want 1 (not retried)", n)
	}
	if n := len(h.logs.matching(fmt.Sprintf(outageWarning, "badpw_t"))); n != 0 {
		t.Errorf("rejected credentials logged as an outage")
	}
}

// TestReach_OnSchemaResolvedIsReadyOnceTheSourceAnswers: a restarted
// dataset with ready_state: on_schema_resolved and stored data resolves
// its schema by connecting at start, not at its next refresh an hour
// later (until then /v1/ready answered 503).
func TestReach_OnSchemaResolvedIsReadyOnceTheSourceAnswers(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS schemares_t; CREATE TABLE schemares_t (id int); INSERT INTO schemares_t VALUES (1);`)
	ds := "  - from: postgres:public.schemares_t\n    ready_state: on_schema_resolved\n    acceleration:\n      mode: file\n      refresh_check_interval: 1h\n"
	dir := t.TempDir()
	h1 := newHarness(t, parseConfig(t, "", dir, ds))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h1.run.Start(ctx)
	if err := h1.run.WaitReady(ctx, "schemares_t"); err != nil {
		t.Fatal(err)
	}
	h1.close(t)

	clock := NewManualClock(time.Now())
	h := newHarness(t, parseConfig(t, "", dir, ds), Options{Clock: clock})
	h.run.Start(ctx)
	pgtest.WaitFor(t, "the schema resolved", func() bool { return h.state(t, "schemares_t").SchemaResolved })
	pgtest.WaitFor(t, "Ready", func() bool { return h.state(t, "schemares_t").Status == catalog.StatusReady })
	if st := h.state(t, "schemares_t"); !st.Servable() || st.Rows != 1 || st.Generation != 1 {
		t.Errorf("state = %+v, want the stored row served without a refresh", st)
	}
}
