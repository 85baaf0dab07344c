package refresh

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

var srv *pgtest.Server

func TestMain(m *testing.M) { pgtest.RunMain(m, &srv) }

// parseConfig parses a config whose origin is the test server (or dsn when
// given) and whose datasets are the YAML list items in datasets.
func parseConfig(t testing.TB, dsn, dataDir, datasets string) *catalog.Config {
	t.Helper()
	if dsn == "" {
		dsn = srv.SuperDSN()
	}
	yaml := fmt.Sprintf("origin:\n  dsn: %q\nruntime:\n  data_dir: %q\ndatasets:\n%s", dsn, dataDir, datasets)
	cfg, err := catalog.Parse([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatalf("config: %v\n%s", err, yaml)
	}
	return cfg
}

// harness is a runner with its engine and registry.
type harness struct {
	cfg  *catalog.Config
	reg  *catalog.Registry
	eng  *accelerator.Engine
	run  *Runner
	logs *logBuffer // the runner's log lines (debug and up)
}

// newHarness opens an engine (data in dataDir, a temp dir when "") and a
// runner for cfg, with opts when given. Both are closed when the test ends.
func newHarness(t testing.TB, cfg *catalog.Config, opts ...Options) *harness {
	t.Helper()
	eng, err := accelerator.Open(accelerator.Options{DataDir: cfg.Runtime.DataDir, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{cfg: cfg, reg: catalog.NewRegistry(cfg), eng: eng, logs: &logBuffer{}}
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	log := zerolog.New(zerolog.MultiLevelWriter(
		&zerolog.FilteredLevelWriter{Writer: zerolog.LevelWriterAdapter{Writer: zerolog.NewTestWriter(t)}, Level: zerolog.InfoLevel},
		h.logs)).Level(zerolog.DebugLevel)
	h.run = NewRunner(cfg, h.reg, eng, log, o)
	t.Cleanup(func() { h.close(t) })
	return h
}

// logBuffer keeps log lines for tests to search.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, string(p))
	return len(p), nil
}

// matching returns the lines that contain every one of subs.
func (b *logBuffer) matching(subs ...string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range b.lines {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// close stops the runner and closes the engine; safe to call twice.
func (h *harness) close(t testing.TB) {
	if h.run == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.run.Close(ctx); err != nil {
		t.Error(err)
	}
	if err := h.eng.Close(); err != nil {
		t.Error(err)
	}
	h.run = nil
}

func (h *harness) state(t testing.TB, name string) catalog.DatasetState {
	t.Helper()
	st, ok := h.reg.State(name)
	if !ok {
		t.Fatalf("no state for %s", name)
	}
	return st
}

// originExec runs sql on the test origin.
func originExec(t testing.TB, sql string) {
	t.Helper()
	if err := srv.Exec(context.Background(), sql); err != nil {
		t.Fatalf("origin: %v\n%s", err, sql)
	}
}

// originQuery runs sql on the origin and returns its rows as text (nil for
// NULL).
func originQuery(t testing.TB, sql string) [][]*string {
	t.Helper()
	c, err := pgconn.Connect(context.Background(), srv.SuperDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	res := c.ExecParams(context.Background(), sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatalf("origin: %v\n%s", res.Err, sql)
	}
	out := make([][]*string, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = make([]*string, len(r))
		for j, v := range r {
			if v != nil {
				s := string(v)
				out[i][j] = &s
			}
		}
	}
	return out
}

// duckQuery runs sql on the engine and returns its rows.
func duckQuery(t testing.TB, eng *accelerator.Engine, sql string) [][]any {
	t.Helper()
	rows, err := eng.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, sql)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		out = append(out, append([]any(nil), rows.Values()...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// duckCount counts the rows of a dataset's table.
func duckCount(t testing.TB, eng *accelerator.Engine, dataset string) int64 {
	t.Helper()
	rows := duckQuery(t, eng, "SELECT count(*) FROM "+eng.TableRef(dataset))
	return rows[0][0].(int64)
}

// dataset is the YAML of a dataset of public.<table>; extra is indented
// acceleration keys.
func dataset(table, mode, extra string) string {
	s := fmt.Sprintf("  - from: postgres:public.%s\n    acceleration:\n      mode: %s\n", table, mode)
	for line := range strings.SplitSeq(strings.TrimSpace(extra), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			s += "      " + line + "\n"
		}
	}
	return s
}
