package proxy

import (
	"bytes"
	"encoding/binary"
	"time"
	"unsafe"

	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/pgaccel/pgaccel/proxy/wire"
)

// The origin lane. On an event loop (handoff.go), a session with an
// acceleration still decodes each client message with pgproto3 and passes
// it through the routing hook one by one (relayOne), even when every
// statement it sends goes to the origin: about 1 µs of user CPU per
// message more than pass-through, which at 8 pgbench clients on a 2-core
// machine cost 15-20 % of the throughput (bench/RESULTS.md).
//
// Most such traffic is a few statements a client runs again and again: a
// pgbench transaction, a driver's unnamed statement prepared anew for each
// execution, a prepared statement bound and executed. The lane takes one
// whole round trip of those from the client's buffer without decoding it
// and forwards it in one write, with exactly the effects the decoded path
// would have on what the session tracks:
//
//   - a simple Query of a pure statement (below), or of a plain write or
//     transaction statement the fast path decides (laneQuery); or
//   - an extended-protocol stretch up to its Sync of Parse (unnamed, the
//     same bytes as the session's last Parse, whose statement is pure),
//     Bind (to the unnamed portal, of a pure statement), Describe and
//     Execute (of pure statements and their portals) and Sync.
//
// A statement is pure when the planner's fast path sends it to the origin
// whatever the session (Quick) and it changes nothing the session tracks:
// a SELECT that writes nothing, sets no search path, and calls none of the
// functions whose effect outlives the statement (sessionStateCall). Its
// messages then change only the unnamed statement and portal, which stay
// origin-only, and the pending queue, which gets the items the decoded
// path pushes (so the origin's answers, errors included, are relayed and
// accounted for as before).
//
// The lane runs only when everything before is answered (the pending
// queue is empty, nothing journaled is open), the origin link is up, and
// no stretch, skip, SET to commit or stale unnamed object is open; then a
// stretch starts as beginStretch starts it. Anything else, and a round
// trip not yet whole in the buffer, takes the decoded path. Its changes
// are not journaled: an error at the origin undoes nothing of a pure
// statement's that routing depends on (the unnamed statement and portal
// it leaves behind go to the origin either way, which answers for them).

// laneMaxFrames bounds the messages of one round trip the lane takes.
const laneMaxFrames = 8

// pureOrigin reports whether a statement with the fast path's decision d,
// whose text calls stateCall (sessionStateCall), is pure (see above).
func pureOrigin(d planner.Decision, stateCall string) bool {
	return d.Route == planner.RouteOrigin && d.Kind == planner.KindSelect && !d.Writes() && !d.SetsSearchPath &&
		d.OriginSQL == "" && d.FallbackSQL == "" && stateCall == ""
}

// laneQuery reports whether the lane takes a simple Query with the fast
// path's decision d, whose text calls stateCall (sessionStateCall): a
// pure statement, or one the fast path decides whose every effect on what
// the session tracks is noteOrigin's for it (laneApply calls it, as
// handleQuery does): a plain write
// (INSERT, UPDATE, DELETE: the transaction wrote, the caching answers it
// may change, a session-state call that cannot be replayed) or a plain
// BEGIN, COMMIT or ROLLBACK. pgbench's TPC-B is all of those.
func laneQuery(d planner.Decision, stateCall string) bool {
	switch d.Kind {
	case planner.KindSelect:
		return pureOrigin(d, stateCall)
	case planner.KindBegin, planner.KindCommit, planner.KindRollback,
		planner.KindInsert, planner.KindUpdate, planner.KindDelete:
		return d.Route == planner.RouteOrigin && !d.SetsSearchPath && d.OriginSQL == "" && d.FallbackSQL == ""
	}
	return false
}

// laneOp is one message of a round trip the lane takes.
type laneOp struct {
	typ  byte
	kind byte        // Describe: 'S' or 'P'
	st   *stmtInfo   // Parse, Bind, Describe 'S': the statement
	p    *portalInfo // Describe 'P', Execute of an existing portal (nil: the one Bind makes)
	size int         // Parse: the text's length; Bind: the frame's
	q    *quickEntry // Query: the fast path's decision (the session's memo)
	sql  string      // Query: its text, in the client's buffer (laneScan)
}

