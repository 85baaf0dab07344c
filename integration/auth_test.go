package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/proxy"
	"github.com/rs/zerolog"
)

func pgErrCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func TestAuth_RelayedToOrigin(t *testing.T) {
	p := startProxy(t, nil)
	ctx := ctxT(t)
	cases := []struct {
		name, user, password, wantCode string
	}{
		{"scram ok", "app", "app-pass", ""},
		{"scram wrong password", "app", "nope", "28P01"},
		{"md5 ok", "md5user", "md5-pass", ""},
		{"md5 wrong password", "md5user", "nope", "28P01"},
		{"trust", "trustuser", "", ""},
		{"no such role", "ghost", "x", "28P01"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := pgx.Connect(ctx, p.DSN(tc.user, tc.password))
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				var who string
				if err := c.QueryRow(ctx, "SELECT current_user").Scan(&who); err != nil || who != tc.user {
					t.Fatalf("current_user = %q, %v", who, err)
				}
				c.Close(ctx)
				return
			}
			if err == nil {
				c.Close(ctx)
				t.Fatal("connected with a wrong password")
			}
			if got := pgErrCode(err); got != tc.wantCode {
				t.Fatalf("error code %q, want %q: %v", got, tc.wantCode, err)
			}
		})
	}
	// An unknown database is the origin's error, relayed.
	_, err := pgx.Connect(ctx, strings.Replace(p.DSN(appUser, appPass), "/"+origin.Database+"?", "/no_such_db?", 1))
	if got := pgErrCode(err); got != "3D000" {
		t.Fatalf("unknown database: code %q (%v), want 3D000", got, err)
	}
}

func TestOrigin_UnreachableAtConnect(t *testing.T) {
	// A port with nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p := startProxy(t, func(c *proxy.Config) { c.Origin.Port = uint16(deadPort) })
	ctx := ctxT(t)
	for range 3 {
		_, err := pgx.Connect(ctx, p.DSN(appUser, appPass))
		if got := pgErrCode(err); got != "08006" {
			t.Fatalf("code %q, want 08006: %v", got, err)
		}
		if !strings.Contains(err.Error(), "cannot connect to the origin") {
			t.Fatalf("unclear message: %v", err)
		}
	}
	// The healthy proxy keeps serving.
	good := startProxy(t, nil)
	c := connect(t, good.DSN(appUser, appPass))
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}

// selfSignedTLS writes a throwaway certificate for 127.0.0.1.
func selfSignedTLS(t *testing.T) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "pgaccel-test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return &tls.Config{Certificates: []tls.Certificate{cert}}, ""
}

func TestTLS_TerminatedByProxy(t *testing.T) {
	tlsCfg, _ := selfSignedTLS(t)
	p := startProxy(t, func(c *proxy.Config) { c.TLS = tlsCfg })
	ctx := ctxT(t)
	dsn := strings.Replace(p.DSN(appUser, appPass), "sslmode=disable", "sslmode=require", 1)
	c := connect(t, dsn)
	if _, ok := c.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("client connection is %T, want TLS", c.PgConn().Conn())
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT 41 + 1").Scan(&n); err != nil || n != 42 {
		t.Fatalf("query over TLS: %d, %v", n, err)
	}
	// Without TLS configured, sslmode=require is refused by the client.
	plain := startProxy(t, nil)
	_, err := pgx.Connect(ctx, strings.Replace(plain.DSN(appUser, appPass), "sslmode=disable", "sslmode=require", 1))
	if err == nil {
		t.Fatal("sslmode=require succeeded against a proxy without TLS")
	}
	// psql (libpq) over TLS: SCRAM works because the proxy does not offer
	// SCRAM-SHA-256-PLUS; requiring channel binding fails clearly.
	psql := psqlPath(t)
	out, err := runPsql(t, psql, dsn, "-Atc", "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
	if err != nil || strings.TrimSpace(out) != "f" {
		// The origin link is plain: the origin sees no TLS.
		t.Fatalf("psql over TLS: %q, %v", out, err)
	}
	out, err = runPsql(t, psql, dsn+"&channel_binding=require", "-Atc", "SELECT 1")
	if err == nil || !strings.Contains(out, "channel binding") {
		t.Fatalf("channel_binding=require: want a channel binding error, got %q, %v", out, err)
	}
}

func psqlPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("psql")
	if err != nil {
		t.Fatal("psql not found: install it with `apt-get update && apt-get install -y postgresql-client`")
	}
	return p
}

