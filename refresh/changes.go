package refresh

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// refresh_mode: changes. A dataset's acceleration follows the origin's
// committed changes through logical replication (pgoutput, protocol 1,
// binary tuples), see doc.go for the whole design:
//
//  1. A session connects twice: a normal connection for the catalog and
//     a replication connection. It checks the table's replica identity,
//     makes sure the publication publishes the table (created before the
//     slot), and decides between resuming and rebuilding.
//  2. Resume: the stored acceleration's checkpoint holds the stream's
//     position (the end of the last applied transaction), the slot and
//     the origin's system id; the slot must still exist, not be lost, and
//     not have confirmed more than that position.
//  3. Rebuild: the slot is created (dropped first if it exists) with an
//     exported snapshot, the table is copied under that snapshot and
//     swapped in with the slot's consistent point as its position, and
//     streaming starts at exactly that point.
//  4. Stream: changes are coalesced per key (changes_batch.go) and applied
//     in batches, each committed in one DuckDB transaction with its new
//     position, which is then acknowledged; readers never see half an
//     origin transaction.

// Batching of the change stream.
const (
	// changesMaxRows and changesMaxBytes bound what a batch holds in
	// memory: past them, the batch is applied into the open DuckDB
	// transaction (also in the middle of a large origin transaction) and
	// committed at the next transaction boundary.
	changesMaxRows  = 20000
	changesMaxBytes = 16 << 20
	// changesMaxDelay is how long complete transactions wait for more
	// before they are applied.
	changesMaxDelay = 100 * time.Millisecond
	// changesStatusEvery is how often the position is reported to the
	// origin even when nothing changes.
	changesStatusEvery = 10 * time.Second
	// changesPublishEvery is how often the status (lag, positions) is
	// published while the applied position stands still.
	changesPublishEvery = 50 * time.Millisecond
	// changesIdlePersist is how often a position the origin reports for
	// an idle table is written to the checkpoint (and then acknowledged).
	changesIdlePersist = 10 * time.Second
	// changesPollReady is how often a stream not yet ready asks the
	// origin where it stands.
	changesPollReady = time.Second
	// changesAskEvery is how often the stream asks the origin where its
	// WAL stands while a reader waits for a position it has not reached
	// (read-your-writes: catalog.Applied).
	changesAskEvery = 5 * time.Millisecond
	// changesWaitLinger is how long complete transactions a reader waits
	// for are held for others to join them in one apply, unless every
	// reader's is in.
	changesWaitLinger = 2 * time.Millisecond
	// changesAsOfEvery is how often a caught-up stream publishes that it
	// is (DataAsOf): max_staleness is read against it to this precision.
	changesAsOfEvery = time.Second
)

// rebuildOnDemand is why a dataset rebuilds after an on-demand refresh.
const rebuildOnDemand = "an on-demand refresh"

// errRebuild ends a stream session whose dataset must be rebuilt (a schema
// change the stream cannot follow); it carries why.
type errRebuild struct{ why string }

func (e *errRebuild) Error() string { return "the dataset must be rebuilt: " + e.why }

// changeStream is the state of one changes dataset's stream across its
// sessions.
type changeStream struct {
	r     *Runner
	t     *task
	log   zerolog.Logger
	names streamNames
	// rebuild, when set, says why the next session rebuilds.
	rebuild string
	// systemID is the origin's system identifier.
	systemID string
	// applied is the position of the last commit to the acceleration.
	applied pglogrepl.LSN
	// status is what the admin port shows.
	status ReplicationStatus
	// caughtUp: a session caught up since the last failure (the
	// reconnect backoff then starts over).
	caughtUp bool
}

// ReplicationStatus is where a changes dataset's stream stands.
type ReplicationStatus struct {
	Slot, Publication string
	// AppliedLSN is the end of the last transaction applied.
	AppliedLSN string
	// ServerLSN is the latest WAL position the origin reported.
	ServerLSN string
	// LagMs is how long the oldest committed change not yet applied has
	// been waiting (0 when caught up); LagBytes is the origin's WAL past
	// the applied position.
	LagMs, LagBytes int64
	// SlotState is the slot's wal_status (reserved, extended, unreserved,
	// lost); Streaming whether this pgaccel streams from it.
	SlotState string
	Streaming bool
	// RetainedBytes is the WAL the slot holds at the origin; SafeWALBytes
	// how much more it may fall behind before max_slot_wal_keep_size
	// invalidates it (-1: no limit); MaxSlotWALKeepSize is that setting.
	RetainedBytes, SafeWALBytes int64
	MaxSlotWALKeepSize          string
	// Transactions, Inserts, Updates, Deletes count what was applied since
	// the start; Reconnects and Rebuilds the sessions.
	Transactions, Inserts, Updates, Deletes int64
	Reconnects, Rebuilds                    int64
}

