package refresh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/pgaccel/pgaccel/accelerator"
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
// is attached (see above). A failure is logged, counted and shown in the
// dataset's status (snapshots.error), and the dataset loads from its source
// (a refresh_mode: snapshot dataset tries again at its next poll), after
// the retries or the older snapshots its bootstrap_on_failure_behavior
// asks for.
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
	next := "the dataset loads from its source"
	if ds.Acceleration.RefreshMode == catalog.RefreshSnapshot {
		next = "the dataset tries again at its next poll"
	}
	backoff := bootstrapBackoff
	for attempt := 1; ; attempt++ {
		start := time.Now()
		s, ok, err := snapshot.Bootstrap(ctx, r.eng, r.snaps, ds.Name, func(s snapshot.Snapshot) error { return fitsConfig(ds, s) },
			behavior == catalog.SnapshotFailureFallback)
		switch {
		case ok:
			t.snapID = s.ID
			r.served(ds.Name, s)
			r.metrics.snapshotDone(ds.Name, "bootstrap", "download", s.Size, time.Since(start))
			ev := log.Info()
			if err != nil {
				// An older one, the current one having failed.
				r.snapshotFailed(ds.Name, "bootstrap", err,
					fmt.Sprintf("serving the older snapshot %s (bootstrap_on_failure_behavior: fallback)", s.ID))
				ev = log.Warn().AnErr("current_failed", err)
			} else {
				r.snapshotSucceeded(ds.Name)
			}
			ev.Str("snapshot", s.ID).Int64("bytes", s.Size).Time("last_refresh", s.LastRefresh).
				Dur("duration", time.Since(start)).Msg("bootstrapped the acceleration from a snapshot")
			return
		case err == nil:
			log.Debug().Msg("no snapshot to bootstrap from")
			return
		case attempt < tries && ctx.Err() == nil:
			r.metrics.snapshotFailed(ds.Name, "bootstrap", snapshotReason(err))
			log.Warn().Err(err).Int("attempt", attempt).Msg("bootstrap from a snapshot failed; retrying")
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff *= 2
		default:
			r.snapshotFailed(ds.Name, "bootstrap", err, next)
			log.Warn().Err(err).Msg("bootstrap from a snapshot failed; " + next)
			return
		}
	}
}

// snapshotFailed counts a failed snapshot operation of the dataset and
// shows it in its status (snapshots.error), with what follows from it.
func (r *Runner) snapshotFailed(name, operation string, err error, then string) {
	r.metrics.snapshotFailed(name, operation, snapshotReason(err))
	msg := operation + ": " + r.sc.text(err)
	if then != "" {
		msg += "; " + then
	}
	r.reg.Update(name, func(st *catalog.DatasetState) { st.SnapshotError = msg })
}

// snapshotSucceeded clears the status's snapshot failure.
func (r *Runner) snapshotSucceeded(name string) {
	r.reg.Update(name, func(st *catalog.DatasetState) { st.SnapshotError = "" })
}

// errSnapshotSchema marks a snapshot refused for its schema.
var errSnapshotSchema = errors.New("snapshot schema")

// snapshotReason is the metrics reason of a failed snapshot operation.
func snapshotReason(err error) string {
	switch {
	case errors.Is(err, errSnapshotSchema):
		return "schema"
	case errors.Is(err, snapshot.ErrCorrupt):
		return "checksum"
	case errors.Is(err, snapshot.ErrNotFound):
		return "not_found"
	case errors.Is(err, snapshot.ErrConflict):
		return "conflict"
	case errors.Is(err, snapshot.ErrOutcomeUnknown):
		return "unknown_outcome"
	case errors.Is(err, snapshot.ErrStore):
		return "store"
	}
	return "other"
}

// served records the snapshot the dataset now serves.
func (r *Runner) served(name string, s snapshot.Snapshot) {
	r.reg.Update(name, func(st *catalog.DatasetState) {
		st.SnapshotServed = catalog.SnapshotInfo{ID: s.ID, Created: s.Created, Bytes: s.Size}
	})
	r.metrics.snapshotServed(name, s.Created)
}

// fitsConfig checks a snapshot's schema against the dataset's config: the
// columns it names (primary_key, time_column) must be there.
func fitsConfig(ds *catalog.Dataset, s snapshot.Snapshot) error {
	if len(s.Schema) == 0 {
		return fmt.Errorf("%w: the snapshot records no schema", errSnapshotSchema)
	}
	has := func(name string) bool {
		return slices.ContainsFunc(s.Schema, func(c snapshot.Column) bool { return c.Name == name })
	}
	a := &ds.Acceleration
	for _, k := range a.PrimaryKey {
		if !has(k) {
			return fmt.Errorf("%w: it has no column %s, which acceleration.primary_key names", errSnapshotSchema, k)
		}
	}
	if ds.TimeColumn != "" && !has(ds.TimeColumn) {
		return fmt.Errorf("%w: it has no column %s, which time_column names", errSnapshotSchema, ds.TimeColumn)
	}
	return nil
}

