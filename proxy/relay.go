package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"slices"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgaccel/pgaccel/pgdef"
)

// relayClient relays what the client sends (relayOne): through the routing
// hook (accelerate) when an acceleration is configured, else pass-through.
// It returns when the client leaves or the session closes.
func (ss *session) relayClient() {
	if ss.originIO != nil {
		// Bytes an event loop held back go first (loop.go).
		if err := ss.originIO.flushHeld(); err != nil {
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
// nothing to read (only in an event loop: errWouldBlock).
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
		if c, ok := ss.carryO.take(); ok {
			msg, raw, err = c.msg, c.raw, c.err
		} else {
			// The usual answers are relayed from the frame as it came,
			// without pgproto3 (originRun, lane.go); the rest, and answers a
			// pending item looks into, are decoded.
			raw, err = ss.ofr.peekOf(&fastOriginTypes, frameKeepSize)
			if err == nil && raw != nil {
				if taken, ended := ss.originRun(); taken {
					return ended, false
				}
			}
			if err == nil {
				msg, err = ss.fe.Receive()
				raw = ss.ofr.lastFrame()
			}
		}
		if errors.Is(err, errWouldBlock) {
			return false, true
		}
		if ss.onLoop && !ss.originLoopSafe(msg, err) {
			ss.carryO.put(msg, raw, err)
			ss.handOff = true
			return false, false
		}
		return ss.originMessage(msg, raw, err), false
	}
	if ss.onLoop {
		if taken, idle := ss.laneClient(); taken || idle {
			return ss.isClosed(), idle
		}
	}
	msg, err := ss.receiveClient()
	if errors.Is(err, errWouldBlock) {
		return false, true
	}
	if ss.onLoop && !ss.loopSafe(msg, err) {
		ss.carryC.put(msg, nil, err)
		ss.handOff = true
		return false, false
	}
	ss.enterLink()
	if !ss.onLoop {
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
		if raw := ss.cfr.lastFrame(); raw != nil {
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
		ss.terminated.Store(true)
		if ss.endsToPool() {
			ss.endToPool.Store(true)
			return true
		}
		if ss.link == linkLive {
			ss.fe.Send(msg)
			_ = ss.fe.Flush()
		}
		return true
	}
	// Only sessions with an acceleration come here (the others are
	// relayed pass-through): every message passes the routing hook.
	switch msg.(type) {
	case *pgproto3.Query, *pgproto3.Execute:
		// Timed to their completion when they go to the origin (forward).
		ss.noteArrival(time.Now())
	}
	dirty, changedInTx := ss.infoDirty, ss.changedInTx
	handled, capture := ss.accelerate(msg)
	if handled {
		ss.seal(ss.answerSeq)
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
			ss.seal(ss.pending.nextSeq())
		}
		if err := ss.forward(msg, capture); err != nil {
			ss.originFailed(err)
			return true
		}
		if ss.link == linkStandIn {
			// The stand-in fails it (link.go): nothing it might have set
			// at the origin changed, so the session info a SET marked for
			// reading again (which the origin cannot answer now) holds.
			ss.infoDirty, ss.changedInTx = dirty, changedInTx
		}
	}
	if ss.cfr.buffered() == 0 {
		// The client has paused (nothing more of it is read): what it
		// sent so far reaches the origin now, as it would reach Postgres.
		// statement_timeout runs from a Parse's arrival, so a Parse held
		// until the client's Sync would be timed from the Sync instead.
		if err := ss.fe.Flush(); err != nil {
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
	if ss.revalidation != nil {
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
		ss.pending.push(pendingItem{kind: pkQuery, wrote: ss.segmentWrote, started: ss.arrived, route: ss.timeRoute, capture: ss.queryCapture})
		ss.queryCapture = nil
		ss.segmentWrote = false
		stretch = false
		flush = true
	case *pgproto3.Sync:
		ss.pending.push(pendingItem{kind: pkSync, wrote: ss.segmentWrote})
		ss.segmentWrote = false
		stretch = false
		flush = true
	case *pgproto3.FunctionCall:
		ss.pending.push(pendingItem{kind: pkFunctionCall})
		flush = true
	case *pgproto3.Parse:
		ss.pending.push(pendingItem{kind: pkParse})
		ss.pendingBytes += len(m.Query)
		if st := ss.stmts[m.Name]; st != nil && st.sql == m.Query {
			st.atOrigin = true
		}
	case *pgproto3.Bind:
		ss.pending.push(pendingItem{kind: pkBind})
		for _, p := range m.Parameters {
			ss.pendingBytes += len(p)
		}
	case *pgproto3.Describe:
		kind := pkDescribePortal
		if m.ObjectType == 'S' {
			kind = pkDescribeStatement
		}
		ss.pending.push(pendingItem{kind: kind, capture: capture})
	case *pgproto3.Execute:
		ss.pending.push(pendingItem{kind: pkExecute, started: ss.arrived, route: ss.timeRoute})
	case *pgproto3.Close:
		ss.pending.push(pendingItem{kind: pkClose})
	case *pgproto3.Flush:
		stretch = ss.stretchOrigin
		flush = true
	case *pgproto3.CopyDone, *pgproto3.CopyFail:
		flush = true
	case *pgproto3.CopyData:
		ss.pendingBytes += len(m.Data)
	}
	ss.stretchOrigin = stretch
	ss.noteOriginTimer(msg)
	// Messages never rewritten here go as they came, without encoding them
	// again (the frame stays whole until the next read).
	if raw := ss.cfr.lastFrame(); raw != nil && raw[0] == unrewrittenType(msg) {
		ss.rawIn = raw
		ss.fe.Send(&ss.rawIn)
	} else {
		ss.fe.Send(msg)
	}
	if flush || ss.pendingBytes >= flushThreshold {
		ss.pendingBytes = 0
		return ss.fe.Flush()
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
	kind, hasKind := pkParse, true // a failure of an extended-protocol message
	switch raw[0] {
	case 'Q':
		kind = pkQuery
	case 'S':
		kind = pkSync
	case 'F':
		kind = pkFunctionCall
	case 'P', 'B', 'D', 'E', 'C', 'H':
	default:
		hasKind = false // COPY messages, Terminate: nothing to answer
	}
	if ss.localSkip {
		if raw[0] != 'S' {
			return nil
		}
		ss.endLocalSkip()
	}
	if !ss.needOrigin() {
		return errSessionClosed
	}
	switch kind {
	case pkQuery, pkSync, pkFunctionCall:
		ss.reconcile()
		ss.segmentOpen = false
	default:
		if hasKind {
			if !ss.segmentOpen {
				ss.beginStretch()
			} else {
				ss.reconcile()
			}
			ss.segmentOpen = true
		}
	}
	if ss.unsealed() {
		ss.seal(ss.pending.nextSeq())
	}
	if hasKind {
		ss.pending.push(pendingItem{kind: kind, wrote: ss.segmentWrote && kind == pkSync})
	}
	ss.stretchOrigin = kind != pkSync && kind != pkQuery
	ss.rawIn = raw
	ss.fe.Send(&ss.rawIn)
	return ss.fe.Flush()
}

// rawFrame is a message as it came, relayed without being decoded and
// encoded again (frameReader.lastFrame).
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
	if ss.localSkip {
		if _, ok := msg.(*pgproto3.Sync); !ok {
			return true, nil
		}
		ss.endLocalSkip()
	}
	switch msg.(type) {
	case *pgproto3.Parse, *pgproto3.Bind, *pgproto3.Describe, *pgproto3.Execute, *pgproto3.Close:
		if !ss.segmentOpen {
			ss.beginStretch()
		} else {
			ss.reconcile()
		}
		if ss.pending.skipping() {
			// The origin skips it (an error earlier in the stretch), and
			// so would Postgres: nothing of it is recorded.
			ss.segmentOpen = true
			return false, nil
		}
	case *pgproto3.Sync, *pgproto3.Query:
		ss.reconcile()
		if ss.pending.idle() {
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
		ss.segmentOpen = true
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
		if !ss.segmentOpen && (ss.infoDirty || !ss.info.valid) && !ss.originOnly(msg, parsed) {
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
		if _, ok := ss.stmts[""]; ok {
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
			ss.segmentOpen = false
		}
		return handled, nil
	case *pgproto3.Parse:
		ss.onParse(parsed)
		if parsed.cmd != nil {
			return ss.deferCommandParse(parsed), nil
		}
		return ss.deferParse(parsed), nil
	case *pgproto3.Bind:
		if st := ss.stmts[m.PreparedStatement]; st.originOnly() && (ss.link != linkLive || ss.broken.Load()) {
			ss.adoptCommand(st)
		}
		ss.onBind(m)
		if ss.deferBind(m) {
			return true, nil
		}
		ss.materializeStmt(ss.stmts[m.PreparedStatement])
	case *pgproto3.Describe:
		if p := ss.portals[m.Name]; m.ObjectType == 'P' && p != nil && p.local {
			ss.segmentOpen = true
			ss.answerLocal(rowsOrNoData(ss.portalRows(p)))
			return true, nil
		}
		if st := ss.stmts[m.Name]; m.ObjectType == 'S' && st != nil && st.local {
			ss.segmentOpen = true
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
			ss.segmentOpen = true
			ss.onClose(m)
			ss.answerLocal(&pgproto3.CloseComplete{})
			return true, nil
		}
		if p := ss.portals[m.Name]; m.ObjectType == 'P' && p != nil && p.local {
			ss.onClose(m)
			ss.answerLocal(&pgproto3.CloseComplete{})
			if m.Name == "" {
				ss.setStale(ss.staleStmt, true) // the origin may hold an older one
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
	if !ss.terminated.Swap(true) && ss.fe != nil && ss.link == linkLive {
		// Tell the origin we are leaving so its backend ends cleanly; its
		// closing the connection is then no news to report.
		ss.fe.Send(&pgproto3.Terminate{})
		_ = ss.fe.Flush()
	}
}

// relayOrigin relays every origin message to the client (or to the
// proxy's own pending request), tracking ParameterStatus, transaction
// status and the queue of pending responses on the way.
func (ss *session) relayOrigin() {
	if ss.clientIO != nil {
		// Bytes an event loop held back go first (loop.go).
		if err := ss.clientIO.flushHeld(); err != nil {
			ss.log.Debug().Err(err).Msg("client write failed")
			ss.close()
			return
		}
	}
	for {
		if ended, _ := ss.relayOne(true); ended {
			return
		}
	}
}

// originMessage relays one origin message (raw: as it came, nil when it
// was not kept whole), or handles the error that came instead of it, and
// reports whether the origin side of the session ended.
func (ss *session) originMessage(msg pgproto3.BackendMessage, raw []byte, err error) bool {
	if err != nil {
		ss.originReadFailed(err)
		return true
	}
	if e, ok := msg.(*pgproto3.ErrorResponse); ok && (e.Severity == "FATAL" || e.Severity == "PANIC") && ss.canDetach() &&
		ss.detach(fmt.Errorf("%s: %s", e.Code, e.Message), e) {
		// The origin ends the connection (it shuts down) while the
		// session owes the client nothing from it: the session goes on
		// without it.
		return true
	}
	head, hasHead := ss.pending.head()
	done, failed, async := completes(msg, head.kind, hasHead)

	closeAfter := false
	switch m := msg.(type) {
	case *pgproto3.DataRow:
		for _, v := range m.Values {
			ss.pendingOut += len(v)
		}
	case *pgproto3.CopyData:
		ss.pendingOut += len(m.Data)
	case *pgproto3.ParameterStatus:
		ss.state.setParam(m.Name, m.Value)
	case *pgproto3.ReadyForQuery:
		ss.noteReady(m.TxStatus, head, hasHead)
	case *pgproto3.ErrorResponse:
		closeAfter = m.Severity == "FATAL" || m.Severity == "PANIC"
	}
	if hasHead && !async {
		_, isErr := msg.(*pgproto3.ErrorResponse)
		if head.capture != nil {
			head.capture(msg)
		}
		if head.private != nil {
			head.private.msgs = append(head.private.msgs, copyBackendMessage(msg))
		}
		// Kept from the client: answers to the proxy's own requests,
		// and those the client has the proxy's answer to already.
		if head.private != nil || head.swallow && !isErr {
			if _, local := ss.pending.settle(done, failed); local {
				if err := ss.writeQueuedLocal(); err != nil {
					ss.log.Debug().Err(err).Msg("client write failed")
					ss.close()
					return true
				}
			}
			return false
		}
	}

	_, ready := msg.(*pgproto3.ReadyForQuery)
	return ss.relayOut(raw, msg, done, failed, ready, closeAfter)
}

// noteReady records the transaction status of a ReadyForQuery, head being
// the oldest pending item (if hasHead): whether the transaction wrote.
func (ss *session) noteReady(status byte, head pendingItem, hasHead bool) {
	ss.state.setTxStatus(status)
	switch {
	case status == 'I':
		if hasHead && head.wrote || ss.txWrote.Load() {
			ss.commitCaching()
		}
		ss.txWrote.Store(false)
	case hasHead && head.wrote:
		ss.txWrote.Store(true)
	}
}

// relayOut sends the client an origin message (raw as it came, else msg
// encoded), flushed once nothing more of the origin is buffered, then
// settles the oldest pending item with it (done, failed) and writes the
// local answers queued behind it. It reports whether the origin side of
// the session ended: a failed write, closeAfter (a FATAL), or the last
// answer (ready: a ReadyForQuery) during a shutdown.
func (ss *session) relayOut(raw []byte, msg pgproto3.BackendMessage, done, failed, ready, closeAfter bool) bool {
	ss.writeMu.Lock()
	if raw != nil {
		// As the origin sent it: an encoding of pgproto3's decoding may
		// differ, or be refused (a ParameterDescription of more than
		// 65535 parameters, which Postgres sends with a wrapped count).
		ss.rawOut = raw // a field, not a conversion: no allocation per message
		ss.be.Send(&ss.rawOut)
	} else {
		ss.be.Send(msg)
	}
	var werr error
	// Nothing more read: pgproto3 holds no more than the message it has
	// just decoded (frames.go), the origin's frame reader the rest.
	if ss.pendingOut >= flushThreshold || ss.ofr.buffered() == 0 || closeAfter {
		ss.pendingOut = 0
		werr = ss.be.Flush()
	}
	ss.writeMu.Unlock()
	idle := false
	if done || failed {
		empty, local := ss.pending.settle(done, failed)
		idle = empty && done
		if local && werr == nil {
			werr = ss.writeQueuedLocal()
		}
	}
	if werr != nil {
		ss.log.Debug().Err(werr).Msg("client write failed")
		ss.close()
		return true
	}
	if closeAfter {
		ss.close()
		return true
	}
	if idle && ready && ss.shuttingDown.Load() {
		ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
		ss.close()
		return true
	}
	return false
}

// originReadFailed ends the session after a failed origin read; it is news
// to the client unless the session was closing anyway.
func (ss *session) originReadFailed(err error) {
	if ss.link != linkLive || ss.releasing.Load() || ss.promotionStop(err) {
		return // a stand-in or a dropped link was closed: nothing to report
	}
	if ss.canDetach() && ss.detach(err, nil) {
		return
	}
	if !ss.isClosed() && !ss.terminated.Load() {
		ss.originFailed(err)
	}
	ss.close()
}

// fastOriginTypes are the origin's message types originRun relays: the
// answers of ordinary statements, none of which the proxy needs decoded
// unless a pending item captures it.
var fastOriginTypes = [256]bool{
	'1': true, '2': true, '3': true, 'C': true, 'D': true, 'I': true,
	'n': true, 's': true, 't': true, 'T': true, 'Z': true,
}

// completesType reports whether an origin message of type typ (one of the
// fastOriginTypes; anything else completes nothing) completes the pending
// head (completes).
func completesType(typ byte, head pendingKind) bool {
	switch typ {
	case '1':
		return head == pkParse
	case '2':
		return head == pkBind
	case '3':
		return head == pkClose
	case 'T', 'n':
		return head == pkDescribeStatement || head == pkDescribePortal
	case 'C', 'I', 's':
		return head == pkExecute
	case 'Z':
		return head == pkSync || head == pkQuery || head == pkFunctionCall
	}
	return false
}

// completes classifies an origin message against the oldest pending item:
// whether it completes it, whether it is an extended-protocol error (the
// origin now skips to the next Sync), and whether it is asynchronous (not
// an answer to anything).
func completes(msg pgproto3.BackendMessage, head pendingKind, hasHead bool) (done, failed, async bool) {
	switch msg.(type) {
	case *pgproto3.ParameterStatus, *pgproto3.NoticeResponse, *pgproto3.NotificationResponse:
		return false, false, true
	}
	if !hasHead {
		return false, false, false
	}
	if e, ok := msg.(*pgproto3.ErrorResponse); ok && e != nil {
		if head == pkQuery || head == pkFunctionCall || head == pkSync {
			return false, false, false
		}
		return false, true, false
	}
	return completesType(fastType(msg), head), false, false
}

// fastType is the type byte of msg when it is of a fastOriginTypes type,
// else 0.
func fastType(msg pgproto3.BackendMessage) byte {
	switch msg.(type) {
	case *pgproto3.ParseComplete:
		return '1'
	case *pgproto3.BindComplete:
		return '2'
	case *pgproto3.CloseComplete:
		return '3'
	case *pgproto3.RowDescription:
		return 'T'
	case *pgproto3.NoData:
		return 'n'
	case *pgproto3.CommandComplete:
		return 'C'
	case *pgproto3.EmptyQueryResponse:
		return 'I'
	case *pgproto3.PortalSuspended:
		return 's'
	case *pgproto3.ReadyForQuery:
		return 'Z'
	}
	return 0
}

// copyBackendMessage returns a copy of msg that outlives the next Receive.
// The descriptions kept for every prepared statement are copied field by
// field; anything else is encoded and decoded into a new value of its type
// (Decode may keep slices of the fresh encoding, which nothing else holds).
func copyBackendMessage(msg pgproto3.BackendMessage) pgproto3.BackendMessage {
	switch m := msg.(type) {
	case *pgproto3.RowDescription:
		out := &pgproto3.RowDescription{Fields: slices.Clone(m.Fields)}
		n := 0
		for _, f := range m.Fields {
			n += len(f.Name)
		}
		names := make([]byte, 0, n)
		for i, f := range out.Fields {
			names = append(names, f.Name...)
			out.Fields[i].Name = names[len(names)-len(f.Name) : len(names) : len(names)]
		}
		return out
	case *pgproto3.ParameterDescription:
		return &pgproto3.ParameterDescription{ParameterOIDs: slices.Clone(m.ParameterOIDs)}
	}
	buf, err := msg.Encode(nil)
	if err != nil || len(buf) < 5 {
		return msg
	}
	out, ok := reflect.New(reflect.TypeOf(msg).Elem()).Interface().(pgproto3.BackendMessage)
	if !ok || out.Decode(buf[5:]) != nil {
		return msg
	}
	return out
}
