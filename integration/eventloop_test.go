package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy"
	"github.com/prometheus/client_golang/prometheus"
)

// loopProxy is a proxy whose event-loop counters the test can read.
func loopProxy(t *testing.T, edit func(*proxy.Config)) (*testProxy, func(event string) float64) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := proxy.NewMetrics(reg)
	p := startProxy(t, func(c *proxy.Config) {
		c.Metrics = m
		if edit != nil {
			edit(c)
		}
	})
	count := func(event string) float64 {
		t.Helper()
		return metricSums(t, reg, "pgaccel_event_loop_sessions_total", "event")[event]
	}
	return p, count
}

// Pass-through sessions are relayed by the event loop, and stay there for
// ordinary statements in both protocols, transactions and errors.
func TestEventLoop_RelaysPassThroughSessions(t *testing.T) {
	p, count := loopProxy(t, nil)
	ctx := ctxT(t)
	c := connect(t, p.DSN(appUser, appPass))
	for i := range 50 {
		var n int
		if err := c.QueryRow(ctx, "SELECT $1::int + 1", i).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("extended query %d: %v, %d", i, err, n)
		}
		if _, err := c.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("simple query %d: %v", i, err)
		}
	}
	if _, err := c.Exec(ctx, "SELECT 1/0"); err == nil {
		t.Fatal("division by zero succeeded")
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE loop_t (a int)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := count("taken"); got != 1 {
		t.Fatalf("sessions taken by the event loop = %v, want 1", got)
	}
	if got := count("write_blocked") + count("busy"); got != 0 {
		t.Fatalf("sessions handed back to goroutines = %v, want 0", got)
	}

	// With loops off, nothing is taken.
	off, offCount := loopProxy(t, func(c *proxy.Config) { c.EventLoops = new(int) })
	c2 := connect(t, off.DSN(appUser, appPass))
	if _, err := c2.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if got := offCount("taken"); got != 0 {
		t.Fatalf("sessions taken with event loops off = %v, want 0", got)
	}
}

