package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/encode"
	"github.com/pgaccel/pgaccel/proxy/resultcache"
)

// Planner decides each statement's route (see package planner).
type Planner interface {
	Plan(ctx context.Context, sql string, s *planner.Session) planner.Decision
	// Quick is the planner's fast path: a decision for the origin that
	// does not depend on the session, when it has one. It is the same for
	// texts of one number shape (planner.SameShape), which a session
	// keeps its answers by (quickMemo).
	Quick(sql string) (planner.Decision, bool)
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
}

// stmtInfo is what the session knows of a prepared statement.
type stmtInfo struct {
	name      string
	sql       string
	paramOIDs []uint32 // from Parse, completed by a Describe
	params    *pgproto3.ParameterDescription
	rows      *pgproto3.RowDescription
	noData    bool
	// local: the Parse was kept from the origin (deferred.go).
	local bool
	// atOrigin: its Parse was sent to an origin connection, so a new one
	// gets it again (replay).
	atOrigin bool
	// published: its rows are in the describe cache under its text.
	published bool
	// derived: its descriptions are the planner's (session.derived), never
	// published.
	derived bool
	// origin is the planner's fast-path decision when it has one: the
	// statement goes to the origin whatever the session, so nothing of it
	// (parameters, descriptions) needs keeping.
	origin *planner.Decision
	// originPortal is the portal of an origin-only statement's Binds.
	originPortal *portalInfo
	// pureOrigin: origin is set and the statement changes nothing the
	// session tracks (lane.go).
	pureOrigin bool
	// counters are origin's route counters once the lane counted an
	// Execute of it (countOriginStmt).
	counters *routeCounters
	// cmd: a statement the session answers itself while it has no
	// live origin connection (localcmd.go).
	cmd *localCmd
	// stateCall is the text's sessionStateCall when origin is the fast
	// path's (newStmt; the other origin decisions are KindOther, which
	// noteReplay does not ask it of).
	stateCall string
}

// originOnly reports whether st is known to go to the origin every time.
func (st *stmtInfo) originOnly() bool { return st != nil && st.origin != nil }

// portalInfo is what the session knows of a bound portal. (onlyOf must
// know every field.)
type portalInfo struct {
	stmt          *stmtInfo
	params        [][]byte
	paramFormats  []int16
	resultFormats []int16
	rows          *pgproto3.RowDescription
	// active is a local result suspended by Execute's row limit.
	active *localResult
	// local: the portal's Bind was kept from the origin (deferred.go).
	local bool
	// exhausted: an Execute answered here ran the portal to completion.
	exhausted bool
	// describeSent: the client's Describe of the portal went to the
	// origin, whose answer describeCapture keeps.
	describeSent bool
}

// Descriptions. The origin relay keeps the descriptions it relays for a
// client's Describe (describeCapture) while the client loop may be reading
// them for an Execute it answers without waiting for the origin: the
// descriptions of statements and portals are read and written under the
// session's descMu, through these methods.

// stmtDesc returns what is known of st's parameter and row descriptions.
func (ss *session) stmtDesc(st *stmtInfo) (*pgproto3.ParameterDescription, *pgproto3.RowDescription) {
	ss.descMu.Lock()
	defer ss.descMu.Unlock()
	return st.params, st.rows
}

// setStmtDesc records descriptions of st the origin gave (nil: unchanged).
func (ss *session) setStmtDesc(st *stmtInfo, pd *pgproto3.ParameterDescription, rd *pgproto3.RowDescription) {
	ss.descMu.Lock()
	defer ss.descMu.Unlock()
	if pd != nil {
		st.params = pd
	}
	if rd != nil {
		st.rows = rd
	}
}

