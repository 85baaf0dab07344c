package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/pgaccel/pgaccel/proxy/wire"

	"github.com/pgaccel/pgaccel/pgdef"
)

// relayClient relays what the client sends (relayOne): through the routing
// hook (accelerate) when an acceleration is configured, else pass-through.
// It returns when the client leaves or the session closes.
func (ss *session) relayClient() {
	if ss.origin.raw != nil {
		// Bytes an event loop held back go first (wire.RawIO.FlushHeld).
		if err := ss.origin.raw.FlushHeld(); err != nil {
			ss.originFailed(err)
			return
		}
	}
	for {
		if ended, _ := ss.relayOne(false); ended {
			return
		}
	}
}

// relayOne takes one step of one side of the session: a message received
// and handled, or, pass-through, a read's whole messages relayed. It
// reports whether that side of the session ended, and whether there was
// nothing to read (only in an event loop: wire.ErrWouldBlock).
func (ss *session) relayOne(fromOrigin bool) (ended, idle bool) {
	if ss.pass != nil {
		if fromOrigin {
			return ss.passOrigin()
		}
		return ss.passClient()
	}
	if fromOrigin {
		var raw []byte
		var msg pgproto3.BackendMessage
		var err error
		if c, ok := ss.evl.carryO.take(); ok {
			msg, raw, err = c.msg, c.raw, c.err
		} else {
			// The usual answers are relayed from the frame as it came,
			// without pgproto3 (originRun, lane.go); the rest, and answers a
			// pending item looks into, are decoded.
			raw, err = ss.origin.fr.PeekOf(&fastOriginTypes, wire.FrameKeepSize)
			if err == nil && raw != nil {
				if taken, ended := ss.originRun(); taken {
					return ended, false
				}
			}
			if err == nil {
				msg, err = ss.origin.fe.Receive()
				raw = ss.origin.fr.LastFrame()
			}
		}
		if errors.Is(err, wire.ErrWouldBlock) {
			return false, true
		}
		if ss.evl.onLoop && !ss.originLoopSafe(msg, err) {
			ss.evl.carryO.put(msg, raw, err)
			ss.evl.handOff = true
			return false, false
		}
		return ss.originMessage(msg, raw, err), false
	}
	if ss.evl.onLoop {
		if taken, idle := ss.laneClient(); taken || idle {
			return ss.isClosed(), idle
		}
	}
	msg, err := ss.receiveClient()
	if errors.Is(err, wire.ErrWouldBlock) {
		return false, true
	}
	if ss.evl.onLoop && !ss.loopSafe(msg, err) {
		ss.evl.carryC.put(msg, nil, err)
		ss.evl.handOff = true
		return false, false
	}
	ss.enterLink()
	if !ss.evl.onLoop {
		ss.noteLoopSafe(msg, err)
		if err == nil {
			if handled, ended := ss.promote(msg); handled {
				ss.leaveLink()
				return ended, false
			}
		}
	}
	ended = ss.clientMessage(msg, err)
	ss.leaveLink()
	return ended, false
}

