package refresh

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/catalog"
)

func TestRefresh_OriginGoneMidCopyKeepsServing(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS gone_t;
		CREATE TABLE gone_t (id bigint, s text, d date);
		INSERT INTO gone_t SELECT g, md5(g::text), date '2000-01-01' + (g % 1000)::int FROM generate_series(1, 1000000) g;`)
	cfg := parseConfig(t, "", t.TempDir(), dataset("gone_t", "memory", ""))
	h := newHarness(t, cfg)
	ctx := context.Background()
	if err := h.run.Refresh(ctx, "gone_t"); err != nil {
		t.Fatal(err)
	}
	originExec(t, "INSERT INTO gone_t SELECT g, 'new', NULL FROM generate_series(1, 1000) g")

	// The origin goes away while the refresh's COPY is under way: the
	// table is held locked so that the COPY waits at the origin, and its
	// backend is terminated there. (Terminating a COPY that streams raced
	// its end: a million rows arrive in half a second, and a kill that
	// came after the last of them let the refresh succeed.)
	lock, err := pgconn.Connect(ctx, srv.SuperDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close(ctx)
	if _, err := lock.Exec(ctx, "BEGIN; LOCK TABLE gone_t IN ACCESS EXCLUSIVE MODE").ReadAll(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	killed := make(chan error, 1)
	go func() {
		killed <- terminateWaitingCopies(ctx, "gone_t", done)
	}()
	err = h.run.Refresh(ctx, "gone_t")
	close(done)
	if kerr := <-killed; kerr != nil {
		t.Fatal(kerr)
	}
	if _, rerr := lock.Exec(ctx, "ROLLBACK").ReadAll(); rerr != nil {
		t.Fatal(rerr)
	}
	var pgErr *pgconn.PgError
	if err == nil || !(errors.As(err, &pgErr) || strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "reset")) {
		t.Fatalf("Refresh = %v, want the origin's termination error", err)
	}
	st := h.state(t, "gone_t")
	if st.Status != catalog.StatusError || st.Error == "" || !st.Loaded || st.Rows != 1000000 || st.Generation != 1 {
		t.Errorf("state after a failed refresh = %+v", st)
	}
	if n := duckCount(t, h.eng, "gone_t"); n != 1000000 {
		t.Errorf("count = %d, want the previous 1000000", n)
	}

	// Cancelling a refresh keeps serving too.
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if err := h.run.Refresh(cctx, "gone_t"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled Refresh = %v, want context.DeadlineExceeded", err)
	}
	if n := duckCount(t, h.eng, "gone_t"); n != 1000000 {
		t.Errorf("count after cancel = %d, want 1000000", n)
	}

	// And the next refresh recovers.
	if err := h.run.Refresh(ctx, "gone_t"); err != nil {
		t.Fatal(err)
	}
	if st := h.state(t, "gone_t"); st.Status != catalog.StatusReady || st.Error != "" || st.Rows != 1001000 || st.Generation != 2 {
		t.Errorf("state after recovery = %+v", st)
	}
}

func TestRefresh_OriginDownReportsErrorWithoutPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	const password = "s3cret-Passw0rd"
	cfg := parseConfig(t, "postgres://app:"+password+"@"+addr+"/db?sslmode=disable&connect_timeout=5", t.TempDir(),
		dataset("down_t", "memory", "refresh_retry_enabled: false"))
	h := newHarness(t, cfg)
	h.run.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = h.run.WaitReady(ctx, "down_t")
	if err == nil {
		t.Fatal("WaitReady succeeded with the origin down")
	}
	st := h.state(t, "down_t")
	if st.Status != catalog.StatusError || st.Error == "" || st.Loaded {
		t.Errorf("state = %+v", st)
	}
	if strings.Contains(st.Error, password) {
		t.Errorf("state error shows the password: %s", st.Error)
	}
}

func TestRunner_FileModeServesStoredDataAfterRestart(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS restart_t;
		CREATE TABLE restart_t (id int PRIMARY KEY, v text);
		INSERT INTO restart_t SELECT g, 'v' || g FROM generate_series(1, 5000) g;`)
	dir := t.TempDir()
	cfg := parseConfig(t, "", dir, dataset("restart_t", "file", ""))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	h1 := newHarness(t, cfg)
	h1.run.Start(ctx)
	if err := h1.run.WaitReady(ctx, "restart_t"); err != nil {
		t.Fatal(err)
	}
	first := h1.state(t, "restart_t")
	h1.close(t)

	// The origin changes and goes out of reach: the restarted runner serves
	// what the file holds (refresh_on_startup auto, no interval: no refresh).
	originExec(t, "INSERT INTO restart_t VALUES (0, 'new')")
	cfg2 := parseConfig(t, "postgres://nobody@127.0.0.1:1/db?sslmode=disable", dir, dataset("restart_t", "file", ""))
	h2 := newHarness(t, cfg2)
	h2.run.Start(ctx)
	if err := h2.run.WaitReady(ctx, "restart_t"); err != nil {
		t.Fatal(err)
	}
	// It serves at once; the attempt to reach the source it makes in the
	// background then fails, which makes the status Error (the spec's
	// "Serving an Existing Acceleration While the Source Is Unavailable")
	// while the stored data keeps serving. Wait for that attempt so the
	// state read below does not race it.
	st := h2.state(t, "restart_t")
	for deadline := time.Now().Add(30 * time.Second); st.Status != catalog.StatusError && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		st = h2.state(t, "restart_t")
	}
	if st.Status != catalog.StatusError || !strings.Contains(st.Error, "connect") {
		t.Errorf("status after the source failed to answer = %s %q, want error", st.Status, st.Error)
	}
	if !st.Loaded || st.Rows != 5000 || !st.LastRefresh.Equal(first.LastRefresh.Truncate(time.Microsecond)) ||
		len(st.Columns) != 2 || !st.Columns[1].Accelerated {
		t.Errorf("state after restart = %+v, first run %+v", st, first)
	}
	if n := duckCount(t, h2.eng, "restart_t"); n != 5000 {
		t.Errorf("count after restart = %d, want 5000", n)
	}
	// The key and its index come back with the file.
	if st.Columns[0].KeyPart != 1 {
		t.Errorf("id is not the key after restart: %+v", st.Columns[0])
	}
	if got := duckRows(t, h2, "SELECT table_name FROM duckdb_indexes() WHERE index_name = '_pgaccel_key'"); strings.Join(got, ",") != "restart_t" {
		t.Errorf("key indexes after restart: %v", got)
	}
}

