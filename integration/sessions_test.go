package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/integration/tcprelay"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// Sessions with auth.mode: proxy (issue 17). The roles are the test's
// own, so that password changes do not touch the shared ones.
const (
	sessUser = "sess_user"
	sessPass = "sess-pass-1"
)

// setupProxyAuth creates the lookup function, the test's role and tables.
func setupProxyAuth(t *testing.T) {
	t.Helper()
	mustExec(t, auth.SetupSQL(pgtest.SuperUser))
	mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS sess_orders, sess_writes;
		DO $$ BEGIN
		  IF EXISTS (SELECT FROM pg_roles WHERE rolname = '%[1]s') THEN
		    EXECUTE 'DROP OWNED BY %[1]s'; DROP ROLE %[1]s;
		  END IF;
		END $$;
		SET password_encryption = 'scram-sha-256';
		CREATE ROLE %[1]s LOGIN PASSWORD '%[2]s';
		CREATE TABLE sess_orders (id int PRIMARY KEY, v text, amount numeric(10,2));
		INSERT INTO sess_orders SELECT g, 'v' || g, g * 1.25 FROM generate_series(1, 200) g;
		CREATE TABLE sess_writes (id serial PRIMARY KEY, note text);
		GRANT SELECT ON sess_orders TO %[1]s;
		GRANT SELECT, INSERT ON sess_writes TO %[1]s;
		GRANT USAGE ON SEQUENCE sess_writes_id_seq TO %[1]s;`, sessUser, sessPass))
	t.Cleanup(func() {
		mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS sess_orders, sess_writes; DROP OWNED BY %[1]s; DROP ROLE IF EXISTS %[1]s`, sessUser))
	})
}

// startProxyAuthApp starts pgaccel with auth.mode: proxy over sess_orders,
// its files and saved logins in dataDir.
func startProxyAuthApp(t *testing.T, dataDir string, cacheTTL string, wait bool) (*app.App, func()) {
	t.Helper()
	return startSessionsApp(t, "proxy", "acceleration", dataDir, cacheTTL, wait)
}

// sessionsAuthExtra is YAML added to the auth block by startSessionsApp.
var sessionsAuthExtra = ""

// startShortLinkApp starts pgaccel with auth.mode: proxy over sess_orders
// with origin_idle_timeout: 1s (sessions drop an idle origin connection
// soon), and logs a first session in, so that later logins of sessUser
// start with no origin connection; it returns the app and their DSN.
func startShortLinkApp(t *testing.T) (*app.App, string) {
	t.Helper()
	setupProxyAuth(t)
	sessionsAuthExtra = "  origin_idle_timeout: 1s\n"
	defer func() { sessionsAuthExtra = "" }()
	a, _ := startProxyAuthApp(t, t.TempDir(), "60s", true)
	dsn := appDSN(a, sessUser, sessPass)
	firstSession(t, a, dsn)
	return a, dsn
}

