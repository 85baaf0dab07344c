package refresh

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/snapshot"
)

// DefaultConcurrency is how many refreshes run at once when
// Options.Concurrency is 0.
const DefaultConcurrency = 2

// warnEvery is how often a dataset whose refresh keeps failing logs the
// failure as a warning; in between, retries log at debug level.
const warnEvery = 5 * time.Minute

// Options tune a Runner.
type Options struct {
	// Clock is the scheduler's time source; SystemClock when nil.
	Clock Clock
	// Concurrency bounds the refreshes running at once; DefaultConcurrency
	// when 0. Refreshes past it wait for a slot.
	Concurrency int
	// Metrics records refresh outcomes; nil records nothing.
	Metrics *Metrics
	// Rand returns a uniform random number in [0, n); tests fix it.
	Rand func(n int64) int64
	// ProgressEvery is how often a running refresh logs its progress
	// (DefaultProgressEvery when 0).
	ProgressEvery time.Duration
	// Snapshots is the acceleration snapshot store (snapshots.location);
	// nil: none (snapshots.go).
	Snapshots snapshot.Store
	// Backoff bounds the waits between retries of failed refreshes and
	// connection attempts; zero fields take DefaultBackoff's.
	Backoff Backoff
}

// DefaultProgressEvery is how often a running refresh logs its progress.
const DefaultProgressEvery = 10 * time.Second

// Runner keeps every enabled dataset's acceleration loaded: one task per
// dataset attaches its acceleration, loads it, and refreshes it on its
// schedule (refresh_check_interval or refresh_cron, with jitter), on demand
// (Trigger, Refresh), and again after failures (Fibonacci backoff). A
// retention task per dataset evicts rows every retention_check_interval.
type Runner struct {
	cfg     *catalog.Config
	reg     *catalog.Registry
	eng     *accelerator.Engine
	log     zerolog.Logger
	sc      scrubber
	clock   Clock
	rnd     func(int64) int64
	metrics *Metrics
	sem     chan struct{} // one slot per refresh allowed to run
	// progressEvery: see Options.ProgressEvery.
	progressEvery time.Duration
	snaps         snapshot.Store
	backoff       Backoff

	tasks map[string]*task // by dataset name, fixed after NewRunner

	mu      sync.Mutex
	cancel  context.CancelFunc
	started bool
	closing bool
	// publishCtx is the context of snapshot publishes: Start's, which
	// Close cancels only when its own context ends (see Close).
	publishCtx    context.Context
	cancelPublish context.CancelFunc
	wg            sync.WaitGroup

	// repMu guards replication: the stream status of each changes
	// dataset.
	repMu       sync.Mutex
	replication map[string]ReplicationStatus
}

// task is one dataset's refresh state.
type task struct {
	dsp   atomic.Pointer[catalog.Dataset] // replaced by SetRefreshSQL
	sched schedule

	kick    chan struct{} // on-demand requests wake the task (buffered, 1)
	waitMu  sync.Mutex
	waiters []chan error // callers of Refresh waiting for the next refresh
	// fullWanted counts the on-demand full reloads asked for (TriggerFull),
	// fullDone is the count the last successful refresh served (guarded by
	// refreshMu): while fullWanted is past it, an append dataset's
	// refreshes reload in full.
	fullWanted atomic.Uint64
	fullDone   uint64

	snapMu sync.Mutex // one snapshot of the dataset made at a time (snapshots.go)
	// snapID and snapETag: the snapshot a refresh_mode: snapshot dataset
	// serves and the metadata's ETag that confirmed it; guarded by
	// refreshMu.
	snapID, snapETag string
	// snapRefused: the last snapshot refused (schema, checksum), logged
	// once.
	snapRefused string
	refreshMu   sync.Mutex // one refresh or retention pass of the dataset at a time
	attached    bool       // guarded by refreshMu
	stored      *accelerator.TableInfo
	waitLogged  bool // the "waits for its source" line was logged; guarded by refreshMu

	readyOnce sync.Once
	ready     chan struct{} // closed once the dataset loaded or its first load failed

	attachOnce sync.Once
	attachDone chan struct{} // closed once its stored acceleration is attached (or there is none, or it failed)

	watch atomic.Pointer[watch] // the refresh running, if any

	errMu   sync.Mutex
	lastErr error // the last refresh's error, nil after a success
	reached bool  // the source answered in this process (a refresh succeeded, or reachSource connected)
}

