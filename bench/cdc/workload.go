package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// table is the benchmark's table at the origin and its dataset's name.
const table = "cdc_bench"

// The workload's mix, in percent of transactions.
const (
	insertPct = 50
	updatePct = 35
	deletePct = 15
)

// setupTable creates cdc_bench with rows rows (ids 1..rows) and the two
// sequences the script takes ids from: inserts from rows+1, deletes from
// rows/2+1 (the oldest rows outside the update range, then the rows the
// inserts added, which stay far ahead: inserts are more than three times
// as frequent). Updates pick a random id in 1..rows/2, which is never
// deleted. So every transaction changes exactly one row.
func setupTable(ctx context.Context, origin *pgtest.Server, rows int) error {
	sql := fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
		CREATE TABLE %[1]s (id bigint PRIMARY KEY, v int NOT NULL, payload text, updated_at timestamptz NOT NULL DEFAULT now());
		INSERT INTO %[1]s (id, v, payload) SELECT g, g %% 1000, md5(g::text) || md5((g + 1)::text) FROM generate_series(1, %[2]d) g;
		DROP SEQUENCE IF EXISTS %[1]s_ins; CREATE SEQUENCE %[1]s_ins START %[3]d;
		DROP SEQUENCE IF EXISTS %[1]s_del; CREATE SEQUENCE %[1]s_del START %[4]d;
		GRANT SELECT ON %[1]s TO %[5]s;`, table, rows, rows+1, rows/2+1, pgtest.AppUser)
	if err := origin.Exec(ctx, sql); err != nil {
		return fmt.Errorf("create %s: %w", table, err)
	}
	// VACUUM cannot run in the implicit transaction of several statements.
	if err := origin.Exec(ctx, "VACUUM ANALYZE "+table); err != nil {
		return fmt.Errorf("vacuum %s: %w", table, err)
	}
	return nil
}

// script is the pgbench script: one change per transaction, in the mix
// above. The DELETE takes its id from an uncorrelated subquery, which
// Postgres runs once (an InitPlan) before the index scan.
func script(rows int) string {
	return fmt.Sprintf(`\set r random(1, 100)
\if :r <= %[1]d
INSERT INTO %[4]s (id, v, payload) VALUES (nextval('%[4]s_ins'), :r, md5(random()::text) || md5(random()::text));
\elif :r <= %[2]d
\set id random(1, %[3]d)
UPDATE %[4]s SET v = v + 1, updated_at = now() WHERE id = :id;
\else
DELETE FROM %[4]s WHERE id = (SELECT nextval('%[4]s_del'));
\endif
`, insertPct, insertPct+updatePct, rows/2, table)
}

// pgbench runs the pgbench binary against the origin as its superuser.
type pgbench struct {
	path     string
	host     string
	port     int
	user     string
	database string
	env      []string // holds PGPASSWORD; never printed
	script   string   // path of the script file
}

// newPgbench points pgbench at origin's database and superuser, with
// synchronous_commit set to syncCommit, and writes the script into dir. The PG* variables of this process are dropped so
// that they cannot redirect it.
func newPgbench(path string, origin *pgtest.Server, dir string, rows int, syncCommit string) (*pgbench, error) {
	p := &pgbench{path: path, host: origin.Host, port: origin.Port, user: origin.SuperUser, database: origin.Database,
		script: filepath.Join(dir, "cdc.sql")}
	if err := os.WriteFile(p.script, []byte(script(rows)), 0o644); err != nil {
		return nil, fmt.Errorf("write the pgbench script: %w", err)
	}
	p.env = benchutil.PgbenchEnv("PGPASSWORD="+origin.SuperPassword, "PGSSLMODE=disable", "PGAPPNAME=pgbench", "PGOPTIONS=-c synchronous_commit="+syncCommit)
	return p, nil
}

// load is one pgbench run: at rate transactions per second (0: as fast
// as it can) for d, or, when txnsPerClient is set, that many transactions
// per client unthrottled.
type load struct {
	rate          int
	d             time.Duration
	txnsPerClient int
	clients       int
	threads       int
}

// args are pgbench's arguments for l (without the connection ones).
func (l load) args(scriptPath string) []string {
	args := []string{"-n", "-M", "prepared", "-f", scriptPath, "-c", strconv.Itoa(l.clients), "-j", strconv.Itoa(l.threads)}
	if l.txnsPerClient > 0 {
		return append(args, "-t", strconv.Itoa(l.txnsPerClient))
	}
	args = append(args, "-T", strconv.Itoa(int(l.d.Round(time.Second)/time.Second)), "-P", "1")
	if l.rate > 0 {
		args = append(args, "-R", strconv.Itoa(l.rate))
	}
	return args
}

// commandLine is l as a shell command, for the report; a throttled run's
// rate shows as <rate>.
func (l load) commandLine() string {
	s := "pgbench " + strings.Join(l.args("cdc.sql"), " ")
	if l.rate > 0 {
		s = strings.TrimSuffix(s, " "+strconv.Itoa(l.rate)) + " <rate>"
	}
	return s
}

// run runs l and parses pgbench's output.
func (p *pgbench) run(ctx context.Context, l load) (pgbenchResult, error) {
	args := append(l.args(p.script), "-h", p.host, "-p", strconv.Itoa(p.port), "-U", p.user, p.database)
	cmd := exec.CommandContext(ctx, p.path, args...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return pgbenchResult{}, ctx.Err()
		}
		return pgbenchResult{}, fmt.Errorf("pgbench %s: %w\n%s", strings.Join(l.args("cdc.sql"), " "), err, benchutil.Tail(out, 15))
	}
	return parseOutput(out)
}

// pgbenchResult is what pgbench reported.
type pgbenchResult struct {
	tps       float64 // without initial connection time
	txns      int64   // transactions actually processed
	latencyMS float64 // latency average
	// schedLagMS and schedLagMaxMS are "rate limit schedule lag" (avg,
	// max): how late transactions started against -R's schedule.
	schedLagMS, schedLagMaxMS float64
	hasSchedLag               bool
	// perSecond are the -P 1 progress lines' TPS.
	perSecond []float64
}

var (
	schedLagRe = regexp.MustCompile(`(?m)^rate limit schedule lag: avg ([0-9.]+) \(max ([0-9.]+)\) ms`)
	progressRe = regexp.MustCompile(`(?m)^progress: [0-9.]+ s, ([0-9.]+) tps`)
)

// parseOutput reads pgbench's summary and progress lines.
func parseOutput(out []byte) (pgbenchResult, error) {
	sum, err := benchutil.ParsePgbenchSummary(out)
	if err != nil {
		return pgbenchResult{}, err
	}
	r := pgbenchResult{tps: sum.TPS, txns: sum.Txns, latencyMS: sum.LatencyMS}
	if m := schedLagRe.FindSubmatch(out); m != nil {
		r.schedLagMS, _ = strconv.ParseFloat(string(m[1]), 64)
		r.schedLagMaxMS, _ = strconv.ParseFloat(string(m[2]), 64)
		r.hasSchedLag = true
	}
	for _, m := range progressRe.FindAllSubmatch(out, -1) {
		if v, err := strconv.ParseFloat(string(m[1]), 64); err == nil {
			r.perSecond = append(r.perSecond, v)
		}
	}
	return r, nil
}