// startSessionsApp starts pgaccel over sess_orders with auth.mode mode and
// runtime.point_reads pointReads.
func startSessionsApp(t *testing.T, mode, pointReads, dataDir string, cacheTTL string, wait bool) (*app.App, func()) {
	t.Helper()
	cfgText := fmt.Sprintf(`origin:
  dsn: %q
server:
  listen: 127.0.0.1:0
admin:
  listen: 127.0.0.1:0
auth:
  mode: %s
  cache_ttl: %s
  max_stale: 1h
  persist: true
%sruntime:
  data_dir: %q
  point_reads: %s
datasets:
  - from: postgres:public.sess_orders
    acceleration:
      mode: file
`, origin.SuperDSN(), mode, cacheTTL, sessionsAuthExtra, dataDir, pointReads)
	a := startAppText(t, cfgText)
	var once sync.Once
	stop := func() { once.Do(func() { shutdownApp(t, a) }) }
	t.Cleanup(stop)
	if wait {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := a.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return a, stop
}

func shutdownApp(t *testing.T, a *app.App) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// waitOriginBack waits until the resumed origin accepts sessions.
func waitOriginBack(t *testing.T) {
	t.Helper()
	pgtest.WaitFor(t, "the origin back", func() bool {
		c, err := pgx.Connect(context.Background(), origin.SuperDSN())
		if err == nil {
			c.Close(context.Background())
		}
		return err == nil
	})
}

// forEachSession runs do for 0..n-1, 16 at a time, and fails the test with
// the errors.
func forEachSession(t *testing.T, n int, do func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := do(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// originBackends counts the origin backends of role.
func originBackends(t *testing.T, role string) int {
	t.Helper()
	n, err := originCount(`SELECT count(*) FROM pg_stat_activity WHERE usename = $1`, role)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// readAll runs the accelerated reads a session makes, returning their
// answers as text.
func readAll(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (string, error) {
	var n, sum int64
	if err := q.QueryRow(ctx, "SELECT count(*), sum(id) FROM sess_orders").Scan(&n, &sum); err != nil {
		return "", err
	}
	var v string
	if err := q.QueryRow(ctx, "SELECT v FROM sess_orders WHERE id = $1", 42).Scan(&v); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d %d %s", n, sum, v), nil
}

const wantReads = "200 20100 v42"

// TestSessions_SurviveOriginOutage: with auth.mode: proxy, open sessions
// (pgx extended with its statement cache, pgx simple protocol, named
// server-prepared statements as pgjdbc uses them) keep getting
// accelerated answers while the origin is stopped; a write gets ERROR
// 08006 and the session goes on; new logins are verified by pgaccel (right
// password in, wrong one and unknown role out); after the origin returns,
// the same sessions write again, with their settings set up again; after
// a restart of pgaccel during the outage users still log in, and read
// (auth-lookups.json, planner.Describe).
func TestSessions_SurviveOriginOutage(t *testing.T) {
	setupProxyAuth(t)
	dataDir := t.TempDir()
	a, stopA := startProxyAuthApp(t, dataDir, "60s", true)
	dsn := appDSN(a, sessUser, sessPass)
	ctx := ctxT(t)

	// Wrong passwords and unknown roles: 28P01, the origin's message.
	if _, err := pgx.Connect(ctx, appDSN(a, sessUser, "wrong")); pgErrCode(err) != "28P01" ||
		!strings.Contains(err.Error(), `password authentication failed for user "sess_user"`) {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := pgx.Connect(ctx, appDSN(a, "no_such_role", "x")); pgErrCode(err) != "28P01" ||
		!strings.Contains(err.Error(), `password authentication failed for user "no_such_role"`) {
		t.Fatalf("unknown role: %v", err)
	}

	ext := connect(t, dsn) // pgx's default: extended protocol, statement cache
	if _, err := ext.Exec(ctx, "SET application_name = 'sess-ext'"); err != nil {
		t.Fatal(err)
	}
	simple := connectSimple(t, dsn)
	named := connect(t, dsn).PgConn() // pgjdbc-style: Parse S_1 once, Bind/Execute many
	if _, err := named.Prepare(ctx, "S_1", "SELECT v, amount FROM sess_orders WHERE id = $1", nil); err != nil {
		t.Fatal(err)
	}
	namedRead := func() (string, error) {
		res := named.ExecPrepared(ctx, "S_1", [][]byte{[]byte("7")}, nil, nil).Read()
		if res.Err != nil {
			return "", res.Err
		}
		if len(res.Rows) != 1 {
			return "", fmt.Errorf("%d rows", len(res.Rows))
		}
		return string(res.Rows[0][0]) + " " + string(res.Rows[0][1]), nil
	}
	for name, read := range map[string]func() (string, error){
		"extended": func() (string, error) { return readAll(ctx, ext) },
		"simple":   func() (string, error) { return readAll(ctx, simple) },
	} {
		if got, err := read(); err != nil || got != wantReads {
			t.Fatalf("%s before the outage: %q %v", name, got, err)
		}
	}
	if got, err := namedRead(); err != nil || got != "v7 8.75" {
		t.Fatalf("named before the outage: %q %v", got, err)
	}
	if _, err := ext.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('before')"); err != nil {
		t.Fatal(err)
	}

	var encoding string
	if err := ext.QueryRow(ctx, "SHOW client_encoding").Scan(&encoding); err != nil {
		t.Fatal(err)
	}

	// The origin stops (fast shutdown).
	resume := origin.PauseDuring(t)
	for name, read := range map[string]func() (string, error){
		"extended": func() (string, error) { return readAll(ctx, ext) },
		"simple":   func() (string, error) { return readAll(ctx, simple) },
		"named":    namedRead,
	} {
		got, err := read()
		if err != nil {
			t.Errorf("%s during the outage: %v", name, err)
			continue
		}
		if name != "named" && got != wantReads || name == "named" && got != "v7 8.75" {
			t.Errorf("%s during the outage: %q", name, got)
		}
	}
	_, err := ext.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('during')")
	if pgErrCode(err) != "08006" || !strings.Contains(err.Error(), "origin is unavailable") {
		t.Errorf("a write during the outage: %v, want ERROR 08006", err)
	}
	if got, err := readAll(ctx, ext); err != nil || got != wantReads {
		t.Errorf("extended after the failed write: %q %v", got, err)
	}
	if _, err := simple.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('during')"); pgErrCode(err) != "08006" {
		t.Errorf("a simple-protocol write during the outage: %v", err)
	}
	if got, err := readAll(ctx, simple); err != nil || got != wantReads {
		t.Errorf("simple after the failed write: %q %v", got, err)
	}

	// New logins during the outage: verified by pgaccel.
	fresh, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("a new login during the outage: %v", err)
	}
	if got, err := readAll(ctx, fresh); err != nil || got != wantReads {
		t.Errorf("a new session during the outage: %q %v", got, err)
	}
	fresh.Close(ctx)
	// A client of other startup parameters, not seen before: psql, with
	// its application_name and the client_encoding the origin reported to
	// pgx (which sends none).
	ps := startPsql(t, dsn+"&client_encoding="+url.QueryEscape(encoding))
	if got := ps.run("SELECT count(*), sum(id) FROM sess_orders"); got != "200|20100" {
		t.Errorf("psql's first login during the outage: %q", got)
	}
	if _, err := pgx.Connect(ctx, appDSN(a, sessUser, "wrong")); pgErrCode(err) != "28P01" {
		t.Errorf("wrong password during the outage: %v", err)
	}
	// An unknown role (none kept, and the origin cannot be asked): the
	// same 28P01 and message as a wrong password, after the same exchange,
	// so that an outage does not tell roles that logged in lately from
	// the rest.
	if _, err := pgx.Connect(ctx, appDSN(a, "no_such_role_2", "x")); pgErrCode(err) != "28P01" ||
		!strings.Contains(err.Error(), `password authentication failed for user "no_such_role_2"`) {
		t.Errorf("an unknown role during the outage: %v, want 28P01", err)
	}

	// The origin returns: the same sessions write again, with their
	// settings set up again on the new connection.
	if err := resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitOriginBack(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err = ext.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('after')")
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // within originRetryEvery of the last failure
	}
	if err != nil {
		t.Fatalf("a write after the origin returned: %v", err)
	}
	var app string
	if err := ext.QueryRow(ctx, "SELECT current_setting('application_name')").Scan(&app); err != nil || app != "sess-ext" {
		t.Errorf("the session's setting after reconnecting: %q %v", app, err)
	}
	if _, err := simple.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('after')"); err != nil {
		t.Errorf("a simple-protocol write after the origin returned: %v", err)
	}
	if got, err := namedRead(); err != nil || got != "v7 8.75" {
		t.Errorf("named after the origin returned: %q %v", got, err)
	}
	var notes string
	if err := originConn(t).QueryRow(ctx, "SELECT string_agg(note, ',' ORDER BY id) FROM sess_writes").Scan(&notes); err != nil || notes != "before,after,after" {
		t.Errorf("writes at the origin: %q %v", notes, err)
	}

	// pgaccel restarted during an outage, with auth.persist: logins and
	// reads work.
	ext.Close(ctx)
	simple.Close(ctx)
	named.Close(ctx)
	stopA()
	resume = origin.PauseDuring(t)
	b, _ := startProxyAuthApp(t, dataDir, "60s", false)
	c, err := pgx.Connect(ctx, appDSN(b, sessUser, sessPass))
	if err != nil {
		t.Fatalf("a login after a restart during the outage: %v", err)
	}
	// Its acceleration, from its file, serves once opened; the answers
	// reads need from the origin (the table's name on the path, the
	// role's privilege) were kept too, and the row description is worked
	// out (planner.Describe): reads are answered, new texts too.
	pgtest.WaitFor(t, "the acceleration serving after the restart", func() bool {
		st, _ := b.Registry.State("sess_orders")
		return st.Servable()
	})
	for sql, want := range map[string]int64{
		"SELECT count(*) FROM sess_orders":                     200,
		"SELECT count(*) FROM sess_orders WHERE id > 120":      80,
		"SELECT count(*) FROM public.sess_orders WHERE id > 7": 193,
	} {
		var n int64
		if err := c.QueryRow(ctx, sql).Scan(&n); err != nil || n != want {
			t.Errorf("%s after a restart during the outage: %d %v, want %d", sql, n, err, want)
		}
	}
	if got := routeCounts(t, b); got["accelerated"] != 3 {
		t.Errorf("routes after the restart: %v, want 3 accelerated", got)
	}
	c.Close(ctx)
	if _, err := pgx.Connect(ctx, appDSN(b, sessUser, "wrong")); pgErrCode(err) != "28P01" {
		t.Errorf("wrong password after a restart during the outage: %v", err)
	}
	for _, name := range []string{"auth-verifiers.json", "auth-logins.json", "auth-lookups.json"} {
		fi, err := os.Stat(filepath.Join(dataDir, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", name, fi.Mode(), err)
		}
		data, _ := os.ReadFile(filepath.Join(dataDir, name))
		if strings.Contains(string(data), sessPass) {
			t.Errorf("%s holds the password", name)
		}
	}
	if err := resume(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSessions_CredentialChanges: a password changed at the origin — the
// old one is refused within the cache's bound and the new one accepted; a
// role set NOLOGIN is refused.
func TestSessions_CredentialChanges(t *testing.T) {
	setupProxyAuth(t)
	a, _ := startProxyAuthApp(t, t.TempDir(), "1s", true)
	ctx := ctxT(t)
	c, err := pgx.Connect(ctx, appDSN(a, sessUser, sessPass))
	if err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	// Roles pgaccel cannot verify itself (an md5 verifier, none at all)
	// are the origin's to authenticate, as with auth.mode: origin.
	for _, role := range [][2]string{{pgtest.MD5User, pgtest.MD5Password}, {pgtest.TrustUser, ""}} {
		c, err := pgx.Connect(ctx, appDSN(a, role[0], role[1]))
		if err != nil {
			t.Errorf("%s through auth.mode proxy: %v", role[0], err)
			continue
		}
		var one int
		if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Errorf("%s: SELECT 1: %d %v", role[0], one, err)
		}
		c.Close(ctx)
	}
	if _, err := pgx.Connect(ctx, appDSN(a, pgtest.MD5User, "wrong")); pgErrCode(err) != "28P01" {
		t.Errorf("md5 role, wrong password: %v", err)
	}
	mustExec(t, fmt.Sprintf("SET password_encryption = 'scram-sha-256'; ALTER ROLE %s PASSWORD 'sess-pass-2'", sessUser))
	pgtest.WaitFor(t, "the old password refused", func() bool {
		c, err := pgx.Connect(ctx, appDSN(a, sessUser, sessPass))
		if err == nil {
			c.Close(ctx)
			return false
		}
		return pgErrCode(err) == "28P01"
	})
	pgtest.WaitFor(t, "the new password accepted", func() bool {
		c, err := pgx.Connect(ctx, appDSN(a, sessUser, "sess-pass-2"))
		if err != nil {
			return false
		}
		defer c.Close(ctx)
		got, err := readAll(ctx, c)
		return err == nil && got == wantReads
	})
	mustExec(t, fmt.Sprintf("ALTER ROLE %s NOLOGIN", sessUser))
	pgtest.WaitFor(t, "a NOLOGIN role refused", func() bool {
		c, err := pgx.Connect(ctx, appDSN(a, sessUser, "sess-pass-2"))
		if err == nil {
			c.Close(ctx)
			return false
		}
		return pgErrCode(err) == "28P01"
	})
}

// TestSessions_AcceleratedReadsHoldNoBackend: 500 sessions that only read
// accelerated datasets hold no origin backend (the first session of the
// role opened one, to learn what sessions start with).
func TestSessions_AcceleratedReadsHoldNoBackend(t *testing.T) {
	setupProxyAuth(t)
	a, _ := startProxyAuthApp(t, t.TempDir(), "60s", true)
	ctx := ctxT(t)
	dsn := appDSN(a, sessUser, sessPass)
	firstSession(t, a, dsn)

	const n = 500
	conns := openSessions(t, n, dsn, func(i int, c *pgx.Conn) error {
		if got, err := readAll(ctx, c); err != nil || got != wantReads {
			return fmt.Errorf("session %d: %q %v", i, got, err)
		}
		return nil
	})
	if got := heldBackends(t, a); got != 0 {
		t.Errorf("%d sessions reading accelerated datasets hold %d origin backends, want 0", n, got)
	}
	// A write takes one for its session only: the first session's, from
	// the pool.
	if _, err := conns[0].Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('one')"); err != nil {
		t.Fatal(err)
	}
	if got, pooled := originBackends(t, sessUser), pooledConns(t, a); got != 1 || pooled != 0 {
		t.Errorf("after one session wrote: %d origin backends, %d of them pooled, want 1 and 0", got, pooled)
	}
}

// TestSessions_WritersReleaseIdleBackends: 500 open sessions that each
// write (16 at a time) through an origin that allows 300 connections all
// succeed: with auth.origin_idle_timeout a session's origin connection is
// closed once it has been idle that long, so backends are held by the
// sessions writing now and those within the timeout, and none once all are
// idle. The same sessions write again afterwards (on new connections).
//
// The sessions are paced (each of the 16 writers pauses after a session)
// so that the backends the timeout lets them hold stay under the origin's
// limit on a machine of any speed: at most 16 sessions per pause, each
// holding its backend for about the timeout, plus the pool's poolMaxIdle.
// Unpaced, a fast machine runs enough sessions within one timeout to fill
// the origin, whose refusal (53300) is then the answer a session gets.
func TestSessions_WritersReleaseIdleBackends(t *testing.T) {
	setupProxyAuth(t)
	const idleTimeout, pause = 200 * time.Millisecond, 40 * time.Millisecond
	sessionsAuthExtra = fmt.Sprintf("  origin_idle_timeout: %s\n", idleTimeout)
	defer func() { sessionsAuthExtra = "" }()
	a, _ := startProxyAuthApp(t, t.TempDir(), "60s", true)
	ctx := ctxT(t)
	dsn := appDSN(a, sessUser, sessPass)
	const n = 500
	conns := make([]*pgx.Conn, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close(context.Background())
			}
		}
	}()
	// The sampler holds one connection of its own and stops however the
	// test ends (it must not touch t after the test has returned).
	sampler := originConn(t)
	var maxSeen int
	stop := make(chan struct{})
	sampled := make(chan struct{})
	stopSampler := sync.OnceFunc(func() { close(stop); <-sampled })
	defer stopSampler()
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			var k int
			if err := sampler.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE usename = $1`, sessUser).Scan(&k); err == nil && k > maxSeen {
				maxSeen = k
			}
		}
	}()
	for round := range 2 {
		forEachSession(t, n, func(i int) error {
			if conns[i] == nil {
				c, err := pgx.Connect(ctx, dsn)
				if err != nil {
					return err
				}
				conns[i] = c
			}
			c := conns[i]
			if _, err := c.Exec(ctx, "SET application_name = 'writer'"); err != nil {
				return fmt.Errorf("session %d: %w", i, err)
			}
			if _, err := c.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ($1)", fmt.Sprintf("w%d-%d", round, i)); err != nil {
				return fmt.Errorf("session %d, round %d: %w", i, round, err)
			}
			if got, err := readAll(ctx, c); err != nil || got != wantReads {
				return fmt.Errorf("session %d: %q %v", i, got, err)
			}
			time.Sleep(pause)
			return nil
		})
		pgtest.WaitFor(t, "every idle session's backend released", func() bool { return originBackends(t, sessUser) == 0 })
	}
	stopSampler()
	var writes int
	if err := originConn(t).QueryRow(ctx, "SELECT count(*) FROM sess_writes").Scan(&writes); err != nil || writes != 2*n {
		t.Errorf("writes at the origin: %d %v, want %d", writes, err, 2*n)
	}
	links := metricSums(t, a.Metrics, "pgaccel_origin_links_total", "event")
	t.Logf("%d sessions, 16 writing at a time: at most %d origin backends seen; origin links: %v", n, maxSeen, links)
	if links["reused"] == 0 || links["released"] == 0 {
		t.Errorf("no released connection was reused: %v", links)
	}
	if maxSeen >= n/2 {
		t.Errorf("%d backends for %d paced sessions: idle connections were not released", maxSeen, n)
	}
}

// psqlSession is an interactive psql fed through a pipe.
type psqlSession struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startPsql(t *testing.T, dsn string) *psqlSession {
	t.Helper()
	cmd := exec.Command(psqlPath(t), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=0", "-d", dsn)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGAPPNAME=psql")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	p := &psqlSession{t: t, cmd: cmd, stdin: stdin, out: bufio.NewReader(r)}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		r.Close()
	})
	return p
}

// run sends one statement and returns what psql printed for it.
func (p *psqlSession) run(sql string) string {
	p.t.Helper()
	out, ended := p.runMayEnd(sql)
	if ended {
		p.t.Fatalf("psql ended:\n%s", out)
	}
	return out
}

// runMayEnd is run for a statement after which psql may exit (its
// connection ended).
func (p *psqlSession) runMayEnd(sql string) (string, bool) {
	p.t.Helper()
	if _, err := fmt.Fprintf(p.stdin, "%s;\n\\echo __done__\n", strings.TrimSuffix(sql, ";")); err != nil {
		p.t.Fatalf("psql: %v", err)
	}
	var b strings.Builder
	for {
		line, err := p.out.ReadString('\n')
		if err != nil {
			return strings.TrimSpace(b.String() + line), true
		}
		if line == "__done__\n" {
			return strings.TrimSpace(b.String()), false
		}
		b.WriteString(line)
	}
}

// TestSessions_PsqlAndPointReadsThroughOutage: a psql session stays up
// through an origin outage and a restart, in both auth modes: accelerated
// reads keep coming (point reads too, which runtime.point_reads: origin
// sends to the origin while it answers), a write gets an error and the
// session goes on; with auth.mode proxy the same session writes again once
// the origin is back, and a cancel reaches its origin statement.
func TestSessions_PsqlAndPointReadsThroughOutage(t *testing.T) {
	setupProxyAuth(t)
	for _, mode := range []string{"origin", "proxy"} {
		t.Run(mode, func(t *testing.T) {
			a, _ := startSessionsApp(t, mode, "origin", t.TempDir(), "60s", true)
			dsn := appDSN(a, sessUser, sessPass)
			ps := startPsql(t, dsn)
			const count, point = "SELECT count(*) FROM sess_orders", "SELECT v FROM sess_orders WHERE id = 42"
			if got := ps.run(count); got != "200" {
				t.Fatalf("psql before the outage: %q", got)
			}
			if got := ps.run(point); got != "v42" {
				t.Fatalf("point read before the outage: %q", got)
			}
			before := routeCounts(t, a)

			resume := origin.PauseDuring(t)
			for i := range 3 {
				if got := ps.run(count); got != "200" {
					t.Errorf("psql read %d during the outage: %q", i, got)
				}
				if got := ps.run(point); got != "v42" {
					t.Errorf("psql point read %d during the outage: %q", i, got)
				}
			}
			if got := routeCounts(t, a); got["accelerated"]-before["accelerated"] != 6 {
				t.Errorf("accelerated during the outage: %v -> %v, want 6 more", before, got)
			}
			if got := ps.run("INSERT INTO sess_writes (note) VALUES ('psql')"); !strings.Contains(got, "origin is unavailable") {
				t.Errorf("psql write during the outage: %q", got)
			}
			if got := ps.run(count); got != "200" {
				t.Errorf("psql read after the failed write: %q", got)
			}
			if err := resume(context.Background()); err != nil {
				t.Fatal(err)
			}
			waitOriginBack(t)
			time.Sleep(originRetry)
			got, ended := ps.runMayEnd("INSERT INTO sess_writes (note) VALUES ('psql-after')")
			if mode == "proxy" {
				if ended {
					t.Fatalf("psql ended: %s", got)
				}
				if got != "" {
					t.Errorf("psql write after the origin returned: %q", got)
				}
				if got := ps.run(point); got != "v42" {
					t.Errorf("point read after the origin returned: %q", got)
				}
				// A cancel reaches the statement on the new origin connection.
				c, err := pgx.Connect(ctxT(t), dsn)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close(context.Background())
				errc := make(chan error, 1)
				go func() {
					_, err := c.Exec(context.Background(), "SELECT pg_sleep(30)")
					errc <- err
				}()
				pgtest.WaitFor(t, "the sleeping statement", func() bool {
					n, _ := originCount(`SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'`)
					return n > 0
				})
				if err := c.PgConn().CancelRequest(ctxT(t)); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-errc:
					if pgErrCode(err) != "57014" {
						t.Errorf("after a cancel: %v, want 57014", err)
					}
				case <-time.After(20 * time.Second):
					t.Error("the cancel did not reach the origin statement")
				}
				return
			}
			// auth.mode origin: pgaccel cannot log the session in again;
			// the statement that needs the origin ends it, so that the
			// client reconnects.
			if !ended || !strings.Contains(got, "cannot log in again") {
				t.Errorf("origin mode, a write after the origin returned: %q (psql ended: %v)", got, ended)
			}
		})
	}
}