// runChanges is the goroutine of a changes dataset: it attaches the
// acceleration and runs stream sessions until ctx is done, reconnecting
// with the backoff of failed refreshes, rebuilding on demand.
func (r *Runner) runChanges(ctx context.Context, t *task) {
	ds := t.dataset()
	log := r.log.With().Str("dataset", ds.Name).Logger()
	if _, err := r.attach(ctx, t); err != nil {
		log.Error().Str("error", r.sc.text(err)).Msg("cannot attach the acceleration")
		return
	}
	inst, err := InstanceID(r.cfg.Runtime.DataDir)
	if err != nil {
		log.Error().Str("error", err.Error()).Msg("cannot read the instance id that names replication slots")
		r.failed(t, err)
		return
	}
	s := &changeStream{r: r, t: t, log: log, names: namesFor(ds, inst)}
	s.status.Slot, s.status.Publication = s.names.slot, s.names.publication
	r.setReplication(ds.Name, s.status)
	retries := 0
	var lastWarn time.Time
	for {
		err := s.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if rb := (*errRebuild)(nil); errors.As(err, &rb) {
			s.rebuild, retries = rb.why, 0
			continue
		}
		if s.caughtUp {
			// The session worked: the backoff starts over.
			retries, lastWarn, s.caughtUp = 0, time.Time{}, false
		}
		reason, transient := classify(err)
		msg := r.sc.text(err)
		r.failed(t, err)
		s.status.Streaming = false
		s.status.Reconnects++
		r.metrics.reconnected(ds.Name)
		r.setReplication(ds.Name, s.status)
		if !transient {
			log.Error().Str("reason", reason).Str("error", msg).
				Msg("the change stream failed with an error that retrying cannot fix; it resumes on an on-demand refresh (which rebuilds) or after a restart")
			if ok, _ := r.sleep(ctx, t, time.Time{}); !ok {
				return
			}
			s.rebuild, retries = rebuildOnDemand, 0
			continue
		}
		retries++
		wait := r.backoff.delay(retries, r.rnd)
		ev := log.Debug()
		if now := time.Now(); lastWarn.IsZero() || now.Sub(lastWarn) >= warnEvery {
			ev, lastWarn = log.Warn(), now
		}
		ev.Str("reason", reason).Str("error", msg).Int("retry", retries).Dur("retry_in", wait).
			Msg("the change stream failed; the acceleration keeps serving; reconnecting")
		ok, kicked := r.sleep(ctx, t, r.clock.Now().Add(wait))
		if !ok {
			return
		}
		if kicked {
			s.rebuild, retries = rebuildOnDemand, 0
		}
	}
}

// setReplication publishes the stream's status.
func (r *Runner) setReplication(name string, s ReplicationStatus) {
	r.repMu.Lock()
	defer r.repMu.Unlock()
	if r.replication == nil {
		r.replication = map[string]ReplicationStatus{}
	}
	r.replication[name] = s
}

// Replication reports where a changes dataset's stream stands; ok is false
// for a dataset of another refresh mode.
func (r *Runner) Replication(dataset string) (ReplicationStatus, bool) {
	r.repMu.Lock()
	defer r.repMu.Unlock()
	s, ok := r.replication[dataset]
	return s, ok
}

// connectReplication opens a logical replication connection to the origin.
func connectReplication(ctx context.Context, dsn string) (*pgconn.PgConn, error) {
	return connectOriginWith(ctx, dsn, map[string]string{"replication": "database", "application_name": applicationName + " (changes)"})
}

// session is one connection's worth of the stream: it resumes or rebuilds
// and streams until an error, ctx, or an on-demand refresh ends it.
func (s *changeStream) session(ctx context.Context) error {
	r, ds := s.r, s.t.dataset()
	dsn := r.cfg.Origin.DSN
	conn, err := connectOrigin(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	all, err := originColumns(ctx, conn, ds.Schema, ds.Table)
	if err != nil {
		return err
	}
	r.reg.Update(ds.Name, func(st *catalog.DatasetState) { st.SchemaResolved = true })
	if err := checkColumns(ds, all); err != nil {
		return err
	}
	if err := checkLogicalOrigin(ctx, conn); err != nil {
		return err
	}
	_, err = checkReplicaIdentity(ctx, conn, ds)
	if err != nil {
		return err
	}
	repl, err := connectReplication(ctx, dsn)
	if err != nil {
		return err
	}
	defer repl.Close(context.Background())
	sys, err := pglogrepl.IdentifySystem(ctx, repl)
	if err != nil {
		return fmt.Errorf("identify the origin system: %w", err)
	}
	s.systemID = sys.SystemID
	if err := ensurePublication(ctx, conn, ds, s.names); err != nil {
		return err
	}
	stored, err := r.eng.Stored(ctx, ds.Name)
	if err != nil {
		return err
	}
	slot, err := readSlot(ctx, conn, s.names.slot)
	if err != nil {
		return err
	}
	why := s.rebuild
	if why == "" {
		why = resumeProblem(stored, s.names, sys.SystemID, sys.DBName, slot)
	}
	var start pglogrepl.LSN
	if why != "" {
		if slot.active {
			return fmt.Errorf("replication slot %s is in use by another connection (another pgaccel with the same data_dir?); it is retried", s.names.slot)
		}
		if start, err = s.rebuildFrom(ctx, conn, repl, all, slot, why); err != nil {
			return err
		}
		s.rebuild = ""
	} else {
		start = pglogrepl.LSN(stored.Replication.LSN)
		s.log.Info().Str("slot", s.names.slot).Str("lsn", start.String()).Msg("resuming the change stream from the stored position")
	}
	s.applied = start
	if err := s.publishFilters(ctx, conn, all); err != nil {
		return err
	}
	cols, _, err := copyQuery(ds, all)
	if err != nil {
		return err
	}
	app, err := r.eng.NewApplier(ctx, ds, accelerator.ApplyOptions{
		Retention: retentionDeletes(ds, cols),
		ASCIIOnly: conn.ParameterStatus("server_encoding") == "SQL_ASCII",
	})
	if err != nil {
		return err
	}
	defer app.Close()
	args := []string{"proto_version '1'", "publication_names '" + s.names.publication + "'", "binary 'true'"}
	if err := pglogrepl.StartReplication(ctx, repl, s.names.slot, start, pglogrepl.StartReplicationOptions{PluginArgs: args}); err != nil {
		return fmt.Errorf("start replication from slot %s: %w", s.names.slot, err)
	}
	target, err := currentWAL(ctx, conn)
	if err != nil {
		return err
	}
	s.status.Streaming, s.status.SlotState = true, slot.walStatus
	st := &streamState{s: s, repl: repl, conn: conn, app: app, b: newBatch(), readyAt: target, seen: r.reg.Applied(ds.Name)}
	if st.tableOID, err = tableOID(ctx, conn, ds); err != nil {
		return err
	}
	return st.run(ctx)
}

// checkLogicalOrigin checks that the origin can stream logical changes in
// binary: wal_level logical, Postgres 14 or later.
func checkLogicalOrigin(ctx context.Context, conn *pgconn.PgConn) error {
	res := conn.ExecParams(ctx, "SELECT current_setting('wal_level'), current_setting('server_version_num')::int", nil, nil, nil, nil).Read()
	if res.Err != nil {
		return fmt.Errorf("read the origin's wal_level: %w", res.Err)
	}
	if level := string(res.Rows[0][0]); level != "logical" {
		return fmt.Errorf("refresh_mode: changes needs wal_level = logical at the origin, which has %s: set it in postgresql.conf and restart the origin: %w", level, errConfig)
	}
	if v, _ := strconv.Atoi(string(res.Rows[0][1])); v < 140000 {
		return fmt.Errorf("refresh_mode: changes needs Postgres 14 or later (binary logical replication); the origin is %d: %w", v, errConfig)
	}
	return nil
}

// publishFilters builds the filters the proxy reads the table at the
// origin through (use_source's inverse of retention, the point reads'
// subset) and publishes them, with the stored columns of a resumed stream.
func (s *changeStream) publishFilters(ctx context.Context, conn *pgconn.PgConn, all []accelerator.ColumnSpec) error {
	ds := s.t.dataset()
	f, err := checkFilters(ctx, conn, ds, all)
	if err != nil {
		return err
	}
	stored, err := s.r.eng.Stored(ctx, ds.Name)
	if err != nil {
		return err
	}
	s.r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
		st.FallbackReady, st.FallbackFilter = f.fallbackReady, f.fallback
		st.SubsetReady, st.SubsetFilter = f.subsetReady, f.subset
		if stored != nil {
			st.Columns, st.Rows, st.LastRefresh = stored.Columns, stored.Rows, stored.LastRefresh
		}
	})
	return nil
}

