package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/refresh"
	"github.com/rs/zerolog"
)

// config is pgaccel's config: cdc_bench as a changes dataset, point reads
// answered by the acceleration.
func config(dsn, dataDir, mode string) (*catalog.Config, error) {
	yaml := fmt.Sprintf(`origin:
  dsn: %q
server:
  listen: 127.0.0.1:0
admin:
  listen: 127.0.0.1:0
runtime:
  data_dir: %q
  point_reads: acceleration
datasets:
  - from: postgres:public.%s
    acceleration:
      mode: %s
      refresh_mode: changes
      primary_key: [id]
`, dsn, dataDir, table, mode)
	cfg, err := catalog.Parse([]byte(yaml), "cdc.yaml")
	if err != nil {
		return nil, fmt.Errorf("pgaccel config: %w", err)
	}
	return cfg, nil
}

// startPgaccel starts pgaccel in-process and waits until cdc_bench is
// ready (loaded, or resumed and caught up).
func startPgaccel(ctx context.Context, cfg *catalog.Config, logs *logCapture) (*app.App, error) {
	a, err := app.Start(cfg, zerologFor(logs))
	if err != nil {
		return nil, fmt.Errorf("start pgaccel: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := a.Runner.WaitReady(wctx, table); err != nil {
		return a, fmt.Errorf("dataset %s did not become ready: %w", table, err)
	}
	if st, _ := a.Registry.State(table); !st.Loaded || st.Status != catalog.StatusReady {
		return a, fmt.Errorf("dataset %s did not become ready: status %s: %s", table, st.Status, st.Error)
	}
	return a, nil
}

// zerologFor is pgaccel's logger, writing to logs.
func zerologFor(logs *logCapture) zerolog.Logger {
	return zerolog.New(logs).Level(zerolog.InfoLevel).With().Timestamp().Str("component", "pgaccel").Logger()
}

// shutdown stops a within 30 s.
func shutdown(a *app.App) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		return fmt.Errorf("shut pgaccel down: %w", err)
	}
	return nil
}

// logCapture is pgaccel's log sink: every line goes to a file, warnings
// and errors also to the console, and the first time each watched message
// appears is kept.
type logCapture struct {
	console io.Writer
	file    io.Writer
	mu      sync.Mutex
	seen    map[string]time.Time // message → first time, since the last reset
	warns   []string
}

var _ zerolog.LevelWriter = (*logCapture)(nil)

// Messages of the change stream the benchmark times.
const (
	msgResuming = "resuming the change stream from the stored position"
	msgCaughtUp = "the change stream is caught up; the acceleration serves"
	msgLoaded   = "loaded the snapshot; streaming the changes since"
)

func (c *logCapture) Write(p []byte) (int, error) { return c.WriteLevel(zerolog.NoLevel, p) }

func (c *logCapture) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file != nil {
		_, _ = c.file.Write(p)
	}
	var ev struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	_ = json.Unmarshal(p, &ev)
	if level >= zerolog.WarnLevel && level != zerolog.NoLevel {
		_, _ = c.console.Write(p)
		w := level.String() + ": " + ev.Message
		if ev.Error != "" {
			w += ": " + ev.Error
		}
		c.warns = append(c.warns, w)
	}
	if ev.Message != "" {
		if c.seen == nil {
			c.seen = map[string]time.Time{}
		}
		if _, ok := c.seen[ev.Message]; !ok {
			c.seen[ev.Message] = now
		}
	}
	return len(p), nil
}

// firstSeen is when msg was first logged since the last reset.
func (c *logCapture) firstSeen(msg string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.seen[msg]
	return t, ok
}

func (c *logCapture) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = nil
}

// warnings returns and forgets the warnings and errors logged so far.
func (c *logCapture) warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.warns
	c.warns = nil
	return w
}

// statementRoutes sums pgaccel_statements_total by route.
func statementRoutes(a *app.App) (map[string]float64, error) {
	return benchutil.MetricSums(a.Metrics, "pgaccel_statements_total", "route")
}

// histogram is a cumulative Prometheus histogram: bucket upper bounds
// (seconds) and counts.
type histogram struct {
	bounds []float64
	counts []uint64
	count  uint64
	sum    float64
}

// applyLagHistogram reads dataset_replication_apply_lag_seconds of the
// dataset.
func applyLagHistogram(a *app.App) (histogram, error) {
	mfs, err := a.Metrics.Gather()
	if err != nil {
		return histogram{}, fmt.Errorf("gather metrics: %w", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "dataset_replication_apply_lag_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			ok := false
			for _, l := range m.GetLabel() {
				ok = ok || l.GetName() == "dataset" && l.GetValue() == table
			}
			if !ok {
				continue
			}
			h := m.GetHistogram()
			out := histogram{count: h.GetSampleCount(), sum: h.GetSampleSum()}
			for _, b := range h.GetBucket() {
				out.bounds = append(out.bounds, b.GetUpperBound())
				out.counts = append(out.counts, b.GetCumulativeCount())
			}
			return out, nil
		}
	}
	return histogram{}, nil // no batch applied yet
}

// sub is h minus an earlier reading of the same histogram.
func (h histogram) sub(before histogram) histogram {
	out := histogram{bounds: h.bounds, count: h.count - before.count, sum: h.sum - before.sum}
	for i, c := range h.counts {
		if i < len(before.counts) {
			c -= before.counts[i]
		}
		out.counts = append(out.counts, c)
	}
	return out
}

// quantile is the upper bound of the bucket holding the q-quantile, +Inf
// past the last bucket, ok false without observations.
func (h histogram) quantile(q float64) (bound float64, ok bool) {
	if h.count == 0 {
		return 0, false
	}
	rank := uint64(q*float64(h.count) + 0.999999)
	rank = max(rank, 1)
	for i, c := range h.counts {
		if c >= rank {
			return h.bounds[i], true
		}
	}
	return posInf, true
}

// replication reads the stream's status.
func replication(a *app.App) refresh.ReplicationStatus {
	st, _ := a.Runner.Replication(table)
	return st
}

// appliedRows is the row changes the stream applied since it started.
func appliedRows(st refresh.ReplicationStatus) int64 { return st.Inserts + st.Updates + st.Deletes }

// walsenderPID is the pid of the origin's walsender serving pgaccel's
// change stream, 0 when none.
func walsenderPID(ctx context.Context, conn *pgx.Conn) int {
	var pid int
	err := conn.QueryRow(ctx, "SELECT pid FROM pg_stat_replication WHERE application_name = 'pgaccel refresh (changes)' LIMIT 1").Scan(&pid)
	if err != nil {
		return 0
	}
	return pid
}
