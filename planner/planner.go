package planner

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgaccel/pgaccel/catalog"
)

// Route is where a statement runs.
type Route uint8

// Routes.
const (
	RouteOrigin     Route = iota // forward to the origin unchanged
	RouteAccelerate              // run Decision.SQL on DuckDB
)

func (r Route) String() string {
	if r == RouteAccelerate {
		return "accelerate"
	}
	return "origin"
}

// Reasons a statement goes to the origin. They are short and bounded, fit
// for a metrics label.
const (
	ReasonWrite                = "write"                  // DML, DDL, SELECT INTO, data-modifying CTE
	ReasonLocking              = "locking"                // FOR UPDATE/SHARE, LOCK
	ReasonCatalog              = "catalog"                // pg_catalog, information_schema, reg* casts
	ReasonNotAccelerated       = "not_accelerated"        // a relation that is no dataset
	ReasonNotReady             = "not_ready"              // a dataset that is not servable yet
	ReasonUnresolved           = "unresolved"             // a relation Postgres would not find
	ReasonResolveError         = "resolve_error"          // the resolver failed
	ReasonFunction             = "function"               // a side-effecting or session-dependent function
	ReasonMultiStatement       = "multi_statement"        // more than one statement in the text
	ReasonParseError           = "parse_error"            // the origin will report the exact error
	ReasonTxWrote              = "tx_wrote"               // the transaction has written
	ReasonFloatAggregate       = "float_aggregate"        // sum/avg/... of floats: the summation order changes the last digits
	ReasonCollation            = "collation"              // orders text whose origin collation is not bytewise
	ReasonNumericScale         = "numeric_scale"          // merges numeric values whose display scales may differ
	ReasonNumericDivision      = "numeric_division"       // divides where numerics may be operands: DuckDB divides them in floating point
	ReasonTempTable            = "temp_table"             // a temporary table of the session
	ReasonCursor               = "cursor"                 // DECLARE, FETCH, MOVE, CLOSE
	ReasonUnsupported          = "unsupported"            // syntax the acceleration cannot answer exactly
	ReasonKnownFallback        = "known_fallback"         // DuckDB failed on this fingerprint before
	ReasonFallbackFilter       = "fallback_filter"        // use_source, but its origin statement cannot be built yet
	ReasonPrivilege            = "privilege"              // the role may not SELECT a table
	ReasonRowSecurity          = "row_security"           // a table has row level security
	ReasonColumnNotAccelerated = "column_not_accelerated" // a column the acceleration does not hold
	ReasonSessionSetting       = "session_setting"        // SET, RESET, DISCARD, SHOW
	ReasonTransaction          = "transaction"            // BEGIN, COMMIT, SAVEPOINT...
	ReasonUtility              = "utility"                // PREPARE, EXECUTE, LISTEN, COPY, EXPLAIN, CALL, DO...
	ReasonNoTables             = "no_tables"              // a read that references no dataset (SELECT 1, VALUES)
	ReasonEmpty                = "empty"                  // an empty query string
)

// Session is what the proxy knows about the client session.
type Session struct {
	// User is current_user at the origin (after SET ROLE).
	User string
	// SearchPath holds the effective schemas as Postgres resolves them:
	// the origin's current_schemas(false), so no "$user", no pg_catalog,
	// no pg_temp and no schema the user lacks USAGE on.
	SearchPath []string
	// TxWrote is true when the current transaction has written, run DDL or
	// locked (see Decision.Writes).
	TxWrote bool
	// TempTables holds the (lower case) names of the session's temporary
	// tables. A temporary table shadows every other relation of that name.
	TempTables map[string]bool
	// OriginDown is true when the origin cannot answer the session now:
	// reads by a dataset's key, which runtime.point_reads: origin sends
	// there, are answered by the acceleration instead.
	OriginDown bool
	// PointOnly allows a point lookup planned from the shape of an earlier
	// text without parsing this one: RouteAccelerate with Decision.Point
	// and Decision.SQL "" (see quickLookup). The caller answers it from
	// the point index, or plans it again with PointOnly false.
	PointOnly bool
	// TextBytewise is true when the database's default collation compares
	// text by its bytes (C or POSIX): text of no column's collation
	// (collorder.go) may then be ordered by DuckDB.
	TextBytewise bool
	// DefaultCollationLocale is, when the database's default collation is
	// not bytewise, the libc locale the acceleration orders its text by
	// (established against the origin: catalog.Registry.CollationLocale);
	// empty when it does not (such text is then ordered at the origin).
	DefaultCollationLocale string
}

