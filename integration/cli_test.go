package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// pgaccelBinary builds cmd/pgaccel once per test binary.
func pgaccelBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pgaccel-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "pgaccel")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/pgaccel")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestCLI_ValidatePrintsEveryProblem(t *testing.T) {
	bin := pgaccelBinary(t)
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	body := `origin:
  dsn: postgres://app@127.0.0.1/db
server:
  listn: 127.0.0.1:1
datasets:
  - from: postgres:public.orders
    acceleration:
      refresh_check_interval: 10m
      refresh_cron: "0 * * * *"
      engine: sqlite
  - from: mysql:shop.orders
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "validate", "-c", cfg).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("validate of a bad config: want exit 1, got %v\n%s", err, out)
	}
	for _, want := range []string{"bad.yaml:4:", "listn", "bad.yaml:9:", "refresh_cron", "bad.yaml:10:", "engine", "bad.yaml:11:", "postgres:"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(string(out), "problems in "+cfg) {
		t.Errorf("validate output lacks the problem count:\n%s", out)
	}

	good := filepath.Join(t.TempDir(), "good.yaml")
	if err := os.WriteFile(good, []byte("origin:\n  dsn: postgres://app@127.0.0.1/db\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "validate", "-c", good).CombinedOutput(); err != nil || string(out) != good+": ok (0 datasets)\n" {
		t.Fatalf("validate of a good config: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "pgaccel ") {
		t.Fatalf("version: %v %s", err, out)
	}
}

func TestCLI_RunServesAndDrainsOnSIGTERM(t *testing.T) {
	bin := pgaccelBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := filepath.Join(t.TempDir(), "pgaccel.yaml")
	body := fmt.Sprintf("origin:\n  dsn: ${env:TEST_ORIGIN_DSN}\nserver:\n  listen: %s\nadmin:\n  listen: 127.0.0.1:0\n", addr)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{} // written by the process while the test reads it
	cmd := exec.Command(bin, "run", "-c", cfg, "-log-format", "json")
	cmd.Env = append(os.Environ(), "TEST_ORIGIN_DSN="+origin.SuperDSN())
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	dsn := "postgres://app:app-pass@" + addr + "/" + origin.Database + "?sslmode=disable"
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgaccel run did not listen: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, err := runPsql(t, psqlPath(t), dsn, "-Atc", "SELECT 'through the binary'")
	if err != nil || strings.TrimSpace(out) != "through the binary" {
		t.Fatalf("psql through pgaccel run: %v %s", err, out)
	}
	if strings.Contains(stderr.String(), "app-pass") || strings.Contains(stderr.String(), "password=") {
		t.Errorf("log contains a password:\n%s", stderr.String())
	}
	stopCommand(t, cmd, syscall.SIGTERM, 30*time.Second, stderr)
	_ = context.Background
}

// TestCLI_RunIgnoresSIGHUP: SIGHUP (a terminal hanging up, or an operator
// asking for a reload) neither kills nor drains pgaccel run: it logs a
// warning that the configuration is not reloaded and keeps serving.
// stopCommand sends cmd sig and fails the test unless it exits cleanly
// within d (stderr is shown when it does not).
func stopCommand(t *testing.T, cmd *exec.Cmd, sig os.Signal, d time.Duration, stderr fmt.Stringer) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s exited with %v after %v\nstderr:\n%s", cmd.Path, err, sig, stderr.String())
		}
	case <-time.After(d):
		t.Fatalf("%s did not exit after %v", cmd.Path, sig)
	}
}

// cliResult runs the pgaccel binary with env added and returns its exit
// code, stdout and stderr.
func cliResult(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, pgaccelBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), o.String(), e.String()
	} else if err != nil {
		t.Fatalf("pgaccel %s: %v", strings.Join(args, " "), err)
	}
	return 0, o.String(), e.String()
}

// writeConfig writes body to a new pgaccel.yaml and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pgaccel.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCLI_StatusAndRefreshNeedOnlyTheAdminSettings(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS cli_orders; CREATE TABLE cli_orders (id int PRIMARY KEY, amount int);
		INSERT INTO cli_orders SELECT g, g FROM generate_series(1, 10) g`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS cli_orders") })
	a := startAppTop(t, "admin:\n  listen: 127.0.0.1:0\n  token: cli-t0ken\n", "  - from: postgres:public.cli_orders\n", true)

	// The CLI's config names an origin.dsn whose variable is unset here.
	cfg := writeConfig(t, fmt.Sprintf("origin:\n  dsn: ${env:PGACCEL_CLI_TEST_UNSET_DSN}\nadmin:\n  listen: %s\n  token: ${env:PGACCEL_CLI_TEST_TOKEN}\n", a.AdminAddr()))
	env := []string{"PGACCEL_CLI_TEST_TOKEN=cli-t0ken", "PGACCEL_ADMIN_TOKEN="}
	code, out, errOut := cliResult(t, env, "status", "-c", cfg)
	if code != 0 || !strings.Contains(out, "cli_orders") || !strings.Contains(out, "Ready") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	// Flags after the dataset.
	code, out, errOut = cliResult(t, env, "refresh", "cli_orders", "-c", cfg)
	if code != 0 || !strings.Contains(out, "cli_orders") {
		t.Fatalf("refresh cli_orders -c cfg: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = cliResult(t, env, "refresh", "-c", cfg, "no_such_dataset")
	if code != 1 || !strings.Contains(errOut, "404") {
		t.Errorf("refresh of an unknown dataset: exit %d\n%s", code, errOut)
	}
	code, _, errOut = cliResult(t, env, "refresh", "-c", cfg)
	if code != 2 || !strings.Contains(errOut, "name the dataset to refresh") {
		t.Errorf("refresh without a dataset: exit %d\n%s", code, errOut)
	}
	// Without the token the admin port refuses.
	code, _, errOut = cliResult(t, []string{"PGACCEL_CLI_TEST_TOKEN=wrong", "PGACCEL_ADMIN_TOKEN="}, "status", "-c", cfg)
	if code != 1 || !strings.Contains(errOut, "401") {
		t.Errorf("status with a wrong token: exit %d\n%s", code, errOut)
	}
	// An admin setting that cannot be resolved is an error that names it.
	code, _, errOut = cliResult(t, []string{"PGACCEL_ADMIN_TOKEN="}, "status", "-c", cfg)
	if code != 1 || !strings.Contains(errOut, "admin.token") || !strings.Contains(errOut, "PGACCEL_CLI_TEST_TOKEN") {
		t.Errorf("status with admin.token unresolved: exit %d\n%s", code, errOut)
	}
	// A config named with -c must be readable.
	code, _, errOut = cliResult(t, env, "status", "-c", "/nonexistent/pgaccel.yaml", "-admin", a.AdminAddr())
	if code != 1 || !strings.Contains(errOut, "/nonexistent/pgaccel.yaml") {
		t.Errorf("status -c /nonexistent: exit %d\n%s", code, errOut)
	}
	// -admin and -token need no config at all (the default pgaccel.yaml is
	// missing in the test's directory).
	code, out, errOut = cliResult(t, []string{"PGACCEL_ADMIN_TOKEN=cli-t0ken"}, "status", "-admin", a.AdminAddr())
	if code != 0 || !strings.Contains(out, "cli_orders") {
		t.Errorf("status -admin with the token in $PGACCEL_ADMIN_TOKEN: exit %d\n%s%s", code, out, errOut)
	}
}

func TestCLI_ValidateWarnsAndChecksTheOrigin(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS cli_v_good, cli_v_hidden;
		CREATE TABLE cli_v_good (id int PRIMARY KEY, at timestamptz, kind text);
		CREATE TABLE cli_v_hidden (id int PRIMARY KEY);
		GRANT SELECT ON cli_v_good TO app`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS cli_v_good, cli_v_hidden") })
	env := []string{"PGACCEL_CLI_TEST_DSN=" + origin.DSN(appUser, appPass)}
	good := writeConfig(t, `origin:
  dsn: ${env:PGACCEL_CLI_TEST_DSN}
datasets:
  - from: postgres:public.cli_v_good
    time_column: at
    acceleration:
      refresh_mode: caching
      on_zero_results: use_source
      refresh_sql: SELECT id, at FROM cli_v_good WHERE kind <> 'x'
      retention_sql: DELETE FROM cli_v_good WHERE at < now() - interval '7 days'
`)
	code, out, errOut := cliResult(t, env, "validate", "-c", good)
	if code != 0 || out != good+": ok (1 dataset)\n" ||
		!strings.Contains(errOut, `warning: `+good+`:4: dataset "cli_v_good": acceleration.on_zero_results: on_zero_results is ignored with refresh_mode: caching: a miss always asks the source`) {
		t.Errorf("validate: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	code, out, errOut = cliResult(t, env, "validate", "-origin", "-c", good)
	if code != 0 || out != good+": ok (1 dataset; 1 accelerated dataset checked at the origin)\n" {
		t.Errorf("validate -origin of a good config: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	bad := writeConfig(t, `origin:
  dsn: ${env:PGACCEL_CLI_TEST_DSN}
datasets:
  - from: postgres:public.cli_v_good
    time_column: created
    acceleration:
      refresh_sql: SELECT id FROM cli_v_good WHERE kind = 1
  - from: postgres:public.cli_v_hidden
  - from: postgres:public.cli_v_missing
`)
	code, out, errOut = cliResult(t, env, "validate", "-c", bad, "-origin")
	if code != 1 || out != "" {
		t.Errorf("validate -origin of a bad config: exit %d, stdout %q", code, out)
	}
	for _, want := range []string{
		bad + `:4: dataset "cli_v_good": time_column: "created" is not a column of public.cli_v_good`,
		bad + `:4: dataset "cli_v_good": acceleration.refresh_sql: the refresh's query fails at the origin: ERROR: operator does not exist: text = integer`,
		bad + `:8: dataset "cli_v_hidden": from: the refresh role app (the user of origin.dsn) may not read public.cli_v_hidden; run GRANT SELECT ON "public"."cli_v_hidden" TO "app"`,
		bad + `:9: dataset "cli_v_missing": from: table public.cli_v_missing does not exist`,
		"4 problems at the origin in " + bad,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("validate -origin output lacks %q:\n%s", want, errOut)
		}
	}

	down := writeConfig(t, "origin:\n  dsn: postgres://app:s3cret-pass@127.0.0.1:1/db?sslmode=disable\ndatasets:\n  - from: postgres:public.x\n")
	code, _, errOut = cliResult(t, nil, "validate", "-origin", "-c", down)
	if code != 1 || !strings.Contains(errOut, "connect to origin") || strings.Contains(errOut, "s3cret-pass") {
		t.Errorf("validate -origin of an unreachable origin: exit %d\n%s", code, errOut)
	}
}