// snapshotEvery publishes a snapshot of t's dataset every interval
// (snapshots_trigger: time_interval, the default for changes datasets,
// whose changes stream in without a refresh completing), until ctx ends.
func (r *Runner) snapshotEvery(ctx context.Context, t *task, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.publishSnapshot(t)
		}
	}
}

// publishSnapshot publishes a snapshot of t's dataset in the background
// (after a completed refresh, or on its interval: see above), one at a
// time per dataset; not before the dataset holds data.
func (r *Runner) publishSnapshot(t *task) {
	ds := t.dataset()
	if r.snaps == nil || !createsSnapshots(ds) {
		return
	}
	if st, _ := r.reg.State(ds.Name); !st.Loaded {
		return
	}
	if !t.snapMu.TryLock() {
		return // the one being made covers this turn
	}
	t.snapMu.Unlock()
	r.mu.Lock()
	if r.publishCtx == nil || r.closing {
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
		st, _ := r.reg.State(ds.Name) // read before the copy: its data is at least this new
		s, err := snapshot.Create(r.publishCtx, r.eng, r.snaps, ds.Name, st.DataAsOf)
		switch {
		case errors.Is(err, snapshot.ErrUnchanged):
			log.Debug().Str("snapshot", s.ID).Msg("no snapshot made: nothing changed since the current one")
		case err != nil:
			r.snapshotFailed(ds.Name, "create", err, "")
			log.Warn().Err(err).Msg("creating a snapshot failed")
		default:
			r.metrics.snapshotDone(ds.Name, "create", "upload", s.Size, time.Since(start))
			r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
				st.SnapshotPublished = catalog.SnapshotInfo{ID: s.ID, Created: s.Created, Bytes: s.Size}
				st.SnapshotError = ""
			})
			log.Info().Str("snapshot", s.ID).Str("object", s.Object).Int64("bytes", s.Size).
				Dur("duration", time.Since(start)).Msg("published a snapshot")
		}
	}()
}

