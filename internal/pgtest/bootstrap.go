package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// The roles and database every test server has. Over TCP, trustuser logs in
// without a password, md5user with MD5 and every other role with
// SCRAM-SHA-256. noaccess can log in but is granted nothing beyond what
// PUBLIC has, for permission-error tests.
const (
	TestDatabase = "pgaccel_test" // owned by AppUser

	SuperUser = "pgaccel" // SUPERUSER LOGIN, random password (Server.SuperPassword)

	AppUser     = "app"
	AppPassword = "app-pass"

	MD5User     = "md5user"
	MD5Password = "md5-pass"

	TrustUser = "trustuser"

	NoAccessUser     = "noaccess"
	NoAccessPassword = "noaccess-pass"
)

// role is one role bootstrap creates when it is missing.
type role struct {
	name, attrs, password, encryption string
}

// testRoles are the roles of every server. superPassword empty means the
// superuser role is not created (an external server brings its own).
func testRoles(superPassword string) []role {
	var roles []role
	if superPassword != "" {
		roles = append(roles, role{SuperUser, "SUPERUSER LOGIN", superPassword, "scram-sha-256"})
	}
	return append(roles,
		role{AppUser, "LOGIN", AppPassword, "scram-sha-256"},
		role{MD5User, "LOGIN", MD5Password, "md5"},
		role{TrustUser, "LOGIN", "", ""},
		role{NoAccessUser, "LOGIN", NoAccessPassword, "scram-sha-256"},
	)
}

// rolesSQL creates each missing role, hashing its password with the role's
// encryption. Existing roles are left untouched.
func rolesSQL(roles []role) string {
	var b strings.Builder
	b.WriteString("DO $pgtest$\nBEGIN\n")
	for _, r := range roles {
		fmt.Fprintf(&b, "  IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = %s) THEN\n", quoteLiteral(r.name))
		if r.encryption != "" {
			fmt.Fprintf(&b, "    PERFORM pg_catalog.set_config('password_encryption', %s, true);\n", quoteLiteral(r.encryption))
		}
		fmt.Fprintf(&b, "    CREATE ROLE %s %s", quoteIdent(r.name), r.attrs)
		if r.password != "" {
			fmt.Fprintf(&b, " PASSWORD %s", quoteLiteral(r.password))
		}
		b.WriteString(";\n  END IF;\n")
	}
	b.WriteString("END\n$pgtest$")
	return b.String()
}

// bootstrap creates the test roles and database in the local cluster,
// connecting through the unix socket as the initdb superuser "postgres".
func (s *Server) bootstrap(ctx context.Context) error {
	cfg, err := pgconn.ParseConfig(connString(s.Dir, s.Port, "postgres", "", "postgres"))
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	return ensureObjects(ctx, cfg, testRoles(s.SuperPassword))
}

// ensureObjects creates whatever of roles and TestDatabase is missing,
// connecting with cfg (to cfg's database, then to TestDatabase).
func ensureObjects(ctx context.Context, cfg *pgconn.Config, roles []role) error {
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bootstrap: connect as %s: %w", cfg.User, err)
	}
	defer conn.Close(context.Background())

	if err := execAll(ctx, conn, rolesSQL(roles)); err != nil {
		return fmt.Errorf("bootstrap: create roles: %w", err)
	}
	res := conn.ExecParams(ctx, "SELECT FROM pg_catalog.pg_database WHERE datname = $1",
		[][]byte{[]byte(TestDatabase)}, nil, nil, nil).Read()
	if res.Err != nil {
		return fmt.Errorf("bootstrap: look up database %s: %w", TestDatabase, res.Err)
	}
	if len(res.Rows) == 0 {
		// CREATE DATABASE cannot run inside the implicit transaction of a
		// multi-statement query, so it is sent on its own.
		sql := fmt.Sprintf("CREATE DATABASE %s OWNER %s", quoteIdent(TestDatabase), quoteIdent(AppUser))
		if err := execAll(ctx, conn, sql); err != nil {
			return fmt.Errorf("bootstrap: create database %s: %w", TestDatabase, err)
		}
	}

	dbCfg := cfg.Copy()
	dbCfg.Database = TestDatabase
	dbConn, err := pgconn.ConnectConfig(ctx, dbCfg)
	if err != nil {
		return fmt.Errorf("bootstrap: connect to %s: %w", TestDatabase, err)
	}
	defer dbConn.Close(context.Background())
	// Since PG 15 public belongs to pg_database_owner, which AppUser is; the
	// grant makes the same true on older servers and external databases.
	if err := execAll(ctx, dbConn, "GRANT ALL ON SCHEMA public TO "+quoteIdent(AppUser)); err != nil {
		return fmt.Errorf("bootstrap: grant schema public to %s: %w", AppUser, err)
	}
	return nil
}

// execAll runs sql (one or more statements) with the simple protocol and
// returns the first error.
func execAll(ctx context.Context, conn *pgconn.PgConn, sql string) error {
	results, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// randomPassword returns 32 random hex characters.
func randomPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
