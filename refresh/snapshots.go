package refresh

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/snapshot"
)

// Acceleration snapshots (the spec's "Fast Cold Starts with Snapshots"):
// with a snapshot store (Options.Snapshots), a file-mode dataset whose
// acceleration.snapshots is enabled or bootstrap_only and that has no file
// yet starts from the location's current snapshot of it instead of a first
// load from the origin; one that is enabled or create_only publishes a
// snapshot after each completed refresh, unless nothing changed since the
// current one.

// bootstrapRetries is how many more times bootstrap_on_failure_behavior:
// retry tries a failed bootstrap, with bootstrapBackoff doubling between.
const (
	bootstrapRetries = 3
	bootstrapBackoff = time.Second
)

func bootstraps(ds *catalog.Dataset) bool {
	s := ds.Acceleration.Snapshots
	return ds.Acceleration.Mode == catalog.ModeFile && (s == catalog.SnapshotsEnabled || s == catalog.SnapshotsBootstrapOnly)
}

func createsSnapshots(ds *catalog.Dataset) bool {
	s := ds.Acceleration.Snapshots
	return ds.Acceleration.Mode == catalog.ModeFile && ds.Acceleration.RefreshMode != catalog.RefreshSnapshot &&
		(s == catalog.SnapshotsEnabled || s == catalog.SnapshotsCreateOnly)
}

// bootstrap puts the current snapshot in place for t's dataset before it
// is attached (see above). A failure is logged and the dataset loads from
// its source, after the retries or the older snapshots its
// bootstrap_on_failure_behavior asks for.
func (r *Runner) bootstrap(ctx context.Context, t *task) {
	ds := t.dataset()
	if r.snaps == nil || !bootstraps(ds) {
		return
	}
	log := r.log.With().Str("dataset", ds.Name).Str("location", r.snaps.String()).Logger()
	behavior := r.cfg.Snapshots.BootstrapOnFailureBehavior
	tries := 1
	if behavior == catalog.SnapshotFailureRetry {
		tries += bootstrapRetries
	}
	backoff := bootstrapBackoff
	for attempt := 1; ; attempt++ {
		start := time.Now()
		s, ok, err := snapshot.Bootstrap(ctx, r.eng, r.snaps, ds.Name, func(s snapshot.Snapshot) error { return fitsConfig(ds, s) },
			behavior == catalog.SnapshotFailureFallback)
		switch {
		case err == nil && ok:
			log.Info().Str("snapshot", s.ID).Int64("bytes", s.Size).Time("last_refresh", s.LastRefresh).
				Dur("duration", time.Since(start)).Msg("bootstrapped the acceleration from a snapshot")
			return
		case err == nil:
			log.Debug().Msg("no snapshot to bootstrap from")
			return
		case attempt < tries && ctx.Err() == nil:
			log.Warn().Err(err).Int("attempt", attempt).Msg("bootstrap from a snapshot failed; retrying")
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff *= 2
		default:
			log.Warn().Err(err).Msg("bootstrap from a snapshot failed; the dataset loads from its source")
			return
		}
	}
}

// fitsConfig checks a snapshot's schema against the dataset's config: the
// columns it names (primary_key, time_column) must be there.
func fitsConfig(ds *catalog.Dataset, s snapshot.Snapshot) error {
	if len(s.Schema) == 0 {
		return errors.New("the snapshot records no schema")
	}
	has := func(name string) bool {
		return slices.ContainsFunc(s.Schema, func(c snapshot.Column) bool { return c.Name == name })
	}
	a := &ds.Acceleration
	for _, k := range a.PrimaryKey {
		if !has(k) {
			return fmt.Errorf("its schema has no column %s, which acceleration.primary_key names", k)
		}
	}
	if ds.TimeColumn != "" && !has(ds.TimeColumn) {
		return fmt.Errorf("its schema has no column %s, which time_column names", ds.TimeColumn)
	}
	return nil
}

// publishSnapshot publishes a snapshot of t's dataset in the background
// after a completed refresh (see above), one at a time per dataset.
func (r *Runner) publishSnapshot(t *task) {
	ds := t.dataset()
	if r.snaps == nil || !createsSnapshots(ds) {
		return
	}
	r.mu.Lock()
	if r.runCtx == nil || r.closing {
		r.mu.Unlock()
		return // not started, or closing
	}
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		t.snapMu.Lock()
		defer t.snapMu.Unlock()
		log := r.log.With().Str("dataset", ds.Name).Str("location", r.snaps.String()).Logger()
		start := time.Now()
		s, err := snapshot.Create(r.runCtx, r.eng, r.snaps, ds.Name)
		switch {
		case errors.Is(err, snapshot.ErrUnchanged):
			log.Debug().Str("snapshot", s.ID).Msg("no snapshot made: nothing changed since the current one")
		case err != nil:
			log.Warn().Err(err).Msg("creating a snapshot failed")
		default:
			log.Info().Str("snapshot", s.ID).Str("object", s.Object).Int64("bytes", s.Size).
				Dur("duration", time.Since(start)).Msg("published a snapshot")
		}
	}()
}
