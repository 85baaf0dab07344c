package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// OriginDSNEnv names the environment variable that points the harness at an
// already running server instead of starting one. Its DSN must name a
// superuser (or a role allowed to create the test roles and database).
const OriginDSNEnv = "PGACCEL_TEST_ORIGIN_DSN"

// Server is a running PostgreSQL: a throwaway local cluster, or an external
// server named by PGACCEL_TEST_ORIGIN_DSN.
type Server struct {
	Host     string // "127.0.0.1" for a local cluster
	Port     int
	Database string // TestDatabase

	// SuperUser and SuperPassword log in over TCP with SCRAM-SHA-256 and
	// superuser rights (for an external server: the DSN's user).
	SuperUser, SuperPassword string

	Dir      string // the temp dir holding the cluster, its socket and log; "" when External
	External bool   // true when described by PGACCEL_TEST_ORIGIN_DSN; Stop leaves it alone

	// CACert is the PEM of the local server's self-signed certificate
	// (TLS is on; sslmode=require connects with it). Nil when External.
	CACert []byte

	binDir, dataDir, logFile string
	cred                     *syscall.Credential // the postgres OS user when running as root, else nil

	watchdog     *exec.Cmd
	watchdogPipe *os.File

	stopOnce sync.Once
	stopErr  error
}

// Start starts a throwaway local PostgreSQL and creates the test roles and
// database in it. If PGACCEL_TEST_ORIGIN_DSN is set it starts nothing: it
// returns an External server described by that DSN, after creating whichever
// test roles and database are missing there.
//
// The error for missing server binaries says how to install them.
func Start(ctx context.Context) (*Server, error) {
	if dsn := os.Getenv(OriginDSNEnv); dsn != "" {
		return startExternal(ctx, dsn)
	}
	return startLocal(ctx)
}

// startExternal describes the server named by dsn and prepares it.
func startExternal(ctx context.Context, dsn string) (*Server, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		// The parse error may quote the DSN, password included.
		return nil, fmt.Errorf("%s is not a valid connection string; use postgres://user:password@host:port/db", OriginDSNEnv)
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return nil, fmt.Errorf("%s names the unix socket directory %s; the tests need a TCP host:port", OriginDSNEnv, cfg.Host)
	}
	s := &Server{
		Host:          cfg.Host,
		Port:          int(cfg.Port),
		Database:      TestDatabase,
		SuperUser:     cfg.User,
		SuperPassword: cfg.Password,
		External:      true,
	}
	if err := ensureObjects(ctx, cfg, testRoles("")); err != nil {
		return nil, fmt.Errorf("prepare external server from %s: %w", OriginDSNEnv, err)
	}
	return s, nil
}

// Stop stops a local server with a fast shutdown and removes its temp dir.
// It is a no-op for an External server, safe to call more than once and
// from several goroutines; every call returns the first call's result.
func (s *Server) Stop() error {
	if s == nil || s.External {
		return nil
	}
	s.stopOnce.Do(func() {
		var errs []error
		if s.dataDir != "" {
			errs = append(errs, s.pgctlStop())
		}
		if s.Dir != "" {
			if err := os.RemoveAll(s.Dir); err != nil {
				errs = append(errs, fmt.Errorf("remove temp dir: %w", err))
			}
		}
		errs = append(errs, s.stopWatchdog())
		if err := errors.Join(errs...); err != nil {
			s.stopErr = fmt.Errorf("stop postgres in %s: %w", s.Dir, err)
		}
	})
	return s.stopErr
}

// DSN returns a postgres:// URL for user and password to s.Database over
// TCP, with sslmode=disable. An empty password is left out.
func (s *Server) DSN(user, password string) string {
	return connString(s.Host, s.Port, user, password, s.Database)
}

// DatabaseDSN is DSN for another database of the server.
func (s *Server) DatabaseDSN(database, user, password string) string {
	return connString(s.Host, s.Port, user, password, database)
}

// SuperDSN is DSN for SuperUser and SuperPassword.
func (s *Server) SuperDSN() string {
	return s.DSN(s.SuperUser, s.SuperPassword)
}

// Addr returns the server's TCP address, "127.0.0.1:port" for a local one.
func (s *Server) Addr() string {
	return net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
}

// Exec runs sql, which may hold several statements, as the superuser in
// s.Database with the simple protocol. A failing statement's error is a
// *pgconn.PgError.
func (s *Server) Exec(ctx context.Context, sql string) error {
	conn, err := pgconn.Connect(ctx, s.SuperDSN())
	if err != nil {
		return fmt.Errorf("connect as %s: %w", s.SuperUser, err)
	}
	defer conn.Close(context.Background())
	return execAll(ctx, conn, sql)
}

// LogTail returns the last n lines of the server log, for failure messages.
// An External server has no log here.
func (s *Server) LogTail(n int) string {
	if s.External {
		return "(external server: log not available)"
	}
	b, err := os.ReadFile(s.logFile)
	if err != nil {
		return fmt.Sprintf("(server log unreadable: %v)", err)
	}
	lines := strings.Split(string(bytes.TrimRight(b, "\n")), "\n")
	if n >= 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// connString builds a postgres:// URL. A host starting with "/" is a unix
// socket directory and goes in the query string.
func connString(host string, port int, user, password, database string) string {
	u := url.URL{Scheme: "postgres", Path: "/" + database}
	if password != "" {
		u.User = url.UserPassword(user, password)
	} else {
		u.User = url.User(user)
	}
	q := url.Values{"sslmode": {"disable"}}
	if strings.HasPrefix(host, "/") {
		q.Set("host", host)
		q.Set("port", strconv.Itoa(port))
	} else {
		u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Pause stops a local server (fast shutdown) without removing it, to
// simulate an origin outage; Resume starts it again on the same port.
func (s *Server) Pause() error {
	if s.External {
		return errors.New("pgtest: cannot pause an external server")
	}
	return s.pgctlStop()
}

// Resume starts a server stopped by Pause on its port.
func (s *Server) Resume(ctx context.Context) error {
	if s.External {
		return errors.New("pgtest: cannot resume an external server")
	}
	return s.pgctlStart(ctx)
}

// PauseDuring pauses the server for an outage test and returns the function
// that resumes it; if the test ends first, its cleanup resumes the server,
// which the tests that follow share.
func (s *Server) PauseDuring(t testing.TB) (resume func(context.Context) error) {
	t.Helper()
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var err error
	resume = func(ctx context.Context) error {
		once.Do(func() { err = s.Resume(ctx) })
		return err
	}
	t.Cleanup(func() {
		if err := resume(context.Background()); err != nil {
			t.Errorf("resume the paused origin: %v", err)
		}
	})
	return resume
}
