package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/app"
)

// routeOf runs fn and reports which route served the statements it ran:
// "accelerated" when any statement was answered locally, else "origin".
func routeOf(t *testing.T, a *app.App, fn func()) string {
	t.Helper()
	before := routeCounts(t, a)
	fn()
	after := routeCounts(t, a)
	if after[acc] > before[acc] {
		return acc
	}
	if after[fbk] > before[fbk] {
		return fbk
	}
	return org
}

func TestRouting_OriginServesWhatTheAccelerationMustNot(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets+"  - from: postgres:public.acc_plain\n    acceleration:\n      enabled: false\n")
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))

	// Sanity: a plain read is accelerated.
	if r := routeOf(t, a, func() { mustQuery(t, c, "SELECT count(*) FROM acc_orders") }); r != acc {
		t.Fatalf("plain read: route %s", r)
	}
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"write", func(t *testing.T) {
			_, err := c.Exec(ctx, "UPDATE acc_plain SET v = 'plain' WHERE id = 1")
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"select for update", func(t *testing.T) {
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			var n int
			if err := tx.QueryRow(ctx, "SELECT qty FROM acc_orders WHERE id = 1 FOR UPDATE").Scan(&n); err != nil {
				t.Fatal(err)
			}
		}},
		{"disabled dataset", func(t *testing.T) { mustQuery(t, c, "SELECT * FROM acc_plain") }},
		{"catalog", func(t *testing.T) { mustQuery(t, c, "SELECT relname FROM pg_class WHERE relname = 'acc_orders'") }},
		{"information_schema", func(t *testing.T) {
			mustQuery(t, c, "SELECT column_name FROM information_schema.columns WHERE table_name = 'acc_orders'")
		}},
		{"show", func(t *testing.T) { mustQuery(t, c, "SHOW search_path") }},
		{"version", func(t *testing.T) { mustQuery(t, c, "SELECT version()") }},
		{"row level security", func(t *testing.T) {
			rows := mustQuery(t, c, "SELECT v FROM acc_rls ORDER BY id")
			if len(rows) != 1 || rows[0] != "mine" {
				t.Fatalf("RLS not applied: %v", rows)
			}
		}},
		{"cursor", func(t *testing.T) {
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "DECLARE cur CURSOR FOR SELECT id FROM acc_orders ORDER BY id"); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "FETCH 2 FROM cur"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if r := routeOf(t, a, func() { tc.run(t) }); r != org {
				t.Fatalf("route %s, want origin", r)
			}
		})
	}

	t.Run("read after write in a transaction", func(t *testing.T) {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		// A read before any write is still accelerated (pgjdbc wraps reads in transactions).
		if r := routeOf(t, a, func() { mustQueryTx(t, tx, "SELECT count(*) FROM acc_orders") }); r != acc {
			t.Fatalf("read-only transaction: route %s, want accelerated", r)
		}
		if _, err := tx.Exec(ctx, "UPDATE acc_orders SET qty = qty + 1 WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
		var got int
		r := routeOf(t, a, func() {
			if err := tx.QueryRow(ctx, "SELECT qty FROM acc_orders WHERE id = 1").Scan(&got); err != nil {
				t.Fatal(err)
			}
		})
		if r != org {
			t.Fatalf("read after write: route %s, want origin", r)
		}
		var want int
		d := connect(t, origin.DSN(appUser, appPass))
		if err := d.QueryRow(ctx, "SELECT qty + 1 FROM acc_orders WHERE id = 1").Scan(&want); err != nil || got != want {
			t.Fatalf("read after write saw %d, want %d (%v)", got, want, err)
		}
		if c.PgConn().TxStatus() != 'T' {
			t.Fatalf("tx status %c", c.PgConn().TxStatus())
		}
	})

	t.Run("no select privilege", func(t *testing.T) {
		nc := connect(t, appDSN(a, "noaccess", "noaccess-pass"))
		var err error
		r := routeOf(t, a, func() { _, err = nc.Exec(ctx, "SELECT * FROM acc_secret") })
		if r != org || pgErrCode(err) != "42501" {
			t.Fatalf("route %s, err %v: want the origin's permission error 42501", r, err)
		}
	})

	t.Run("search_path resolves to another schema", func(t *testing.T) {
		sc := connect(t, appDSN(a, appUser, appPass))
		if _, err := sc.Exec(ctx, "SET search_path = other, public"); err != nil {
			t.Fatal(err)
		}
		var note string
		r := routeOf(t, a, func() {
			if err := sc.QueryRow(ctx, "SELECT note FROM acc_orders WHERE id = 1").Scan(&note); err != nil {
				t.Fatal(err)
			}
		})
		if r != org || note != "from schema other" {
			t.Fatalf("route %s, note %q", r, note)
		}
		if _, err := sc.Exec(ctx, "RESET search_path"); err != nil {
			t.Fatal(err)
		}
		if r := routeOf(t, a, func() { mustQuery(t, sc, "SELECT count(*) FROM acc_orders") }); r != acc {
			t.Fatalf("after RESET search_path: route %s, want accelerated", r)
		}
	})

	t.Run("temporary table shadows a dataset", func(t *testing.T) {
		tc := connect(t, appDSN(a, appUser, appPass))
		if _, err := tc.Exec(ctx, "CREATE TEMP TABLE acc_orders (id int)"); err != nil {
			t.Fatal(err)
		}
		var n int
		r := routeOf(t, a, func() {
			if err := tc.QueryRow(ctx, "SELECT count(*) FROM acc_orders").Scan(&n); err != nil {
				t.Fatal(err)
			}
		})
		if r != org || n != 0 {
			t.Fatalf("route %s, count %d: want origin and the temp table's 0", r, n)
		}
	})
}

