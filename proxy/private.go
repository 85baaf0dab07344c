package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/originlink"

	"github.com/pgaccel/pgaccel/accelerator"
)

var errSessionClosed = errors.New("session closed")

// privateMsg is one message of a request the proxy makes on the client's
// origin connection for itself; kind is the response it expects (use
// hasKind=false for Flush, which expects none).
type privateMsg struct {
	msg     pgproto3.FrontendMessage
	kind    originlink.ItemKind
	hasKind bool
}

// privateRequest sends msgs to the origin and waits for their responses,
// which are kept from the client. It must run on the client loop and only
// when no client response is pending (after drain).
func (ss *session) privateRequest(kind string, msgs ...privateMsg) ([]pgproto3.BackendMessage, error) {
	c, err := ss.sendPrivate(kind, msgs...)
	if err != nil {
		return nil, err
	}
	return ss.awaitPrivate(c)
}

// sendPrivate sends a private request, counted by kind (a request* label),
// and returns the collector its responses go to (awaitPrivate waits for
// them).
func (ss *session) sendPrivate(kind string, msgs ...privateMsg) (*originlink.Collector, error) {
	ss.mustNotBlock("private request")
	if !ss.needOrigin() {
		return nil, errSessionClosed
	}
	c := originlink.NewCollector()
	lastItem := -1
	for i, m := range msgs {
		if m.hasKind {
			lastItem = i
		}
	}
	if lastItem < 0 {
		return nil, errors.New("private request expects no response")
	}
	for i, m := range msgs {
		if m.hasKind {
			if !ss.origin.pending.Push(originlink.Item{Kind: m.kind, Private: c, Last: i == lastItem}) {
				return nil, errors.New("origin is skipping to the next Sync")
			}
		}
		ss.noteOriginTimer(m.msg)
		ss.origin.fe.Send(m.msg)
	}
	if err := ss.origin.fe.Flush(); err != nil {
		return nil, err
	}
	// A request ending with a Sync (or a simple Query) ends the origin's
	// stretch; any other is part of the client's.
	switch msgs[len(msgs)-1].msg.(type) {
	case *pgproto3.Sync, *pgproto3.Query:
		ss.ext.stretchOrigin = false
	default:
		ss.ext.stretchOrigin = true
	}
	ss.srv.metrics.request(kind)
	return c, nil
}

// awaitPrivate waits for the responses of a private request.
func (ss *session) awaitPrivate(c *originlink.Collector) ([]pgproto3.BackendMessage, error) {
	select {
	case <-c.Done:
	case <-ss.closedCh():
		return nil, errSessionClosed
	}
	return c.Msgs, nil
}

// drain asks the origin for everything it owes (Flush, not Sync: a Sync
// would end the client's implicit transaction) and waits until every
// earlier message has been answered. It reports false when the session is
// closing or the origin is skipping to the next Sync after an error.
func (ss *session) drain() bool {
	ss.mustNotBlock("drain")
	if !ss.origin.pending.Idle() {
		ss.origin.fe.Send(&pgproto3.Flush{})
		if err := ss.origin.fe.Flush(); err != nil {
			return false
		}
	}
	if !ss.origin.pending.WaitEmpty() {
		return false
	}
	return !ss.origin.pending.Skipping()
}

const sessionInfoSQL = `SELECT current_user, current_setting('extra_float_digits'), current_setting('bytea_output'), ` +
	`array_to_json(current_schemas(false))::text, ` +
	`(SELECT coalesce(json_agg(relname), '[]')::text FROM pg_catalog.pg_class WHERE relnamespace = pg_catalog.pg_my_temp_schema()), ` +
	`current_setting('statement_timeout'), coalesce(current_setting('pgaccel.route', true), ''), ` +
	`coalesce(current_setting('pgaccel.cache', true), ''), ` +
	`concat_ws('/', current_setting('lc_monetary'), current_setting('lc_numeric'), current_setting('lc_time'), current_setting('timezone_abbreviations')), ` +
	`coalesce(` + accelerator.DefaultCollationKeySQL + `, ''), ` +
	`coalesce(current_setting('pgaccel.max_staleness', true), '')`

// bytewiseCollation reports whether a default collation, as
// sessionInfoSQL gives it (provider|locale|version), compares text by its
// bytes: the libc provider's C or POSIX.
func bytewiseCollation(coll string) bool {
	parts := strings.SplitN(coll, "|", 3)
	return len(parts) == 3 && parts[0] == "c" && (parts[1] == "C" || parts[1] == "POSIX")
}

// infoStatement is the name of the session-info statement the proxy
// prepares on each origin session it reads info from.
const infoStatement = "_pgaccel_session_info"