// laneReady reports whether the lane may take the client's next round
// trip (see above), no message being carried over (laneClient checks
// that first).
func (ss *session) laneReady() bool {
	return ss.origin.state == linkLive && !ss.origin.broken.Load() && !ss.origin.releasing.Load() && !ss.ext.localSkip && !ss.ext.segmentOpen &&
		ss.origin.queryCapture == nil && ss.origin.pendingSet == "" && ss.origin.tent == nil && !ss.ext.staleStmt && !ss.ext.stalePortal &&
		ss.local.stmtStart.IsZero() && !ss.client.fr.InMessage() && ss.origin.pending.Quiet()
}

// laneClient relays the client's next round trip through the lane when it
// can. It reports whether it did, and whether there was nothing to read.
func (ss *session) laneClient() (taken, idle bool) {
	if ss.evl.carryC.set {
		return false, false
	}
	fr := ss.client.fr
	if fr.Buffered() == 0 {
		// First, whether there is anything to read at all (after a round
		// trip the lane took, the loop asks again, with an answer due,
		// which the lane does not take): the decoded path would find out
		// through pgproto3.
		if err := fr.Fill(); err != nil {
			// Nothing to read; any other failure the decoded path meets
			// again and reports.
			return false, err == wire.ErrWouldBlock
		}
	}
	if !ss.laneReady() {
		return false, false
	}
	var ops [laneMaxFrames]laneOp
	n, size := ss.laneScan(fr.Pending(), &ops)
	if n == 0 {
		return false, false
	}
	ss.enterLink()
	ss.laneApply(ops[:n])
	// Written from the client's buffer, not copied into the Frontend's
	// first; whatever that holds goes before it (nothing, as a rule:
	// everything before is answered).
	err := ss.origin.fe.Flush()
	if err == nil {
		_, err = ss.origin.rw.Write(fr.Pending()[:size])
	}
	fr.Skip(size)
	ss.origin.pendingBytes = 0
	ss.leaveLink()
	if err != nil {
		ss.originFailed(err)
		return true, false
	}
	ss.srv.metrics.laneTrip(ss.stripe)
	return true, false
}

// laneScan reads one round trip from b (whole messages from the start of
// the buffer) into ops, checking every message against the session as it
// would stand when the message arrives. It returns the number of messages
// and their bytes; 0 when b does not start with a whole round trip the
// lane takes.
func (ss *session) laneScan(b []byte, ops *[laneMaxFrames]laneOp) (n, size int) {
	// The statement of the unnamed portal a Bind of this round trip makes.
	var bound *stmtInfo
	for n < laneMaxFrames {
		if len(b)-size < 5 {
			return 0, 0
		}
		l := int(int32(binary.BigEndian.Uint32(b[size+1:])))
		if l < 4 || size+1+l > len(b) || ss.client.fr.Max() > 0 && l-4 > ss.client.fr.Max() {
			return 0, 0
		}
		m := b[size : size+1+l]
		body := m[5:]
		op := laneOp{typ: m[0]}
		switch m[0] {
		case 'Q':
			text, rest, ok := cstring(body)
			if n > 0 || !ok || len(rest) != 0 {
				return 0, 0
			}
			// As pgproto3 and handleQuery would take it, but not copied:
			// the text stays in the client's buffer until laneClient has
			// written the round trip. quickEntry copies a text it keeps,
			// and noteOrigin keeps none of the kinds laneQuery takes.
			sql := asOwnStatement(unsafe.String(unsafe.SliceData(text), len(text)))
			e := ss.quickEntry(sql)
			if e == nil || !e.ok || !laneQuery(e.d, e.stateCall) {
				return 0, 0
			}
			ops[0] = laneOp{typ: 'Q', q: e, sql: sql}
			return 1, len(m)
		case 'P':
			st := ss.ext.stmts[""]
			lp := &ss.ext.lastParse
			if lp.raw == nil || lp.msg.Name != "" || !bytes.Equal(m, lp.raw) || !st.pure() || st.sql != lp.msg.Query || st.epoch != ss.epoch() {
				return 0, 0
			}
			op.st, op.size = st, len(st.sql)
		case 'B':
			dest, rest, ok := cstring(body)
			if !ok || len(dest) != 0 {
				return 0, 0
			}
			name, _, ok := cstring(rest)
			if !ok {
				return 0, 0
			}
			st := ss.ext.stmts[string(name)]
			if !st.pure() || st.epoch != ss.epoch() {
				return 0, 0 // a reload changed the datasets: the decoded Bind decides again
			}
			bound, op.st, op.size = st, st, len(m)
		case 'D':
			if len(body) < 1 {
				return 0, 0
			}
			name, _, ok := cstring(body[1:])
			if !ok {
				return 0, 0
			}
			op.kind = body[0]
			switch {
			case op.kind == 'S':
				op.st = ss.ext.stmts[string(name)]
				if !op.st.pure() {
					return 0, 0
				}
			case op.kind == 'P' && len(name) == 0 && bound != nil:
			case op.kind == 'P':
				if op.p = ss.ext.portals[string(name)]; !op.p.pure() {
					return 0, 0
				}
			default:
				return 0, 0
			}
		case 'E':
			name, rest, ok := cstring(body)
			if !ok || len(rest) != 4 {
				return 0, 0
			}
			if len(name) == 0 && bound != nil {
				op.st = bound
			} else if op.p = ss.ext.portals[string(name)]; op.p.pure() {
				op.st = op.p.stmt
			} else {
				return 0, 0
			}
		case 'S':
			if n == 0 || len(body) != 0 {
				return 0, 0
			}
			ops[n] = op
			return n + 1, size + len(m)
		default:
			return 0, 0
		}
		ops[n] = op
		n++
		size += len(m)
	}
	return 0, 0
}

