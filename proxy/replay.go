package proxy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/originlink"
)

// replay sets up on a new origin connection what the session set up on
// the earlier ones: the settings it changed with SET, and the statements
// it prepared there. Their answers are kept from the client; a
// ParameterStatus whose value differs from what the client has is passed
// on.
func (ss *session) replay(ol *originlink.Login) error {
	var msgs []pgproto3.FrontendMessage
	for _, sql := range ss.origin.replaySets {
		msgs = append(msgs, &pgproto3.Query{String: sql})
	}
	names := slices.Sorted(maps.Keys(ss.ext.stmts))
	parses := 0
	for _, name := range names {
		st := ss.ext.stmts[name]
		if st == nil || st.local || !st.atOrigin || name == "" {
			continue
		}
		msgs = append(msgs, &pgproto3.Parse{Name: name, Query: st.sql, ParameterOIDs: st.paramOIDs})
		parses++
	}
	if parses > 0 {
		msgs = append(msgs, &pgproto3.Sync{})
	}
	if ss.acc.virtualBegin != "" {
		// The transaction the session is in (localtx.go) starts at the
		// origin before the statement that needs it.
		msgs = append(msgs, &pgproto3.Query{String: ss.acc.virtualBegin})
	}
	params := maps.Clone(ol.Params)
	if len(msgs) > 0 {
		_ = ss.origin.conn.SetDeadline(time.Now().Add(startupTimeout))
		defer func() { _ = ss.origin.conn.SetDeadline(time.Time{}) }()
		for _, m := range msgs {
			ss.origin.fe.Send(m)
		}
		if err := ss.origin.fe.Flush(); err != nil {
			return err
		}
		begins := 0
		if ss.acc.virtualBegin != "" {
			begins = 1
		}
		for want := len(ss.origin.replaySets) + min(parses, 1) + begins; want > 0; {
			msg, err := ss.origin.fe.Receive()
			if err != nil {
				return err
			}
			switch m := msg.(type) {
			case *pgproto3.ReadyForQuery:
				want--
				wantTx := byte('I')
				if want == 0 && begins > 0 {
					wantTx = 'T' // after the BEGIN
				}
				if m.TxStatus != wantTx {
					return fmt.Errorf("transaction status %q after setup", m.TxStatus)
				}
			case *pgproto3.ParameterStatus:
				params[m.Name] = m.Value
			case *pgproto3.ErrorResponse:
				// As on the first connection, where the client saw it.
				ss.log.Debug().Str("code", m.Code).Msg("a replayed statement failed at the origin")
			}
		}
	}
	ss.acc.virtualBegin = "" // the transaction is the origin's now
	old := ss.clientParams()
	ss.client.writeMu.Lock()
	defer ss.client.writeMu.Unlock()
	sent := false
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if v := params[name]; old[name] != v {
			ss.state.setParam(name, v)
			ss.client.be.Send(&pgproto3.ParameterStatus{Name: name, Value: v})
			sent = true
		}
	}
	if sent {
		return ss.client.be.Flush()
	}
	return nil
}

