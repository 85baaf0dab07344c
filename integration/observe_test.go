package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// The secret values the workload of the statistics tests passes, as
// literals and as parameters: none may appear in any output.
const (
	obsSecretLiteral = "lit-secret-7ee1"
	obsSecretParam   = "param-secret-4c2d"
	obsSecretNumber  = "987654321"
)

// obsSchema: obs_orders is the dataset; obs_a, obs_b and obs_c are not.
const obsSchema = `DROP TABLE IF EXISTS obs_orders, obs_a, obs_b, obs_c;
	CREATE TABLE obs_orders (id bigint PRIMARY KEY, note text, amount int);
	INSERT INTO obs_orders SELECT g, 'n' || g, g FROM generate_series(1, 2000) g;
	CREATE TABLE obs_a (id int PRIMARY KEY, v int);
	CREATE TABLE obs_b (id int PRIMARY KEY, v int);
	CREATE TABLE obs_c (id int PRIMARY KEY, v int);
	INSERT INTO obs_a SELECT g, g FROM generate_series(1, 1000) g;
	INSERT INTO obs_b SELECT g, g FROM generate_series(1, 30000) g;
	INSERT INTO obs_c SELECT g, g FROM generate_series(1, 300000) g;
	ANALYZE obs_a, obs_b, obs_c;
	GRANT SELECT ON obs_orders, obs_a, obs_b, obs_c TO app;
	GRANT UPDATE ON obs_c TO app;
	DROP ROLE IF EXISTS obs_other;
	CREATE ROLE obs_other LOGIN PASSWORD 'other-pass';
	GRANT SELECT ON obs_orders TO obs_other;`

// obsTables creates obsSchema's tables for the test and drops them after.
func obsTables(t *testing.T) {
	t.Helper()
	mustExec(t, obsSchema)
	t.Cleanup(func() {
		mustExec(t, "DROP TABLE IF EXISTS obs_orders, obs_a, obs_b, obs_c; DROP ROLE IF EXISTS obs_other")
	})
}

// obsApp starts pgaccel (with top's admin block, if any) over obs_orders,
// without shadow verification (its origin reads would count nowhere, but
// take the origin's time).
func obsApp(t *testing.T, top string) *app.App {
	t.Helper()
	return startAppRuntime(t, top, "  verify:\n    enabled: false\n", "  - from: postgres:public.obs_orders\n", true)
}

// waitDescribed waits until the describer has normalised every statement
// a's statistics hold.
func waitDescribed(t *testing.T, a *app.App) {
	t.Helper()
	pgtest.WaitFor(t, "the statements described", func() bool {
		for _, s := range a.Stats.Snapshot(statsAll) {
			if s.Text == "" {
				return false
			}
		}
		return true
	})
}