// portalRows returns the description of p's rows as Postgres would send it
// for a Describe of the portal: the one the origin sent for the client's
// Describe of it, else its statement's with the result formats of the
// Bind. It is nil when neither was described. Clients that describe a
// statement once and then only bind and execute it (pgx's statement
// cache, pgjdbc's prepared statements) thus cost no origin round trip for
// a description per execution.
func (ss *session) portalRows(p *portalInfo) *pgproto3.RowDescription {
	ss.descMu.Lock()
	defer ss.descMu.Unlock()
	if p.rows != nil {
		return p.rows
	}
	st := p.stmt
	if st == nil || st.rows == nil {
		return nil
	}
	formats := p.resultFormats
	if len(formats) > 1 && len(formats) != len(st.rows.Fields) {
		return nil // the origin refused the Bind
	}
	p.rows = inFormats(st.rows, formats)
	return p.rows
}

// inFormats returns a copy of rd with the result formats of a Bind
// (formatAt; none: text).
func inFormats(rd *pgproto3.RowDescription, formats []int16) *pgproto3.RowDescription {
	out := &pgproto3.RowDescription{Fields: slices.Clone(rd.Fields)}
	for i := range out.Fields {
		out.Fields[i].Format = formatAt(formats, i)
	}
	return out
}

// release closes the portal's suspended local result, if any.
func (p *portalInfo) release() {
	if p.active != nil {
		p.active.close()
		p.active = nil
	}
}

// localResult is an accelerated result being sent to the client.
type localResult struct {
	rows *accelerator.Rows
	// ctx is the query's: cancelled when it is interrupted (a cancel,
	// statement_timeout), which stops sending rows DuckDB has ready.
	ctx     context.Context
	enc     *encode.Encoder
	sent    int64
	cancel  context.CancelFunc
	started time.Time
	// datasets the statement reads, for the metrics.
	datasets []string
	// internal: the proxy's answer about itself (see internal).
	internal bool
	// fingerprint of the statement, for the fallback memory.
	fingerprint uint64
	// peeked is true when the first row was read ahead (by emptyResult)
	// and not sent yet.
	peeked bool
	// flushed: sendRows wrote part of the answer to the client already
	// (it is too large for the results cache).
	flushed bool
	// cacheKey, cacheGens: where an Execute's whole answer goes in the
	// results cache, and the data generations it was computed at ("":
	// not kept).
	cacheKey  string
	cacheGens []uint64
	// point: the answer is a point index's (pointindex.go).
	point bool
	// verify, when set, is the answer's shadow verification sample: its
	// DataRows are hashed as they are sent (verify.go).
	verify *verifySample
}

// emptyResult reports whether r has no rows, reading its first row ahead
// (sendRows sends it). A failure counts as not empty: sendRows reports it.
func (r *localResult) emptyResult() bool {
	if r.peeked {
		return false
	}
	if r.rows.Next() {
		r.peeked = true
		return false
	}
	return r.rows.Err() == nil
}

func (r *localResult) close() {
	if r.rows != nil {
		r.rows.Close()
	}
	if r.cancel != nil {
		r.cancel()
	}
}

// describeCache remembers the origin's descriptions of statements keyed by
// text, user, search path and dataset generation (describeKey): the
// RowDescription of simple-protocol statements, and the parameter types
// Postgres infers for extended-protocol ones prepared without them, so
// that a repeated accelerated query does not pay an origin round trip.
//
// While the origin is down, a text it never described may take the
// descriptions of one of the same description shape (planner's
// DescriptionShape: the same statement but for the constants of its
// filters). The index by shape is built then, from the keys in the order
// they were put, and costs nothing while the origin answers.
type describeCache struct {
	mu  sync.Mutex
	gen uint64 // counts the times m was emptied
	m   map[string]pgproto3.BackendMessage

	order    []string                           // m's keys in the order they were put
	byShape  map[string]pgproto3.BackendMessage // shapeKey of order[:shapedTo] -> description
	shapedTo int

	indexing sync.Mutex // one session at a time adds to byShape
}

const describeCacheMax = 8192

func (c *describeCache) get(key string) *pgproto3.RowDescription {
	rd, _ := c.lookup(key).(*pgproto3.RowDescription)
	return rd
}

