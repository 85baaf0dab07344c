package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// refresh_mode: caching (issue 19): a caching dataset is ready at once
// with nothing loaded; a read of it is answered by the origin and kept,
// byte for byte, per settings, formats, parameters and role; it is fresh
// for refresh_check_interval, then served stale while one request
// revalidates it, then a miss; writes through pgaccel and an on-demand
// refresh drop its answers; volatile functions are never kept.
func TestCaching_ReadThroughFreshStaleExpired(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS cache_items;
		DROP FUNCTION IF EXISTS cache_vol(), cache_imm(int);
		CREATE TABLE cache_items (id int PRIMARY KEY, v text, amount numeric(10,2), ts timestamptz);
		INSERT INTO cache_items SELECT g, 'v' || g, g * 1.25, '2026-05-01 10:00:00+00'::timestamptz + g * interval '5 hours'
			FROM generate_series(1, 200) g;
		CREATE FUNCTION cache_vol() RETURNS int VOLATILE LANGUAGE sql AS 'SELECT 1';
		CREATE FUNCTION cache_imm(int) RETURNS int IMMUTABLE LANGUAGE sql AS 'SELECT $1 * 2';
		GRANT SELECT, UPDATE ON cache_items TO `+appUser+`;
		GRANT EXECUTE ON FUNCTION cache_vol(), cache_imm(int) TO `+appUser)
	a := startApp(t, `  - from: postgres:public.cache_items
    acceleration:
      refresh_mode: caching
      refresh_check_interval: 2s
      caching_stale_while_revalidate: 4s
      caching_stale_if_error: 1m
`)
	ctx := ctxT(t)
	pcx := connect(t, appDSN(a, appUser, appPass))
	pc := pcx.PgConn()
	direct := connect(t, origin.DSN(appUser, appPass)).PgConn()
	route := func() string { t.Helper(); return lastRoute(t, pcx, true) }
	simple := func(c *pgconn.PgConn, sql string) string { t.Helper(); return simpleDump(t, c, sql) }
	extended := func(c *pgconn.PgConn, sql string, params [][]byte, resultFormats []int16) string {
		t.Helper()
		return extendedDump(t, c, sql, params, resultFormats)
	}
	// kept: the origin's answer through pgaccel (a miss, kept), then the
	// same bytes from the cache.
	kept := func(what string, run func(*pgconn.PgConn) string) {
		t.Helper()
		want := run(direct)
		if got := run(pc); got != want {
			t.Fatalf("%s: the miss differs from the origin's answer:\n%s\nwant\n%s", what, got, want)
		}
		if r := route(); r != "origin (caching: miss, kept)" {
			t.Fatalf("%s: first answer routed %q", what, r)
		}
		if got := run(pc); got != want {
			t.Fatalf("%s: the cached answer differs from the origin's:\n%s\nwant\n%s", what, got, want)
		}
		if r := route(); r != "cached (caching: fresh)" {
			t.Fatalf("%s: second answer routed %q", what, r)
		}
	}
	// A read DuckDB could not answer exactly is the origin's to answer:
	// kept all the same (the cast of a timestamptz to text).
	const q = "SELECT id, v, amount, ts, ts::text AS t FROM cache_items WHERE id % 9 = 2 ORDER BY id"
	kept("simple", func(c *pgconn.PgConn) string { return simple(c, q) })
	kept("extended text", func(c *pgconn.PgConn) string { return extended(c, q, nil, nil) })
	kept("extended binary", func(c *pgconn.PgConn) string { return extended(c, q, nil, []int16{1}) })
	const pq = "SELECT id, amount, cache_imm(id) FROM cache_items WHERE id > $1 ORDER BY id LIMIT 4"
	kept("parameter 10", func(c *pgconn.PgConn) string { return extended(c, pq, [][]byte{[]byte("10")}, nil) })
	kept("parameter 20", func(c *pgconn.PgConn) string { return extended(c, pq, [][]byte{[]byte("20")}, nil) })
	for _, set := range []string{"SET TimeZone = 'Asia/Kolkata'", "SET DateStyle = 'German, DMY'", "SET lc_monetary = 'POSIX'", "RESET ALL"} {
		simple(pc, set)
		simple(direct, set)
		if set == "RESET ALL" {
			break
		}
		kept(set, func(c *pgconn.PgConn) string { return simple(c, q) })
	}

	// Volatile functions, the planner's (random) and the origin's
	// (cache_vol), are never kept.
	for _, vq := range []string{"SELECT id, random() > 2 FROM cache_items WHERE id = 1", "SELECT id, cache_vol() FROM cache_items WHERE id = 1"} {
		for range 2 {
			simple(pc, vq)
			if r := route(); strings.HasPrefix(r, "cached") || strings.Contains(r, "kept") {
				t.Fatalf("%s: routed %q", vq, r)
			}
		}
	}

	// Fresh, then stale (served while revalidated), then the
	// revalidated answer; a change made at the origin directly is seen
	// once revalidated.
	const fq = "SELECT v FROM cache_items WHERE id = 5"
	simple(pc, fq)
	fetched := time.Now()
	mustExec(t, "UPDATE cache_items SET v = 'changed' WHERE id = 5")
	if got := simple(pc, fq); !strings.Contains(got, fmt.Sprintf("%x", "v5")) || route() != "cached (caching: fresh)" {
		t.Fatalf("fresh: %s (%s)", got, route())
	}
	time.Sleep(time.Until(fetched.Add(2500 * time.Millisecond)))
	if got := simple(pc, fq); !strings.Contains(got, fmt.Sprintf("%x", "v5")) || route() != "cached (caching: stale, revalidating)" {
		t.Fatalf("stale: %s (%s)", got, route())
	}
	if got := simple(pc, fq); !strings.Contains(got, fmt.Sprintf("%x", "changed")) || route() != "cached (caching: fresh)" {
		t.Fatalf("after the revalidation: %s (%s)", got, route())
	}
	// Past the stale window: a miss.
	time.Sleep(6500 * time.Millisecond)
	simple(pc, fq)
	if r := route(); r != "origin (caching: miss, kept)" {
		t.Fatalf("past the stale window: %q", r)
	}

	// A write through pgaccel drops the dataset's answers at commit.
	simple(pc, fq)
	if _, err := pc.Exec(ctx, "UPDATE cache_items SET v = 'through' WHERE id = 5").ReadAll(); err != nil {
		t.Fatal(err)
	}
	if got := simple(pc, fq); !strings.Contains(got, fmt.Sprintf("%x", "through")) || route() != "origin (caching: miss, kept)" {
		t.Fatalf("after a write through pgaccel: %s (%s)", got, route())
	}
	// So does one in a transaction, at its COMMIT (not before).
	simple(pc, "BEGIN")
	simple(pc, "UPDATE cache_items SET v = 'tx' WHERE id = 5")
	simple(pc, fq) // inside the transaction: the origin's
	if r := route(); strings.HasPrefix(r, "cached") {
		t.Fatalf("inside a transaction: %q", r)
	}
	simple(pc, "COMMIT")
	if got := simple(pc, fq); !strings.Contains(got, fmt.Sprintf("%x", "tx")) || route() != "origin (caching: miss, kept)" {
		t.Fatalf("after COMMIT: %s (%s)", got, route())
	}
	// The same through the extended protocol: a stale answer is served
	// while it is revalidated, and a write with parameters drops the
	// dataset's answers.
	const eq = "SELECT v FROM cache_items WHERE id = $1"
	ext := func() string { t.Helper(); return extended(pc, eq, [][]byte{[]byte("6")}, nil) }
	ext()
	if r := route(); r != "origin (caching: miss, kept)" {
		t.Fatalf("extended: first read routed %q", r)
	}
	fetched = time.Now()
	mustExec(t, "UPDATE cache_items SET v = 'changed6' WHERE id = 6")
	time.Sleep(time.Until(fetched.Add(2500 * time.Millisecond)))
	if got := ext(); !strings.Contains(got, fmt.Sprintf("%x", "v6")) || route() != "cached (caching: stale, revalidating)" {
		t.Fatalf("extended, stale: %s (%s)", got, route())
	}
	if got := ext(); !strings.Contains(got, fmt.Sprintf("%x", "changed6")) || route() != "cached (caching: fresh)" {
		t.Fatalf("extended, after the revalidation: %s (%s)", got, route())
	}
	if res := pc.ExecParams(ctx, "UPDATE cache_items SET v = $1 WHERE id = $2", [][]byte{[]byte("ext"), []byte("6")}, nil, nil, nil).Read(); res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := ext(); !strings.Contains(got, fmt.Sprintf("%x", "ext")) || route() != "origin (caching: miss, kept)" {
		t.Fatalf("extended, after a write with parameters: %s (%s)", got, route())
	}

	// And an on-demand refresh.
	simple(pc, fq)
	if err := a.Runner.Refresh(ctx, "cache_items"); err != nil {
		t.Fatal(err)
	}
	simple(pc, fq)
	if r := route(); r != "origin (caching: miss, kept)" {
		t.Fatalf("after an on-demand refresh: %q", r)
	}

	// pgaccel.cache = off: the origin answers every time.
	simple(pc, "SET pgaccel.cache = off")
	for range 2 {
		simple(pc, fq)
		if r := route(); strings.HasPrefix(r, "cached") {
			t.Fatalf("with pgaccel.cache = off: %q", r)
		}
	}
	simple(pc, "RESET pgaccel.cache")

	// A role without SELECT gets the origin's refusal, never the answer
	// kept for another role.
	other := connect(t, appDSN(a, pgtest.NoAccessUser, pgtest.NoAccessPassword)).PgConn()
	for range 2 {
		if _, err := other.Exec(ctx, q).ReadAll(); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("a role without privilege: %v", err)
		}
	}

	// Status: ready with nothing loaded, and its answers.
	code, body := adminGet(t, a.AdminAddr(), "/v1/datasets?status=true", "")
	if code != 200 {
		t.Fatalf("status: %d %s", code, body)
	}
	var sts []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Cache  *struct {
			Entries int     `json:"entries"`
			Hits    uint64  `json:"hits"`
			Misses  uint64  `json:"misses"`
			HitRate float64 `json:"hit_rate"`
			Oldest  float64 `json:"oldest_entry_age_seconds"`
		} `json:"cache"`
	}
	if err := json.Unmarshal([]byte(body), &sts); err != nil {
		t.Fatal(err)
	}
	if len(sts) != 1 || sts[0].Status != "Ready" || sts[0].Cache == nil || sts[0].Cache.Entries < 1 || sts[0].Cache.Hits < 8 ||
		sts[0].Cache.Misses < 8 || sts[0].Cache.HitRate <= 0 || sts[0].Cache.Oldest <= 0 {
		t.Fatalf("status: %s", body)
	}
	if n := metricSums(t, a.Metrics, "pgaccel_results_cache_stale_served_total", "reason")["revalidate"]; n < 1 {
		t.Errorf("stale served while revalidating: %v", n)
	}
}

// Concurrent misses of one key make one origin request; the answer
// serves every session. Then the origin stops: an answer past its fresh
// and stale windows serves for caching_stale_if_error, a statement
// nothing was kept for gets ERROR 08006, and the session goes on.
func TestCaching_CoalescedMissesAndOutage(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS cache_slow;
		CREATE TABLE cache_slow (id int PRIMARY KEY, v int);
		INSERT INTO cache_slow SELECT g, g % 7 FROM generate_series(1, 300) g;
		DROP TABLE IF EXISTS cache_short;
		CREATE TABLE cache_short (id int PRIMARY KEY);
		INSERT INTO cache_short VALUES (1), (2);
		GRANT SELECT ON cache_slow, cache_short TO `+appUser)
	a := startApp(t, `  - from: postgres:public.cache_slow
    acceleration:
      refresh_mode: caching
      refresh_check_interval: 1s
      caching_stale_while_revalidate: 0s
      caching_stale_if_error: 5m
  - from: postgres:public.cache_short
    acceleration:
      refresh_mode: caching
      refresh_check_interval: 1s
      caching_stale_while_revalidate: 0s
      caching_stale_if_error: 2s
`)
	ctx := ctxT(t)
	// A read the origin takes a while for: 27 million joined rows.
	const slow = "SELECT count(*), sum(a.v + b.v + c.v) FROM cache_slow a, cache_slow b, cache_slow c"
	want := func() string {
		res, err := connect(t, origin.DSN(appUser, appPass)).PgConn().Exec(ctx, slow).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return dumpResults(res)
	}()
	const n = 8
	conns := make([]*pgconn.PgConn, n)
	for i := range conns {
		conns[i] = connect(t, appDSN(a, appUser, appPass)).PgConn()
	}
	before := metricSums(t, a.Metrics, "pgaccel_results_cache_origin_requests_total", "kind")["miss"]
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Exec(ctx, slow).ReadAll()
			if err != nil {
				errs <- err
				return
			}
			if got := dumpResults(res); got != want {
				errs <- fmt.Errorf("answer %s, want %s", got, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := metricSums(t, a.Metrics, "pgaccel_results_cache_origin_requests_total", "kind")["miss"] - before; got != 1 {
		t.Errorf("%d concurrent misses made %v origin requests, want 1", n, got)
	}

	cx := connect(t, appDSN(a, appUser, appPass))
	c := cx.PgConn()
	route := func() string { t.Helper(); return lastRoute(t, cx, true) }
	const small = "SELECT id, v FROM cache_slow WHERE id < 5 ORDER BY id"
	wantSmall, err := connect(t, origin.DSN(appUser, appPass)).PgConn().Exec(ctx, small).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, small).ReadAll(); err != nil {
		t.Fatal(err)
	}
	const short = "SELECT id FROM cache_short ORDER BY id"
	if _, err := c.Exec(ctx, short).ReadAll(); err != nil {
		t.Fatal(err)
	}
	shortFetched := time.Now()
	route() // its description is kept for the outage
	resume := origin.PauseDuring(t)
	time.Sleep(1500 * time.Millisecond) // past the fresh window
	for _, sql := range []string{small, slow} {
		res, err := c.Exec(ctx, sql).ReadAll()
		if err != nil {
			t.Fatalf("during the outage, %s: %v (%s)", sql, err, route())
		}
		if sql == small && dumpResults(res) != dumpResults(wantSmall) || sql == slow && dumpResults(res) != want {
			t.Fatalf("during the outage, %s: %s", sql, dumpResults(res))
		}
		if r := route(); r != "cached (caching: stale, the origin cannot answer)" {
			t.Fatalf("during the outage, %s routed %q", sql, r)
		}
	}
	if _, err := c.Exec(ctx, "SELECT id FROM cache_slow WHERE id = 77").ReadAll(); pgErrCode(err) != "08006" {
		t.Fatalf("a read nothing was kept for, during the outage: %v", err)
	}
	// cache_short's answer serves within its bound (1s fresh + 2s), and
	// not past it.
	if time.Since(shortFetched) < 2500*time.Millisecond {
		if _, err := c.Exec(ctx, short).ReadAll(); err != nil || route() != "cached (caching: stale, the origin cannot answer)" {
			t.Fatalf("cache_short within caching_stale_if_error: %v (%s)", err, route())
		}
	}
	time.Sleep(time.Until(shortFetched.Add(3500 * time.Millisecond)))
	if _, err := c.Exec(ctx, short).ReadAll(); pgErrCode(err) != "08006" {
		t.Fatalf("cache_short past caching_stale_if_error: %v", err)
	}
	if n := metricSums(t, a.Metrics, "pgaccel_results_cache_stale_served_total", "reason")["origin_unavailable"]; n < 2 {
		t.Errorf("stale served in the outage: %v", n)
	}
	if err := resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitOriginBack(t)
	// With auth.mode: origin a session whose origin connection broke
	// cannot log in again: a new one reads.
	cx = connect(t, appDSN(a, appUser, appPass))
	c = cx.PgConn()
	pgtest.WaitFor(t, "a miss answered by the origin again", func() bool {
		_, err := c.Exec(ctx, "SELECT id FROM cache_slow WHERE id = 78").ReadAll()
		return err == nil && route() == "origin (caching: miss, kept)"
	})
}