// refreshInfo re-reads the session's user, search path, temp tables and the
// output settings Postgres does not report. It uses a statement and portal
// of its own, so the client's unnamed statement is untouched, and runs only
// between the client's extended-protocol stretches (it ends with a Sync).
func (ss *session) refreshInfo() error {
	err := ss.readInfo()
	var oe *originError
	if errors.As(err, &oe) && ss.acc.infoPrepared {
		// The client may have deallocated our statement (DISCARD ALL).
		ss.acc.infoPrepared = false
		err = ss.readInfo()
	}
	return err
}

func (ss *session) readInfo() error {
	if ss.ext.segmentOpen {
		return errors.New("read session info: inside an extended-protocol stretch")
	}
	var msgs []privateMsg
	if !ss.acc.infoPrepared {
		msgs = append(msgs, privateMsg{msg: &pgproto3.Parse{Name: infoStatement, Query: sessionInfoSQL}, kind: originlink.ItemParse, hasKind: true})
	}
	msgs = append(msgs,
		privateMsg{msg: &pgproto3.Bind{DestinationPortal: infoStatement, PreparedStatement: infoStatement}, kind: originlink.ItemBind, hasKind: true},
		privateMsg{msg: &pgproto3.Execute{Portal: infoStatement}, kind: originlink.ItemExecute, hasKind: true},
		privateMsg{msg: &pgproto3.Close{ObjectType: 'P', Name: infoStatement}, kind: originlink.ItemClose, hasKind: true},
	)
	msgs = append(msgs, privateMsg{msg: &pgproto3.Sync{}, kind: originlink.ItemSync, hasKind: true})
	resp, err := ss.privateRequest(requestSessionInfo, msgs...)
	if err != nil {
		return err
	}
	var row *pgproto3.DataRow
	for _, m := range resp {
		switch m := m.(type) {
		case *pgproto3.ParseComplete:
			ss.acc.infoPrepared = true
		case *pgproto3.DataRow:
			row = m
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("read session info: %w", &originError{m})
		}
	}
	info, err := parseSessionInfo(row)
	if err != nil {
		return err
	}
	ss.acc.info = info
	ss.acc.infoGen++
	ss.acc.infoDirty = false
	if ss.origin.pristine && ss.origin.loginKey != "" {
		// What sessions of this login start with (originlink.Logins).
		ss.srv.logins.PutInfo(ss.origin.loginKey, info)
	}
	return nil
}

// parseSessionInfo reads the row of sessionInfoSQL.
func parseSessionInfo(row *pgproto3.DataRow) (originlink.SessionInfo, error) {
	if row == nil || len(row.Values) != 11 {
		return originlink.SessionInfo{}, errors.New("read session info: no row")
	}
	info := originlink.SessionInfo{
		Valid:            true,
		User:             string(row.Values[0]),
		ExtraFloatDigits: string(row.Values[1]),
		ByteaOutput:      string(row.Values[2]),
		TempTables:       map[string]bool{},
		RouteDetail:      routeSettingDetail(string(row.Values[6])),
		CacheOff:         cacheSettingOff(string(row.Values[7])),
		Locale:           string(row.Values[8]),
		DefaultCollation: string(row.Values[9]),
	}
	info.MaxStaleness, info.MaxStalenessDetail = maxStalenessSetting(string(row.Values[10]))
	info.TextBytewise = bytewiseCollation(info.DefaultCollation)
	if err := json.Unmarshal(row.Values[3], &info.SearchPath); err != nil {
		return originlink.SessionInfo{}, fmt.Errorf("read session info: search path: %w", err)
	}
	var temps []string
	if err := json.Unmarshal(row.Values[4], &temps); err != nil {
		return originlink.SessionInfo{}, fmt.Errorf("read session info: temp tables: %w", err)
	}
	for _, t := range temps {
		info.TempTables[t] = true
	}
	var err error
	if info.StatementTimeout, err = parseTimeout(string(row.Values[5])); err != nil {
		return originlink.SessionInfo{}, fmt.Errorf("read session info: %w", err)
	}
	return info, nil
}