// runPsql runs psql with the connection string and returns its combined output.
func runPsql(t *testing.T, psql, dsn string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, psql, append([]string{"-X", "-v", "VERBOSITY=verbose", "-d", dsn}, args...)...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGTZ=UTC", "PGAPPNAME=psql")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestPsql_CommandAndScript(t *testing.T) {
	mustExec(t, "DROP TABLE IF EXISTS psql_items; CREATE TABLE psql_items (id int primary key, v text, at timestamptz); GRANT ALL ON psql_items TO app")
	p := startProxy(t, nil)
	psql := psqlPath(t)
	script := filepath.Join(t.TempDir(), "script.sql")
	body := `\set ON_ERROR_STOP off
TRUNCATE psql_items;
COPY psql_items (id, v, at) FROM STDIN;
1	one	2024-01-01 00:00:00+00
2	two	2024-06-30 12:34:56+00
\.
SELECT * FROM psql_items ORDER BY id;
BEGIN;
INSERT INTO psql_items VALUES (3, 'three', now());
SELECT count(*) FROM psql_items;
ROLLBACK;
SELECT count(*) FROM psql_items;
SELECT 1/0;
SELECT v, length(v) FROM psql_items ORDER BY id \gset first_
\echo :first_v
PREPARE q(int) AS SELECT v FROM psql_items WHERE id = $1;
EXECUTE q(2);
\copy (SELECT id, v FROM psql_items ORDER BY id) TO STDOUT
SELECT $$a'b$$ AS quoted, E'tab\there' AS esc, NULL AS n \gx
DO $$ BEGIN RAISE NOTICE 'notice from %', 'plpgsql'; END $$;
\bind 7 'x'
SELECT $1::int * 6, $2 \g
`
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-c", "SELECT 1 AS one, 'two' AS two"},
		{"-Atc", "SELECT current_user, current_database()"},
		{"-c", "SELECT * FROM no_such_table"},
		{"-f", script},
	} {
		direct, derr := runPsql(t, psql, origin.DSN(appUser, appPass), args...)
		proxied, perr := runPsql(t, psql, p.DSN(appUser, appPass), args...)
		if direct != proxied || (derr == nil) != (perr == nil) {
			t.Errorf("psql %v differs\n--- direct (%v)\n%s\n--- proxy (%v)\n%s", args, derr, direct, perr, proxied)
		}
		if strings.Contains(direct, "connection to server") {
			t.Errorf("psql %v could not connect: %s", args, direct)
		}
	}
}

// The proxy's links to the origin use TLS when origin.dsn asks for it:
// sessions (with SCRAM through the TLS link) and refreshes.
func TestOriginTLS_SessionsAndRefreshes(t *testing.T) {
	mustExec(t, accelSchema)
	dsn := strings.Replace(origin.SuperDSN(), "sslmode=disable", "sslmode=require", 1)
	if dsn == origin.SuperDSN() {
		t.Fatalf("unexpected DSN form %s", dsn)
	}
	cfgText := fmt.Sprintf("origin:\n  dsn: %q\nserver:\n  listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\nruntime:\n  data_dir: %q\ndatasets:\n  - from: postgres:public.acc_customers\n",
		dsn, t.TempDir())
	path := filepath.Join(t.TempDir(), "pgaccel.yaml")
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := catalog.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Start(cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = a.Shutdown(ctx)
	})
	ctx := ctxT(t)
	if err := a.Runner.WaitReady(ctx, "acc_customers"); err != nil {
		t.Fatalf("refresh over TLS: %v", err)
	}
	c := connect(t, appDSN(a, appUser, appPass))
	var ssl bool
	if err := c.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil || !ssl {
		t.Fatalf("session's origin link: ssl=%v, %v", ssl, err)
	}
	var n int
	if r := routeOf(t, a, func() {
		if err := c.QueryRow(ctx, "SELECT count(*) FROM acc_customers").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}); r != acc || n != 200 {
		t.Errorf("accelerated read: %d via %s", n, r)
	}
	var refreshSSL int
	if err := originConn(t).QueryRow(ctx, `SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
		WHERE a.application_name = 'pgaccel-catalog' AND s.ssl`).Scan(&refreshSSL); err != nil {
		t.Fatal(err)
	}
	if refreshSSL == 0 {
		t.Errorf("the catalog pool does not use TLS")
	}
}
