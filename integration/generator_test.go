package integration

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/integration/gen"
)

// The random differential generator's flags (go test ./integration -run
// 'TestGenerated$' -args ...; see integration/gen). Without them the test
// runs genDefaultN statements of two seeds, a fixed one and one of the
// day, and fails on any difference.
var (
	genN        = flag.Int("gen.n", 0, "generated statements per seed (0: the make-test default)")
	genSeed     = flag.Uint64("gen.seed", 0, "the seed (0: the fixed seed and the day's)")
	genSeeds    = flag.Int("gen.seeds", 1, "with -gen.seed, run this many seeds from it (seed, seed+1, ...)")
	genOnly     = flag.Int("gen.only", -1, "run only statement i of the seed")
	genSQL      = flag.String("gen.sql", "", "run this statement instead of generated ones")
	genFile     = flag.String("gen.file", "", "run the statements of this file instead of generated ones (gen.ReadStatements)")
	genSettings = flag.String("gen.settings", "", "with -gen.sql, its settings (TimeZone=...; DateStyle=...)")
	genExtended = flag.Bool("gen.extended", false, "with -gen.sql, run it in the extended protocol with binary results too")
	genReport   = flag.Bool("gen.report", false, "report differences without failing (long runs)")
	genOut      = flag.String("gen.out", "", "write each difference and tie as a JSON line to this file")
	genVerbose  = flag.Bool("gen.v", false, "log every statement and its route")
)

// genFixedSeed is the seed every make test runs (issue 44's), with the
// day's (yyyymmdd); genDefaultN the statements per seed, sized to take
// well under a minute on a loaded two-core machine (about 15 s here).
const (
	genFixedSeed = 44
	genDefaultN  = 1000
)

// TestGenerated runs random statements (integration/gen) directly on the
// origin and through pgaccel, compares the answers byte for byte
// (columns, rows, command tag, error SQLSTATE and message), in the simple
// protocol and, for a quarter of them, the extended one with binary
// results, and fails on any difference. It logs the seeds, a summary of
// the routes and a command line that reproduces each difference.
func TestGenerated(t *testing.T) {
	mustExec(t, gen.SchemaSQL(appUser))
	a := startApp(t, gen.DatasetsYAML())
	runGenerated(t, a, origin.DSN(appUser, appPass), appDSN(a, appUser, appPass), genDefaultN, genSeedList())
}

// genICUDatabase is the database TestGenerated_ICUDatabase creates.
const genICUDatabase = "pgaccel_gen_icu"

// TestGenerated_ICUDatabase runs generated statements against a second
// database whose default collation is ICU's en-US (with LC_CTYPE C), so
// that no text column of the gen_* tables orders bytewise and the
// planner's collation rules decide: 300 statements of the fixed seed, or
// what the flags say.
func TestGenerated_ICUDatabase(t *testing.T) {
	generatedInDatabase(t, genICUDatabase, "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'", 300)
}

// TestGenerated_LinguisticDatabase: the same in a database whose default
// collation is libc's en_US.UTF-8, where the acceleration orders text by
// the locale's keys (collation keys, planner/collorder.go).
func TestGenerated_LinguisticDatabase(t *testing.T) {
	requireLocales(t, "en_US.UTF-8")
	generatedInDatabase(t, "pgaccel_gen_enus", "LOCALE 'en_US.UTF-8'", 500)
}

// generatedInDatabase runs the generator's statements (n of the first
// seed unless the flags say otherwise) in database db, created (again)
// with the CREATE DATABASE options given and the gen_* tables.
func generatedInDatabase(t *testing.T, db, options string, n int) {
	mustExec(t, "DROP DATABASE IF EXISTS "+db)
	mustExec(t, "CREATE DATABASE "+db+" TEMPLATE template0 "+options)
	super := origin.DatabaseDSN(db, origin.SuperUser, origin.SuperPassword)
	ctx := ctxT(t)
	conn, err := pgconn.Connect(ctx, super)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, gen.SchemaSQL(appUser)).ReadAll(); err != nil {
		t.Fatalf("create the gen_* tables in %s: %v", db, err)
	}
	conn.Close(ctx)
	a := startAppOrigin(t, super, "", "  point_reads: acceleration\n", gen.DatasetsYAML(), true)
	proxy := "postgres://" + appUser + ":" + appPass + "@" + a.Addr() + "/" + db + "?sslmode=disable"
	seeds := genSeedList()
	if *genSeed == 0 {
		seeds = seeds[:1]
	}
	runGenerated(t, a, origin.DatabaseDSN(db, appUser, appPass), proxy, n, seeds)
}

