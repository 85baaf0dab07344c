package refresh

import (
	"context"
	"fmt"

	"github.com/pgaccel/pgaccel/catalog"
)

// A refreshMode is what one refresh_mode does in the Runner, one type per
// mode: how a dataset of the mode lives (live: its task's goroutine, from
// attach until the runner stops), what one refresh of it does, whether an
// on-demand full reload applies to it, and whether stored data waits for
// the source before it serves. The Runner asks modeOf for a dataset's and
// does not switch on the mode's name elsewhere.
type refreshMode interface {
	// live is the dataset's goroutine (Runner.run).
	live(ctx context.Context, r *Runner, t *task)
	// once runs one refresh of the dataset with t.refreshMu held
	// (Runner.refresh), attaching the acceleration first when it loads
	// one (attachedForRefresh): the scheduled and on-demand refreshes of
	// the scheduled modes, and an on-demand refresh before Start.
	once(ctx context.Context, r *Runner, t *task) error
	// fullReload is nil when an on-demand full reload (TriggerFull,
	// RefreshFull) applies to the mode, else why not.
	fullReload(ds *catalog.Dataset) error
	// waitsForSource: a stored acceleration of the mode does not serve
	// before a refresh in this process (issue 4 for append; the spec's
	// modes that wait for their source: changes and caching).
	waitsForSource() bool
}

// modeOf returns ds's refresh mode. A refresh_mode the runner does not
// implement refreshes in full (ModeImplemented; run logs a warning).
func modeOf(ds *catalog.Dataset) refreshMode {
	switch ds.Acceleration.RefreshMode {
	case catalog.RefreshAppend:
		return appendMode{}
	case catalog.RefreshChanges:
		return changesMode{}
	case catalog.RefreshCaching:
		return cachingMode{}
	case catalog.RefreshSnapshot:
		return snapshotMode{}
	case catalog.RefreshDisabled:
		return disabledMode{}
	}
	return fullMode{}
}

// fullMode (refresh_mode: full) replaces the acceleration with every row
// of the source at each refresh, on its schedule (scheduler.go).
type fullMode struct{}

func (fullMode) live(ctx context.Context, r *Runner, t *task) {
	if info, ok := r.attachFirst(ctx, t); ok {
		r.runScheduled(ctx, t, info, false)
	}
}
func (fullMode) once(ctx context.Context, r *Runner, t *task) error { return r.load(ctx, t, false) }
func (fullMode) fullReload(*catalog.Dataset) error                  { return nil }
func (fullMode) waitsForSource() bool                               { return false }

// appendMode (refresh_mode: append) adds the source's rows past the
// acceleration's at each refresh (timefmt.go, load.go); an on-demand full
// reload makes the next refresh replace every row.
type appendMode struct{}

func (appendMode) live(ctx context.Context, r *Runner, t *task) {
	if info, ok := r.attachFirst(ctx, t); ok {
		r.runScheduled(ctx, t, info, false)
	}
}
func (appendMode) once(ctx context.Context, r *Runner, t *task) error { return r.load(ctx, t, true) }
func (appendMode) fullReload(*catalog.Dataset) error                  { return nil }
func (appendMode) waitsForSource() bool                               { return true }

// snapshotMode (refresh_mode: snapshot) loads the newest acceleration
// snapshot of the store at each refresh, looking for one at startup
// (snapshots.go); without a snapshot store it loads from the source in
// full.
type snapshotMode struct{}

func (snapshotMode) live(ctx context.Context, r *Runner, t *task) {
	if info, ok := r.attachFirst(ctx, t); ok {
		r.runScheduled(ctx, t, info, true)
	}
}

func (snapshotMode) once(ctx context.Context, r *Runner, t *task) error {
	if r.snaps == nil {
		return r.load(ctx, t, false)
	}
	if err := r.attachedForRefresh(ctx, t); err != nil {
		return err
	}
	ds := t.dataset()
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

func (snapshotMode) fullReload(ds *catalog.Dataset) error { return noFullReload(ds) }
func (snapshotMode) waitsForSource() bool                 { return false }

// changesMode (refresh_mode: changes) loads the table once and then
// applies its changes from logical replication (changes.go).
type changesMode struct{}

func (changesMode) live(ctx context.Context, r *Runner, t *task) {
	if _, ok := r.attachFirst(ctx, t); ok {
		r.runChanges(ctx, t)
	}
}

func (changesMode) once(_ context.Context, _ *Runner, t *task) error {
	return fmt.Errorf("dataset %s: refresh_mode: changes loads and streams once the runner is started", t.dataset().Name)
}
func (changesMode) fullReload(*catalog.Dataset) error { return nil }
func (changesMode) waitsForSource() bool              { return true }

// cachingMode (refresh_mode: caching) loads nothing: the proxy keeps the
// origin's answers in the results cache (caching.go).
type cachingMode struct{}

func (cachingMode) live(ctx context.Context, r *Runner, t *task) {
	t.attachFinished()
	r.runCaching(ctx, t)
}

func (cachingMode) once(ctx context.Context, r *Runner, t *task) error {
	r.dropCached(t)
	return nil
}
func (cachingMode) fullReload(ds *catalog.Dataset) error { return noFullReload(ds) }
func (cachingMode) waitsForSource() bool                 { return true }

// disabledMode (refresh_mode: disabled) serves what is stored and runs
// no refresh, on demand neither (Runner.task refuses it).
type disabledMode struct{}

func (disabledMode) live(ctx context.Context, r *Runner, t *task) {
	if _, ok := r.attachFirst(ctx, t); ok {
		t.markReady()
	}
}
func (disabledMode) once(_ context.Context, _ *Runner, t *task) error {
	return fmt.Errorf("dataset %s %w (refresh_mode: %s)", t.dataset().Name, ErrNoOnDemand, catalog.RefreshDisabled)
}
func (disabledMode) fullReload(*catalog.Dataset) error { return nil }
func (disabledMode) waitsForSource() bool              { return false }

// noFullReload is the refusal of a full reload for a mode that has none.
func noFullReload(ds *catalog.Dataset) error {
	return fmt.Errorf("dataset %s %w (refresh_mode: %s)", ds.Name, ErrNoFullReload, ds.Acceleration.RefreshMode)
}