// A client that does not read while a large result arrives fills its
// socket: the loop must not wait for it (every other session would), so
// it hands the session to goroutines with the bytes it could not write,
// and the client receives the whole result, in order, when it reads.
func TestEventLoop_SlowClientHandedToGoroutines(t *testing.T) {
	p, count := loopProxy(t, nil)
	rc := dialRaw(t, p, "trustuser")
	const rows, width = 64, 256 << 10 // 16 MiB, more than the sockets hold
	rc.fe.Send(&pgproto3.Query{String: fmt.Sprintf("SELECT i, repeat(chr(65 + i %% 26), %d) FROM generate_series(1, %d) i", width, rows)})
	if err := rc.fe.Flush(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for count("write_blocked") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the session was not handed to goroutines (taken %v, busy %v)", count("taken"), count("busy"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Another session keeps being served meanwhile.
	other := connect(t, p.DSN(appUser, appPass))
	if _, err := other.Exec(ctxT(t), "SELECT 1"); err != nil {
		t.Fatalf("another session while one is blocked: %v", err)
	}

	msgs := rc.readAll(t)
	got := 0
	for _, m := range msgs {
		switch m := m.(type) {
		case *pgproto3.DataRow:
			got++
			want := fmt.Sprint(got)
			if string(m.Values[0]) != want || len(m.Values[1]) != width || m.Values[1][0] != byte('A'+got%26) || m.Values[1][width-1] != byte('A'+got%26) {
				t.Fatalf("row %d: got %q and %d bytes starting %q", got, m.Values[0], len(m.Values[1]), m.Values[1][:1])
			}
		case *pgproto3.ErrorResponse:
			t.Fatalf("error: %s", m.Message)
		}
	}
	if got != rows {
		t.Fatalf("got %d rows, want %d", got, rows)
	}
	// The session goes on, on goroutines.
	rc.fe.Send(&pgproto3.Query{String: "SELECT 42"})
	if err := rc.fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var answer string
	for _, m := range rc.readAll(t) {
		if d, ok := m.(*pgproto3.DataRow); ok {
			answer = string(d.Values[0])
		}
	}
	if answer != "42" {
		t.Fatalf("after the hand-off: got %q, want 42", answer)
	}
}

// simple runs sql in the simple protocol and returns the first column of
// its first row ("" without one); an error fails the test.
func (rc *rawClient) simple(t *testing.T, sql string) string {
	t.Helper()
	rc.fe.Send(&pgproto3.Query{String: sql})
	if err := rc.fe.Flush(); err != nil {
		t.Fatal(err)
	}
	first, seen := "", false
	for _, m := range rc.readAll(t) {
		switch m := m.(type) {
		case *pgproto3.DataRow:
			if !seen && len(m.Values) > 0 {
				first, seen = string(m.Values[0]), true
			}
		case *pgproto3.ErrorResponse:
			t.Fatalf("%s: %s", sql, m.Message)
		}
	}
	return first
}

// A session that keeps the loop busy (a client streaming a large COPY: its
// socket is never empty for the loop's budget of reads) is handed to
// goroutines and loses nothing. A large result alone may or may not be:
// the origin is usually slower than the relay, so each turn empties its
// socket.
func TestEventLoop_BusySessionHandedToGoroutines(t *testing.T) {
	p, count := loopProxy(t, nil)
	ctx := ctxT(t)
	c := connect(t, p.DSN(appUser, appPass))
	var sum, n int64
	rows, err := c.Query(ctx, "SELECT i FROM generate_series(1, 100000) i")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var i int64
		if err := rows.Scan(&i); err != nil {
			t.Fatal(err)
		}
		sum += i
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 100000 || sum != 100000*100001/2 {
		t.Fatalf("got %d rows summing to %d", n, sum)
	}
	// The COPY goes through a raw session that writes it whole in one
	// write, so its socket stays full while the loop reads: with a driver
	// writing chunk by chunk, a slow client (under -race) let the loop
	// empty the socket at every turn, and it was rightly never busy.
	rc := dialRaw(t, p, "trustuser")
	rc.simple(t, "CREATE TEMP TABLE loop_copy (i int, s text)")
	handOffs := func() float64 { return count("busy") + count("write_blocked") }
	before := handOffs()
	rc.fe.Send(&pgproto3.Query{String: "COPY loop_copy FROM STDIN"})
	if err := rc.fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := rc.fe.Receive()
		if err != nil {
			t.Fatalf("COPY: %v", err)
		}
		if _, ok := msg.(*pgproto3.CopyInResponse); ok {
			break
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			t.Fatalf("COPY: %s", e.Message)
		}
	}
	const lines = 800000
	var stream []byte
	var line strings.Builder
	for i := range lines {
		line.Reset()
		fmt.Fprintf(&line, "%d\tline %d of the COPY\n", i, i)
		stream, _ = (&pgproto3.CopyData{Data: []byte(line.String())}).Encode(stream)
	}
	stream, _ = (&pgproto3.CopyDone{}).Encode(stream)
	_ = rc.conn.SetDeadline(time.Now().Add(2 * time.Minute))
	wrote := make(chan error, 1)
	go func() {
		_, err := rc.conn.Write(stream)
		wrote <- err
	}()
	var tag string
	for _, m := range rc.readAll(t) {
		switch m := m.(type) {
		case *pgproto3.CommandComplete:
			tag = string(m.CommandTag)
		case *pgproto3.ErrorResponse:
			t.Fatalf("COPY: %s", m.Message)
		}
	}
	if err := <-wrote; err != nil {
		t.Fatalf("write the COPY: %v", err)
	}
	if want := fmt.Sprintf("COPY %d", lines); tag != want {
		t.Fatalf("COPY ended with %q, want %q", tag, want)
	}
	if got := rc.simple(t, "SELECT count(*)::text || ' ' || sum(i)::text FROM loop_copy"); got != fmt.Sprintf("%d %d", lines, int64(lines)*(lines-1)/2) {
		t.Fatalf("copied rows and their sum: %q", got)
	}
	if got := handOffs() - before; got != 1 {
		t.Fatalf("hand-offs of the COPY session = %v, want 1", got)
	}
	if got := rc.simple(t, "SELECT 7"); got != "7" {
		t.Fatalf("after the hand-off: %q", got)
	}
}