// showRows runs one of pgaccel's SHOWs on conn and returns its rows as
// maps by column.
func showRows(t *testing.T, conn *pgx.Conn, sql string) []map[string]any {
	t.Helper()
	rows, err := conn.Query(ctxT(t), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	ms, err := pgx.CollectRows(rows, pgx.RowToMap)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return ms
}

// Statement statistics of a known workload: counts and routes per
// statement, the reason and rule of the origin's, per-role visibility, the
// same through the admin port, the totals, the datasets, a reset, and no
// literal or parameter value in any output (SQL, JSON, metrics).
func TestStatementStats_KnownWorkload(t *testing.T) {
	obsTables(t)
	a := obsApp(t, "")
	ctx := ctxT(t)
	conn := connect(t, appDSN(a, appUser, appPass))
	simple := connectSimple(t, appDSN(a, appUser, appPass))

	// 5 accelerated calls of one statement, with parameters (one value
	// secret), and 3 of a literal one, by the simple protocol.
	for i, v := range []any{int64(1), int64(2), int64(3), int64(4), obsSecretNumber} {
		var n int64
		if i == 4 {
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM obs_orders WHERE note <> $1", obsSecretParam).Scan(&n); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM obs_orders WHERE note <> $1", fmt.Sprint("x", v)).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		mustExecOn(t, simple, "SELECT sum(amount) FROM obs_orders WHERE note <> '"+obsSecretLiteral+"' AND id < "+obsSecretNumber)
	}
	// 2 calls sent to the origin for a function the acceleration does not
	// run (the reason and rule are kept).
	for range 2 {
		mustExecOn(t, simple, "SELECT id, random() < 2 FROM obs_orders WHERE id = 1 + 0 * "+obsSecretNumber)
	}
	// Reads of tables that are no datasets.
	for range 4 {
		mustExecOn(t, simple, "SELECT count(*) FROM obs_a")
	}
	// Another role's statement.
	other := connectSimple(t, appDSN(a, "obs_other", "other-pass"))
	mustExecOn(t, other, "SELECT max(amount) FROM obs_orders")

	find := func(rows []map[string]any, sub string) []map[string]any {
		var out []map[string]any
		for _, r := range rows {
			if strings.Contains(fmt.Sprint(r["query"]), sub) {
				out = append(out, r)
			}
		}
		return out
	}
	var stmts []map[string]any
	pgtest.WaitFor(t, "the statements described", func() bool {
		stmts = showRows(t, conn, "SHOW pgaccel.statements")
		for _, r := range stmts {
			if r["query"] == "" {
				return false
			}
		}
		return len(find(stmts, "count(*) FROM obs_a")) == 1
	})
	for _, c := range []struct {
		query, route, reason string
		calls                int64
	}{
		{"SELECT count(*) FROM obs_orders WHERE note <> $1", "accelerated", "", 5},
		{"SELECT sum(amount) FROM obs_orders WHERE note <> $1 AND id < $2", "accelerated", "", 3},
		{"SELECT id, random() < $1 FROM obs_orders WHERE id = $2 + $3 * $4", "origin", "function", 2},
		{"SELECT count(*) FROM obs_a", "origin", "no_dataset", 4},
	} {
		// A row per route: the results cache answers an accelerated
		// statement's later calls (cache_hit).
		rs := find(stmts, c.query)
		var calls int64
		for _, r := range rs {
			calls += r["calls"].(int64)
			route := r["route"]
			if route == "cache_hit" && c.route == "accelerated" {
				route = "accelerated"
			}
			if route != c.route || r["role"] != appUser {
				t.Errorf("%s: route %v role %v, want %s %s", c.query, r["route"], r["role"], c.route, appUser)
			}
		}
		if len(rs) == 0 || calls != c.calls {
			t.Errorf("%s: %d calls in %d rows, want %d (all: %v)", c.query, calls, len(rs), c.calls, stmts)
			continue
		}
		r := rs[0]
		if c.reason != "" && r["reason"] != c.reason {
			t.Errorf("%s: reason %v, want %s", c.query, r["reason"], c.reason)
		}
		if c.route == "origin" && r["statement_origin_ms"].(float64) <= 0 {
			t.Errorf("%s: origin time %v", c.query, r["statement_origin_ms"])
		}
		for _, col := range []string{"p50_ms", "p95_ms", "p99_ms", "total_ms"} {
			if v, _ := r[col].(float64); v <= 0 {
				t.Errorf("%s: %s %v", c.query, col, r[col])
			}
		}
	}
	if r := find(stmts, "random()"); len(r) == 1 && !strings.Contains(fmt.Sprint(r[0]["rule"]), "random") {
		t.Errorf("the rule of the origin's statement: %v", r[0]["rule"])
	}
	for _, q := range []string{"sum(amount)", "random()"} {
		var rows int64
		for _, r := range find(stmts, q) {
			rows += r["rows"].(int64)
		}
		if want := map[string]int64{"sum(amount)": 3, "random()": 2}[q]; rows != want {
			t.Errorf("rows of %s: %d, want %d", q, rows, want)
		}
	}
	if len(find(stmts, "max(amount)")) != 0 {
		t.Errorf("another role's statement is shown to %s", appUser)
	}
	if os := showRows(t, other, "SHOW pgaccel.statements"); len(os) != 1 || os[0]["role"] != "obs_other" {
		t.Errorf("obs_other sees %v", os)
	}

	// The totals and the datasets.
	stats := showRows(t, simple, "SHOW pgaccel.stats")
	var accel, orig int64
	for _, r := range stats {
		switch r["route"] {
		case "accelerated", "cache_hit":
			accel += r["calls"].(int64)
		case "origin":
			orig += r["calls"].(int64)
		}
	}
	if accel != 8 || orig != 6 {
		t.Errorf("SHOW pgaccel.stats: accelerated %d origin %d, want 8 and 6: %v", accel, orig, stats)
	}
	ds := showRows(t, conn, "SHOW pgaccel.datasets")
	if len(ds) != 1 || ds[0]["name"] != "obs_orders" || ds[0]["status"] != "Ready" || ds[0]["rows"] != int64(2000) || ds[0]["source"] != "public.obs_orders" {
		t.Errorf("SHOW pgaccel.datasets: %v", ds)
	}

	// The admin port: every role's.
	code, body := adminGet(t, a.AdminAddr(), "/v1/statements?sort=calls", "")
	if code != http.StatusOK {
		t.Fatalf("/v1/statements: %d %s", code, body)
	}
	var reply struct {
		Info       struct{ Entries int }
		Statements []struct {
			Query, Role, Route string
			Calls              int64
		}
	}
	if err := json.Unmarshal([]byte(body), &reply); err != nil {
		t.Fatal(err)
	}
	roles := map[string]bool{}
	for _, s := range reply.Statements {
		roles[s.Role] = true
	}
	if !roles[appUser] || !roles["obs_other"] || reply.Statements[0].Calls != 5 {
		t.Errorf("/v1/statements: %s", body)
	}

	// No value anywhere.
	outputs := []string{body, fmt.Sprint(stmts), fmt.Sprint(stats)}
	for _, p := range []string{"/v1/stats", "/v1/advice", "/metrics"} {
		_, b := adminGet(t, a.AdminAddr(), p, "")
		outputs = append(outputs, b)
	}
	for _, out := range outputs {
		for _, secret := range []string{obsSecretLiteral, obsSecretParam, obsSecretNumber} {
			if strings.Contains(out, secret) {
				t.Errorf("a value (%s) in an output: %.300s", secret, out)
			}
		}
	}

	// Reset.
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://"+a.AdminAddr()+"/v1/statements", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE /v1/statements: %d", resp.StatusCode)
	}
	if rows := showRows(t, conn, "SHOW pgaccel.statements"); len(rows) != 0 {
		t.Errorf("after the reset: %v", rows)
	}
}

