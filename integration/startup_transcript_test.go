package integration

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy"
)

// startupStep is one step of a startup-phase exchange: bytes to write, a
// TLS handshake, or a close of the client's side.
type startupStep struct {
	write []byte
	tls   bool
	close bool
}

// packet is a startup-phase packet: its length word, then body.
func packet(body ...[]byte) []byte {
	b := []byte{0, 0, 0, 0}
	for _, part := range body {
		b = append(b, part...)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// params is a startup packet's name/value pairs and terminator.
func params(kv ...string) []byte {
	var b []byte
	for _, s := range kv {
		b = append(append(b, s...), 0)
	}
	return append(b, 0)
}

const (
	sslRequestCode    = 80877103
	cancelRequestCode = 80877102
)

// TestStartup_TranscriptsMatchTheOrigin runs the same startup-phase byte
// sequences (bad lengths, unknown protocol versions, missing user, cancels
// with unknown keys, clients that leave mid-handshake, TLS) directly
// against the origin and through pgaccel, and compares what comes back:
// the same messages (severity, SQLSTATE, message, detail; not the origin's
// source file and line) or the same silence before the close.
func TestStartup_TranscriptsMatchTheOrigin(t *testing.T) {
	tlsCfg, _ := selfSignedTLS(t)
	p := startProxy(t, func(c *proxy.Config) { c.TLS = tlsCfg })
	user := func(u string) []byte { return params("user", u, "database", origin.Database) }
	v30 := u32(pgproto3.ProtocolVersion30)
	ssl := packet(u32(sslRequestCode))
	startup := packet(v30, user("trustuser"))
	cases := map[string][]startupStep{
		// node-postgres's end() right after connect(): Terminate where
		// the StartupMessage would be.
		"terminate instead of startup": {{write: []byte{'X', 0, 0, 0, 4}}},
		"length too large":             {{write: u32(10009)}, {write: make([]byte, 100)}},
		"length too small":             {{write: u32(7)}, {write: []byte{0, 3, 0}}},
		"length of nothing":            {{write: u32(4)}},
		"incomplete packet":            {{write: startup[:12]}, {close: true}},
		"nothing at all":               {{close: true}},
		"protocol 2.0":                 {{write: packet(u32(2<<16), user("trustuser"))}},
		"protocol 4.0":                 {{write: packet(u32(4<<16), user("trustuser"))}},
		"protocol 188.24910":           {{write: packet(u32(12345678))}},
		"protocol 3.1":                 {{write: packet(u32(3<<16|1), user("trustuser"))}, {write: []byte{'X', 0, 0, 0, 4}}},
		"protocol 3.0 with _pq_ option": {{write: packet(v30, params("user", "trustuser", "database", origin.Database, "_pq_.pgaccel_test", "1"))},
			{write: []byte{'X', 0, 0, 0, 4}}},
		"missing user":                          {{write: packet(v30, params("database", origin.Database))}},
		"empty user":                            {{write: packet(v30, user(""))}},
		"no parameters":                         {{write: packet(v30, []byte{0})}},
		"no terminator":                         {{write: packet(v30, []byte("user\x00trustuser\x00"))}},
		"value missing":                         {{write: packet(v30, []byte("user\x00"))}},
		"unknown database":                      {{write: packet(v30, params("user", "trustuser", "database", "no_such_db"))}},
		"bad replication flag":                  {{write: packet(v30, params("user", "trustuser", "replication", "maybe"))}},
		"cancel unknown key":                    {{write: packet(u32(cancelRequestCode), u32(12345), u32(67890))}},
		"cancel too short":                      {{write: packet(u32(cancelRequestCode), u32(12345))}},
		"ssl then gone":                         {{write: ssl}, {close: true}},
		"ssl then plaintext in the same write":  {{write: append(append([]byte{}, ssl...), startup...)}},
		"ssl then second ssl request":           {{write: ssl}, {tls: true}, {write: ssl}},
		"ssl then terminate instead of startup": {{write: ssl}, {tls: true}, {write: []byte{'X', 0, 0, 0, 4}}},
		"ssl then startup":                      {{write: ssl}, {tls: true}, {write: startup}, {write: []byte{'X', 0, 0, 0, 4}}},
		"gone during authentication":            {{write: packet(v30, user(appUser))}, {close: true}},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			direct := startupTranscript(t, origin.Addr(), steps)
			proxied := startupTranscript(t, p.ln.Addr().String(), steps)
			t.Logf("directly:\n%s", direct)
			if direct != proxied {
				t.Fatalf("through pgaccel:\n%s\ndirectly:\n%s", proxied, direct)
			}
		})
	}
	// Still serving.
	c := connect(t, p.DSN(appUser, appPass))
	if _, err := c.Exec(ctxT(t), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}

// startupTranscript runs steps against addr and renders everything that
// comes back until the server closes the connection.
func startupTranscript(t *testing.T, addr string, steps []startupStep) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var got []byte
	// readSome collects what arrives within a short while (the answers
	// to a step), without waiting for the close.
	readSome := func(c net.Conn, wait time.Duration) {
		buf := make([]byte, 64<<10)
		for {
			_ = c.SetReadDeadline(time.Now().Add(wait))
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				return
			}
		}
	}
	var c net.Conn = conn
	for _, st := range steps {
		switch {
		case st.close:
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			} else {
				_ = c.Close()
				return renderStartup(got) + "closed by the client\n"
			}
		case st.tls:
			if len(got) == 0 || got[len(got)-1] != 'S' {
				return renderStartup(got) + "no TLS offered\n"
			}
			got = append(got, []byte("<tls>")...)
			tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true})
			_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
			if err := tc.Handshake(); err != nil {
				return renderStartup(got) + fmt.Sprintf("TLS handshake failed: %v\n", err)
			}
			c = tc
			continue
		default:
			if _, err := c.Write(st.write); err != nil {
				return renderStartup(got) + "write failed\n"
			}
		}
		readSome(c, 300*time.Millisecond)
	}
	// The rest, up to the close.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	rest, err := io.ReadAll(c)
	got = append(got, rest...)
	end := "closed by the server\n"
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		end = "still open\n"
	}
	return renderStartup(got) + end
}

