package planner

import (
	"context"
	"testing"
)

func TestQuickOrigin_OnlyReadsThatNameNoDataset(t *testing.T) {
	p := New(testRegistry(t), newFakeResolver(), Options{})
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{"SELECT abalance FROM pgbench_accounts WHERE aid = 42;", true},
		{"select 1", true},
		{"  /* c */ SELECT 'orders' FROM t -- orders\n", true}, // names in strings and comments do not count
		{"SELECT $$orders$$, E'it''s \\' orders', x FROM t", true},
		{"SELECT * FROM orders", false},
		{"SELECT * FROM ORDERS", false},
		{`SELECT * FROM "orders"`, false},
		{"SELECT * FROM public.orders WHERE id = 1", false},
		{"SELECT * FROM t WHERE x IN (SELECT id FROM customers)", false},
		{"SELECT nextval('s')", false},
		{"SELECT set_config('search_path', 'x', false)", false},
		{"SELECT * FROM t FOR UPDATE", false},
		{"SELECT * INTO x FROM t", false},
		{"SELECT 1; SELECT * FROM orders", false},
		{"WITH x AS (SELECT 1) SELECT * FROM x", false},
		{"UPDATE t SET a = 1", true},                 // a write: the origin, whatever it names
		{"insert into orders values (1, 'x')", true}, // idem
		{"DELETE FROM t; SELECT 1", false},
		{"MERGE INTO t USING u ON true WHEN MATCHED THEN DELETE", false},
		{"SELECT 'unterminated", false},
		{`SELECT U&"d\0061t" FROM t`, false},
		{"(SELECT 1)", false},
		{"", false},
		// Plain transaction statements; anything more takes the full path.
		{"BEGIN", true},
		{"begin;", true},
		{"START TRANSACTION", true},
		{"BEGIN WORK", true},
		{"commit", true},
		{"END;", true},
		{"ROLLBACK TRANSACTION", true},
		{"abort", true},
		{"START", false},
		{"START WORK", false},
		{"BEGIN WORK TRANSACTION", false},
		{"BEGIN ISOLATION LEVEL SERIALIZABLE", false},
		{"BEGIN READ ONLY", false},
		{"COMMIT AND CHAIN", false},
		{"COMMIT PREPARED 'x'", false},
		{"ROLLBACK TO SAVEPOINT a", false},
		{"ROLLBACK PREPARED 'x'", false},
		{"BEGIN; SELECT 1", false},
		{`"begin"`, false},
		{"SAVEPOINT a", false},
	} {
		if _, got := p.quickDecision(tc.sql); got != tc.want {
			t.Errorf("quickDecision(%q) = %v, want %v", tc.sql, got, tc.want)
		}
	}
	// The fast path decides a transaction statement as the full path does.
	full := New(testRegistry(t), newFakeResolver(), Options{NoFastPath: true})
	for _, sql := range []string{"BEGIN", "start transaction;", "COMMIT WORK", "END", "ROLLBACK", "ABORT TRANSACTION"} {
		q, ok := p.quickDecision(sql)
		f := full.Plan(context.Background(), sql, defaultSession())
		if !ok || q.Route != f.Route || q.Reason != f.Reason || q.Detail != f.Detail || q.Kind != f.Kind || q.Writes() != f.Writes() ||
			q.SetsSearchPath != f.SetsSearchPath || len(q.Datasets) != 0 || len(f.Datasets) != 0 {
			t.Errorf("%q: fast path %+v (%v), full plan %+v", sql, q, ok, f)
		}
	}
	d := p.Plan(context.Background(), "SELECT abalance FROM pgbench_accounts WHERE aid = 42", defaultSession())
	if d.Route != RouteOrigin || d.Reason != ReasonNoDataset || d.Kind != KindSelect || d.Writes() {
		t.Errorf("fast decision = %+v", d)
	}
	if p.cache.len() != 0 {
		t.Error("the fast path parsed and cached the statement")
	}
	d = p.Plan(context.Background(), "UPDATE pgbench_accounts SET abalance = abalance + 7 WHERE aid = 42", defaultSession())
	if d.Route != RouteOrigin || d.Reason != ReasonWrite || d.Kind != KindUpdate || !d.Writes() {
		t.Errorf("fast write decision = %+v", d)
	}
}

