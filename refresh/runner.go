package refresh

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
)

// Retry backoff after a failed refresh: it starts at retryMin and doubles up
// to retryMax (the spec's "about one second ... at most five minutes").
const (
	retryMin = time.Second
	retryMax = 5 * time.Minute
)

// Runner keeps every enabled dataset's acceleration loaded: one task per
// dataset attaches its acceleration, loads it, and refreshes it every
// acceleration.refresh_check_interval. Every refresh is a full refresh for
// now; the other refresh modes, cron and jitter come with the scheduler.
type Runner struct {
	cfg *catalog.Config
	reg *catalog.Registry
	eng *accelerator.Engine
	log zerolog.Logger
	sc  scrubber

	tasks map[string]*task // by dataset name, fixed after NewRunner

	mu      sync.Mutex
	cancel  context.CancelFunc
	started bool
	wg      sync.WaitGroup
}

// task is one dataset's refresh state.
type task struct {
	ds *catalog.Dataset

	refreshMu sync.Mutex // one refresh of the dataset at a time
	attached  bool       // guarded by refreshMu

	readyOnce sync.Once
	ready     chan struct{} // closed once the dataset loaded or its first load failed

	errMu   sync.Mutex
	lastErr error // the last refresh's error, nil after a success
}

// NewRunner prepares a task for each dataset of cfg. Nothing runs before
// Start; Refresh works without it.
func NewRunner(cfg *catalog.Config, reg *catalog.Registry, eng *accelerator.Engine, log zerolog.Logger) *Runner {
	r := &Runner{
		cfg:   cfg,
		reg:   reg,
		eng:   eng,
		log:   log,
		sc:    newScrubber(cfg.Origin.DSN),
		tasks: make(map[string]*task),
	}
	for _, ds := range cfg.Datasets {
		r.tasks[ds.Name] = &task{ds: ds, ready: make(chan struct{})}
	}
	return r
}

// Start starts one goroutine per enabled dataset. Each attaches the
// dataset's acceleration (a file-mode dataset with stored data is Loaded
// and Ready at once), loads it when there is nothing to serve yet or
// refresh_on_startup is always (with auto, stored data is refreshed when
// refresh_check_interval has elapsed since its last refresh), then refreshes
// it every refresh_check_interval. A failed refresh is retried with backoff
// (refresh_retry_enabled, refresh_retry_max_attempts). The goroutines stop
// when ctx is done or Close is called.
func (r *Runner) Start(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return
	}
	r.started = true
	ctx, r.cancel = context.WithCancel(ctx)
	for _, ds := range r.cfg.Datasets {
		if !ds.Acceleration.Enabled {
			continue
		}
		t := r.tasks[ds.Name]
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.run(ctx, t)
		}()
	}
}

// Close stops the goroutines, cancelling refreshes in progress, and waits
// for them until ctx is done.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.cancel != nil {
		r.cancel()
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop refresh runner: %w", ctx.Err())
	}
}

// Refresh runs one full refresh of the dataset now, after any refresh of it
// in progress, and returns its error.
func (r *Runner) Refresh(ctx context.Context, dataset string) error {
	t, err := r.task(dataset)
	if err != nil {
		return err
	}
	return r.refresh(ctx, t)
}