func TestRouting_DatasetNotReady(t *testing.T) {
	mustExec(t, accelSchema)
	// The table has columns n and N, which DuckDB cannot hold side by
	// side: it never loads.
	mustExec(t, `DROP TABLE IF EXISTS acc_missing; CREATE TABLE acc_missing (id int, n int, "N" int); INSERT INTO acc_missing VALUES (1, 2, 3); GRANT SELECT ON acc_missing TO app`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS acc_missing") })
	a := startAppNoWait(t, "  - from: postgres:public.acc_missing\n  - from: postgres:public.acc_customers\n")
	ctx := ctxT(t)
	if err := a.Runner.WaitReady(ctx, "acc_customers"); err != nil {
		t.Fatal(err)
	}
	c := connect(t, appDSN(a, appUser, appPass))
	var n int
	r := routeOf(t, a, func() {
		if err := c.QueryRow(ctx, "SELECT count(*) FROM acc_missing").Scan(&n); err != nil {
			t.Fatal(err)
		}
	})
	if r != org || n != 1 {
		t.Fatalf("not-ready dataset: route %s count %d", r, n)
	}
}

// startAppNoWait starts pgaccel without waiting for datasets to load.
func startAppNoWait(t *testing.T, datasets string) *app.App {
	t.Helper()
	return startAppWith(t, datasets, false)
}

// mustQuery runs sql with args and returns each row's values (fmt.Sprint).
func mustQuery(t *testing.T, c *pgx.Conn, sql string, args ...any) []string {
	t.Helper()
	rows, err := c.Query(ctxT(t), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func mustQueryTx(t *testing.T, tx pgx.Tx, sql string) {
	t.Helper()
	rows, err := tx.Query(ctxT(t), sql)
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestRefresh_StaleUntilNextRefresh(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, "  - from: postgres:public.acc_customers\n")
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))
	count := func() int {
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM acc_customers").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 200 {
		t.Fatalf("count %d", n)
	}
	mustExec(t, "INSERT INTO acc_customers SELECT g, 'new ' || g, 'DE', NULL FROM generate_series(201, 250) g")
	var n int
	if r := routeOf(t, a, func() { n = count() }); r != acc || n != 200 {
		t.Fatalf("after an origin insert: route %s count %d, want the accelerated 200", r, n)
	}
	if err := a.Runner.Refresh(ctx, "acc_customers"); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 250 {
		t.Fatalf("after refresh: count %d, want 250", n)
	}
}

func TestRefresh_ConcurrentReadsNeverSeeEmpty(t *testing.T) {
	mustExec(t, accelSchema)
	mustExec(t, "DROP TABLE IF EXISTS acc_big; CREATE TABLE acc_big AS SELECT g AS id, md5(g::text) AS v FROM generate_series(1, 300000) g; GRANT SELECT ON acc_big TO app")
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS acc_big") })
	a := startApp(t, "  - from: postgres:public.acc_big\n")
	ctx := ctxT(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads, bad atomic.Int64
	var badMu sync.Mutex
	var badSeen []int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := pgx.Connect(ctx, appDSN(a, appUser, appPass))
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close(ctx)
			for {
				select {
				case <-stop:
					return
				default:
				}
				var n int64
				if err := c.QueryRow(ctx, "SELECT count(*) FROM acc_big").Scan(&n); err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
				if n != 300000 && n != 400000 {
					bad.Add(1)
					badMu.Lock()
					badSeen = append(badSeen, n)
					badMu.Unlock()
				}
			}
		}()
	}
	mustExec(t, "INSERT INTO acc_big SELECT g, md5(g::text) FROM generate_series(300001, 400000) g")
	for range 3 {
		if err := a.Runner.Refresh(ctx, "acc_big"); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d of %d reads saw a partial table: %v", bad.Load(), reads.Load(), badSeen)
	}
	if reads.Load() < 10 {
		t.Fatalf("only %d reads ran during the refreshes", reads.Load())
	}
	t.Logf("%d reads during 3 full refreshes, none partial", reads.Load())
}

