package proxy

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

const sslRequestCode = 80877103

// originAddr is the origin's address as the client sees it in errors.
func (s *Server) originAddr() string {
	o := s.cfg.Origin
	if strings.HasPrefix(o.Host, "/") {
		return filepath.Join(o.Host, ".s.PGSQL."+strconv.Itoa(int(o.Port)))
	}
	return net.JoinHostPort(o.Host, strconv.Itoa(int(o.Port)))
}

// dialOrigin opens a connection to the origin and negotiates TLS the way
// origin.dsn's sslmode asks: disable (plain), prefer (TLS if offered),
// require and verify-* (TLS or fail).
func (s *Server) dialOrigin(ctx context.Context) (net.Conn, error) {
	o := s.cfg.Origin
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()

	network, addr := "tcp", s.originAddr()
	if strings.HasPrefix(o.Host, "/") {
		network = "unix"
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		_ = tc.SetKeepAlive(true)
	}
	if o.TLSConfig == nil || network == "unix" {
		return conn, nil
	}
	// Negotiate TLS under the dial deadline.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	var req [8]byte
	binary.BigEndian.PutUint32(req[0:4], 8)
	binary.BigEndian.PutUint32(req[4:8], sslRequestCode)
	if _, err := conn.Write(req[:]); err != nil {
		conn.Close()
		return nil, fmt.Errorf("send SSLRequest: %w", err)
	}
	var resp [1]byte
	if _, err := io.ReadFull(conn, resp[:]); err != nil {
		conn.Close()
		return nil, fmt.Errorf("read SSLRequest answer: %w", err)
	}
	switch resp[0] {
	case 'S':
		tc := tls.Client(conn, o.TLSConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS handshake with origin: %w", err)
		}
		_ = tc.SetDeadline(time.Time{})
		return tc, nil
	case 'N':
		if s.originAllowsPlain() {
			_ = conn.SetDeadline(time.Time{})
			return conn, nil
		}
		conn.Close()
		return nil, errors.New("the origin refused TLS, which origin.dsn's sslmode requires")
	default:
		conn.Close()
		return nil, fmt.Errorf("unexpected answer %q to SSLRequest", resp[0])
	}
}

// originAllowsPlain reports whether sslmode=prefer (or allow) lets the
// connection continue without TLS.
func (s *Server) originAllowsPlain() bool {
	for _, fb := range s.cfg.Origin.Fallbacks {
		if fb.TLSConfig == nil && fb.Host == s.cfg.Origin.Host && fb.Port == s.cfg.Origin.Port {
			return true
		}
	}
	return false
}

// cancelOrigin asks the origin to cancel the query running on the backend
// identified by pid and key, the way libpq's PQcancel does.
func (s *Server) cancelOrigin(ctx context.Context, pid uint32, key []byte) error {
	conn, err := s.dialOrigin(ctx)
	if err != nil {
		return fmt.Errorf("dial origin for cancel: %w", err)
	}
	defer conn.Close()
	buf, err := (&pgproto3.CancelRequest{ProcessID: pid, SecretKey: key}).Encode(nil)
	if err != nil {
		return err
	}
	_ = conn.SetDeadline(time.Now().Add(s.cfg.DialTimeout))
	if _, err := conn.Write(buf); err != nil {
		return fmt.Errorf("send cancel: %w", err)
	}
	// The origin closes the connection when it has processed the request.
	_, _ = io.Copy(io.Discard, conn)
	return nil
}