// TableID names an origin table.
type TableID struct {
	Schema, Name string
}

func (t TableID) String() string { return t.Schema + "." + t.Name }

// Decision is where one statement runs and what the proxy must know about it.
type Decision struct {
	Route Route
	// Reason is a short, bounded label saying why the statement goes to the
	// origin; "" when it is accelerated.
	Reason string
	// SQL is, for RouteAccelerate, the statement rewritten for DuckDB.
	SQL string
	// Datasets are the datasets the statement reads, each once, in the
	// order the parse tree holds them: for RouteAccelerate all of them,
	// for RouteOrigin those found before the decision was made (every
	// dataset a read of tables that resolve names, ready or not), for the
	// metrics' labels.
	Datasets []string
	// Tables are the origin tables the statement reads, resolved as
	// Postgres would, each once, for the caller's privilege check. For
	// RouteAccelerate they are all of them; for RouteOrigin those resolved
	// before the decision was made (possibly none).
	Tables []TableID
	// Fingerprint is pg_query's fingerprint (0 when the text does not
	// parse), the key of RememberFallback.
	Fingerprint uint64
	// ParamCount is the highest $n the statement uses.
	ParamCount int
	// NumericText lists the output columns (from 0) that the rewritten
	// statement returns as the exact text of a Postgres numeric (an avg
	// rewritten to pgaccel_numeric_avg); the caller encodes them as numeric.
	NumericText []int
	// EnumTypes are the type OIDs of the enums of the datasets the
	// statement reads: the acceleration holds their values as their
	// labels, which the caller encodes as text (Postgres's enum_send and
	// enum_out both give the label), and a parameter of such a type is
	// decoded as text.
	EnumTypes []uint32
	// PrintsText is true when the rewritten statement prints values with
	// the accelerator's text function (pgaccel_text: dates, times,
	// intervals, floats and bytea cast to text or concatenated), which
	// prints under the default DateStyle, IntervalStyle,
	// extra_float_digits and bytea_output: the caller accelerates it only
	// in sessions that print alike.
	PrintsText bool
	// Detail says, for RouteOrigin, which rule sent the statement there
	// (the node or column that raised Reason; see why.go), for the debug
	// log; never a metric label.
	Detail string
	// OriginSQL is, for a point read sent to the origin (ReasonPointRead)
	// of a dataset whose acceleration holds a subset of its table
	// (refresh_sql's condition, a data window, retention), the statement
	// the origin runs instead of the client's: the client's with the table
	// read through catalog.Dataset.SubsetFilter, so that the origin answers
	// what the acceleration would. "" when the client's statement runs.
	// (A point read of an on_zero_results: use_source dataset whose subset
	// is not the rows its fallback reads takes the accelerated route: see
	// subsetAnswers.)
	OriginSQL string
	// FallbackSQL is, for RouteAccelerate over a dataset with
	// on_zero_results: use_source, the statement the origin runs when the
	// acceleration's answer has no rows: the client's statement with each
	// such dataset read through the inverse of its retention policy (the
	// statement itself when there is none). "" without use_source.
	FallbackSQL string
	// Kind is what the statement is; for several statements, KindMulti.
	// A SELECT with a data-modifying CTE has the kind of its modification
	// (KindInsert, ...); SELECT INTO is KindDDL.
	Kind Kind
	// SetsSearchPath is true when the statement may change what Session
	// holds: search_path, the role, the temporary tables or the schemas
	// that exist. The proxy must refresh Session after it runs (and again
	// when the transaction ends, since ROLLBACK and SET LOCAL undo it).
	SetsSearchPath bool
	// HoldCursor is true for DECLARE ... WITH HOLD, whose cursor outlives
	// the transaction and stays at the origin for the session; a cursor
	// without it ends with its transaction.
	HoldCursor bool

	// Caching is true, with RouteAccelerate, for a read of a
	// refresh_mode: caching dataset: the origin answers it (as the
	// session's role, with its settings) and the results cache keeps the
	// answer for the datasets' refresh_check_interval. SQL is "" then.
	Caching bool

	// Point is, with RouteAccelerate, how the read may be answered from
	// the dataset's point index (pointread.go); nil when it may not.
	Point *PointLookup
	// OriginDownPointRead: a point read runtime.point_reads: origin would
	// send to the origin, accelerated because the session's origin is down
	// (Session.OriginDown): once it is back, the origin answers it again.
	OriginDownPointRead bool
	// Verifiable: the statement's answer is one set of rows whatever the
	// engine (no LIMIT or OFFSET, DISTINCT ON, window function or
	// aggregate whose result depends on the order of tied rows), so that
	// shadow verification may compare the acceleration's answer with the
	// origin's; Ordered: its top level has an ORDER BY (the rows then
	// compare in order, ties aside).
	Verifiable, Ordered bool
	// SignedIntervals: an interval literal of the statement has a minus
	// sign, which Postgres reads otherwise under IntervalStyle
	// sql_standard (a leading sign applies to every field); the proxy
	// sends it to the origin in such a session.
	SignedIntervals bool
	// ZoneSensitive: a timestamptz plus or minus an interval of calendar
	// fields and time (tstz.go), which DuckDB computes otherwise in a zone
	// with daylight-saving or offset changes; the proxy sends it to the
	// origin unless the session's TimeZone is UTC.
	ZoneSensitive bool
	// Clocks are the relative-time values (now(), CURRENT_DATE, ...) the
	// rewritten statement takes as parameters $(ParamCount+1) on, in
	// order (clock.go): the caller binds them for each execution
	// (ClockValues). Such a statement is neither verified nor kept in a
	// results cache, whose answers would be of another time.
	Clocks []Clock
	// BinaryArraysInexact: the statement slices arrays (a[i:j],
	// trim_array), whose result Postgres sends in binary with the NULL
	// flag of the array it came from, which the acceleration does not
	// know: an Execute asking for an array column in binary goes to the
	// origin (text is the same).
	BinaryArraysInexact bool

	writes bool
}