func TestAccel_CancelInterruptsDuckDB(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, "  - from: postgres:public.acc_orders\n")
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))
	errc := make(chan error, 1)
	start := time.Now()
	go func() {
		// A cross join big enough to run for minutes in DuckDB.
		_, err := c.Exec(ctx, "SELECT count(*) FROM acc_orders a, acc_orders b, acc_orders c WHERE a.qty + b.qty + c.qty = 100")
		errc <- err
	}()
	time.Sleep(500 * time.Millisecond)
	if err := c.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("query finished instead of being cancelled")
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57014" {
			t.Fatalf("want 57014 query_canceled, got %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancel did not interrupt the accelerated query")
	}
	t.Logf("cancelled after %v", time.Since(start))
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM acc_orders").Scan(&n); err != nil || n != 5000 {
		t.Fatalf("session after cancel: %d %v", n, err)
	}
}

// rawSession runs raw protocol messages on a fresh connection to dsn and
// records every reply up to the given number of ReadyForQuery messages.
// Pipelined, everything is sent at once; else, like most clients, each
// Sync or Query waits for its ReadyForQuery before what follows is sent.
func rawSession(t testing.TB, addr string, msgs []pgproto3.FrontendMessage, rfqs int, pipelined bool) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fe := pgproto3.NewFrontend(conn, conn)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "trustuser", "database": origin.Database}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			t.Fatal(e.Message)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	var batches [][]pgproto3.FrontendMessage
	var batch []pgproto3.FrontendMessage
	for _, m := range msgs {
		batch = append(batch, m)
		switch m.(type) {
		case *pgproto3.Sync, *pgproto3.Query:
			if !pipelined {
				batches, batch = append(batches, batch), nil
			}
		}
	}
	batches = append(batches, batch)
	var tr strings.Builder
	for i, batch := range batches {
		for _, m := range batch {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		want := 1
		if i == len(batches)-1 {
			want = rfqs // the rest
		}
		if len(batch) == 0 {
			continue
		}
		rfqs -= want
		tr.WriteString(readReplies(t, fe, want))
	}
	return tr.String()
}

// readReplies records the replies up to the given number of
// ReadyForQuery messages.
func readReplies(t testing.TB, fe *pgproto3.Frontend, rfqs int) string {
	t.Helper()
	var tr strings.Builder
	for rfqs > 0 {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("receive: %v\n%s", err, tr.String())
		}
		switch m := msg.(type) {
		case *pgproto3.ReadyForQuery:
			rfqs--
			fmt.Fprintf(&tr, "ReadyForQuery %c\n", m.TxStatus)
		case *pgproto3.DataRow:
			fmt.Fprintf(&tr, "DataRow %q\n", m.Values)
		case *pgproto3.ErrorResponse:
			fmt.Fprintf(&tr, "Error %s %s\n", m.Code, m.Message)
		case *pgproto3.CommandComplete:
			fmt.Fprintf(&tr, "CommandComplete %s\n", m.CommandTag)
		case *pgproto3.RowDescription:
			fmt.Fprintf(&tr, "RowDescription")
			for _, f := range m.Fields {
				fmt.Fprintf(&tr, " %s/%d/%d/%d", f.Name, f.DataTypeOID, f.TypeModifier, f.Format)
			}
			fmt.Fprintln(&tr)
		case *pgproto3.ParameterDescription:
			fmt.Fprintf(&tr, "ParameterDescription %v\n", m.ParameterOIDs)
		case *pgproto3.NoticeResponse, *pgproto3.ParameterStatus:
		default:
			fmt.Fprintf(&tr, "%T\n", msg)
		}
	}
	return tr.String()
}

