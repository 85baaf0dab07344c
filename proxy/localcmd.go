package proxy

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/planner"
)

// Session statements without the origin. A session with no live origin
// connection answers, besides the simple-protocol BEGIN, COMMIT, ROLLBACK
// and pings of localtx.go, the same statements in the extended protocol,
// and a SET of the settings it keeps itself, in either protocol. pgjdbc
// sends everything through the extended protocol: at every login
// SET extra_float_digits = 3 and SET application_name (unless told the
// server's version), BEGIN before the first statement of a transaction
// with autocommit off, COMMIT, and an empty statement for isValid. Each
// opened an origin backend before, and failed while the origin was down,
// so a JDBC login failed during an outage and a JDBC dashboard held a
// backend per session.
//
// A SET answered here is kept for replay (link.go), so the origin
// connection a later statement opens gets it first, as a SET the origin
// ran does. It is answered only outside a transaction block, for
// settings whose value pgaccel can check as Postgres would and whose
// effect it tracks: extra_float_digits (the encoder prints floats by it)
// and application_name (reported to the client in a ParameterStatus).
// Anything else goes to the origin as before. One difference remains:
// Postgres rolls back a SET of an extended-protocol stretch whose later
// statement fails before the Sync (the stretch's implicit transaction);
// a SET answered here stays.

// localCmdKind is a statement a session answers without the origin.
type localCmdKind uint8

const (
	cmdBegin localCmdKind = iota + 1
	cmdCommit
	cmdRollback
	cmdEmpty
	cmdSelectOne
	cmdSet
)

// localCmd is a statement a session with no live origin connection may
// answer itself; for cmdSet, the setting and the value it takes.
type localCmd struct {
	kind        localCmdKind
	name, value string
}

// localCommand classifies sql as one of the statements a session answers
// without the origin.
func localCommand(sql string) (localCmd, bool) {
	switch {
	case emptyQuery(sql):
		return localCmd{kind: cmdEmpty}, true
	case isSelectOne(sql):
		return localCmd{kind: cmdSelectOne}, true
	}
	switch planner.TransactionControl(sql) {
	case planner.KindBegin:
		return localCmd{kind: cmdBegin}, true
	case planner.KindCommit:
		return localCmd{kind: cmdCommit}, true
	case planner.KindRollback:
		return localCmd{kind: cmdRollback}, true
	}
	if name, value, ok := planner.SessionSetting(sql); ok {
		if v, ok := localSettingValue(name, value); ok {
			return localCmd{kind: cmdSet, name: name, value: v}, true
		}
	}
	return localCmd{}, false
}