// Writes reports whether the statement may write, run DDL or take locks,
// so that later reads of the same transaction must see the origin: DML,
// DDL, SELECT INTO, data-modifying CTEs, locking reads, LOCK, COPY FROM,
// CALL, DO, EXECUTE, and reads calling nextval, setval or similar.
func (d Decision) Writes() bool { return d.writes }

// Resolver finds relations at the origin and names datasets' tables in
// DuckDB.
type Resolver interface {
	// Relation returns the schema in which Postgres would find an
	// unqualified relation name given the search path, i.e. the first
	// schema in searchPath holding a relation with that name; and whether
	// the name also exists in pg_catalog (searched first implicitly).
	// found is false when no schema has it.
	Relation(ctx context.Context, searchPath []string, name string) (schema string, inPgCatalog bool, found bool, err error)
	// TableRef is the DuckDB reference of a dataset's table, e.g.
	// `"ds_orders"."main"."orders"`.
	TableRef(dataset string) string
}

// PrivilegeChecker says whether role may SELECT every table; *Privileges
// implements it.
type PrivilegeChecker interface {
	CanSelect(ctx context.Context, role string, tables []TableID) (ok bool, reason string, err error)
}

// Defaults of Options.
const (
	DefaultCacheSize    = 4096
	DefaultFallbackSize = 8192
	DefaultMaxCachedSQL = 64 << 10
)

