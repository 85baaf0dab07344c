// Package s3test starts a throwaway real S3-compatible server for
// integration tests: versitygw (github.com/versity/versitygw, Apache-2.0)
// with its posix backend, on a loopback port, over a new directory.
//
// The binary comes from PGACCEL_VERSITYGW when that names a file, else from
// the user cache (os.UserCacheDir()/pgaccel/versitygw-<Version>/versitygw),
// built there on first use with `go install` from the Go module proxy, as
// the Postgres binaries are found by pgtest. If it can be neither found nor
// built, Start's error gives the command that builds it. The server dies
// with the process that started it (Pdeathsig) or at Stop.
package s3test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Module and Version are the versitygw the harness builds.
const (
	Module  = "github.com/versity/versitygw/cmd/versitygw"
	Version = "v1.8.0"
)

// Server is a running versitygw.
type Server struct {
	// Endpoint is its base URL (http://127.0.0.1:port).
	Endpoint string
	// AccessKey and SecretKey are its root user's credentials; Region is
	// the region it signs for.
	AccessKey, SecretKey, Region string
	// Dir is the posix backend's directory: a bucket is a directory in it,
	// an object a file.
	Dir string

	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

var buildMu sync.Mutex

// Binary returns the path of the versitygw binary, building it into the
// user cache if it is not there.
func Binary(ctx context.Context) (string, error) {
	if p := os.Getenv("PGACCEL_VERSITYGW"); p != "" {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		return "", fmt.Errorf("PGACCEL_VERSITYGW=%s is not a file", p)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "pgaccel", "versitygw-"+Version)
	bin := filepath.Join(dir, "versitygw")
	buildMu.Lock()
	defer buildMu.Unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Another process may build it at the same time: each builds into a
	// directory of its own and renames the binary into place.
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", Module+"@"+Version)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build versitygw %s: %v\n%s\nbuild it with: GOBIN=%s go install %s@%s",
			Version, err, tail(string(out), 2000), dir, Module, Version)
	}
	if err := os.Rename(filepath.Join(tmp, "versitygw"), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// Start starts versitygw over a new directory on a free loopback port and
// waits until it accepts connections.
func Start(ctx context.Context) (*Server, error) {
	bin, err := Binary(ctx)
	if err != nil {
		return nil, err
	}
	var last error
	for range 3 {
		s, err := start(ctx, bin)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

func start(ctx context.Context, bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "s3test-")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{
		Endpoint:  "http://127.0.0.1:" + strconv.Itoa(port),
		AccessKey: "pgaccel-test", SecretKey: "pgaccel-test-secret", Region: "us-east-1",
		Dir: data, done: make(chan struct{}),
	}
	s.log, err = os.Create(filepath.Join(dir, "versitygw.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.cmd = exec.Command(bin, "--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region,
		"--port", "127.0.0.1:"+strconv.Itoa(port), "--quiet", "posix", data)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		s.log.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			out := s.LogTail(2000)
			s.cleanup()
			return nil, fmt.Errorf("versitygw exited at start: %s", out)
		case <-ctx.Done():
			_ = s.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out := s.LogTail(2000)
			_ = s.Stop()
			return nil, fmt.Errorf("versitygw did not accept connections within 30s: %s", out)
		}
	}
}

// Stop kills the server and removes its directory.
func (s *Server) Stop() error {
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		return errors.New("versitygw did not exit")
	}
	s.cleanup()
	return nil
}

func (s *Server) cleanup() {
	s.log.Close()
	os.RemoveAll(filepath.Dir(s.Dir))
}

// LogTail returns the last n bytes of the server's log.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.log.Name())
	if err != nil {
		return ""
	}
	return tail(string(b), n)
}

func tail(s string, n int) string {
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return strings.TrimSpace(s)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
