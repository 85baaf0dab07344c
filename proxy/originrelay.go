package proxy

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/originlink"

	"github.com/pgaccel/pgaccel/pgdef"
)

// relayOrigin relays every origin message to the client (or to the
// proxy's own pending request), tracking ParameterStatus, transaction
// status and the queue of pending responses on the way.
func (ss *session) relayOrigin() {
	if ss.client.raw != nil {
		// Bytes an event loop held back go first (wire.RawIO.FlushHeld).
		if err := ss.client.raw.FlushHeld(); err != nil {
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
	head, hasHead := ss.origin.pending.Head()
	done, failed, async := completes(msg, head.Kind, hasHead)

	closeAfter := false
	switch m := msg.(type) {
	case *pgproto3.DataRow:
		for _, v := range m.Values {
			ss.client.pendingOut += len(v)
		}
	case *pgproto3.CopyData:
		ss.client.pendingOut += len(m.Data)
	case *pgproto3.ParameterStatus:
		ss.state.setParam(m.Name, m.Value)
	case *pgproto3.ReadyForQuery:
		ss.noteReady(m.TxStatus, head, hasHead)
	case *pgproto3.CommandComplete:
		ss.noteCompletion(m.CommandTag)
	case *pgproto3.ErrorResponse:
		closeAfter = m.Severity == "FATAL" || m.Severity == "PANIC"
		ss.origin.undone = true
	}
	if hasHead && !async {
		_, isErr := msg.(*pgproto3.ErrorResponse)
		if head.Capture != nil {
			head.Capture(msg)
		}
		if head.Private != nil {
			head.Private.Msgs = append(head.Private.Msgs, copyBackendMessage(msg))
		}
		// Kept from the client: answers to the proxy's own requests,
		// and those the client has the proxy's answer to already.
		if head.Private != nil || head.Swallow && !isErr {
			if _, local := ss.origin.pending.Settle(done, failed); local {
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

// noteCompletion follows a CommandComplete's tag for read-your-writes:
// whether the transaction ending at the next ReadyForQuery committed.
func (ss *session) noteCompletion(tag []byte) {
	ss.origin.tagRows += tagRows(tag)
	switch {
	case bytes.Equal(tag, []byte("COMMIT")):
		ss.origin.committed, ss.origin.undone = true, false
	case bytes.HasPrefix(tag, []byte("ROLLBACK")):
		ss.origin.undone = true
	default:
		ss.origin.undone = false
	}
}

// noteReady records the transaction status of a ReadyForQuery, head being
// the oldest pending item (if hasHead): whether the transaction wrote.
func (ss *session) noteReady(status byte, head originlink.Item, hasHead bool) {
	defer func() { ss.origin.committed, ss.origin.undone = false, false }()
	ss.state.setTxStatus(status)
	switch {
	case status == 'I':
		if hasHead && head.Wrote || ss.txWrote.Load() {
			ss.commitCaching()
			if ss.origin.committed || !ss.origin.undone {
				ss.commitWrites()
			} else {
				ss.acc.written.take() // rolled back: nothing was written
			}
		}
		ss.txWrote.Store(false)
	case hasHead && head.Wrote:
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
	ss.client.writeMu.Lock()
	if raw != nil {
		// As the origin sent it: an encoding of pgproto3's decoding may
		// differ, or be refused (a ParameterDescription of more than
		// 65535 parameters, which Postgres sends with a wrapped count).
		ss.client.rawOut = raw // a field, not a conversion: no allocation per message
		ss.client.be.Send(&ss.client.rawOut)
	} else {
		ss.client.be.Send(msg)
	}
	var werr error
	// Nothing more read: pgproto3 holds no more than the message it has
	// just decoded (wire.FrameReader), the origin's frame reader the rest.
	if ss.client.pendingOut >= flushThreshold || ss.origin.fr.Buffered() == 0 || closeAfter {
		ss.client.pendingOut = 0
		werr = ss.client.be.Flush()
	}
	ss.client.writeMu.Unlock()
	idle := false
	if done || failed {
		empty, local := ss.origin.pending.Settle(done, failed)
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
	if idle && ready && ss.life.shuttingDown.Load() {
		ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
		ss.close()
		return true
	}
	return false
}

// originReadFailed ends the session after a failed origin read; it is news
// to the client unless the session was closing anyway.
func (ss *session) originReadFailed(err error) {
	if ss.origin.state != linkLive || ss.origin.releasing.Load() || ss.promotionStop(err) {
		return // a stand-in or a dropped link was closed: nothing to report
	}
	if ss.canDetach() && ss.detach(err, nil) {
		return
	}
	if !ss.isClosed() && !ss.life.terminated.Load() {
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
func completesType(typ byte, head originlink.ItemKind) bool {
	switch typ {
	case '1':
		return head == originlink.ItemParse
	case '2':
		return head == originlink.ItemBind
	case '3':
		return head == originlink.ItemClose
	case 'T', 'n':
		return head == originlink.ItemDescribeStatement || head == originlink.ItemDescribePortal
	case 'C', 'I', 's':
		return head == originlink.ItemExecute
	case 'Z':
		return head == originlink.ItemSync || head == originlink.ItemQuery || head == originlink.ItemFunctionCall
	}
	return false
}

// completes classifies an origin message against the oldest pending item:
// whether it completes it, whether it is an extended-protocol error (the
// origin now skips to the next Sync), and whether it is asynchronous (not
// an answer to anything).
func completes(msg pgproto3.BackendMessage, head originlink.ItemKind, hasHead bool) (done, failed, async bool) {
	switch msg.(type) {
	case *pgproto3.ParameterStatus, *pgproto3.NoticeResponse, *pgproto3.NotificationResponse:
		return false, false, true
	}
	if !hasHead {
		return false, false, false
	}
	if e, ok := msg.(*pgproto3.ErrorResponse); ok && e != nil {
		if head == originlink.ItemQuery || head == originlink.ItemFunctionCall || head == originlink.ItemSync {
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
