package pgtest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/internal/pgtest"
)

var srv *pgtest.Server

func TestMain(m *testing.M) { pgtest.RunMain(m, &srv) }

func connect(t *testing.T, user, password string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.DSN(user, password))
	if err != nil {
		t.Fatalf("connect as %s: %v\nserver log:\n%s", user, err, srv.LogTail(20))
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func queryString(t *testing.T, conn *pgx.Conn, sql string) string {
	t.Helper()
	var s string
	if err := conn.QueryRow(context.Background(), sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func TestServer_LoginMethods(t *testing.T) {
	tests := []struct {
		user, password string
		stored         string // prefix of the stored password hash; "" for no password
		auth           string // method logged for the login; "" for trust, which logs none
	}{
		{pgtest.AppUser, pgtest.AppPassword, "SCRAM-SHA-256$", "scram-sha-256"},
		{pgtest.MD5User, pgtest.MD5Password, "md5", "md5"},
		{pgtest.TrustUser, "", "", ""},
		{pgtest.NoAccessUser, pgtest.NoAccessPassword, "SCRAM-SHA-256$", "scram-sha-256"},
		{srv.SuperUser, srv.SuperPassword, "SCRAM-SHA-256$", "scram-sha-256"},
	}
	super := connect(t, srv.SuperUser, srv.SuperPassword)
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			conn := connect(t, tt.user, tt.password)
			if got := queryString(t, conn, "SELECT current_user || '@' || current_database()"); got != tt.user+"@"+srv.Database {
				t.Errorf("session is %q, want %s@%s", got, tt.user, srv.Database)
			}
			var stored *string
			err := super.QueryRow(context.Background(), "SELECT rolpassword FROM pg_authid WHERE rolname = $1", tt.user).Scan(&stored)
			if err != nil {
				t.Fatalf("read stored password: %v", err)
			}
			switch {
			case tt.stored == "" && stored != nil:
				t.Errorf("role %s has a password, want none", tt.user)
			case tt.stored != "" && (stored == nil || !strings.HasPrefix(*stored, tt.stored)):
				t.Errorf("role %s password is not stored as %s", tt.user, tt.stored)
			}
			// log_connections (PG 14+) names the method that authenticated
			// the login: proof the exchange was SCRAM or MD5, not trust.
			if tt.auth == "" || srv.External {
				return
			}
			line := `connection authenticated: identity="` + tt.user + `" method=` + tt.auth + " "
			if log := srv.LogTail(10000); !strings.Contains(log, line) {
				t.Errorf("server log lacks %q; tail:\n%s", line, srv.LogTail(10))
			}
		})
	}
}

func TestServer_WrongPasswordRefused(t *testing.T) {
	for _, user := range []string{pgtest.AppUser, pgtest.MD5User, srv.SuperUser} {
		t.Run(user, func(t *testing.T) {
			conn, err := pgx.Connect(context.Background(), srv.DSN(user, "wrong-pass"))
			if err == nil {
				conn.Close(context.Background())
				t.Fatalf("login as %s with a wrong password succeeded", user)
			}
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
				t.Fatalf("err = %v, want SQLSTATE 28P01 (invalid_password)", err)
			}
		})
	}
}

func TestServer_Settings(t *testing.T) {
	conn := connect(t, pgtest.AppUser, pgtest.AppPassword)
	tests := []struct {
		name, want string
		localOnly  bool // set by the harness; an external server may differ
	}{
		{"wal_level", "logical", false},
		{"server_encoding", "UTF8", false},
		{"max_connections", "300", true},
		{"max_wal_senders", "10", true},
		{"max_replication_slots", "10", true},
		{"fsync", "off", true},
		{"listen_addresses", "127.0.0.1", true},
		{"port", strconv.Itoa(srv.Port), true},
	}
	for _, tt := range tests {
		if tt.localOnly && srv.External {
			continue
		}
		if got := queryString(t, conn, "SHOW "+tt.name); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestServer_AppCanCreateTables(t *testing.T) {
	conn := connect(t, pgtest.AppUser, pgtest.AppPassword)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE TABLE pgtest_smoke (id int PRIMARY KEY, name text)"); err != nil {
		t.Fatalf("create table as app: %v", err)
	}
	t.Cleanup(func() { _ = srv.Exec(context.Background(), "DROP TABLE IF EXISTS pgtest_smoke") })
	if _, err := conn.Exec(ctx, "INSERT INTO pgtest_smoke VALUES (1, 'one')"); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if got := queryString(t, conn, "SELECT pg_catalog.pg_get_userbyid(relowner)::text FROM pg_class WHERE relname = 'pgtest_smoke'"); got != pgtest.AppUser {
		t.Errorf("table owner = %q, want %s", got, pgtest.AppUser)
	}
}

func TestServer_Exec(t *testing.T) {
	ctx := context.Background()
	if err := srv.Exec(ctx, "CREATE TABLE pgtest_exec (n int); INSERT INTO pgtest_exec VALUES (1), (2); DROP TABLE pgtest_exec"); err != nil {
		t.Fatalf("multi-statement Exec: %v", err)
	}
	err := srv.Exec(ctx, "SELECT 1; SELECT * FROM pgtest_no_such_table")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
		t.Fatalf("Exec of a bad statement: err = %v, want SQLSTATE 42P01", err)
	}
}

func TestServer_Accessors(t *testing.T) {
	if srv.External {
		t.Logf("external server: local-cluster checks do not apply")
		return
	}
	if srv.Addr() != "127.0.0.1:"+strconv.Itoa(srv.Port) {
		t.Errorf("Addr() = %q", srv.Addr())
	}
	if srv.Database != pgtest.TestDatabase {
		t.Errorf("Database = %q, want %s", srv.Database, pgtest.TestDatabase)
	}
	if !strings.HasPrefix(srv.SuperDSN(), "postgres://pgaccel:") || !strings.Contains(srv.SuperDSN(), "sslmode=disable") {
		t.Errorf("SuperDSN() has an unexpected shape")
	}
	if _, err := os.Stat(filepath.Join(srv.Dir, "data", "postmaster.pid")); err != nil {
		t.Errorf("postmaster.pid: %v", err)
	}
	if tail := srv.LogTail(5); !strings.Contains(srv.LogTail(1000), "database system is ready to accept connections") {
		t.Errorf("log does not show a started server; tail:\n%s", tail)
	}
}
