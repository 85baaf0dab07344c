package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgaccel/pgaccel/integration/tcprelay"
	"github.com/pgaccel/pgaccel/snapshot"
)

// Acceleration snapshots between processes of the built binary (issue 18,
// "Must show"): a writer that refreshes from the origin and publishes, and
// a reader (refresh_mode: snapshot) that only ever reads the snapshot
// location. Each reaches versitygw through its own tcprelay, so a transfer
// can be frozen part-way and the process killed in the middle of it.

// fleetProc is one pgaccel process of a test.
type fleetProc struct {
	t         *testing.T
	name      string
	cfg       string
	dataDir   string
	pg, admin string
	cmd       *exec.Cmd
	log       *syncBuffer
}

// newFleetProc writes the config of a process with its own ports and data
// dir: originDSN, the snapshots block (location, params as YAML lines)
// and one dataset of table with the acceleration lines acc.
func newFleetProc(t *testing.T, name, originDSN, location, params, table, acc string) *fleetProc {
	t.Helper()
	p := &fleetProc{t: t, name: name, dataDir: t.TempDir(), pg: freeAddr(t), admin: freeAddr(t)}
	body := fleetConfig(originDSN, p.pg, p.admin, p.dataDir, location, params, table, acc)
	p.cfg = writeConfig(t, body)
	t.Cleanup(func() {
		if p.cmd != nil && p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

// start runs the binary and waits until /v1/ready says 200.
func (p *fleetProc) start() {
	t := p.t
	t.Helper()
	p.log = &syncBuffer{}
	p.cmd = exec.Command(pgaccelBinary(t), "run", "-c", p.cfg, "-log-format", "json")
	p.cmd.Env = os.Environ()
	p.cmd.Stderr = p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get("http://" + p.admin + "/v1/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not get ready:\n%s", p.name, p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the process at once (SIGKILL), as a crash or an OOM kill does.
func (p *fleetProc) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	_ = p.cmd.Wait()
}

// refresh asks the process for an on-demand refresh of dataset.
func (p *fleetProc) refresh(dataset string) {
	p.t.Helper()
	resp, err := http.Post("http://"+p.admin+"/v1/datasets/"+dataset+"/acceleration/refresh", "application/json", nil)
	if err != nil {
		p.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		p.t.Fatalf("%s: refresh of %s: %s", p.name, dataset, resp.Status)
	}
}

// count is the table's row count through the process, and how it was
// routed.
func (p *fleetProc) count(table string) (int64, string) {
	p.t.Helper()
	ctx := ctxT(p.t)
	c, err := pgx.Connect(ctx, "postgres://"+appUser+":"+appPass+"@"+p.pg+"/"+origin.Database+"?sslmode=disable")
	if err != nil {
		p.t.Fatalf("%s: %v\n%s", p.name, err, p.log.String())
	}
	defer c.Close(context.Background())
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		p.t.Fatalf("%s: %v", p.name, err)
	}
	return n, lastRoute(p.t, c, true)
}

// waitCount waits until the process answers want rows from its
// acceleration.
func (p *fleetProc) waitCount(table string, want int64) {
	p.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n, route := p.count(table)
		if n == want && strings.HasPrefix(route, "accelerated") {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: %d rows (%s), want %d from the acceleration\n%s", p.name, n, route, want, p.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stays checks, for a while, that the process keeps answering want rows
// from its acceleration.
func (p *fleetProc) stays(table string, want int64, d time.Duration) {
	p.t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if n, route := p.count(table); n != want || !strings.HasPrefix(route, "accelerated") {
			p.t.Fatalf("%s: %d rows (%s), want %d from the acceleration still\n%s", p.name, n, route, want, p.log.String())
		}
	}
}

// waitLog waits for a log line containing every one of parts.
func (p *fleetProc) waitLog(parts ...string) {
	p.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		for _, line := range strings.Split(p.log.String(), "\n") {
			ok := true
			for _, s := range parts {
				ok = ok && strings.Contains(line, s)
			}
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s never logged %q:\n%s", p.name, parts, p.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFile waits until a file matches pattern.
func waitFile(t *testing.T, pattern string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no file %s", pattern)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// snapProcTable (re)creates the test table with n rows of about 70 bytes
// of incompressible text each, readable by app and by reader.
func snapProcTable(t *testing.T, table, reader string, n int) {
	t.Helper()
	mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
		CREATE TABLE %[1]s (id int PRIMARY KEY, v text);
		INSERT INTO %[1]s SELECT g, md5(g::text) || md5((g * 7)::text) FROM generate_series(1, %[3]d) g;
		GRANT SELECT ON %[1]s TO %[2]s, %[4]s`, table, appUser, n, reader))
}

func addRows(t *testing.T, table string, from, n int) {
	t.Helper()
	mustExec(t, fmt.Sprintf("INSERT INTO %s SELECT g, md5(g::text) FROM generate_series(%d, %d) g", table, from, from+n-1))
}

// TestSnapshots_ProcessesThroughFailures: the writer and the reader are
// processes; the reader bootstraps, serves, follows, and never queries
// the source (pg_stat_statements); the writer killed during an upload and
// the reader killed during a download leave the previous snapshot current
// and served; a corrupted object is refused by its checksum; a schema
// change is refused with the reason, the old snapshot still served.
func TestSnapshots_ProcessesThroughFailures(t *testing.T) {
	if !origin.HasStatStatements() {
		t.Fatal("this test reads the origin's pg_stat_statements, which this PostgreSQL installation lacks: " +
			"apt-get install postgresql (Debian ships it in the server package) or postgresql-contrib")
	}
	srv, store := s3Fleet(t, "procfleet")
	const table = "snap_proc"
	mustExec(t, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
		DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'snap_reader') THEN
			CREATE ROLE snap_reader LOGIN PASSWORD 'reader-pass'; END IF; END $$`)
	snapProcTable(t, table, "snap_reader", 150000)
	mustExec(t, "SELECT pg_stat_statements_reset()")
	u, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	relay := func() *tcprelay.Relay {
		r, err := tcprelay.Start(u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	wRelay, rRelay := relay(), relay()
	params := func(r *tcprelay.Relay) string { return s3Params("http://"+r.Addr(), srv.Region) }
	loc := "s3://procfleet/snaps/"
	writer := newFleetProc(t, "writer", origin.SuperDSN(), loc, params(wRelay), table,
		"      mode: file\n      primary_key: id\n      snapshots: create_only\n")
	readerDSN := origin.DSN("snap_reader", "reader-pass")
	reader := newFleetProc(t, "reader", readerDSN, loc, params(rRelay), table,
		"      mode: file\n      refresh_mode: snapshot\n      snapshots: enabled\n      refresh_check_interval: 1s\n")
	current := func(not string) snapshot.Snapshot {
		t.Helper()
		return currentSnapshot(t, store, table, not)
	}

	// The writer loads and publishes; the reader bootstraps from it.
	writer.start()
	s1 := current("")
	reader.start()
	reader.waitCount(table, 150000)

	// A refresh at the writer: the reader follows.
	addRows(t, table, 150001, 1000)
	writer.refresh(table)
	s2 := current(s1.ID)
	reader.waitCount(table, 151000)
	reader.waitLog(`"loaded a newer snapshot"`, s2.ID)

	// The writer is killed during an upload: the metadata still names s2,
	// which the reader keeps serving and which still downloads whole.
	addRows(t, table, 151001, 1000)
	wRelay.StallUpAfter(1 << 20)
	writer.refresh(table)
	select {
	case <-wRelay.Stalled():
	case <-time.After(time.Minute):
		t.Fatalf("the writer's upload never started:\n%s", writer.log.String())
	}
	waitFile(t, filepath.Join(writer.dataDir, ".snapshots", "*"))
	writer.kill()
	wRelay.Release()
	if cur := current(""); cur.ID != s2.ID {
		t.Fatalf("after the writer died uploading, the current snapshot is %s, want %s", cur.ID, s2.ID)
	}
	if err := snapshot.Fetch(ctxT(t), store, s2, filepath.Join(t.TempDir(), "s2.duckdb")); err != nil {
		t.Fatalf("the current snapshot after the writer died: %v", err)
	}
	reader.stays(table, 151000, 2*time.Second)

	// The writer restarts: it serves its file, cleans the copy it left.
	writer.start()
	if left, _ := filepath.Glob(filepath.Join(writer.dataDir, ".snapshots", "*")); len(left) != 0 {
		t.Fatalf("the restarted writer left %v", left)
	}

	// The reader is killed during a download: restarted (its link still
	// frozen), it serves the snapshot it had; once the link is back it
	// loads the newer one.
	rRelay.StallDownAfter(1 << 20)
	writer.refresh(table)
	s3 := current(s2.ID)
	select {
	case <-rRelay.Stalled():
	case <-time.After(time.Minute):
		t.Fatalf("the reader's download never started:\n%s", reader.log.String())
	}
	// The reader has the first bytes; once it has opened its download
	// file (a loaded machine may take a moment), it dies.
	waitFile(t, filepath.Join(reader.dataDir, ".snapshots", "*.download-*"))
	reader.kill()
	reader.start()
	reader.stays(table, 151000, time.Second)
	if left, _ := filepath.Glob(filepath.Join(reader.dataDir, ".snapshots", "*.download-*")); len(left) != 0 {
		t.Fatalf("the restarted reader kept %v", left)
	}
	rRelay.Release()
	reader.waitCount(table, 152000)
	reader.waitLog(`"loaded a newer snapshot"`, s3.ID)

	// A corrupted object: refused by its checksum, the old one served.
	rRelay.StallDownAfter(0)
	addRows(t, table, 152001, 500)
	writer.refresh(table)
	s4 := current(s3.ID)
	obj := filepath.Join(srv.Dir, "procfleet", "snaps", filepath.FromSlash(s4.Object))
	f, err := os.OpenFile(obj, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("corrupted"), s4.Size/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rRelay.Release()
	reader.waitLog("SHA-256", s4.ID)
	reader.stays(table, 152000, time.Second)
	if code, body := adminGet(t, reader.admin, "/metrics", ""); code != 200 ||
		!strings.Contains(body, `dataset_acceleration_snapshot_failures_total{dataset="snap_proc",operation="load",reason="checksum"}`) {
		t.Fatalf("the reader's metrics do not count the checksum failure: %d\n%s", code, body)
	}

	// A schema change at the writer: the reader refuses the snapshot,
	// says why, and keeps serving the one it has.
	mustExec(t, "ALTER TABLE "+table+" ADD COLUMN extra int")
	writer.refresh(table)
	s5 := current(s4.ID)
	reader.waitLog(s5.ID, "is not loaded", "columns")
	reader.stays(table, 152000, time.Second)

	// The reader never read the source: no statement of its role at the
	// origin names the table, while the writer's COPYs do.
	var readerStmts, writerCopies int
	if err := connect(t, origin.SuperDSN()).QueryRow(ctxT(t), `SELECT
			count(*) FILTER (WHERE r.rolname = 'snap_reader' AND s.query ILIKE '%snap_proc%'),
			count(*) FILTER (WHERE r.rolname = $1 AND s.query ILIKE 'COPY%snap_proc%')
		FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid`, origin.SuperUser).Scan(&readerStmts, &writerCopies); err != nil {
		t.Fatal(err)
	}
	if readerStmts != 0 || writerCopies == 0 {
		t.Fatalf("pg_stat_statements: %d statements of the reader's role name the table (want 0), %d COPYs of the writer (want some)", readerStmts, writerCopies)
	}
}

// The same fleet over a file:// location (a directory both processes
// reach, as a shared volume would be): the reader bootstraps, follows the
// writer, and refuses a corrupted object by its checksum.
func TestSnapshots_ProcessesFileLocation(t *testing.T) {
	const table = "snap_proc_file"
	snapProcTable(t, table, appUser, 20000)
	dir := t.TempDir()
	loc := "file://" + dir
	writer := newFleetProc(t, "writer", origin.SuperDSN(), loc, "", table,
		"      mode: file\n      primary_key: id\n      snapshots: create_only\n")
	reader := newFleetProc(t, "reader", origin.SuperDSN(), loc, "", table,
		"      mode: file\n      refresh_mode: snapshot\n      snapshots: enabled\n      refresh_check_interval: 1s\n")
	store, err := snapshot.Open(ctxT(t), loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	writer.start()
	s1 := currentSnapshot(t, store, table, "")
	reader.start()
	reader.waitCount(table, 20000)
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(s1.Object))); err != nil {
		t.Fatalf("the snapshot object is not in the directory: %v", err)
	}

	addRows(t, table, 20001, 100)
	writer.refresh(table)
	s2 := currentSnapshot(t, store, table, s1.ID)
	reader.waitCount(table, 20100)
	reader.waitLog(`"loaded a newer snapshot"`, s2.ID)

	// The next snapshot is corrupted before the reader can load it (the
	// reader is stopped meanwhile): it is refused, the last one served.
	stopCommand(t, reader.cmd, syscall.SIGTERM, 30*time.Second, reader.log)
	addRows(t, table, 20101, 100)
	writer.refresh(table)
	s3 := currentSnapshot(t, store, table, s2.ID)
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(s3.Object)), make([]byte, s3.Size), 0o644); err != nil {
		t.Fatal(err)
	}
	reader.start()
	reader.waitLog("snapshot refused", "SHA-256", s3.ID)
	reader.stays(table, 20100, time.Second)
}
