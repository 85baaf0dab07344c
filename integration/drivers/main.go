// Command drivers starts what the driver-suite scripts beside it run
// against: a throwaway origin Postgres (internal/pgtest) prepared the way
// pgx's and node-postgres's own test setups prepare theirs, and pgaccel in
// front of it with one dataset configured, so that every session goes
// through the acceleration's relay (every message decoded and routed). It
// writes the two ports to the file named by -env and serves until stdin
// closes or it gets SIGINT or SIGTERM.
//
// It is not part of `make test`: the scripts (run-pgx-suite.sh,
// run-node-postgres-suite.sh) take many minutes; `make drivers` runs both.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/rs/zerolog"
)

// database is the database both suites use (pgx's name for it).
const database = "pgx_test"

// setupSQL is pgx's testsetup/postgresql_setup.sql (less what needs TLS
// certificates or OAuth), node-postgres's CI roles, and the dataset table.
// Passwords: pgx's "secret", node-postgres's CI ones.
var setupSQL = []string{
	`CREATE EXTENSION IF NOT EXISTS hstore`,
	`CREATE EXTENSION IF NOT EXISTS ltree`,
	`DO $$ BEGIN CREATE DOMAIN uint64 AS numeric(20,0); EXCEPTION WHEN duplicate_object THEN END $$`,
	`SET password_encryption = 'md5'`,
	`CREATE USER pgx_md5 WITH SUPERUSER PASSWORD 'secret'`,
	`SET password_encryption = 'scram-sha-256'`,
	`CREATE USER pgx_pw WITH SUPERUSER PASSWORD 'secret'`,
	`CREATE USER pgx_scram WITH SUPERUSER PASSWORD 'secret'`,
	`CREATE USER " tricky, ' } "" \\ test user " SUPERUSER PASSWORD 'secret'`,
	`ALTER USER postgres PASSWORD 'postgres'`,
	`CREATE ROLE scram_test LOGIN PASSWORD 'test4scram'`,
	`CREATE ROLE scram_unicode_test LOGIN PASSWORD U&'IX-\2168'`,
	`CREATE TABLE drivers_items (id int PRIMARY KEY, name text NOT NULL)`,
	`INSERT INTO drivers_items SELECT g, 'item ' || g FROM generate_series(1, 1000) g`,
	`GRANT SELECT ON drivers_items TO PUBLIC`,
}

// hbaRules go before pgtest's own: the authentication methods pgx's
// testsetup/pg_hba.conf gives its roles over TCP.
const hbaRules = `host all pgx_md5 127.0.0.1/32 md5
host all pgx_pw 127.0.0.1/32 password
host all pgx_scram 127.0.0.1/32 scram-sha-256
`

func main() {
	envFile := flag.String("env", "", "file to write DIRECT_PORT, PROXY_PORT and DATABASE to (required)")
	flag.Parse()
	if *envFile == "" {
		fmt.Fprintln(os.Stderr, "drivers: -env FILE is required")
		os.Exit(2)
	}
	if err := run(*envFile); err != nil {
		fmt.Fprintln(os.Stderr, "drivers:", err)
		os.Exit(1)
	}
}

