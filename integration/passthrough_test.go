package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestPassThrough_SimpleProtocol(t *testing.T) {
	mustExec(t, "DROP TABLE IF EXISTS pt_items; CREATE TABLE pt_items (id int primary key, v text); GRANT ALL ON pt_items TO app")
	p := startProxy(t, nil)
	differential(t, p, appUser, appPass, func(t *testing.T, c *pgx.Conn, tr *transcript) {
		ctx := ctxT(t)
		for _, sql := range []string{
			"SELECT 1 AS one, 'two'::text AS two, NULL::int AS three",
			"SELECT g, g * 1.5 AS f, now() IS NOT NULL AS t FROM generate_series(1, 50) g",
			"SELECT 1; SELECT 2; SELECT 'x' || 'y'",
			"",
			";",
			"SELECT 1/0",
			"SELEC broken syntax",
			"CREATE TEMP TABLE tt (id int primary key, v text)",
			"INSERT INTO pt_items VALUES (1, 'a'), (2, 'b') RETURNING *",
			"INSERT INTO pt_items VALUES (1, 'dup')",
			"UPDATE pt_items SET v = v || '!' WHERE id = 2",
			"SELECT * FROM pt_items ORDER BY id",
			"DELETE FROM pt_items",
			"SET TimeZone = 'America/New_York'",
			"SHOW TimeZone",
			"SELECT '2024-01-02 03:04:05+00'::timestamptz",
			"RESET TimeZone",
			"DO $$ BEGIN RAISE NOTICE 'hello %', 42; END $$",
			"SELECT repeat('x', 200000) AS big",
		} {
			simple(ctx, c, tr, sql)
		}
		tr.printf("TimeZone=%s", c.PgConn().ParameterStatus("TimeZone"))
	})
}

func TestPassThrough_ExtendedProtocol(t *testing.T) {
	p := startProxy(t, nil)
	differential(t, p, appUser, appPass, func(t *testing.T, c *pgx.Conn, tr *transcript) {
		ctx := ctxT(t)
		extended(ctx, c, tr, "SELECT $1::int + 1 AS n, $2::text AS s", [][]byte{[]byte("41"), []byte("hi")}, nil)
		extended(ctx, c, tr, "SELECT $1::int8 AS n", [][]byte{{0, 0, 0, 0, 0, 0, 0, 7}}, []int16{1})
		extended(ctx, c, tr, "SELECT g FROM generate_series(1, $1::int) g", [][]byte{[]byte("1000")}, []int16{1})
		extended(ctx, c, tr, "SELECT 1/$1::int", [][]byte{[]byte("0")}, nil)
		extended(ctx, c, tr, "SELECT 'after error'", nil, nil)

		// Named prepared statements, executed several times.
		sd, err := c.PgConn().Prepare(ctx, "stmt_a", "SELECT $1::text || '-' || $2::int AS joined", nil)
		if err != nil {
			tr.err(err)
		} else {
			tr.printf("prepared params=%v fields=%d", sd.ParamOIDs, len(sd.Fields))
			for i := range 3 {
				r := c.PgConn().ExecPrepared(ctx, "stmt_a", [][]byte{[]byte("k"), []byte(fmt.Sprint(i))}, nil, nil).Read()
				tr.result("exec prepared", r)
			}
		}
		if err := c.PgConn().Deallocate(ctx, "stmt_a"); err != nil {
			tr.err(err)
		}
		r := c.PgConn().ExecPrepared(ctx, "stmt_a", [][]byte{[]byte("k"), []byte("1")}, nil, nil).Read()
		tr.result("exec deallocated", r)

		// pgx's own statement cache path (describe + bind binary).
		var n int
		var s string
		if err := c.QueryRow(ctx, "SELECT $1::int * 2, upper($2)", 21, "abc").Scan(&n, &s); err != nil {
			tr.err(err)
		}
		tr.printf("queryrow %d %s", n, s)
	})
}

func TestPassThrough_TransactionRollback(t *testing.T) {
	mustExec(t, "DROP TABLE IF EXISTS tx_items; CREATE TABLE tx_items (id int primary key, v text); GRANT ALL ON tx_items TO app")
	p := startProxy(t, nil)
	differential(t, p, appUser, appPass, func(t *testing.T, c *pgx.Conn, tr *transcript) {
		ctx := ctxT(t)
		simple(ctx, c, tr, "BEGIN")
		simple(ctx, c, tr, "INSERT INTO tx_items VALUES (1, 'one')")
		simple(ctx, c, tr, "SELECT count(*) FROM tx_items")
		simple(ctx, c, tr, "SELECT 1/0")
		simple(ctx, c, tr, "SELECT 1")
		simple(ctx, c, tr, "ROLLBACK")
		simple(ctx, c, tr, "SELECT count(*) FROM tx_items")

		tx, err := c.Begin(ctx)
		if err != nil {
			tr.err(err)
			return
		}
		if _, err := tx.Exec(ctx, "INSERT INTO tx_items VALUES ($1, $2)", 2, "two"); err != nil {
			tr.err(err)
		}
		tr.printf("in tx status %c", c.PgConn().TxStatus())
		if err := tx.Rollback(ctx); err != nil {
			tr.err(err)
		}
		simple(ctx, c, tr, "SELECT count(*) FROM tx_items")
	})
}

