package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/admin"
)

func TestHumanDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{21380459829 * time.Nanosecond, "21.4s"},
		{350123456 * time.Nanosecond, "350ms"},
		{1234567 * time.Nanosecond, "1.23ms"},
		{999 * time.Nanosecond, "999ns"},
		{12345 * time.Nanosecond, "12.3µs"},
		{1500 * time.Millisecond, "1.5s"},
		{59960 * time.Millisecond, "1m"},
		{time.Minute, "1m"},
		{125400 * time.Millisecond, "2m5s"},
		{time.Hour, "1h"},
		{time.Hour + 2*time.Minute + 400*time.Millisecond, "1h2m"},
		{time.Hour + 5*time.Second, "1h0m5s"},
		{-350123456 * time.Nanosecond, "-350ms"},
	} {
		if got := humanDuration(c.d); got != c.want {
			t.Errorf("humanDuration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestNewLogger_ConsoleDurationsAndNoColour(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, "info", logConsole)
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Str("dataset", "orders").Dur("duration", 21380459829*time.Nanosecond).
		Dur("retry_in", 350*time.Millisecond).Str("refresh_mode", "full").Msg("refresh done")
	out := buf.String()
	for _, want := range []string{"duration=21.4s", "retry_in=350ms", "dataset=orders", "refresh_mode=full", "refresh done"} {
		if !strings.Contains(out, want) {
			t.Errorf("console line lacks %q: %q", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("console output to a buffer has colour codes: %q", out)
	}
}

func TestNewLogger_JSONDurationsInSeconds(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, "info", logJSON)
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Dur("duration", 21380459829*time.Nanosecond).Dur("retry_in", 350*time.Millisecond).Msg("refresh done")
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("not JSON: %v: %q", err, buf.String())
	}
	if m["duration"] != 21.380459829 || m["retry_in"] != 0.35 {
		t.Errorf("durations are not seconds: duration=%v retry_in=%v in %q", m["duration"], m["retry_in"], buf.String())
	}
	if _, err := time.Parse(time.RFC3339Nano, m[zerolog.TimestampFieldName].(string)); err != nil {
		t.Errorf("time is not RFC 3339: %v", err)
	}
}

func TestNewLogger_BadFlags(t *testing.T) {
	if _, err := newLogger(&bytes.Buffer{}, "loud", logConsole); err == nil || !strings.Contains(err.Error(), "-log-level") {
		t.Errorf("bad level: %v", err)
	}
	if _, err := newLogger(&bytes.Buffer{}, "info", "xml"); err == nil || !strings.Contains(err.Error(), "-log-format") {
		t.Errorf("bad format: %v", err)
	}
}

func TestIsTerminal_FilesAndPipes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, out := range map[string]io.Writer{"pipe": w, "file": f, "buffer": &bytes.Buffer{}} {
		if isTerminal(out) {
			t.Errorf("isTerminal(%s) = true", name)
		}
	}
}

func TestDemoPort_TakenPorts(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()

	var out bytes.Buffer
	if _, _, err := demoPort(addr, "-listen", true, &out); err == nil || !strings.Contains(err.Error(), "-listen "+addr) {
		t.Errorf("taken port given with -listen: err = %v", err)
	}
	ln, free, err := demoPort(addr, "-admin", false, &out)
	if err != nil {
		t.Fatalf("taken default port: %v", err)
	}
	defer ln.Close()
	if free == addr || ln.Addr().String() != free {
		t.Errorf("taken default port: got %s (listener %s), want another free port", free, ln.Addr())
	}
	if want := addr + " is in use (another pgaccel demo?): using " + free + " instead (choose one with -admin)\n"; out.String() != want {
		t.Errorf("message %q, want %q", out.String(), want)
	}
}

// TestSlots_UsageBeforeConfig: a wrong slots command prints the usage
// (exit 2) before it looks for a config or an admin port.
func TestSlots_UsageBeforeConfig(t *testing.T) {
	for _, args := range [][]string{{"bogus"}, {"drop"}, {"drop", "a", "b"}} {
		var out, errOut bytes.Buffer
		err := cmdSlots(append(args, "-c", "/nonexistent/pgaccel.yaml"), strings.NewReader(""), &out, &errOut)
		if e, ok := err.(exitError); !ok || e != 2 || !strings.Contains(errOut.String(), "Usage: pgaccel slots") {
			t.Errorf("pgaccel slots %v: %v, stderr %q", args, err, errOut.String())
		}
	}
}

// TestValidate_Params: validate refuses a params key in the wrong block
// and warns about one pgaccel does not read; neither is silent.
func TestValidate_Params(t *testing.T) {
	const head = "origin:\n  dsn: postgres://app@127.0.0.1/db\ndatasets:\n  - from: postgres:public.orders\n"
	for _, tc := range []struct {
		name, body string
		exit       bool
		stderr     string
	}{
		{"pg_publication under acceleration.params",
			"    acceleration:\n      refresh_mode: changes\n      primary_key: [id]\n      params:\n        pg_publication: orders_pub\n", true,
			`:9: dataset "orders": acceleration.params.pg_publication: is read from params.pg_publication, not from acceleration.params.pg_publication: here it would be ignored; move it to params (the dataset's own params block, beside acceleration:)`},
		{"a connector param", "    params:\n      pg_host: db.example.com\n", false,
			`warning: `},
	} {
		path := filepath.Join(t.TempDir(), "pgaccel.yaml")
		if err := os.WriteFile(path, []byte(head+tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		err := cmdValidate(t.Context(), []string{"-c", path}, &stdout, &stderr)
		if (err != nil) != tc.exit || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%s: %v\nstdout: %s\nstderr: %s\nwant %q", tc.name, err, stdout.String(), stderr.String(), tc.stderr)
		}
		if !tc.exit && !strings.Contains(stderr.String(), `dataset "orders": params.pg_host: is not a parameter pgaccel reads: it is ignored; pgaccel reads every dataset through origin.dsn`) {
			t.Errorf("%s: stderr %s", tc.name, stderr.String())
		}
	}
}

func TestPrintStatus_NotesAndColumnsLeftOut(t *testing.T) {
	var b strings.Builder
	zero := int64(0)
	rows := []admin.DatasetStatus{{Name: "shapes", RefreshMode: "full", AccelerationEnabled: true, Status: "Ready", Rows: &zero,
		Notes:                 []string{admin.NoteNothingToAccelerate},
		ColumnsNotAccelerated: []admin.ColumnNotAccelerated{{Name: "p", Type: "point", Reason: "type point has no DuckDB type that holds its values exactly"}}}}
	if err := printStatus(&b, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shapes: " + admin.NoteNothingToAccelerate, "shapes.p (point) is not accelerated"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("pgaccel status lacks %q:\n%s", want, b.String())
		}
	}
}