// runGenerated runs the statements the flags ask for (or defaultN of each
// of seeds) on directDSN and proxyDSN (through a) and compares them.
func runGenerated(t *testing.T, a *app.App, directDSN, proxyDSN string, defaultN int, seeds []uint64) {
	r := newGenRunner(t, a, directDSN, proxyDSN)
	start := time.Now()
	switch {
	case *genFile != "":
		text, err := os.ReadFile(*genFile)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := gen.ReadStatements(string(text))
		if err != nil {
			t.Fatalf("%s: %v", *genFile, err)
		}
		for _, q := range qs {
			r.run(q)
		}
	case *genSQL != "":
		settings, err := gen.ParseSettings(*genSettings)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := gen.ReadStatements(*genSQL + ";\n")
		if err != nil || len(qs) != 1 {
			t.Fatalf("-gen.sql: want one statement: %v", err)
		}
		qs[0].Settings, qs[0].Extended, qs[0].Name = settings, *genExtended, ""
		r.run(qs[0])
	default:
		for _, seed := range seeds {
			g := gen.Generator{Seed: seed}
			n := *genN
			if n == 0 {
				n = defaultN
			}
			t.Logf("seed %d: %d statements", seed, n)
			for i := 0; i < n; i++ {
				if *genOnly >= 0 && i != *genOnly {
					continue
				}
				r.run(g.Query(i))
			}
		}
	}
	r.summary(time.Since(start))
	// Each new accelerated text's description worked out by the planner
	// was checked against the origin's (as the corpora's tests do).
	described := metricSums(t, a.Metrics, "pgaccel_derived_descriptions_total", "result")
	t.Logf("descriptions the planner worked out, checked against the origin's: %v", described)
	if described["differed"] != 0 {
		msg := fmt.Sprintf("planner.Describe differed from the origin's description %v times (pgaccel's log says which)", described["differed"])
		if *genReport {
			t.Log(msg)
		} else {
			t.Error(msg)
		}
	}
}

// genSeedList is the seeds to run: -gen.seed (and the ones after it), or
// the fixed seed and the day's.
func genSeedList() []uint64 {
	if *genSeed != 0 {
		out := make([]uint64, max(*genSeeds, 1))
		for i := range out {
			out[i] = *genSeed + uint64(i)
		}
		return out
	}
	day := time.Now().UTC()
	return []uint64{genFixedSeed, uint64(day.Year()*10000 + int(day.Month())*100 + day.Day())}
}

// genRunner runs generated statements on two connections, one to the
// origin and one through pgaccel, as the harness's app role.
type genRunner struct {
	t        *testing.T
	a        *app.App
	proxyDSN string
	direct   *pgconn.PgConn
	proxied  *pgconn.PgConn
	settings [2]gen.Settings // as last set on each connection

	queries, extended            int
	routes                       map[string]int // accelerated, fallback, origin
	reasons                      map[string]int // "origin: reason" and "fallback: engine" with the rule's first words
	originErrors                 map[string]int // SQLSTATE of the origin's errors
	diffs, ties, errs, lostConns int
	out                          *json.Encoder
}

func newGenRunner(t *testing.T, a *app.App, directDSN, proxyDSN string) *genRunner {
	r := &genRunner{t: t, a: a, proxyDSN: proxyDSN, routes: map[string]int{}, reasons: map[string]int{}, originErrors: map[string]int{}}
	r.direct = r.connect(directDSN)
	r.proxied = r.connect(proxyDSN)
	if *genOut != "" {
		f, err := os.Create(*genOut)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		r.out = json.NewEncoder(f)
	}
	return r
}

func (r *genRunner) connect(dsn string) *pgconn.PgConn {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		r.t.Fatalf("connect: %v", err)
	}
	r.t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// genFinding is a difference or a tie, as -gen.out writes it.
