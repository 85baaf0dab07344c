package proxy

import (
	"io"
	"os"
	"slices"
	"time"

	"bytes"
	"fmt"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/pgaccel/pgaccel/proxy/wire"
	"github.com/prometheus/client_golang/prometheus"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/rs/zerolog"
)

// laneSession is a session with an acceleration (dataset orders) and, as
// the decoded path leaves them, the unnamed statement of a pure SELECT
// (its Parse the session's last) and a named one, s1.
func laneSession(t testing.TB) (*session, []byte) {
	ss := journalSession()
	ss.accel = &Accel{Planner: planner.New(catalog.NewRegistry(&catalog.Config{Datasets: []*catalog.Dataset{{Name: "orders", Schema: "public", Table: "orders"}}}), nil, planner.Options{})}
	ss.client.fr = wire.NewFrameReader(bytes.NewReader(nil), false)
	ss.srv, ss.log = &Server{}, zerolog.Nop()
	parse := &pgproto3.Parse{Query: "SELECT abalance FROM pgbench_accounts WHERE aid = $1"}
	raw, _ := parse.Encode(nil)
	ss.setStmt("", ss.newStmt(parse))
	ss.ext.lastParse.save(parse, raw)
	ss.setStmt("s1", ss.newStmt(&pgproto3.Parse{Name: "s1", Query: "SELECT $1::int"}))
	ss.clearJournal(0)
	if !ss.ext.stmts[""].pure() || !ss.ext.stmts["s1"].pure() {
		t.Fatal("the statements are not pure")
	}
	return ss, raw
}