// connected reports whether t's source has answered in this process.
func (t *task) connected() bool {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	return t.reached
}

// markReached records that t's source answered.
func (t *task) markReached() {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	t.reached = true
}

// errSuperseded cancels a refresh that an on-demand request replaces.
var errSuperseded = errors.New("superseded by an on-demand refresh")

// NewRunner prepares a task for each dataset of cfg. Nothing runs before
// Start; Refresh works without it.
func NewRunner(cfg *catalog.Config, reg *catalog.Registry, eng *accelerator.Engine, log zerolog.Logger, opts Options) *Runner {
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Rand == nil {
		opts.Rand = defaultRand
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = DefaultProgressEvery
	}
	r := &Runner{
		cfg:     cfg,
		reg:     reg,
		eng:     eng,
		log:     log,
		sc:      newScrubber(cfg.Origin.DSN),
		clock:   opts.Clock,
		rnd:     opts.Rand,
		metrics: opts.Metrics,
		sem:     make(chan struct{}, opts.Concurrency),
		tasks:   make(map[string]*task),

		progressEvery: opts.ProgressEvery,
		snaps:         opts.Snapshots,
		backoff:       opts.Backoff.withDefaults(),
	}
	for _, ds := range cfg.Datasets {
		t := &task{
			sched:      newSchedule(&ds.Acceleration, opts.Rand),
			kick:       make(chan struct{}, 1),
			ready:      make(chan struct{}),
			attachDone: make(chan struct{}),
		}
		t.dsp.Store(ds)
		r.tasks[ds.Name] = t
	}
	return r
}

// dataset is the task's configuration (refresh_sql may change at run time).
func (t *task) dataset() *catalog.Dataset { return t.dsp.Load() }

// SetRefreshSQL replaces the dataset's refresh_sql until restart (PATCH
// /v1/datasets/{name}/acceleration) after checking it as the config file's
// would be, and starts a refresh with it.
func (r *Runner) SetRefreshSQL(dataset, sql string) error {
	t, err := r.task(dataset)
	if err != nil {
		return err
	}
	t.refreshMu.Lock()
	nd, err := t.dataset().WithRefreshSQL(sql)
	if err != nil {
		t.refreshMu.Unlock()
		return err
	}
	t.dsp.Store(nd)
	r.reg.ReplaceDataset(nd)
	t.refreshMu.Unlock()
	r.log.Info().Str("dataset", dataset).Str("refresh_sql", sql).Msg("refresh_sql changed until restart; refreshing")
	if r.isStarted() {
		t.request(nil)
	}
	return nil
}

// isStarted reports whether Start has run.
func (r *Runner) isStarted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}

// Start starts one goroutine per enabled dataset (see run) and one per
// dataset with retention checks (see retain). They stop when ctx is done or
// Close is called.
func (r *Runner) Start(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return
	}
	r.started = true
	r.publishCtx, r.cancelPublish = context.WithCancel(ctx)
	ctx, r.cancel = context.WithCancel(ctx)
	if r.mayOwnSlots() {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.watchOrphans(ctx)
		}()
	}
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
		if ds.Acceleration.RetentionCheckEnabled {
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				r.retain(ctx, t)
			}()
		}
		if trig, every := ds.Acceleration.SnapshotTrigger(); r.snaps != nil && createsSnapshots(ds) && trig == catalog.SnapshotsTriggerInterval {
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				r.snapshotEvery(ctx, t, every)
			}()
		}
	}
}

// Close stops the goroutines, cancelling refreshes in progress, and waits
// for them until ctx is done. A snapshot being published is not cancelled
// until then: cut short, its metadata write could be applied by the store
// while its outcome is unknown here; let finish, it is a current snapshot
// that the replicas started next find whole.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closing = true
	if r.cancel != nil {
		r.cancel()
	}
	cancelPublish := r.cancelPublish
	r.mu.Unlock()
	if cancelPublish == nil {
		cancelPublish = func() {}
	}
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		cancelPublish()
		return nil
	case <-ctx.Done():
		cancelPublish()
		return fmt.Errorf("stop refresh runner: %w", ctx.Err())
	}
}