// Options tune a Planner. Zero values mean the defaults.
type Options struct {
	// CacheSize is how many statement texts keep their analysis
	// (DefaultCacheSize).
	CacheSize int
	// MaxCachedSQL is the longest statement text cached, in bytes
	// (DefaultMaxCachedSQL); longer ones are analysed on every call.
	MaxCachedSQL int
	// FallbackSize is how many fingerprints RememberFallback keeps
	// (DefaultFallbackSize); the oldest are forgotten first.
	FallbackSize int
	// Privileges, when set, is asked before a statement is accelerated,
	// with Session.User and Decision.Tables. When nil the caller checks.
	Privileges PrivilegeChecker
	// NoFastPath plans every statement in full (tests compare the fast
	// path with it).
	NoFastPath bool
	// PointReadsToOrigin sends a read of one dataset by its primary key to
	// the origin (runtime.point_reads: origin; see pointread.go).
	PointReadsToOrigin bool
	// TestRewrite, in tests only, changes the SQL of every accelerated
	// decision: a planted wrong answer that shadow verification must find.
	TestRewrite func(sql string) string
}

// Planner decides where statements run. It is safe for concurrent use.
type Planner struct {
	reg       *catalog.Registry
	memo      decisionMemo // accelerated decisions, reused briefly (memo.go)
	res       Resolver
	priv      PrivilegeChecker
	maxCached int
	cache     *lru
	// pointShapes: shapes of texts planned as point reads (pointread.go).
	pointShapes *lru
	// lookupShapes: shapes of texts planned as point lookups whose every
	// literal is a key's value (pointread.go).
	lookupShapes *lru
	fallbacks    *fallbackSet
	// demoted are the fingerprints whose accelerated answers shadow
	// verification found different from the origin's (Demote).
	demoted     sync.Map
	testRewrite func(string) string
	subsets     sync.Map // refresh_sql -> whether it selects a column subset

	// names: the datasets' names and tables (fastpath.go), for the
	// registry's epoch.
	names atomic.Pointer[datasetNames]

	noFastPath  bool
	pointOrigin bool
}

// New returns a Planner over the datasets of reg.
func New(reg *catalog.Registry, res Resolver, opts Options) *Planner {
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultCacheSize
	}
	if opts.FallbackSize <= 0 {
		opts.FallbackSize = DefaultFallbackSize
	}
	if opts.MaxCachedSQL <= 0 {
		opts.MaxCachedSQL = DefaultMaxCachedSQL
	}
	return &Planner{
		reg:          reg,
		res:          res,
		priv:         opts.Privileges,
		maxCached:    opts.MaxCachedSQL,
		cache:        newLRU(opts.CacheSize),
		pointShapes:  newLRU(pointShapeCacheSize),
		lookupShapes: newLRU(pointShapeCacheSize),
		fallbacks:    newFallbackSet(opts.FallbackSize),

		noFastPath:  opts.NoFastPath,
		pointOrigin: opts.PointReadsToOrigin,
		testRewrite: opts.TestRewrite,
	}
}

// ReasonVerifyDiffered: shadow verification found an accelerated answer of
// the statement's shape different from the origin's.
const ReasonVerifyDiffered = "verify_differed"

// Demote sends statements of this fingerprint to the origin from now on:
// an accelerated answer of one differed from the origin's (shadow
// verification).
func (p *Planner) Demote(fingerprint uint64) {
	if fingerprint == 0 {
		return
	}
	if _, loaded := p.demoted.LoadOrStore(fingerprint, struct{}{}); !loaded {
		p.memo.fallbacks.Add(1) // decisions memoised before are stale
	}
}

// Demoted reports whether Demote was called for the fingerprint.
func (p *Planner) Demoted(fingerprint uint64) bool {
	_, ok := p.demoted.Load(fingerprint)
	return ok
}

