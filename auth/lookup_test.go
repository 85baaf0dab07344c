package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/internal/pgtest"
)

var srv *pgtest.Server

func TestMain(m *testing.M) { pgtest.RunMain(m, &srv) }

// TestLookup_ThroughTheSetupFunction installs SetupSQL at a real Postgres
// and reads roles through it as the lookup role, which cannot read
// pg_authid itself: a SCRAM role, an md5 one, one without a password, one
// that may not log in, one whose password expired, one without CONNECT on
// a database, an unknown one; and a role name that tries SQL injection.
func TestLookup_ThroughTheSetupFunction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, q := range []string{"DROP DATABASE IF EXISTS auth_restricted", "CREATE DATABASE auth_restricted"} {
		if err := srv.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	setup := `
REVOKE CONNECT ON DATABASE auth_restricted FROM PUBLIC;
DO $$ BEGIN
  CREATE ROLE auth_lookup LOGIN PASSWORD 'lookup-secret';
  CREATE ROLE auth_alice LOGIN PASSWORD 'alice-secret';
  SET password_encryption = 'md5';
  CREATE ROLE auth_mallory LOGIN PASSWORD 'mallory-secret';
  RESET password_encryption;
  CREATE ROLE auth_nopass LOGIN;
  CREATE ROLE auth_bob NOLOGIN PASSWORD 'bob-secret';
  CREATE ROLE auth_carol LOGIN PASSWORD 'carol-secret' VALID UNTIL '2000-01-01';
  CREATE ROLE auth_dave LOGIN PASSWORD 'dave-secret' VALID UNTIL 'infinity';
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;
GRANT CONNECT ON DATABASE auth_restricted TO auth_alice;
` + SetupSQL("auth_lookup")
	if err := srv.Exec(ctx, setup); err != nil {
		t.Fatalf("setup: %v", err)
	}
	conn, err := pgconn.Connect(ctx, srv.DSN("auth_lookup", "lookup-secret"))
	if err != nil {
		t.Fatalf("connect as the lookup role: %v", err)
	}
	defer conn.Close(context.Background())
	// The lookup role reads no verifier but through the function.
	if err := conn.Exec(ctx, "SELECT rolpassword FROM pg_authid").Close(); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("the lookup role reads pg_authid: %v", err)
	}
	db := srv.Database
	for _, c := range []struct {
		role, db   string
		found      bool
		kind       string
		canConnect bool
	}{
		{"auth_alice", db, true, SCRAM, true},
		{"auth_alice", "auth_restricted", true, SCRAM, true},
		{"auth_mallory", db, true, MD5, true},
		{"auth_mallory", "auth_restricted", true, MD5, false},
		{"auth_nopass", db, true, None, true},
		{"auth_bob", db, false, None, false},
		{"auth_carol", db, true, None, true},
		{"auth_dave", db, true, SCRAM, true},
		{"auth_alice", "no_such_database", true, SCRAM, false},
		{"auth_nobody", db, false, None, false},
		{"auth_alice' OR true --", db, false, None, false},
	} {
		e, err := Lookup(ctx, conn, c.role, c.db)
		if err != nil {
			t.Fatalf("Lookup(%q, %q): %v", c.role, c.db, err)
		}
		if e.Found != c.found || e.Verifier.Kind != c.kind || e.CanConnect != c.canConnect {
			t.Errorf("Lookup(%q, %q) = found %v, %v, connect %v; want found %v, %q, connect %v",
				c.role, c.db, e.Found, e.Verifier, e.CanConnect, c.found, c.kind, c.canConnect)
		}
		if c.role == "auth_alice" && c.db == db {
			if e.Verifier.Iterations != 4096 || len(e.Verifier.Salt) == 0 {
				t.Errorf("alice's verifier: %d iterations, %d salt bytes", e.Verifier.Iterations, len(e.Verifier.Salt))
			}
		}
		if c.role == "auth_carol" && (e.ValidUntil.IsZero() || e.ValidUntil.Year() != 2000) {
			t.Errorf("carol's valid_until: %v", e.ValidUntil)
		}
	}
	// Another role may not call it.
	other, err := pgconn.Connect(ctx, srv.DSN("auth_alice", "alice-secret"))
	if err != nil {
		t.Fatalf("connect as alice: %v", err)
	}
	defer other.Close(context.Background())
	_, err = Lookup(ctx, other, "auth_alice", db)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Fatalf("a role other than the lookup role called the function: %v", err)
	}
	// CheckSetup: the lookup role may run it, alice may not.
	if err := CheckSetup(ctx, conn); err != nil {
		t.Errorf("CheckSetup as the lookup role: %v", err)
	}
	if err := CheckSetup(ctx, other); !errors.Is(err, ErrNoSetup) {
		t.Errorf("CheckSetup as another role: %v, want ErrNoSetup", err)
	}
}