// renderStartup renders startup-phase answers: single-byte answers to
// SSLRequest, protocol 3 messages (errors by their fields, keys and
// parameters by name only) and protocol 2 style error strings.
func renderStartup(b []byte) string {
	var out strings.Builder
	for len(b) > 0 {
		if strings.HasPrefix(string(b), "<tls>") {
			out.WriteString("TLS\n")
			b = b[5:]
			continue
		}
		if len(b) >= 5 && b[0] != 'E' || len(b) >= 6 && b[0] == 'E' && b[5] == 'S' {
			n := int(binary.BigEndian.Uint32(b[1:5]))
			if n >= 4 && 1+n <= len(b) {
				out.WriteString(renderMessage(b[0], b[5:1+n]) + "\n")
				b = b[1+n:]
				continue
			}
		}
		if b[0] == 'E' && len(b) > 1 {
			// Protocol 2: 'E', a NUL-terminated string, no length.
			s, _, _ := strings.Cut(string(b[1:]), "\x00")
			fmt.Fprintf(&out, "protocol-2 error %q\n", s)
			b = b[min(len(b), 2+len(s)):]
			continue
		}
		fmt.Fprintf(&out, "byte %q\n", b[0])
		b = b[1:]
	}
	return out.String()
}

func renderMessage(typ byte, body []byte) string {
	switch typ {
	case 'E', 'N':
		var e pgproto3.ErrorResponse
		if err := e.Decode(body); err != nil {
			return fmt.Sprintf("%c undecodable: %v", typ, err)
		}
		return fmt.Sprintf("%c %s %s %s: %s (detail %q hint %q)", typ, e.Severity, e.SeverityUnlocalized, e.Code, e.Message, e.Detail, e.Hint)
	case 'R':
		return fmt.Sprintf("Authentication %d", binary.BigEndian.Uint32(body))
	case 'K':
		return "BackendKeyData"
	case 'S':
		name, _, _ := strings.Cut(string(body), "\x00")
		return "ParameterStatus " + name
	case 'v':
		var m pgproto3.NegotiateProtocolVersion
		if err := m.Decode(body); err != nil {
			return fmt.Sprintf("NegotiateProtocolVersion undecodable: %v", err)
		}
		return fmt.Sprintf("NegotiateProtocolVersion %d.%d %v", m.NewestMinorProtocol>>16, m.NewestMinorProtocol&0xffff, m.UnrecognizedOptions)
	case 'Z':
		return fmt.Sprintf("ReadyForQuery %q", body)
	}
	return fmt.Sprintf("%c (%d bytes)", typ, len(body))
}
