package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// Crash tests of refresh_mode: changes: the real `pgaccel run` binary
// follows a table that a background workload keeps changing, is killed
// with SIGKILL at random points of its initial load and of its stream,
// restarted on the same data_dir, and must end equal to the origin with
// nothing lost or doubled. PGACCEL_CDC_CRASH_SEEDS sets how many seeds
// TestCDC_CrashAtRandomPoints runs (default 2; the long run takes 20 or
// more); PGACCEL_CDC_SEED the first seed.

// cdcRig is one pgaccel configuration (a data_dir kept across restarts)
// following one table.
type cdcRig struct {
	t             *testing.T
	bin, cfg      string
	env           []string
	listen, admin string
	dataDir       string
	table         string
}

func newCDCRig(t *testing.T, table string) *cdcRig {
	t.Helper()
	r := &cdcRig{t: t, bin: pgaccelBinary(t), listen: freeAddr(t), admin: freeAddr(t), dataDir: t.TempDir(), table: table}
	r.env = []string{"TEST_ORIGIN_DSN=" + origin.SuperDSN(), "PGACCEL_ADMIN_TOKEN="}
	r.cfg = filepath.Join(t.TempDir(), "pgaccel.yaml")
	body := fmt.Sprintf("origin:\n  dsn: ${env:TEST_ORIGIN_DSN}\nserver:\n  listen: %s\nadmin:\n  listen: %s\nruntime:\n  data_dir: %s\ndatasets:\n%s",
		r.listen, r.admin, r.dataDir, changesDatasetYAML(table))
	if err := os.WriteFile(r.cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *cdcRig) start() *pgaccelProcess { return startPgaccel(r.t, r.bin, r.cfg, r.env...) }

// kill ends p with SIGKILL and waits until it is gone.
func (r *cdcRig) kill(p *pgaccelProcess) {
	r.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		r.t.Fatal(err)
	}
	<-p.done
	p.done <- nil // for startPgaccel's cleanup
}

// exited fails the test when p has exited.
func (r *cdcRig) exited(p *pgaccelProcess) {
	r.t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		r.t.Fatalf("pgaccel exited (%v):\n%s", err, p.stderr.String())
	default:
	}
}

// status is the dataset in GET /v1/datasets?status=true (nil while the
// admin port does not answer).
func (r *cdcRig) status() map[string]any {
	r.t.Helper()
	if !r.adminUp() {
		return nil
	}
	return datasetStatus(r.t, r.admin, "", r.table)
}