func TestAccel_ExtendedProtocolPortalsAndPipelines(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	cases := []struct {
		name      string
		msgs      []pgproto3.FrontendMessage
		rfqs      int
		pipelined bool
	}{
		{"row limit and resumption", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "s1", Query: "SELECT id, amount FROM acc_orders WHERE id <= $1 ORDER BY id"},
			&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
			&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("7")}, ResultFormatCodes: []int16{0, 1}},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{MaxRows: 3},
			&pgproto3.Execute{MaxRows: 3},
			&pgproto3.Execute{MaxRows: 3},
			&pgproto3.Sync{},
		}, 1, true},
		{"exact multiple of the row limit", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "SELECT id FROM acc_orders WHERE id <= 4 ORDER BY id"},
			&pgproto3.Bind{},
			&pgproto3.Execute{MaxRows: 2},
			&pgproto3.Execute{MaxRows: 2},
			&pgproto3.Execute{MaxRows: 2},
			&pgproto3.Sync{},
		}, 1, true},
		{"mixed pipeline with an error", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "a", Query: "SELECT count(*) FROM acc_orders"},
			&pgproto3.Bind{PreparedStatement: "a"},
			&pgproto3.Execute{},
			&pgproto3.Parse{Name: "b", Query: "SELECT relname FROM pg_class WHERE relname = 'acc_orders'"},
			&pgproto3.Bind{PreparedStatement: "b"},
			&pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "a"},
			&pgproto3.Execute{},
			&pgproto3.Parse{Query: "SELECT 1/0"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "a"},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Bind{PreparedStatement: "a"},
			&pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "b"},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		}, 2, true},
		{"error in bind skips accelerated execute", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "c", Query: "SELECT id FROM acc_orders WHERE id = $1::int"},
			&pgproto3.Bind{PreparedStatement: "c", Parameters: [][]byte{[]byte("not a number")}},
			&pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "c", Parameters: [][]byte{[]byte("2")}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Bind{PreparedStatement: "c", Parameters: [][]byte{[]byte("3")}},
			&pgproto3.Execute{},
			&pgproto3.Close{ObjectType: 'S', Name: "c"},
			&pgproto3.Sync{},
		}, 2, true},
		{"an earlier failure drops the queued accelerated answer", []pgproto3.FrontendMessage{
			// Statements described first, so that their Executes are
			// answered while the Parses and Binds before them are still
			// at the origin; the failures make Postgres skip them, and
			// their answers are dropped.
			&pgproto3.Parse{Name: "f", Query: "SELECT count(*), max(amount) FROM acc_orders WHERE qty > 2"},
			&pgproto3.Describe{ObjectType: 'S', Name: "f"},
			&pgproto3.Parse{Name: "g", Query: "SELECT id FROM acc_orders WHERE id = $1::int"},
			&pgproto3.Describe{ObjectType: 'S', Name: "g"},
			&pgproto3.Sync{},
			&pgproto3.Parse{Name: "e", Query: "SELEC 1"},
			&pgproto3.Bind{PreparedStatement: "f"},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Bind{PreparedStatement: "g", Parameters: [][]byte{[]byte("not a number")}},
			&pgproto3.Bind{PreparedStatement: "f"},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Bind{PreparedStatement: "f", ResultFormatCodes: []int16{1, 0}},
			&pgproto3.Execute{},
			&pgproto3.Bind{PreparedStatement: "g", Parameters: [][]byte{[]byte("4")}, ResultFormatCodes: []int16{1}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		}, 4, true},
		{"binds of a described statement kept from the origin", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "s9", Query: "SELECT id, amount FROM acc_orders WHERE id <= $1 ORDER BY id"},
			&pgproto3.Describe{ObjectType: 'S', Name: "s9"},
			&pgproto3.Sync{},
			&pgproto3.Bind{PreparedStatement: "s9", Parameters: [][]byte{[]byte("5")}, ResultFormatCodes: []int16{0, 1}},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{MaxRows: 2},
			&pgproto3.Execute{},
			&pgproto3.Close{ObjectType: 'P'},
			&pgproto3.Sync{},
			&pgproto3.Query{String: "BEGIN"},
			&pgproto3.Bind{PreparedStatement: "s9", Parameters: [][]byte{{0, 0, 0, 3}}, ParameterFormatCodes: []int16{1}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Query{String: "COMMIT"},
			&pgproto3.Bind{PreparedStatement: "s9", Parameters: [][]byte{[]byte("x")}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Bind{PreparedStatement: "s9", Parameters: [][]byte{[]byte("3")}, ResultFormatCodes: []int16{1, 0, 1}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Bind{PreparedStatement: "s9", Parameters: [][]byte{[]byte("2")}},
			&pgproto3.Execute{},
			&pgproto3.Close{ObjectType: 'S', Name: "s9"},
			&pgproto3.Sync{},
			&pgproto3.Bind{PreparedStatement: "s9", Parameters: [][]byte{[]byte("2")}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		}, 9, false},
		{"the unnamed statement kept from the origin", []pgproto3.FrontendMessage{
			// The first Parse of the text is the origin's to describe;
			// the next ones are answered here, as far as they can be.
			&pgproto3.Parse{Query: "SELECT id, status FROM acc_orders WHERE id < $1 ORDER BY id"},
			&pgproto3.Bind{Parameters: [][]byte{[]byte("4")}},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Parse{Query: "SELECT id, status FROM acc_orders WHERE id < $1 ORDER BY id"},
			&pgproto3.Bind{Parameters: [][]byte{[]byte("3")}, ResultFormatCodes: []int16{1}},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Parse{Query: "SELECT id, status FROM acc_orders WHERE id < $1 ORDER BY id"},
			&pgproto3.Describe{ObjectType: 'S'},
			&pgproto3.Bind{Parameters: [][]byte{[]byte("x")}},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Parse{Query: "SELECT id, status FROM acc_orders WHERE id < $1 ORDER BY id"},
			&pgproto3.Bind{Parameters: [][]byte{[]byte("2")}},
			&pgproto3.Execute{},
			&pgproto3.Close{ObjectType: 'S'},
			&pgproto3.Bind{Parameters: [][]byte{[]byte("2")}},
			&pgproto3.Sync{},
			&pgproto3.Parse{Query: "SELECT count(*) FROM acc_orders"},
			&pgproto3.Describe{ObjectType: 'S'},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
			&pgproto3.Parse{Query: "SELECT count(*) FROM acc_orders"},
			&pgproto3.Describe{ObjectType: 'S'},
			&pgproto3.Sync{},
			&pgproto3.Query{String: "SELECT 1"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Sync{},
		}, 8, false},
		{"simple queries in a transaction", []pgproto3.FrontendMessage{
			&pgproto3.Query{String: "BEGIN"},
			&pgproto3.Query{String: "SELECT count(*) FROM acc_customers"},
			&pgproto3.Query{String: "SELECT 1/0"},
			&pgproto3.Query{String: "SELECT count(*) FROM acc_customers"},
			&pgproto3.Query{String: "ROLLBACK"},
			&pgproto3.Query{String: "SELECT count(*) FROM acc_customers"},
		}, 6, true},
		{"pipelined read after write", []pgproto3.FrontendMessage{
			&pgproto3.Query{String: "BEGIN"},
			&pgproto3.Query{String: "UPDATE acc_orders SET qty = 100 WHERE id = 1"},
			&pgproto3.Query{String: "SELECT qty FROM acc_orders WHERE id = 1"},
			&pgproto3.Query{String: "ROLLBACK"},
			&pgproto3.Query{String: "SELECT qty FROM acc_orders WHERE id = 1"},
		}, 5, true},
		{"extended read after write in one stretch", []pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "UPDATE acc_orders SET qty = 100 WHERE id = 2"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Parse{Query: "SELECT qty FROM acc_orders WHERE id = 2"},
			&pgproto3.Bind{},
			&pgproto3.Execute{},
			&pgproto3.Query{String: "ROLLBACK"},
			&pgproto3.Query{String: "UPDATE acc_orders SET qty = 1 + id % 9 WHERE id = 2"},
			// acc_orders was just written through pgaccel: read-your-writes
			// sends its reads to the origin until it is refreshed.
			&pgproto3.Query{String: "SELECT count(*) FROM acc_customers"},
		}, 3, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			direct := rawSession(t, origin.Addr(), tc.msgs, tc.rfqs, tc.pipelined)
			var proxied string
			r := routeOf(t, a, func() { proxied = rawSession(t, a.Addr(), tc.msgs, tc.rfqs, tc.pipelined) })
			if direct != proxied {
				t.Fatalf("differs:\n%s", lineDiff(direct, proxied))
			}
			if r != acc {
				t.Fatalf("route %s: the acceleration answered nothing", r)
			}
		})
	}
}