// TestCaching_JoinWithAcceleratedDatasetSaysSo: a read joining a caching
// dataset with one the acceleration holds is answered by the origin as a
// whole (and kept), and SHOW pgaccel.last_route says so, on the miss and
// on the hit.
func TestCaching_JoinWithAcceleratedDatasetSaysSo(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS cache_join_c, cache_join_a;
		CREATE TABLE cache_join_c (id int PRIMARY KEY, v text);
		CREATE TABLE cache_join_a (id int PRIMARY KEY, w text);
		INSERT INTO cache_join_c SELECT g, 'c' || g FROM generate_series(1, 20) g;
		INSERT INTO cache_join_a SELECT g, 'a' || g FROM generate_series(1, 20) g;
		GRANT SELECT ON cache_join_c, cache_join_a TO `+appUser)
	a := startApp(t, `  - from: postgres:public.cache_join_c
    acceleration:
      refresh_mode: caching
      refresh_check_interval: 1m
  - from: postgres:public.cache_join_a
`)
	pcx := connect(t, appDSN(a, appUser, appPass))
	const sql = "SELECT c.v, a.w FROM cache_join_c c JOIN cache_join_a a USING (id) WHERE id < 4 ORDER BY id"
	for _, want := range []string{"origin (caching: miss, kept)", "cached (caching: fresh)"} {
		if _, err := pcx.PgConn().Exec(ctxT(t), sql).ReadAll(); err != nil {
			t.Fatal(err)
		}
		r := lastRoute(t, pcx, true)
		if !strings.HasPrefix(r, want) || !strings.Contains(r, "joins caching dataset cache_join_c with accelerated cache_join_a") {
			t.Errorf("last route %q, want %s and why the acceleration is not read", r, want)
		}
	}
	// EXPLAIN says so too, in a notice above the origin's plan.
	var notices []string
	cfg, err := pgx.ParseConfig(appDSN(a, appUser, appPass))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
	ec, err := pgx.ConnectConfig(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close(context.Background())
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		notices = nil
		rows, err := ec.Query(ctxT(t), "EXPLAIN "+sql, mode)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if rows.Err() != nil || n == 0 || len(notices) != 1 || !strings.Contains(notices[0], "joins caching dataset cache_join_c with accelerated cache_join_a") {
			t.Errorf("%v: EXPLAIN: %d plan lines (%v), notices %q; want the origin's plan and why it is the origin's", mode, n, rows.Err(), notices)
		}
	}
	// A read of a caching dataset that reads the clock goes to the origin,
	// not kept: a kept answer would be of another time.
	const clocked = "SELECT count(*) FROM cache_join_c WHERE id < extract(day FROM now()) + 100"
	for range 2 {
		if _, err := pcx.PgConn().Exec(ctxT(t), clocked).ReadAll(); err != nil {
			t.Fatal(err)
		}
		if r := lastRoute(t, pcx, true); !strings.HasPrefix(r, "origin: caching_volatile") {
			t.Errorf("%s: last route %q, want the origin, uncached", clocked, r)
		}
	}
}