func TestPassThrough_Copy(t *testing.T) {
	mustExec(t, "DROP TABLE IF EXISTS copy_items; CREATE TABLE copy_items (id int, v text, b bytea); GRANT ALL ON copy_items TO app")
	p := startProxy(t, nil)
	differential(t, p, appUser, appPass, func(t *testing.T, c *pgx.Conn, tr *transcript) {
		ctx := ctxT(t)
		simple(ctx, c, tr, "TRUNCATE copy_items")
		// COPY FROM with text data, large enough to span many messages.
		var in bytes.Buffer
		for i := range 20000 {
			fmt.Fprintf(&in, "%d\trow %d\t\\\\x%02x\n", i, i, i%256)
		}
		tag, err := c.PgConn().CopyFrom(ctx, &in, "COPY copy_items FROM STDIN")
		if err != nil {
			tr.err(err)
		}
		tr.printf("copy from: %s", tag)
		// pgx's binary CopyFrom.
		n, err := c.CopyFrom(ctx, pgx.Identifier{"copy_items"}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{-1, "minus one"}, {-2, nil}}))
		tr.printf("copyfrom rows %d err %v", n, err)
		// A COPY FROM that fails in the middle.
		_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("1\tok\t\\\\x00\nnot-a-number\tbad\t\\\\x00\n"), "COPY copy_items FROM STDIN")
		if err != nil {
			tr.err(err)
		}
		var out bytes.Buffer
		tag, err = c.PgConn().CopyTo(ctx, &out, "COPY (SELECT * FROM copy_items ORDER BY id) TO STDOUT")
		if err != nil {
			tr.err(err)
		}
		tr.printf("copy to: %s, %d bytes, sum %x", tag, out.Len(), sumBytes(out.Bytes()))
		out.Reset()
		tag, err = c.PgConn().CopyTo(ctx, &out, "COPY copy_items TO STDOUT (FORMAT binary)")
		if err != nil {
			tr.err(err)
		}
		tr.printf("copy to binary: %s, %d bytes", tag, out.Len())
	})
}

