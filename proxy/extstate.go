package proxy

import (
	"slices"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/stmtstats"
)

// extState is the session's extended-protocol state: its prepared
// statements and portals, the stretch of messages since the last Sync, and
// the journal of local answers (journal.go, deferred.go, stretchsets.go).
//
// Goroutines: the client loop's, but descMu, which guards the
// descriptions in stmts and portals that the origin relay fills in from
// the origin's answers.
type extState struct {
	stmts   map[string]*stmtInfo
	portals map[string]*portalInfo
	descMu  sync.Mutex
	// staleStmt, stalePortal: the origin may hold an unnamed statement or
	// portal the client no longer has (closeStaleUnnamed).
	staleStmt   bool
	stalePortal bool
	// lastParse is the client's last Parse, as it came and decoded, so
	// that the same Parse again (drivers prepare the unnamed statement
	// for every execution) is taken without decoding (receiveClient);
	// parseScratch is the copy handed out.
	lastParse    savedParse
	parseScratch pgproto3.Parse
	// planMemo: a deferred Bind's plan, for its Execute (planFresh).
	planMemo planMemo

	// segmentOpen: extended-protocol messages came since the last Sync;
	// stretchOrigin: something of that stretch went to the origin, so its
	// Sync must too (deferred.go); segmentWrote: a statement that writes
	// was sent in it.
	segmentOpen   bool
	stretchOrigin bool
	segmentWrote  bool
	// localSkip: a local error; skip client messages to the next Sync.
	localSkip bool
	// answerCheck: the Execute being answered locally was decided with
	// statement setup of its stretch still pending at the origin, when
	// the pending queue had seen answerSince failures; its answer is
	// dropped if one of them fails (writeOrdered).
	answerCheck bool
	answerSince uint64

	// answerSeq is the position of the last local answer (journal.go).
	answerSeq    uint64
	journal      []journalEntry
	failuresSeen uint64
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
	// stat is its statement statistics entry once executed (stats.go).
	stat *stmtstats.Entry
	// epoch is the registry's Epoch origin was decided at: after a reload
	// changed the datasets, a Bind decides it again (renewStmt).
	epoch uint64
	// cmd: a statement the session answers itself while it has no
	// live origin connection (localcmd.go).
	cmd *planner.LocalCommand
	// stateCall is the text's sessionStateCall when origin is the fast
	// path's (newStmt; the other origin decisions are KindOther, which
	// noteReplay does not ask it of).
	stateCall string
	// kept: origin is a full plan's decision kept for the text's shape
	// (keepOrigin) at keptAt; a Bind finds out whether it
	// still holds (keeps), and else the statement is planned at
	// every execution again.
	kept   bool
	keptAt keepStamp
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
// session's ext.descMu, through these methods.

// stmtDesc returns what is known of st's parameter and row descriptions.
func (ss *session) stmtDesc(st *stmtInfo) (*pgproto3.ParameterDescription, *pgproto3.RowDescription) {
	ss.ext.descMu.Lock()
	defer ss.ext.descMu.Unlock()
	return st.params, st.rows
}

// setStmtDesc records descriptions of st the origin gave (nil: unchanged).
func (ss *session) setStmtDesc(st *stmtInfo, pd *pgproto3.ParameterDescription, rd *pgproto3.RowDescription) {
	ss.ext.descMu.Lock()
	defer ss.ext.descMu.Unlock()
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
	ss.ext.descMu.Lock()
	defer ss.ext.descMu.Unlock()
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