// originRetry is how long after a failed connect sessions try the origin
// again (originlink.RetryEvery), plus a margin.
const originRetry = 1200 * time.Millisecond

// TestSessions_HungOrigin: an origin that holds connections without
// answering (a network partition, a frozen host: the relay stops
// forwarding) rather than refusing them. With auth.mode proxy, open
// sessions keep getting accelerated answers; once the cached verifier and
// login have expired, a new login still gets in within a client's connect
// timeout (the verifier's lookup and the origin login are waited for
// briefly, then the cached ones serve) and reads; a wrong password is
// refused; a write of a session with no origin connection gets ERROR
// 08006 within pgaccel's connect timeout rather than hanging; and once
// the origin answers again, every session writes. (A statement sent on a
// session's live connection to such an origin waits, as it would without
// pgaccel: hung and slow cannot be told apart.)
func TestSessions_HungOrigin(t *testing.T) {
	setupProxyAuth(t)
	relay, err := tcprelay.Start(origin.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	a := startAppText(t, fmt.Sprintf(`origin:
  dsn: %q
server:
  listen: 127.0.0.1:0
admin:
  listen: 127.0.0.1:0
auth:
  mode: proxy
  cache_ttl: 2s
  max_stale: 1h
runtime:
  data_dir: %q
datasets:
  - from: postgres:public.sess_orders
    acceleration:
      mode: file
`, strings.Replace(origin.SuperDSN(), origin.Addr(), relay.Addr(), 1), t.TempDir()))
	t.Cleanup(func() { shutdownApp(t, a) })
	ctx := ctxT(t)
	if err := a.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	dsn := appDSN(a, sessUser, sessPass)
	scan := func(c *pgx.Conn, timeout time.Duration) (string, error) {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var n, sum int64
		err := c.QueryRow(rctx, "SELECT count(*), sum(id) FROM sess_orders").Scan(&n, &sum)
		return fmt.Sprintf("%d %d", n, sum), err
	}
	const want = "200 20100"
	ext := connect(t, dsn)
	simple := connectSimple(t, dsn)
	for _, c := range []*pgx.Conn{ext, simple} {
		if got, err := scan(c, 10*time.Second); err != nil || got != want {
			t.Fatalf("before the stall: %q %v", got, err)
		}
		// A write: the session has an origin connection (one that
		// started from a saved login would otherwise have none).
		if _, err := c.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('before')"); err != nil {
			t.Fatal(err)
		}
	}

	relay.StallUpAfter(0)
	relay.StallDownAfter(0)
	// A wrong password while the verifier is fresh: the proof fails, the
	// origin is asked again for the role's verifier (a changed password)
	// but not waited for long.
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	_, err = pgx.Connect(cctx, appDSN(a, sessUser, "wrong"))
	cancel()
	if pgErrCode(err) != "28P01" {
		t.Errorf("wrong password, fresh verifier, while the origin hangs: %v, want 28P01", err)
	}
	time.Sleep(2500 * time.Millisecond) // past cache_ttl: verifier and login expired
	for name, c := range map[string]*pgx.Conn{"extended": ext, "simple": simple} {
		if got, err := scan(c, 10*time.Second); err != nil || got != want {
			t.Errorf("%s session while the origin hangs: %q %v", name, got, err)
		}
	}
	var fresh *pgx.Conn
	for i := range 2 {
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second) // a client's connect timeout
		c, err := pgx.Connect(cctx, dsn)
		cancel()
		if err != nil {
			t.Fatalf("login %d while the origin hangs: %v", i, err)
		}
		defer c.Close(context.Background())
		if got, err := scan(c, 10*time.Second); err != nil || got != want {
			t.Errorf("new session %d while the origin hangs: %q %v", i, got, err)
		}
		fresh = c
	}
	cctx, cancel = context.WithTimeout(ctx, 15*time.Second)
	_, err = pgx.Connect(cctx, appDSN(a, sessUser, "wrong"))
	cancel()
	if pgErrCode(err) != "28P01" {
		t.Errorf("wrong password while the origin hangs: %v, want 28P01", err)
	}
	// A session that started without the origin opens a connection for
	// its write, which the origin does not answer: 08006 once pgaccel's
	// connect timeout has passed, and the session goes on.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = fresh.Exec(wctx, "INSERT INTO sess_writes (note) VALUES ('during')")
	cancel()
	if pgErrCode(err) != "08006" {
		t.Errorf("a write while the origin hangs: %v, want ERROR 08006", err)
	}
	if got, err := scan(fresh, 10*time.Second); err != nil || got != want {
		t.Errorf("after the failed write: %q %v", got, err)
	}

	// The origin answers again (the relay cuts the connections it held:
	// the two sessions that had one go on without it, as they were idle).
	relay.Release()
	pgtest.WaitFor(t, "the cut connections noticed", func() bool {
		return metricSums(t, a.Metrics, "pgaccel_origin_links_total", "event")["detached"] >= 2
	})
	for name, c := range map[string]*pgx.Conn{"extended": ext, "simple": simple, "new": fresh} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err = c.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('after')")
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("%s session: a write once the origin answers again: %v", name, err)
		}
	}
	if n, err := originCount("SELECT count(*) FROM sess_writes WHERE note = 'after'"); err != nil || n != 3 {
		t.Errorf("writes at the origin: %d %v", n, err)
	}
}

