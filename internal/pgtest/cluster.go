package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// portAttempts bounds how often startLocal picks a new port after the one it
// chose was taken by someone else between probing and binding.
const portAttempts = 5

// maxSocketPath is the longest unix socket path Linux accepts (sun_path
// holds 108 bytes including the terminating NUL).
const maxSocketPath = 107

// startLocal creates, configures and starts a throwaway cluster in a new
// temporary directory. On error nothing is left behind.
func startLocal(ctx context.Context) (_ *Server, err error) {
	binDir, err := findBinDir(ctx)
	if err != nil {
		return nil, err
	}
	s := &Server{
		Host:      "127.0.0.1",
		Database:  TestDatabase,
		SuperUser: SuperUser,
		binDir:    binDir,
	}
	if s.SuperPassword, err = randomPassword(); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		if s.cred, err = PostgresCredential(); err != nil {
			return nil, err
		}
	}
	if err := s.makeDir(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if stopErr := s.Stop(); stopErr != nil {
				err = fmt.Errorf("%w (cleanup: %v)", err, stopErr)
			}
		}
	}()
	if err := s.startWatchdog(); err != nil {
		return nil, err
	}
	if err := s.initdb(ctx); err != nil {
		return nil, err
	}
	if err := s.writeServerCert(); err != nil {
		return nil, err
	}
	if err := s.startWithFreePort(ctx); err != nil {
		return nil, err
	}
	if err := s.bootstrap(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// PostgresCredential returns the credential of the "postgres" OS user, used
// to run the server programs when this process is root (initdb, postgres
// and pgbouncer refuse to run as root).
func PostgresCredential() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the OS user \"postgres\" to own the test server, "+
			"but looking it up failed: %w; install the server package (%s), which creates it, "+
			"or run the tests as a non-root user", err, InstallHint)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("parse uid of OS user postgres: %w", err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("parse gid of OS user postgres: %w", err)
	}
	// Groups left empty: the children drop root's supplementary groups.
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// makeDir creates the temporary directory and, when running as root, hands
// it to the postgres OS user after checking it can reach it.
func (s *Server) makeDir() error {
	dir, err := os.MkdirTemp(os.TempDir(), "pgtest-")
	if err != nil {
		return fmt.Errorf("create temp dir: %w", err)
	}
	s.Dir = dir
	s.dataDir = filepath.Join(dir, "data")
	s.logFile = filepath.Join(dir, "postgres.log")

	// The socket file is named .s.PGSQL.<port> (at most 5 digits) plus a
	// ".lock" sibling; both must fit.
	if n := len(filepath.Join(dir, ".s.PGSQL.65535.lock")); n > maxSocketPath {
		return fmt.Errorf("temp dir %s is too long for a unix socket path (%d > %d bytes); set TMPDIR to a short path such as /tmp",
			dir, n, maxSocketPath)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("chmod temp dir: %w", err)
	}
	if s.cred == nil {
		return nil
	}
	if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
		return fmt.Errorf("chown temp dir %s to OS user postgres: %w", dir, err)
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("check temp dir parent: %w", err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("OS user postgres cannot traverse %s (mode %v), a parent of the temp dir; "+
				"set TMPDIR to a world-traversable directory such as /tmp", p, fi.Mode().Perm())
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// command builds an exec.Cmd for one of the server programs, run as the
// postgres OS user when this process is root, in the temp dir, with the
// PG* variables of this process removed so that they cannot redirect it.
func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	env := []string{"LC_ALL=C"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "LANG") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	return cmd
}

// initdb creates the cluster with the superuser "postgres", UTF8 and the C
// locale, without fsync.
func (s *Server) initdb(ctx context.Context) error {
	initdb := filepath.Join(s.binDir, "initdb")
	args := []string{
		"-D", s.dataDir, "-U", "postgres", "-E", "UTF8", "--locale=C",
		"--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync",
	}
	if initdbSupports(ctx, s.binDir, "--no-instructions") {
		args = append(args, "--no-instructions")
	}
	if out, err := s.command(ctx, initdb, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("initdb %s: %w\n%s", s.dataDir, err, out)
	}
	if err := s.writeFile(filepath.Join(s.dataDir, "pg_hba.conf"), hbaConf); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open postgresql.conf: %w", err)
	}
	_, err = fmt.Fprintf(f, "\n# added by pgtest\ninclude 'pgtest.conf'\n")
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return fmt.Errorf("append to postgresql.conf: %w", err)
	}
	return nil
}