// clientMessage handles one client message, or the error that came
// instead of it, and reports whether the client side of the session ended.
func (ss *session) clientMessage(msg pgproto3.FrontendMessage, err error) bool {
	if err != nil {
		if raw := ss.client.fr.LastFrame(); raw != nil {
			// A whole message pgproto3 cannot decode: Postgres answers a
			// malformed body with an ERROR and the session goes on, so it
			// is the origin's to answer.
			if err := ss.forwardUndecoded(raw); err != nil {
				ss.originFailed(err)
				return true
			}
			return false
		}
		ss.clientReadFailed(err)
		return true
	}
	if _, ok := msg.(*pgproto3.Terminate); ok {
		ss.life.terminated.Store(true)
		if ss.endsToPool() {
			ss.life.endToPool.Store(true)
			return true
		}
		if ss.origin.state == linkLive {
			ss.origin.fe.Send(msg)
			_ = ss.origin.fe.Flush()
		}
		return true
	}
	// Only sessions with an acceleration come here (the others are
	// relayed pass-through): every message passes the routing hook.
	switch m := msg.(type) {
	case *pgproto3.Query:
		// Timed to their completion when they go to the origin (forward).
		ss.noteArrival(time.Now())
		ss.statArrive(m.String, nil)
	case *pgproto3.Execute:
		ss.noteArrival(time.Now())
		if p := ss.ext.portals[m.Portal]; p != nil {
			ss.statArrive("", p.stmt)
		} else {
			ss.local.stat = nil
		}
	}
	dirty, changedInTx := ss.acc.infoDirty, ss.acc.changedInTx
	handled, capture := ss.accelerate(msg)
	if handled {
		ss.seal(ss.ext.answerSeq)
	} else {
		// The link first: a connection opened now gets what the stretch
		// set up without it (stretchsets.go) before this message, whose
		// changes take their position after that.
		if !ss.needOrigin() {
			ss.originFailed(errSessionClosed)
			return true
		}
		ss.closeStaleUnnamed(msg)
		if ss.unsealed() {
			ss.seal(ss.origin.pending.NextSeq())
		}
		if err := ss.forward(msg, capture); err != nil {
			ss.originFailed(err)
			return true
		}
		if ss.origin.state == linkStandIn {
			// The stand-in fails it (link.go): nothing it might have set
			// at the origin changed, so the session info a SET marked for
			// reading again (which the origin cannot answer now) holds.
			ss.acc.infoDirty, ss.acc.changedInTx = dirty, changedInTx
		}
	}
	if ss.client.fr.Buffered() == 0 {
		// The client has paused (nothing more of it is read): what it
		// sent so far reaches the origin now, as it would reach Postgres.
		// statement_timeout runs from a Parse's arrival, so a Parse held
		// until the client's Sync would be timed from the Sync instead.
		if err := ss.origin.fe.Flush(); err != nil {
			ss.originFailed(err)
			return true
		}
		// And the answers of the proxy's own held for it reach it.
		if err := ss.flushHeld(); err != nil {
			ss.log.Debug().Err(err).Msg("client write failed")
			ss.close()
			return true
		}
	}
	if ss.acc.revalidation != nil {
		ss.maybeRevalidate(msg)
	}
	return ss.isClosed()
}

// forward sends one client message to the origin, records the response it
// owes, and flushes at protocol sync points or when enough is buffered.
func (ss *session) forward(msg pgproto3.FrontendMessage, capture func(pgproto3.BackendMessage)) error {
	if !ss.needOrigin() {
		return errSessionClosed
	}
	_, extended := msg.(*pgproto3.Execute)
	ss.commitSet(extended)
	flush := false
	// Whether the current extended-protocol stretch has reached the
	// origin: a Sync or Query ends it, a Flush changes nothing.
	stretch := true
	switch m := msg.(type) {
	case *pgproto3.Query:
		ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemQuery, Wrote: ss.ext.segmentWrote, Started: ss.local.arrived, Route: ss.local.timeRoute, Stat: ss.statItem(), Capture: ss.origin.queryCapture})
		ss.origin.queryCapture = nil
		ss.ext.segmentWrote = false
		stretch = false
		flush = true
	case *pgproto3.Sync:
		ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemSync, Wrote: ss.ext.segmentWrote})
		ss.ext.segmentWrote = false
		stretch = false
		flush = true
	case *pgproto3.FunctionCall:
		ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemFunctionCall})
		flush = true
	case *pgproto3.Parse:
		ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemParse})
		ss.origin.pendingBytes += len(m.Query)
		if st := ss.ext.stmts[m.Name]; st != nil && st.sql == m.Query {
			st.atOrigin = true
		}
	case *pgproto3.Bind:
		ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemBind})
		for _, p := range m.Parameters {
			ss.origin.pendingBytes += len(p)
		}
	case *pgproto3.Describe:
		kind := originlink.ItemDescribePortal
		if m.ObjectType == 'S' {
			kind = originlink.ItemDescribeStatement
		}
		ss.origin.pending.Push(originlink.Item{Kind: kind, Capture: capture})
	case *pgproto3.Execute:
		ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemExecute, Started: ss.local.arrived, Route: ss.local.timeRoute, Stat: ss.statItem()})
	case *pgproto3.Close:
		ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemClose})
	case *pgproto3.Flush:
		stretch = ss.ext.stretchOrigin
		flush = true
	case *pgproto3.CopyDone, *pgproto3.CopyFail:
		flush = true
	case *pgproto3.CopyData:
		ss.origin.pendingBytes += len(m.Data)
	}
	ss.ext.stretchOrigin = stretch
	ss.noteOriginTimer(msg)
	// Messages never rewritten here go as they came, without encoding them
	// again (the frame stays whole until the next read).
	if raw := ss.client.fr.LastFrame(); raw != nil && raw[0] == unrewrittenType(msg) {
		ss.origin.rawIn = raw
		ss.origin.fe.Send(&ss.origin.rawIn)
	} else {
		ss.origin.fe.Send(msg)
	}
	if flush || ss.origin.pendingBytes >= flushThreshold {
		ss.origin.pendingBytes = 0
		return ss.origin.fe.Flush()
	}
	return nil
}