// firstSession runs the first session of sess_user's login key, which
// opens an origin connection to learn what sessions start with, and waits
// until its backend is gone.
func firstSession(t *testing.T, a *app.App, dsn string) {
	t.Helper()
	ctx := ctxT(t)
	first, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(ctx, first); err != nil || got != wantReads {
		t.Fatalf("first session: %q %v", got, err)
	}
	first.Close(ctx)
	pgtest.WaitFor(t, "the first session's backend gone to the pool", func() bool { return heldBackends(t, a) == 0 })
}

// heldBackends counts sess_user's origin backends that sessions hold: not
// those waiting idle in pgaccel's pool (pgaccel_origin_pool_connections),
// which no session holds.
func heldBackends(t *testing.T, a *app.App) int {
	t.Helper()
	return originBackends(t, sessUser) - pooledConns(t, a)
}

// pooledConns is how many idle origin connections pgaccel's pool keeps.
func pooledConns(t *testing.T, a *app.App) int {
	t.Helper()
	return int(metricSums(t, a.Metrics, "pgaccel_origin_pool_connections")[""])
}

// openSessions opens n sessions (forEachSession), each checked by use,
// closed when the test ends.
func openSessions(t *testing.T, n int, dsn string, use func(i int, c *pgx.Conn) error) []*pgx.Conn {
	t.Helper()
	ctx := ctxT(t)
	conns := make([]*pgx.Conn, n)
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close(context.Background())
			}
		}
	})
	forEachSession(t, n, func(i int) error {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		conns[i] = c
		return use(i, c)
	})
	return conns
}