func (r *cdcRig) adminUp() bool {
	c, err := net.DialTimeout("tcp", r.admin, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// replication is the dataset's stream status (nil when none).
func (r *cdcRig) replication() map[string]any {
	d := r.status()
	if d == nil {
		return nil
	}
	rep, _ := d["replication"].(map[string]any)
	return rep
}

// waitStreaming waits until p streams the dataset's changes (its initial
// load done, maybe not caught up yet).
func (r *cdcRig) waitStreaming(p *pgaccelProcess) {
	r.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		r.exited(p)
		if rep := r.replication(); rep != nil && rep["streaming"] == true {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("pgaccel does not stream %s after 90 s: %v\n%s", r.table, r.status(), tail(p.stderr.String(), 30))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metric sums the samples of a counter on the admin port whose labels
// include all of labels (`route="accelerated"`).
func (r *cdcRig) metric(name string, labels ...string) float64 {
	r.t.Helper()
	code, body := adminGet(r.t, r.admin, "/metrics", "")
	if code != 200 {
		r.t.Fatalf("/metrics: %d %s", code, body)
	}
	var sum float64
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// view compares the table at the origin and through p's proxy. Its polls
// use a new statement text each time, so that what they check is the
// acceleration's data (TestCDC_DifferentialWorkload checks repeated texts).
func (r *cdcRig) view() *cdcView {
	r.t.Helper()
	v := newCDCView(r.t, "postgres://app:app-pass@"+r.listen+"/"+origin.Database+"?sslmode=disable",
		func() float64 { return r.metric("pgaccel_statements_total", `route="accelerated"`) },
		func() map[string]float64 {
			m := map[string]float64{}
			for _, route := range []string{acc, org, fbk} {
				m[route] = r.metric("pgaccel_statements_total", `route="`+route+`"`)
			}
			return m
		})
	v.fresh = true
	return v
}

// slotCount counts the origin's replication slots for the rig's dataset.
func (r *cdcRig) slotCount() int {
	r.t.Helper()
	var n int
	like := `pgaccel\_%\_` + strings.ReplaceAll(r.table, "_", `\_`)
	if err := originConn(r.t).QueryRow(context.Background(), "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE $1", like).Scan(&n); err != nil {
		r.t.Fatal(err)
	}
	return n
}

// slotName is the rig's slot: pgaccel_<instance id>_<table>.
func (r *cdcRig) slotName() string {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dataDir, "instance_id"))
	if err != nil {
		r.t.Fatalf("read the instance id: %v", err)
	}
	return "pgaccel_" + strings.TrimSpace(string(b)) + "_" + r.table
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Log lines of the change stream.
const (
	logLoaded   = "loaded the snapshot; streaming the changes since"
	logResumed  = "resuming the change stream from the stored position"
	logRebuild  = "rebuilding the acceleration from a new snapshot"
	logCaughtUp = "the change stream is caught up"
)

// logLSN returns the lsn field of the last log line with message msg.
func logLSN(out, msg string) (uint64, bool) {
	var lsn uint64
	found := false
	for _, line := range strings.Split(out, "\n") {
		var rec struct{ Message, LSN string }
		if !strings.Contains(line, msg) || json.Unmarshal([]byte(line), &rec) != nil || rec.Message != msg && !strings.HasPrefix(rec.Message, msg) {
			continue
		}
		hi, lo, ok := strings.Cut(rec.LSN, "/")
		h, err1 := strconv.ParseUint(hi, 16, 32)
		l, err2 := strconv.ParseUint(lo, 16, 32)
		if ok && err1 == nil && err2 == nil {
			lsn, found = h<<32|l, true
		}
	}
	return lsn, found
}

func fmtLSN(v uint64) string { return fmt.Sprintf("%X/%X", v>>32, uint32(v)) }

// background runs a writer's random transactions on its own origin
// connection until halted.
type background struct {
	w    *cdcWriter
	stop chan struct{}
	done chan error
}

func startBackground(t *testing.T, w *cdcWriter, pause time.Duration) *background {
	t.Helper()
	b := &background{w: w, stop: make(chan struct{}), done: make(chan error, 1)}
	c := originSession(t)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		for {
			select {
			case <-b.stop:
				b.done <- nil
				return
			default:
			}
			if err := execSQL(ctx, c, w.txn()); err != nil {
				b.done <- err
				return
			}
			time.Sleep(time.Duration(w.rnd.Int63n(int64(pause) + 1)))
		}
	}()
	return b
}

// halt stops the writer after its current transaction.
func (b *background) halt(t *testing.T) {
	t.Helper()
	close(b.stop)
	if err := <-b.done; err != nil {
		t.Fatalf("background workload on %s: %v", b.w.table, err)
	}
}

// seedCount is PGACCEL_CDC_CRASH_SEEDS, else def.
func seedCount(t *testing.T, def int) int {
	t.Helper()
	v := os.Getenv("PGACCEL_CDC_CRASH_SEEDS")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("PGACCEL_CDC_CRASH_SEEDS=%q is not a positive integer", v)
	}
	return n
}

// crashTable creates the crash tests' table with rows rows (some with
// TOASTed values) and returns its writer.
func crashTable(t *testing.T, table string, seed int64, rows int) *cdcWriter {
	t.Helper()
	createCDCTable(t, table, "DEFAULT")
	w := newCDCWriter(table, seed, 1, 1)
	if err := execSQL(ctxT(t), originSession(t), w.bulkInsert(rows)+w.insert(100, true)); err != nil {
		t.Fatal(err)
	}
	mustExec(t, "ANALYZE "+table)
	return w
}

// TestCDC_CrashAtRandomPoints kills pgaccel with SIGKILL at random points
// of the initial load (before the slot, while it copies) and of the stream
// (while it catches up, while it applies a transaction larger than a
// batch), while a random workload keeps changing the table, restarts it on
// the same data_dir each time, and then checks that the acceleration
// equals the origin exactly; a restart after a completed load must resume
// from the stored position, not rebuild, and one slot only is left.
func TestCDC_CrashAtRandomPoints(t *testing.T) {
	base := cdcSeed(t)
	n := seedCount(t, 2)
	began := time.Now()
	for i := 0; i < n; i++ {
		seed := base + int64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { crashSeed(t, seed) })
		if t.Failed() {
			break
		}
	}
	t.Logf("%d seeds in %v", n, time.Since(began).Round(time.Second))
}

func crashSeed(t *testing.T, seed int64) {
	const table = "cdc_crash"
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table) })
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS "+table) })
	began := time.Now()
	rnd := rand.New(rand.NewSource(seed))
	w := crashTable(t, table, seed, 30000)
	t.Logf("seed %d: table made in %v", seed, time.Since(began).Round(time.Millisecond))
	r := newCDCRig(t, table)
	bg := startBackground(t, w, 20*time.Millisecond)
	var kills []string
	// loaded: a process logged that its initial load was committed, so
	// every later start must resume.
	loaded := false
	var committed uint64
	// check reads the log of a process that has exited (or logged how its
	// stream started). A process killed before its stream started logged
	// neither a resume nor a rebuild.
	check := func(p *pgaccelProcess, what string) {
		t.Helper()
		out := p.stderr.String()
		started := strings.Contains(out, logResumed) || strings.Contains(out, logRebuild)
		if loaded && (strings.Contains(out, logRebuild) || started && !strings.Contains(out, logResumed)) {
			t.Fatalf("seed %d: %s: the initial load had completed before, yet this start did not resume from the stored position:\n%s", seed, what, tail(out, 30))
		}
		loaded = loaded || strings.Contains(out, logLoaded)
		// The position stored never goes back: a start resumes at or
		// after every position the one before logged as committed.
		if at, ok := logLSN(out, logResumed); ok && at < committed {
			t.Fatalf("seed %d: %s resumed at %s, before %s, which the start before had committed:\n%s", seed, what, fmtLSN(at), fmtLSN(committed), tail(out, 30))
		}
		for _, m := range []string{logLoaded, logCaughtUp} {
			if at, ok := logLSN(out, m); ok {
				committed = max(committed, at)
			}
		}
	}
	phase := func(out string) string {
		switch {
		case strings.Contains(out, logCaughtUp):
			return "streaming"
		case strings.Contains(out, logLoaded):
			return "catching up after the load"
		case strings.Contains(out, logResumed):
			return "catching up after a resume"
		case strings.Contains(out, logRebuild):
			return "initial load"
		}
		return "startup"
	}

	// The initial load: one or two kills, at a random time after the start
	// or after the slot (and its snapshot) exists.
	for k, loads := 0, 1+rnd.Intn(2); k < loads; k++ {
		p := r.start()
		if rnd.Intn(2) == 0 {
			time.Sleep(time.Duration(rnd.Intn(1500)) * time.Millisecond)
		} else {
			pgtest.WaitFor(t, "the slot of the initial load", func() bool { r.exited(p); return r.slotCount() > 0 })
			time.Sleep(time.Duration(rnd.Intn(400)) * time.Millisecond)
		}
		r.kill(p)
		kills = append(kills, "load: "+phase(p.stderr.String()))
		check(p, fmt.Sprintf("start %d", len(kills)))
	}
	t.Logf("seed %d: the initial load's kills took %v", seed, time.Since(began).Round(time.Millisecond))
	// The stream: two or three kills, some while a large transaction
	// applies.
	for k, streams := 0, 2+rnd.Intn(2); k < streams; k++ {
		p := r.start()
		r.waitStreaming(p)
		label := "stream"
		if rnd.Intn(3) == 0 {
			bg.halt(t)
			if err := execSQL(ctxT(t), originSession(t), "BEGIN;\n"+w.large(15000+rnd.Intn(10000))+"COMMIT;\n"); err != nil {
				t.Fatal(err)
			}
			bg = startBackground(t, w, 20*time.Millisecond)
			label = "stream, large transaction"
			time.Sleep(time.Duration(rnd.Intn(1200)) * time.Millisecond)
		} else {
			time.Sleep(time.Duration(100+rnd.Intn(1500)) * time.Millisecond)
		}
		r.kill(p)
		kills = append(kills, label+": "+phase(p.stderr.String()))
		check(p, fmt.Sprintf("start %d", len(kills)))
	}
	t.Logf("seed %d: killed %d times in %v: %s", seed, len(kills), time.Since(began).Round(time.Millisecond), strings.Join(kills, "; "))

	// The last start: it must catch up with everything, once.
	p := r.start()
	r.waitStreaming(p)
	pgtest.WaitFor(t, "the log of the stream's start", func() bool {
		out := p.stderr.String()
		return strings.Contains(out, logResumed) || strings.Contains(out, logRebuild)
	})
	check(p, "the last start")
	time.Sleep(time.Duration(rnd.Intn(500)) * time.Millisecond)
	bg.halt(t)
	v := r.view()
	v.waitEqual(t, table, fmt.Sprintf("seed %d after %d kills (%s)", seed, len(kills), strings.Join(kills, "; ")),
		func() string { return fmt.Sprintf("%v\nlog:\n%s", r.status(), tail(p.stderr.String(), 20)) }, nil)
	t.Logf("seed %d: equal to the origin after %v", seed, time.Since(began).Round(time.Millisecond))
	if n := r.slotCount(); n != 1 {
		t.Errorf("seed %d: %d replication slots for %s at the origin, want 1", seed, n, table)
	}
}