// hbaConf lets the local superuser in through the socket without a password
// and makes TCP logins use trust, md5 or SCRAM according to the role.
const hbaConf = `# written by pgtest
# TYPE  DATABASE     USER       ADDRESS       METHOD
local   all          all                      trust
local   replication  all                      trust
host    all          trustuser  127.0.0.1/32  trust
host    replication  trustuser  127.0.0.1/32  trust
host    all          md5user    127.0.0.1/32  md5
host    replication  md5user    127.0.0.1/32  md5
host    all          all        127.0.0.1/32  scram-sha-256
host    replication  all        127.0.0.1/32  scram-sha-256
`

// conf is the server configuration for port: loopback TCP, the socket in
// the temp dir, logical replication, no durability, room for 200 clients
// behind a proxy.
func (s *Server) conf(port int) string {
	return fmt.Sprintf(`# written by pgtest; included from postgresql.conf
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
unix_socket_permissions = 0700
max_connections = 300
shared_buffers = 128MB
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
fsync = off
synchronous_commit = off
full_page_writes = off
logging_collector = off
log_connections = on
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
`, port, strings.ReplaceAll(s.Dir, "'", "''")) + s.preload()
}

// preload loads pg_stat_statements when the installation has it (Debian's
// postgresql-NN packages do), so tests can see which statements a role
// ran at the origin (HasStatStatements).
func (s *Server) preload() string {
	if !s.HasStatStatements() {
		return ""
	}
	return "shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = all\n"
}

// HasStatStatements says whether the installation has pg_stat_statements,
// which a local server then preloads.
func (s *Server) HasStatStatements() bool {
	if s.External || s.binDir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(s.binDir, "..", "lib", "pg_stat_statements.so"))
	return err == nil
}

// startWithFreePort picks a free loopback port, writes it into pgtest.conf
// and starts the server, picking another port when the chosen one was taken
// in the meantime (another test binary may probe at the same moment).
func (s *Server) startWithFreePort(ctx context.Context) error {
	var lastErr error
	for attempt := 0; attempt < portAttempts; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.Port = port
		if err := s.writeFile(filepath.Join(s.dataDir, "pgtest.conf"), s.conf(port)); err != nil {
			return err
		}
		lastErr = s.pgctlStart(ctx)
		if lastErr == nil || !s.portConflict() {
			return lastErr
		}
		// Truncate the log so the next attempt's conflict check sees only
		// its own messages.
		if err := s.writeFile(s.logFile, ""); err != nil {
			return err
		}
	}
	return fmt.Errorf("start postgres: every port tried was taken: %w", lastErr)
}

// pgctlStart runs pg_ctl start and waits until the server accepts
// connections. pg_ctl puts the postmaster in its own session, so a Ctrl-C at
// the terminal reaches this process (which then stops the server) and not
// the postmaster directly.
func (s *Server) pgctlStart(ctx context.Context) error {
	pgctl := filepath.Join(s.binDir, "pg_ctl")
	out, err := s.command(ctx, pgctl, "start", "-w", "-t", "120", "-D", s.dataDir, "-l", s.logFile).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl start: %w\n%s\nserver log:\n%s", err, out, s.LogTail(20))
	}
	return nil
}

// portConflict reports whether the last start failed because the port was
// in use. The postmaster reports this only as log text (errno EADDRINUSE).
func (s *Server) portConflict() bool {
	return strings.Contains(s.LogTail(50), "Address already in use")
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	return port, nil
}

// writeFile writes content to path, owned by the postgres OS user when this
// process is root.
func (s *Server) writeFile(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if s.cred != nil {
		if err := os.Chown(path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fmt.Errorf("chown %s: %w", filepath.Base(path), err)
		}
	}
	return nil
}

// pgctlStop stops the server with a fast shutdown. A server that is not
// running (never started, or already gone) is not an error.
func (s *Server) pgctlStop() error {
	if _, err := os.Stat(filepath.Join(s.dataDir, "postmaster.pid")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	pgctl := filepath.Join(s.binDir, "pg_ctl")
	out, err := s.command(context.Background(), pgctl, "stop", "-w", "-t", "60", "-m", "fast", "-D", s.dataDir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}