// localSettingValue is the value Postgres would give setting name for a
// SET of value, when pgaccel keeps that setting itself and Postgres would
// accept the value as it is; ok is false otherwise (the origin decides).
func localSettingValue(name, value string) (string, bool) {
	switch name {
	case "extra_float_digits":
		// Postgres reads more (hex, fractions, blanks); those go there.
		for i := 0; i < len(value); i++ {
			if c := value[i]; !(c >= '0' && c <= '9' || i == 0 && (c == '-' || c == '+')) {
				return "", false
			}
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < -15 || n > 3 {
			return "", false
		}
		return strconv.Itoa(n), true
	case "application_name":
		// Postgres replaces other bytes with '?' and truncates at 63
		// bytes: such values go there.
		if len(value) >= 64 {
			return "", false
		}
		for i := 0; i < len(value); i++ {
			if value[i] < 32 || value[i] > 126 {
				return "", false
			}
		}
		return value, true
	}
	return "", false
}

// localSet answers sql (a simple Query) here when it is a SET the session
// keeps itself (localSettingValue) and the session has no origin
// connection, nothing pending and no transaction; it reports whether it
// did.
func (ss *session) localSet(sql string) bool {
	if ss.clientKey == nil || !strings.EqualFold(planner.LeadingWord(sql), "set") {
		return false
	}
	c, ok := localCommand(sql)
	if !ok || c.kind != cmdSet || ss.settleLink() == linkLive || !ss.pending.idle() || ss.state.TxStatus() != 'I' {
		return false
	}
	msgs := append(ss.applySet(sql, c), &pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := ss.finish(msgs...); err != nil {
		ss.close()
	}
	return true
}

// applySet makes the SET sql (c) the session's, as the origin would, and
// returns what Postgres answers it with (before its ReadyForQuery).
func (ss *session) applySet(sql string, c localCmd) []pgproto3.BackendMessage {
	ss.pristine = false
	ss.keepSet(sql)
	msgs := []pgproto3.BackendMessage{&pgproto3.CommandComplete{CommandTag: []byte("SET")}}
	switch c.name {
	case "extra_float_digits":
		ss.info.extraFloatDigits = c.value
		ss.infoGen++
	case "application_name":
		// Reported when it changes, as Postgres does.
		if ss.state.Param(c.name) != c.value {
			ss.state.setParam(c.name, c.value)
			msgs = append(msgs, &pgproto3.ParameterStatus{Name: c.name, Value: c.value})
		}
	}
	return msgs
}

// commandStmt is the statement of a Parse that a session with no live
// origin connection answers itself (localCmd); nil otherwise, and for
// every Parse of a session with a live connection.
func (ss *session) commandStmt(m *pgproto3.Parse) *stmtInfo {
	if ss.link == linkLive && !ss.broken.Load() || len(m.ParameterOIDs) > 0 {
		return nil
	}
	c, ok := localCommand(m.Query)
	if !ok || c.kind == cmdSet && ss.clientKey == nil || ss.settleLink() == linkLive {
		return nil
	}
	return &stmtInfo{name: m.Name, sql: m.Query, cmd: &c}
}

// adoptCommand makes st, a statement prepared at an earlier origin
// connection (pgjdbc prepares its BEGIN and COMMIT once per session), one
// the session answers itself when its text is one and the session has no
// live origin connection now. A new connection still gets its Parse
// (replay).
func (ss *session) adoptCommand(st *stmtInfo) {
	c, ok := localCommand(st.sql)
	if !ok || c.kind == cmdSet && ss.clientKey == nil || ss.settleLink() == linkLive {
		return
	}
	st.cmd, st.origin, st.originPortal, st.pureOrigin = &c, nil, nil, false
	ss.describeCommand(st)
}

// describeCommand sets the descriptions of st, a statement the session
// answers itself.
func (ss *session) describeCommand(st *stmtInfo) {
	rows := (*pgproto3.RowDescription)(nil)
	if st.cmd.kind == cmdSelectOne {
		rows = selectOneRows()
	}
	ss.setStmtDesc(st, &pgproto3.ParameterDescription{}, rows)
	ss.descMu.Lock()
	st.noData = rows == nil
	ss.descMu.Unlock()
}

// deferCommandParse answers the Parse of st, a statement commandStmt made,
// here (and reports true) unless onParse sent it to the origin (a reused
// name).
func (ss *session) deferCommandParse(st *stmtInfo) bool {
	if ss.stmts[st.name] != st {
		return false
	}
	st.local = true
	ss.describeCommand(st)
	ss.answerLocal(&pgproto3.ParseComplete{})
	return true
}

// deferCommandBind answers the Bind of p, a portal of a statement
// the session answers itself (commandStmt, adoptCommand), here when the
// Bind is one Postgres accepts: no parameters, and result formats
// for the statement's columns.
func (ss *session) deferCommandBind(p *portalInfo, m *pgproto3.Bind) bool {
	cols := 0
	if p.stmt.rows != nil {
		cols = len(p.stmt.rows.Fields)
	}
	if !p.stmt.local && !p.stmt.atOrigin || len(m.Parameters) != 0 || !formatsFit(m.ParameterFormatCodes, 0) ||
		!formatsFit(m.ResultFormatCodes, cols) || ss.settleLink() == linkLive {
		return false
	}
	p.local = true
	ss.answerLocal(&pgproto3.BindComplete{})
	return true
}

// runCommand answers the Execute m of p, a portal of a statement the
// session answers itself, when it still can: no live origin connection,
// nothing of the stretch left pending at the stand-in, and a transaction
// state the statement may run in here. It reports false when the Execute
// (with its Parse and Bind: materialize) must go to the origin.
func (ss *session) runCommand(p *portalInfo, m *pgproto3.Execute) bool {
	if !ss.pending.idle() && (ss.link == linkLive || !ss.pending.waitEmpty()) {
		return false
	}
	if ss.pending.skipping() {
		return true // an earlier message failed: Postgres skips this one
	}
	if ss.settleLink() == linkLive {
		return false
	}
	c := p.stmt.cmd
	status := ss.state.TxStatus()
	var msgs []pgproto3.BackendMessage
	switch c.kind {
	case cmdBegin:
		if status != 'I' {
			return false // Postgres's warning, from the origin
		}
		ss.virtualBegin = p.stmt.sql
		ss.setLocalTx('T')
		msgs = append(msgs, &pgproto3.CommandComplete{CommandTag: []byte("BEGIN")})
	case cmdCommit, cmdRollback:
		if ss.virtualBegin == "" {
			return false
		}
		tag := "ROLLBACK"
		if c.kind == cmdCommit && status != 'E' {
			tag = "COMMIT"
		}
		ss.virtualBegin = ""
		ss.setLocalTx('I')
		msgs = append(msgs, &pgproto3.CommandComplete{CommandTag: []byte(tag)})
	case cmdEmpty:
		if status == 'E' {
			return false
		}
		msgs = append(msgs, &pgproto3.EmptyQueryResponse{})
	case cmdSelectOne:
		if status == 'E' || m.MaxRows == 1 {
			return false // a row limit of 1 suspends the portal: the origin's
		}
		one := []byte("1")
		if formatAt(p.resultFormats, 0) == 1 {
			one = binary.BigEndian.AppendUint32(nil, 1)
		}
		p.exhausted = true
		msgs = append(msgs, &pgproto3.DataRow{Values: [][]byte{one}}, selectTag(1))
	case cmdSet:
		if status != 'I' {
			return false
		}
		msgs = ss.applySet(p.stmt.sql, *c)
	}
	ss.answerLocal(msgs...)
	return true
}

// selectOneRows is the row description of SELECT 1.
func selectOneRows() *pgproto3.RowDescription {
	return &pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{
		Name: []byte("?column?"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1,
	}}}
}

// rowsOrNoData is a Describe's answer for a statement or portal whose row
// description is rd (nil: it returns no rows).
func rowsOrNoData(rd *pgproto3.RowDescription) pgproto3.BackendMessage {
	if rd == nil {
		return &pgproto3.NoData{}
	}
	return rd
}
