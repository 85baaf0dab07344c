package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Metadata is the content of a location's metadata object.
type Metadata struct {
	// Version is the format's (1).
	Version  int                   `json:"version"`
	Datasets map[string]*Snapshots `json:"datasets"`
}

// Snapshots are one dataset's, oldest first, and its current one's id.
type Snapshots struct {
	Current   string     `json:"current"`
	Snapshots []Snapshot `json:"snapshots"`
}

// Snapshot is one published copy of a dataset's acceleration file.
type Snapshot struct {
	ID      string    `json:"id"`
	Dataset string    `json:"dataset"`
	Created time.Time `json:"created"`
	// Object is its key under the location.
	Object string `json:"object"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Schema is the dataset table's columns, in order.
	Schema []Column `json:"schema"`
	// LastRefresh is when the refresh whose data it holds completed.
	LastRefresh time.Time `json:"last_refresh"`
	// LSN is a changes dataset's applied position.
	LSN string `json:"lsn,omitempty"`
	// DataAsOf is a time before which every transaction committed at the
	// origin is in its data (catalog.DatasetState.DataAsOf); zero when
	// not known (a snapshot made before pgaccel recorded it).
	DataAsOf time.Time `json:"data_as_of,omitzero"`
}

// Column is a column of a snapshot's schema: its name and the origin's type
// (format_type), as the dataset's checkpoint records them.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// metadataVersion is the format written.
const metadataVersion = 1

// keepSnapshots is how many snapshots of a dataset the metadata lists.
// The object of one that drops off the list is deleted once the metadata
// no longer names it: no reader starts downloading it after that, and one
// that already had (a fallback bootstrap reaching for the oldest) goes on
// reading, as S3 and POSIX keep serving an object being read when it is
// deleted.
var keepSnapshots = 16

// ObjectKey is where a snapshot of dataset created at t goes: Hive-style
// partitions by month, day and dataset.
func ObjectKey(dataset string, t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("month=%s/day=%s/dataset=%s/%s_%s.duckdb", t.Format("2006-01"), t.Format("2006-01-02"), dataset, dataset, snapshotID(t))
}

// snapshotID is a snapshot's id: its UTC creation time, which sorts as
// the times do.
func snapshotID(t time.Time) string { return t.UTC().Format("20060102T150405.000000000Z") }

// decode reads metadata (empty for none).
func decode(data []byte) (*Metadata, error) {
	m := &Metadata{}
	if data != nil {
		if err := json.Unmarshal(data, m); err != nil {
			return nil, fmt.Errorf("snapshot metadata: %w", err)
		}
		if m.Version > metadataVersion {
			return nil, fmt.Errorf("snapshot metadata: version %d is newer than this pgaccel reads (%d)", m.Version, metadataVersion)
		}
	}
	if m.Datasets == nil {
		m.Datasets = map[string]*Snapshots{}
	}
	return m, nil
}

// Current returns the dataset's current snapshot in m, if any.
func (m *Metadata) Current(dataset string) (Snapshot, bool) {
	ds := m.Datasets[dataset]
	if ds == nil {
		return Snapshot{}, false
	}
	for _, s := range ds.Snapshots {
		if s.ID == ds.Current {
			return s, true
		}
	}
	return Snapshot{}, false
}

// Publish uploads the file at path as a new snapshot of s.Dataset (s
// gives its schema and source position; the rest is filled in) and then
// makes it the dataset's current one in the metadata, by a conditional
// write retried on conflicts. An empty file is refused. A failed upload or
// metadata write leaves the metadata as it was, and the object is deleted;
// but when the metadata write's outcome stays unknown (ErrOutcomeUnknown:
// Update could not find out), the metadata may name the snapshot, and its
// object is kept.
func Publish(ctx context.Context, st Store, path string, s Snapshot) (Snapshot, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Snapshot{}, err
	}
	if fi.Size() == 0 {
		return Snapshot{}, fmt.Errorf("snapshot of %s: the file %s is empty", s.Dataset, path)
	}
	s.Created = time.Now().UTC()
	s.ID = snapshotID(s.Created)
	s.Object = ObjectKey(s.Dataset, s.Created)
	size, sum, err := st.PutFile(ctx, s.Object, path)
	if err != nil {
		return Snapshot{}, err
	}
	if size != fi.Size() {
		deleteObjects(ctx, st, s.Object)
		return Snapshot{}, fmt.Errorf("snapshot of %s: the file changed during the upload (%d bytes, then %d)", s.Dataset, fi.Size(), size)
	}
	s.Size, s.SHA256 = size, sum
	// dropped: the snapshots any attempt dropped from the list; last: the
	// metadata as the last attempt saw or wrote it.
	var dropped []string
	var last *Metadata
	err = Update(ctx, st, func(m *Metadata) error {
		last = m
		ds := m.Datasets[s.Dataset]
		if ds == nil {
			ds = &Snapshots{}
			m.Datasets[s.Dataset] = ds
		}
		if m.names(s.Dataset, s.Object) {
			return ErrApplied // an attempt whose outcome was unknown was applied
		}
		if cur, ok := m.Current(s.Dataset); ok && cur.ID >= s.ID {
			return fmt.Errorf("snapshot of %s: the current one (%s) is newer", s.Dataset, cur.ID)
		}
		ds.Snapshots = append(ds.Snapshots, s)
		if n := len(ds.Snapshots); n > keepSnapshots {
			for _, d := range ds.Snapshots[:n-keepSnapshots] {
				if !slices.Contains(dropped, d.Object) {
					dropped = append(dropped, d.Object)
				}
			}
			ds.Snapshots = slices.Delete(ds.Snapshots, 0, n-keepSnapshots)
		}
		ds.Current = s.ID
		return nil
	})
	if errors.Is(err, ErrOutcomeUnknown) {
		// The metadata may name the snapshot, now or once the write
		// lands: its object stays, and so do the ones the write drops
		// (at worst, objects no metadata names: storage, nothing more).
		return Snapshot{}, fmt.Errorf("snapshot %s of %s: the metadata may name it; its object %s is kept: %w", s.ID, s.Dataset, s.Object, err)
	}
	if err != nil {
		// No metadata names the object, nor can come to.
		deleteObjects(ctx, st, s.Object)
		return Snapshot{}, err
	}
	// The objects of the snapshots the applied write dropped, that no
	// metadata names since: best effort (one left behind costs storage
	// only, and the next publish does not see it again).
	var gone []string
	for _, o := range dropped {
		if !last.names(s.Dataset, o) {
			gone = append(gone, o)
		}
	}
	deleteObjects(ctx, st, gone...)
	return s, nil
}

// names reports whether m lists a snapshot of dataset whose object is
// key.
func (m *Metadata) names(dataset, key string) bool {
	ds := m.Datasets[dataset]
	return ds != nil && slices.ContainsFunc(ds.Snapshots, func(s Snapshot) bool { return s.Object == key })
}

// deleteObjects deletes the objects keys, best effort, within
// resolveTimeout even when ctx has ended.
func deleteObjects(ctx context.Context, st Store, keys ...string) {
	if len(keys) == 0 {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
	defer cancel()
	for _, k := range keys {
		_ = st.Delete(dctx, k)
	}
}

// maxConflicts bounds the retries of a conditional metadata write.
const maxConflicts = 20

// maxUnknown bounds the writes Update retries after one whose outcome is
// unknown.
const maxUnknown = 3

// resolveTimeout bounds what Update and Publish still do once their
// context has ended: reading the metadata to settle a write's unknown
// outcome, deleting an object no metadata names.
var resolveTimeout = 15 * time.Second

// ErrApplied is what a change given to Update returns when the metadata
// already holds its update: an earlier attempt, whose outcome was unknown,
// was applied. Update then returns nil.
var ErrApplied = errors.New("snapshot metadata: the update is there already")

// Update reads the metadata, lets change modify it, and writes it back
// if no other writer changed it meanwhile; on a conflict it reads again
// and retries (with a short random backoff), up to maxConflicts times.
//
// A write whose outcome is unknown (ErrOutcomeUnknown) is not taken for
// failed: Update reads again, and change, given the metadata, returns
// ErrApplied if its update is there (Update returns nil); else it is
// applied again, by a write conditional on the ETag just read, which also
// rules out the unknown one landing later. When Update gives up (ctx
// ended, or maxUnknown such writes in a row) it reads the metadata once
// more (within resolveTimeout, ctx or not): its error is ErrOutcomeUnknown
// only when that read cannot rule out that one of them was or will be
// applied.
func Update(ctx context.Context, st Store, change func(*Metadata) error) error {
	var u unsettled
	conflicts := 0
	for {
		if len(u.ifMatch) > 0 && (ctx.Err() != nil || len(u.ifMatch) > maxUnknown) {
			return u.settle(ctx, st, change, u.err)
		}
		data, etag, err := st.ReadMeta(ctx, "")
		if err != nil && !errors.Is(err, ErrNotFound) {
			return u.settle(ctx, st, change, err)
		}
		m, err := decode(data)
		if err != nil {
			return u.settle(ctx, st, change, err)
		}
		if err := change(m); errors.Is(err, ErrApplied) {
			return nil
		} else if err != nil {
			return u.settle(ctx, st, change, err)
		}
		m.Version = metadataVersion
		out, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return u.settle(ctx, st, change, err)
		}
		_, err = st.WriteMeta(ctx, out, etag)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrOutcomeUnknown):
			u.ifMatch, u.err = append(u.ifMatch, etag), err
			continue // read again at once: what happened?
		case !errors.Is(err, ErrConflict):
			return u.settle(ctx, st, change, err)
		}
		if conflicts++; conflicts > maxConflicts {
			return u.settle(ctx, st, change, fmt.Errorf("snapshot metadata at %s: %d conflicting writers in a row: %w", st, conflicts, err))
		}
		d := time.Duration(rand.Int64N(int64(20*time.Millisecond) << min(conflicts-1, 5)))
		select {
		case <-ctx.Done():
			return u.settle(ctx, st, change, ctx.Err())
		case <-time.After(d):
		}
	}
}

// unsettled are an Update's writes whose outcome is unknown.
type unsettled struct {
	ifMatch []string // the ETag each was conditional on ("": none)
	err     error    // the last one's error
}

// settle is Update's end with err: with no write of unknown outcome, err;
// else the metadata is read again (within resolveTimeout once ctx has
// ended): nil when change finds its update there (ErrApplied), err when
// none of the writes can be applied any more (the metadata has moved on
// from the ETag each was conditional on; err then is no longer
// ErrOutcomeUnknown), else the last one's error, ErrOutcomeUnknown.
func (u *unsettled) settle(ctx context.Context, st Store, change func(*Metadata) error, err error) error {
	if len(u.ifMatch) == 0 {
		return err
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
		defer cancel()
	}
	data, etag, rerr := st.ReadMeta(ctx, "")
	if rerr != nil && !errors.Is(rerr, ErrNotFound) {
		return fmt.Errorf("%w (reading the metadata again to find out failed too: %v)", u.err, rerr)
	}
	exists := rerr == nil
	if m, derr := decode(data); derr == nil && errors.Is(change(m), ErrApplied) {
		return nil
	}
	for _, t := range u.ifMatch {
		// A write conditional on t can still be applied while the
		// metadata has ETag t (or, for none, while there is none).
		if t == etag && (t != "" || !exists) {
			return u.err
		}
	}
	if errors.Is(err, ErrOutcomeUnknown) {
		return fmt.Errorf("%w: the metadata write was not applied (the metadata has moved on without it): %v", ErrStore, err)
	}
	return err
}

// Read returns the metadata and its ETag; with ifNoneMatch set,
// ErrNotModified when it still has that ETag. A location without metadata
// reads as empty.
func Read(ctx context.Context, st Store, ifNoneMatch string) (*Metadata, string, error) {
	data, etag, err := st.ReadMeta(ctx, ifNoneMatch)
	if errors.Is(err, ErrNotFound) {
		m, _ := decode(nil)
		return m, "", nil
	}
	if err != nil {
		return nil, etag, err
	}
	m, err := decode(data)
	return m, etag, err
}

// Fetch downloads snapshot s into the file at dst: to a temporary file
// beside it, checked (size, SHA-256) before it is renamed into place, so
// dst is either the old file or the whole new one.
func Fetch(ctx context.Context, st Store, s Snapshot, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.download-%d", dst, time.Now().UnixNano())
	defer os.Remove(tmp)
	size, sum, err := st.GetFile(ctx, s.Object, tmp)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w (the metadata names it, but %s does not have it)", err, st)
	}
	if err != nil {
		return err
	}
	if size != s.Size {
		return fmt.Errorf("%w: snapshot %s of %s: %d bytes downloaded, the metadata says %d", ErrCorrupt, s.ID, s.Dataset, size, s.Size)
	}
	if sum != s.SHA256 {
		return fmt.Errorf("%w: snapshot %s of %s: SHA-256 %s, the metadata says %s", ErrCorrupt, s.ID, s.Dataset, sum, s.SHA256)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}
