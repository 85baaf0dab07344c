package auth

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/pgdef"
)

// LookupFunction is the schema-qualified name of the lookup function.
const LookupFunction = "pgaccel_auth.lookup_verifier"

// SetupSQL returns the SQL a superuser runs once, in the database of
// origin.dsn, to create the lookup function and let lookupRole (the user
// of origin.dsn) execute it, and nobody else.
func SetupSQL(lookupRole string) string {
	role := pgx.Identifier{lookupRole}.Sanitize()
	return `-- pgaccel: the verifier lookup of auth.mode: proxy.
-- Run once as a superuser in the database origin.dsn connects to. (Its own
-- schema, not "pgaccel": a schema named like a role lands first in that
-- role's default search_path, "$user", public.)
CREATE SCHEMA IF NOT EXISTS pgaccel_auth;
REVOKE ALL ON SCHEMA pgaccel_auth FROM PUBLIC;

-- One row for a role that may log in: its verifier (NULL once
-- rolvaliduntil has passed), and whether it may connect to the database.
CREATE OR REPLACE FUNCTION ` + LookupFunction + `(role_name text, database_name text)
RETURNS TABLE (rolname name, verifier text, valid_until timestamptz, can_connect boolean)
LANGUAGE sql STABLE STRICT SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT a.rolname,
         CASE WHEN a.rolvaliduntil IS NOT NULL AND a.rolvaliduntil OPERATOR(pg_catalog.<) pg_catalog.now()
              THEN NULL ELSE a.rolpassword END,
         a.rolvaliduntil,
         CASE WHEN EXISTS (SELECT FROM pg_catalog.pg_database d
                            WHERE d.datname OPERATOR(pg_catalog.=) database_name AND d.datallowconn)
              THEN pg_catalog.has_database_privilege(a.oid, database_name, 'CONNECT')
              ELSE false END
    FROM pg_catalog.pg_authid a
   WHERE a.rolname OPERATOR(pg_catalog.=) role_name AND a.rolcanlogin
$$;
REVOKE ALL ON FUNCTION ` + LookupFunction + `(text, text) FROM PUBLIC;
GRANT USAGE ON SCHEMA pgaccel_auth TO ` + role + `;
GRANT EXECUTE ON FUNCTION ` + LookupFunction + `(text, text) TO ` + role + `;
`
}

// Entry is what the origin says of a role for a database.
type Entry struct {
	// Found: the role exists and may log in (rolcanlogin).
	Found bool
	// Verifier is its password verifier; Kind None when it has no
	// password or the password expired.
	Verifier Verifier
	// ValidUntil is rolvaliduntil, zero when unset.
	ValidUntil time.Time
	// CanConnect: the role has CONNECT on the database and the database
	// accepts connections.
	CanConnect bool
}

// Lookup reads role's entry for database through the lookup function, on
// conn (the lookup connection, which carries no client's settings).
func Lookup(ctx context.Context, conn *pgconn.PgConn, role, database string) (Entry, error) {
	res := conn.ExecParams(ctx, "SELECT verifier, valid_until::text, can_connect FROM "+LookupFunction+"($1, $2)",
		[][]byte{[]byte(role), []byte(database)}, nil, nil, nil).Read()
	if res.Err != nil {
		return Entry{}, fmt.Errorf("auth: look up role: %w", res.Err)
	}
	switch len(res.Rows) {
	case 0:
		return Entry{}, nil
	case 1:
	default:
		return Entry{}, fmt.Errorf("auth: the lookup function returned %d rows for one role", len(res.Rows))
	}
	row := res.Rows[0]
	e := Entry{Found: true, CanConnect: string(row[2]) == "t"}
	if row[1] != nil {
		t, err := parseTimestamptz(string(row[1]))
		if err != nil {
			return Entry{}, fmt.Errorf("auth: valid_until: %w", err)
		}
		e.ValidUntil = t
	}
	if row[0] != nil {
		v, err := ParseVerifier(string(row[0]))
		if err != nil {
			return Entry{}, err
		}
		e.Verifier = v
	}
	return e, nil
}