// Sessions idle in the loop hear the shutdown and close; the proxy's
// Shutdown returns without waiting for the grace period.
func TestEventLoop_ShutdownClosesIdleSessions(t *testing.T) {
	p, count := loopProxy(t, func(c *proxy.Config) { c.ShutdownGrace = 20 * time.Second })
	ctx := ctxT(t)
	var conns []*pgx.Conn
	for range 5 {
		c := connect(t, p.DSN(appUser, appPass))
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if got := count("taken"); got != 5 {
		t.Fatalf("taken = %v, want 5", got)
	}
	start := time.Now()
	if err := p.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	for i, c := range conns {
		if _, err := c.Exec(ctx, "SELECT 1"); err == nil {
			t.Fatalf("session %d still open after shutdown", i)
		}
	}
}

// Sessions with datasets run on the event loop while their statements go
// to the origin. An accelerated read (DuckDB may take long) hands the
// session to goroutines, and a run of origin statements brings it back.
// Answers match the origin's throughout: both protocols, prepared
// statements, pipelines, transactions, errors. No session panics (a call
// that may wait, made on the loop, panics: handoff.go).
func TestEventLoop_DatasetSessions(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	ctx := ctxT(t)
	events := func() map[string]float64 {
		return metricSums(t, a.Metrics, "pgaccel_event_loop_sessions_total", "event")
	}
	direct := connect(t, origin.DSN(appUser, appPass))
	c := connect(t, appDSN(a, appUser, appPass))

	originRun := func(from int) {
		t.Helper()
		for i := from; i < from+80; i++ {
			var n int
			if err := c.QueryRow(ctx, "SELECT $1::int + 1", i).Scan(&n); err != nil || n != i+1 {
				t.Fatalf("extended query %d: %v, %d", i, err, n)
			}
			var s string
			if err := c.QueryRow(ctx, "SELECT 'x' || "+fmt.Sprint(i), pgx.QueryExecModeSimpleProtocol).Scan(&s); err != nil || s != fmt.Sprintf("x%d", i) {
				t.Fatalf("simple query %d: %v, %q", i, err, s)
			}
		}
	}
	var want int64
	if err := direct.QueryRow(ctx, "SELECT count(*) FROM acc_orders").Scan(&want); err != nil {
		t.Fatal(err)
	}
	accelerated := func(mode pgx.QueryExecMode) {
		t.Helper()
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM acc_orders", mode).Scan(&n); err != nil || n != want {
			t.Fatalf("accelerated count (%v): %v, %d, want %d", mode, err, n, want)
		}
	}

	originRun(0)
	if ev := events(); ev["taken"] != 1 || ev["handed_off"] != 0 {
		t.Fatalf("after origin statements: events %v, want taken 1 and no hand-off", ev)
	}
	before := routeCounts(t, a)[acc]
	accelerated(pgx.QueryExecModeCacheStatement)
	if routeCounts(t, a)[acc] != before+1 {
		t.Fatal("the read was not accelerated")
	}
	if ev := events(); ev["handed_off"] != 1 {
		t.Fatalf("after an accelerated read: events %v, want one hand-off", ev)
	}
	originRun(100)
	if ev := events(); ev["promoted"] < 1 {
		t.Fatalf("after a run of origin statements: events %v, want the session back on the loop", ev)
	}
	accelerated(pgx.QueryExecModeSimpleProtocol)
	originRun(200)

	// Pipelined, mixed: origin statements queued behind an accelerated one
	// and the other way round, an error in the middle.
	for round := range 3 {
		b := &pgx.Batch{}
		b.Queue("SELECT $1::int * 2", round)
		b.Queue("SELECT count(*) FROM acc_orders")
		b.Queue("SELECT 1/0")
		b.Queue("SELECT $1::text || 'y'", "p")
		br := c.SendBatch(ctx, b)
		var d int
		if err := br.QueryRow().Scan(&d); err != nil || d != round*2 {
			t.Fatalf("batch %d: first: %v, %d", round, err, d)
		}
		var n int64
		if err := br.QueryRow().Scan(&n); err != nil || n != want {
			t.Fatalf("batch %d: count: %v, %d", round, err, n)
		}
		if _, err := br.Exec(); err == nil {
			t.Fatalf("batch %d: division by zero succeeded", round)
		}
		_ = br.Close()
		originRun(300 + round*100)
	}

	// A transaction that writes: its reads go to the origin.
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE loop_ds (a int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO loop_ds VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM loop_ds").Scan(&n); err != nil || n != 2 {
		t.Fatalf("in the transaction: %v, %d", err, n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT 1/0"); err == nil {
		t.Fatal("division by zero succeeded")
	}
	originRun(900)
	accelerated(pgx.QueryExecModeExec)
	originRun(1000)

	if p := metricSums(t, a.Metrics, "pgaccel_session_panics_total")[""]; p != 0 {
		t.Fatalf("%v session panics", p)
	}
	t.Logf("event loop events: %v", events())
}