// cstring splits b after its first NUL: the string before it, and the
// rest.
func cstring(b []byte) (s, rest []byte, ok bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

// pure reports whether st is a pure origin statement (see pureOrigin).
func (st *stmtInfo) pure() bool { return st.originOnly() && st.pureOrigin }

// pure reports whether p is an unsuspended portal of a pure statement.
func (p *portalInfo) pure() bool {
	return p != nil && p.stmt.pure() && p.active == nil && !p.exhausted && !p.local
}

// laneApply makes the changes the decoded path makes for ops (relay.go,
// extended.go): what the session records of its statements, portals,
// stretch and timers, the pending responses, the metrics.
func (ss *session) laneApply(ops []laneOp) {
	now := time.Now()
	if ops[0].typ == 'Q' {
		// accelerate and handleQuery, for a Query the fast path sends to
		// the origin.
		ss.reconcile()
		ss.clearJournal(0)
		if p := ss.ext.portals[""]; p != nil {
			p.release()
			delete(ss.ext.portals, "")
		}
		delete(ss.ext.stmts, "")
		q := ops[0].q
		ss.statArriveQuick(ops[0].sql, q)
		ss.countOriginEntry(q)
		ss.noteOriginKnown(ops[0].sql, q.d, &q.stateCall)
		ss.origin.pendingDiscard = false
		ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemQuery, Wrote: ss.ext.segmentWrote, Started: now, Route: routeOrigin, Stat: ss.statItem()})
		ss.ext.stretchOrigin, ss.local.originTimer, ss.ext.segmentWrote = false, false, false
		return
	}
	// beginStretch, with everything answered.
	ss.reconcile()
	ss.clearJournal(0)
	if s := ss.state.TxStatus(); s == 'I' || s == 0 {
		ss.closePortals()
	}
	var items [laneMaxFrames]originlink.Item
	for i, op := range ops {
		switch op.typ {
		case 'P':
			op.st.atOrigin = true
			items[i] = originlink.Item{Kind: originlink.ItemParse}
		case 'B':
			// onBind, for an origin-only statement.
			if old := ss.ext.portals[""]; old != nil {
				old.release()
			}
			p := op.st.originPortal
			if p == nil || !p.onlyOf(op.st) {
				p = &portalInfo{stmt: op.st}
				op.st.originPortal = p
			}
			ss.ext.portals[""] = p
			items[i] = originlink.Item{Kind: originlink.ItemBind}
		case 'D':
			kind := originlink.ItemDescribePortal
			if op.kind == 'S' {
				kind = originlink.ItemDescribeStatement
			}
			items[i] = originlink.Item{Kind: kind}
		case 'E':
			ss.ext.answerCheck, ss.origin.pendingDiscard = false, false
			ss.statArrive("", op.st)
			ss.countOriginStmt(op.st)
			ss.noteArrival(now)
			items[i] = originlink.Item{Kind: originlink.ItemExecute, Started: now, Route: routeOrigin, Stat: ss.statItem()}
		case 'S':
			items[i] = originlink.Item{Kind: originlink.ItemSync, Wrote: ss.ext.segmentWrote}
		}
	}
	ss.origin.pending.PushAll(items[:len(ops)])
	ss.ext.segmentOpen, ss.ext.stretchOrigin, ss.local.originTimer, ss.ext.segmentWrote = false, false, false, false
	ss.local.stmtStart = time.Time{}
}