// TestCLI_ValidateOriginChecksWhatChangesNeeds: a refresh_mode: changes
// dataset whose refresh role has REPLICATION but may not create the
// publication (no CREATE on the database, not the table's owner) is a
// problem of validate -origin (exit 1), not a run that fails later; named
// publication that publishes the table, it is ok.
func TestCLI_ValidateOriginChecksWhatChangesNeeds(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS cli_cdc; DROP PUBLICATION IF EXISTS cli_cdc_pub;
		DO $$ BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'cli_cdc_role') THEN
			EXECUTE 'DROP OWNED BY cli_cdc_role'; DROP ROLE cli_cdc_role; END IF; END $$;
		CREATE ROLE cli_cdc_role LOGIN REPLICATION PASSWORD 'cli-cdc-pass';
		CREATE TABLE cli_cdc (id int PRIMARY KEY, v text);
		GRANT SELECT ON cli_cdc TO cli_cdc_role;`)
	t.Cleanup(func() {
		mustExec(t, "DROP TABLE IF EXISTS cli_cdc; DROP PUBLICATION IF EXISTS cli_cdc_pub; DROP OWNED BY cli_cdc_role; DROP ROLE cli_cdc_role")
	})
	env := []string{"PGACCEL_CLI_TEST_DSN=" + origin.DSN("cli_cdc_role", "cli-cdc-pass")}
	body := fmt.Sprintf(`origin:
  dsn: ${env:PGACCEL_CLI_TEST_DSN}
runtime:
  data_dir: %s
datasets:
  - from: postgres:public.cli_cdc
    acceleration:
      refresh_mode: changes
      primary_key: [id]
`, t.TempDir())
	cfg := writeConfig(t, body)
	code, out, errOut := cliResult(t, env, "validate", "-origin", "-c", cfg)
	want := cfg + `:6: dataset "cli_cdc": acceleration.refresh_mode: the refresh role cli_cdc_role may not create the publication the change stream reads`
	if code != 1 || out != "" || !strings.Contains(errOut, want) || !strings.Contains(errOut, "1 problem at the origin") {
		t.Errorf("validate -origin: exit %d\nstdout: %s\nstderr: %s\nwant exit 1 and %q", code, out, errOut, want)
	}
	mustExec(t, "CREATE PUBLICATION cli_cdc_pub FOR TABLE cli_cdc")
	cfg = writeConfig(t, body+"    params:\n      pg_publication: cli_cdc_pub\n")
	if code, out, errOut := cliResult(t, env, "validate", "-origin", "-c", cfg); code != 0 || !strings.Contains(out, ": ok") {
		t.Errorf("validate -origin with a named publication: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