// readLoginInfo reads the session info on ol, a connection just logged in (or
// taken from the pool), before any session uses it: a simple Query, whose
// unnamed statement and portal no client has yet.
func readLoginInfo(ol *originlink.Login, timeout time.Duration) (originlink.SessionInfo, error) {
	_ = ol.Conn.SetDeadline(time.Now().Add(timeout))
	defer func() { _ = ol.Conn.SetDeadline(time.Time{}) }()
	ol.FE.Send(&pgproto3.Query{String: sessionInfoSQL})
	if err := ol.FE.Flush(); err != nil {
		return originlink.SessionInfo{}, err
	}
	var row *pgproto3.DataRow
	var failed error
	for {
		msg, err := ol.FE.Receive()
		if err != nil {
			return originlink.SessionInfo{}, err
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			row = copyBackendMessage(m).(*pgproto3.DataRow)
		case *pgproto3.ErrorResponse:
			failed = fmt.Errorf("read session info: %w", &originError{copyBackendMessage(m).(*pgproto3.ErrorResponse)})
		case *pgproto3.ReadyForQuery:
			ol.Status = m.TxStatus
			if failed != nil {
				return originlink.SessionInfo{}, failed
			}
			return parseSessionInfo(row)
		}
	}
}

// startDescribeSQL asks the origin for the row description of sql, as an
// unnamed statement ending with a Sync, and returns the function that waits
// for the answer (Postgres's error as *originError), so that the proxy can
// work meanwhile.
func (ss *session) startDescribeSQL(sql string) (func() (*pgproto3.RowDescription, error), error) {
	// The portal's description, as a simple Query's answer has it: Bind
	// plans the statement, and the plan's columns are what Postgres
	// describes then (COALESCE(NULL::varchar, v) keeps v's typmod once
	// the planner has dropped the NULL; the statement's description says
	// -1). An error of the plan (a constant expression that fails) comes
	// here too, and the origin answers the statement.
	//
	// Inside a transaction block the statement is described instead (as
	// before): an error of our Bind there (a planning error, a cancel or
	// statement_timeout while DuckDB answers) would fail the client's
	// transaction with an error the client never sees as its own.
	msgs := []privateMsg{
		{msg: &pgproto3.Parse{Query: sql}, kind: originlink.ItemParse, hasKind: true},
		{msg: &pgproto3.Bind{}, kind: originlink.ItemBind, hasKind: true},
		{msg: &pgproto3.Describe{ObjectType: 'P'}, kind: originlink.ItemDescribePortal, hasKind: true},
		{msg: &pgproto3.Sync{}, kind: originlink.ItemSync, hasKind: true},
	}
	if ss.state.TxStatus() != 'I' {
		msgs = []privateMsg{msgs[0], {msg: &pgproto3.Describe{ObjectType: 'S'}, kind: originlink.ItemDescribeStatement, hasKind: true}, msgs[3]}
	}
	c, err := ss.sendPrivate(requestDescribe, msgs...)
	if err != nil {
		return nil, err
	}
	return func() (*pgproto3.RowDescription, error) {
		msgs, err := ss.awaitPrivate(c)
		if err != nil {
			return nil, err
		}
		return rowDescriptionOf(msgs)
	}, nil
}

// rowDescriptionOf is the RowDescription among the answers to a Describe,
// nil for NoData, or the origin's error.
func rowDescriptionOf(msgs []pgproto3.BackendMessage) (*pgproto3.RowDescription, error) {
	var rd *pgproto3.RowDescription
	for _, m := range msgs {
		switch m := m.(type) {
		case *pgproto3.RowDescription:
			rd = m
		case *pgproto3.ErrorResponse:
			return nil, &originError{m}
		}
	}
	return rd, nil
}

// describeInline asks the origin to describe a statement or portal in the
// middle of the client's extended-protocol stretch, without a Sync.
func (ss *session) describeInline(objectType byte, name string) (*pgproto3.ParameterDescription, *pgproto3.RowDescription, error) {
	kind, label := originlink.ItemDescribePortal, requestDescribePortal
	if objectType == 'S' {
		kind, label = originlink.ItemDescribeStatement, requestDescribeStatement
	}
	msgs, err := ss.privateRequest(label,
		privateMsg{msg: &pgproto3.Describe{ObjectType: objectType, Name: name}, kind: kind, hasKind: true},
		privateMsg{msg: &pgproto3.Flush{}},
	)
	if err != nil {
		return nil, nil, err
	}
	var pd *pgproto3.ParameterDescription
	var rd *pgproto3.RowDescription
	for _, m := range msgs {
		switch m := m.(type) {
		case *pgproto3.ParameterDescription:
			pd = m
		case *pgproto3.RowDescription:
			rd = m
		case *pgproto3.ErrorResponse:
			return nil, nil, &originError{m}
		}
	}
	return pd, rd, nil
}

// originError is an ErrorResponse the origin sent to a private request.
type originError struct{ resp *pgproto3.ErrorResponse }

func (e *originError) Error() string { return e.resp.Code + ": " + e.resp.Message }