// TestCDC_CrashSlotDroppedWhileDown: pgaccel is killed, its slot dropped
// at the origin and the table changed; the restart rebuilds from a new
// snapshot (logged, counted) and swaps it in at once: every answer while
// it rebuilds is the old acceleration or the new, never a mix, and the
// end is the origin's table.
func TestCDC_CrashSlotDroppedWhileDown(t *testing.T) {
	const table = "cdc_crash_slot"
	seed := cdcSeed(t)
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table) })
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS "+table) })
	w := crashTable(t, table, seed, 30000)
	r := newCDCRig(t, table)
	p := r.start()
	r.waitStreaming(p)
	runWriters(t, 30, w)
	v := r.view()
	v.waitEqual(t, table, "before the kill", func() string { return fmt.Sprint(r.status()) }, nil)
	slot := r.slotName()
	ctx := ctxT(t)
	old, err := query(ctx, v.origin, "SELECT * FROM "+table+" ORDER BY id", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.kill(p)

	// Drop the slot (its walsender may still be ending) and change the
	// table: these changes are only in the new snapshot.
	c := originConn(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := c.Exec(ctx, "SELECT pg_drop_replication_slot($1)", slot)
		if err == nil {
			break
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55006" || time.Now().After(deadline) {
			t.Fatalf("drop slot %s: %v", slot, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	runWriters(t, 30, w)
	if err := execSQL(ctx, originSession(t), "UPDATE "+table+" SET k = k + 1 WHERE id % 2 = 0"); err != nil {
		t.Fatal(err)
	}
	want, err := query(ctx, v.origin, "SELECT * FROM "+table+" ORDER BY id", false, 0)
	if err != nil {
		t.Fatal(err)
	}

	p = r.start()
	pgtest.WaitFor(t, "the restarted proxy", func() bool { r.exited(p); return r.adminUp() })
	v = r.view()
	var answers, fromOld int
	deadline = time.Now().Add(90 * time.Second)
	for {
		got, err := query(ctx, v.proxy, freshText(table), false, 0)
		if err == nil {
			answers++
			switch {
			case rowsDiff(want, got) == "":
			case rowsDiff(old, got) == "":
				fromOld++
			default:
				t.Fatalf("while rebuilding, pgaccel answered rows that are neither the old acceleration's nor the new snapshot's:\nagainst the new: %s\nlog:\n%s", rowsDiff(want, got), tail(p.stderr.String(), 20))
			}
			if rowsDiff(want, got) == "" && r.replication() != nil && r.replication()["streaming"] == true {
				break
			}
		} else if v.proxy.IsClosed() || strings.Contains(err.Error(), "connect") {
			v = r.view()
		}
		if time.Now().After(deadline) {
			t.Fatalf("no rebuild after 90 s (%d answers, %d of the old rows): %v\nlog:\n%s", answers, fromOld, err, tail(p.stderr.String(), 30))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d answers while rebuilding, %d of them from the old acceleration", answers, fromOld)
	v.waitEqual(t, table, "after the rebuild", func() string { return fmt.Sprint(r.status()) }, nil)
	out := p.stderr.String()
	if !strings.Contains(out, logRebuild) || !strings.Contains(out, "is gone") || strings.Contains(out, logResumed) {
		t.Errorf("the restart did not log a rebuild because the slot is gone:\n%s", tail(out, 30))
	}
	if rep := r.replication(); rep["rebuilds"] != float64(1) {
		t.Errorf("replication status after the rebuild: %v, want rebuilds 1", rep)
	}
	if n := r.metric("dataset_replication_rebuilds_total", `dataset="`+table+`"`); n != 1 {
		t.Errorf("dataset_replication_rebuilds_total = %v, want 1", n)
	}
}

// TestCDC_CrashOriginRestartMidStream: the origin stops (a fast shutdown)
// while pgaccel applies a large transaction and starts again; pgaccel
// reconnects and resumes from its position (no rebuild), and ends equal to
// the origin, also after changes made once it is back.
func TestCDC_CrashOriginRestartMidStream(t *testing.T) {
	const table = "cdc_crash_origin"
	seed := cdcSeed(t)
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table) })
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS "+table) })
	w := crashTable(t, table, seed, 20000)
	r := newCDCRig(t, table)
	p := r.start()
	r.waitStreaming(p)
	runWriters(t, 20, w)
	if err := execSQL(ctxT(t), originSession(t), "BEGIN;\n"+w.large(30000)+"COMMIT;\n"); err != nil {
		t.Fatal(err)
	}
	before := r.replication()
	resumes := strings.Count(p.stderr.String(), logResumed)
	resume := origin.PauseDuring(t)
	time.Sleep(time.Second)
	if err := resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	runWriters(t, 20, w)
	v := r.view()
	v.waitEqual(t, table, "after the origin restarted", func() string { return fmt.Sprintf("%v\nlog:\n%s", r.status(), tail(p.stderr.String(), 20)) }, nil)
	r.exited(p)
	after := r.replication()
	if after["rebuilds"] != before["rebuilds"] {
		t.Errorf("the origin's restart rebuilt the dataset: before %v, after %v", before, after)
	}
	if after["reconnects"].(float64) < 1 {
		t.Errorf("no reconnect counted after the origin restarted: %v", after)
	}
	if strings.Count(p.stderr.String(), logResumed) <= resumes {
		t.Errorf("the stream did not resume from the stored position after the origin restarted:\n%s", tail(p.stderr.String(), 30))
	}
}