func TestAccel_SessionTimeZone(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	queries := []string{
		"SELECT id, created_at, day FROM acc_orders WHERE id <= 3 ORDER BY id",
		"SELECT count(*) FROM acc_orders WHERE created_at >= '2024-01-02 00:00:00'",
		"SELECT date_trunc('day', created_at) AS d, count(*) FROM acc_orders GROUP BY 1 ORDER BY 1 LIMIT 5",
		"SELECT extract(hour FROM created_at) AS h, count(*) FROM acc_orders GROUP BY 1 ORDER BY 1",
		"SELECT created_at::date AS d, count(*) FROM acc_orders GROUP BY 1 ORDER BY 1 LIMIT 3",
		"SELECT id, tstz, ts FROM acc_types ORDER BY id",
	}
	for _, tz := range []string{"UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"} {
		t.Run(tz, func(t *testing.T) {
			var accelerated float64
			before := routeCounts(t, a)
			differentialDSN(t, origin.DSN(appUser, appPass), appDSN(a, appUser, appPass), func(t *testing.T, c *pgx.Conn, tr *transcript) {
				ctx := ctxT(t)
				simple(ctx, c, tr, "SET TimeZone = '"+tz+"'")
				for _, q := range queries {
					simple(ctx, c, tr, q)
					extended(ctx, c, tr, q, nil, []int16{1})
				}
			})
			accelerated = routeCounts(t, a)[acc] - before[acc]
			if accelerated < 4 {
				t.Fatalf("only %v statements accelerated under TimeZone %s", accelerated, tz)
			}
			t.Logf("%s: %v of %d statements accelerated", tz, accelerated, 2*len(queries))
		})
	}
}

func TestAccel_OriginSchemaChangeAfterRefresh(t *testing.T) {
	mustExec(t, "DROP TABLE IF EXISTS acc_evolve; CREATE TABLE acc_evolve (id int PRIMARY KEY, v int); INSERT INTO acc_evolve VALUES (1, 10); GRANT SELECT ON acc_evolve TO app")
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS acc_evolve") })
	a := startApp(t, "  - from: postgres:public.acc_evolve\n")
	ctx := ctxT(t)
	q := "SELECT * FROM acc_evolve ORDER BY id"
	session := func(t *testing.T, c *pgx.Conn, tr *transcript) { simple(ctx, c, tr, q) }
	differentialDSN(t, origin.DSN(appUser, appPass), appDSN(a, appUser, appPass), session)
	// The table changes at the origin, behind the proxy's back, and is
	// refreshed: the cached description must not outlive the old schema.
	mustExec(t, "ALTER TABLE acc_evolve ALTER COLUMN v TYPE numeric(10, 2); ALTER TABLE acc_evolve ADD COLUMN note text DEFAULT 'n'")
	if err := a.Runner.Refresh(ctx, "acc_evolve"); err != nil {
		t.Fatal(err)
	}
	var r string
	r = routeOf(t, a, func() {
		differentialDSN(t, origin.DSN(appUser, appPass), appDSN(a, appUser, appPass), session)
	})
	if r != acc {
		t.Fatalf("after the refresh: route %s, want accelerated", r)
	}
}