// unrewrittenType is the type byte of msg when it is of a type the proxy
// never rewrites (forward relays those as they came), else 0.
func unrewrittenType(msg pgproto3.FrontendMessage) byte {
	switch msg.(type) {
	case *pgproto3.Bind:
		return 'B'
	case *pgproto3.Describe:
		return 'D'
	case *pgproto3.Execute:
		return 'E'
	case *pgproto3.Sync:
		return 'S'
	case *pgproto3.Close:
		return 'C'
	case *pgproto3.Flush:
		return 'H'
	}
	return 0
}

// forwardUndecoded sends the origin a well-framed client message whose body
// pgproto3 could not decode, as it came, expecting the answer Postgres
// gives such a message: an ErrorResponse (after which an extended-protocol
// message makes it skip to the next Sync) and, for a Query, Sync or
// FunctionCall, ReadyForQuery. Nothing of it is recorded: Postgres rejects
// it whole.
func (ss *session) forwardUndecoded(raw []byte) error {
	kind, hasKind := originlink.ItemParse, true // a failure of an extended-protocol message
	switch raw[0] {
	case 'Q':
		kind = originlink.ItemQuery
	case 'S':
		kind = originlink.ItemSync
	case 'F':
		kind = originlink.ItemFunctionCall
	case 'P', 'B', 'D', 'E', 'C', 'H':
	default:
		hasKind = false // COPY messages, Terminate: nothing to answer
	}
	if ss.ext.localSkip {
		if raw[0] != 'S' {
			return nil
		}
		ss.endLocalSkip()
	}
	if !ss.needOrigin() {
		return errSessionClosed
	}
	switch kind {
	case originlink.ItemQuery, originlink.ItemSync, originlink.ItemFunctionCall:
		ss.reconcile()
		ss.ext.segmentOpen = false
	default:
		if hasKind {
			if !ss.ext.segmentOpen {
				ss.beginStretch()
			} else {
				ss.reconcile()
			}
			ss.ext.segmentOpen = true
		}
	}
	if ss.unsealed() {
		ss.seal(ss.origin.pending.NextSeq())
	}
	if hasKind {
		ss.origin.pending.Push(originlink.Item{Kind: kind, Wrote: ss.ext.segmentWrote && kind == originlink.ItemSync})
	}
	ss.ext.stretchOrigin = kind != originlink.ItemSync && kind != originlink.ItemQuery
	ss.origin.rawIn = raw
	ss.origin.fe.Send(&ss.origin.rawIn)
	return ss.origin.fe.Flush()
}

// rawFrame is a message as it came, relayed without being decoded and
// encoded again (wire.FrameReader.LastFrame).
type rawFrame []byte

func (rawFrame) Frontend() {}
func (rawFrame) Backend()  {}

// Decode is never called: a rawFrame is only sent.
func (rawFrame) Decode([]byte) error { return errors.New("a raw frame is not decoded") }