// tableOID is the oid of the dataset's table at the origin.
func tableOID(ctx context.Context, conn *pgconn.PgConn, ds *catalog.Dataset) (string, error) {
	res := conn.ExecParams(ctx, `SELECT c.oid::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`, [][]byte{[]byte(ds.Schema), []byte(ds.Table)}, nil, nil, nil).Read()
	if res.Err != nil {
		return "", fmt.Errorf("look up %s: %w", ds.QualifiedTable(), res.Err)
	}
	if len(res.Rows) == 0 {
		return "", fmt.Errorf("%s: %w", ds.QualifiedTable(), errTableNotFound)
	}
	return string(res.Rows[0][0]), nil
}

// currentWAL is the origin's current WAL insert position.
func currentWAL(ctx context.Context, conn *pgconn.PgConn) (pglogrepl.LSN, error) {
	res := conn.ExecParams(ctx, "SELECT pg_catalog.pg_current_wal_lsn()::text", nil, nil, nil, nil).Read()
	if res.Err != nil {
		return 0, fmt.Errorf("read the origin's WAL position: %w", res.Err)
	}
	return pglogrepl.ParseLSN(string(res.Rows[0][0]))
}

// rebuildFrom creates the slot with an exported snapshot, loads the table
// under it and swaps it in at the slot's consistent point, which it
// returns.
func (s *changeStream) rebuildFrom(ctx context.Context, conn, replConn *pgconn.PgConn, all []accelerator.ColumnSpec, slot slotInfo, why string) (_ pglogrepl.LSN, err error) {
	r, ds := s.r, s.t.dataset()
	// Callers of Refresh wait for the rebuild an on-demand refresh asked for.
	waiters := s.t.takeWaiters()
	defer func() {
		for _, w := range waiters {
			w <- err
		}
	}()
	s.log.Warn().Str("why", why).Str("slot", s.names.slot).Msg("rebuilding the acceleration from a new snapshot of the table; the change stream starts at its consistent point")
	s.status.Rebuilds++
	r.setReplication(ds.Name, s.status)
	r.metrics.rebuilt(ds.Name)
	if err := r.acquire(ctx); err != nil {
		return 0, err
	}
	defer r.release()
	r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
		if st.Loaded {
			st.Status = catalog.StatusRefreshing
		}
	})
	if slot.exists {
		if err := pglogrepl.DropReplicationSlot(ctx, replConn, s.names.slot, pglogrepl.DropReplicationSlotOptions{Wait: true}); err != nil {
			return 0, fmt.Errorf("drop replication slot %s before rebuilding: %w", s.names.slot, err)
		}
	}
	created, err := pglogrepl.CreateReplicationSlot(ctx, replConn, s.names.slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == pgdef.InsufficientPrivilege {
			return 0, fmt.Errorf("create replication slot %s: %w; the refresh account needs the REPLICATION attribute (ALTER ROLE ... REPLICATION): %w", s.names.slot, err, errConfig)
		}
		return 0, fmt.Errorf("create replication slot %s: %w", s.names.slot, err)
	}
	at, err := pglogrepl.ParseLSN(created.ConsistentPoint)
	if err != nil {
		return 0, err
	}
	// The exported snapshot lives while replConn stays idle: the copy runs on
	// a connection of its own. A copy that meets values their DuckDB types
	// cannot hold (LoadStats.HeldAsIs) runs again in the same snapshot with
	// those columns held as Postgres sends them.
	w := &watch{schemaResolved: func() {}}
	w.estimate.Store(estimateRows(ctx, conn, ds))
	s.t.watch.Store(w)
	defer s.t.watch.Store(nil)
	copySnapshot := func(asIs []string) (loadOutcome, error) {
		load, err := connectOrigin(ctx, r.cfg.Origin.DSN)
		if err != nil {
			return loadOutcome{}, err
		}
		closeLoad := func() { load.Close(context.Background()) }
		defer func() {
			if closeLoad != nil {
				closeLoad()
			}
		}()
		if _, err := load.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '"+created.SnapshotName+"'").ReadAll(); err != nil {
			return loadOutcome{}, fmt.Errorf("import the slot's snapshot: %w", err)
		}
		cols := slices.Clone(all)
		keepStoredTypes(ctx, r.eng, ds.Name, cols, false, asIs)
		// In the slot's snapshot, the one the rows are copied in; before
		// copyQuery, which selects NULL for a column not held.
		if err := establishHeldScales(ctx, load, ds, cols); err != nil {
			return loadOutcome{}, err
		}
		cols, query, err := copyQuery(ds, cols)
		if err != nil {
			return loadOutcome{}, err
		}
		pos := s.replication(at)
		w.rows.Store(0)
		opts := accelerator.LoadOptions{Progress: &w.rows, Replication: &pos}
		closeLoad = nil // copyInto takes the connection over
		stopProgress := r.logProgress(s.log, w)
		defer stopProgress()
		return copyInto(ctx, r.eng, load, ds, cols, query, r.clock.Now(), opts)
	}
	st, err := copySnapshot(nil)
	if err == nil && len(st.heldAsIs) > 0 {
		st, err = copySnapshot(st.heldAsIs)
	}
	if err != nil {
		return 0, err
	}
	prev, _ := r.reg.State(ds.Name)
	logLeftOut(s.log, prev.Columns, st.columns)
	r.reg.Update(ds.Name, func(st2 *catalog.DatasetState) {
		st2.LastRefresh, st2.Rows, st2.Columns = st.completed, st.total, st.columns
		st2.Generation++
		st2.DataGeneration++
	})
	r.metrics.refreshed(ds.Name, catalog.RefreshChanges, st)
	s.log.Info().Int64("rows", st.total).Dur("duration", st.duration).Str("lsn", at.String()).
		Msg("loaded the snapshot; streaming the changes since")
	return at, nil
}

