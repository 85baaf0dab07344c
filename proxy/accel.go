package proxy

import (
	"context"
	"time"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/encode"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/pgaccel/pgaccel/proxy/resultcache"
	"github.com/pgaccel/pgaccel/stmtstats"
)

// Planner decides each statement's route (see package planner).
type Planner interface {
	Plan(ctx context.Context, sql string, s *planner.Session) planner.Decision
	// Quick is the planner's fast path: a decision for the origin that
	// does not depend on the session, when it has one. It is the same for
	// texts of one number shape (planner.SameShape), which a session
	// keeps its answers by (quickMemo).
	Quick(sql string) (planner.Decision, bool)
	// Version changes whenever a decision the planner made may no longer
	// be the one it would make now (planner.Planner.Version).
	Version() planner.Version
	// PlanFull is Plan for a statement Quick has declined already.
	PlanFull(ctx context.Context, sql string, s *planner.Session) planner.Decision
	// QuickTxWrote is Quick for a session whose transaction has written.
	QuickTxWrote(sql string) (planner.Decision, bool)
	// RememberFallback: DuckDB could not run a statement of this
	// fingerprint reading datasets (see planner.Planner.RememberFallback).
	RememberFallback(fingerprint uint64, datasets []string)
	// Describe works out the row description the origin would give an
	// accelerated read, for the forms it knows (planner.Describe).
	Describe(ctx context.Context, sql string, s *planner.Session) (planner.Description, bool)
}

// Engine runs accelerated statements (see package accelerator) with
// DuckDB's TimeZone set to the session's.
type Engine interface {
	QueryIn(ctx context.Context, timeZone, sql string, args ...any) (*accelerator.Rows, error)
	// Explain returns DuckDB's plan of sql, line by line (run, with analyze).
	Explain(ctx context.Context, timeZone, sql string, analyze bool) ([]string, error)
}

// Privileges checks the origin's GRANTs and row level security for the
// tables of an accelerated statement.
type Privileges interface {
	CanSelect(ctx context.Context, role string, tables []planner.TableID) (ok bool, reason string, err error)
	// Warm looks the answers for role and tables up apart from the
	// statement when they are not fresh (planner.Privileges.Warm).
	Warm(role string, tables []planner.TableID)
}

// Accel is the acceleration side of the proxy. A Config without one
// relays everything to the origin.
type Accel struct {
	Planner    Planner
	Engine     Engine
	Privileges Privileges
	// Generation, when set, returns a number that changes whenever one of
	// the datasets is reloaded; cached origin descriptions of statements
	// over them are then asked again (the origin's table may have changed
	// behind the proxy's back).
	Generation func(datasets []string) uint64
	// ResultsCache, when set, keeps accelerated answers until a dataset
	// they read changes (resultcache.go).
	ResultsCache *resultcache.Cache
	// Points, when set, answers point reads from datasets' rows held in
	// memory by primary key (pointindex.go).
	Points *accelerator.PointIndexes
	// Verify, when set, runs a sample of accelerated answers again at the
	// origin and compares them (runtime.verify; verify.go).
	Verify *Verifier
	// Clock, when set, is the offset of the origin's clock from this
	// process's, which the relative-time values of accelerated statements
	// (now(), CURRENT_DATE) follow (clock.go).
	Clock interface{ Offset() time.Duration }
	// Consistency, when set, keeps a session's reads at least as new as
	// its commits (runtime.read_your_writes; consistency.go).
	Consistency *Consistency
	// Registry, when set, is the datasets' state, whose age their and the
	// sessions' max_staleness bound (consistency.go).
	Registry *catalog.Registry
	// Stats, when set, keeps the statement statistics (stats.go).
	Stats *stmtstats.Store
}

// planSession is the planner's view of the session now.
func (ss *session) planSession() *planner.Session {
	return &planner.Session{
		User:       ss.acc.info.User,
		SearchPath: ss.acc.info.SearchPath,
		TxWrote:    ss.txWrote.Load() || ss.ext.segmentWrote,
		TempTables: ss.acc.info.TempTables,
		OriginDown: ss.origin.state == linkStandIn,

		TextBytewise:           ss.acc.info.TextBytewise,
		DefaultCollationLocale: defaultCollationLocale(ss.acc.info),
	}
}

// defaultCollationLocale is the locale by which the acceleration orders
// text of the session's database's default collation, when that
// collation is not bytewise and its order was established against the
// origin (refresh, for the datasets' columns of that collation).
func defaultCollationLocale(info originlink.SessionInfo) string {
	if info.TextBytewise || info.DefaultCollation == "" {
		return ""
	}
	return accelerator.EstablishedCollation(info.DefaultCollation) // provider|locale|version
}

// noteOrigin records what a statement sent to the origin may have changed:
// whether the transaction wrote, and whether the session info (search path,
// user, temp tables, output settings) must be read again.
func (ss *session) noteOrigin(sql string, d planner.Decision) {
	ss.noteOriginKnown(sql, d, nil)
}

