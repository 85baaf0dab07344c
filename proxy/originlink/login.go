package originlink

import (
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/wire"
)

// Login is a connection to the origin logged in as a session's role
// (loginOrigin): what it said at startup.
type Login struct {
	Conn net.Conn
	RW   io.ReadWriter
	FR   *wire.FrameReader
	FE   *pgproto3.Frontend
	// Params are the ParameterStatus values the origin reported.
	Params map[string]string
	// PID and Key are the origin backend's BackendKeyData.
	PID uint32
	Key []byte
	// Status is the transaction status of its last ReadyForQuery.
	Status byte
}

// SendTerminate ends a connection cleanly, so the origin logs no broken
// client.
func SendTerminate(ol *Login) {
	_ = ol.Conn.SetDeadline(time.Now().Add(time.Second))
	ol.FE.Send(&pgproto3.Terminate{})
	_ = ol.FE.Flush()
	_ = ol.Conn.Close()
}

// setAppName sets application_name on the connection to v (take). A
// bound parameter, so v needs no quoting.
func (ol *Login) SetAppName(v string) error {
	if got, ok := ol.Params["application_name"]; (ok && got == v) || !PlainAppName(v) {
		return nil // the same, or another one is in the key
	}
	return ol.Exchange(&pgproto3.Parse{Query: "SELECT pg_catalog.set_config('application_name', $1, false)"},
		&pgproto3.Bind{Parameters: [][]byte{[]byte(v)}}, &pgproto3.Execute{}, &pgproto3.Sync{})
}

// ResetForPool makes a released connection fit for another session of its
// login key: DISCARD ALL, answered with ReadyForQuery idle. It reports
// false (and closes the connection) when the origin does not answer so.
func ResetForPool(ol *Login) bool {
	if err := ol.Exchange(&pgproto3.Query{String: "DISCARD ALL"}); err != nil {
		_ = ol.Conn.Close()
		return false
	}
	return true
}

// exchange sends msgs, which end in one ReadyForQuery, on an idle pooled
// or released connection and reads the answers up to it, within 5s: an
// ErrorResponse, or a status other than idle, is an error. The
// ParameterStatus values the origin reports update ol.Params.
func (ol *Login) Exchange(msgs ...pgproto3.FrontendMessage) error {
	_ = ol.Conn.SetDeadline(time.Now().Add(5 * time.Second))
	defer func() { _ = ol.Conn.SetDeadline(time.Time{}) }()
	for _, m := range msgs {
		ol.FE.Send(m)
	}
	if err := ol.FE.Flush(); err != nil {
		return err
	}
	var failed error
	for {
		msg, err := ol.FE.Receive()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.ParameterStatus:
			ol.Params[m.Name] = m.Value
		case *pgproto3.ErrorResponse:
			failed = fmt.Errorf("origin: %s (SQLSTATE %s)", m.Message, m.Code)
		case *pgproto3.ReadyForQuery:
			if failed == nil && m.TxStatus != 'I' {
				failed = fmt.Errorf("transaction status %q, want idle", m.TxStatus)
			}
			return failed
		}
	}
}