// streamState is one session's streaming loop.
type streamState struct {
	s    *changeStream
	repl *pgconn.PgConn
	conn *pgconn.PgConn
	app  *accelerator.Applier
	b    *batch

	relID      uint32 // the table's relation id in the stream, 0 until known
	inTx, skip bool   // inside an origin transaction; it was applied before
	txCommit   time.Time
	// lastCommit is the commit time of the last complete transaction
	// received (the data's DataAsOf once it is applied).
	lastCommit time.Time
	// pendingEnd is the end of the last complete transaction in the
	// batch (or applied into the open DuckDB transaction), 0 when none;
	// pendingSince is when the first of them arrived, oldestCommit its
	// commit time; open is true while the Applier holds an uncommitted
	// DuckDB transaction.
	pendingEnd   pglogrepl.LSN
	pendingSince time.Time
	oldestCommit time.Time
	open         bool
	pendingTx    int64

	serverEnd    pglogrepl.LSN
	lastStatus   time.Time
	lastPersist  time.Time
	lastSlotRead time.Time
	// tableOID is the table's oid at the start: a table dropped and
	// created again under its name is another table, which the
	// publication does not hold.
	tableOID string
	// readyAt is the origin's WAL position at the start: once the stream
	// is past it with nothing left to apply, it is caught up.
	readyAt pglogrepl.LSN
	ready   bool
	// publishedAt and lastPublish: the applied position and the time of
	// the status last published.
	publishedAt pglogrepl.LSN
	lastPublish time.Time
	// seen is the dataset's applied position as readers see it
	// (catalog.Applied); askedAt is when the stream last asked the origin
	// for a keepalive on a reader's behalf.
	seen    *catalog.Applied
	askedAt time.Time
	// sentEnd is the highest position a keepalive said the origin had
	// sent: every change before it has been received.
	sentEnd pglogrepl.LSN
	// asOfAt is when idle last published DataAsOf.
	asOfAt time.Time
}

func (st *streamState) run(ctx context.Context) error {
	s := st.s
	st.lastPersist = time.Now()
	if err := st.sendStatus(true); err != nil {
		return err
	}
	// Reads wait with a deadline on the socket, not a context per
	// message: a context with a deadline made each of the stream's
	// messages set up and tear down a cancellation watch (a seventh of
	// the stream's CPU). Cancelling ctx ends the read at once.
	nc := st.repl.Conn()
	stop := context.AfterFunc(ctx, func() { _ = nc.SetReadDeadline(time.Now()) })
	if st.seen != nil {
		// A reader that starts waiting wakes the loop (tick acts on it).
		st.seen.SetNudge(func() { _ = nc.SetReadDeadline(time.Now()) })
	}
	defer func() {
		stop()
		if st.seen != nil {
			st.seen.SetNudge(nil)
		}
		_ = nc.SetReadDeadline(time.Time{})
	}()
	for {
		select {
		case <-s.t.kick:
			return &errRebuild{why: rebuildOnDemand}
		default:
		}
		deadline := st.lastStatus.Add(changesStatusEvery)
		if !st.ready {
			deadline = st.lastStatus.Add(changesPollReady)
		}
		if !st.pendingSince.IsZero() && !st.inTx {
			deadline = minTime(deadline, st.pendingSince.Add(changesMaxDelay))
		}
		if st.seen != nil {
			if lo, _ := st.seen.Wanted(); lo != 0 {
				deadline = minTime(deadline, time.Now().Add(changesAskEvery))
				if st.pendingEnd != 0 && !st.inTx {
					deadline = minTime(deadline, st.pendingSince.Add(changesWaitLinger))
				}
			}
		}
		if err := nc.SetReadDeadline(deadline); err != nil {
			return fmt.Errorf("read the change stream: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		msg, err := st.repl.ReceiveMessage(context.Background())
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if pgconn.Timeout(err) {
				if err := st.tick(ctx); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("read the change stream: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if err := st.copyData(ctx, m.Data); err != nil {
				return err
			}
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("change stream: %w", pgconn.ErrorResponseToPgError(m))
		}
		if err := st.tick(ctx); err != nil {
			return err
		}
	}
}

// tick applies complete transactions that have waited long enough and
// reports the position when it is due.
func (st *streamState) tick(ctx context.Context) error {
	now := time.Now()
	if !st.inTx && st.pendingEnd != 0 && now.Sub(st.pendingSince) >= changesMaxDelay {
		if err := st.flush(ctx); err != nil {
			return err
		}
	}
	if err := st.serveWaits(ctx, now); err != nil {
		return err
	}
	// The slot and the table are looked at every changesStatusEvery,
	// however busy the stream (a flush reports the position, so the
	// status clock alone would not come round while commits keep coming).
	if now.Sub(st.lastSlotRead) >= changesStatusEvery {
		st.readSlot(ctx)
		if oid, err := tableOID(ctx, st.conn, st.s.t.dataset()); err == nil && oid != st.tableOID {
			return &errRebuild{why: "the table was dropped and created again (it is another table now)"}
		} else if err != nil {
			return err
		}
		if err := st.followEnums(ctx); err != nil {
			return err
		}
	}
	if now.Sub(st.lastStatus) >= changesStatusEvery || !st.ready && now.Sub(st.lastStatus) >= changesPollReady {
		return st.sendStatus(!st.ready)
	}
	// Per message, the status is published when the applied position
	// moved and otherwise every changesPublishEvery (the lag it shows
	// grows while a batch waits).
	if st.s.applied != st.publishedAt || now.Sub(st.lastPublish) >= changesPublishEvery {
		st.publish()
	}
	return nil
}

// copyData handles one message of the stream.
func (st *streamState) copyData(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		pkm, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return fmt.Errorf("change stream: %w", err)
		}
		st.serverEnd = max(st.serverEnd, pkm.ServerWALEnd)
		st.sentEnd = max(st.sentEnd, pkm.ServerWALEnd)
		if err := st.idle(ctx, pkm.ServerWALEnd); err != nil {
			return err
		}
		if pkm.ReplyRequested {
			return st.sendStatus(false)
		}
	case pglogrepl.XLogDataByteID:
		xld, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return fmt.Errorf("change stream: %w", err)
		}
		st.serverEnd = max(st.serverEnd, xld.ServerWALEnd)
		msg, err := parseLogical(xld.WALData)
		if err != nil {
			return err
		}
		return st.logical(ctx, msg)
	}
	return nil
}