func encodeAll(t testing.TB, msgs ...pgproto3.Message) []byte {
	var b []byte
	for _, m := range msgs {
		var err error
		if b, err = m.Encode(b); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// The lane takes whole round trips of pure statements only (lane.go).
func TestLaneScan(t *testing.T) {
	ss, parse := laneSession(t)
	bind := &pgproto3.Bind{Parameters: [][]byte{[]byte("7")}}
	bindS1 := &pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("7")}, ResultFormatCodes: []int16{1}}
	dp, ds := &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Describe{ObjectType: 'S', Name: "s1"}
	exec, sync := &pgproto3.Execute{}, &pgproto3.Sync{}
	q := func(sql string) []byte { return encodeAll(t, &pgproto3.Query{String: sql}) }
	cases := []struct {
		name  string
		b     []byte
		taken int // messages; 0: not taken
	}{
		{"pgbench extended", append(append([]byte{}, parse...), encodeAll(t, bind, dp, exec, sync)...), 5},
		{"pgbench prepared", encodeAll(t, bindS1, dp, exec, sync), 4},
		{"describe statement", encodeAll(t, ds, sync), 2},
		{"a second round trip stays", encodeAll(t, bindS1, exec, sync, bindS1, exec, sync), 3},
		{"simple", q("SELECT abalance FROM pgbench_accounts WHERE aid = 42;"), 1},
		{"no Sync yet", encodeAll(t, bindS1, exec), 0},
		{"partial message", encodeAll(t, bindS1, exec, sync)[:20], 0},
		{"another Parse", encodeAll(t, &pgproto3.Parse{Query: "SELECT 2"}, sync), 0},
		{"a named Parse", encodeAll(t, &pgproto3.Parse{Name: "s1", Query: "SELECT $1::int"}, sync), 0},
		{"a named portal", encodeAll(t, &pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s1"}, sync), 0},
		{"an unknown statement", encodeAll(t, &pgproto3.Bind{PreparedStatement: "nope"}, exec, sync), 0},
		{"an unknown portal", encodeAll(t, &pgproto3.Execute{Portal: "nope"}, sync), 0},
		{"no portal bound", encodeAll(t, exec, sync), 0},
		{"Close", encodeAll(t, &pgproto3.Close{ObjectType: 'S', Name: "s1"}, sync), 0},
		{"Flush", encodeAll(t, bindS1, exec, &pgproto3.Flush{}), 0},
		{"a dataset", q("SELECT count(*) FROM orders"), 0},
		{"a write", q("UPDATE pgbench_accounts SET abalance = 0"), 1},
		{"a write of a dataset", q("DELETE FROM orders WHERE id = 1"), 1},
		{"a write calling nextval (noteOrigin sees to it)", q("INSERT INTO t VALUES (nextval('s'))"), 1},
		{"a write in a CTE", q("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x"), 0},
		{"COMMIT", q("COMMIT"), 1},
		{"BEGIN with options", q("BEGIN ISOLATION LEVEL SERIALIZABLE"), 0},
		{"SET", q("SET search_path = x"), 0},
		{"DDL", q("CREATE TABLE t (a int)"), 0},
		{"set_config", q("SELECT set_config('a.b', 'c', false)"), 0},
		{"an advisory lock", q("SELECT pg_advisory_lock(1)"), 0},
		{"nextval", q("SELECT nextval('s')"), 0},
		{"two statements", q("SELECT 1; SELECT 2"), 0},
		{"SHOW pgaccel.last_route", q("SHOW pgaccel.last_route"), 0},
		{"BEGIN", q("BEGIN"), 1},
		{"a Query after a Bind", append(encodeAll(t, bindS1), q("SELECT 1")...), 0},
	}
	for _, c := range cases {
		var ops [laneMaxFrames]laneOp
		n, size := ss.laneScan(c.b, &ops)
		if n != c.taken {
			t.Errorf("%s: took %d messages, want %d", c.name, n, c.taken)
		}
		if n == 0 && size != 0 || size > len(c.b) {
			t.Errorf("%s: %d messages of %d bytes, of %d", c.name, n, size, len(c.b))
		}
	}
	// What a portal the lane took leaves behind is the same as onBind's.
	var ops [laneMaxFrames]laneOp
	b := encodeAll(t, bindS1, dp, exec, sync)
	n, _ := ss.laneScan(b, &ops)
	ss.laneApply(ops[:n])
	if p := ss.ext.portals[""]; p == nil || p.stmt != ss.ext.stmts["s1"] || !p.pure() {
		t.Fatalf("unnamed portal %+v, want one of s1", p)
	}
	if len(ss.ext.journal) != 0 || ss.ext.segmentOpen || ss.ext.stretchOrigin || ss.local.originTimer || !ss.local.stmtStart.IsZero() {
		t.Fatal("the round trip left the stretch open")
	}
	if got := len(pendingItems(ss)); got != 4 {
		t.Fatalf("%d pending items, want 4", got)
	}
	// A write the lane takes marks its answer as the transaction's write
	// (noteOrigin), as the decoded path does; a read after it does not.
	ss.origin.pending = originlink.NewPending()
	for _, c := range []struct {
		sql   string
		wrote bool
	}{{"UPDATE t SET a = 1 WHERE id = 2", true}, {"SELECT 1", false}} {
		n, _ := ss.laneScan(q(c.sql), &ops)
		if n != 1 {
			t.Fatalf("%s: not taken", c.sql)
		}
		ss.laneApply(ops[:n])
		items := pendingItems(ss)
		if it := items[len(items)-1]; it.Kind != originlink.ItemQuery || it.Wrote != c.wrote || ss.ext.segmentWrote {
			t.Fatalf("%s: pending %+v, segment wrote %v", c.sql, it, ss.ext.segmentWrote)
		}
	}
	// With auth.mode proxy, a write calling nextval leaves the session
	// one whose origin state cannot be replayed, as on the decoded path.
	ss.origin.clientKey = []byte("k")
	if ss.origin.unreplayable.Load() != nil {
		t.Fatal("unreplayable already")
	}
	n, _ = ss.laneScan(q("INSERT INTO t VALUES (nextval('s'))"), &ops)
	ss.laneApply(ops[:n])
	if why := ss.origin.unreplayable.Load(); why == nil || !strings.Contains(*why, "nextval") {
		t.Fatalf("unreplayable %v after nextval", why)
	}
}

// FuzzLaneScan: whatever the client sends, the lane takes nothing or whole
// messages of the types it knows, from the start of the buffer, and never
// panics.
func FuzzLaneScan(f *testing.F) {
	ss, parse := laneSession(f)
	f.Add(append(append([]byte{}, parse...), encodeAll(f, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})...))
	f.Add(encodeAll(f, &pgproto3.Bind{PreparedStatement: "s1"}, &pgproto3.Execute{}, &pgproto3.Sync{}))
	f.Add(encodeAll(f, &pgproto3.Query{String: "SELECT 1"}))
	f.Add([]byte{'B', 0, 0, 0, 4, 'S', 0, 0, 0, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		var ops [laneMaxFrames]laneOp
		n, size := ss.laneScan(b, &ops)
		if n == 0 {
			if size != 0 {
				t.Fatalf("no message, %d bytes", size)
			}
			return
		}
		if size > len(b) {
			t.Fatalf("%d bytes of %d", size, len(b))
		}
		for at, i := 0, 0; i < n; i++ {
			if b[at] != ops[i].typ || !bytes.ContainsRune([]byte("QPBDES"), rune(b[at])) {
				t.Fatalf("message %d: type %q, op %q", i, b[at], ops[i].typ)
			}
			at += 1 + int(uint32(b[at+1])<<24|uint32(b[at+2])<<16|uint32(b[at+3])<<8|uint32(b[at+4]))
			if i == n-1 && at != size {
				t.Fatalf("messages end at %d, size %d", at, size)
			}
		}
	})
}

// FuzzQuickShape: a text and its sibling of other numbers have one number
// shape (planner.SameShape, one ShapeHash), the same fast-path decision
// and session-state call, so one remembered answer serves both; SameShape
// agrees with NumberShape; and a session answers a text the same from
// its memo as afresh.
func FuzzQuickShape(f *testing.F) {
	for _, s := range []string{
		"SELECT abalance FROM pgbench_accounts WHERE aid = 48213;", "BEGIN;", "END;",
		"UPDATE pgbench_branches SET bbalance = bbalance + -4132 WHERE bid = 4;",
		"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (37, 4, 48213, -4132, CURRENT_TIMESTAMP);",
		"SELECT * FROM orders WHERE id = 1", "SELECT 1; SELECT 2", "SELECT E'\\1' FROM t", "SELECT $$ 1 $$, $1",
		"SELECT pg_advisory_lock(1)", "1SELECT", "SELECT 1.2.3", `SELECT "1" FROM "2orders"`, "SELECT U&'\\0041'",
		"SELECT * FROM orders22", "SELECT 1 FROM t -- 2\n", "SELECT x/*1*/FROM t", "SELECT 1 INTO t",
	} {
		f.Add(s, "7")
	}
	ss, _ := laneSession(f)
	// A dataset whose name has a digit too: its digit is a name's.
	p := planner.New(catalog.NewRegistry(&catalog.Config{Datasets: []*catalog.Dataset{
		{Name: "orders", Schema: "public", Table: "orders"}, {Name: "orders22", Schema: "public", Table: "orders22"},
	}}), nil, planner.Options{})
	ss.accel = &Accel{Planner: p}
	f.Fuzz(func(t *testing.T, sql, digits string) {
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return
		}
		// The sibling: every number of sql (a run of digits that does not
		// continue an identifier, a $ parameter or a dollar tag) replaced
		// by digits.
		isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
		continuesIdent := func(c byte) bool {
			return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c >= 0x80
		}
		var b strings.Builder
		for i := 0; i < len(sql); {
			if isDigit(sql[i]) && (i == 0 || !continuesIdent(sql[i-1])) {
				for i < len(sql) && isDigit(sql[i]) {
					i++
				}
				b.WriteString(digits)
				continue
			}
			b.WriteByte(sql[i])
			i++
		}
		sib := b.String()
		// What a text's shape is, and the match of another.
		key := func(s string) string {
			if strings.Contains(s, `"`) {
				return s
			}
			return planner.NumberShape(s)
		}
		for _, pair := range [][2]string{{sib, sql}, {sql, sib}, {sql, sql}, {sql, sql + "1"}, {sql, "a" + sql}} {
			same := planner.SameShape(pair[0], pair[1])
			if same != (key(pair[0]) == key(pair[1])) {
				t.Fatalf("SameShape(%q, %q) = %v; their keys %q, %q", pair[0], pair[1], same, key(pair[0]), key(pair[1]))
			}
			if same && planner.ShapeHash(pair[0]) != planner.ShapeHash(pair[1]) {
				t.Fatalf("%q and %q: one shape, two hashes", pair[0], pair[1])
			}
		}
		if strings.Contains(sql, `"`) {
			return // kept as they are (quick)
		}
		if planner.NumberShape(sib) != planner.NumberShape(sql) || planner.ShapeHash(sib) != planner.ShapeHash(sql) {
			t.Fatalf("%q and %q: shapes %q, %q", sql, sib, planner.NumberShape(sql), planner.NumberShape(sib))
		}
		d1, ok1 := p.Quick(sql)
		d2, ok2 := p.Quick(sib)
		if ok1 != ok2 || d1.Route != d2.Route || d1.Kind != d2.Kind || d1.Reason != d2.Reason || d1.Writes() != d2.Writes() {
			t.Fatalf("quick(%q) = %+v %v, quick(%q) = %+v %v", sql, d1, ok1, sib, d2, ok2)
		}
		if planner.SessionStateCall(sql) != planner.SessionStateCall(sib) {
			t.Fatalf("planner.SessionStateCall(%q) = %q, of %q %q", sql, planner.SessionStateCall(sql), sib, planner.SessionStateCall(sib))
		}
		// Through the session's memo: sql, then its sibling from memory.
		for _, text := range []string{sql, sib} {
			d, ok := ss.quick(text)
			fd, fok := p.Quick(text)
			if ok != fok || d.Reason != fd.Reason || d.Kind != fd.Kind {
				t.Fatalf("session quick(%q) = %+v %v, planner %+v %v", text, d, ok, fd, fok)
			}
		}
	})
}