func run(envFile string) error {
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, NoColor: true}).Level(zerolog.WarnLevel).With().Timestamp().Logger()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	origin, err := pgtest.Start(ctx)
	if err != nil {
		return err
	}
	defer origin.Stop()
	if err := prepare(ctx, origin); err != nil {
		return err
	}

	u, err := url.Parse(origin.SuperDSN())
	if err != nil {
		return err
	}
	u.Path = "/" + database
	dir, err := os.MkdirTemp("", "pgaccel-drivers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// TLS for clients, as the origin offers it (node-postgres's ssl tests
	// connect with ssl on).
	certFile, keyFile, err := writeCert(dir)
	if err != nil {
		return err
	}
	// PGACCEL_DRIVERS_AUTH=proxy runs the suites through auth.mode proxy:
	// pgaccel verifies SCRAM logins itself (roles with md5 verifiers are
	// relayed; pgx_pw, whose origin rule asks for a cleartext password,
	// cannot be logged in with a ClientKey and fails by design).
	authBlock := ""
	if os.Getenv("PGACCEL_DRIVERS_AUTH") == "proxy" {
		authBlock = "auth:\n  mode: proxy\n"
		conn, err := pgconn.Connect(ctx, u.String())
		if err != nil {
			return err
		}
		err = conn.Exec(ctx, auth.SetupSQL(origin.SuperUser)).Close()
		conn.Close(context.Background())
		if err != nil {
			return fmt.Errorf("install the verifier lookup: %w", err)
		}
	}
	cfgText := fmt.Sprintf(`origin:
  dsn: %q
server:
  listen: 127.0.0.1:0
  tls:
    cert_file: %q
    key_file: %q
admin:
  listen: 127.0.0.1:0
%sruntime:
  data_dir: %q
datasets:
  - from: postgres:public.drivers_items
    name: drivers_items
`, u.String(), certFile, keyFile, authBlock, filepath.Join(dir, "data"))
	cfgPath := filepath.Join(dir, "pgaccel.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		return err
	}
	cfg, err := catalog.Load(cfgPath)
	if err != nil {
		return err
	}
	a, err := app.Start(cfg, log)
	if err != nil {
		return err
	}
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		_ = a.Shutdown(sctx)
	}()
	if err := a.WaitReady(ctx); err != nil {
		return err
	}
	_, proxyPort, _ := strings.Cut(a.Addr(), ":")
	env := fmt.Sprintf("DIRECT_PORT=%d\nPROXY_PORT=%s\nDATABASE=%s\n", origin.Port, proxyPort, database)
	if err := os.WriteFile(envFile, []byte(env), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "drivers: origin on 127.0.0.1:%d, pgaccel on %s, database %s\n", origin.Port, a.Addr(), database)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	stdinClosed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stdinClosed)
	}()
	select {
	case <-stop:
	case <-stdinClosed:
	}
	return nil
}

// prepare creates the suites' database, roles and dataset table and lets
// pgx's roles in with its authentication methods.
func prepare(ctx context.Context, origin *pgtest.Server) error {
	super, err := pgconn.Connect(ctx, origin.SuperDSN())
	if err != nil {
		return err
	}
	defer super.Close(ctx)
	if err := exec(ctx, super, "CREATE DATABASE "+database); err != nil {
		return err
	}
	var hbaFile string
	r := super.ExecParams(ctx, "SELECT current_setting('hba_file'), pg_read_file(current_setting('hba_file'))", nil, nil, nil, nil).Read()
	if r.Err != nil || len(r.Rows) != 1 {
		return fmt.Errorf("read pg_hba.conf: %v", r.Err)
	}
	hbaFile = string(r.Rows[0][0])
	lines := strings.Split(strings.TrimRight(hbaRules+string(r.Rows[0][1]), "\n"), "\n")
	for i, l := range lines {
		lines[i] = "'" + strings.ReplaceAll(l, "'", "''") + "'"
	}
	// COPY writes as the server's OS user, whoever runs this.
	if err := exec(ctx, super, fmt.Sprintf("COPY (SELECT unnest(ARRAY[%s])) TO '%s'", strings.Join(lines, ","), strings.ReplaceAll(hbaFile, "'", "''"))); err != nil {
		return err
	}
	if err := exec(ctx, super, "SELECT pg_reload_conf()"); err != nil {
		return err
	}

	su, err := url.Parse(origin.SuperDSN())
	if err != nil {
		return err
	}
	su.Path = "/" + database
	db, err := pgconn.Connect(ctx, su.String())
	if err != nil {
		return err
	}
	defer db.Close(ctx)
	for _, sql := range setupSQL {
		if err := exec(ctx, db, sql); err != nil {
			return err
		}
	}
	return nil
}

// writeCert writes a throwaway self-signed certificate for 127.0.0.1 and
// localhost into dir.
func writeCert(dir string) (certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

func exec(ctx context.Context, c *pgconn.PgConn, sql string) error {
	if _, err := c.Exec(ctx, sql).ReadAll(); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}