// A fresh session whose first stretch of extended-protocol messages opens
// with a statement bound for the origin anyway skips the session-info round
// trip; an accelerable read later in that stretch is then answered by the
// origin (exactly), and the next stretch is accelerated again.
func TestRouting_StretchOpenedByAnOriginStatement(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))
	d := connect(t, origin.DSN(appUser, appPass))
	var want int64
	if err := d.QueryRow(ctx, "SELECT count(*) FROM acc_orders").Scan(&want); err != nil {
		t.Fatal(err)
	}
	var one, got int64
	r := routeOf(t, a, func() {
		b := &pgx.Batch{}
		b.Queue("SELECT 1")
		b.Queue("SELECT count(*) FROM acc_orders")
		br := c.SendBatch(ctx, b)
		if err := br.QueryRow().Scan(&one); err != nil {
			t.Fatal(err)
		}
		if err := br.QueryRow().Scan(&got); err != nil {
			t.Fatal(err)
		}
		if err := br.Close(); err != nil {
			t.Fatal(err)
		}
	})
	if r != org || one != 1 || got != want {
		t.Fatalf("first stretch: route %s, answers %d and %d: want origin, 1 and %d", r, one, got, want)
	}
	r = routeOf(t, a, func() {
		if err := c.QueryRow(ctx, "SELECT count(*) FROM acc_orders").Scan(&got); err != nil {
			t.Fatal(err)
		}
	})
	if r != acc || got != want {
		t.Fatalf("next stretch: route %s, count %d: want accelerated and %d", r, got, want)
	}
}

// With the default runtime.point_reads (origin), a read of one dataset by
// its primary key goes to the origin, which answers it from its index;
// everything else that reads the dataset is still accelerated.
func TestRouting_PointReadsGoToTheOrigin(t *testing.T) {
	mustExec(t, accelSchema)
	mustExec(t, `DROP TABLE IF EXISTS acc_users; CREATE TABLE acc_users (id int PRIMARY KEY, email text UNIQUE, name text);
		INSERT INTO acc_users SELECT g, 'u' || g || '@x', 'user ' || g FROM generate_series(1, 50) g; GRANT SELECT ON acc_users TO app;
		DROP TABLE IF EXISTS acc_links; CREATE TABLE acc_links (a int, b int, v text, PRIMARY KEY (a, b));
		INSERT INTO acc_links SELECT g % 10, g, 'v' || g FROM generate_series(1, 50) g; GRANT SELECT ON acc_links TO app`)
	a := startAppRuntime(t, "", "", accelDatasets+"  - from: postgres:public.acc_users\n  - from: postgres:public.acc_links\n", true)
	c := connect(t, appDSN(a, appUser, appPass))
	d := connect(t, origin.DSN(appUser, appPass))
	cases := []struct {
		sql   string
		args  []any
		route string
	}{
		{"SELECT * FROM acc_orders WHERE id = 17", nil, org},
		{"SELECT status, amount FROM acc_orders o WHERE o.id = $1 AND qty > 0", []any{17}, org},
		{"SELECT count(*) FROM acc_orders WHERE 17 = id", nil, org},
		{"SELECT name FROM acc_customers WHERE id = $1::int", []any{3}, org},
		{"SELECT name FROM acc_users WHERE email = $1", []any{"u7@x"}, org}, // a unique column
		{"SELECT count(*) FROM acc_users WHERE name = 'user 7'", nil, acc},
		{"SELECT v FROM acc_links WHERE b = 13 AND a = $1", []any{3}, org}, // the whole composite key
		{"SELECT count(*) FROM acc_links WHERE a = 3", nil, acc},
		{"SELECT count(*) FROM acc_orders WHERE id > 17", nil, acc},
		{"SELECT id, status FROM acc_orders WHERE id IN (3, 17, $1) ORDER BY id", []any{40}, org},
		{"SELECT count(*) FROM acc_orders WHERE id = 17 OR id = 18", nil, acc},
		{"SELECT count(*) FROM acc_orders WHERE customer_id = 17", nil, acc},
		{"SELECT o.amount, c.name FROM acc_orders o JOIN acc_customers c ON c.id = o.customer_id WHERE o.id = 17", nil, acc},
	}
	for _, tc := range cases {
		want := mustQuery(t, d, tc.sql, tc.args...)
		var got []string
		r := routeOf(t, a, func() { got = mustQuery(t, c, tc.sql, tc.args...) })
		if r != tc.route || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: route %s, rows %q; want route %s, rows %q", tc.sql, r, got, tc.route, want)
		}
	}
	// The point read is as fresh as the origin; the acceleration is not.
	mustExec(t, "UPDATE acc_orders SET status = 'changed' WHERE id = 17")
	t.Cleanup(func() { mustExec(t, accelSchema) })
	if got := mustQuery(t, c, "SELECT status FROM acc_orders WHERE id = 17"); len(got) != 1 || got[0] != "changed" {
		t.Errorf("point read after an origin update = %q, want the origin's new value", got)
	}
	if got := mustQuery(t, c, "SELECT count(*) FROM acc_orders WHERE status = 'changed'"); len(got) != 1 || got[0] != "0" {
		t.Errorf("accelerated count after an origin update = %q, want 0 until the next refresh", got)
	}
}