// params returns the parameter description kept for key (stmtKey 'P').
func (c *describeCache) params(key string) *pgproto3.ParameterDescription {
	pd, _ := c.lookup(key).(*pgproto3.ParameterDescription)
	return pd
}

func (c *describeCache) lookup(key string) pgproto3.BackendMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

// put keeps a RowDescription or ParameterDescription, and reports whether
// key is new to the cache.
func (c *describeCache) put(key string, msg pgproto3.BackendMessage) (added bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= describeCacheMax {
		c.reset()
		c.m = make(map[string]pgproto3.BackendMessage)
	}
	_, had := c.m[key]
	c.m[key] = msg
	if !had {
		c.order = append(c.order, key)
	}
	return !had
}

// reset empties the cache; c.mu is held.
func (c *describeCache) reset() {
	c.m, c.order, c.byShape, c.shapedTo = nil, nil, nil, 0
	c.gen++
}

// derived is the description the planner works out for sql
// (planner.Describe), for a read the origin cannot describe now and no
// text of whose description shape it described before; nils when the
// planner does not know the read's form, or got it wrong before
// (checkDerived). It is not kept: once the origin answers, its own
// description is asked for and kept as before.
func (ss *session) derived(sql string) (*pgproto3.ParameterDescription, *pgproto3.RowDescription) {
	if _, wrong := ss.srv.underived.Load(derivedKey(sql)); wrong {
		return nil, nil
	}
	desc, ok := ss.accel.Planner.Describe(ss.srv.baseCtx, sql, ss.planSession())
	if !ok {
		return nil, nil
	}
	ss.log.Debug().Int("columns", len(desc.Fields)).Int("parameters", len(desc.Params)).Msg("described a read without the origin")
	return &pgproto3.ParameterDescription{ParameterOIDs: desc.Params}, derivedRows(desc)
}

func derivedRows(desc planner.Description) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(desc.Fields))}
	for i, f := range desc.Fields {
		rd.Fields[i] = pgproto3.FieldDescription{
			Name: []byte(f.Name), TableOID: f.TableOID, TableAttributeNumber: uint16(f.AttNum),
			DataTypeOID: f.TypeOID, DataTypeSize: f.TypLen, TypeModifier: f.TypMod,
		}
	}
	return rd
}

// derivedKey is what a wrong derivation is remembered by: sql's
// description shape, or its text.
func derivedKey(sql string) string {
	if shape, ok := planner.DescriptionShape(sql); ok {
		return shape
	}
	return sql
}

// maxUnderived bounds Server.underived.
const maxUnderived = 4096

// checkDerived compares what the planner works out for sql with the
// origin's own description of it (rd; pd when the client declared no
// parameter types, else nil): the result is counted
// (pgaccel_derived_descriptions_total: declined when it works none out,
// which such a text would get during an outage), and a difference logged
// and remembered, so that the planner's description of that shape is not
// used during an outage.
//
// It runs once per description the cache did not hold (describeCache.put
// reports it), never per execution.
func (ss *session) checkDerived(sql string, pd *pgproto3.ParameterDescription, rd *pgproto3.RowDescription) {
	desc, ok := ss.accel.Planner.Describe(ss.srv.baseCtx, sql, ss.planSession())
	if !ok {
		ss.srv.metrics.derivedDescription("declined")
		return
	}
	same := len(rd.Fields) == len(desc.Fields)
	for i := 0; same && i < len(rd.Fields); i++ {
		o, d := rd.Fields[i], desc.Fields[i]
		same = string(o.Name) == d.Name && o.TableOID == d.TableOID && o.TableAttributeNumber == uint16(d.AttNum) &&
			o.DataTypeOID == d.TypeOID && o.DataTypeSize == d.TypLen && o.TypeModifier == d.TypMod
	}
	if same && pd != nil {
		same = slices.Equal(pd.ParameterOIDs, desc.Params)
	}
	if same {
		ss.srv.metrics.derivedDescription("matched")
		return
	}
	ss.srv.metrics.derivedDescription("differed")
	ss.log.Warn().Str("origin", describeFields(rd.Fields)).Str("derived", describeFields(derivedRows(desc).Fields)).
		Msg("pgaccel's own description of a read differs from the origin's: it will not be used for reads of this shape during an outage (please report this)")
	if ss.srv.underivedCount.Add(1) <= maxUnderived {
		ss.srv.underived.Store(derivedKey(sql), struct{}{})
	}
}