func TestRefresh_AppliesRefreshSQLAndDataWindow(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS win_t;
		CREATE TABLE win_t (id int, kind text, at timestamptz, secret text);
		INSERT INTO win_t SELECT g, CASE WHEN g % 2 = 0 THEN 'even' ELSE 'odd' END, now() - g * interval '1 hour', 'x'
		FROM generate_series(1, 100) g;`)
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.win_t
    time_column: at
    acceleration:
      refresh_sql: "SELECT id, kind, at FROM win_t WHERE kind = 'even'"
      refresh_data_window: 1d
`)
	h := newHarness(t, cfg)
	if err := h.run.Refresh(context.Background(), "win_t"); err != nil {
		t.Fatal(err)
	}
	// Even ids from 2 to 22 are less than 24 hours old (23.x hours is not).
	st := h.state(t, "win_t")
	if st.Rows != 11 {
		t.Errorf("rows = %d, want 11", st.Rows)
	}
	var names []string
	for _, c := range st.Columns {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "id,kind,at" {
		t.Errorf("columns = %v, want refresh_sql's id,kind,at", names)
	}
	rows := duckQuery(t, h.eng, "SELECT min(id), max(id) FROM "+h.eng.TableRef("win_t"))
	if rows[0][0] != int32(2) || rows[0][1] != int32(22) {
		t.Errorf("ids %v..%v, want 2..22", rows[0][0], rows[0][1])
	}
}

func TestRunner_IntervalRefreshesAgain(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS tick_t; CREATE TABLE tick_t (id int); INSERT INTO tick_t VALUES (1);`)
	cfg := parseConfig(t, "", t.TempDir(), dataset("tick_t", "memory", "refresh_check_interval: 1s"))
	h := newHarness(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.run.Start(ctx)
	if err := h.run.WaitReady(ctx, "tick_t"); err != nil {
		t.Fatal(err)
	}
	originExec(t, "INSERT INTO tick_t VALUES (2)")
	for h.state(t, "tick_t").Rows != 2 {
		if ctx.Err() != nil {
			t.Fatalf("no second refresh: %+v", h.state(t, "tick_t"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := h.state(t, "tick_t"); st.NextRefresh.IsZero() || st.Generation < 2 {
		t.Errorf("state = %+v, want a next refresh and generation >= 2", st)
	}
}

// terminateWaitingCopies terminates, until done is closed, every backend of
// the refresh whose COPY of table waits for a lock. It fails when none
// showed up within 30 seconds.
func terminateWaitingCopies(ctx context.Context, table string, done <-chan struct{}) error {
	c, err := pgconn.Connect(ctx, srv.SuperDSN())
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	terminated := 0
	for {
		select {
		case <-done:
			if terminated == 0 {
				return errors.New("the refresh ended before its COPY was seen waiting at the origin")
			}
			return nil
		default:
		}
		if terminated == 0 && time.Now().After(deadline) {
			return errors.New("the refresh's COPY never showed up waiting in pg_stat_activity")
		}
		res := c.ExecParams(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE application_name = $1 AND query LIKE 'COPY%' || $2 || '%' AND wait_event_type = 'Lock'`,
			[][]byte{[]byte(applicationName), []byte(table)}, nil, nil, nil).Read()
		if res.Err != nil {
			return res.Err
		}
		terminated += len(res.Rows)
		time.Sleep(time.Millisecond)
	}
}
