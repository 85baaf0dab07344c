package refresh

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
)

// attach attaches the dataset's acceleration once and publishes stored
// data. It returns what was stored (nil when nothing).
func (r *Runner) attach(ctx context.Context, t *task) (*accelerator.TableInfo, error) {
	t.refreshMu.Lock()
	defer t.refreshMu.Unlock()
	return r.attachLocked(ctx, t)
}

func (r *Runner) attachLocked(ctx context.Context, t *task) (*accelerator.TableInfo, error) {
	if t.attached {
		return nil, nil
	}
	r.bootstrap(ctx, t)
	info, err := r.eng.Attach(ctx, t.dataset())
	if err != nil {
		t.setErr(err)
		r.reg.Update(t.dataset().Name, func(st *catalog.DatasetState) {
			st.Status = catalog.StatusError
			st.Error = r.sc.text(err)
		})
		t.markReady()
		return nil, err
	}
	t.attached = true
	t.stored = info
	if info == nil {
		return nil, nil
	}
	r.metrics.restored(t.dataset().Name, info.LastRefresh.UnixMilli(), info.Rows)
	if modeOf(t.dataset()).waitsForSource() {
		// Not ready before the first append after start.
		r.reg.Update(t.dataset().Name, func(st *catalog.DatasetState) {
			st.LastRefresh = info.LastRefresh
			st.Rows = info.Rows
		})
		r.log.Info().Str("dataset", t.dataset().Name).Int64("rows", info.Rows).Time("last_refresh", info.LastRefresh).
			Msgf("stored acceleration found; with refresh_mode: %s it serves once it has caught up with its source", t.dataset().Acceleration.RefreshMode)
		return info, nil
	}
	// The fallback filter from the stored columns; when they lack
	// time_column, use_source waits for a refresh (queries go to the
	// origin meanwhile).
	var f readFilters
	var ferr, serr error
	f.fallback, ferr = t.dataset().FallbackFilter(info.Columns)
	f.subset, serr = t.dataset().SubsetFilter(info.Columns)
	f.fallbackReady, f.subsetReady = ferr == nil, serr == nil
	// Stored before this process started: every commit through it came
	// later (and the checkpoint's time may be another machine's).
	r.publishLoaded(t.dataset().Name, info.LastRefresh, minTime(info.LastRefresh, r.born), info.Rows, info.Columns, f, "")
	if t.dataset().ReadyState == catalog.ReadyOnSchemaResolved {
		// Served, but Initializing until the source is reached (the
		// spec's table for ready_state: on_schema_resolved).
		r.reg.Update(t.dataset().Name, func(st *catalog.DatasetState) {
			if !st.SchemaResolved {
				st.Status = catalog.StatusInitializing
			}
		})
	}
	r.log.Info().Str("dataset", t.dataset().Name).Int64("rows", info.Rows).Time("last_refresh", info.LastRefresh).
		Msg("serving the stored acceleration")
	t.markReady()
	return info, nil
}

// refresh runs one refresh of t, as its refresh mode does one (modes.go),
// attaching the acceleration first when the mode loads it, and publishes
// its outcome.
func (r *Runner) refresh(ctx context.Context, t *task) error {
	t.refreshMu.Lock()
	defer t.refreshMu.Unlock()
	return modeOf(t.dataset()).once(ctx, r, t)
}

// attachedForRefresh attaches t's acceleration before a refresh loads it,
// when it is not yet; t.refreshMu is held.
func (r *Runner) attachedForRefresh(ctx context.Context, t *task) error {
	if _, err := r.attachLocked(ctx, t); err != nil {
		return fmt.Errorf("refresh dataset %s: %w", t.dataset().Name, err)
	}
	return nil
}

