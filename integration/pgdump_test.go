package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPgDump_ThroughProxy: pg_dump through pgaccel writes what it writes
// directly (but for the random key of its \restrict line), in the plain
// format and in the directory format with two jobs, whose workers start
// their transactions with SET TRANSACTION SNAPSHOT. pg_dump's second
// statement is SET TRANSACTION ISOLATION LEVEL, which Postgres refuses
// after any query of the transaction: pgaccel read its session info inside
// the client's transaction before it (ERROR 25001 "SET TRANSACTION
// ISOLATION LEVEL must be called before any query").
func TestPgDump_ThroughProxy(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	pgDump := pgBinary(t, "pg_dump")
	pgRestore := pgBinary(t, "pg_restore")
	direct, proxied := origin.SuperDSN(), appDSN(a, origin.SuperUser, origin.SuperPassword)

	plain := func(dsn string) string {
		out := runTool(t, pgDump, "--no-sync", "-d", dsn)
		return restrictKey.ReplaceAllString(out, `\$1 KEY`)
	}
	if d, p := plain(direct), plain(proxied); d != p {
		t.Errorf("pg_dump through pgaccel differs from a direct one:\n%s", lineDiff(d, p))
	} else if !strings.Contains(d, "COPY public.acc_orders") {
		t.Errorf("the dump has no data of acc_orders:\n%.2000s", d)
	}

	parallel := func(dsn, name string) string {
		dir := filepath.Join(t.TempDir(), name)
		runTool(t, pgDump, "--no-sync", "-Fd", "-j", "2", "-f", dir, "-d", dsn)
		out := runTool(t, pgRestore, "-f", "-", dir)
		return restrictKey.ReplaceAllString(out, `\$1 KEY`)
	}
	if d, p := parallel(direct, "direct"), parallel(proxied, "proxied"); d != p {
		t.Errorf("pg_dump -Fd -j 2 through pgaccel differs from a direct one:\n%s", lineDiff(d, p))
	}
}

// TestTransaction_SetTransactionFirst: a session's first transaction may
// start with SET TRANSACTION (isolation level, READ ONLY, DEFERRABLE, a
// snapshot), through either protocol, with the default auth.mode and with
// auth.mode: proxy, and its reads of datasets still run.
func TestTransaction_SetTransactionFirst(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	setupProxyAuth(t)
	pa, _ := startProxyAuthApp(t, t.TempDir(), "60s", true)
	for name, dsn := range map[string]string{
		"auth origin": appDSN(a, appUser, appPass),
		"auth proxy":  appDSN(pa, sessUser, sessPass),
	} {
		table := "acc_orders"
		if name == "auth proxy" {
			table = "sess_orders"
		}
		for pname, mode := range protocols {
			t.Run(name+"/"+pname, func(t *testing.T) {
				ctx := ctxT(t)
				cfg, err := pgx.ParseConfig(dsn)
				if err != nil {
					t.Fatal(err)
				}
				cfg.DefaultQueryExecMode = mode
				c := connectConfig(t, cfg)
				for _, set := range []string{
					"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE",
					"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
					"SET TRANSACTION READ ONLY",
				} {
					if _, err := c.Exec(ctx, "BEGIN"); err != nil {
						t.Fatal(err)
					}
					if _, err := c.Exec(ctx, set); err != nil {
						t.Fatalf("%s: %v", set, err)
					}
					var n int
					if err := c.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n == 0 {
						t.Fatalf("read after %s: %d %v", set, n, err)
					}
					var level string
					if err := c.QueryRow(ctx, "SHOW transaction_isolation").Scan(&level); err != nil {
						t.Fatal(err)
					}
					if _, err := c.Exec(ctx, "COMMIT"); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
}

// restrictKey matches the random key of pg_dump's \restrict and \unrestrict
// lines.
var restrictKey = regexp.MustCompile(`(?m)^\\(restrict|unrestrict) \S+$`)

// pgBinary finds a PostgreSQL client program.
func pgBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install it with `apt-get update && apt-get install -y postgresql-client`", name)
	}
	return p
}

// runTool runs a client program and returns its standard output; it fails
// the test with its standard error.
func runTool(t *testing.T, prog string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGTZ=UTC")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(prog), strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