// parseLogical decodes a pgoutput message; a malformed one is an error,
// never a panic.
func parseLogical(data []byte) (msg pglogrepl.Message, err error) {
	defer func() {
		if p := recover(); p != nil {
			msg, err = nil, fmt.Errorf("change stream: malformed pgoutput message (%v)", p)
		}
	}()
	msg, err = pglogrepl.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("change stream: %w", err)
	}
	return msg, nil
}

// logical handles one pgoutput message.
func (st *streamState) logical(ctx context.Context, msg pglogrepl.Message) error {
	s := st.s
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		return st.relation(ctx, m)
	case *pglogrepl.BeginMessage:
		if !st.pendingSince.IsZero() && time.Since(st.pendingSince) >= changesMaxDelay {
			if err := st.flush(ctx); err != nil {
				return err
			}
		}
		st.inTx, st.txCommit = true, m.CommitTime
		// A transaction that committed before the position the stream
		// resumed at was applied already.
		st.skip = m.FinalLSN < s.applied
	case *pglogrepl.CommitMessage:
		st.inTx = false
		if st.skip {
			st.skip = false
			return nil
		}
		st.pendingEnd, st.lastCommit = m.TransactionEndLSN, m.CommitTime
		st.pendingTx++
		if st.pendingSince.IsZero() {
			st.pendingSince, st.oldestCommit = time.Now(), m.CommitTime
		}
		if st.open || st.b.len() >= changesMaxRows || st.b.bytes >= changesMaxBytes {
			return st.flush(ctx)
		}
	case *pglogrepl.InsertMessage:
		if st.skip || m.RelationID != st.relID {
			return nil
		}
		return st.change(ctx, st.b.insert(m.Tuple))
	case *pglogrepl.UpdateMessage:
		if st.skip || m.RelationID != st.relID {
			return nil
		}
		return st.change(ctx, st.b.update(m.OldTuple, m.NewTuple))
	case *pglogrepl.DeleteMessage:
		if st.skip || m.RelationID != st.relID {
			return nil
		}
		return st.change(ctx, st.b.delete(m.OldTuple))
	case *pglogrepl.TruncateMessage:
		if st.skip {
			return nil
		}
		for _, id := range m.RelationIDs {
			if id == st.relID {
				st.b.truncateAll()
			}
		}
	}
	return nil
}

// change follows one row change: a batch past its bounds is applied into
// the open DuckDB transaction.
func (st *streamState) change(ctx context.Context, err error) error {
	if err != nil {
		if errors.Is(err, errKeyUnknown) {
			return &errRebuild{why: err.Error()}
		}
		return err
	}
	if st.b.len() < changesMaxRows && st.b.bytes < changesMaxBytes {
		return nil
	}
	if err := st.apply(ctx); err != nil {
		return err
	}
	st.open = true
	return nil
}

// apply applies the batch into the Applier's open transaction.
func (st *streamState) apply(ctx context.Context) error {
	if st.b.empty() {
		return nil
	}
	s := st.s
	if err := st.app.Apply(ctx, st.b.truncate, st.b.final()); err != nil {
		return fmt.Errorf("apply changes: %w", err)
	}
	if names := st.app.HeldAsIs(); len(names) > 0 {
		// A numeric held at one display scale met a value of another
		// (or NaN, ...), or an array a LIST cannot hold: the rebuild's
		// load holds it as Postgres sends it.
		return &errRebuild{why: fmt.Sprintf("column %s received a value its DuckDB type cannot hold (a numeric of another display scale, NaN, Infinity or more than 38 digits, or a multi-dimensional array); the load holds it as Postgres sends it", strings.Join(names, ", "))}
	}
	s.status.Inserts += int64(st.b.inserts)
	s.status.Updates += int64(st.b.updates)
	s.status.Deletes += int64(st.b.deletes)
	name := s.t.dataset().Name
	s.r.metrics.changesApplied(name, "insert", st.b.inserts)
	s.r.metrics.changesApplied(name, "update", st.b.updates)
	s.r.metrics.changesApplied(name, "delete", st.b.deletes)
	st.b.reset()
	return nil
}