// describeFields prints a row description's fields for the log (names,
// types, typmods: no values).
func describeFields(fs []pgproto3.FieldDescription) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d/%d/%d/%d/%d", f.Name, f.TableOID, f.TableAttributeNumber, f.DataTypeOID, f.DataTypeSize, f.TypeModifier)
	}
	return b.String()
}

// shapeKey is key (a describeKey, or a stmtKey of one) with its text
// replaced by the text's description shape; false when the text has none.
func shapeKey(key string) (string, bool) {
	sql, rest, ok := strings.Cut(key, "\x00")
	if !ok || strings.HasPrefix(sql, "\x01") { // a point lookup's shape key
		return "", false
	}
	shape, ok := planner.DescriptionShape(sql)
	if !ok {
		return "", false
	}
	return shape + "\x00" + rest, true
}

// shapedRows is shaped's RowDescription for a simple Query's key: one kept
// for a Query, or else for a statement without parameters (an
// extended-protocol twin: its Describe's RowDescription is the Query's,
// every column in text).
func (c *describeCache) shapedRows(key string) *pgproto3.RowDescription {
	if rd, ok := c.shaped(key).(*pgproto3.RowDescription); ok {
		return rd
	}
	rd, _ := c.shaped(stmtKey('R', key, nil)).(*pgproto3.RowDescription)
	if rd == nil {
		return nil
	}
	for _, f := range rd.Fields {
		if f.Format != 0 {
			return nil // not a statement's description
		}
	}
	return rd
}

