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
// write retried on conflicts. An empty file is refused; a failed upload
// or metadata write leaves the metadata as it was.
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
		_ = st.Delete(context.WithoutCancel(ctx), s.Object)
		return Snapshot{}, fmt.Errorf("snapshot of %s: the file changed during the upload (%d bytes, then %d)", s.Dataset, fi.Size(), size)
	}
	s.Size, s.SHA256 = size, sum
	var dropped []Snapshot
	err = Update(ctx, st, func(m *Metadata) error {
		dropped = nil
		ds := m.Datasets[s.Dataset]
		if ds == nil {
			ds = &Snapshots{}
			m.Datasets[s.Dataset] = ds
		}
		if cur, ok := m.Current(s.Dataset); ok && cur.ID >= s.ID {
			return fmt.Errorf("snapshot of %s: the current one (%s) is newer", s.Dataset, cur.ID)
		}
		ds.Snapshots = append(ds.Snapshots, s)
		if n := len(ds.Snapshots); n > keepSnapshots {
			dropped = slices.Clone(ds.Snapshots[:n-keepSnapshots])
			ds.Snapshots = slices.Delete(ds.Snapshots, 0, n-keepSnapshots)
		}
		ds.Current = s.ID
		return nil
	})
	if err != nil {
		_ = st.Delete(context.WithoutCancel(ctx), s.Object)
		return Snapshot{}, err
	}
	// Best effort: an object left behind costs storage only, and the next
	// publish does not see it again.
	for _, d := range dropped {
		_ = st.Delete(context.WithoutCancel(ctx), d.Object)
	}
	return s, nil
}

// maxConflicts bounds the retries of a conditional metadata write.
const maxConflicts = 20

// Update reads the metadata, lets change modify it, and writes it back
// if no other writer changed it meanwhile; on a conflict it reads again
// and retries (with a short random backoff), up to maxConflicts times.
func Update(ctx context.Context, st Store, change func(*Metadata) error) error {
	for attempt := 0; ; attempt++ {
		data, etag, err := st.ReadMeta(ctx, "")
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		m, err := decode(data)
		if err != nil {
			return err
		}
		if err := change(m); err != nil {
			return err
		}
		m.Version = metadataVersion
		out, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		if _, err = st.WriteMeta(ctx, out, etag); !errors.Is(err, ErrConflict) {
			return err
		}
		if attempt >= maxConflicts {
			return fmt.Errorf("snapshot metadata at %s: %d conflicting writers in a row: %w", st, attempt+1, err)
		}
		d := time.Duration(rand.Int64N(int64(20*time.Millisecond) << min(attempt, 5)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
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
