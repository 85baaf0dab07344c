package refresh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/catalog"
)

// Slots pgaccel created and no dataset uses hold WAL at the origin until
// someone drops them: a changes dataset removed from the config, renamed,
// or given another slot leaves its old slot behind. The runner lists them
// (Slots), counts their retained WAL in a metric every orphanCheckEvery,
// and drops one on request (DropSlot; `pgaccel slots drop`).

// orphanCheckEvery is how often the runner looks for slots no dataset uses.
const orphanCheckEvery = time.Minute

// SlotStatus is a replication slot named like pgaccel's (pgaccel_...).
type SlotStatus struct {
	Name string `json:"name"`
	// Instance is the instance id in its name; Mine is true when that is
	// this pgaccel's.
	Instance string `json:"instance"`
	Mine     bool   `json:"mine"`
	// Dataset is the dataset of this pgaccel that streams from it, ""
	// when none does (an orphan, if Mine).
	Dataset       string `json:"dataset,omitempty"`
	Active        bool   `json:"active"`
	WALStatus     string `json:"wal_status,omitempty"`
	RetainedBytes int64  `json:"retained_bytes"`
}

// Orphan reports whether the slot is this pgaccel's and no dataset uses
// it.
func (s SlotStatus) Orphan() bool { return s.Mine && s.Dataset == "" }

// ErrSlotInUse is returned by DropSlot for a slot a dataset streams from,
// or one a walsender is using.
var ErrSlotInUse = errors.New("is in use")

// ErrNoSlot is returned by DropSlot for a slot the origin does not have.
var ErrNoSlot = errors.New("no such replication slot")

// ErrNotPgaccelSlot is returned by DropSlot for a slot not named like
// pgaccel's.
var ErrNotPgaccelSlot = errors.New("is not named like pgaccel's (" + SlotPrefix + "...); drop it at the origin yourself")

// usedSlots maps the slot of each changes dataset to the dataset.
func (r *Runner) usedSlots() (map[string]string, string, error) {
	inst, err := InstanceID(r.cfg.Runtime.DataDir)
	if err != nil {
		return nil, "", err
	}
	used := map[string]string{}
	for _, t := range r.allTasks() {
		ds := t.dataset()
		if ds.Acceleration.Enabled && ds.Acceleration.RefreshMode == catalog.RefreshChanges {
			used[namesFor(ds, inst).slot] = ds.Name
		}
	}
	return used, inst, nil
}

// Slots lists the origin's replication slots named like pgaccel's, whether
// this pgaccel's datasets use them, and the WAL each holds.
func (r *Runner) Slots(ctx context.Context) ([]SlotStatus, error) {
	used, inst, err := r.usedSlots()
	if err != nil {
		return nil, err
	}
	conn, err := connectOrigin(ctx, r.cfg.Origin.DSN)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	res := conn.ExecParams(ctx, `SELECT slot_name, active, COALESCE(wal_status, ''),
		COALESCE(pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), restart_lsn), 0)::bigint
		FROM pg_catalog.pg_replication_slots WHERE slot_name LIKE 'pgaccel\_%' ORDER BY slot_name`, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, fmt.Errorf("list replication slots: %w", res.Err)
	}
	out := make([]SlotStatus, 0, len(res.Rows))
	for _, row := range res.Rows {
		s := SlotStatus{Name: string(row[0]), Active: string(row[1]) == "t", WALStatus: string(row[2])}
		s.RetainedBytes, _ = strconv.ParseInt(string(row[3]), 10, 64)
		if rest, ok := strings.CutPrefix(s.Name, SlotPrefix); ok && len(rest) > 9 && rest[8] == '_' && validInstanceID(rest[:8]) {
			s.Instance = rest[:8]
		}
		s.Mine = s.Instance == inst
		s.Dataset = used[s.Name]
		out = append(out, s)
	}
	return out, nil
}

// DropSlot drops a replication slot named like pgaccel's that no dataset of
// this pgaccel uses and no walsender is using.
func (r *Runner) DropSlot(ctx context.Context, name string) error {
	if !strings.HasPrefix(name, SlotPrefix) {
		return fmt.Errorf("replication slot %s %w", name, ErrNotPgaccelSlot)
	}
	slots, err := r.Slots(ctx)
	if err != nil {
		return err
	}
	for _, s := range slots {
		if s.Name != name {
			continue
		}
		switch {
		case s.Dataset != "":
			return fmt.Errorf("replication slot %s %w: dataset %s streams from it", name, ErrSlotInUse, s.Dataset)
		case s.Active:
			return fmt.Errorf("replication slot %s %w by a walsender (another pgaccel instance?)", name, ErrSlotInUse)
		}
		conn, err := connectOrigin(ctx, r.cfg.Origin.DSN)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "SELECT pg_catalog.pg_drop_replication_slot("+quoteLiteral(name)+")").ReadAll(); err != nil {
			return fmt.Errorf("drop replication slot %s: %w", name, err)
		}
		r.log.Warn().Str("slot", name).Int64("retained_bytes", s.RetainedBytes).Msg("dropped a replication slot no dataset uses")
		return nil
	}
	return fmt.Errorf("%w: %s", ErrNoSlot, name)
}

// watchOrphans checks, every orphanCheckEvery while ctx lasts, for slots of
// this pgaccel that no dataset uses, logging them once and publishing
// their retained WAL in pgaccel_replication_orphan_slot_retained_bytes.
func (r *Runner) watchOrphans(ctx context.Context) {
	logged := map[string]bool{}
	for {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		slots, err := r.Slots(cctx)
		cancel()
		if err == nil {
			orphans := map[string]int64{}
			for _, s := range slots {
				if !s.Orphan() {
					continue
				}
				orphans[s.Name] = s.RetainedBytes
				if !logged[s.Name] {
					logged[s.Name] = true
					r.log.Warn().Str("slot", s.Name).Int64("retained_bytes", s.RetainedBytes).
						Msg("a replication slot of this pgaccel that no dataset streams from holds WAL at the origin: drop it with `pgaccel slots drop " + s.Name + "`")
				}
			}
			r.metrics.orphanSlots(orphans)
		} else {
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) {
				r.log.Debug().Str("error", r.sc.text(err)).Msg("cannot list replication slots")
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(orphanCheckEvery):
		}
	}
}

// mayOwnSlots reports whether this pgaccel may have created replication
// slots: it has a changes dataset, or an instance id from an earlier run
// (whose changes datasets may be gone from the config).
func (r *Runner) mayOwnSlots() bool {
	for _, t := range r.allTasks() {
		if ds := t.dataset(); ds.Acceleration.Enabled && ds.Acceleration.RefreshMode == catalog.RefreshChanges {
			return true
		}
	}
	_, err := os.Stat(filepath.Join(r.cfg.Runtime.DataDir, instanceIDFile))
	return err == nil
}