// RememberFallback records that DuckDB could not run statements with this
// fingerprint, which read datasets: later ones go straight to the origin
// ("known_fallback") until one of the datasets changes (a load, a
// retention pass, new columns: Registry.Generation), since the cause may
// be gone then (a column added at the origin and loaded since).
func (p *Planner) RememberFallback(fingerprint uint64, datasets []string) {
	if fingerprint != 0 {
		p.fallbacks.add(fingerprint, datasets, p.generation(datasets))
		p.memo.fallbacks.Add(1)
	}
}

// generation sums the datasets' generations: it changes when any of them
// does.
func (p *Planner) generation(datasets []string) uint64 {
	var g uint64
	for _, name := range datasets {
		g += p.reg.Generation(name)
	}
	return g
}

// Plan decides where sql runs for session s (nil means an empty session).
func (p *Planner) Plan(ctx context.Context, sql string, s *Session) Decision {
	if d, ok := p.Quick(sql); ok {
		return d
	}
	return p.PlanFull(ctx, sql, s)
}

// PlanFull is Plan for a statement Quick has already declined (the proxy
// asks Quick first, before it reads the session): Plan without that scan.
func (p *Planner) PlanFull(ctx context.Context, sql string, s *Session) Decision {
	if s == nil {
		s = &Session{}
	}
	key := ""
	if len(sql) <= p.maxCached {
		key = memoKey(sql, s)
	}
	if d, ok := p.memoised(ctx, key, s); ok {
		return d
	}
	v := p.Version()
	d, seen := p.planFull(ctx, sql, s)
	if seen {
		// Only a text planned before is likely to be planned again.
		p.keep(key, v, d)
	}
	return d
}

// planFull is PlanFull without the decision memo (memo.go); seen reports
// whether the text's analysis was cached (it was planned before).
func (p *Planner) planFull(ctx context.Context, sql string, s *Session) (d Decision, seen bool) {
	a, cached := p.cachedAnalysis(sql)
	var tree *pg_query.ParseResult
	if !cached {
		// A new text may be a point read whose shape is known: no parse.
		if p.pointOrigin && !p.noFastPath && !s.OriginDown {
			if d, ok := p.quickPointRead(ctx, sql, s); ok {
				return d, false
			}
		}
		if s.PointOnly && !p.noFastPath {
			if d, ok := p.quickLookup(ctx, sql, s); ok {
				return d, false
			}
		}
		a, tree = p.analyzeAndCache(sql)
	}
	d, _ = p.decide(ctx, sql, a, tree, s, cached, nil)
	return d, cached
}