func sumBytes(b []byte) uint64 {
	var h uint64 = 1469598103934665603
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

func TestPassThrough_ListenNotify(t *testing.T) {
	p := startProxy(t, nil)
	ctx := ctxT(t)
	listener := connect(t, p.DSN(appUser, appPass))
	notifier := connect(t, p.DSN(appUser, appPass))
	if _, err := listener.Exec(ctx, "LISTEN pgaccel_events"); err != nil {
		t.Fatal(err)
	}
	if _, err := notifier.Exec(ctx, "SELECT pg_notify('pgaccel_events', 'payload-1')"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := listener.WaitForNotification(wctx)
	if err != nil {
		t.Fatalf("wait for notification: %v", err)
	}
	if n.Channel != "pgaccel_events" || n.Payload != "payload-1" {
		t.Fatalf("notification = %+v", n)
	}
	if n.PID != listener.PgConn().PID() && n.PID == notifier.PgConn().PID() {
		// The PID in a notification is the origin backend's; the proxy
		// does not rewrite payloads of relayed messages.
		t.Logf("notification pid %d is the origin backend's", n.PID)
	}
}

func TestPassThrough_CancelPgSleep(t *testing.T) {
	p := startProxy(t, nil)
	ctx := ctxT(t)
	c := connect(t, p.DSN(appUser, appPass))
	errc := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := c.Exec(ctx, "SELECT pg_sleep(30)")
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if err := c.PgConn().CancelRequest(ctx); err != nil {
		t.Fatalf("cancel request: %v", err)
	}
	select {
	case err := <-errc:
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57014" {
			t.Fatalf("want query_canceled (57014), got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("query was not cancelled")
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("cancel took too long")
	}
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("session unusable after cancel: %v", err)
	}
}

func TestPassThrough_PipelineErrorRecovery(t *testing.T) {
	p := startProxy(t, nil)
	differential(t, p, appUser, appPass, func(t *testing.T, c *pgx.Conn, tr *transcript) {
		ctx := ctxT(t)
		pl := c.PgConn().StartPipeline(ctx)
		pl.SendQueryParams("SELECT 1 AS a", nil, nil, nil, nil)
		pl.SendQueryParams("SELECT 1/0 AS b", nil, nil, nil, nil)
		pl.SendQueryParams("SELECT 3 AS c", nil, nil, nil, nil)
		if err := pl.Sync(); err != nil {
			tr.err(err)
		}
		pl.SendPrepare("pipe_stmt", "SELECT $1::int * 10 AS d", nil)
		pl.SendQueryPrepared("pipe_stmt", [][]byte{[]byte("4")}, nil, nil)
		pl.SendQueryParams("SELECT 5 AS e", nil, nil, nil, nil)
		if err := pl.Sync(); err != nil {
			tr.err(err)
		}
		for i := 0; i < 12; i++ {
			res, err := pl.GetResults()
			if err != nil {
				tr.err(err)
				continue
			}
			switch r := res.(type) {
			case nil:
				tr.printf("nil result")
			case *pgconn.ResultReader:
				tr.result("pipeline", r.Read())
			case *pgconn.StatementDescription:
				tr.printf("statement %s params %v", r.Name, r.ParamOIDs)
			case *pgconn.PipelineSync:
				tr.printf("sync")
			default:
				tr.printf("result %T", r)
			}
		}
		if err := pl.Close(); err != nil {
			tr.err(err)
		}
		simple(ctx, c, tr, "SELECT 'after pipeline'")
	})
}

func TestPassThrough_ParameterStatusAfterSet(t *testing.T) {
	p := startProxy(t, nil)
	ctx := ctxT(t)
	c := connect(t, p.DSN(appUser, appPass))
	d := connect(t, origin.DSN(appUser, appPass))
	for _, name := range []string{"server_version", "TimeZone", "DateStyle", "IntervalStyle", "client_encoding", "integer_datetimes", "standard_conforming_strings"} {
		if got, want := c.PgConn().ParameterStatus(name), d.PgConn().ParameterStatus(name); got != want {
			t.Errorf("startup ParameterStatus %s = %q through the proxy, %q directly", name, got, want)
		}
	}
	for _, set := range []string{"SET TimeZone = 'Asia/Tokyo'", "SET DateStyle = 'SQL, DMY'", "SET IntervalStyle = 'iso_8601'", "SET application_name = 'pgaccel-test'"} {
		if _, err := c.Exec(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"TimeZone": "Asia/Tokyo", "DateStyle": "SQL, DMY", "IntervalStyle": "iso_8601", "application_name": "pgaccel-test"} {
		if got := c.PgConn().ParameterStatus(name); got != want {
			t.Errorf("after SET, ParameterStatus %s = %q, want %q", name, got, want)
		}
	}
}

func TestPassThrough_TransactionStatus(t *testing.T) {
	p := startProxy(t, nil)
	ctx := ctxT(t)
	c := connect(t, p.DSN(appUser, appPass))
	steps := []struct {
		sql  string
		want byte
	}{
		{"SELECT 1", 'I'},
		{"BEGIN", 'T'},
		{"SELECT 1", 'T'},
		{"SELECT 1/0", 'E'},
		{"SELECT 1", 'E'},
		{"ROLLBACK", 'I'},
	}
	for _, s := range steps {
		_, _ = c.PgConn().Exec(ctx, s.sql).ReadAll()
		if got := c.PgConn().TxStatus(); got != s.want {
			t.Fatalf("after %q: tx status %c, want %c", s.sql, got, s.want)
		}
	}
}

func TestPassThrough_ConcurrentClients(t *testing.T) {
	mustExec(t, "DROP TABLE IF EXISTS conc_items; CREATE TABLE conc_items (id int primary key, client int, v text); GRANT ALL ON conc_items TO app")
	p := startProxy(t, nil)
	const clients, rounds = 200, 10
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := pgx.Connect(ctx, p.DSN(appUser, appPass))
			if err != nil {
				errs <- fmt.Errorf("client %d connect: %w", i, err)
				return
			}
			defer c.Close(ctx)
			for r := range rounds {
				id := i*rounds + r
				if _, err := c.Exec(ctx, "INSERT INTO conc_items VALUES ($1, $2, $3)", id, i, "v"); err != nil {
					errs <- fmt.Errorf("client %d insert: %w", i, err)
					return
				}
				var n int
				if err := c.QueryRow(ctx, "SELECT count(*) FROM conc_items WHERE client = $1", i).Scan(&n); err != nil || n != r+1 {
					errs <- fmt.Errorf("client %d count = %d: %v", i, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var total int
	d := connect(t, origin.DSN(appUser, appPass))
	if err := d.QueryRow(ctx, "SELECT count(*) FROM conc_items").Scan(&total); err != nil || total != clients*rounds {
		t.Fatalf("total rows %d, want %d (%v)", total, clients*rounds, err)
	}
}