// Encode appends the message's bytes as they came.
func (r rawFrame) Encode(dst []byte) ([]byte, error) { return append(dst, r...), nil }

// accelerate gives the acceleration a look at a client message. It reports
// whether the message was answered locally (or dropped after a local
// error), and for a Describe a function that keeps the origin's answer.
func (ss *session) accelerate(msg pgproto3.FrontendMessage) (bool, func(pgproto3.BackendMessage)) {
	if ss.ext.localSkip {
		if _, ok := msg.(*pgproto3.Sync); !ok {
			return true, nil
		}
		ss.endLocalSkip()
	}
	switch msg.(type) {
	case *pgproto3.Parse, *pgproto3.Bind, *pgproto3.Describe, *pgproto3.Execute, *pgproto3.Close:
		if !ss.ext.segmentOpen {
			ss.beginStretch()
		} else {
			ss.reconcile()
		}
		if ss.origin.pending.Skipping() {
			// The origin skips it (an error earlier in the stretch), and
			// so would Postgres: nothing of it is recorded.
			ss.ext.segmentOpen = true
			return false, nil
		}
	case *pgproto3.Sync, *pgproto3.Query:
		ss.reconcile()
		if ss.origin.pending.Idle() {
			// Everything journaled has been answered: final.
			ss.clearJournal(0)
		}
	}
	var parsed *stmtInfo
	if m, ok := msg.(*pgproto3.Parse); ok {
		if parsed = ss.commandStmt(m); parsed == nil {
			parsed = ss.newStmt(m)
		}
	}
	if ss.timerExpiredAt(msg) {
		// The statement timed out while the client paused, with its
		// messages kept here: the client gets the error now (Postgres
		// sent it during the pause) and everything up to the Sync is
		// skipped.
		ss.ext.segmentOpen = true
		ss.failExecute(statementTimeout())
		if _, ok := msg.(*pgproto3.Sync); !ok {
			return true, nil
		}
		ss.endLocalSkip()
	}
	switch msg.(type) {
	case *pgproto3.Sync, *pgproto3.Query:
		// The end of the stretch (a Query inside one commits it).
		ss.settleSets()
	}
	switch msg.(type) {
	case *pgproto3.Parse, *pgproto3.Bind, *pgproto3.Describe, *pgproto3.Execute, *pgproto3.Close:
		if !ss.ext.segmentOpen && (ss.acc.infoDirty || !ss.acc.info.Valid) && !ss.originOnly(msg, parsed) {
			// Read the session info now, before this stretch starts: it
			// cannot be read inside one without touching its transaction.
			// A stretch that opens with a statement bound for the origin
			// anyway skips the round trip; an accelerable statement later
			// in that stretch then goes to the origin too.
			ss.ensureInfo()
		}
	}
	switch m := msg.(type) {
	case *pgproto3.Query:
		// Postgres drops the unnamed portal and statement at a simple
		// Query; the origin does not see those answered here (see
		// closeStaleUnnamed).
		ss.forgetPortal("")
		if _, ok := ss.ext.stmts[""]; ok {
			ss.setStmt("", nil)
		}
		handled := ss.handleQuery(m)
		if handled {
			// The origin still holds the unnamed statement and portal
			// Postgres has just dropped.
			ss.setStale(true, true)
		}
		if !handled {
			// A simple Query ends any extended-protocol stretch at the
			// origin (it runs in, and commits, the implicit transaction).
			ss.ext.segmentOpen = false
		}
		return handled, nil
	case *pgproto3.Parse:
		ss.onParse(parsed)
		if parsed.cmd != nil {
			return ss.deferCommandParse(parsed), nil
		}
		return ss.deferParse(parsed), nil
	case *pgproto3.Bind:
		ss.recheckStmt(ss.ext.stmts[m.PreparedStatement])
		if st := ss.ext.stmts[m.PreparedStatement]; st.originOnly() && (ss.origin.state != linkLive || ss.origin.broken.Load()) {
			ss.adoptCommand(st)
		}
		ss.onBind(m)
		if ss.deferBind(m) {
			return true, nil
		}
		ss.materializeStmt(ss.ext.stmts[m.PreparedStatement])
	case *pgproto3.Describe:
		if p := ss.ext.portals[m.Name]; m.ObjectType == 'P' && p != nil && p.local {
			ss.ext.segmentOpen = true
			ss.answerLocal(rowsOrNoData(ss.portalRows(p)))
			return true, nil
		}
		if st := ss.ext.stmts[m.Name]; m.ObjectType == 'S' && st != nil && st.local {
			ss.ext.segmentOpen = true
			params, rows := ss.stmtDesc(st)
			ss.answerLocal(params, rowsOrNoData(rows))
			return true, nil
		}
		return false, ss.describeCapture(m)
	case *pgproto3.Execute:
		handled := ss.handleExecute(m)
		ss.stopStatementTimer() // at its completion, wherever it runs
		if handled {
			return true, nil
		}
		ss.materialize(m.Portal)
	case *pgproto3.Close:
		if ss.settleLink() != linkLive {
			// Nothing of the session is at any origin (no connection, or
			// the stand-in of one that is down: link.go): a statement or
			// portal exists only here, if at all.
			ss.ext.segmentOpen = true
			ss.onClose(m)
			ss.answerLocal(&pgproto3.CloseComplete{})
			return true, nil
		}
		if p := ss.ext.portals[m.Name]; m.ObjectType == 'P' && p != nil && p.local {
			ss.onClose(m)
			ss.answerLocal(&pgproto3.CloseComplete{})
			if m.Name == "" {
				ss.setStale(ss.ext.staleStmt, true) // the origin may hold an older one
			}
			return true, nil
		}
		if m.ObjectType == 'S' {
			ss.materializeUses(m.Name)
		}
		ss.onClose(m)
	case *pgproto3.Sync:
		ss.stopStatementTimer()
		if ss.localSync() {
			return true, nil
		}
		ss.onSync()
	}
	return false, nil
}