// decide plans sql, analysed as a (tree is its parse, when at hand; cached:
// a came from the analysis cache). With pins (quickLookup), a is the
// analysis of another text of sql's lookup shape and pins are sql's own
// key values: only an accelerated point lookup is wanted, planned without
// the SQL DuckDB would run, and ok is false for anything else (the full
// path then plans sql itself).
func (p *Planner) decide(ctx context.Context, sql string, a *analysis, tree *pg_query.ParseResult, s *Session, cached bool, pins map[string]pointPin) (d Decision, ok bool) {
	lookupOnly := pins != nil
	d = Decision{
		Route:          RouteOrigin,
		Fingerprint:    a.fingerprint,
		ParamCount:     a.paramCount,
		Kind:           a.kind,
		SetsSearchPath: a.setsSession,
		HoldCursor:     a.holdCursor,
		writes:         a.writes,
	}
	// toOrigin returns a decision for the origin: never the lookup wanted.
	toOrigin := func(d Decision) (Decision, bool) { return d, !lookupOnly }
	if p.hasCaching() && readThrough(a) {
		if lookupOnly {
			return d, false
		}
		if cd, ok := p.cachingDecision(ctx, a, s, d); ok {
			return cd, true
		}
	}
	if a.reason != "" {
		d.Reason, d.Detail = a.reason, a.detail
		if a.kind == KindSelect && !a.writes && len(a.rels) > 0 {
			// A read the acceleration cannot answer: which datasets it
			// reads, for the metrics (the resolver caches its answers).
			r, _ := p.resolve(ctx, a, s)
			d.Datasets, d.Tables = r.touched, r.tables
		}
		return toOrigin(d)
	}
	if s.TxWrote {
		d.Reason, d.Detail = ReasonTxWrote, "the transaction has written, run DDL or locked"
		return toOrigin(d)
	}
	if _, demoted := p.demoted.Load(a.fingerprint); demoted && a.fingerprint != 0 {
		d.Reason, d.Detail = ReasonVerifyDiffered, "shadow verification found an accelerated answer of this statement's shape different from the origin's (runtime.verify)"
		return toOrigin(d)
	}
	if p.fallbacks.has(a.fingerprint, p.generation) {
		d.Reason, d.Detail = ReasonKnownFallback, "DuckDB failed on a statement of this fingerprint before, and its datasets have not changed since"
		return toOrigin(d)
	}
	r, reason := p.resolve(ctx, a, s)
	d.Tables = r.tables
	d.Datasets = r.touched // for the metrics' labels, whatever the route
	if reason != "" {
		d.Reason, d.Detail = reason, r.detail
		return toOrigin(d)
	}
	r.textNums = numericTextNames(r)
	r.scale = planScales(a, r)
	r.defaultColl = defaultCollClass(s)
	r.caseLocale, _ = a.caseMode(r)
	if reason, detail := p.checkColumns(a, r); reason != "" {
		d.Reason, d.Detail = reason, detail
		return toOrigin(d)
	}
	if p.pointOrigin && s.OriginDown && isPointRead(a, r) && subsetAnswers(r.datasets[0]) {
		d.OriginDownPointRead = true
	}
	if p.pointOrigin && !s.OriginDown && isPointRead(a, r) && subsetAnswers(r.datasets[0]) {
		if lookupOnly {
			return d, false // the origin's route, for a's text
		}
		if origin, ok := p.pointReadSQL(a, r); ok {
			if origin == a.sql {
				p.rememberPointRead(sql, a)
			} else {
				d.OriginSQL = origin
			}
			d.Reason, d.Detail = ReasonPointRead, "a read of dataset "+d.Datasets[0]+" by its key (runtime.point_reads: origin)"
			return d, true
		}
		// The subset the acceleration holds is not known yet, or the
		// statement cannot be read through it: the acceleration answers.
		// So it does when no read of the origin's answers as it and its
		// use_source fallback would (subsetAnswers).
	}
	if d, refused := p.refusedSelect(ctx, s, r.tables, d); refused {
		return toOrigin(d)
	}
	fallback, ok := p.fallbackSQL(a, r)
	if !ok {
		d.Reason, d.Detail = ReasonFallbackFilter, "on_zero_results: use_source, and the origin statement reading through the inverse of the retention policy cannot be built (yet)"
		return toOrigin(d)
	}
	if lookupOnly {
		if fallback != "" {
			return d, false // built from a's text
		}
		d.PrintsText = len(textWrapped(a, r)) > 0 // as the rewrite says
	} else {
		out, err := p.rewrite(a, r, tree)
		if err != nil {
			d.Reason, d.Detail = ReasonUnsupported, "the rewrite for DuckDB failed: "+err.Error()
			return d, true
		}
		if out.refused != "" {
			d.Reason, d.Detail = ReasonUnsupported, out.refused
			if out.reason != "" {
				d.Reason = out.reason
			}
			return d, true
		}
		d.SQL, d.PrintsText = out.sql, out.printsText
		if p.testRewrite != nil {
			d.SQL = p.testRewrite(d.SQL)
		}
	}
	d.Verifiable, d.Ordered = a.verifiable && len(a.clocks) == 0, a.ordered
	d.Clocks = a.clocks
	d.ZoneSensitive = a.zoneSensitive(r)
	for _, c := range a.intervalConsts {
		if strings.Contains(c, "-") {
			d.SignedIntervals = true
		}
	}
	d.BinaryArraysInexact = a.types.slices
	d.FallbackSQL = fallback
	d.Route = RouteAccelerate
	d.Datasets = r.datasetNames()
	d.EnumTypes = r.enumTypes()
	d.NumericText = a.exactAvg
	if r.scale.ok && len(r.scale.out) > 0 {
		d.NumericText = append(append([]int(nil), a.exactAvg...), r.scale.out...)
	}
	if len(d.NumericText) == 0 && !d.PrintsText && len(a.clocks) == 0 && !readsHeldAsIs(a, r) {
		d.Point = pointLookup(a, r, pins)
		if d.Point != nil && a.lookup.shape != "" && !cached {
			p.lookupShapes.add(a.lookup.shape, a)
		}
	}
	return d, !lookupOnly || d.Point != nil
}