func TestQuickTxWrote_AnyPlainReadGoesToTheOrigin(t *testing.T) {
	p := New(testRegistry(t), newFakeResolver(), Options{})
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{"SELECT * FROM orders WHERE id = 1", true},
		{"SELECT abalance FROM pgbench_accounts WHERE aid = 42;", true},
		{"UPDATE orders SET a = 1", true},
		{"SELECT nextval('s') FROM orders", false},
		{"SELECT set_config('search_path', 'x', false)", false},
		{"SELECT * FROM orders FOR UPDATE", false},
		{"SELECT * INTO x FROM orders", false},
		{"SELECT 1; SELECT * FROM orders", false},
		{"COMMIT", true},
		{"COMMIT AND CHAIN", false},
	} {
		d, ok := p.QuickTxWrote(tc.sql)
		if ok != tc.want {
			t.Errorf("QuickTxWrote(%q) = %v, want %v", tc.sql, ok, tc.want)
			continue
		}
		if ok && d.Kind == KindSelect && d.Reason != ReasonTxWrote {
			t.Errorf("QuickTxWrote(%q): reason %q, want %q", tc.sql, d.Reason, ReasonTxWrote)
		}
		if ok {
			full := New(testRegistry(t), newFakeResolver(), Options{NoFastPath: true}).Plan(context.Background(), tc.sql, &Session{TxWrote: true})
			if full.Route != RouteOrigin || full.Kind != d.Kind || full.Writes() != d.Writes() {
				t.Errorf("%q: fast path %+v, full plan %+v", tc.sql, d, full)
			}
		}
	}
}

// TestQuick_StatementsThatAreNoReadNeedNoSession: Quick decides a statement
// that is no read, of a kind that goes to the origin whatever the session,
// as the full plan does, so that the proxy reads no session info for it
// (inside a transaction block that read would be a query before SET
// TRANSACTION); a text that may be a read takes the full path.
func TestQuick_StatementsThatAreNoReadNeedNoSession(t *testing.T) {
	p := New(testRegistry(t), newFakeResolver(), Options{})
	full := New(testRegistry(t), newFakeResolver(), Options{NoFastPath: true})
	for _, sql := range []string{
		"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE",
		"SET TRANSACTION SNAPSHOT '00000003-0000001B-1'",
		"set transaction read only",
		"SET search_path = x",
		"SET LOCAL statement_timeout = 5",
		"RESET ALL",
		"CREATE TABLE x (a int)",
		"ALTER TABLE orders ADD COLUMN z int",
		"COPY orders TO STDOUT",
		"LOCK TABLE orders",
		"SAVEPOINT a",
		"SET x = 1; SELECT * FROM orders",
		"DO $$ BEGIN END $$",
		"not sql at all",
	} {
		q, ok := p.Quick(sql)
		f := full.Plan(context.Background(), sql, defaultSession())
		if !ok || q.Route != RouteOrigin || q.Reason != f.Reason || q.Detail != f.Detail || q.Kind != f.Kind ||
			q.Writes() != f.Writes() || q.SetsSearchPath != f.SetsSearchPath || q.HoldCursor != f.HoldCursor {
			t.Errorf("%q: Quick %+v (%v), full plan %+v", sql, q, ok, f)
		}
	}
	for _, sql := range []string{
		"SELECT * FROM orders", "WITH x AS (SELECT 1) SELECT * FROM orders", "(SELECT * FROM orders)",
		"TABLE orders", "VALUES (1)", "EXPLAIN SELECT * FROM orders", "SHOW pgaccel.last_route",
		"DECLARE c CURSOR FOR SELECT * FROM orders", "FETCH 10 FROM c", "EXECUTE p", "PREPARE p AS SELECT 1",
		"/* x */ select 1 from orders", "BEGIN ISOLATION LEVEL SERIALIZABLE", "COMMIT AND CHAIN",
	} {
		if d, ok := p.Quick(sql); ok {
			t.Errorf("%q: Quick decided %+v; it may be a read", sql, d)
		}
	}
}