type genFinding struct {
	Seed     uint64 `json:"seed"`
	Index    int    `json:"index"`
	Verdict  string `json:"verdict"`
	Protocol string `json:"protocol"`
	Route    string `json:"route"`
	Settings string `json:"settings"`
	SQL      string `json:"sql"`
	Detail   string `json:"detail"`
	Origin   string `json:"origin"`
	Pgaccel  string `json:"pgaccel"`
	Repro    string `json:"repro"`
}

// run runs q both ways and records what it saw.
func (r *genRunner) run(q gen.Query) {
	r.queries++
	r.set(0, q.Settings)
	r.set(1, q.Settings)
	o := r.simple(r.direct, q.SQL)
	p := r.simple(r.proxied, q.SQL)
	route := r.lastRoute()
	r.count(route, o)
	if *genVerbose {
		e := ""
		if o.Err != nil {
			e = " {origin " + o.Err.Code + ": " + o.Err.Message + "}"
		}
		r.t.Logf("seed %d #%d [%s]%s %s", q.Seed, q.Index, route, e, q.SQL)
	}
	r.compare(q, "simple", route, o, p)
	if q.Extended {
		r.extended++
		o := r.extendedBinary(r.direct, q.SQL)
		p := r.extendedBinary(r.proxied, q.SQL)
		r.compare(q, "extended, binary results", r.lastRoute(), o, p)
	}
}

// set makes the connection's settings s.
func (r *genRunner) set(i int, s gen.Settings) {
	c := r.direct
	if i == 1 {
		c = r.proxied
	}
	if r.settings[i] == s {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, s.SQL()).ReadAll(); err != nil {
		r.t.Fatalf("set %s: %v", s, err)
	}
	r.settings[i] = s
}

// genTimeout bounds one statement; a statement that runs longer is
// cancelled on both sides and counted as an error.
const genTimeout = 60 * time.Second

func (r *genRunner) simple(c *pgconn.PgConn, sql string) gen.Result {
	ctx, cancel := context.WithTimeout(context.Background(), genTimeout)
	defer cancel()
	mrr := c.Exec(ctx, sql)
	var res gen.Result
	for mrr.NextResult() {
		res = readResult(mrr.ResultReader())
	}
	if err := mrr.Close(); err != nil && res.Err == nil {
		res.Err = genError(err)
	}
	return res
}

func (r *genRunner) extendedBinary(c *pgconn.PgConn, sql string) gen.Result {
	ctx, cancel := context.WithTimeout(context.Background(), genTimeout)
	defer cancel()
	return readResult(c.ExecParams(ctx, sql, nil, nil, nil, []int16{1}))
}