// WaitReady blocks until the dataset has loaded once, or its first load
// failed, or ctx is done. It returns nil when the dataset has data to serve
// (a file-mode dataset restored from its file counts), else the error of
// its last refresh.
func (r *Runner) WaitReady(ctx context.Context, dataset string) error {
	t, err := r.task(dataset)
	if err != nil {
		return err
	}
	select {
	case <-t.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	if st, _ := r.reg.State(dataset); st.Loaded {
		return nil
	}
	if err := t.err(); err != nil {
		return err
	}
	return fmt.Errorf("dataset %s is not loaded", dataset)
}

func (r *Runner) task(name string) (*task, error) {
	t, ok := r.tasks[name]
	if !ok {
		return nil, fmt.Errorf("no dataset named %s", name)
	}
	if !t.ds.Acceleration.Enabled {
		return nil, fmt.Errorf("dataset %s is not accelerated (acceleration.enabled is false)", name)
	}
	return t, nil
}

// run is a dataset's goroutine.
func (r *Runner) run(ctx context.Context, t *task) {
	ds := t.ds
	log := r.log.With().Str("dataset", ds.Name).Logger()
	info, err := r.attach(ctx, t)
	if err != nil {
		log.Error().Str("error", r.sc.text(err)).Msg("cannot attach the acceleration")
		return
	}
	if ds.Acceleration.RefreshMode == catalog.RefreshDisabled {
		t.markReady()
		return
	}
	if m := ds.Acceleration.RefreshMode; m != catalog.RefreshFull {
		log.Warn().Str("refresh_mode", m).Msg("refresh mode not implemented yet; refreshing in full")
	}

	interval := ds.Acceleration.RefreshCheckInterval
	next := time.Now() // the first refresh
	if info != nil && ds.Acceleration.RefreshOnStartup != catalog.RefreshOnStartupAlways {
		next = time.Time{} // auto: serve the stored data ...
		if interval > 0 {
			next = info.LastRefresh.Add(interval) // ... until it is due
		}
	}
	backoff, failures := retryMin, 0
	for {
		if next.IsZero() {
			r.setNext(ds.Name, time.Time{})
			<-ctx.Done()
			return
		}
		r.setNext(ds.Name, next)
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		err := r.refresh(ctx, t)
		if ctx.Err() != nil {
			return
		}
		next = time.Time{}
		if interval > 0 {
			next = time.Now().Add(interval)
		}
		if err == nil {
			if failures > 0 {
				log.Info().Int("failures", failures).Msg("refresh recovered")
			}
			backoff, failures = retryMin, 0
			continue
		}
		failures++
		acc := ds.Acceleration
		if !acc.RefreshRetryEnabled || acc.RefreshRetryMaxAttempts > 0 && failures >= acc.RefreshRetryMaxAttempts {
			continue // wait for the next interval, if any
		}
		if retry := time.Now().Add(backoff); next.IsZero() || retry.Before(next) {
			next = retry
		}
		backoff = min(2*backoff, retryMax)
	}
}

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
	info, err := r.eng.Attach(ctx, t.ds)
	if err != nil {
		t.setErr(err)
		r.reg.Update(t.ds.Name, func(st *catalog.DatasetState) {
			st.Status = catalog.StatusError
			st.Error = r.sc.text(err)
		})
		t.markReady()
		return nil, err
	}
	t.attached = true
	if info != nil {
		r.reg.Update(t.ds.Name, func(st *catalog.DatasetState) {
			st.Status = catalog.StatusReady
			st.Loaded = true
			st.LastRefresh = info.LastRefresh
			st.Rows = info.Rows
			st.Columns = info.Columns
			st.Error = ""
			st.Generation++
		})
		r.log.Info().Str("dataset", t.ds.Name).Int64("rows", info.Rows).Time("last_refresh", info.LastRefresh).
			Msg("serving the stored acceleration")
		t.markReady()
	}
	return info, nil
}

// refresh runs one full refresh of t and publishes its outcome.
func (r *Runner) refresh(ctx context.Context, t *task) error {
	t.refreshMu.Lock()
	defer t.refreshMu.Unlock()
	ds := t.ds
	log := r.log.With().Str("dataset", ds.Name).Logger()
	if _, err := r.attachLocked(ctx, t); err != nil {
		return fmt.Errorf("refresh dataset %s: %w", ds.Name, err)
	}
	r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
		if st.Loaded {
			st.Status = catalog.StatusRefreshing
		}
	})
	log.Debug().Msg("full refresh started")
	stats, err := fullRefresh(ctx, r.eng, r.cfg.Origin.DSN, ds)
	if err != nil {
		err = fmt.Errorf("refresh dataset %s: %w", ds.Name, err)
		t.setErr(err)
		msg := r.sc.text(err)
		r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
			st.Status = catalog.StatusError
			st.Error = msg
		})
		ev := log.Warn()
		if errors.Is(err, context.Canceled) {
			ev = log.Info()
		}
		ev.Str("error", msg).Msg("full refresh failed; the previous acceleration, if any, keeps serving")
		t.markReady()
		return err
	}
	t.setErr(nil)
	r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
		st.Status = catalog.StatusReady
		st.LastRefresh = stats.Completed
		st.Rows = stats.Rows
		st.Error = ""
		st.Loaded = true
		st.Columns = stats.Columns
		st.Generation++
	})
	log.Info().Int64("rows", stats.Rows).Int64("bytes", stats.Bytes).Dur("duration", stats.Duration).
		Msg("full refresh done")
	t.markReady()
	return nil
}

func (r *Runner) setNext(name string, next time.Time) {
	r.reg.Update(name, func(st *catalog.DatasetState) { st.NextRefresh = next })
}

func (t *task) markReady() { t.readyOnce.Do(func() { close(t.ready) }) }

func (t *task) setErr(err error) {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	t.lastErr = err
}

func (t *task) err() error {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	return t.lastErr
}