// TestSessions_EndedSessionsPoolTheirConnection: with auth.mode proxy, a
// session that ends idle leaves its origin connection to the next session
// of its role, database and startup parameters, as pgbouncer's session
// pooling does, reset: the next session gets the same backend with none of
// the first one's settings, prepared statements, temporary tables, LISTENs
// or advisory locks, and its own application_name. A session that ends
// inside a transaction does not (its backend ends, the transaction rolled
// back), and a pooled connection the origin ended is passed over. With a
// dataset (sessions decode every message) and without (pass-through).
func TestSessions_EndedSessionsPoolTheirConnection(t *testing.T) {
	setupProxyAuth(t)
	for _, withDataset := range []bool{true, false} {
		t.Run(fmt.Sprintf("dataset=%t", withDataset), func(t *testing.T) {
			var a *app.App
			if withDataset {
				a, _ = startProxyAuthApp(t, t.TempDir(), "60s", true)
			} else {
				a = startAppText(t, fmt.Sprintf("origin:\n  dsn: %q\nserver:\n  listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\nauth:\n  mode: proxy\nruntime:\n  data_dir: %q\n",
					origin.SuperDSN(), t.TempDir()))
				t.Cleanup(func() { shutdownApp(t, a) })
			}
			ctx := ctxT(t)
			dsn := appDSN(a, sessUser, sessPass)
			connect := func(appName string) *pgx.Conn {
				t.Helper()
				cfg, err := pgx.ParseConfig(dsn)
				if err != nil {
					t.Fatal(err)
				}
				if appName != "" {
					cfg.RuntimeParams["application_name"] = appName
				}
				return connectConfig(t, cfg)
			}
			count := func(c *pgx.Conn, sql string) int {
				t.Helper()
				var n int
				if err := c.QueryRow(ctx, sql, pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				return n
			}
			pid := func(c *pgx.Conn) int { return count(c, "SELECT pg_backend_pid()") }
			waitPooled := func(want int) {
				t.Helper()
				pgtest.WaitFor(t, fmt.Sprintf("%d pooled connection(s)", want), func() bool { return pooledConns(t, a) == want })
			}

			// A session leaves state of every kind DISCARD ALL undoes.
			c1 := connect("first")
			for _, sql := range []string{
				"SET work_mem = '7MB'", "PREPARE p1 AS SELECT 1", "CREATE TEMP TABLE sess_tmp (x int)",
				"LISTEN sess_channel", "SELECT pg_advisory_lock(4242)", "INSERT INTO sess_writes (note) VALUES ('pooled-1')",
			} {
				if _, err := c1.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
			}
			pid1 := pid(c1)
			c1.Close(ctx)
			waitPooled(1)
			if got := originBackends(t, sessUser); got != 1 {
				t.Errorf("after the first session ended: %d origin backends, want its 1, pooled", got)
			}

			c2 := connect("second")
			if got := pid(c2); got != pid1 {
				t.Errorf("the second session runs on backend %d, want the first one's %d (pooled)", got, pid1)
			}
			for sql, want := range map[string]int{
				"SELECT count(*) FROM pg_settings WHERE source = 'session' AND name <> 'application_name'":           0,
				"SELECT count(*) FROM pg_prepared_statements":                                                        0,
				"SELECT count(*) FROM pg_class WHERE relname = 'sess_tmp'":                                           0,
				"SELECT count(*) FROM pg_listening_channels()":                                                       0,
				"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()":               0,
				"SELECT count(*) FROM pg_stat_activity WHERE pid = pg_backend_pid() AND application_name = 'second'": 1,
				"SELECT count(*) FROM pg_settings WHERE name = 'work_mem' AND source <> 'session'":                   1,
			} {
				if got := count(c2, sql); got != want {
					t.Errorf("on the pooled connection: %s = %d, want %d", sql, got, want)
				}
			}
			if got := c2.PgConn().ParameterStatus("application_name"); got != "second" {
				t.Errorf("the second session was told application_name %q, want %q", got, "second")
			}
			// It ends inside a transaction that wrote: its backend ends,
			// and the write with it.
			if _, err := c2.Exec(ctx, "BEGIN", pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatal(err)
			}
			if _, err := c2.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('uncommitted')", pgx.QueryExecModeSimpleProtocol); err != nil {
				t.Fatal(err)
			}
			c2.Close(ctx)
			pgtest.WaitFor(t, "the backend of a session that ended in a transaction gone", func() bool { return originBackends(t, sessUser) == 0 })
			if got := pooledConns(t, a); got != 0 {
				t.Errorf("%d pooled connections after a session ended in a transaction, want 0", got)
			}
			if n, err := originCount(`SELECT count(*) FROM sess_writes WHERE note = 'uncommitted'`); err != nil || n != 0 {
				t.Errorf("the write of a transaction that never committed: %d rows %v", n, err)
			}

			// A pooled connection whose backend the origin ended is passed
			// over: the next session logs in anew.
			c3 := connect("")
			pid3 := pid(c3)
			c3.Close(ctx)
			waitPooled(1)
			mustExec(t, fmt.Sprintf("SELECT pg_terminate_backend(%d)", pid3))
			pgtest.WaitFor(t, "the pooled backend ended", func() bool { return originBackends(t, sessUser) == 0 })
			c4 := connect("")
			if got := pid(c4); got == pid3 || got == 0 {
				t.Errorf("after its pooled backend ended, a session runs on backend %d (ended: %d)", got, pid3)
			}
			if got, err := readAll(ctx, c4); err != nil || got != wantReads {
				t.Errorf("reads after the pooled backend ended: %q %v", got, err)
			}
			c4.Close(ctx)
			links := metricSums(t, a.Metrics, "pgaccel_origin_links_total", "event")
			if links["reused"] < 1 {
				t.Errorf("origin links: %v, want a reused one", links)
			}
		})
	}
}