// load loads t's dataset from its source, appending the rows past the
// acceleration's (appendRows, unless a full reload was asked for) or
// replacing every row, and publishes the outcome; t.refreshMu is held.
func (r *Runner) load(ctx context.Context, t *task, appendRows bool) error {
	if err := r.attachedForRefresh(ctx, t); err != nil {
		return err
	}
	ds := t.dataset()
	log := r.log.With().Str("dataset", ds.Name).Logger()
	r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
		if st.Loaded {
			st.Status = catalog.StatusRefreshing
		}
	})
	mode := catalog.RefreshFull
	if appendRows {
		mode = catalog.RefreshAppend
	}
	fullWanted := t.fullWanted.Load()
	if fullWanted > t.fullDone && mode == catalog.RefreshAppend {
		mode = catalog.RefreshFull
		log.Info().Msg("full reload asked for: the acceleration is replaced by every row the source has; later refreshes append again")
	}
	log.Debug().Str("mode", mode).Msg("refresh started")
	w := &watch{schemaResolved: func() {
		r.reg.Update(ds.Name, func(st *catalog.DatasetState) { st.SchemaResolved = true })
	}}
	w.estimate.Store(-1)
	t.watch.Store(w)
	defer t.watch.Store(nil)
	stopProgress := r.logProgress(log, w)
	// Every transaction committed before the load starts is in what it
	// reads (DataAsOf).
	started := time.Now()
	stampBefore := r.verifyStamp(ctx, ds, mode)
	out, err := loadDataset(ctx, r.eng, r.cfg.Origin.DSN, ds, mode == catalog.RefreshAppend, r.clock.Now(), w)
	stopProgress()
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
		err = fmt.Errorf("refresh dataset %s: %w", ds.Name, err)
		msg := r.sc.text(err)
		if st, _ := r.reg.State(ds.Name); !st.Loaded && t.stored != nil && modeOf(ds).waitsForSource() {
			// Stored data that must wait for the first refresh (see attach).
			mode := ds.Acceleration.RefreshMode
			if !t.waitLogged {
				t.waitLogged = true
				log.Info().Msgf("Dataset '%s' waits for its source before serving because it uses `refresh_mode: %s`.", ds.Name, mode)
			}
			msg = "Not served: waits for its source because it uses `refresh_mode: " + mode + "`. Cause: " + msg
		}
		r.failedWith(t, err, msg, ctx.Err() == nil)
		return err
	}
	t.setErr(nil)
	t.fullDone = fullWanted
	prev, _ := r.reg.State(ds.Name)
	logLeftOut(log, prev.Columns, out.columns)
	if out.nothing {
		r.publishNothing(ds.Name, out.completed, started, out.columns)
		r.metrics.refreshed(ds.Name, mode, out)
		if !prev.NothingToAccelerate {
			log.Warn().Int("columns", len(out.columns)).
				Msgf("None of the columns of dataset %s can be accelerated: it holds nothing, and every statement over it goes to the origin. It is Ready (its load is complete); its refreshes check again.", ds.Name)
		}
		t.markReady()
		return nil
	}
	stamp := ""
	if stampBefore != "" && r.verifyStamp(ctx, ds, mode) == stampBefore {
		stamp = stampBefore // the table did not change while it loaded
	}
	r.publishLoaded(ds.Name, out.completed, started, out.total, out.columns, out.filters, stamp)
	r.metrics.refreshed(ds.Name, mode, out)
	log.Info().Str("mode", mode).Int64("rows_read", out.rows).Int64("rows", out.total).Int64("bytes", out.bytes).
		Dur("duration", out.duration).Msg("refresh done")
	t.markReady()
	if trig, _ := ds.Acceleration.SnapshotTrigger(); trig == catalog.SnapshotsTriggerRefresh {
		r.publishSnapshot(t)
	}
	return nil
}