// flush applies the batch and commits it with the position of the last
// complete transaction, then acknowledges that position.
func (st *streamState) flush(ctx context.Context) error {
	if st.pendingEnd == 0 {
		return nil
	}
	s := st.s
	if err := st.apply(ctx); err != nil {
		return err
	}
	stats, err := st.app.Commit(ctx, st.s.replication(st.pendingEnd), time.Now())
	if err != nil {
		return err
	}
	now := time.Now()
	lag := now.Sub(st.oldestCommit)
	name := s.t.dataset().Name
	s.applied, st.open = st.pendingEnd, false
	s.status.Transactions += st.pendingTx
	s.r.metrics.changesApplied(name, "transaction", int(st.pendingTx))
	s.r.metrics.applyLag(name, lag)
	// The rows and last-refresh gauges follow the stream, as they follow
	// a refresh.
	s.r.metrics.restored(name, now.UnixMilli(), stats.Rows)
	st.pendingEnd, st.pendingSince, st.pendingTx = 0, time.Time{}, 0
	st.lastPersist = now
	asOf := st.lastCommit // every transaction before the last applied one is in
	s.r.reg.Update(name, func(ds *catalog.DatasetState) {
		ds.Rows, ds.LastRefresh = stats.Rows, now
		if asOf.After(ds.DataAsOf) {
			ds.DataAsOf = asOf
		}
		ds.DataGeneration++
		if stats.ColumnsChanged {
			logLeftOut(s.log, ds.Columns, stats.Columns)
			ds.Columns = stats.Columns
			ds.Generation++
		}
	})
	if !st.ready && lag < s.t.dataset().ReadyLag() && st.s.applied >= st.readyAt {
		st.becomeReady()
	}
	if !st.inTx && st.b.empty() {
		// Everything received is applied: all the origin had sent when
		// its last keepalive came.
		st.advanceSeen(max(st.s.applied, st.sentEnd))
	} else {
		st.advanceSeen(st.s.applied)
	}
	return st.sendStatus(false)
}

// idle follows a keepalive: with nothing in flight, the origin has sent
// everything up to end (the table saw no change there), so the position
// moves there, written to the checkpoint now and then so that a restart
// does not find the slot past the stored position.
func (st *streamState) idle(ctx context.Context, end pglogrepl.LSN) error {
	if st.inTx || st.pendingEnd != 0 || st.open || !st.b.empty() {
		return nil
	}
	// Nothing in flight: the data holds every transaction before end, for
	// readers at once (the checkpoint follows now and then, below).
	st.advanceSeen(max(end, st.s.applied))
	if now := time.Now(); st.ready && now.Sub(st.asOfAt) >= changesAsOfEvery {
		// Caught up as of now; published at most every changesAsOfEvery
		// (a registry update moves its version, which the planner's
		// memo and the sessions' kept decisions are checked by).
		st.asOfAt = now
		st.s.r.reg.Update(st.s.t.dataset().Name, func(ds *catalog.DatasetState) {
			if now.After(ds.DataAsOf) {
				ds.DataAsOf = now
			}
		})
	}
	s := st.s
	if end > s.applied && time.Since(st.lastPersist) >= changesIdlePersist || end > s.applied && !st.ready {
		if _, err := st.app.Commit(ctx, st.s.replication(end), time.Now()); err != nil {
			return err
		}
		s.applied, st.lastPersist = end, time.Now()
	}
	if !st.ready && end >= st.readyAt {
		st.becomeReady()
	}
	return nil
}

// followEnums reads the labels of the enums of the acceleration's columns:
// the change stream says nothing of ALTER TYPE. A label added (ADD VALUE)
// joins the column's labels, so that the planner orders by it; a label gone
// (RENAME VALUE) leaves stored rows holding a name the origin no longer
// has, and the dataset is rebuilt. Until this runs, a row holding a label
// the acceleration does not know is answered by the origin wherever it is
// ordered (planner: the key of an unknown label fails).
func (st *streamState) followEnums(ctx context.Context) error {
	specs := st.app.Specs()
	var oids []string
	for _, sp := range specs {
		if len(sp.EnumLabels) > 0 {
			oids = append(oids, strconv.FormatUint(uint64(sp.TypeOID), 10))
		}
	}
	if len(oids) == 0 {
		return nil
	}
	res := st.conn.ExecParams(ctx, `SELECT t.oid, `+enumLabelsOf+`t.oid) FROM pg_catalog.pg_type t WHERE t.oid = ANY($1::oid[])`,
		[][]byte{textArray(oids)}, nil, nil, nil).Read()
	if res.Err != nil {
		return fmt.Errorf("read the labels of the acceleration's enums: %w", res.Err)
	}
	now := map[uint32][]string{}
	for _, r := range res.Rows {
		oid, err := strconv.ParseUint(string(r[0]), 10, 32)
		if err == nil && r[1] != nil {
			now[uint32(oid)], err = parseEnumLabels(r[1])
		}
		if err != nil {
			return fmt.Errorf("read the labels of the acceleration's enums: %w", err)
		}
	}
	var changed []catalog.ColumnInfo
	for _, sp := range specs {
		if len(sp.EnumLabels) == 0 {
			continue
		}
		labels := now[sp.TypeOID]
		if !accelerator.EnumLabelsKept(sp.EnumLabels, labels) {
			return &errRebuild{why: fmt.Sprintf("the enum type of column %s lost or renamed a label", sp.Name)}
		}
		if slices.Equal(sp.EnumLabels, labels) {
			continue
		}
		st.app.SetEnumLabels(sp.Name, labels)
		changed = append(changed, catalog.ColumnInfo{Name: sp.Name, EnumLabels: labels})
		st.s.log.Info().Str("column", sp.Name).Int("labels", len(labels)).Msg("the enum of a column gained labels; the acceleration orders by them")
	}
	if len(changed) == 0 {
		return nil
	}
	if !st.inTx && st.pendingEnd == 0 && st.b.empty() && !st.open {
		// Nothing in flight: the checkpoint takes the labels at the
		// position already applied (else the next flush writes them).
		if _, err := st.app.Commit(ctx, st.s.replication(st.s.applied), time.Now()); err != nil {
			return err
		}
	}
	st.s.r.reg.Update(st.s.t.dataset().Name, func(ds *catalog.DatasetState) {
		for _, c := range changed {
			for i := range ds.Columns {
				if ds.Columns[i].Name == c.Name {
					ds.Columns[i].EnumLabels = c.EnumLabels
				}
			}
		}
		ds.Generation++
	})
	return nil
}