// Progress reports the refresh of the dataset running now: the rows read
// so far and the origin's estimate of the table's rows (-1 when unknown).
// running is false when no refresh of it runs.
func (r *Runner) Progress(dataset string) (rows, estimate int64, running bool) {
	t, ok := r.tasks[dataset]
	if !ok {
		return 0, -1, false
	}
	w := t.watch.Load()
	if w == nil {
		return 0, -1, false
	}
	return w.rows.Load(), w.estimate.Load(), true
}

// ErrNoOnDemand is returned for a refresh of a dataset whose refresh mode
// does not refresh on demand.
var ErrNoOnDemand = errors.New("does not refresh on demand")

// ErrUnknownDataset is returned for a dataset the configuration lacks.
var ErrUnknownDataset = errors.New("no such dataset")

// ErrNotAccelerated is returned for a dataset with acceleration.enabled:
// false.
var ErrNotAccelerated = errors.New("is not accelerated")

// ErrNoFullReload is returned for a full reload of a dataset whose refresh
// mode has none (caching, snapshot).
var ErrNoFullReload = errors.New("has no full reload")

// Trigger starts an on-demand refresh of the dataset and returns at once.
// A refresh of it in progress is cancelled and replaced by the new one.
func (r *Runner) Trigger(dataset string) error { return r.trigger(dataset, false) }

// TriggerFull is Trigger for a full reload. An append dataset's
// acceleration is replaced, as at its first load, by every row its
// refresh_sql and refresh_data_window let through, so rows deleted or
// truncated at the source since are gone; its next refreshes append again.
// For a full dataset it is an ordinary refresh, and a changes dataset
// rebuilds on any on-demand refresh.
func (r *Runner) TriggerFull(dataset string) error { return r.trigger(dataset, true) }

func (r *Runner) trigger(dataset string, full bool) error {
	t, err := r.task(dataset)
	if err != nil {
		return err
	}
	if full {
		if err := fullReloadable(t.dataset()); err != nil {
			return err
		}
	}
	if !r.isStarted() {
		return fmt.Errorf("dataset %s: the refresh scheduler is not running", dataset)
	}
	if full {
		t.fullWanted.Add(1)
	}
	t.request(nil)
	return nil
}

// fullReloadable refuses a full reload of a dataset whose refresh mode has
// none.
func fullReloadable(ds *catalog.Dataset) error {
	switch m := ds.Acceleration.RefreshMode; m {
	case catalog.RefreshCaching, catalog.RefreshSnapshot:
		return fmt.Errorf("dataset %s %w (refresh_mode: %s)", ds.Name, ErrNoFullReload, m)
	}
	return nil
}

// Refresh starts an on-demand refresh of the dataset, as Trigger does, and
// waits for it. Before Start, it runs the refresh itself.
func (r *Runner) Refresh(ctx context.Context, dataset string) error {
	return r.refreshOnDemand(ctx, dataset, false)
}

// RefreshFull is Refresh for a full reload (see TriggerFull).
func (r *Runner) RefreshFull(ctx context.Context, dataset string) error {
	return r.refreshOnDemand(ctx, dataset, true)
}