// TestQuickMemo_Follow: the memo's hint (the entry that came after the
// last one) finds a statement of a repeated sequence without hashing it,
// and a sequence that changes order, or a text of another shape where the
// hint points, still gets its own decision.
func TestQuickMemo_Follow(t *testing.T) {
	ss, _ := laneSession(t)
	p := planner.New(catalog.NewRegistry(&catalog.Config{Datasets: []*catalog.Dataset{
		{Name: "orders", Schema: "public", Table: "orders"},
	}}), nil, planner.Options{})
	ss.accel = &Accel{Planner: p}
	seq := []string{
		"BEGIN;",
		"UPDATE pgbench_accounts SET abalance = abalance + %d WHERE aid = %d;",
		"SELECT abalance FROM pgbench_accounts WHERE aid = %d;",
		"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 2, %d, %d, CURRENT_TIMESTAMP);",
		"SELECT * FROM orders WHERE id = %d",
		"END;",
	}
	check := func(text string) {
		t.Helper()
		e := ss.quickEntry(text)
		d, ok := p.Quick(text)
		if e == nil || e.ok != ok || e.d.Route != d.Route || e.d.Kind != d.Kind || e.d.Reason != d.Reason || !planner.SameShape(text, e.text) {
			t.Fatalf("quickEntry(%q) = %+v, planner %+v %v", text, e, d, ok)
		}
	}
	text := func(s string, n int) string {
		switch strings.Count(s, "%d") {
		case 1:
			return fmt.Sprintf(s, n)
		case 2:
			return fmt.Sprintf(s, -n, n)
		}
		return s
	}
	for round := range 5 {
		for i, s := range seq {
			check(text(s, round*10+i+1))
		}
	}
	// The hints now point along seq: the same texts in another order,
	// and texts of other shapes, are decided by their own shape.
	for round := range 3 {
		for i := len(seq) - 1; i >= 0; i-- {
			check(text(seq[i], round+1))
		}
		check("SELECT abalance FROM pgbench_accounts WHERE aid = -1;")
		check(`SELECT "1" FROM orders`)
	}
	// More shapes than the memo holds: entries are reused, and hints to
	// them are only hints.
	for i := range 40 {
		check(fmt.Sprintf("SELECT %d FROM t%d", i, i%20))
		check(text(seq[i%len(seq)], i))
	}
}