// refusedSelect asks the privilege checker (if any) whether s's role may
// read tables; when it may not, or the check failed, d comes back with the
// reason and refused is true.
func (p *Planner) refusedSelect(ctx context.Context, s *Session, tables []TableID, d Decision) (Decision, bool) {
	if p.priv == nil {
		return d, false
	}
	ok, why, err := p.priv.CanSelect(ctx, s.User, tables)
	switch {
	case err != nil:
		d.Reason, d.Detail = ReasonPrivilege, "the privilege check at the origin failed: "+err.Error()
		return d, true
	case !ok:
		d.Reason, d.Detail = why, "the role "+s.User+" may not read a table of the statement, or it has row level security"
		if why == "" {
			d.Reason = ReasonPrivilege
		}
		return d, true
	}
	return d, false
}

// cachedAnalysis returns the session-independent analysis of sql when the
// cache has it.
func (p *Planner) cachedAnalysis(sql string) (*analysis, bool) {
	if len(sql) > p.maxCached {
		return nil, false
	}
	return p.cache.get(sql)
}

// analyzeAndCache parses and analyses sql and caches the analysis. It also
// returns the parse tree, which the caller may use once for the rewrite.
func (p *Planner) analyzeAndCache(sql string) (*analysis, *pg_query.ParseResult) {
	a, tree := analyze(sql)
	if len(sql) <= p.maxCached {
		// The key must not pin a larger buffer the caller sliced sql from.
		a.sql = strings.Clone(sql)
		p.cache.add(a.sql, a)
	}
	return a, tree
}

// analyze parses sql and computes everything about it that does not depend
// on a session.
func analyze(sql string) (*analysis, *pg_query.ParseResult) {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return &analysis{kind: KindOther, reason: ReasonParseError, detail: "a statement of kind " + KindOther.String()}, nil
	}
	a := &analysis{sql: sql}
	if fp, err := pg_query.FingerprintToUInt64(sql); err == nil {
		a.fingerprint = fp
	}
	switch len(tree.Stmts) {
	case 0:
		a.kind, a.reason = KindEmpty, ReasonEmpty
	case 1:
		if mayReadClock(sql) {
			a.clocks = standInClocks(tree.Stmts[0].Stmt)
		}
		classify(a, tree.Stmts[0].Stmt)
		if len(a.clocks) > 0 {
			// Not a point read: its values change with the clock.
			a.lookup = nil
		}
		if a.lookup != nil {
			a.lookup.bindLiterals(sql)
		}
	default:
		a.kind, a.reason = KindMulti, ReasonMultiStatement
		for _, raw := range tree.Stmts {
			var one analysis
			classify(&one, raw.Stmt)
			a.writes = a.writes || one.writes
			a.setsSession = a.setsSession || one.setsSession
			a.paramCount = max(a.paramCount, one.paramCount)
		}
	}
	if a.reason != "" && a.detail == "" {
		// Once per analysis (they are cached), not per plan.
		a.detail = "a statement of kind " + a.kind.String()
	}
	return a, tree
}