// shaped returns the description kept for a text of key's description
// shape (see describeCache), or nil. It parses every text put since the
// last call, once: call it only when the origin cannot describe.
func (c *describeCache) shaped(key string) pgproto3.BackendMessage {
	want, ok := shapeKey(key)
	if !ok {
		return nil
	}
	c.indexing.Lock()
	defer c.indexing.Unlock()
	c.mu.Lock()
	gen, from, todo := c.gen, c.shapedTo, c.order[c.shapedTo:len(c.order):len(c.order)]
	c.mu.Unlock()
	shapes := make([]string, len(todo)) // parsed without the lock
	for i, k := range todo {
		shapes[i], _ = shapeKey(k)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen && c.shapedTo == from {
		if c.byShape == nil {
			c.byShape = make(map[string]pgproto3.BackendMessage)
		}
		for i, k := range todo {
			if msg, ok := c.m[k]; ok && shapes[i] != "" {
				c.byShape[shapes[i]] = msg
			}
		}
		c.shapedTo = from + len(todo)
	}
	return c.byShape[want]
}

// stmtKey keys the descriptions of an extended-protocol statement: its
// describeKey and the parameter types it was prepared with (0: left to
// Postgres); the kind byte tells ParameterDescription ('P') from the
// statement's RowDescription ('R').
func stmtKey(kind byte, key string, given []uint32) string {
	b := []byte(key)
	b = append(b, 0, kind)
	for _, o := range given {
		b = append(b, ',')
		b = strconv.AppendUint(b, uint64(o), 10)
	}
	return string(b)
}

// invalidate drops every entry: some session ran DDL.
func (c *describeCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reset()
}

// planSession is the planner's view of the session now.
func (ss *session) planSession() *planner.Session {
	return &planner.Session{
		User:       ss.info.user,
		SearchPath: ss.info.searchPath,
		TxWrote:    ss.txWrote.Load() || ss.segmentWrote,
		TempTables: ss.info.tempTables,
		OriginDown: ss.link == linkStandIn,

		TextBytewise:           ss.info.textBytewise,
		DefaultCollationLocale: defaultCollationLocale(ss.info),
	}
}

// defaultCollationLocale is the locale by which the acceleration orders
// text of the session's database's default collation, when that
// collation is not bytewise and its order was established against the
// origin (refresh, for the datasets' columns of that collation).
func defaultCollationLocale(info sessionInfo) string {
	if info.textBytewise || info.defaultCollation == "" {
		return ""
	}
	return accelerator.EstablishedCollation(info.defaultCollation) // provider|locale|version
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
	switch d.Kind {
	case planner.KindDDL:
		ss.srv.describes.invalidate()
	case planner.KindDiscard, planner.KindDeallocate:
		// DISCARD ALL and DEALLOCATE ALL drop the proxy's statement too,
		// and the client's named statements may be gone: a later Parse of
		// one of their names is taken as new (see onParse).
		ss.infoPrepared = false
		for name := range ss.stmts {
			if name != "" {
				delete(ss.stmts, name)
			}
		}
	case planner.KindMulti, planner.KindOther:
		// Anything may be in there.
		ss.srv.describes.invalidate()
		ss.segmentWrote = true
		ss.markDirty()
		return
	}
	if d.Writes() {
		ss.segmentWrote = true
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
		if ss.changedInTx {
			ss.infoDirty = true
			ss.changedInTx = false
		}
	}
}

// markDirty makes the next accelerated statement read the session info
// again first.
func (ss *session) markDirty() {
	ss.pristine = false
	ss.infoDirty = true
	ss.changedInTx = true
}

// ensureInfo makes the session info current before a statement is
// planned: it is read once per session and again after anything that may
// have changed it.
func (ss *session) ensureInfo() bool {
	ss.mustNotBlock("session info")
	if ss.info.valid && !ss.infoDirty {
		return true
	}
	if ss.segmentOpen || !ss.drain() || ss.state.TxStatus() == 'E' {
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
	if ss.txWrote.Load() || ss.segmentWrote {
		// An earlier statement of this transaction wrote; its answer may
		// have arrived only now.
		d.Route, d.Reason = planner.RouteOrigin, "tx_wrote"
		return d, false
	}
	if ss.accel.Privileges != nil {
		ok, reason, err := ss.accel.Privileges.CanSelect(ctx, ss.info.user, d.Tables)
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
	ss.answerCheck = false
	setupOnly, failures := ss.pending.onlyStatementSetup()
	if settle || !setupOnly {
		if !ss.drain() {
			d.Route, d.Reason = planner.RouteOrigin, "transaction_failed"
			return d, false
		}
	} else if !ss.pending.idle() {
		ss.answerCheck, ss.answerSince = true, failures
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
	if ss.settingsValid && ss.settingsGen == gen && ss.settingsInfo == ss.infoGen {
		return ss.cachedSettings
	}
	params := ss.state.Params()
	params["extra_float_digits"] = ss.info.extraFloatDigits
	params["bytea_output"] = ss.info.byteaOutput
	ss.cachedSettings, _ = encode.LoadSettings(params) // nil when not exact
	ss.settingsValid, ss.settingsGen, ss.settingsInfo = true, gen, ss.infoGen
	return ss.cachedSettings
}

// cancelLocal interrupts a running local query, if any.
func (ss *session) cancelLocal() bool {
	ss.localMu.Lock()
	defer ss.localMu.Unlock()
	if ss.localCancel != nil {
		ss.localCancel()
		ss.canceled = true
		return true
	}
	return false
}

// queryCanceled is Postgres's error for a statement cancelled by request.
func queryCanceled() *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{Severity: severityError, SeverityUnlocalized: severityError, Code: pgdef.QueryCanceled, Message: "canceling statement due to user request"}
}

// columnsFor builds the encoder's target columns from the origin's row
// description and the client's result formats.
func columnsFor(rd *pgproto3.RowDescription, formats []int16, enums []uint32) ([]encode.Column, error) {
	if len(formats) > 1 && len(formats) != len(rd.Fields) {
		return nil, errors.New("result format count does not match the columns")
	}
	cols := make([]encode.Column, len(rd.Fields))
	for i, f := range rd.Fields {
		oid := f.DataTypeOID
		if slices.Contains(enums, oid) {
			oid = pgdef.OIDText // an enum: its label, in text as in binary (enum_out, enum_send)
		}
		cols[i] = encode.Column{TypeOID: oid, TypeMod: f.TypeModifier, Format: formatAt(formats, i)}
	}
	return cols, nil
}

// startLocal runs d on the engine and prepares the encoder for the origin's
// description of it, which describe returns (it may wait for the origin,
// which works on it while DuckDB runs the statement). Errors mean the
// statement must go to the origin instead; errOriginDescribe that it goes
// there as it is.
//
// The query is the one the client waits for (runLocal) until the caller's
// endRun: a CancelRequest interrupts it, and so does statement_timeout at
// deadline (zero: none).
//
// pre, when set, is the answer already at hand (from a point index):
// DuckDB is not asked.
func (ss *session) startLocal(d planner.Decision, deadline time.Time, describe func() (*pgproto3.RowDescription, error), formats []int16, args []any, s *encode.Settings, pre *accelerator.Rows) (*localResult, error) {
	ss.mustNotBlock("local query")
	ctx, cancel := context.WithCancel(ss.srv.baseCtx)
	ss.runLocal(cancel, deadline)
	rows, err := pre, error(nil)
	if pre == nil {
		rows, err = ss.accel.Engine.QueryIn(ctx, ss.state.Param("TimeZone"), d.SQL, args...)
	}
	if err != nil {
		cancel()
		if rd, derr := describe(); derr != nil || rd == nil {
			return nil, errOriginDescribe // the origin refuses it too, and says why
		}
		return nil, err
	}
	rd, err := describe()
	if err != nil || rd == nil {
		rows.Close()
		cancel()
		return nil, errOriginDescribe
	}
	cols, err := columnsFor(rd, formats, d.EnumTypes)
	if err != nil {
		rows.Close()
		cancel()
		return nil, err
	}
	rcols := rows.Columns()
	if len(rcols) != len(cols) {
		rows.Close()
		cancel()
		return nil, errors.New("the acceleration returns a different number of columns than the origin")
	}
	duckTypes := make([]string, len(rcols))
	for i, c := range rcols {
		duckTypes[i] = c.DuckType
	}
	enc, err := encode.NewEncoder(cols, duckTypes, s)
	if err != nil {
		rows.Close()
		cancel()
		return nil, err
	}
	return &localResult{rows: rows, ctx: ctx, enc: enc, cancel: cancel, started: time.Now(), datasets: d.Datasets, internal: internal(&d), point: pre != nil}, nil
}

// errOriginDescribe: the origin does not describe the statement (it refuses
// it, and will say why when it runs it) or it returns no rows; it goes to
// the origin as it is, not as a fallback of the acceleration.
var errOriginDescribe = errors.New("the origin does not describe the statement as a query")

// described is a describe function for a description already at hand.
func described(rd *pgproto3.RowDescription) func() (*pgproto3.RowDescription, error) {
	return func() (*pgproto3.RowDescription, error) { return rd, nil }
}

// errOriginSkipping: an earlier message of the stretch failed at the
// origin, which skips everything up to the next Sync; the statement is
// forwarded for the origin to skip, and nothing of the local answer is
// sent.
var errOriginSkipping = errors.New("the origin skips to the next Sync")

// errAfterOutput is a local failure after rows reached the client: the
// statement can no longer move to the origin.
type errAfterOutput struct{ err error }

func (e *errAfterOutput) Error() string { return e.err.Error() }

// localBufferLimit is how much of a local result is held before the first
// write; a failure within it can still fall back to the origin.
const localBufferLimit = 1 << 20

// sendRows encodes up to maxRows rows (0: all) of r and writes them after
// head (messages that precede the rows, e.g. a RowDescription). It reports
// whether the result is exhausted. Errors before anything was written are
// returned plainly (the caller falls back to the origin); later ones as
// *errAfterOutput.
func (ss *session) sendRows(r *localResult, head []pgproto3.BackendMessage, maxRows int64) (done bool, n int64, err error) {
	buf := ss.outBuf[:0]
	for _, m := range head {
		if buf, err = m.Encode(buf); err != nil {
			return false, 0, err
		}
	}
	wroteAny := false
	write := func() error {
		if !wroteAny && !ss.pending.idle() {
			// Streaming past the buffer: every earlier origin response
			// must be in first, and none of them an error that makes the
			// origin skip this statement.
			if !ss.drain() {
				return errOriginSkipping
			}
		}
		err := ss.writeClient(buf)
		buf = buf[:0]
		wroteAny = true
		r.flushed = true
		return err
	}
	for maxRows <= 0 || n < maxRows {
		more := r.peeked
		if more {
			r.peeked = false
		} else {
			more = r.rows.Next()
		}
		if !more {
			if err := r.rows.Err(); err != nil {
				if wroteAny {
					return false, n, &errAfterOutput{err}
				}
				return false, n, err
			}
			// The caller appends the completion message and flushes.
			ss.outBuf = buf
			return true, n, nil
		}
		if n&255 == 255 && r.ctx.Err() != nil {
			// Interrupted while sending a result DuckDB has ready (it
			// checks only while it computes): Postgres stops between rows.
			if wroteAny {
				return false, n, &errAfterOutput{r.ctx.Err()}
			}
			return false, n, r.ctx.Err()
		}
		vals := r.rows.Values()
		start := len(buf)
		buf = append(buf, 'D', 0, 0, 0, 0, byte(len(vals)>>8), byte(len(vals)))
		for i, v := range vals {
			lenAt := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			out, isNull, err := r.enc.AppendValue(buf, i, v)
			if err != nil {
				if wroteAny {
					return false, n, &errAfterOutput{err}
				}
				return false, n, err
			}
			if isNull {
				buf = append(buf[:lenAt], 0xff, 0xff, 0xff, 0xff)
				continue
			}
			buf = out
			putUint32(buf[lenAt:], uint32(len(buf)-lenAt-4))
		}
		if len(buf)-start-1 > maxRowBytes {
			// No Postgres row is that long (its limit is 1 GB); the
			// length would not even fit the message's length field.
			err := fmt.Errorf("a row of %d bytes, over the %d bytes of a Postgres row", len(buf)-start-1, maxRowBytes)
			buf = buf[:start]
			if wroteAny {
				return false, n, &errAfterOutput{err}
			}
			return false, n, err
		}
		putUint32(buf[start+1:], uint32(len(buf)-start-1))
		if r.verify != nil {
			r.verify.row(buf[start:])
		}
		n++
		r.sent++
		if len(buf) >= localBufferLimit {
			if err := write(); err != nil {
				if errors.Is(err, errOriginSkipping) {
					return false, n, err
				}
				return false, n, &errAfterOutput{err}
			}
		}
	}
	// The row limit was reached: the portal is suspended unless the result
	// happens to end exactly here, which Postgres also reports as suspended.
	ss.outBuf = buf
	return false, n, nil
}

// maxRowBytes bounds a DataRow the proxy encodes: Postgres's MaxAllocSize.
const maxRowBytes = 1<<30 - 1

func putUint32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

// finish writes what sendRows left in the session's output buffer followed
// by tail, and flushes.
func (ss *session) finish(tail ...pgproto3.BackendMessage) error {
	buf := ss.outBuf
	for _, m := range tail {
		var err error
		if buf, err = m.Encode(buf); err != nil {
			return err
		}
	}
	err := ss.writeOrdered(buf)
	if cap(buf) > 4*localBufferLimit {
		buf = nil
	}
	ss.outBuf = buf[:0]
	return err
}

func selectTag(n int64) *pgproto3.CommandComplete {
	return &pgproto3.CommandComplete{CommandTag: []byte("SELECT " + strconv.FormatInt(n, 10))}
}

// describeKey keys the describe cache by statement text and everything
// that changes how the origin resolves it.
func (ss *session) describeKey(sql string, d planner.Decision) string {
	var gen uint64
	if ss.accel.Generation != nil {
		gen = ss.accel.Generation(d.Datasets)
	}
	return sql + "\x00" + ss.info.user + "\x00" + strings.Join(ss.info.searchPath, ",") + "\x00" + strconv.FormatUint(gen, 10)
}

// writeOrdered writes encoded messages of the proxy's own to the client
// after every origin response still pending before them: at once when
// nothing is pending, else queued for the origin relay to write in turn
// (dropped if the origin skips to the next Sync, as it would skip the
// statement they answer).
func (ss *session) writeOrdered(buf []byte) error {
	return ss.writeLocal(buf, false, ss.answerCheck, ss.answerSince)
}

// writeLocal is writeOrdered with pushLocal's skippable and check: the
// answer goes to the client now when nothing is pending at the origin,
// else into the pending queue (or nowhere, when the origin skips it).
func (ss *session) writeLocal(buf []byte, skippable, check bool, since uint64) error {
	ss.writeMu.Lock()
	defer ss.writeMu.Unlock()
	outcome, seq := ss.pending.pushLocal(buf, skippable, check, since)
	ss.answerSeq = seq
	if outcome != localWriteNow {
		return nil
	}
	if !ss.onLoop && ss.cfr.buffered() > 0 {
		// The client's next message is here already (a pipeline: Bind,
		// Describe, Execute, Sync): the answer waits in the client
		// writer's buffer, which every later write to the client flushes
		// first, and goes out with the others in one write once the
		// client pauses (flushHeld).
		ss.rawOut = buf // Send copies it into the buffer
		ss.be.Send(&ss.rawOut)
		ss.rawOut = nil
		ss.held = true
		return nil
	}
	return ss.writeAfterRelayed(buf)
}

// flushHeld writes the answers writeLocal left in the client writer's
// buffer; the client loop calls it once the client has paused.
func (ss *session) flushHeld() error {
	ss.writeMu.Lock()
	defer ss.writeMu.Unlock()
	if !ss.held {
		return nil
	}
	ss.held = false
	return ss.be.Flush()
}

// writeQueuedLocal writes the answers of the proxy's own that have reached
// the head of the pending queue; the origin relay calls it when a response
// it settles leaves one there.
func (ss *session) writeQueuedLocal() error {
	ss.writeMu.Lock()
	defer ss.writeMu.Unlock()
	return ss.writeAfterRelayed(ss.pending.takeLocal()...)
}

// writeClient writes encoded messages to the client after anything the
// origin relay still holds in its buffer, keeping the order. Nothing may be
// pending at the origin (see writeOrdered).
func (ss *session) writeClient(buf []byte) error {
	ss.writeMu.Lock()
	defer ss.writeMu.Unlock()
	return ss.writeAfterRelayed(buf)
}

// heldJoinLimit is the most writeAfterRelayed copies into the client
// writer's buffer to send it with the answers held there.
const heldJoinLimit = 64 << 10

// writeAfterRelayed writes bufs to the client after what the origin relay
// holds in its buffer. The caller holds writeMu.
func (ss *session) writeAfterRelayed(bufs ...[]byte) error {
	if len(bufs) == 0 {
		return nil
	}
	if ss.held {
		// Answers wait in the client writer's buffer: small ones join
		// them there, so that everything goes out in one write.
		n := 0
		for _, b := range bufs {
			n += len(b)
		}
		if n <= heldJoinLimit {
			for _, b := range bufs {
				ss.rawOut = b // Send copies it into the buffer
				ss.be.Send(&ss.rawOut)
			}
			ss.rawOut = nil
			ss.held = false
			return ss.be.Flush()
		}
	}
	ss.held = false
	if err := ss.be.Flush(); err != nil {
		return err
	}
	for _, b := range bufs {
		if _, err := ss.clientW.Write(b); err != nil {
			return err
		}
	}
	return nil
}
