package refresh

import (
	"context"
	"crypto/tls"
	"io"
	"strings"
	"testing"
	"time"
)

// TestCopyStream_PacesPlainSocketsOnly reads the same binary COPY over a
// plain and a TLS origin connection. Over TLS every socket read returns one
// TLS record (16 KiB at most), so the pacing meant for plain sockets would
// pause after every read: a TLS stream must not be paced at all. The test
// counts pauses, not time.
func TestCopyStream_PacesPlainSocketsOnly(t *testing.T) {
	const query = "COPY (SELECT g, repeat(md5(g::text), 4) FROM generate_series(1, 100000) g) TO STDOUT (FORMAT binary)"
	for _, tc := range []struct {
		name    string
		sslmode string
		tls     bool
	}{
		{"plain", "disable", false},
		{"tls", "require", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			dsn := strings.Replace(srv.SuperDSN(), "sslmode=disable", "sslmode="+tc.sslmode, 1)
			conn, err := connectOrigin(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			s, err := startCopy(ctx, conn, query)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			n, err := io.Copy(io.Discard, s)
			if err != nil {
				t.Fatal(err)
			}
			if n < 10<<20/2 {
				t.Fatalf("read %d bytes of COPY data, want several MiB", n)
			}
			if _, isTLS := s.conn.(*tls.Conn); isTLS != tc.tls {
				t.Fatalf("connection is TLS: %v, want %v", isTLS, tc.tls)
			}
			if tc.tls {
				if s.paced != nil {
					t.Fatalf("a TLS stream is paced: %d pauses in %d reads", s.paced.pauses, s.paced.reads)
				}
				return
			}
			if s.paced == nil || s.paced.reads == 0 {
				t.Fatal("a plain stream is not read through the pacing reader")
			}
			t.Logf("plain: %d reads, %d pauses, %d bytes", s.paced.reads, s.paced.pauses, n)
		})
	}
}
