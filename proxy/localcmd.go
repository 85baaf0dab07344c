package proxy

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"time"

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
// Drivers and frameworks set up each connection with SETs (Rails:
// standard_conforming_strings, IntervalStyle, client_min_messages,
// TimeZone; Django: TimeZone when it differs). A SET answered here is
// kept for replay (link.go), so the origin connection a later statement
// opens gets it first, as a SET the origin ran does. It is answered only
// outside a transaction block, and only where pgaccel can tell the value
// Postgres would set (setValue): extra_float_digits (the encoder prints
// floats by it), application_name and IntervalStyle (reported in a
// ParameterStatus; the encoder follows IntervalStyle), client_min_messages
// (nothing answered here sends notices), statement_timeout (applied to
// what pgaccel answers itself; Rails sets it at every connection when
// database.yml names it) and lock_timeout (nothing answered here waits
// for a lock) when plainly written (millisSetting), and DateStyle, TimeZone,
// client_encoding and standard_conforming_strings when the SET leaves
// them as they are. DISCARD ALL is answered when the session has nothing
// but its own statements and portals to discard (discardAll), and
// DEALLOCATE of the session's own prepared statements (deallocate):
// psycopg 3 sends DEALLOCATE ALL after every ROLLBACK of a session that
// prepared statements, so a rollback failed during an outage. So is the
// reset asyncpg's pool sends when it takes a connection back
// (SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL;)
// when there is nothing to reset (sessionReset): as several statements
// it made the session's origin state unreplayable, so every pooled
// asyncpg connection held an origin backend for good. Anything else goes
// to the origin as before. A SET answered in an extended-
// protocol stretch holds only if the stretch succeeds (stretchsets.go).

// localCommand classifies sql as one of the statements a session answers
// without the origin (planner.Local), a SET only of the settings it keeps
// itself (localSettings).
func localCommand(sql string) (planner.LocalCommand, bool) {
	c, ok := planner.Local(sql)
	if ok && c.Kind == planner.LocalSet && localSettings[c.Name] == "" {
		return planner.LocalCommand{}, false
	}
	return c, ok
}

// localSettings are the settings a session may SET without the origin,
// by their names in lower case, with the names Postgres reports them by
// (ParameterStatus) or, for those it does not report, their own.
var localSettings = map[string]string{
	"extra_float_digits":          "extra_float_digits",
	"application_name":            "application_name",
	"intervalstyle":               "IntervalStyle",
	"client_min_messages":         "client_min_messages",
	"datestyle":                   "DateStyle",
	"timezone":                    "TimeZone",
	"client_encoding":             "client_encoding",
	"standard_conforming_strings": "standard_conforming_strings",
	"statement_timeout":           "statement_timeout",
	"lock_timeout":                "lock_timeout",
}