func (r *Runner) refreshOnDemand(ctx context.Context, dataset string, full bool) error {
	t, err := r.task(dataset)
	if err != nil {
		return err
	}
	if full {
		if err := fullReloadable(t.dataset()); err != nil {
			return err
		}
		t.fullWanted.Add(1)
	}
	if !r.isStarted() {
		if t.dataset().Acceleration.RefreshMode == catalog.RefreshChanges {
			return fmt.Errorf("dataset %s: refresh_mode: changes loads and streams once the runner is started", dataset)
		}
		if err := r.acquire(ctx); err != nil {
			return err
		}
		defer r.release()
		return r.refresh(ctx, t)
	}
	done := make(chan error, 1)
	t.request(done)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// request queues an on-demand refresh; done, when not nil, receives its
// outcome.
func (t *task) request(done chan error) {
	if done != nil {
		t.waitMu.Lock()
		t.waiters = append(t.waiters, done)
		t.waitMu.Unlock()
	}
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// takeWaiters returns the callers waiting for the refresh about to start.
func (t *task) takeWaiters() []chan error {
	t.waitMu.Lock()
	defer t.waitMu.Unlock()
	w := t.waiters
	t.waiters = nil
	return w
}

// requeue puts back waiters of a refresh that was superseded.
func (t *task) requeue(w []chan error) {
	t.waitMu.Lock()
	defer t.waitMu.Unlock()
	t.waiters = append(w, t.waiters...)
}

// WaitReady blocks until the dataset has loaded once, or its first load
// failed, or ctx is done. It returns nil when the dataset has data to serve
// (a file-mode dataset restored from its file counts) or its load found
// nothing to accelerate, else the error of its last refresh.
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
	if st, _ := r.reg.State(dataset); st.Loaded || st.NothingToAccelerate {
		return nil
	}
	if err := t.err(); err != nil {
		return err
	}
	return fmt.Errorf("dataset %s is not loaded", dataset)
}

// WaitAttached blocks until every enabled dataset's stored acceleration,
// if it has one, is attached and published (serving, for the modes that
// serve stored data at once), or attaching failed, or ctx is done. It
// waits for no refresh: with the origin down, this is all a restarted
// pgaccel has to serve, and it takes a moment (DuckDB opening its files).
func (r *Runner) WaitAttached(ctx context.Context) error {
	for _, ds := range r.cfg.Datasets {
		if !ds.Acceleration.Enabled {
			continue
		}
		t := r.tasks[ds.Name]
		select {
		case <-t.attachDone:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (r *Runner) task(name string) (*task, error) {
	t, ok := r.tasks[name]
	if !ok {
		return nil, fmt.Errorf("dataset %s: %w", name, ErrUnknownDataset)
	}
	if !t.dataset().Acceleration.Enabled {
		return nil, fmt.Errorf("dataset %s %w (acceleration.enabled is false)", name, ErrNotAccelerated)
	}
	if m := t.dataset().Acceleration.RefreshMode; m == catalog.RefreshDisabled {
		return nil, fmt.Errorf("dataset %s %w (refresh_mode: %s)", name, ErrNoOnDemand, m)
	}
	return t, nil
}

func (r *Runner) acquire(ctx context.Context) error {
	select {
	case r.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Runner) release() { <-r.sem }

// run is a dataset's goroutine. It attaches the acceleration (a file-mode
// dataset with stored data serves it at once), then loops: wait until the
// next refresh is due or requested, run it, and schedule the next one.
//
// The first refresh: with stored data and refresh_on_startup: auto, the
// schedule continues from the stored last refresh (at once when that is
// overdue, never without a schedule), unless refresh_sql changed since, or
// the mode is append (an append dataset is not ready before its first
// append after start). Otherwise at once, after the initial jitter.
//
// After a failure: transient errors are retried after a Fibonacci backoff
// (1, 2, 3, 5, 8 ... s, at most 5 min, randomized) while
// refresh_retry_enabled and up to refresh_retry_max_attempts retries;
// configuration errors, and transient ones past the limit, wait for the
// next scheduled refresh. next_refresh keeps the due time of a refresh that
// has not succeeded yet.
func (r *Runner) run(ctx context.Context, t *task) {
	ds := t.dataset()
	log := r.log.With().Str("dataset", ds.Name).Logger()
	if ds.Acceleration.RefreshMode == catalog.RefreshCaching {
		t.attachFinished()
		r.runCaching(ctx, t)
		return
	}
	info, err := r.attach(ctx, t)
	t.attachFinished()
	if err != nil {
		log.Error().Str("error", r.sc.text(err)).Msg("cannot attach the acceleration")
		return
	}
	if ds.Acceleration.RefreshMode == catalog.RefreshDisabled {
		t.markReady()
		return
	}
	if ds.Acceleration.RefreshMode == catalog.RefreshChanges {
		r.runChanges(ctx, t)
		return
	}
	if m := ds.Acceleration.RefreshMode; !ModeImplemented(m) {
		log.Warn().Str("refresh_mode", m).Msg("refresh mode not implemented yet; refreshing in full")
	}

	now := r.clock.Now()
	var next plan
	reach := false // connect to the source in the background first
	switch {
	case ds.Acceleration.RefreshMode == catalog.RefreshSnapshot:
		next = plan{due: now, start: now} // a newer snapshot is looked for at startup
	case info != nil && ds.Acceleration.RefreshOnStartup != catalog.RefreshOnStartupAlways &&
		info.RefreshSQL == ds.Acceleration.RefreshSQL && !waitsForSource(ds):
		next = r.scheduled(t, info.LastRefresh) // none without a schedule: serve what is stored
		reach = next.start.IsZero() || next.start.After(now)
	case info != nil && info.RefreshSQL != ds.Acceleration.RefreshSQL && ds.Acceleration.RefreshOnStartup != catalog.RefreshOnStartupAlways:
		log.Info().Msg("refresh_sql changed since the stored refresh; refreshing now")
		next = plan{due: now, start: now}
	default:
		next = plan{due: now, start: now.Add(t.sched.initialDelay())}
	}
	if !t.sched.scheduled() {
		next.due = time.Time{} // next_refresh only for scheduled refreshes
	}
	log.Debug().Str("schedule", describeSchedule(&ds.Acceleration)).Time("first", next.start).Msg("refresh scheduled")

	retries := 0
	var warn warnLimit
	if reach {
		// The stored acceleration serves; the source is connected to in
		// the background until it answers or the first refresh is due.
		r.setNext(ds.Name, next.due)
		ok, kicked := r.reachSource(ctx, t, log, next.start, &warn)
		if !ok {
			return
		}
		if kicked {
			next.start, next.announce = r.clock.Now(), false
		}
	}
	for {
		if !r.wait(ctx, t, next) {
			return
		}
		err := r.runOnce(ctx, t)
		if ctx.Err() != nil {
			return
		}
		now := r.clock.Now()
		if err == nil {
			if retries > 0 {
				log.Info().Int("retries", retries).Msg("refresh recovered")
			}
			retries = 0
			warn.reset()
			next = r.scheduled(t, now)
			continue
		}
		reason, transient := classify(err)
		acc := ds.Acceleration
		msg := r.sc.text(err)
		st, _ := r.reg.State(ds.Name)
		// Until the source has answered once in this process, a source
		// that cannot be reached is retried without limit (the dataset is
		// registered, or resumes refreshing, once it answers).
		connecting := !t.connected() && sourceUnreachable(reason)
		switch {
		case !transient:
			ev := log.Error().Str("reason", reason).Str("error", msg)
			if st.Loaded && (reason == reasonAuth || reason == reasonTLS) {
				ev.Msgf("Dataset '%s' cannot connect to its source because of its configuration, so it is served from its existing acceleration and will not refresh until the configuration is fixed. %s", ds.Name, msg)
			} else {
				ev.Msg("refresh failed with an error that retrying cannot fix; not retried until the next scheduled or on-demand refresh")
			}
		case connecting || acc.RefreshRetryEnabled && (acc.RefreshRetryMaxAttempts == 0 || retries < acc.RefreshRetryMaxAttempts):
			retries++
			wait := r.backoff.delay(retries, r.rnd)
			ev := warn.event(&log, now).Str("reason", reason).Str("error", msg).Int("retry", retries).Dur("retry_in", wait)
			switch {
			case sourceUnreachable(reason) && st.Loaded:
				// At start, or in a later outage: the spec's words.
				ev.Msgf("Failed to connect to the source for dataset %s. Serving data from the existing acceleration for %s while retrying the connection. %s", ds.Name, ds.Name, msg)
			case connecting:
				ev.Msgf("Failed to connect to the source for dataset %s. It has no acceleration to serve yet: queries on it go to the origin until the source answers; retrying the connection. %s", ds.Name, msg)
			default:
				ev.Msg("refresh failed; the previous acceleration, if any, keeps serving; retrying")
			}
			// next_refresh keeps the due time that has not succeeded.
			next = plan{due: next.due, start: now.Add(wait)}
			continue
		default:
			log.Warn().Str("reason", reason).Str("error", msg).Int("retries", retries).
				Msg("refresh failed and retries are exhausted or disabled; waiting for the next scheduled or on-demand refresh")
		}
		retries = 0
		after := r.scheduled(t, now)
		if !next.due.IsZero() && !after.due.IsZero() {
			after.due, after.announce = next.due, false // kept until a refresh succeeds
		}
		next = after
	}
}

// plan is when the next refresh runs.
type plan struct {
	due   time.Time // reported as next_refresh; zero when none is scheduled
	start time.Time // when it starts; zero: only on demand
	// announce: report start once due passes (a cron time followed by
	// jitter).
	announce bool
}

// scheduled plans the refresh the schedule has after from.
func (r *Runner) scheduled(t *task, from time.Time) plan {
	due, start := t.sched.next(from)
	return plan{due: due, start: start, announce: start.After(due)}
}

// wait publishes next_refresh and waits until p.start (forever when zero)
// or an on-demand request; it reports false when ctx is done.
func (r *Runner) wait(ctx context.Context, t *task, p plan) bool {
	r.setNext(t.dataset().Name, p.due)
	if p.announce {
		ok, kicked := r.sleep(ctx, t, p.due)
		if !ok || kicked {
			return ok
		}
		r.setNext(t.dataset().Name, p.start)
	}
	ok, _ := r.sleep(ctx, t, p.start)
	return ok
}

// sleep waits until at (forever when zero), an on-demand request, or ctx;
// ok is false when ctx is done.
func (r *Runner) sleep(ctx context.Context, t *task, at time.Time) (ok, kicked bool) {
	var timeout <-chan time.Time
	if !at.IsZero() {
		d := at.Sub(r.clock.Now())
		if d <= 0 {
			return ctx.Err() == nil, false
		}
		timer := r.clock.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C()
	}
	select {
	case <-ctx.Done():
		return false, false
	case <-t.kick:
		return true, true
	case <-timeout:
		return true, false
	}
}

// runOnce runs one refresh of t in a concurrency slot. An on-demand
// request that arrives while it runs cancels it and starts a new one; the
// callers waiting get the outcome of the refresh that completes.
func (r *Runner) runOnce(ctx context.Context, t *task) error {
	for {
		if err := r.acquire(ctx); err != nil {
			return err
		}
		select { // requests so far are served by this refresh
		case <-t.kick:
		default:
		}
		waiters := t.takeWaiters()
		runCtx, cancel := context.WithCancelCause(ctx)
		done := make(chan error, 1)
		go func() { done <- r.refresh(runCtx, t) }()
		var err error
		superseded := false
		select {
		case err = <-done:
		case <-t.kick:
			cancel(errSuperseded)
			err = <-done
			superseded = true
		}
		cancel(nil)
		r.release()
		if superseded && ctx.Err() == nil {
			r.log.Info().Str("dataset", t.dataset().Name).Msg("refresh in progress cancelled: an on-demand refresh replaces it")
			t.requeue(waiters)
			continue
		}
		for _, w := range waiters {
			w <- err
		}
		return err
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
	if waitsForSource(t.dataset()) {
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
	r.publishLoaded(t.dataset().Name, info.LastRefresh, info.Rows, info.Columns, f, "")
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

// refresh runs one refresh of t and publishes its outcome.
func (r *Runner) refresh(ctx context.Context, t *task) error {
	t.refreshMu.Lock()
	defer t.refreshMu.Unlock()
	ds := t.dataset()
	log := r.log.With().Str("dataset", ds.Name).Logger()
	if _, err := r.attachLocked(ctx, t); err != nil {
		return fmt.Errorf("refresh dataset %s: %w", ds.Name, err)
	}
	if ds.Acceleration.RefreshMode == catalog.RefreshSnapshot && r.snaps != nil {
		if err := r.followSnapshot(ctx, t); err != nil {
			then := "tried again at the next poll"
			if st, _ := r.reg.State(ds.Name); st.Loaded && st.SnapshotServed.ID != "" {
				then = "serving snapshot " + st.SnapshotServed.ID + " meanwhile; " + then
			}
			r.snapshotFailed(ds.Name, "load", err, then)
			r.failed(t, err)
			return err
		}
		return nil
	}
	r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
		if st.Loaded {
			st.Status = catalog.StatusRefreshing
		}
	})
	mode := ds.Acceleration.RefreshMode
	if mode != catalog.RefreshAppend {
		mode = catalog.RefreshFull
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
	stampBefore := r.verifyStamp(ctx, ds, mode)
	out, err := loadDataset(ctx, r.eng, r.cfg.Origin.DSN, ds, mode == catalog.RefreshAppend, r.clock.Now(), w)
	stopProgress()
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
		err = fmt.Errorf("refresh dataset %s: %w", ds.Name, err)
		msg := r.sc.text(err)
		if st, _ := r.reg.State(ds.Name); !st.Loaded && t.stored != nil && waitsForSource(ds) {
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
		r.publishNothing(ds.Name, out.completed, out.columns)
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
	r.publishLoaded(ds.Name, out.completed, out.total, out.columns, out.filters, stamp)
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

// retain is a dataset's retention goroutine: with retention_check_enabled,
// it evicts rows every retention_check_interval. When a setting the policy
// needs is missing it logs a [retention] error naming it and schedules no
// pass.
func (r *Runner) retain(ctx context.Context, t *task) {
	ds := t.dataset()
	if refusals := retentionRefusals(ds); len(refusals) > 0 {
		for _, f := range refusals {
			r.log.Error().Str("dataset", ds.Name).Str("missing", f.setting).
				Msgf("[retention] dataset %s: no retention pass is scheduled: %s", ds.Name, f.Error())
		}
		return
	}
	interval := ds.Acceleration.RetentionCheckInterval
	for {
		timer := r.clock.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
		}
		if err := r.retainOnce(ctx, t); err != nil && ctx.Err() == nil {
			r.log.Warn().Str("dataset", ds.Name).Str("error", r.sc.text(err)).Msg("[retention] pass failed; the next one runs on schedule")
		}
	}
}

// RetainNow runs one retention pass of the dataset now (for tests and
// operators).
func (r *Runner) RetainNow(ctx context.Context, dataset string) error {
	t, err := r.task(dataset)
	if err != nil {
		return err
	}
	return r.retainOnce(ctx, t)
}

func (r *Runner) retainOnce(ctx context.Context, t *task) error {
	t.refreshMu.Lock()
	defer t.refreshMu.Unlock()
	ds := t.dataset()
	if st, _ := r.reg.State(ds.Name); !st.Loaded && t.stored == nil {
		return nil
	}
	info, err := r.eng.Stored(ctx, ds.Name)
	if err != nil || info == nil {
		return err
	}
	pol, err := retentionPolicy(ds, info.Specs)
	if err != nil {
		return err
	}
	preds := pol.duckPredicates(r.clock.Now())
	deleted, total, err := r.eng.DeleteWhere(ctx, ds.Name, preds)
	if err != nil {
		return err
	}
	r.metrics.retained(ds.Name, deleted, total)
	if deleted > 0 {
		r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
			st.Rows = total
			st.Generation++
			st.DataGeneration++
		})
	}
	r.log.Info().Str("dataset", ds.Name).Int64("deleted", deleted).Int64("rows", total).
		Str("policy", pol.describe()).Msg("[retention] pass done")
	return nil
}

// publishLoaded makes the dataset's new data visible: Ready, Loaded, its
// last refresh, rows, columns and fallback filter, and a new generation.
func (r *Runner) publishLoaded(name string, last time.Time, rows int64, cols []catalog.ColumnInfo, f readFilters, stamp string) {
	r.reg.Update(name, func(st *catalog.DatasetState) {
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
func (r *Runner) publishNothing(name string, last time.Time, cols []catalog.ColumnInfo) {
	r.reg.Update(name, func(st *catalog.DatasetState) {
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

func (t *task) markReady() { t.readyOnce.Do(func() { close(t.ready) }) }

func (t *task) attachFinished() { t.attachOnce.Do(func() { close(t.attachDone) }) }

func (t *task) setErr(err error) {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	t.lastErr = err
	if err == nil {
		t.reached = true
	}
}

func (t *task) err() error {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	return t.lastErr
}

// waitsForSource reports whether a stored acceleration of ds must wait for
// a refresh in this process before it serves: append (issue 4: not ready
// before its first append after start), and changes and caching (the
// spec's modes that wait for their source).
func waitsForSource(ds *catalog.Dataset) bool {
	switch ds.Acceleration.RefreshMode {
	case catalog.RefreshAppend, catalog.RefreshChanges, catalog.RefreshCaching:
		return true
	}
	return false
}

// describeSchedule says when a dataset refreshes, for logs.
func describeSchedule(a *catalog.Acceleration) string {
	var parts []string
	if a.RefreshCheckInterval > 0 {
		parts = append(parts, "every "+a.RefreshCheckInterval.String())
	}
	if a.RefreshCron != "" {
		parts = append(parts, "at cron '"+a.RefreshCron+"'")
	}
	if len(parts) == 0 {
		return "once, then on demand"
	}
	return strings.Join(parts, " ")
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