// readSlot reads what the origin says of the slot (wal_status, the WAL it
// holds and may still hold) into the status; a failure only logs.
func (st *streamState) readSlot(ctx context.Context) {
	s := st.s
	st.lastSlotRead = time.Now()
	res := st.conn.ExecParams(ctx, `SELECT COALESCE(wal_status, ''),
		COALESCE(pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), restart_lsn), 0)::bigint,
		COALESCE(safe_wal_size, -1), current_setting('max_slot_wal_keep_size')
		FROM pg_catalog.pg_replication_slots WHERE slot_name = $1`, [][]byte{[]byte(s.names.slot)}, nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 {
		s.log.Debug().Err(res.Err).Msg("cannot read the replication slot's state")
		return
	}
	r := res.Rows[0]
	s.status.SlotState, s.status.MaxSlotWALKeepSize = string(r[0]), string(r[3])
	s.status.RetainedBytes, _ = strconv.ParseInt(string(r[1]), 10, 64)
	s.status.SafeWALBytes, _ = strconv.ParseInt(string(r[2]), 10, 64)
	if s.status.SlotState == "unreserved" || s.status.SlotState == "lost" {
		s.log.Warn().Str("slot", s.names.slot).Str("wal_status", s.status.SlotState).Int64("safe_wal_bytes", s.status.SafeWALBytes).
			Msg("the replication slot is about to lose (or lost) WAL it needs (max_slot_wal_keep_size): the dataset will rebuild")
	}
}

// becomeReady publishes the dataset as loaded and ready: caught up.
func (st *streamState) becomeReady() {
	s := st.s
	st.ready, s.caughtUp = true, true
	ds := s.t.dataset()
	now := time.Now()
	s.r.reg.Update(ds.Name, func(d *catalog.DatasetState) {
		d.Status, d.Loaded, d.Error = catalog.StatusReady, true, ""
		d.DataAsOf = now // caught up with the origin's WAL as of the start
	})
	st.advanceSeen(s.applied)
	s.t.setErr(nil)
	s.t.markReady()
	s.log.Info().Str("lsn", s.applied.String()).Msg("the change stream is caught up; the acceleration serves")
}

// replication is the position lsn of this stream, as the checkpoint keeps it.
func (s *changeStream) replication(lsn pglogrepl.LSN) accelerator.Replication {
	return accelerator.Replication{Slot: s.names.slot, Publication: s.names.publication, SystemID: s.systemID, LSN: uint64(lsn)}
}

// sendStatus reports the applied position to the origin (write, flush and
// apply alike: only what is committed in DuckDB).
func (st *streamState) sendStatus(reply bool) error {
	err := pglogrepl.SendStandbyStatusUpdate(context.Background(), st.repl, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: st.s.applied, WALFlushPosition: st.s.applied, WALApplyPosition: st.s.applied, ReplyRequested: reply,
	})
	if err != nil {
		return fmt.Errorf("report the applied position: %w", err)
	}
	st.lastStatus = time.Now()
	st.publish()
	return nil
}

