package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/pgaccel/pgaccel/accelerator"
)

// ErrUnchanged: the dataset holds what its current snapshot holds (the
// same completed refresh, the same change-stream position): no snapshot is
// made (the spec's "skipping a snapshot when nothing changed").
var ErrUnchanged = errors.New("snapshot: nothing changed since the current snapshot")

// Create publishes a snapshot of a file-mode dataset of e: a consistent
// copy of its database (accelerator.SnapshotTo), uploaded, then made the
// dataset's current snapshot. When the dataset has not changed since the
// current one it returns that one and ErrUnchanged, without copying. The
// local copy is removed either way. asOf is the data's DataAsOf as the
// dataset's state says before the copy (zero: not known).
func Create(ctx context.Context, e *accelerator.Engine, st Store, dataset string, asOf time.Time) (Snapshot, error) {
	m, _, err := Read(ctx, st, "")
	if err != nil {
		return Snapshot{}, err
	}
	cur, hasCur := m.Current(dataset)
	if info, err := e.Stored(ctx, dataset); err == nil && info != nil && hasCur && unchanged(cur, info) {
		return cur, ErrUnchanged
	}
	path, info, err := e.SnapshotTo(ctx, dataset)
	if err != nil {
		return Snapshot{}, err
	}
	defer os.Remove(path)
	if hasCur && unchanged(cur, info) {
		return cur, ErrUnchanged
	}
	s := describe(dataset, info)
	if !asOf.IsZero() {
		s.DataAsOf = asOf.UTC()
	}
	return Publish(ctx, st, path, s)
}

// describe is what a snapshot of dataset records of its checkpoint.
func describe(dataset string, info *accelerator.TableInfo) Snapshot {
	s := Snapshot{Dataset: dataset, LastRefresh: info.LastRefresh.UTC(), LSN: lsnOf(info)}
	for _, c := range info.Columns {
		s.Schema = append(s.Schema, Column{Name: c.Name, Type: c.TypeName})
	}
	return s
}

func lsnOf(info *accelerator.TableInfo) string {
	if info.Replication == nil {
		return ""
	}
	return strconv.FormatUint(info.Replication.LSN, 10)
}

func unchanged(cur Snapshot, info *accelerator.TableInfo) bool {
	return cur.LastRefresh.Equal(info.LastRefresh.UTC()) && cur.LSN == lsnOf(info)
}

// Bootstrap puts the dataset's current snapshot where e keeps the
// dataset's file, before it is attached, when no file is there yet. check
// (nil: none) validates a snapshot's metadata (its schema against the
// config) before anything is downloaded. With older, a current snapshot
// that fails (the check, or its download) gives way to the ones before it,
// newest first (bootstrap_on_failure_behavior: fallback). ok is false when
// there was a file already or the location holds no snapshot of the
// dataset; err is the first failure when none could be used, and, with ok,
// why the current one was passed over for the older s.
func Bootstrap(ctx context.Context, e *accelerator.Engine, st Store, dataset string, check func(Snapshot) error, older bool) (s Snapshot, ok bool, err error) {
	dst, err := e.FilePath(dataset)
	if err != nil {
		return Snapshot{}, false, err
	}
	if _, err := os.Stat(dst); err == nil {
		return Snapshot{}, false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return Snapshot{}, false, err
	}
	m, _, err := Read(ctx, st, "")
	if err != nil {
		return Snapshot{}, false, err
	}
	cur, has := m.Current(dataset)
	if !has {
		return Snapshot{}, false, nil
	}
	candidates := []Snapshot{cur}
	if older {
		list := m.Datasets[dataset].Snapshots
		for i := len(list) - 1; i >= 0; i-- {
			if list[i].ID < cur.ID {
				candidates = append(candidates, list[i])
			}
		}
	}
	var first error
	for _, s := range candidates {
		err := ctx.Err()
		if err == nil && check != nil {
			err = check(s)
		}
		if err == nil {
			err = Fetch(ctx, st, s, dst)
		}
		if err == nil {
			return s, true, first
		}
		if first == nil {
			first = fmt.Errorf("snapshot %s of %s: %w", s.ID, dataset, err)
		}
	}
	return cur, false, first
}