// readResult reads one result: its RowDescription even when no row
// follows (pgconn's Result.FieldDescriptions is set only with rows), its
// rows copied, its command tag or error.
func readResult(rr *pgconn.ResultReader) gen.Result {
	var res gen.Result
	for _, f := range rr.FieldDescriptions() {
		res.Fields = append(res.Fields, gen.Field{Name: f.Name, OID: f.DataTypeOID, Mod: f.TypeModifier, Format: f.Format,
			Size: f.DataTypeSize, TableOID: f.TableOID, TableAttr: f.TableAttributeNumber})
	}
	for rr.NextRow() {
		vals := rr.Values()
		row := make([][]byte, len(vals))
		for i, v := range vals {
			if v != nil {
				row[i] = append([]byte{}, v...)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	tag, err := rr.Close()
	res.Tag = tag.String()
	if err != nil {
		res.Err = genError(err)
	}
	return res
}

func genError(err error) *gen.Error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &gen.Error{Code: pe.Code, Message: pe.Message, Detail: pe.Detail, Hint: pe.Hint, Position: pe.Position}
	}
	return &gen.Error{Code: "client", Message: err.Error()}
}

// lastRoute asks pgaccel how it routed the session's last statement,
// reconnecting when the connection was lost.
func (r *genRunner) lastRoute() string {
	if r.proxied.IsClosed() {
		r.lostConns++
		r.proxied = r.connect(r.proxyDSN)
		r.settings[1] = gen.Settings{}
		return "connection lost"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := r.proxied.Exec(ctx, "SHOW pgaccel.last_route").ReadAll()
	if err != nil || len(res) != 1 || len(res[0].Rows) != 1 {
		return fmt.Sprintf("unknown (%v)", err)
	}
	return string(res[0].Rows[0][0])
}

// count tallies a statement's route and the origin's error.
func (r *genRunner) count(route string, o gen.Result) {
	kind, rest, _ := strings.Cut(route, ":")
	if i := strings.Index(kind, " ("); i >= 0 {
		kind = kind[:i] // accelerated (cache hit), (point index)
	}
	r.routes[kind]++
	switch kind {
	case "accelerated", "fallback", "origin":
	default:
		r.reasons["other route: "+route]++
	}
	if rest != "" {
		words := strings.Fields(rest)
		if len(words) > 4 {
			words = words[:4]
		}
		r.reasons[kind+": "+strings.Join(words, " ")]++
	}
	if o.Err != nil {
		r.errs++
		r.originErrors[o.Err.Code]++
	}
}

func (r *genRunner) compare(q gen.Query, protocol, route string, o, p gen.Result) {
	v, detail := gen.Compare(o, p, q.Opts())
	if v == gen.Same {
		return
	}
	repro := fmt.Sprintf("go test ./integration -run '^%s$' -count=1 -args -gen.seed %d -gen.only %d", r.t.Name(), q.Seed, q.Index)
	if q.Name != "" {
		repro = fmt.Sprintf("go test ./integration -run '^%s$' -count=1 -args -gen.file %s (statement %q)", r.t.Name(), *genFile, q.Name)
	} else if q.Seed == 0 {
		repro = fmt.Sprintf("go test ./integration -run '^%s$' -count=1 -args -gen.sql %q -gen.settings %q", r.t.Name(), q.SQL, q.Settings.String())
	}
	f := genFinding{Seed: q.Seed, Index: q.Index, Verdict: v.String(), Protocol: protocol, Route: route, Settings: q.Settings.String(),
		SQL: q.SQL, Detail: detail, Origin: o.String(), Pgaccel: p.String(), Repro: repro}
	if r.out != nil {
		if err := r.out.Encode(f); err != nil {
			r.t.Fatal(err)
		}
	}
	if v == gen.Tie {
		r.ties++
		if *genVerbose {
			r.t.Logf("tie (equal values printed differently, either answer is Postgres's) at seed %d #%d (%s):\n%s\n%s", q.Seed, q.Index, protocol, q.SQL, detail)
		}
		return
	}
	r.diffs++
	where := fmt.Sprintf("seed %d #%d", q.Seed, q.Index)
	if q.Name != "" {
		where = q.Name
	}
	msg := fmt.Sprintf("difference at %s (%s), route %q\nsettings: %s\nstatement: %s\n%s\norigin:\n%spgaccel:\n%sreproduce: %s",
		where, protocol, route, q.Settings, q.SQL, detail, o, p, repro)
	if *genReport {
		if r.diffs <= 20 || *genFile != "" {
			r.t.Log(msg)
		}
		return
	}
	r.t.Error(msg)
}

// summary logs what the run saw.
func (r *genRunner) summary(d time.Duration) {
	sorted := func(m map[string]int) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
		var b strings.Builder
		for i, k := range keys {
			if i == 25 {
				fmt.Fprintf(&b, "\n  ... %d more", len(keys)-25)
				break
			}
			fmt.Fprintf(&b, "\n  %6d  %s", m[k], k)
		}
		return b.String()
	}
	other := 0
	for k, n := range r.routes {
		if k != "accelerated" && k != "fallback" && k != "origin" {
			other += n
		}
	}
	r.t.Logf("generated statements: %d (%d also extended with binary results) in %s, %.1f statements/s\n"+
		"routes (simple protocol): accelerated %d, fallback %d, origin %d, other %d; errors at the origin %d\n"+
		"differences: %d; ties (equal values printed differently): %d; pgaccel connections lost: %d\n"+
		"why not accelerated:%s\norigin errors by SQLSTATE:%s",
		r.queries, r.extended, d.Round(time.Second), float64(r.queries)/d.Seconds(),
		r.routes["accelerated"], r.routes["fallback"], r.routes["origin"], other, r.errs,
		r.diffs, r.ties, r.lostConns, sorted(r.reasons), sorted(r.originErrors))
	if r.queries == 0 {
		r.t.Error("no statement ran")
	}
}