// A new statement text is described by the origin while DuckDB runs it.
// When both refuse it, the origin's error reaches the client and the
// statement is not remembered as one DuckDB cannot run.
func TestAccel_OriginDescribesWhileDuckDBRuns(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	ctx := ctxT(t)
	c := connectSimple(t, appDSN(a, appUser, appPass))
	var err error
	r := routeOf(t, a, func() { _, err = c.Exec(ctx, "SELECT nosuchcol FROM acc_orders") })
	if r != org || pgErrCode(err) != "42703" {
		t.Fatalf("route %s, err %v: want the origin's 42703", r, err)
	}
	// A valid text of the same table is accelerated, with the origin's
	// description (an uncached text each time).
	for _, sql := range []string{"SELECT count(*) AS n FROM acc_orders WHERE qty > 3", "SELECT max(amount) FROM acc_orders WHERE qty > 4"} {
		d := connect(t, origin.DSN(appUser, appPass))
		want := mustQuery(t, d, sql)
		var got []string
		if r := routeOf(t, a, func() { got = mustQuery(t, c, sql) }); r != acc || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: route %s, rows %v; want accelerated, %v", sql, r, got, want)
		}
	}
}

// originRequests reads pgaccel_origin_requests_total by kind.
func originRequests(t *testing.T, a *app.App) map[string]float64 {
	return metricSums(t, a.Metrics, "pgaccel_origin_requests_total", "kind")
}

// A client that describes a statement once and then only binds and
// executes it (pgx's statement cache; pgjdbc does the same) gets each
// execution accelerated without the proxy asking the origin to describe
// the portal: the statement's description and the Bind's result formats
// say what the origin would.
func TestAccel_PreparedStatementNeedsNoDescribePerExecution(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	c := connect(t, appDSN(a, appUser, appPass)) // pgx's default: QueryExecModeCacheStatement
	d := connect(t, origin.DSN(appUser, appPass))
	// pgx asks for binary results of int8 and numeric columns and text of
	// the text column: the portal's formats differ column by column.
	const sql = "SELECT count(*) AS n, sum(amount) AS total, min(status) AS first FROM acc_orders WHERE qty > $1"
	mustQuery(t, c, sql, 0) // prepares (Parse, Describe statement) and runs it
	before := originRequests(t, a)
	for _, qty := range []int{1, 2, 3, 4, 5} {
		want := mustQuery(t, d, sql, qty)
		var got []string
		if r := routeOf(t, a, func() { got = mustQuery(t, c, sql, qty) }); r != acc || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("qty > %d: route %s, rows %v; want accelerated, %v", qty, r, got, want)
		}
	}
	after := originRequests(t, a)
	for _, kind := range []string{"describe_portal", "describe_statement", "describe"} {
		if n := after[kind] - before[kind]; n != 0 {
			t.Errorf("%d origin %s requests for 5 executions of a described statement, want 0", int(n), kind)
		}
	}
}

// A client that prepares the unnamed statement with no parameter types
// for every execution (libpq's PQexecParams, node-postgres) has the origin
// infer them once per statement text, not once per execution.
func TestAccel_UntypedParametersDescribedOncePerText(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))
	d := connect(t, origin.DSN(appUser, appPass))
	const sql = "SELECT count(*), sum(amount) FROM acc_orders WHERE qty > $1 AND status <> $2"
	run := func(c *pgx.Conn, qty string) string {
		res := c.PgConn().ExecParams(ctx, sql, [][]byte{[]byte(qty), []byte("x")}, nil, nil, []int16{1, 0}).Read()
		if res.Err != nil {
			t.Fatalf("qty > %s: %v", qty, res.Err)
		}
		return fmt.Sprint(res.Rows)
	}
	before := originRequests(t, a)
	for _, qty := range []string{"1", "2", "3", "4", "5"} {
		want := run(d, qty)
		var got string
		if r := routeOf(t, a, func() { got = run(c, qty) }); r != acc || got != want {
			t.Fatalf("qty > %s: route %s, rows %s; want accelerated, %s", qty, r, got, want)
		}
	}
	if n := originRequests(t, a)["describe_statement"] - before["describe_statement"]; n != 1 {
		t.Errorf("%d origin describe_statement requests for 5 executions of one text, want 1", int(n))
	}
}