// The advisor: a workload over three tables that are no datasets ranks
// them by the origin time their reads cost, each with a config snippet;
// a statement over a dataset sent to the origin for point reads gets a
// config change.
func TestAdvisor_RanksTablesByOriginTime(t *testing.T) {
	obsTables(t)
	a := obsApp(t, "")
	simple := connectSimple(t, appDSN(a, appUser, appPass))
	// A read of obs_c costs the origin about ten times one of obs_b,
	// which costs about ten times one of obs_a (their sizes).
	for range 6 {
		mustExecOn(t, simple, "SELECT count(DISTINCT v) FROM obs_c WHERE v > 0")
		mustExecOn(t, simple, "SELECT count(DISTINCT b.v) FROM obs_b b LEFT JOIN obs_orders o ON o.id = b.id WHERE b.v > 0")
		mustExecOn(t, simple, "SELECT count(DISTINCT v) FROM obs_a WHERE v > 0")
		// A write is never advice.
		mustExecOn(t, simple, "UPDATE obs_c SET v = v WHERE id = 1")
		// A point read of the dataset: the origin's (point_reads: origin).
		mustExecOn(t, simple, "SELECT note FROM obs_orders WHERE id = 5")
	}
	var tables []string
	pgtest.WaitFor(t, "the advice", func() bool {
		_, body := adminGet(t, a.AdminAddr(), "/v1/advice", "")
		var adv struct {
			Tables []struct {
				Table  string
				Config string
				Calls  int64
			}
			Changes []struct{ Dataset, Reason string }
		}
		if err := json.Unmarshal([]byte(body), &adv); err != nil {
			t.Fatal(err)
		}
		tables = tables[:0]
		for _, x := range adv.Tables {
			tables = append(tables, x.Table)
			if !strings.Contains(x.Config, "from: postgres:"+x.Table) || x.Calls != 6 {
				return false
			}
		}
		return len(adv.Changes) == 1 && adv.Changes[0].Dataset == "obs_orders" && adv.Changes[0].Reason == "point_read"
	})
	if fmt.Sprint(tables) != "[public.obs_c public.obs_b public.obs_a]" {
		t.Errorf("advised tables %v, want obs_c, obs_b, obs_a", tables)
	}
	rows := showRows(t, connect(t, appDSN(a, appUser, appPass)), "SHOW pgaccel.advice")
	if len(rows) != 4 || rows[0]["target"] != "public.obs_c" || rows[3]["kind"] != "change:point_read" {
		t.Errorf("SHOW pgaccel.advice: %v", rows)
	}
}