// parseTimestamptz reads timestamptz text in the ISO DateStyle; infinity
// is no bound.
func parseTimestamptz(s string) (time.Time, error) {
	switch s {
	case "infinity":
		return time.Time{}, nil
	case "-infinity":
		return time.Unix(0, 0), nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999-07", "2006-01-02 15:04:05.999999-07:00", "2006-01-02 15:04:05.999999-07:00:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read %q", s)
}

// Kinds of verifier.
const (
	None  = "" // no password: nobody logs in with one
	SCRAM = "SCRAM-SHA-256"
	MD5   = "md5"
)

// Verifier is a role's password verifier as pg_authid.rolpassword holds
// it: SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>, or md5
// followed by 32 hex digits. It is a secret: never log it.
type Verifier struct {
	Kind       string
	Iterations int
	Salt       []byte
	StoredKey  []byte // SHA-256 of the ClientKey
	ServerKey  []byte
	MD5        string // the 32 hex digits
}

// String hides the verifier's secrets.
func (v Verifier) String() string {
	if v.Kind == None {
		return "no password"
	}
	return v.Kind + " verifier"
}

// Equal reports whether two verifiers are the same, in constant time for
// their secrets.
func (v Verifier) Equal(w Verifier) bool {
	return v.Kind == w.Kind && v.Iterations == w.Iterations &&
		subtle.ConstantTimeCompare(v.Salt, w.Salt) == 1 && subtle.ConstantTimeCompare(v.StoredKey, w.StoredKey) == 1 &&
		subtle.ConstantTimeCompare(v.ServerKey, w.ServerKey) == 1 && subtle.ConstantTimeCompare([]byte(v.MD5), []byte(w.MD5)) == 1
}

var errVerifier = errors.New("auth: the origin's verifier is not SCRAM-SHA-256 or md5 in Postgres's form")

// ParseVerifier reads a rolpassword. Text in no known form (a plaintext
// password stored by a very old Postgres, a damaged value) is an error
// that names no part of it.
func ParseVerifier(s string) (Verifier, error) {
	if rest, ok := strings.CutPrefix(s, "md5"); ok && !strings.HasPrefix(s, "SCRAM") {
		if len(rest) != 32 || strings.Trim(strings.ToLower(rest), "0123456789abcdef") != "" {
			return Verifier{}, errVerifier
		}
		return Verifier{Kind: MD5, MD5: strings.ToLower(rest)}, nil
	}
	rest, ok := strings.CutPrefix(s, "SCRAM-SHA-256$")
	if !ok {
		return Verifier{}, errVerifier
	}
	params, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return Verifier{}, errVerifier
	}
	iter, salt, ok1 := strings.Cut(params, ":")
	stored, server, ok2 := strings.Cut(keys, ":")
	if !ok1 || !ok2 {
		return Verifier{}, errVerifier
	}
	n, err := strconv.Atoi(iter)
	if err != nil || n < 1 || n > 1<<30 || strings.HasPrefix(iter, "+") {
		return Verifier{}, errVerifier
	}
	v := Verifier{Kind: SCRAM, Iterations: n}
	for _, f := range []struct {
		text string
		dst  *[]byte
		size int // 0: any length up to 1 KiB
	}{{salt, &v.Salt, 0}, {stored, &v.StoredKey, 32}, {server, &v.ServerKey, 32}} {
		b, err := base64.StdEncoding.Strict().DecodeString(f.text)
		if err != nil || len(b) == 0 || len(b) > 1024 || f.size > 0 && len(b) != f.size {
			return Verifier{}, errVerifier
		}
		*f.dst = b
	}
	return v, nil
}

// ErrNoSetup is an origin without the lookup function, or whose function
// the connection's user may not execute.
var ErrNoSetup = errors.New("auth: the lookup function " + LookupFunction + "(text, text) is missing at the origin, or origin.dsn's user may not execute it")

// CheckSetup reports whether the lookup function exists at the origin and
// conn's user may execute it (ErrNoSetup when not).
func CheckSetup(ctx context.Context, conn *pgconn.PgConn) error {
	res := conn.ExecParams(ctx, "SELECT coalesce(pg_catalog.has_function_privilege(pg_catalog.to_regprocedure($1)::oid, 'EXECUTE'), false)",
		[][]byte{[]byte(LookupFunction + "(text, text)")}, nil, nil, nil).Read()
	var pe *pgconn.PgError
	if errors.As(res.Err, &pe) && (pe.Code == pgdef.InsufficientPrivilege || pe.Code == pgdef.InvalidSchemaName || pe.Code == pgdef.UndefinedFunction) {
		return ErrNoSetup // no USAGE on its schema, no schema, no function
	}
	if res.Err != nil {
		return fmt.Errorf("auth: check the lookup function: %w", res.Err)
	}
	if len(res.Rows) != 1 || string(res.Rows[0][0]) != "t" {
		return ErrNoSetup
	}
	return nil
}
