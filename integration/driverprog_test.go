package integration

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// driverProgram is a program that drives a real client driver through
// pgaccel (testdata/jdbc, testdata/psycopg, testdata/asyncpg) in phases:
// it prints "OK <step>" or "FAIL <step>: <SQLSTATE> <message>" for each
// step and "PHASE <name> done" at the end of a phase, then waits for a
// line on stdin before the next one.
type driverProgram struct {
	t      *testing.T
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *strings.Builder
	// got is each step's outcome: "OK" or the failure's text.
	got map[string]string
}

// startDriverProgram starts name with args, to be killed after timeout;
// the test's cleanup closes its stdin and waits for it, failing the test
// if it failed.
func startDriverProgram(t *testing.T, timeout time.Duration, name string, args ...string) *driverProgram {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel) // after the wait below (cleanups run last first)
	cmd := exec.CommandContext(ctx, name, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &driverProgram{t: t, stdin: stdin, out: bufio.NewReader(stdout), stderr: &strings.Builder{}, got: map[string]string{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, p.stderr.String())
		}
	})
	return p
}

// phase reads the steps of phase name up to its end.
func (p *driverProgram) phase(name string) {
	p.t.Helper()
	for {
		line, err := p.out.ReadString('\n')
		if err != nil {
			p.t.Fatalf("phase %s: %v\n%s", name, err, p.stderr.String())
		}
		line = strings.TrimSpace(line)
		if line == "PHASE "+name+" done" {
			return
		}
		if step, ok := strings.CutPrefix(line, "OK "); ok {
			p.got[step] = "OK"
		} else if rest, ok := strings.CutPrefix(line, "FAIL "); ok {
			step, msg, _ := strings.Cut(rest, ": ")
			p.got[step] = msg
		}
	}
}

// next starts the program's next phase.
func (p *driverProgram) next() {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
		p.t.Fatal(err)
	}
}

// expect checks that step's outcome starts with want ("OK", or a SQLSTATE).
func (p *driverProgram) expect(step, want string) {
	p.t.Helper()
	if g := p.got[step]; !strings.HasPrefix(g, want) {
		p.t.Errorf("%s: %q, want %q", step, g, want)
	}
}