// EXPLAIN (pgaccel): the dry run says whether a statement would be
// accelerated with today's datasets, and if not, why and what would
// change that; plain EXPLAIN of a read sent to the origin says why in a
// NOTICE.
func TestExplainPgaccel_DryRun(t *testing.T) {
	obsTables(t)
	a := obsApp(t, "")
	for _, mode := range []string{"simple", "extended"} {
		var conn *pgx.Conn
		if mode == "simple" {
			conn = connectSimple(t, appDSN(a, appUser, appPass))
		} else {
			conn = connect(t, appDSN(a, appUser, appPass))
		}
		for _, c := range []struct {
			sql, route, reason, advice string
		}{
			{"SELECT sum(amount) FROM obs_orders WHERE note <> 'x'", "accelerated", "", ""},
			{"SELECT o.id FROM obs_orders o JOIN obs_a a ON a.id = o.id", "origin", "", "add public.obs_a as dataset"},
			{"SELECT random() FROM obs_orders", "origin", "function", "cannot answer this exactly"},
			{"UPDATE obs_orders SET amount = 1 WHERE id = -1", "origin", "write", "not a read"},
		} {
			rows := showRows(t, conn, "EXPLAIN (pgaccel) "+c.sql)
			if len(rows) != 1 {
				t.Fatalf("%s %s: %v", mode, c.sql, rows)
			}
			r := rows[0]
			if r["route"] != c.route || (c.reason != "" && r["reason"] != c.reason) || !strings.Contains(fmt.Sprint(r["advice"]), c.advice) {
				t.Errorf("%s: EXPLAIN (pgaccel) %s: %v", mode, c.sql, r)
			}
		}
	}
	// The dry run changed nothing.
	var n int64
	if err := connect(t, origin.SuperDSN()).QueryRow(context.Background(), "SELECT count(*) FROM obs_orders WHERE amount = 1").Scan(&n); err != nil || n != 1 {
		t.Errorf("after the dry run of an UPDATE: %d rows of amount 1 (%v)", n, err)
	}

	// Plain EXPLAIN of a read the origin answers: a NOTICE says why.
	var notices []string
	cfg, err := pgx.ParseConfig(appDSN(a, appUser, appPass))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
	c := connectConfig(t, cfg)
	if _, err := c.Exec(ctxT(t), "EXPLAIN SELECT random() FROM obs_orders"); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "origin: function") {
		t.Errorf("EXPLAIN notices %q", notices)
	}
}