// noItem stands for the head of an empty queue in originRun.
var noItem originlink.Item

// originRun is the lane's origin side: from the origin's buffer, the run
// of whole messages of the fastOriginTypes that starts there (the first
// one peeked), relayed in one write, while the pending items they answer
// neither capture nor keep them: what originMessage does for each,
// without decoding them, and with the queue locked twice per run rather
// than twice per message. The run ends
// before a message of another type, one not whole in the buffer, and
// after one that leaves an answer of the proxy's own at the head of the
// queue (written after it, as relayOut does). It reports whether it took
// any message, and whether the origin side of the session ended.
func (ss *session) originRun() (taken, ended bool) {
	fr, q := ss.origin.fr, ss.origin.pending
	b, at := fr.Pending(), 0
	done := 0 // the items the run completes, from the head
	idle, local, shutdown := false, false, false
	q.Lock()
	items := q.ItemsLocked()
	for !local && !shutdown {
		if len(b)-at < 5 || !fastOriginTypes[b[at]] {
			break
		}
		n, err := fr.PendingFrameLen(at)
		if err != nil || n > wire.FrameKeepSize || len(b)-at < n {
			break
		}
		head := &noItem
		hasHead := done < len(items)
		if hasHead {
			head = &items[done]
			if head.Capture != nil || head.Private != nil || head.Swallow || head.Kind == originlink.ItemLocal {
				break
			}
		}
		typ := b[at]
		switch typ {
		case 'D':
			ss.client.pendingOut += n
		case 'C':
			if n > 5 {
				ss.noteCompletion(bytes.TrimRight(b[at+5:at+n], "\x00"))
			}
		case 'Z':
			if n > 5 {
				ss.noteReady(b[at+5], *head, hasHead)
			}
		}
		at += n
		if hasHead && completesType(typ, head.Kind) {
			done++
			idle = done == len(items)
			local = !idle && items[done].Kind == originlink.ItemLocal
			shutdown = idle && typ == 'Z' && ss.life.shuttingDown.Load()
		}
	}
	q.Unlock()
	if at == 0 {
		return false, false
	}
	fr.Skip(at)
	// Relayed before the items are settled: a goroutine waiting for the
	// queue to empty writes its answers after these (writeClient).
	ss.client.writeMu.Lock()
	ss.client.rawOut = b[:at]
	ss.client.be.Send(&ss.client.rawOut)
	var werr error
	if ss.client.pendingOut >= flushThreshold || fr.Buffered() == 0 || local || shutdown {
		ss.client.pendingOut = 0
		werr = ss.client.be.Flush()
	}
	ss.client.writeMu.Unlock()
	if done > 0 {
		q.Lock()
		q.PopDoneLocked(done)
		q.Unlock()
	}
	if local && werr == nil {
		werr = ss.writeQueuedLocal()
	}
	if werr != nil {
		ss.log.Debug().Err(werr).Msg("client write failed")
		ss.close()
		return true, true
	}
	if shutdown {
		ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
		ss.close()
		return true, true
	}
	return true, false
}
