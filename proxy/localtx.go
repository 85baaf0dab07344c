package proxy

import (
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/originlink"
)

// Transactions without the origin. Drivers and pools wrap reads in
// transactions: psycopg2 (and so SQLAlchemy, Superset) opens one before a
// session's first statement, pgx's and node-postgres's transactions start
// with BEGIN, and BI tools with autocommit off do the same. A session with
// no origin connection (link.go) answers a BEGIN itself (in either
// protocol: answerWithoutOrigin, and localcmd.go's answerCommand):
// the transaction exists for the client ('T'), and nothing of it is at the
// origin (virtualBegin). The accelerated reads in it need nothing more. A
// COMMIT or ROLLBACK of it is answered here too, so a dashboard's
// BEGIN; SELECT ...; COMMIT holds no origin backend, and keeps working
// while the origin is down.
//
// The first statement of the transaction that needs the origin opens a
// connection as usual, and the BEGIN is sent first, as it came (replay),
// so the statement runs inside the transaction, which from then on is the
// origin's. When the origin cannot be reached, that statement gets ERROR
// 08006 from the stand-in, and, as Postgres fails a transaction at an
// error, the transaction is failed ('E'): every later statement gets
// 25P02 until ROLLBACK or COMMIT (answered ROLLBACK), as Postgres does.
//
// Left to the origin: BEGIN after a comment, COMMIT or ROLLBACK AND
// CHAIN, and everything in a session that has an origin connection.

// answerWithoutOrigin answers sql (a simple Query) here when the session
// has no origin connection and sql is a statement it answers itself
// (localCommand, answerCommand: transactions, pings, SETs, DISCARD ALL),
// or when a transaction that is not at the origin has failed (25P02, as
// Postgres answers anything but its end); it reports whether it did.
func (ss *session) answerWithoutOrigin(sql string) bool {
	if ss.acc.virtualBegin == "" && ss.origin.state == linkLive && !ss.origin.broken.Load() {
		return false // the usual case: sql is not looked at
	}
	c, isCmd := localCommand(sql)
	if !isCmd && ss.acc.virtualBegin == "" {
		return false
	}
	if !ss.origin.pending.Idle() {
		// Answers of the stand-in the origin relay has yet to settle
		// (the client has them); nothing else is pending without a
		// live connection.
		if ss.origin.state == linkLive || !ss.origin.pending.WaitEmpty() {
			return false
		}
	}
	if ss.settleLink() == linkLive {
		return false
	}
	var msgs []pgproto3.BackendMessage
	ok := false
	if isCmd {
		msgs, ok = ss.answerCommand(&c, sql, nil)
	}
	switch {
	case ok && c.Kind == planner.LocalSelectOne:
		msgs = append([]pgproto3.BackendMessage{selectOneRows()}, msgs...)
	case !ok && ss.acc.virtualBegin != "" && ss.state.TxStatus() == 'E':
		msgs, ok = []pgproto3.BackendMessage{pgdef.AbortedTx()}, true
	}
	if !ok {
		return false
	}
	if err := ss.finish(append(msgs, &pgproto3.ReadyForQuery{TxStatus: ss.state.TxStatus()})...); err != nil {
		ss.close()
	}
	return true
}

// localTxTag starts (k: KindBegin, outside any transaction) or ends
// (KindCommit, KindRollback) a transaction that is not at the origin, for
// the statement sql, and returns the command tag Postgres answers it
// with; "" when it is the origin's to answer. A COMMIT of a failed
// transaction answers ROLLBACK.
func (ss *session) localTxTag(k planner.Kind, sql string) string {
	status := ss.state.TxStatus()
	switch {
	case k == planner.KindBegin && ss.acc.virtualBegin == "" && status == 'I':
		ss.acc.virtualBegin = sql
		ss.setLocalTx('T')
		return "BEGIN"
	case (k == planner.KindCommit || k == planner.KindRollback) && ss.acc.virtualBegin != "":
		tag := "ROLLBACK"
		if k == planner.KindCommit && status != 'E' {
			tag = "COMMIT"
		}
		ss.acc.virtualBegin = ""
		ss.setLocalTx('I')
		return tag
	}
	return ""
}

// setLocalTx sets the status of a transaction that is not at the origin,
// for the client's ReadyForQuery and the stand-in's.
func (ss *session) setLocalTx(status byte) {
	ss.state.setTxStatus(status)
	if status == 'I' {
		// As at the origin's ReadyForQuery (noteReady): nothing of the
		// transaction wrote at the origin, whatever failed there.
		ss.txWrote.Store(false)
	}
	if u, ok := ss.origin.conn.(*originlink.StandIn); ok && ss.origin.state == linkStandIn {
		u.SetTx(status)
	}
}