// timerExpiredAt starts the statement timer at a Parse, Bind, Describe or
// Execute, and reports whether, at this message, the timer running for
// messages only the proxy has seen has expired (timeout.go). A Query or
// Sync ends the timer: after an expiry, it too comes after the error.
func (ss *session) timerExpiredAt(msg pgproto3.FrontendMessage) bool {
	switch msg.(type) {
	case *pgproto3.Parse, *pgproto3.Bind, *pgproto3.Describe, *pgproto3.Execute:
		if ss.startStatementTimer() {
			ss.stopStatementTimer()
			return true
		}
	case *pgproto3.Sync, *pgproto3.Query:
		expired := ss.keptTimerExpired()
		ss.stopStatementTimer()
		return expired
	}
	return false
}

// clientReadFailed ends the session after a failed client read: a normal
// disconnect, an oversized message, or a malformed one.
func (ss *session) clientReadFailed(err error) {
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	switch {
	case ss.isClosed():
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		ss.log.Debug().Err(err).Msg("client disconnected")
	case errors.As(err, &tooBig):
		ss.log.Warn().Int("max_bytes", tooBig.MaxExpectedBodyLen).Int("bytes", tooBig.ActualBodyLen).Msg("client message too large; closing session")
		ss.fatal(pgdef.ProgramLimitExceeded,
			fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen),
			"Raise server.max_message_bytes in the pgaccel config, or send smaller statements or COPY chunks.")
	default:
		ss.log.Warn().Err(err).Msg("invalid client message; closing session")
		ss.fatal(pgdef.ProtocolViolation, fmt.Sprintf("invalid frontend message: %v", err), "")
	}
	if !ss.life.terminated.Swap(true) && ss.origin.fe != nil && ss.origin.state == linkLive {
		// Tell the origin we are leaving so its backend ends cleanly; its
		// closing the connection is then no news to report.
		ss.origin.fe.Send(&pgproto3.Terminate{})
		_ = ss.origin.fe.Flush()
	}
}
