package integration

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// TestCLI_DemoShowsAWriteAtTheOrigin runs pgaccel demo as a user would:
// it prints how to connect, the status table and the timed query; a row
// inserted at the origin is served through pgaccel after the refresh
// interval; SIGINT stops it and removes the origin.
func TestCLI_DemoShowsAWriteAtTheOrigin(t *testing.T) {
	bin := pgaccelBinary(t)
	cmd := exec.Command(bin, "demo", "-listen", "127.0.0.1:0", "-admin", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// Read stdout until the demo is ready, then keep draining it.
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out strings.Builder
	deadline := time.After(3 * time.Minute)
	for !strings.Contains(out.String(), "Press Ctrl-C to stop") {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("demo ended early:\n%s\nstderr:\n%s", out.String(), stderr.String())
			}
			out.WriteString(l + "\n")
		case <-deadline:
			t.Fatalf("demo not ready after 3 minutes:\n%s\nstderr:\n%s", out.String(), stderr.String())
		}
	}
	go func() {
		for l := range lines {
			_ = l
		}
	}()
	text := out.String()
	for _, want := range []string{"Connect through pgaccel:", "Admin port:               http://127.0.0.1:", "orders     full  Ready   200000",
		"customers  full  Ready   1000", "the same rows both ways", "through pgaccel:", "The datasets refresh every 10s"} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q:\n%s", want, text)
		}
	}
	dsns := regexp.MustCompile(`Connect (?:through pgaccel|to the origin): +psql "([^"]+)"`).FindAllStringSubmatch(text, -1)
	if len(dsns) != 2 {
		t.Fatalf("demo output lacks the two psql lines:\n%s", text)
	}
	proxyDSN, originDSN := dsns[0][1], dsns[1][1]

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	query := func(dsn, sql string) string {
		t.Helper()
		c, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer c.Close(context.Background())
		res := c.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
		if res.Err != nil {
			t.Fatalf("%s: %v", sql, res.Err)
		}
		if len(res.Rows) == 0 {
			return ""
		}
		return string(res.Rows[0][0])
	}
	// The demo user writes at the origin and through pgaccel.
	query(originDSN, "INSERT INTO orders VALUES (200001, 1, 'paid', 9.99, now())")
	query(proxyDSN, "INSERT INTO customers VALUES (1001, 'through pgaccel', 'DE', now())")
	start := time.Now()
	for query(proxyDSN, "SELECT count(*) FROM orders") != "200001" {
		if time.Since(start) > 40*time.Second {
			t.Fatalf("the write at the origin is not served through pgaccel after %v", time.Since(start))
		}
		time.Sleep(500 * time.Millisecond)
	}

	stopCommand(t, cmd, syscall.SIGINT, time.Minute, stderr)
	// (An external origin, PGACCEL_TEST_ORIGIN_DSN, is not the demo's to stop.)
	if c, err := pgconn.Connect(ctx, originDSN); err == nil && os.Getenv(pgtest.OriginDSNEnv) == "" {
		c.Close(context.Background())
		t.Error("the demo origin still accepts connections after the demo stopped")
	}
}