// A session whose statements were prepared and described keeps getting
// accelerated answers to them while its origin backend does not answer
// (stopped here; overloaded or stuck in production): their Bind, Execute
// and Sync need nothing from it.
func TestAccel_DescribedStatementsServedWhileTheOriginStalls(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	c := connect(t, appDSN(a, appUser, appPass)) // pgx's default: QueryExecModeCacheStatement
	const sql = "SELECT count(*), max(amount) FROM acc_orders WHERE qty > $1"
	want := map[int]string{}
	for _, qty := range []int{1, 2, 3} {
		want[qty] = strings.Join(mustQuery(t, c, sql, qty), ",") // prepares once, through the origin
	}
	var pid int
	if err := c.QueryRow(ctxT(t), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	resume := stopBackend(t, pid)
	for _, qty := range []int{3, 2, 1} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rows, err := c.Query(ctx, sql, qty)
		var got []string
		if err == nil {
			for rows.Next() {
				vals, _ := rows.Values()
				got = append(got, fmt.Sprint(vals...))
			}
			err = rows.Err()
		}
		cancel()
		if err != nil || strings.Join(got, ",") != want[qty] {
			t.Fatalf("qty > %d with the origin backend stopped: %v, %q; want %q", qty, err, got, want[qty])
		}
	}
	resume()
	// And the session goes on at the origin as before.
	if got := mustQuery(t, c, "SELECT relname FROM pg_class WHERE relname = 'acc_orders'"); len(got) == 0 {
		t.Fatalf("catalog query after the stall: %q", got)
	}
}

// libpq's prepared statements (PQprepare, then PQexecPrepared: Bind,
// Describe portal, Execute, Sync) are never described as statements: the
// parameter types the origin inferred and the rows its Describe of a
// portal gave are kept, and from the second execution on the origin
// backend is not needed.
func TestAccel_UndescribedPreparedStatementServedWhileTheOriginStalls(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	conn, err := net.Dial("tcp", a.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fe := pgproto3.NewFrontend(conn, conn)
	roundTrip := func(msgs ...pgproto3.FrontendMessage) string {
		t.Helper()
		for _, m := range msgs {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		var tr strings.Builder
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatalf("receive: %v after %q", err, tr.String())
			}
			switch m := msg.(type) {
			case *pgproto3.DataRow:
				fmt.Fprintf(&tr, "%q ", m.Values)
			case *pgproto3.ErrorResponse:
				t.Fatalf("%s %s", m.Code, m.Message)
			case *pgproto3.ReadyForQuery:
				return tr.String()
			}
		}
	}
	roundTrip(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "trustuser", "database": origin.Database}})
	roundTrip(&pgproto3.Parse{Name: "q", Query: "SELECT count(*), max(amount) FROM acc_orders WHERE qty > $1"}, &pgproto3.Sync{})
	exec := func(qty string) string {
		return roundTrip(&pgproto3.Bind{PreparedStatement: "q", Parameters: [][]byte{[]byte(qty)}},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
	}
	want := map[string]string{}
	for _, qty := range []string{"1", "2"} {
		want[qty] = exec(qty)
	}
	pid, _ := strconv.Atoi(strings.Trim(roundTrip(&pgproto3.Query{String: "SELECT pg_backend_pid()"}), `[]" `))
	stopBackend(t, pid)
	for _, qty := range []string{"2", "1"} {
		if got := exec(qty); got != want[qty] {
			t.Fatalf("qty > %s with the origin backend stopped: %s, want %s", qty, got, want[qty])
		}
	}
}

// stopBackend stops the origin backend process pid (SIGSTOP) until the
// returned function or the test's end resumes it.
func stopBackend(t *testing.T, pid int) (resume func()) {
	t.Helper()
	backend, err := os.FindProcess(pid)
	if err != nil || pid == 0 {
		t.Fatalf("origin backend %d: %v", pid, err)
	}
	if err := backend.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("stop the origin backend %d: %v", pid, err)
	}
	var once sync.Once
	resume = func() { once.Do(func() { _ = backend.Signal(syscall.SIGCONT) }) }
	t.Cleanup(resume)
	return resume
}

// A session in another database of the origin server than origin.dsn's
// reads that database's tables, even where a dataset's table has the same
// name: it is relayed without acceleration.
func TestRouting_OtherDatabaseIsNotAccelerated(t *testing.T) {
	mustExec(t, accelSchema)
	mustExec(t, "DROP DATABASE IF EXISTS acc_otherdb")
	mustExec(t, "CREATE DATABASE acc_otherdb OWNER app")
	t.Cleanup(func() { mustExec(t, "DROP DATABASE IF EXISTS acc_otherdb WITH (FORCE)") })
	other := connect(t, strings.Replace(origin.DSN(appUser, appPass), "/"+origin.Database+"?", "/acc_otherdb?", 1))
	if _, err := other.Exec(ctxT(t), "CREATE TABLE acc_orders (id bigint PRIMARY KEY, status text); INSERT INTO acc_orders VALUES (1, 'other')"); err != nil {
		t.Fatal(err)
	}
	other.Close(ctxT(t))
	a := startApp(t, accelDatasets)
	c := connect(t, strings.Replace(appDSN(a, appUser, appPass), "/"+origin.Database+"?", "/acc_otherdb?", 1))
	var got []string
	r := routeOf(t, a, func() { got = mustQuery(t, c, "SELECT count(*), min(status) FROM acc_orders") })
	if r != org || strings.Join(got, ",") != "1other" {
		t.Fatalf("route %s, rows %q: want the other database's own table, not the dataset", r, got)
	}
}
