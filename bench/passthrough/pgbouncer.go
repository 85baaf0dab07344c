package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pgaccel/pgaccel/internal/pgtest"
)

const (
	pgbouncerPath    = "/usr/sbin/pgbouncer"
	pgbouncerInstall = "apt-get update && apt-get install -y pgbouncer"

	// pgbouncerPoolSize is default_pool_size: more than the most clients a
	// case uses, so that session mode never makes a client wait.
	pgbouncerPoolSize = 20

	pgbouncerReadyTimeout = 15 * time.Second
	pgbouncerStopTimeout  = 10 * time.Second
	portAttempts          = 5
)

// checkPgbouncer fails, saying how to install it, when pgbouncer is missing.
func checkPgbouncer() error {
	if fi, err := os.Stat(pgbouncerPath); err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s not found; install it with: %s", pgbouncerPath, pgbouncerInstall)
	}
	return nil
}

// pgbouncerVersion is the first line of `pgbouncer --version`.
func pgbouncerVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, pgbouncerPath, "--version").Output()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// pgbouncer is a pgbouncer child process in session pool mode in front of
// the origin, in a temp dir of its own.
type pgbouncer struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan error // receives cmd.Wait's result
}

// startPgbouncer writes the config and auth file and starts pgbouncer on a
// free loopback port, picking another port if the chosen one was taken in
// the meantime. Clients log in with SCRAM-SHA-256 as the origin superuser,
// and pgbouncer logs in to the origin with the same credentials.
func startPgbouncer(ctx context.Context, origin *pgtest.Server) (_ *pgbouncer, err error) {
	cred, err := pgbouncerCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgbouncer-bench-")
	if err != nil {
		return nil, fmt.Errorf("create pgbouncer dir: %w", err)
	}
	b := &pgbouncer{dir: dir}
	defer func() {
		if err != nil {
			_ = b.stop()
		}
	}()
	if err := chownTo(dir, cred); err != nil {
		return nil, err
	}
	userlist := fmt.Sprintf("%q %q\n", origin.SuperUser, origin.SuperPassword)
	if err := writeOwned(filepath.Join(dir, "userlist.txt"), userlist, cred); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		err = b.start(ctx, origin, port, cred)
		if err == nil {
			return b, nil
		}
		if attempt+1 == portAttempts || !strings.Contains(b.logTail(), "Address already in use") {
			return nil, err
		}
	}
}

// start runs pgbouncer in the foreground on port and waits until it accepts
// connections.
func (b *pgbouncer) start(ctx context.Context, origin *pgtest.Server, port int, cred *syscall.Credential) error {
	ini := filepath.Join(b.dir, "pgbouncer.ini")
	if err := writeOwned(ini, b.config(origin, port), cred); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(b.dir, "pgbouncer.log"))
	if err != nil {
		return fmt.Errorf("create pgbouncer log: %w", err)
	}
	defer logf.Close() // the child keeps its own descriptor

	cmd := exec.Command(pgbouncerPath, ini)
	cmd.Dir = b.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: cred,
		// Own process group: a Ctrl-C reaches this process, which then
		// stops pgbouncer, not pgbouncer directly.
		Setpgid: true,
		// If this process dies without stopping it, so does pgbouncer.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start pgbouncer: %w", err)
	}
	b.cmd, b.port = cmd, port
	b.done = make(chan error, 1)
	go func() { b.done <- cmd.Wait() }()

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(pgbouncerReadyTimeout)
	for {
		select {
		case err := <-b.done:
			b.done <- err // for stop
			return fmt.Errorf("pgbouncer exited at start (%v); its log:\n%s", err, b.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgbouncer did not accept connections on %s within %v; its log:\n%s", addr, pgbouncerReadyTimeout, b.logTail())
		}
	}
}

// config is pgbouncer.ini: one database, the origin's, in session mode.
func (b *pgbouncer) config(origin *pgtest.Server, port int) string {
	return fmt.Sprintf(`; written by bench/passthrough
[databases]
%s = host=%s port=%d dbname=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = scram-sha-256
auth_file = %s
pool_mode = session
default_pool_size = %d
max_client_conn = 100
server_tls_sslmode = disable
log_connections = 0
log_disconnections = 0
`, origin.Database, origin.Host, origin.Port, origin.Database,
		port, filepath.Join(b.dir, "userlist.txt"), pgbouncerPoolSize)
}

func (b *pgbouncer) target() target {
	return target{name: targetPgbouncer, host: "127.0.0.1", port: b.port, cpu: b.cpuTime}
}

// userHZ is the unit of the times in /proc/<pid>/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const userHZ = 100

// cpuTime is pgbouncer's CPU time.
func (b *pgbouncer) cpuTime() (cpuTimes, error) {
	return procCPU(b.cmd.Process.Pid)
}

// cpuTimes is a process's CPU time in user space and in the kernel.
type cpuTimes struct{ user, system time.Duration }

func (c cpuTimes) sub(d cpuTimes) cpuTimes {
	return cpuTimes{user: c.user - d.user, system: c.system - d.system}
}

// procCPU is a process's CPU time, utime and stime of /proc/<pid>/stat.
func procCPU(pid int) (cpuTimes, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return cpuTimes{}, fmt.Errorf("read the CPU time of process %d: %w", pid, err)
	}
	// The fields after the parenthesized command name start with the
	// state (field 3); utime and stime are fields 14 and 15.
	var fields []string
	if i := bytes.LastIndexByte(data, ')'); i >= 0 {
		fields = strings.Fields(string(data[i+1:]))
	}
	if len(fields) < 13 {
		return cpuTimes{}, fmt.Errorf("read the CPU time of process %d: unexpected /proc/%d/stat", pid, pid)
	}
	var ticks [2]int64
	for i, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("read the CPU time of process %d: %w", pid, err)
		}
		ticks[i] = n
	}
	return cpuTimes{user: time.Duration(ticks[0]) * time.Second / userHZ, system: time.Duration(ticks[1]) * time.Second / userHZ}, nil
}

// stop ends pgbouncer (SIGTERM: immediate shutdown, then SIGKILL if it
// lingers) and removes its dir. It is safe on a pgbouncer that never
// started.
func (b *pgbouncer) stop() error {
	var errs []error
	if b.cmd != nil && b.cmd.Process != nil {
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.done:
		case <-time.After(pgbouncerStopTimeout):
			_ = b.cmd.Process.Kill()
			<-b.done
			errs = append(errs, fmt.Errorf("pgbouncer ignored SIGTERM for %v; killed it", pgbouncerStopTimeout))
		}
		b.cmd = nil
	}
	if err := os.RemoveAll(b.dir); err != nil {
		errs = append(errs, fmt.Errorf("remove pgbouncer dir: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop pgbouncer: %w", err)
	}
	return nil
}

// logTail is the end of pgbouncer's log, for error messages.
func (b *pgbouncer) logTail() string {
	data, err := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// pgbouncerCredential is the OS user "postgres" when this process is root
// (pgbouncer refuses to run as root), else nil: run as ourselves.
func pgbouncerCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	return pgtest.PostgresCredential()
}

func chownTo(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("chown %s to OS user postgres: %w", path, err)
	}
	return nil
}

// writeOwned writes a private file readable by pgbouncer.
func writeOwned(path, content string, cred *syscall.Credential) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return chownTo(path, cred)
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