// noteOriginKnown is noteOrigin for a statement whose sessionStateCall is
// known already (stateCall, when not nil: the fast path's memo and the
// statements it decided keep it), so that its text is not read again.
func (ss *session) noteOriginKnown(sql string, d planner.Decision, stateCall *string) {
	if d.Kind == planner.KindMulti && ss.nothingToReset() {
		if _, ok := planner.SessionReset(sql); ok {
			// A pool's reset at the origin that finds nothing to reset
			// (asyncpg's, on a connection still open from earlier
			// statements) changes nothing the session info holds.
			ss.noteReplay(sql, d, stateCall)
			return
		}
	}
	ss.noteReplay(sql, d, stateCall)
	ss.noteCachingWrite(sql, d)
	ss.noteWrite(sql, d)
	switch d.Kind {
	case planner.KindDDL:
		ss.srv.describes.invalidate()
	case planner.KindDiscard, planner.KindDeallocate:
		// DISCARD ALL and DEALLOCATE ALL drop the proxy's statement too,
		// and the client's named statements may be gone: a later Parse of
		// one of their names is taken as new (see onParse).
		ss.acc.infoPrepared = false
		for name := range ss.ext.stmts {
			if name != "" {
				delete(ss.ext.stmts, name)
			}
		}
	case planner.KindMulti, planner.KindOther:
		// Anything may be in there.
		ss.srv.describes.invalidate()
		ss.ext.segmentWrote = true
		ss.markDirty()
		return
	}
	if d.Writes() {
		ss.ext.segmentWrote = true
	}
	switch {
	case d.SetsSearchPath:
		ss.markDirty()
	case d.Kind == planner.KindSet, d.Kind == planner.KindReset, d.Kind == planner.KindDiscard,
		d.Kind == planner.KindDo, d.Kind == planner.KindCall, d.Kind == planner.KindExecute:
		ss.markDirty()
	case d.Kind.EndsTransaction():
		// ROLLBACK undoes SETs and temp tables of the transaction, COMMIT
		// ends SET LOCAL: read again if anything changed in it.
		if ss.acc.changedInTx {
			ss.acc.infoDirty = true
			ss.acc.changedInTx = false
		}
	}
}

// markDirty makes the next accelerated statement read the session info
// again first.
func (ss *session) markDirty() {
	ss.origin.pristine = false
	ss.acc.infoDirty = true
	ss.acc.changedInTx = true
}

// ensureInfo makes the session info current before a statement is
// planned: it is read once per session and again after anything that may
// have changed it.
func (ss *session) ensureInfo() bool {
	ss.mustNotBlock("session info")
	if ss.acc.info.Valid && !ss.acc.infoDirty {
		return true
	}
	if ss.ext.segmentOpen || !ss.drain() || ss.state.TxStatus() == 'E' {
		return false
	}
	if err := ss.refreshInfo(); err != nil {
		ss.log.Debug().Err(err).Msg("session info refresh failed")
		return false
	}
	return true
}

// prepareLocal makes the session ready to answer d locally: every earlier
// origin response delivered and the user allowed to read the tables. It
// returns false (with d's reason updated) when the statement must go to the
// origin.
func (ss *session) prepareLocal(ctx context.Context, d planner.Decision, settle bool) (planner.Decision, bool) {
	d, ok := ss.settleLocal(d, settle)
	if !ok {
		return d, false
	}
	if ss.txWrote.Load() || ss.ext.segmentWrote {
		// An earlier statement of this transaction wrote; its answer may
		// have arrived only now.
		d.Route, d.Reason = planner.RouteOrigin, "tx_wrote"
		return d, false
	}
	if c := ss.accel.Consistency; c != nil {
		if d, ok := c.check(ctx, ss.acc.fences.get(), d); !ok {
			return d, false
		}
	}
	if reg := ss.accel.Registry; reg != nil {
		if d, ok := checkStaleness(reg, &ss.acc.info, d); !ok {
			return d, false
		}
	}
	if ss.accel.Privileges != nil {
		ok, reason, err := ss.accel.Privileges.CanSelect(ctx, ss.acc.info.User, d.Tables)
		if err != nil || !ok {
			if err != nil {
				reason = "privilege_check_failed"
			}
			d.Route, d.Reason = planner.RouteOrigin, reason
			return d, false
		}
	}
	return d, true
}

// settleLocal is what any answer of the proxy's own needs, a read of
// datasets or not (SHOW pgaccel.last_route): the earlier responses it
// must follow delivered (see prepareLocal), and a transaction that has
// not failed.
func (ss *session) settleLocal(d planner.Decision, settle bool) (planner.Decision, bool) {
	// The status is known only once every earlier response is in: an
	// earlier statement of a pipeline may have failed the transaction.
	// Unless settle is asked, pending Parses, Binds, Describes and Closes
	// of this stretch are not waited for: they change nothing the answer
	// depends on, and if one fails the origin skips this statement, and
	// so does its local answer (writeOrdered).
	ss.ext.answerCheck = false
	setupOnly, failures := ss.origin.pending.OnlyStatementSetup()
	if settle || !setupOnly {
		if !ss.drain() {
			d.Route, d.Reason = planner.RouteOrigin, "transaction_failed"
			return d, false
		}
	} else if !ss.origin.pending.Idle() {
		ss.ext.answerCheck, ss.ext.answerSince = true, failures
	}
	if ss.state.TxStatus() == 'E' {
		d.Route, d.Reason = planner.RouteOrigin, "transaction_failed"
		return d, false
	}
	return d, true
}

// settings returns the encoder settings of the session, or nil when the
// session uses a setting the encoder cannot honour exactly (LoadSettings
// checks client_encoding too). They are rebuilt only when a ParameterStatus
// or the session info has changed since.
func (ss *session) settings() *encode.Settings {
	gen := ss.state.generation()
	if ss.acc.settingsValid && ss.acc.settingsGen == gen && ss.acc.settingsInfo == ss.acc.infoGen {
		return ss.acc.cachedSettings
	}
	params := ss.state.Params()
	params["extra_float_digits"] = ss.acc.info.ExtraFloatDigits
	params["bytea_output"] = ss.acc.info.ByteaOutput
	ss.acc.cachedSettings, _ = encode.LoadSettings(params) // nil when not exact
	ss.acc.settingsValid, ss.acc.settingsGen, ss.acc.settingsInfo = true, gen, ss.acc.infoGen
	return ss.acc.cachedSettings
}