// roleAndLookup creates (or resets) role with password at the test
// Postgres, installs the lookup function for lookupRole, and returns a
// connection as lookupRole.
func roleAndLookup(ctx context.Context, t *testing.T, role, password, lookupRole string) *pgconn.PgConn {
	t.Helper()
	r, p, l := pgx.Identifier{role}.Sanitize(), "'"+password+"'", pgx.Identifier{lookupRole}.Sanitize()
	if err := srv.Exec(ctx, `DO $$ BEGIN CREATE ROLE `+r+` LOGIN PASSWORD `+p+`;
		EXCEPTION WHEN duplicate_object THEN ALTER ROLE `+r+` PASSWORD `+p+`; END $$;
		DO $$ BEGIN CREATE ROLE `+l+` LOGIN PASSWORD 'lookup-pw'; EXCEPTION WHEN duplicate_object THEN NULL; END $$;`+SetupSQL(lookupRole)); err != nil {
		t.Fatal(err)
	}
	conn, err := pgconn.Connect(ctx, srv.DSN(lookupRole, "lookup-pw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestParseVerifier reads Postgres's verifier forms and refuses others
// without quoting them.
func TestParseVerifier(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	good := "SCRAM-SHA-256$4096:c2FsdHNhbHRzYWx0$" + key + ":" + key
	v, err := ParseVerifier(good)
	if err != nil || v.Kind != SCRAM || v.Iterations != 4096 || string(v.Salt) != "saltsaltsalt" || len(v.StoredKey) != 32 {
		t.Fatalf("ParseVerifier(good) = %+v, %v", v, err)
	}
	if !v.Equal(v) || v.String() != "SCRAM-SHA-256 verifier" {
		t.Fatalf("Equal/String: %v", v)
	}
	if v, err := ParseVerifier("md5" + strings.Repeat("ab", 16)); err != nil || v.Kind != MD5 {
		t.Fatalf("md5: %+v, %v", v, err)
	}
	for _, bad := range []string{"", "plaintext", "md5abc", "SCRAM-SHA-256$", "SCRAM-SHA-256$x:c2FsdA==$a:b",
		"SCRAM-SHA-256$4096:c2FsdA==$" + strings.Repeat("A", 43) + "=", "SCRAM-SHA-256$0:c2FsdA==$a:b",
		"SCRAM-SHA-256$4096:!!!$" + strings.Repeat("A", 43) + "=:" + strings.Repeat("B", 43) + "="} {
		if _, err := ParseVerifier(bad); err == nil {
			t.Errorf("ParseVerifier(%q): no error", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("the error quotes the verifier: %v", err)
		}
	}
}

// FuzzParseVerifier: any text is parsed without a panic, and what parses
// as SCRAM has keys of SHA-256's size.
func FuzzParseVerifier(f *testing.F) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	f.Add("SCRAM-SHA-256$4096:c2FsdHNhbHRzYWx0$" + key + ":" + key)
	f.Add("md5" + strings.Repeat("ab", 16))
	f.Add("SCRAM-SHA-256$1:$:")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVerifier(s)
		if err == nil && v.Kind == SCRAM && (len(v.StoredKey) != 32 || len(v.ServerKey) != 32 || v.Iterations < 1) {
			t.Fatalf("ParseVerifier(%q) = %+v", s, v)
		}
	})
}