// TestSessions_KilledAndRestartedDuringOutage: with auth.persist, a
// pgaccel killed (SIGKILL) a few seconds after a role's first read, and
// restarted while the origin is down, logs the role in and answers its
// reads, a new text too: the verifiers, what sessions start with, and the
// origin's answers about names and privileges (auth-lookups.json, written
// within a second of a new answer) were on disk already.
func TestSessions_KilledAndRestartedDuringOutage(t *testing.T) {
	setupProxyAuth(t)
	bin := pgaccelBinary(t)
	listen, adminAddr := freeAddr(t), freeAddr(t)
	cfg := writeConfig(t, fmt.Sprintf(`origin:
  dsn: ${env:TEST_ORIGIN_DSN}
server:
  listen: %s
admin:
  listen: %s
auth:
  mode: proxy
  max_stale: 1h
  persist: true
runtime:
  data_dir: %s
datasets:
  - from: postgres:public.sess_orders
    acceleration:
      mode: file
`, listen, adminAddr, t.TempDir()))
	env := []string{"TEST_ORIGIN_DSN=" + origin.SuperDSN(), "PGACCEL_ADMIN_TOKEN="}
	dsn := "postgres://" + sessUser + ":" + sessPass + "@" + listen + "/" + origin.Database + "?sslmode=disable"
	count := func(sql string) (int64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return 0, err
		}
		defer c.Close(ctx)
		var n int64
		err = c.QueryRow(ctx, sql).Scan(&n)
		return n, err
	}
	p := startPgaccel(t, bin, cfg, env...)
	// Ready first, so that the first read is the acceleration's (before,
	// the origin answers it, and asks nothing a restart could keep).
	pgtest.WaitFor(t, "pgaccel ready", func() bool {
		resp, err := http.Get("http://" + adminAddr + "/v1/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	pgtest.WaitFor(t, "a first accelerated read", func() bool {
		n, err := count("SELECT count(*) FROM sess_orders")
		return err == nil && n == 200
	})
	time.Sleep(2500 * time.Millisecond) // past the lookups' first write
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	p.done <- nil // for startPgaccel's cleanup

	resume := origin.PauseDuring(t)
	defer func() {
		if err := resume(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitOriginBack(t)
	}()
	q := startPgaccel(t, bin, cfg, env...)
	var n int64
	var err error
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last error: %v\npgaccel's log:\n%s", err, q.stderr.String())
		}
	})
	// The first login as soon as pgaccel listens, before its dataset is
	// attached: the login waits for that (proxy.Config.Attached) and its
	// read is answered (it got 08006 in the first second before).
	pgtest.WaitFor(t, "pgaccel listening after the restart", func() bool {
		c, err := net.DialTimeout("tcp", listen, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	if n, err = count("SELECT count(*) FROM sess_orders WHERE id > 150"); err != nil || n != 50 {
		t.Errorf("the first read after the restart during the outage: %d, %v; want 50", n, err)
	}
	if _, err := pgx.Connect(ctxT(t), "postgres://"+sessUser+":wrong@"+listen+"/"+origin.Database+"?sslmode=disable"); pgErrCode(err) != "28P01" {
		t.Errorf("a wrong password after the restart: %v", err)
	}
}

// Point reads in the extended protocol, which runtime.point_reads: origin
// sends to the origin: in pgx's exec mode (an unnamed Parse, Bind,
// Describe and Execute each time, as pgbench -M extended), once one has
// been planned the next Parses of the shape make origin-only statements
// (keepOrigin); in its default mode (a named statement prepared once, as
// pgbench -M prepared) the statement becomes one after its first Execute
// (keepStmtOrigin). The origin lane relays them. Through an outage the kept decision
// no longer holds: the point reads are answered by the acceleration, but
// the first, sent on the connection the origin has just dropped; after it
// they go to the origin again. The role never had an accelerated read
// before the outage: its privilege was looked up when the decision was
// kept (prefetchPrivileges), else the acceleration could not check it
// during the outage and the stand-in would answer 08006.
func TestSessions_ExtendedPointReadsThroughOutage(t *testing.T) {
	setupProxyAuth(t)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) { extendedPointReadsThroughOutage(t, mode) })
	}
}