// noteReplay records what a statement bound for the origin sets up there,
// for replay on a later connection: a SET (or RESET, DISCARD) outside a
// transaction block is replayed once it has reached a live origin
// (pendingSet, commitSet). State that cannot be rebuilt (a setting
// changed inside a transaction block, temporary tables, LISTEN, cursors
// WITH HOLD, SQL PREPARE, DO and CALL, which may change anything) marks the
// session unreplayable, so that losing its link ends it as before.
func (ss *session) noteReplay(sql string, d planner.Decision, stateCall *string) {
	if ss.origin.clientKey == nil {
		// auth.mode origin: nothing is replayed (a broken link ends the
		// session once the origin is back), and no login is cached.
		return
	}
	ss.origin.pendingSet, ss.origin.pendingDiscard = "", false
	switch d.Kind {
	case planner.KindSet, planner.KindReset, planner.KindDiscard:
		ss.origin.pristine = false
		if planner.TransactionScoped(sql) {
			return // SET LOCAL and SET TRANSACTION end with the transaction
		}
		if ss.state.TxStatus() != 'I' {
			ss.markUnreplayable("a setting changed inside a transaction block")
			return
		}
		ss.origin.pendingSet, ss.origin.pendingDiscard = sql, d.Kind == planner.KindDiscard
	case planner.KindDDL:
		if d.SetsSearchPath {
			ss.markUnreplayable("temporary tables or schemas created in the session")
		}
	case planner.KindDeclare:
		// A cursor without HOLD ends with its transaction (DECLARE
		// outside a transaction block is an error): only one WITH HOLD
		// stays at the origin (psycopg's and Django's server-side
		// cursors are without).
		if d.HoldCursor {
			ss.origin.pristine = false
			ss.markUnreplayable("a cursor declared WITH HOLD")
		}
	case planner.KindMulti:
		if steps, ok := planner.SessionReset(sql); ok {
			// A pool's reset (asyncpg's) takes state away: what it
			// leaves is set up again by replaying its RESET ALL (after
			// the SETs before it: SET ROLE outlives RESET ALL).
			ss.origin.pristine = false
			switch {
			case !strings.ContainsRune(steps, rune(planner.ResetAll)):
			case ss.state.TxStatus() != 'I':
				ss.markUnreplayable("a setting changed inside a transaction block")
			default:
				ss.origin.pendingSet = resetAll
			}
			return
		}
		ss.origin.pristine = false
		ss.markUnreplayable("statements that may leave session state at the origin (" + d.Kind.String() + ")")
	case planner.KindListen, planner.KindPrepare, planner.KindCall, planner.KindDo,
		planner.KindOther:
		ss.origin.pristine = false
		ss.markUnreplayable("statements that may leave session state at the origin (" + d.Kind.String() + ")")
	default:
		fn := ""
		if stateCall != nil {
			fn = *stateCall
		} else {
			fn = planner.SessionStateCall(sql)
		}
		if fn != "" {
			ss.origin.pristine = false
			ss.markUnreplayable("a call of " + fn + ", whose effect lasts for the session")
		}
	}
}

// resetAll is the replayed RESET ALL of a pool's reset that ran at the
// origin.
const resetAll = "RESET ALL"

// markUnreplayable records why the session's origin state cannot be set up
// again (read by the origin relay: detach).
func (ss *session) markUnreplayable(why string) {
	if ss.origin.unreplayable.Load() == nil {
		ss.origin.unreplayable.Store(&why)
	}
}

// commitSet records the SET being sent once it goes to a live origin;
// one sent in an extended-protocol stretch (inStretch: its Execute) holds
// only if the stretch succeeds (stretchsets.go).
func (ss *session) commitSet(inStretch bool) {
	if ss.origin.pendingSet == "" {
		return
	}
	if ss.origin.state == linkLive {
		switch {
		case ss.origin.pendingDiscard:
			ss.origin.replaySets = append(ss.origin.replaySets[:0], ss.origin.pendingSet)
		case inStretch:
			t := ss.tentative()
			t.sqls = append(t.sqls, ss.origin.pendingSet)
		default:
			ss.keepSet(ss.origin.pendingSet)
		}
	}
	ss.origin.pendingSet = ""
}

// endLocalSkip ends the skip after a local error at the stretch's Sync:
// the stretch failed.
func (ss *session) endLocalSkip() {
	ss.ext.localSkip = false
	if ss.origin.tent != nil {
		ss.origin.tent.failed = true
	}
}

// keepSet adds a SET the session ran (at the origin, or answered itself:
// localcmd.go) to those a new origin connection gets.
func (ss *session) keepSet(sql string) {
	// The same statement again replaces its earlier run (drivers and
	// pools that set up each checkout alike).
	ss.origin.replaySets = slices.DeleteFunc(ss.origin.replaySets, func(q string) bool { return q == sql })
	if len(ss.origin.replaySets) >= 256 {
		ss.markUnreplayable("too many settings to replay")
		return
	}
	ss.origin.replaySets = append(ss.origin.replaySets, sql)
}