// publish updates the stream's status and metrics.
func (st *streamState) publish() {
	s := st.s
	s.status.AppliedLSN, s.status.ServerLSN = s.applied.String(), st.serverEnd.String()
	s.status.LagMs, s.status.LagBytes = 0, 0
	if !st.oldestCommit.IsZero() && st.pendingEnd != 0 {
		s.status.LagMs = time.Since(st.oldestCommit).Milliseconds()
	} else if st.inTx && !st.skip {
		s.status.LagMs = time.Since(st.txCommit).Milliseconds()
	}
	if st.serverEnd > s.applied {
		s.status.LagBytes = int64(st.serverEnd - s.applied)
	}
	s.r.setReplication(s.t.dataset().Name, s.status)
	s.r.metrics.replicationLag(s.t.dataset().Name, s.status.LagMs, s.status.LagBytes)
	st.publishedAt, st.lastPublish = s.applied, time.Now()
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// relation follows a Relation message of the table: which of its columns
// the acceleration holds, where the key is, and whether the table changed
// in a way the stream cannot follow.
func (st *streamState) relation(ctx context.Context, m *pglogrepl.RelationMessage) error {
	ds := st.s.t.dataset()
	if m.Namespace != ds.Schema || m.RelationName != ds.Table {
		return nil
	}
	// Changes decoded before this message use the previous layout.
	if err := st.apply(ctx); err != nil {
		return err
	}
	specs := st.app.Specs()
	inRel := make(map[string]int, len(m.Columns))
	for i, c := range m.Columns {
		inRel[c.Name] = i
	}
	for _, sp := range specs {
		i, ok := inRel[sp.Name]
		if !ok {
			return st.missingColumn(ctx, sp.Name)
		}
		same, err := st.sameType(ctx, m.Columns[i], sp)
		if err != nil {
			return err
		}
		if !same {
			return &errRebuild{why: fmt.Sprintf("column %s of %s changed its type", sp.Name, ds.QualifiedTable())}
		}
	}
	if sel, _, ok := ds.RefreshSelect(); !ok || sel == nil {
		// The acceleration holds every column: a new one joins it.
		for _, c := range m.Columns {
			if !slicesContainsName(specs, c.Name) {
				if err := st.addColumn(ctx, c.Name); err != nil {
					return err
				}
				specs = st.app.Specs()
			}
		}
	}
	pos := make(map[string]int, len(specs))
	for i, sp := range specs {
		pos[sp.Name] = i
	}
	b := st.b
	b.cols = make([]int, len(m.Columns))
	for i, c := range m.Columns {
		b.cols[i] = -1
		if p, ok := pos[c.Name]; ok {
			b.cols[i] = p
		}
	}
	b.keys = b.keys[:0]
	for _, k := range ds.Acceleration.PrimaryKey {
		i, ok := inRel[k]
		if !ok {
			return &errRebuild{why: "primary key column " + k + " is not in the change stream"}
		}
		b.keys = append(b.keys, i)
	}
	b.width, b.full = len(specs), m.ReplicaIdentity == 'f'
	st.relID = m.RelationID
	return nil
}

func slicesContainsName(specs []accelerator.ColumnSpec, name string) bool {
	for _, s := range specs {
		if s.Name == name {
			return true
		}
	}
	return false
}

// missingColumn handles an accelerated column the stream does not send: a
// generated column (logical replication never sends them: a configuration
// problem), else a dropped or renamed one (rebuild).
func (st *streamState) missingColumn(ctx context.Context, name string) error {
	ds := st.s.t.dataset()
	res := st.conn.ExecParams(ctx, `SELECT a.attgenerated <> '' FROM pg_catalog.pg_attribute a
		WHERE a.attrelid = $1::regclass AND a.attname = $2 AND NOT a.attisdropped`,
		[][]byte{[]byte(ds.QualifiedTable()), []byte(name)}, nil, nil, nil).Read()
	if res.Err == nil && len(res.Rows) == 1 && string(res.Rows[0][0]) == "t" {
		return fmt.Errorf("column %s of %s is generated, and logical replication does not send generated columns: leave it out with acceleration.refresh_sql (SELECT <the other columns> FROM %s): %w",
			name, ds.QualifiedTable(), ds.Table, errConfig)
	}
	return &errRebuild{why: fmt.Sprintf("column %s of %s is no longer in the change stream (dropped or renamed)", name, ds.QualifiedTable())}
}

// sameType reports whether a column of the stream has the acceleration's
// type (a domain is its base type there).
func (st *streamState) sameType(ctx context.Context, c *pglogrepl.RelationMessageColumn, sp accelerator.ColumnSpec) (bool, error) {
	if c.DataType == sp.TypeOID && c.TypeModifier == sp.TypeMod {
		return true, nil
	}
	res := st.conn.ExecParams(ctx, `SELECT COALESCE(NULLIF(typbasetype, 0), oid), CASE WHEN typbasetype <> 0 THEN typtypmod ELSE $2::int END
		FROM pg_catalog.pg_type WHERE oid = $1`,
		[][]byte{[]byte(strconv.FormatUint(uint64(c.DataType), 10)), []byte(strconv.FormatInt(int64(c.TypeModifier), 10))}, nil, nil, nil).Read()
	if res.Err != nil {
		return false, fmt.Errorf("read the type of column %s: %w", c.Name, res.Err)
	}
	if len(res.Rows) != 1 {
		return false, nil
	}
	return string(res.Rows[0][0]) == strconv.FormatUint(uint64(sp.TypeOID), 10) &&
		string(res.Rows[0][1]) == strconv.FormatInt(int64(sp.TypeMod), 10), nil
}

// addColumn adds a column the table gained to the acceleration when its
// existing rows are NULL in it (nullable, no default); any other added
// column rebuilds the dataset.
func (st *streamState) addColumn(ctx context.Context, name string) error {
	ds := st.s.t.dataset()
	all, err := originColumns(ctx, st.conn, ds.Schema, ds.Table)
	if err != nil {
		return err
	}
	var spec *accelerator.ColumnSpec
	for i := range all {
		if all[i].Name == name {
			spec = &all[i]
		}
	}
	res := st.conn.ExecParams(ctx, `SELECT a.attnotnull OR a.atthasdef OR a.atthasmissing FROM pg_catalog.pg_attribute a
		WHERE a.attrelid = $1::regclass AND a.attname = $2 AND NOT a.attisdropped`,
		[][]byte{[]byte(ds.QualifiedTable()), []byte(name)}, nil, nil, nil).Read()
	if res.Err != nil {
		return fmt.Errorf("read added column %s: %w", name, res.Err)
	}
	if spec == nil || len(res.Rows) != 1 || string(res.Rows[0][0]) == "t" {
		return &errRebuild{why: fmt.Sprintf("column %s was added to %s with a default or NOT NULL (its existing rows are not NULL in it)", name, ds.QualifiedTable())}
	}
	if err := st.app.AddColumn(ctx, *spec); err != nil {
		return err
	}
	st.s.log.Info().Str("column", name).Msg("a column added at the origin joins the acceleration")
	st.open = true
	return nil
}

// advanceSeen makes lsn the applied position readers see
// (catalog.Applied), once the data new reads see holds it.
func (st *streamState) advanceSeen(lsn pglogrepl.LSN) {
	if st.seen != nil && st.ready {
		st.seen.Advance(uint64(lsn))
	}
}

// serveWaits acts for readers waiting for a position the data has not
// reached (read-your-writes): complete transactions waiting in the batch
// are applied as soon as they hold every reader's position, or one's and
// they have waited changesWaitLinger for others to join them (an apply
// costs DuckDB a few statements whatever it holds); with nothing in
// flight the origin is asked where its WAL stands (a keepalive, which
// idle follows), at most every changesAskEvery.
func (st *streamState) serveWaits(ctx context.Context, now time.Time) error {
	if st.seen == nil || !st.ready {
		return nil
	}
	lo, hi := st.seen.Wanted()
	if lo == 0 {
		return nil
	}
	if !st.inTx && st.pendingEnd != 0 {
		// Every commit before lo is here once the batch reaches it, or a
		// keepalive past it came.
		end, in := uint64(st.pendingEnd), uint64(max(st.pendingEnd, st.sentEnd)) >= lo
		if end < hi && (!in || now.Sub(st.pendingSince) < changesWaitLinger) {
			return nil // more are coming
		}
		if err := st.flush(ctx); err != nil {
			return err
		}
		if lo, _ := st.seen.Wanted(); lo == 0 {
			return nil
		}
	}
	if st.inTx || st.open || now.Sub(st.askedAt) < changesAskEvery {
		return nil
	}
	st.askedAt = now
	return st.sendStatus(true)
}