// loopReader returns b again on every Read (a client or origin that sends
// the same round trip over and over).
type loopReader struct{ b []byte }

func (r *loopReader) Read(p []byte) (int, error) { return copy(p, r.b), nil }

// BenchmarkLane measures the lane's user time for one round trip of
// pgbench's select-only script, client side and origin side, without
// sockets: the routing hook's cost per transaction that bench/passthrough
// measures with pgbench (there, with the noise of a shared machine).
// The /parallel cases run a session per core, counting in the same
// metrics; NOMETRICS=1 runs them all without metrics, for comparison.
// Hot caches: under load the same round trip costs several times more,
// most of it in cache misses.
func BenchmarkLane(b *testing.B) {
	answer := func(msgs ...pgproto3.BackendMessage) []byte {
		var out []byte
		for _, m := range msgs {
			out, _ = m.Encode(out)
		}
		return out
	}
	row := []pgproto3.BackendMessage{&pgproto3.DataRow{Values: [][]byte{[]byte("0")}}, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, &pgproto3.ReadyForQuery{TxStatus: 'I'}}
	cases := []struct {
		name           string
		client, origin func(parse []byte) []byte
	}{
		{"prepared",
			func([]byte) []byte {
				return encodeAll(b, &pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("7")}}, &pgproto3.Execute{}, &pgproto3.Sync{})
			},
			func([]byte) []byte {
				return answer(append([]pgproto3.BackendMessage{&pgproto3.BindComplete{}}, row...)...)
			}},
		{"extended",
			func(parse []byte) []byte {
				return append(append([]byte{}, parse...), encodeAll(b, &pgproto3.Bind{Parameters: [][]byte{[]byte("7")}}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})...)
			},
			func([]byte) []byte {
				return answer(append([]pgproto3.BackendMessage{&pgproto3.ParseComplete{}, &pgproto3.BindComplete{},
					&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("abalance"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1}}}}, row...)...)
			}},
		{"simple",
			func([]byte) []byte {
				return encodeAll(b, &pgproto3.Query{String: "SELECT abalance FROM pgbench_accounts WHERE aid = 4242;"})
			},
			func([]byte) []byte {
				return answer(append([]pgproto3.BackendMessage{&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("abalance"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1}}}}, row...)...)
			}},
	}
	shared := NewMetrics(prometheus.NewRegistry())
	for _, c := range cases {
		setup := func(b *testing.B) func() {
			ss, parse := laneSession(b)
			ss.evl.onLoop, ss.origin.state = true, linkLive
			ss.srv.metrics = shared
			if os.Getenv("NOMETRICS") != "" {
				ss.srv.metrics = nil
			} else {
				m, stripe := ss.srv.metrics, newStripe()
				ss.stripe = stripe
				ss.origin.pending.Observe = func(it *originlink.Item) {
					if !it.Started.IsZero() {
						m.observeDuration(stripe, it.Route, time.Since(it.Started))
					}
				}
			}
			ss.client.fr = wire.NewFrameReader(&loopReader{c.client(parse)}, false)
			ss.origin.fr = wire.NewFrameReader(&loopReader{c.origin(parse)}, false)
			ss.origin.rw = struct {
				io.Reader
				io.Writer
			}{ss.origin.fr, io.Discard}
			ss.origin.fe = pgproto3.NewFrontend(ss.origin.fr, io.Discard)
			ss.client.be = pgproto3.NewBackend(ss.client.fr, io.Discard)
			trip := func() {
				ss.client.fr.Discard()
				if taken, _ := ss.laneClient(); !taken {
					panic("the lane did not take the round trip")
				}
				ss.origin.fr.Discard()
				if err := ss.origin.fr.Fill(); err != nil {
					panic(err)
				}
				if taken, ended := ss.originRun(); !taken || ended || !ss.origin.pending.Quiet() {
					panic("the origin side did not answer the round trip")
				}
			}
			trip()
			return trip
		}
		b.Run(c.name, func(b *testing.B) {
			trip := setup(b)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				trip()
			}
		})
		// Sessions on two loops, counting in the same metrics.
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				trip := setup(b)
				for pb.Next() {
					trip()
				}
			})
		})
	}
}

// pendingItems are the items ss's origin still owes, head first.
func pendingItems(ss *session) []originlink.Item {
	q := ss.origin.pending
	q.Lock()
	defer q.Unlock()
	return slices.Clone(q.ItemsLocked())
}