// The CLI over a running pgaccel: statements and advise through the admin
// port (with its token), explain through the pgwire port as a role.
func TestCLI_StatementsAdviseExplain(t *testing.T) {
	obsTables(t)
	a := obsApp(t, "admin:\n  listen: 127.0.0.1:0\n  token: cli-obs-t0ken\n")
	simple := connectSimple(t, appDSN(a, appUser, appPass))
	for range 3 {
		mustExecOn(t, simple, "SELECT count(DISTINCT v) FROM obs_c WHERE v > 0")
		mustExecOn(t, simple, "SELECT sum(amount) FROM obs_orders")
	}
	waitDescribed(t, a)
	env := []string{"PGACCEL_ADMIN_TOKEN=cli-obs-t0ken"}
	code, out, errOut := cliResult(t, env, "statements", "-admin", a.AdminAddr(), "-sort", "calls")
	if code != 0 || !strings.Contains(out, "SELECT count(DISTINCT v) FROM obs_c WHERE v > $1") || !strings.Contains(out, "no_dataset") || !strings.Contains(out, "SELECT sum(amount) FROM obs_orders") {
		t.Errorf("pgaccel statements: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cliResult(t, env, "advise", "-admin", a.AdminAddr())
	if code != 0 || !strings.Contains(out, "1. public.obs_c") || !strings.Contains(out, "- from: postgres:public.obs_c") {
		t.Errorf("pgaccel advise: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cliResult(t, nil, "explain", "-dsn", appDSN(a, appUser, appPass), "SELECT v FROM obs_a JOIN obs_orders o ON o.id = obs_a.id")
	if code != 0 || !strings.Contains(out, "route:") || !strings.Contains(out, "origin") || !strings.Contains(out, "add public.obs_a as dataset") {
		t.Errorf("pgaccel explain: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cliResult(t, nil, "explain", "-dsn", appDSN(a, appUser, appPass), "SELECT sum(amount) FROM obs_orders")
	if code != 0 || !strings.Contains(out, "accelerated") || !strings.Contains(out, "obs_orders") {
		t.Errorf("pgaccel explain of an accelerated read: %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = cliResult(t, []string{"PGACCEL_ADMIN_TOKEN=wrong"}, "advise", "-admin", a.AdminAddr()); code == 0 || !strings.Contains(errOut, "401") {
		t.Errorf("pgaccel advise with a wrong token: %d %s", code, errOut)
	}
}

// A new user's first run: no dataset yet, runtime.statement_stats.
// without_datasets on. The statements are counted, the advisor names the
// table to accelerate, and a reload that adds it serves it, the session
// open all along.
func TestAdvisor_WithoutDatasetsThenReload(t *testing.T) {
	obsTables(t)
	a := startAppRuntime(t, "", "  verify:\n    enabled: false\n  statement_stats:\n    without_datasets: true\n", "", true)
	conn := connect(t, appDSN(a, appUser, appPass))
	const read = "SELECT count(DISTINCT v) FROM obs_c WHERE v > $1"
	for i := range 4 {
		var n int64
		if err := conn.QueryRow(ctxT(t), read, i).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	pgtest.WaitFor(t, "the advice", func() bool {
		_, body := adminGet(t, a.AdminAddr(), "/v1/advice", "")
		return strings.Contains(body, `"table": "public.obs_c"`)
	})
	path := a.Config.File()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(text, "  - from: postgres:public.obs_c\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := reloadPost(t, a.AdminAddr()); code != http.StatusOK || !strings.Contains(body, `"added":["obs_c"]`) {
		t.Fatalf("reload: %d %s", code, body)
	}
	pgtest.WaitFor(t, "obs_c accelerated", func() bool {
		var n int64
		if err := conn.QueryRow(ctxT(t), read, 1).Scan(&n); err != nil || n != 299999 {
			t.Fatalf("%d %v", n, err)
		}
		var r string
		if err := conn.QueryRow(ctxT(t), "SHOW pgaccel.last_route").Scan(&r); err != nil {
			t.Fatal(err)
		}
		return strings.HasPrefix(r, "accelerated")
	})
}

// A session whose settings the encoder cannot honour (client_encoding
// LATIN1) is not answered by pgaccel itself: its SHOW pgaccel.* and
// EXPLAIN (pgaccel) fail at the origin, as SHOW of an unknown setting
// does, instead of answering with no row.
func TestOwnStatements_FailWhenNotAnswered(t *testing.T) {
	obsTables(t)
	a := obsApp(t, "")
	psql := psqlPath(t)
	dsn := appDSN(a, appUser, appPass)
	for _, stmt := range []string{"SHOW pgaccel.statements", "SHOW pgaccel.stats", "SHOW pgaccel.datasets", "SHOW pgaccel.advice", "EXPLAIN (pgaccel) SELECT 1"} {
		out, err := runPsql(t, psql, dsn, "-Atc", "SET client_encoding = 'LATIN1'", "-c", stmt)
		if err == nil || !strings.Contains(out, "42704") || !strings.Contains(out, "unrecognized configuration parameter") {
			t.Errorf("%s under LATIN1: %v\n%s", stmt, err, out)
		}
		if out, err := runPsql(t, psql, dsn, "-Atc", stmt); err != nil {
			t.Errorf("%s under UTF8: %v\n%s", stmt, err, out)
		}
	}
}