// setValue is the value setting c.Name takes from the SET c, as Postgres
// would set it, when pgaccel can tell that exactly; ok is false when the
// origin must decide (a value Postgres reads otherwise, changes, or
// refuses). The reported settings pgaccel does not interpret itself
// (DateStyle, TimeZone, client_encoding, standard_conforming_strings) are
// answered only when the SET leaves them as they are (Rails and Django
// set them at every connection).
func (ss *session) setValue(c *planner.LocalCommand) (string, bool) {
	value := c.Value
	switch c.Name {
	case "extra_float_digits":
		// Postgres reads more (hex, fractions, blanks); those go there.
		for i := 0; i < len(value); i++ {
			if ch := value[i]; !(ch >= '0' && ch <= '9' || i == 0 && (ch == '-' || ch == '+')) {
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
	case "intervalstyle":
		return enumValue(value, "postgres", "postgres_verbose", "sql_standard", "iso_8601")
	case "client_min_messages":
		// Postgres also takes aliases ("debug" stores "debug2"): those
		// go there.
		return enumValue(value, "debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error")
	case "statement_timeout", "lock_timeout":
		d, ok := millisSetting(value)
		if !ok {
			return "", false
		}
		return strconv.FormatInt(d.Milliseconds(), 10), true
	}
	if reported := localSettings[c.Name]; reported != "" && ss.state.Param(reported) == value && value != "" {
		return value, true
	}
	return "", false
}

// millisSetting reads value as Postgres reads a setting in milliseconds
// (statement_timeout, lock_timeout) when it is plainly written: a whole
// number without sign or leading zeros, and an optional unit (timeUnits
// but us, as Postgres spells them), within the setting's range (0 to
// 2^31-1 ms). ok is false for everything else, which Postgres reads in
// ways of its own (hex and octal, fractions, blanks, microseconds,
// rounding) or refuses: those go to the origin.
func millisSetting(value string) (d time.Duration, ok bool) {
	i := 0
	for i < len(value) && value[i] >= '0' && value[i] <= '9' {
		i++
	}
	if i == 0 || i > 10 || i > 1 && value[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(value[:i], 10, 64)
	unit, ok := timeUnits[value[i:]]
	if err != nil || !ok || unit < time.Millisecond || n > int64(math.MaxInt32*time.Millisecond/unit) {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// enumValue is value as Postgres stores it when it is one of names (in any
// case).
func enumValue(value string, names ...string) (string, bool) {
	for _, n := range names {
		if strings.EqualFold(value, n) {
			return n, true
		}
	}
	return "", false
}

// discardAll does what DISCARD ALL does to a session with no origin
// connection and reports true, when all there is to discard is the
// session's own: its named statements and its portals (but running, the
// one executing the DISCARD), with no setting to reset (none SET since
// the login, or replayed), nothing only the origin holds (unreplayable:
// temporary tables, LISTEN, ...) and no transaction (where Postgres
// refuses it). Npgsql sends DISCARD ALL when it reuses a pooled
// connection.
func (ss *session) discardAll(running *portalInfo) bool {
	if ss.state.TxStatus() != 'I' || len(ss.origin.replaySets) > 0 || ss.origin.tent != nil || ss.origin.unreplayable.Load() != nil {
		return false
	}
	for name := range ss.ext.stmts {
		if name != "" {
			ss.setStmt(name, nil)
		}
	}
	for name, p := range ss.ext.portals {
		if p != running {
			ss.forgetPortal(name)
		}
	}
	return true
}

// sessionReset answers a pool's connection reset (c; planner.SessionReset)
// as Postgres does when the session has nothing it would reset: no
// transaction, no setting changed since the login or the last reset that
// ran at the origin (RESET ALL then changes, and reports, nothing), nothing only the origin holds
// (unreplayable: advisory locks, cursors WITH HOLD, LISTEN), and no live
// origin connection (so no cursor is open). ok is false otherwise, and
// the origin runs it. running is the portal executing it, nil for a
// simple Query (whose RowDescription of pg_advisory_unlock_all's void is
// sent here; a portal's is its Describe's).
func (ss *session) sessionReset(c *planner.LocalCommand, running *portalInfo) (msgs []pgproto3.BackendMessage, ok bool) {
	if ss.origin.clientKey == nil || !ss.nothingToReset() {
		return nil, false
	}
	for _, step := range []byte(c.Value) {
		switch planner.ResetStep(step) {
		case planner.ResetUnlockAll:
			if running == nil {
				msgs = append(msgs, unlockAllRows())
			} else {
				running.exhausted = true
			}
			// void prints as the empty string (not NULL), in text and
			// binary.
			msgs = append(msgs, &pgproto3.DataRow{Values: [][]byte{{}}}, selectTag(1))
		case planner.ResetCloseAll:
			msgs = append(msgs, &pgproto3.CommandComplete{CommandTag: []byte("CLOSE CURSOR ALL")})
		case planner.ResetUnlistenAll:
			msgs = append(msgs, &pgproto3.CommandComplete{CommandTag: []byte("UNLISTEN")})
		case planner.ResetAll:
			msgs = append(msgs, &pgproto3.CommandComplete{CommandTag: []byte("RESET")})
		}
	}
	return msgs, true
}

// nothingToReset reports whether a pool's reset would find nothing to
// reset in the session: no transaction, no setting changed since the
// login or the last reset (replaySets holds only resets), none pending in
// a stretch, and nothing only the origin holds.
func (ss *session) nothingToReset() bool {
	if ss.state.TxStatus() != 'I' || ss.origin.tent != nil || ss.origin.unreplayable.Load() != nil {
		return false
	}
	for _, q := range ss.origin.replaySets {
		if q != resetAll {
			return false
		}
	}
	return true
}

// unlockAllRows is the row description of SELECT pg_advisory_unlock_all().
func unlockAllRows() *pgproto3.RowDescription {
	return &pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{
		Name: []byte("pg_advisory_unlock_all"), DataTypeOID: 2278, DataTypeSize: 4, TypeModifier: -1,
	}}}
}

// deallocate does what DEALLOCATE (c) does to a session with no origin
// connection: it drops the named prepared statement, or every one but the
// unnamed (which DEALLOCATE ALL leaves, as Postgres does), and returns
// Postgres's answer. Their portals stay, as at the origin. ok is false
// when the statement is not the session's (Postgres's 26000 comes from
// the origin) or SQL PREPARE may have left statements only the origin
// knows (unreplayable). Postgres runs DEALLOCATE in a transaction block
// too, and a rollback does not undo it.
func (ss *session) deallocate(c *planner.LocalCommand) (msgs []pgproto3.BackendMessage, ok bool) {
	if ss.origin.unreplayable.Load() != nil {
		return nil, false
	}
	tag := "DEALLOCATE ALL"
	if c.Kind == planner.LocalDeallocate {
		if c.Name == "" || ss.ext.stmts[c.Name] == nil {
			return nil, false
		}
		ss.setStmt(c.Name, nil)
		tag = "DEALLOCATE"
	} else {
		for name := range ss.ext.stmts {
			if name != "" {
				ss.setStmt(name, nil)
			}
		}
	}
	return []pgproto3.BackendMessage{&pgproto3.CommandComplete{CommandTag: []byte(tag)}}, true
}

// applySet makes the SET sql (c) the session's, as the origin would, and
// returns what Postgres answers it with (before its ReadyForQuery); ok is
// false, and nothing changes, when the origin must run it (setValue). In
// an extended-protocol stretch (inStretch) the SET is tentative until the
// Sync (stretchsets.go).
func (ss *session) applySet(sql string, c *planner.LocalCommand, inStretch bool) (msgs []pgproto3.BackendMessage, ok bool) {
	value, ok := ss.setValue(c)
	if !ok {
		return nil, false
	}
	ss.origin.pristine = false
	var t *stretchSets
	if inStretch {
		t = ss.tentative()
		t.sqls = append(t.sqls, sql)
		t.local = append(t.local, sql)
	} else {
		ss.keepSet(sql)
	}
	msgs = append(msgs, &pgproto3.CommandComplete{CommandTag: []byte("SET")})
	switch reported := localSettings[c.Name]; c.Name {
	case "extra_float_digits":
		ss.acc.info.ExtraFloatDigits = value
		ss.acc.infoGen++
	case "statement_timeout":
		// Applied to what pgaccel answers itself (timeout.go).
		ss.acc.info.StatementTimeout, _ = millisSetting(c.Value)
		ss.acc.infoGen++
	case "client_min_messages", "lock_timeout":
		// Nothing pgaccel answers sends notices or waits for a lock.
	default:
		// Reported when it changes, as Postgres does: at once for a
		// simple Query, at the Sync for a stretch.
		if old := ss.state.Param(reported); old != value {
			ss.state.setParam(reported, value)
			if t == nil {
				msgs = append(msgs, &pgproto3.ParameterStatus{Name: reported, Value: value})
			} else if _, ok := t.prior[reported]; !ok {
				t.prior[reported] = old
			}
		}
	}
	return msgs, true
}

// commandStmt is the statement of a Parse that a session with no live
// origin connection answers itself (localCmd); nil otherwise, and for
// every Parse of a session with a live connection.
func (ss *session) commandStmt(m *pgproto3.Parse) *stmtInfo {
	if ss.origin.state == linkLive && !ss.origin.broken.Load() || len(m.ParameterOIDs) > 0 {
		return nil
	}
	c, ok := localCommand(m.Query)
	if !ok || !c.OneStatement() || ss.settleLink() == linkLive {
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
	if !ok || !c.OneStatement() || ss.settleLink() == linkLive {
		return
	}
	st.cmd, st.origin, st.originPortal, st.pureOrigin = &c, nil, nil, false
	ss.describeCommand(st)
}

// describeCommand sets the descriptions of st, a statement the session
// answers itself.
func (ss *session) describeCommand(st *stmtInfo) {
	ss.ext.descMu.Lock()
	defer ss.ext.descMu.Unlock()
	st.params, st.rows, st.noData = &pgproto3.ParameterDescription{}, nil, true
	switch {
	case st.cmd.Kind == planner.LocalSelectOne:
		st.rows, st.noData = selectOneRows(), false
	case st.cmd.ReturnsRow():
		st.rows, st.noData = unlockAllRows(), false
	}
}

// deferCommandParse answers the Parse of st, a statement commandStmt made,
// here (and reports true) unless onParse sent it to the origin (a reused
// name).
func (ss *session) deferCommandParse(st *stmtInfo) bool {
	if ss.ext.stmts[st.name] != st {
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
// session answers itself, when it still can (answerCommand). It reports
// false when the Execute (with its Parse and Bind: materialize) must go
// to the origin.
func (ss *session) runCommand(p *portalInfo, m *pgproto3.Execute) bool {
	if !ss.origin.pending.Idle() && (ss.origin.state == linkLive || !ss.origin.pending.WaitEmpty()) {
		return false
	}
	if ss.origin.pending.Skipping() {
		return true // an earlier message failed: Postgres skips this one
	}
	if ss.settleLink() == linkLive || p.stmt.cmd.ReturnsRow() && m.MaxRows == 1 {
		// A row limit of 1 suspends SELECT 1's portal: the origin's.
		return false
	}
	msgs, ok := ss.answerCommand(p.stmt.cmd, p.stmt.sql, p)
	if ok {
		ss.answerLocal(msgs...)
	}
	return ok
}

// answerCommand runs c, the statement sql, as the origin would, for a
// session with no live origin connection and nothing pending, and returns
// Postgres's answer to its Execute (a simple Query's adds SELECT 1's
// RowDescription before, and its ReadyForQuery after). ok is false, and
// nothing changes, when the transaction state (or a SET's value) makes it
// the origin's. running is the portal executing it, nil for a simple
// Query.
func (ss *session) answerCommand(c *planner.LocalCommand, sql string, running *portalInfo) (msgs []pgproto3.BackendMessage, ok bool) {
	status := ss.state.TxStatus()
	switch c.Kind {
	case planner.LocalTx:
		tag := ss.localTxTag(c.Tx, sql)
		if tag == "" {
			return nil, false // Postgres's warnings, from the origin
		}
		return []pgproto3.BackendMessage{&pgproto3.CommandComplete{CommandTag: []byte(tag)}}, true
	case planner.LocalEmpty:
		if status == 'E' {
			return nil, false
		}
		return []pgproto3.BackendMessage{&pgproto3.EmptyQueryResponse{}}, true
	case planner.LocalSelectOne:
		if status == 'E' {
			return nil, false
		}
		one := []byte("1")
		if running != nil {
			if formatAt(running.resultFormats, 0) == 1 {
				one = binary.BigEndian.AppendUint32(nil, 1)
			}
			running.exhausted = true
		}
		return []pgproto3.BackendMessage{&pgproto3.DataRow{Values: [][]byte{one}}, selectTag(1)}, true
	case planner.LocalDiscardAll:
		if ss.origin.clientKey == nil || !ss.discardAll(running) {
			return nil, false
		}
		return []pgproto3.BackendMessage{&pgproto3.CommandComplete{CommandTag: []byte("DISCARD ALL")}}, true
	case planner.LocalReset:
		return ss.sessionReset(c, running)
	case planner.LocalDeallocate, planner.LocalDeallocateAll:
		if status == 'E' {
			return nil, false
		}
		return ss.deallocate(c)
	case planner.LocalSet:
		if ss.origin.clientKey == nil || status != 'I' {
			// auth.mode origin: nothing is replayed.
			return nil, false
		}
		return ss.applySet(sql, c, running != nil)
	}
	return nil, false
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