func extendedPointReadsThroughOutage(t *testing.T, mode pgx.QueryExecMode) {
	a, _ := startSessionsApp(t, "proxy", "origin", t.TempDir(), "60s", true)
	c, err := pgx.Connect(ctxT(t), appDSN(a, sessUser, sessPass))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	trips := func() float64 { return metricSums(t, a.Metrics, "pgaccel_event_loop_lane_round_trips_total")[""] }
	read := func(id int) error {
		var v string
		if err := c.QueryRow(ctxT(t), "SELECT v FROM sess_orders WHERE id = $1", mode, id).Scan(&v); err != nil {
			return err
		}
		if want := fmt.Sprintf("v%d", id); v != want {
			return fmt.Errorf("point read of %d: %q, want %q", id, v, want)
		}
		return nil
	}
	start := trips()
	for i := range 200 {
		if err := read(1 + i%150); err != nil {
			t.Fatal(err)
		}
	}
	if got := trips() - start; got < 200-64-10 {
		t.Errorf("the lane took %v of 200 extended-protocol point reads", got)
	}

	before := routeCounts(t, a)
	resume := origin.PauseDuring(t)
	failed := 0
	for i := range 6 {
		if err := read(40 + i); err != nil {
			if failed++; failed > 1 || pgErrCode(err) != "08006" {
				t.Errorf("point read %d during the outage: %v", i, err)
			}
		}
	}
	if got := routeCounts(t, a); got[acc]-before[acc] < 5 {
		t.Errorf("accelerated during the outage: %v -> %v, want 5 more", before, got)
	}
	if err := resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitOriginBack(t)
	time.Sleep(originRetry)
	before = routeCounts(t, a)
	for i := range 20 {
		if err := read(60 + i); err != nil {
			t.Fatalf("point read %d after the outage: %v", i, err)
		}
	}
	if got := routeCounts(t, a); got[org]-before[org] != 20 {
		t.Errorf("origin point reads after the outage: %v -> %v, want 20 more", before, got)
	}
}