// followSnapshot is a refresh of a refresh_mode: snapshot dataset: it
// never reads the source. It reads the metadata (conditionally, with the
// ETag of the last poll that loaded or confirmed the current snapshot),
// and when the current snapshot is strictly newer than the one served, it
// checks it against the config and the schema served, downloads it and
// swaps it in while queries go on from the previous one. The one metadata
// read serves the comparison, the check and the download. A current
// snapshot that cannot be loaded (refused, its object missing or corrupt)
// is an error of the poll, and the next poll tries again; with
// bootstrap_on_failure_behavior: fallback, the newest older snapshot that
// loads is swapped in meanwhile if it is newer than the one served.
func (r *Runner) followSnapshot(ctx context.Context, t *task) error {
	ds := t.dataset()
	log := r.log.With().Str("dataset", ds.Name).Str("location", r.snaps.String()).Logger()
	m, etag, err := snapshot.Read(ctx, r.snaps, t.snapETag)
	if errors.Is(err, snapshot.ErrNotModified) {
		log.Debug().Msg("snapshot metadata unchanged")
		return nil
	}
	if err != nil {
		return fmt.Errorf("refresh dataset %s: read the snapshot metadata: %w", ds.Name, err)
	}
	cur, ok := m.Current(ds.Name)
	st, _ := r.reg.State(ds.Name)
	switch {
	case !ok:
		if !st.Loaded {
			r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
				st.Error = "waiting for a first snapshot at " + r.snaps.String()
			})
			log.Info().Msg("no snapshot of the dataset published yet; waiting for the first")
		}
		return nil
	case cur.ID == t.snapID || st.Loaded && t.snapID == "" && !cur.LastRefresh.After(st.LastRefresh):
		t.snapID, t.snapETag = cur.ID, etag
		if st.SnapshotServed.ID != cur.ID {
			r.served(ds.Name, cur)
		}
		r.snapshotSucceeded(ds.Name)
		return nil
	case st.Loaded && cur.LastRefresh.Before(st.LastRefresh):
		log.Warn().Str("current", cur.ID).Str("loaded", t.snapID).
			Msg("snapshot metadata current id is older than the locally loaded snapshot")
		return nil // no ETag kept: the next poll reads the metadata in full
	}
	// A refused snapshot is logged once at warn (retries of the poll are
	// logged at debug after the first).
	refuse := func(err error) error {
		if t.snapRefused != cur.ID {
			t.snapRefused = cur.ID
			log.Warn().Err(err).Str("snapshot", cur.ID).Str("served", t.snapID).
				Msg("snapshot refused; the acceleration keeps serving the one it has")
		}
		return err
	}
	// usable checks a snapshot against the config and the columns served.
	usable := func(s snapshot.Snapshot) error {
		err := fitsConfig(ds, s)
		if err == nil && st.Loaded {
			err = sameSchema(st.Columns, s)
		}
		if err != nil {
			return fmt.Errorf("refresh dataset %s: snapshot %s is not loaded: %w", ds.Name, s.ID, err)
		}
		return nil
	}
	path, err := r.eng.FilePath(ds.Name)
	if err != nil {
		return err
	}
	// fetch downloads s beside the dataset's file.
	fetch := func(s snapshot.Snapshot) (string, error) {
		incoming := filepath.Join(filepath.Dir(path), accelerator.SnapshotDir, ds.Name+"_"+s.ID+".incoming")
		if err := snapshot.Fetch(ctx, r.snaps, s, incoming); err != nil {
			os.Remove(incoming)
			return "", fmt.Errorf("refresh dataset %s: download snapshot %s: %w", ds.Name, s.ID, err)
		}
		return incoming, nil
	}
	start := time.Now()
	load, incoming, err := cur, "", usable(cur)
	if err == nil {
		incoming, err = fetch(cur)
	}
	curErr := err
	if err != nil && r.cfg.Snapshots != nil && r.cfg.Snapshots.BootstrapOnFailureBehavior == catalog.SnapshotFailureFallback {
		// The newest older snapshot that loads, if it is newer than the
		// one served.
		list := m.Datasets[ds.Name].Snapshots
		for i := len(list) - 1; i >= 0 && err != nil && ctx.Err() == nil; i-- {
			s := list[i]
			if s.ID >= cur.ID || s.ID == t.snapID || st.Loaded && !s.LastRefresh.After(st.LastRefresh) || usable(s) != nil {
				continue
			}
			if in, ferr := fetch(s); ferr == nil {
				load, incoming, err = s, in, nil
			}
		}
	}
	if err != nil {
		if errors.Is(err, snapshot.ErrCorrupt) || errors.Is(err, errSnapshotSchema) {
			return refuse(err)
		}
		return err
	}
	defer os.Remove(incoming)
	info, err := r.eng.ReplaceFrom(ctx, ds.Name, incoming)
	if err != nil {
		return fmt.Errorf("refresh dataset %s: %w", ds.Name, err)
	}
	var f readFilters
	var ferr, serr error
	f.fallback, ferr = ds.FallbackFilter(info.Columns)
	f.subset, serr = ds.SubsetFilter(info.Columns)
	f.fallbackReady, f.subsetReady = ferr == nil, serr == nil
	r.publishLoaded(ds.Name, info.LastRefresh, load.DataAsOf, info.Rows, info.Columns, f, "")
	t.snapID = load.ID
	r.served(ds.Name, load)
	r.metrics.snapshotDone(ds.Name, "load", "download", load.Size, time.Since(start))
	t.markReady()
	if load.ID != cur.ID {
		// No ETag kept: the next poll reads the metadata in full and
		// tries the current one again.
		t.snapETag = ""
		log.Warn().Err(curErr).Str("current", cur.ID).Str("snapshot", load.ID).Int64("rows", info.Rows).
			Msg("the current snapshot cannot be loaded; loaded the newest older one (bootstrap_on_failure_behavior: fallback)")
		return curErr
	}
	t.snapETag = etag
	t.setErr(nil)
	r.snapshotSucceeded(ds.Name)
	log.Info().Str("snapshot", cur.ID).Int64("bytes", cur.Size).Int64("rows", info.Rows).
		Time("last_refresh", info.LastRefresh).Dur("duration", time.Since(start)).Msg("loaded a newer snapshot")
	return nil
}

// sameSchema refuses a snapshot whose columns are not those served.
func sameSchema(served []catalog.ColumnInfo, s snapshot.Snapshot) error {
	if len(served) != len(s.Schema) {
		return fmt.Errorf("%w: it has %d columns, the acceleration %d", errSnapshotSchema, len(s.Schema), len(served))
	}
	for i, c := range served {
		if c.Name != s.Schema[i].Name || c.TypeName != s.Schema[i].Type {
			return fmt.Errorf("%w: its column %d is %s %s, the acceleration's %s %s", errSnapshotSchema, i+1, s.Schema[i].Name, s.Schema[i].Type, c.Name, c.TypeName)
		}
	}
	return nil
}