// logProgress logs a running refresh's progress every progressEvery (in
// real time: progress is about the wall clock, not the schedule): rows so
// far, rows per second, and against the origin's estimate of the table's
// rows (pg_class.reltuples), the share done and the time left. The
// returned function stops it.
func (r *Runner) logProgress(log zerolog.Logger, w *watch) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(r.progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			rows, elapsed := w.rows.Load(), time.Since(start)
			rate := float64(rows) / elapsed.Seconds()
			ev := log.Info().Int64("rows", rows).Float64("rows_per_second", math.Round(rate)).Dur("elapsed", elapsed)
			if est := w.estimate.Load(); est > 0 {
				ev = ev.Int64("rows_estimated", est)
				if rows < est && rate > 0 {
					ev = ev.Int("percent", int(100*rows/est)).Dur("remaining", time.Duration(float64(est-rows)/rate*float64(time.Second)).Round(time.Second))
				}
			}
			ev.Msg("refresh in progress")
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// logLeftOut logs the columns a load left out of the acceleration whose
// reason is new since the previous load (prev): a type without an exact
// DuckDB type, or a value the load met that the column's type cannot hold.
func logLeftOut(log zerolog.Logger, prev, cols []catalog.ColumnInfo) {
	before := make(map[string]string, len(prev))
	for _, c := range prev {
		before[c.Name] = c.NotAccelerated
	}
	for _, c := range cols {
		if c.Accelerated || before[c.Name] == c.NotAccelerated {
			continue
		}
		log.Warn().Str("column", c.Name).Str("type", c.TypeName).Str("why", c.NotAccelerated).
			Msgf("column %s is not accelerated: %s; statements that read it go to the origin", c.Name, c.NotAccelerated)
	}
}

// publishLoaded makes the dataset's new data visible: Ready, Loaded, its
// last refresh, rows, columns and fallback filter, and a new generation.
// asOf is the data's DataAsOf.
func (r *Runner) publishLoaded(name string, last, asOf time.Time, rows int64, cols []catalog.ColumnInfo, f readFilters, stamp string) {
	r.reg.Update(name, func(st *catalog.DatasetState) {
		st.DataAsOf = asOf
		st.VerifyStamp = stamp
		st.Status = catalog.StatusReady
		st.Loaded = true
		st.NothingToAccelerate = false
		st.LastRefresh = last
		st.Rows = rows
		st.Columns = cols
		st.Error = ""
		st.FallbackReady, st.FallbackFilter = f.fallbackReady, f.fallback
		st.SubsetReady, st.SubsetFilter = f.subsetReady, f.subset
		st.Generation++
		st.DataGeneration++
	})
}

// publishNothing records a load that found no column to accelerate: Ready,
// holding and serving nothing (Loaded false: statements go to the origin),
// with the columns and why each is left out.
func (r *Runner) publishNothing(name string, last, asOf time.Time, cols []catalog.ColumnInfo) {
	r.reg.Update(name, func(st *catalog.DatasetState) {
		st.DataAsOf = asOf
		st.Status = catalog.StatusReady
		st.Loaded = false
		st.NothingToAccelerate = true
		st.LastRefresh = last
		st.Rows = 0
		st.Columns = cols
		st.Error = ""
		st.FallbackReady, st.FallbackFilter = false, ""
		st.SubsetReady, st.SubsetFilter = false, ""
		st.Generation++
		st.DataGeneration++
	})
}

func (r *Runner) setNext(name string, next time.Time) {
	r.reg.Update(name, func(st *catalog.DatasetState) { st.NextRefresh = next })
}

// failed records a failed refresh or stream session in the dataset's
// state and metrics.
func (r *Runner) failed(t *task, err error) { r.failedWith(t, err, r.sc.text(err), true) }

// failedWith is failed with the error message to show, and whether the
// failure counts in the metrics (not when the runner is stopping).
func (r *Runner) failedWith(t *task, err error, msg string, count bool) {
	ds := t.dataset()
	t.setErr(err)
	r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
		st.Status = catalog.StatusError
		st.Error = msg
	})
	if count {
		reason, _ := classify(err)
		r.metrics.refreshFailed(ds.Name, reason)
	}
	t.markReady()
}
