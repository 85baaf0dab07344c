package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/integration/corpora"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/rs/zerolog"
)

const resultsSection = "## SQL coverage (bench/coverage)"

type options struct {
	out      string
	verbose  bool
	only     string
	file     string
	schema   string
	datasets string
	// locale: the corpora run in a database created with this LOCALE
	// (e.g. en_US.UTF-8) instead of the harness's C one.
	locale string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("coverage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.out, "out", "", "also write the Markdown report to this `file` (bench/RESULTS.md) under \""+resultsSection+"\"")
	fs.BoolVar(&o.verbose, "v", false, "print every statement that was not accelerated, with its route")
	fs.StringVar(&o.only, "corpus", "", "run only this corpus (accel, coverage, tpch)")
	fs.StringVar(&o.file, "file", "", "run instead the corpus in this `file` (coverage.sql's block format), over -schema's tables")
	fs.StringVar(&o.schema, "schema", "", "with -file: the SQL `file` that creates the corpus's tables at the origin")
	fs.StringVar(&o.locale, "locale", "", "run in a database created with this `LOCALE` (e.g. en_US.UTF-8 for libc, icu:en-US for ICU) instead of the C one")
	fs.StringVar(&o.datasets, "datasets", "", "with -file: the comma-separated `tables` (in public) to accelerate")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "coverage: unexpected arguments %q; every setting is a flag (see -help)\n", fs.Args())
		return 2
	}
	if (o.file == "") != (o.schema == "") || (o.file == "") != (o.datasets == "") {
		fmt.Fprintln(stderr, "coverage: -file, -schema and -datasets go together")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return benchutil.Exit(ctx, "coverage", benchmark(ctx, o, args, stdout, stderr), stderr)
}

// corpus is a named list of statements over the tables of a schema.
type corpus struct {
	name    string
	schema  string
	tables  []string
	queries []corpora.Query
}

func corporaToRun(o options) ([]corpus, error) {
	if o.file != "" {
		qs, err := corpora.ReadCorpus(o.file)
		if err != nil {
			return nil, err
		}
		schema, err := os.ReadFile(o.schema)
		if err != nil {
			return nil, err
		}
		var tables []string
		for _, t := range strings.Split(o.datasets, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tables = append(tables, t)
			}
		}
		return []corpus{{name: filepath.Base(o.file), schema: string(schema), tables: tables, queries: qs}}, nil
	}
	only := o.only
	cov, err := corpora.Coverage()
	if err != nil {
		return nil, err
	}
	all := []corpus{
		{name: "accel", schema: corpora.AccelSchema, tables: []string{"acc_types", "acc_customers", "acc_orders", "acc_secret", "acc_rls", "acc_time24", "acc_coll", "acc_special"}, queries: corpora.Accel},
		{name: "coverage", schema: corpora.CoverageSchema, tables: corpora.CoverageDatasets, queries: cov},
		{name: "tpch", schema: corpora.TPCHSchema, tables: corpora.TPCHTables, queries: corpora.TPCH(1)},
	}
	if only == "" {
		return all, nil
	}
	for _, c := range all {
		if c.name == only {
			return []corpus{c}, nil
		}
	}
	return nil, fmt.Errorf("-corpus %q: no such corpus (accel, coverage, tpch)", only)
}

func benchmark(ctx context.Context, o options, args []string, stdout, stderr io.Writer) error {
	progress := benchutil.Progress(stderr)
	cs, err := corporaToRun(o)
	if err != nil {
		return err
	}
	origin, err := benchutil.StartOrigin(ctx)
	if err != nil {
		return err
	}
	defer origin.Stop()
	db := origin.Database
	exec := origin.Exec
	if o.locale != "" {
		db = "pgaccel_coverage_locale"
		if err := benchutil.LocaleDatabase(ctx, origin, db, o.locale); err != nil {
			return err
		}
		super, err := pgconn.Connect(ctx, origin.DatabaseDSN(db, origin.SuperUser, origin.SuperPassword))
		if err != nil {
			return err
		}
		defer super.Close(context.Background())
		exec = func(ctx context.Context, sql string) error {
			_, err := super.Exec(ctx, sql).ReadAll()
			return err
		}
		progress("corpora in database %s, LOCALE %s", db, o.locale)
	}
	var datasets []string
	for _, c := range cs {
		if err := exec(ctx, c.schema); err != nil {
			return fmt.Errorf("schema of corpus %s: %w", c.name, err)
		}
		datasets = append(datasets, c.tables...)
	}
	dataDir, err := os.MkdirTemp("", "pgaccel-coverage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dataDir)
	a, err := startPgaccel(ctx, origin.DatabaseDSN(db, origin.SuperUser, origin.SuperPassword), datasets, dataDir)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = a.Shutdown(sctx)
	}()
	const user, pass = "app", "app-pass"
	direct, err := pgconn.Connect(ctx, origin.DatabaseDSN(db, user, pass))
	if err != nil {
		return fmt.Errorf("connect to the origin: %w", err)
	}
	defer direct.Close(context.Background())
	proxied, err := pgconn.Connect(ctx, "postgres://"+user+":"+pass+"@"+a.Addr()+"/"+db+"?sslmode=disable")
	if err != nil {
		return fmt.Errorf("connect to pgaccel: %w", err)
	}
	defer proxied.Close(context.Background())

	var reports []*report
	exact := true
	for _, c := range cs {
		progress("corpus %s: %d statements", c.name, len(c.queries))
		r := &report{corpus: c.name, reasons: map[string]*reasonCount{}}
		for _, q := range c.queries {
			if err := ctx.Err(); err != nil {
				return err
			}
			res, err := runQuery(ctx, direct, proxied, q)
			if err != nil {
				return fmt.Errorf("%s %q: %w", c.name, q.Name, err)
			}
			r.add(q, res)
			if res.mismatch != "" {
				exact = false
				fmt.Fprintf(stderr, "MISMATCH %s %q (%s):\n%s\n", c.name, q.Name, res.mismatch, res.diff)
			}
			if o.verbose && res.counted && !res.accelerated {
				fmt.Fprintf(stdout, "%-9s %-50s %s\n", c.name, q.Name, strings.Join(res.routes, " | "))
			}
		}
		reports = append(reports, r)
	}
	md := markdown(reports, benchutil.CommandLine("./bench/coverage", args), benchutil.DuckDBVersion(ctx, a))
	fmt.Fprint(stdout, md)
	if o.out != "" {
		if err := benchutil.ReplaceSection(o.out, resultsSection, md); err != nil {
			return err
		}
	}
	if !exact {
		return errors.New("some answers through pgaccel differ from the origin's (see MISMATCH above)")
	}
	return nil
}

