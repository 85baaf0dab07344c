package refresh

import (
	"context"
	"errors"
	"fmt"
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
	// born is when the Runner was made: the data it finds stored holds
	// no transaction committed through this process.
	born time.Time

	// tasks by dataset name: NewRunner's, then changed by a reload
	// (AddDataset, RemoveDataset) under tasksMu.
	tasksMu sync.RWMutex
	tasks   map[string]*task
	// runCtx is Start's context, for the tasks a reload starts.
	runCtx context.Context

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

	// stop ends the task's goroutines (a reload removed the dataset);
	// running counts them.
	stop    context.CancelFunc
	running sync.WaitGroup

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
		born:          time.Now(),
	}
	for _, ds := range cfg.Datasets {
		r.tasks[ds.Name] = r.newTask(ds)
	}
	return r
}

func (r *Runner) newTask(ds *catalog.Dataset) *task {
	t := &task{
		sched:      newSchedule(&ds.Acceleration, r.rnd),
		kick:       make(chan struct{}, 1),
		ready:      make(chan struct{}),
		attachDone: make(chan struct{}),
	}
	t.dsp.Store(ds)
	return t
}

// taskOf returns the named dataset's task.
func (r *Runner) taskOf(name string) (*task, bool) {
	r.tasksMu.RLock()
	defer r.tasksMu.RUnlock()
	t, ok := r.tasks[name]
	return t, ok
}

// allTasks returns every task.
func (r *Runner) allTasks() []*task {
	r.tasksMu.RLock()
	defer r.tasksMu.RUnlock()
	out := make([]*task, 0, len(r.tasks))
	for _, t := range r.tasks {
		out = append(out, t)
	}
	return out
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
	r.runCtx = ctx
	for _, t := range r.allTasks() {
		r.startTask(ctx, t)
	}
}

// startTask starts t's goroutines (see Start) under ctx; the runner is
// held.
func (r *Runner) startTask(ctx context.Context, t *task) {
	ds := t.dataset()
	if !ds.Acceleration.Enabled {
		return
	}
	ctx, t.stop = context.WithCancel(ctx)
	goTask := func(fn func()) {
		r.wg.Add(1)
		t.running.Add(1)
		go func() {
			defer r.wg.Done()
			defer t.running.Done()
			fn()
		}()
	}
	goTask(func() { r.run(ctx, t) })
	if ds.Acceleration.RetentionCheckEnabled {
		goTask(func() { r.retain(ctx, t) })
	}
	if trig, every := ds.Acceleration.SnapshotTrigger(); r.snaps != nil && createsSnapshots(ds) && trig == catalog.SnapshotsTriggerInterval {
		goTask(func() { r.snapshotEvery(ctx, t, every) })
	}
}

// AddDataset starts refreshing a dataset a reload added (the registry
// has it already): at once when the runner runs, else at Start.
func (r *Runner) AddDataset(ds *catalog.Dataset) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return errors.New("the refresh runner is stopping")
	}
	t := r.newTask(ds)
	r.tasksMu.Lock()
	if _, ok := r.tasks[ds.Name]; ok {
		r.tasksMu.Unlock()
		return fmt.Errorf("dataset %s is refreshed already", ds.Name)
	}
	r.tasks[ds.Name] = t
	r.tasksMu.Unlock()
	if r.started {
		r.startTask(r.runCtx, t)
	}
	return nil
}

// RemoveDataset stops refreshing a dataset a reload removed or replaces:
// its refresh in progress is cancelled and its goroutines waited for,
// until ctx ends.
func (r *Runner) RemoveDataset(ctx context.Context, name string) error {
	r.tasksMu.Lock()
	t, ok := r.tasks[name]
	delete(r.tasks, name)
	r.tasksMu.Unlock()
	if !ok {
		return fmt.Errorf("dataset %s: %w", name, ErrUnknownDataset)
	}
	r.mu.Lock()
	stop := t.stop
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
	t.markReady()
	t.attachFinished()
	t.waitMu.Lock()
	for _, w := range t.waiters {
		w <- fmt.Errorf("dataset %s was removed from the configuration", name)
	}
	t.waiters = nil
	t.waitMu.Unlock()
	done := make(chan struct{})
	go func() {
		t.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("dataset %s: its refresh did not stop: %w", name, ctx.Err())
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
	t, ok := r.taskOf(dataset)
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
		if err := modeOf(t.dataset()).fullReload(t.dataset()); err != nil {
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
		if err := modeOf(t.dataset()).fullReload(t.dataset()); err != nil {
			return err
		}
		t.fullWanted.Add(1)
	}
	if !r.isStarted() {
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
	for _, t := range r.allTasks() {
		if !t.dataset().Acceleration.Enabled {
			continue
		}
		select {
		case <-t.attachDone:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (r *Runner) task(name string) (*task, error) {
	t, ok := r.taskOf(name)
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