// startPgaccel starts pgaccel in-process with tables as datasets (memory
// mode) and waits until they have loaded.
func startPgaccel(ctx context.Context, dsn string, tables []string, dataDir string) (*app.App, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "origin:\n  dsn: %q\nserver:\n  listen: 127.0.0.1:0\nruntime:\n  data_dir: %q\ndatasets:\n", dsn, dataDir)
	for _, t := range tables {
		fmt.Fprintf(&b, "  - from: postgres:public.%s\n    acceleration:\n      mode: memory\n", t)
	}
	cfg, err := catalog.Parse([]byte(b.String()), "coverage.yaml")
	if err != nil {
		return nil, fmt.Errorf("pgaccel config: %w", err)
	}
	a, err := app.Start(cfg, zerolog.Nop())
	if err != nil {
		return nil, fmt.Errorf("start pgaccel: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := a.WaitReady(wctx); err != nil {
		return a, fmt.Errorf("datasets did not load: %w", err)
	}
	return a, nil
}

// result is what one statement did through pgaccel.
type result struct {
	routes      []string // SHOW pgaccel.last_route after each execution
	counted     bool     // reads only datasets and is no point read
	accelerated bool     // every execution was accelerated
	reason      string   // the first non-accelerated execution's reason
	detail      string
	mismatch    string // which execution differs from the origin's, if one does
	diff        string
}

// ways are the executions of every statement: the simple protocol and the
// extended protocol with text and with binary results.
var ways = []struct {
	name    string
	formats []int16
	simple  bool
}{
	{"simple", nil, true},
	{"extended text", nil, false},
	{"extended binary", []int16{1}, false},
}

func runQuery(ctx context.Context, direct, proxied *pgconn.PgConn, q corpora.Query) (result, error) {
	var res result
	res.counted = !q.Point
	res.accelerated = true
	for _, w := range ways {
		want := execute(ctx, direct, q, w.simple, w.formats)
		got := execute(ctx, proxied, q, w.simple, w.formats)
		if want != got && res.mismatch == "" {
			res.mismatch, res.diff = w.name, firstDiff(want, got)
		}
		route, err := lastRoute(ctx, proxied)
		if err != nil {
			return res, err
		}
		res.routes = append(res.routes, route)
		kind, reason, detail := splitRoute(route)
		if kind == corpora.Accelerated {
			continue
		}
		if res.accelerated {
			res.accelerated = false
			res.reason, res.detail = kind, detail
			if reason != "" {
				res.reason = kind + ": " + reason
			}
			if kind == corpora.Origin && readsMore[reason] {
				res.counted = false
			}
			if reason == planner.ReasonPointRead {
				res.counted = false
			}
		}
	}
	return res, nil
}

// readsMore are the reasons that say a statement reads something besides
// datasets (or columns the acceleration does not hold), or is no read.
var readsMore = map[string]bool{
	planner.ReasonNoDataset: true, planner.ReasonNoTables: true, planner.ReasonNotAccelerated: true,
	planner.ReasonCatalog: true, planner.ReasonUnresolved: true, planner.ReasonColumnNotAccelerated: true,
	planner.ReasonPrivilege: true, planner.ReasonRowSecurity: true, planner.ReasonTempTable: true,
	planner.ReasonWrite: true, planner.ReasonTransaction: true, planner.ReasonSessionSetting: true,
	planner.ReasonUtility: true, planner.ReasonCursor: true, planner.ReasonEmpty: true,
}

// splitRoute splits "origin: reason: detail" (SHOW pgaccel.last_route).
func splitRoute(s string) (kind, reason, detail string) {
	kind, rest, _ := strings.Cut(s, ": ")
	reason, detail, _ = strings.Cut(rest, ": ")
	return kind, reason, detail
}

func lastRoute(ctx context.Context, c *pgconn.PgConn) (string, error) {
	rs, err := c.Exec(ctx, "SHOW pgaccel.last_route").ReadAll()
	if err != nil {
		return "", fmt.Errorf("SHOW pgaccel.last_route: %w", err)
	}
	if len(rs) != 1 || len(rs[0].Rows) != 1 {
		return "", errors.New("SHOW pgaccel.last_route: not one row")
	}
	return string(rs[0].Rows[0][0]), nil
}

// execute runs q and writes down everything the client received.
func execute(ctx context.Context, c *pgconn.PgConn, q corpora.Query, simple bool, formats []int16) string {
	var b strings.Builder
	var rs []*pgconn.Result
	if simple {
		var err error
		rs, err = c.Exec(ctx, corpora.Inline(q.SQL, q.Args)).ReadAll()
		if err != nil {
			fmt.Fprintf(&b, "error %s\n", errText(err))
		}
	} else {
		params := make([][]byte, len(q.Args))
		for i, a := range q.Args {
			params[i] = []byte(fmt.Sprint(a))
		}
		rs = []*pgconn.Result{c.ExecParams(ctx, q.SQL, params, nil, nil, formats).Read()}
	}
	for _, r := range rs {
		for _, f := range r.FieldDescriptions {
			fmt.Fprintf(&b, "col %q %d %d %d %d\n", f.Name, f.DataTypeOID, f.TypeModifier, f.DataTypeSize, f.Format)
		}
		for _, row := range r.Rows {
			for i, v := range row {
				if i > 0 {
					b.WriteString(" | ")
				}
				if v == nil {
					b.WriteString("NULL")
				} else {
					b.WriteString(strconv.Quote(string(v)))
				}
			}
			b.WriteByte('\n')
		}
		if r.Err != nil {
			fmt.Fprintf(&b, "error %s\n", errText(r.Err))
		} else {
			fmt.Fprintf(&b, "tag %s\n", r.CommandTag)
		}
	}
	return b.String()
}

func errText(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code + " " + pe.Message
	}
	return err.Error()
}

// firstDiff shows the first differing line of two transcripts.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("  line %d\n  origin:  %.300s\n  pgaccel: %.300s", i+1, w, g)
		}
	}
	return ""
}

type reasonCount struct {
	n       int
	example string
}

// report sums one corpus.
type report struct {
	corpus                        string
	total, counted, accel, points int
	mismatches                    int
	reasons                       map[string]*reasonCount
}

func (r *report) add(q corpora.Query, res result) {
	r.total++
	if res.mismatch != "" {
		r.mismatches++
	}
	if !res.counted {
		if q.Point || strings.HasSuffix(res.reason, "point_read") {
			r.points++
		}
		return
	}
	r.counted++
	if res.accelerated {
		r.accel++
		return
	}
	key := res.reason
	rc := r.reasons[key]
	if rc == nil {
		rc = &reasonCount{example: q.Name + ": " + res.detail}
		r.reasons[key] = rc
	}
	rc.n++
}

func markdown(rs []*report, command, duckdb string) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\n", resultsSection)
	fmt.Fprintf(&b, "Run %s on %s (%s, %s; DuckDB %s, revision %s): `%s`.\n\n",
		time.Now().UTC().Format("2006-01-02"), benchutil.CPUModel(), benchutil.MemTotal(), benchutil.Kernel(), duckdb,
		benchutil.Revision(context.Background()), command)
	b.WriteString("Each statement runs directly and through pgaccel in the simple protocol and the extended protocol with text and binary results; answers are compared byte for byte. Counted: statements that read only datasets and are not point reads; accelerated: all three executions answered from DuckDB.\n\n")
	b.WriteString("| corpus | statements | counted | accelerated | share | differing answers |\n|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		share := 0.0
		if r.counted > 0 {
			share = 100 * float64(r.accel) / float64(r.counted)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.1f %% | %d |\n", r.corpus, r.total, r.counted, r.accel, share, r.mismatches)
	}
	for _, r := range rs {
		if len(r.reasons) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nNot accelerated in corpus %s, by reason:\n\n| reason | statements | first example |\n|---|---:|---|\n", r.corpus)
		keys := make([]string, 0, len(r.reasons))
		for k := range r.reasons {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if r.reasons[keys[i]].n != r.reasons[keys[j]].n {
				return r.reasons[keys[i]].n > r.reasons[keys[j]].n
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			ex := strings.ReplaceAll(r.reasons[k].example, "|", "\\|")
			if len(ex) > 160 {
				ex = ex[:160] + "…"
			}
			fmt.Fprintf(&b, "| %s | %d | %s |\n", k, r.reasons[k].n, ex)
		}
	}
	b.WriteString("\n")
	return b.String()
}
