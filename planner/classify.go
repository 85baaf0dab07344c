package planner

import (
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Kind is what a statement is, for the proxy's tracking of transaction and
// session state.
type Kind uint8

// Statement kinds.
const (
	KindOther  Kind = iota // CHECKPOINT, LOAD, SET CONSTRAINTS, ...
	KindEmpty              // no statement at all
	KindMulti              // several statements in one text
	KindSelect             // SELECT, WITH ... SELECT, TABLE, VALUES
	KindInsert
	KindUpdate
	KindDelete
	KindMerge
	KindDDL // CREATE, ALTER, DROP, GRANT, TRUNCATE, COMMENT, SELECT INTO, REFRESH, ...
	KindSet // SET, SET LOCAL, SET TRANSACTION
	KindReset
	KindDiscard
	KindShow
	KindBegin // BEGIN, START TRANSACTION
	KindCommit
	KindRollback
	KindSavepoint
	KindRelease
	KindRollbackTo
	KindPrepareTransaction
	KindCommitPrepared
	KindRollbackPrepared
	KindCopy
	KindDeclare
	KindFetch
	KindMove
	KindClose
	KindListen
	KindNotify
	KindUnlisten
	KindPrepare
	KindExecute
	KindDeallocate
	KindExplain
	KindCall
	KindDo
	KindLock
	KindVacuum // VACUUM, ANALYZE
	kindCount
)

var kindNames = [kindCount]string{
	KindOther: "other", KindEmpty: "empty", KindMulti: "multi", KindSelect: "select",
	KindInsert: "insert", KindUpdate: "update", KindDelete: "delete", KindMerge: "merge",
	KindDDL: "ddl", KindSet: "set", KindReset: "reset", KindDiscard: "discard", KindShow: "show",
	KindBegin: "begin", KindCommit: "commit", KindRollback: "rollback", KindSavepoint: "savepoint",
	KindRelease: "release", KindRollbackTo: "rollback_to", KindPrepareTransaction: "prepare_transaction",
	KindCommitPrepared: "commit_prepared", KindRollbackPrepared: "rollback_prepared",
	KindCopy: "copy", KindDeclare: "declare", KindFetch: "fetch", KindMove: "move", KindClose: "close",
	KindListen: "listen", KindNotify: "notify", KindUnlisten: "unlisten",
	KindPrepare: "prepare", KindExecute: "execute", KindDeallocate: "deallocate",
	KindExplain: "explain", KindCall: "call", KindDo: "do", KindLock: "lock", KindVacuum: "vacuum",
}

func (k Kind) String() string {
	if k < kindCount {
		return kindNames[k]
	}
	return "unknown"
}

// EndsTransaction reports whether the statement ends the current
// transaction block when it succeeds (COMMIT, ROLLBACK, PREPARE
// TRANSACTION); the proxy then clears Session.TxWrote.
func (k Kind) EndsTransaction() bool {
	return k == KindCommit || k == KindRollback || k == KindPrepareTransaction
}

// cursorOptHold is CURSOR_OPT_HOLD of Postgres' parsenodes.h, the bit of
// DeclareCursorStmt.Options that WITH HOLD sets.
const cursorOptHold = 0x0020

// analysis is everything about a statement text that does not depend on
// the session. It is immutable once built, except for its rewrite cache.
type analysis struct {
	sql         string
	kind        Kind
	reason      string // set when the statement goes to the origin whatever the session
	detail      string // which rule set reason (why.go), for the debug log
	writes      bool
	setsSession bool
	holdCursor  bool // DECLARE ... WITH HOLD
	fingerprint uint64
	paramCount  int
	// clocks are the relative-time values the statement reads, which
	// the analysis sees as constants (clock.go).
	clocks []Clock

	// For reads that may be accelerated:
	rels []relRef // relation references, CTE names excluded
	// funcs are the names of the functions the statement calls, each
	// once; nondeterministic: it samples (TABLESAMPLE), whose rows differ
	// from run to run. Both decide whether the origin's answer may be
	// kept (refresh_mode: caching, caching.go).
	funcs            []string
	nondeterministic bool
	cols             *columnUse   // which columns the statement mentions
	qualified        []qualColRef // column references of three or more parts
	wholeRow         []string     // bare names that may be whole-row references
	// Inside float-sensitive aggregates (sum, avg, ...): column names used,
	// and whether a value is cast to a float type.
	aggCols      map[string]struct{}
	aggFloatCast bool
	// intFloatCols: columns of sum or avg of CAST(col AS double
	// precision), exact for integers (floatagg.go).
	intFloatCols map[string]struct{}
	// Column names used as operands of ||: they must be text-like.
	concatCols map[string]struct{}
	// numText: how the statement uses its column names, for numerics
	// held as text (numerictext.go).
	numText *numericTextUse
	// aliasDefs: the expressions of output columns by their names, for
	// the names a rule meets that are no dataset's column (aliases.go).
	aliasDefs map[string][]*pg_query.Node
	// caseCols: column names inside text whose case is mapped (upper,
	// lower, initcap, ILIKE); their LC_CTYPE must be C (collation.go).
	caseCols map[string]struct{}
	// Column names returned as they are by min, max, lag ... (valueFuncs).
	valueCols map[string]struct{}
	// Column names cast to a text type: their type must print alike
	// (textCastSafe).
	textCastCols map[string]struct{}
	// ordering: the statement sorts or range-compares values.
	ordering bool
	// mergesValues: CASE, COALESCE, set operations... merge values that
	// may differ in numeric scale; numericLiteral: a literal like 1.5.
	mergesValues   bool
	numericLiteral bool
	// valueDefaults are the value and default arguments of lag and lead
	// calls with a default (copies), whose common type Postgres resolves
	// (anycompatible) where DuckDB casts the default to the value's type
	// (commonTypeHazard).
	valueDefaults [][2]*pg_query.Node
	// fromScopes are the subqueries in FROM whose names must be columns
	// of their own tables (scoping.go).
	fromScopes []fromScope
	// subtractions are the operands of the binary - operators (copies),
	// for tstzHazard; intervalConsts the texts of interval constants
	// (tstz.go).
	subtractions   [][2]*pg_query.Node
	additions      [][2]*pg_query.Node // the operands of binary + (copies)
	intervalConsts []string
	// timeCalls are EXTRACTs and date_parts of time fields (timeguards.go).
	timeCalls []timeCall
	// concatArgs are the arguments of concat and concat_ws (copies),
	// which DuckDB prints its own way unless they are text.
	concatArgs []*pg_query.Node
	// mathCalls are the arguments of exp, ln, log, log10, sqrt, power and
	// ^ (copies): Postgres computes them in numeric when an argument is a
	// numeric, DuckDB always in double precision.
	mathCalls [][]*pg_query.Node
	// distinctOn are the DISTINCT ON keys (copies); arrayToString the
	// arrays array_to_string prints (copies).
	distinctOn, arrayToString []*pg_query.Node
	// percentileArgs are the values percentile_cont interpolates.
	percentileArgs []*pg_query.Node
	// verifiable and ordered: see Decision.
	verifiable, ordered bool
	// mergeCols: columns merged by those constructs; numeric ones merge
	// scales.
	mergeCols map[string]struct{}
	// mergesOutside and mergeColsOutside are mergesValues and mergeCols
	// without the merges inside scaleTargets (see scaletrack.go).
	mergesOutside    bool
	mergeColsOutside map[string]struct{}
	scaleTargets     []scaleTarget
	scaleSubs        map[string]*staticScale // FROM subqueries' output scales, by name
	// pass: the scale-tracked outputs of the one subquery or CTE the
	// statement passes through (passthrough.go), when it has none itself.
	pass *passScale
	// exactAvg: output columns that are a plain avg(x), rewritten exactly.
	exactAvg []int
	// pointCols: columns the WHERE of a one-table SELECT pins to a value
	// (pointread.go).
	pointCols []string
	// lookup: the statement's shape may be answered from a point index
	// (pointread.go).
	lookup *pointShape
	// predAvg: ordinals (among FuncCalls, in walk order) of the plain avg
	// calls inside predicates, rewritten to exact decimals (predavg.go).
	predAvg []int
	// roundUntracked: a round(x, k) or trunc(x, k) whose display scale is
	// not tracked (see scaletrack.go) and not only compared.
	roundUntracked bool
	// roundTracked: such a call inside a scale-tracked output.
	roundTracked bool
	// trackedNumericCast: a CAST(x AS numeric) inside a scale-tracked
	// output, exact only through its rewrite (scaletrack.go).
	trackedNumericCast bool
	// unnestSeries: a generate_series of literals in a target list,
	// unnested by the rewrite (series.go).
	unnestSeries bool
	// extracts: the sub-second EXTRACT and date_part calls (extract.go).
	extracts []extractSite
	// arithCols: column names that are operands of arithmetic
	// (divkinds.go).
	arithCols map[string]struct{}
	// divisions: the operands of every / and % (divkinds.go).
	divisions []division
	// types: what the type rules judge (typesites.go).
	types typeSites

	rewrites rewriteCache
	// fallbacks holds the origin forms of the statement for
	// on_zero_results: use_source (see fallback.go).
	fallbacks rewriteCache
}

// classify fills a from one statement.
func classify(a *analysis, stmt *pg_query.Node) {
	if sel := stmt.GetSelectStmt(); sel != nil {
		classifySelect(a, sel) // counts parameters on its walk
		return
	}
	a.paramCount = maxParam(stmt)
	switch n := stmt.GetNode().(type) {
	case *pg_query.Node_InsertStmt:
		a.kind, a.reason, a.writes = KindInsert, ReasonWrite, true
	case *pg_query.Node_UpdateStmt:
		a.kind, a.reason, a.writes = KindUpdate, ReasonWrite, true
	case *pg_query.Node_DeleteStmt:
		a.kind, a.reason, a.writes = KindDelete, ReasonWrite, true
	case *pg_query.Node_MergeStmt:
		a.kind, a.reason, a.writes = KindMerge, ReasonWrite, true
	case *pg_query.Node_VariableSetStmt:
		classifySet(a, n.VariableSetStmt)
	case *pg_query.Node_VariableShowStmt:
		a.kind, a.reason = KindShow, ReasonSessionSetting
	case *pg_query.Node_DiscardStmt:
		a.kind, a.reason = KindDiscard, ReasonSessionSetting
		t := n.DiscardStmt.Target
		a.setsSession = t == pg_query.DiscardMode_DISCARD_ALL || t == pg_query.DiscardMode_DISCARD_TEMP
	case *pg_query.Node_TransactionStmt:
		a.kind, a.reason = transactionKind(n.TransactionStmt.Kind), ReasonTransaction
	case *pg_query.Node_CopyStmt:
		a.kind, a.reason, a.writes = KindCopy, ReasonUtility, n.CopyStmt.IsFrom
	case *pg_query.Node_DeclareCursorStmt:
		a.kind, a.reason = KindDeclare, ReasonCursor
		var inner analysis
		if q := n.DeclareCursorStmt.Query; q != nil {
			classify(&inner, q)
		}
		a.writes = inner.writes // DECLARE ... FOR UPDATE locks rows
		a.holdCursor = n.DeclareCursorStmt.Options&cursorOptHold != 0
	case *pg_query.Node_FetchStmt:
		a.kind, a.reason = KindFetch, ReasonCursor
		if n.FetchStmt.Ismove {
			a.kind = KindMove
		}
	case *pg_query.Node_ClosePortalStmt:
		a.kind, a.reason = KindClose, ReasonCursor
	case *pg_query.Node_ListenStmt:
		a.kind, a.reason = KindListen, ReasonUtility
	case *pg_query.Node_NotifyStmt:
		a.kind, a.reason = KindNotify, ReasonUtility
	case *pg_query.Node_UnlistenStmt:
		a.kind, a.reason = KindUnlisten, ReasonUtility
	case *pg_query.Node_PrepareStmt:
		a.kind, a.reason = KindPrepare, ReasonUtility
	case *pg_query.Node_ExecuteStmt:
		// What the prepared statement does is unknown here.
		a.kind, a.reason, a.writes = KindExecute, ReasonUtility, true
	case *pg_query.Node_DeallocateStmt:
		a.kind, a.reason = KindDeallocate, ReasonUtility
	case *pg_query.Node_ExplainStmt:
		classifyExplain(a, n.ExplainStmt)
	case *pg_query.Node_CallStmt:
		a.kind, a.reason, a.writes = KindCall, ReasonUtility, true
	case *pg_query.Node_DoStmt:
		a.kind, a.reason, a.writes = KindDo, ReasonUtility, true
	case *pg_query.Node_LockStmt:
		a.kind, a.reason, a.writes = KindLock, ReasonLocking, true
	case *pg_query.Node_VacuumStmt:
		a.kind, a.reason = KindVacuum, ReasonUtility
	case *pg_query.Node_CheckPointStmt, *pg_query.Node_LoadStmt, *pg_query.Node_ConstraintsSetStmt:
		a.kind, a.reason = KindOther, ReasonUtility
	case *pg_query.Node_CreateTableAsStmt:
		a.kind, a.reason, a.writes = KindDDL, ReasonWrite, true
		a.setsSession = n.CreateTableAsStmt.Into != nil && isTempRangeVar(n.CreateTableAsStmt.Into.Rel)
	case nil:
		a.kind, a.reason = KindOther, ReasonUnsupported
	default:
		// Everything else changes the schema, privileges or objects.
		a.kind, a.reason, a.writes = KindDDL, ReasonWrite, true
		a.setsSession = ddlChangesSession(stmt)
	}
}

// classifySelect analyses a read; see relations.go for the walk.
func classifySelect(a *analysis, sel *pg_query.SelectStmt) {
	a.kind = KindSelect
	z := newAnalyzer(a)
	a.scaleTargets, z.exempt, a.scaleSubs = scaleCandidates(sel)
	if !slices.ContainsFunc(a.scaleTargets, func(st scaleTarget) bool { return !st.plain }) {
		// Plain targets (numerics held as text) count only where
		// nothing else is tracked.
		if p, exempt := passThroughScales(sel); p != nil {
			a.pass, z.exempt = p, exempt
		}
	}
	z.predAvg, z.predRound = predicateCalls(sel)
	z.topTargets = outputTargets(sel, nil)
	z.absorbed = absorbedMerges(sel)
	a.numText = numericTextUses(sel)
	walk(sel, z)
	var why string
	if a.fromScopes, why = analyzeScopes(sel); why != "" {
		z.flagWhy(flagUnsupported, why)
	}
	if why := intervalCollision(a.intervalConsts); why != "" {
		z.flagWhy(flagUnsupported, why)
	}
	if why := floatZeroCollision(sel); why != "" {
		z.flagWhy(flagUnsupported, why)
	}
	a.ordered = len(sel.SortClause) > 0
	a.verifiable = sel.LimitCount == nil && sel.LimitOffset == nil && !z.tieDependent && !hasDistinctOn(sel)
	a.exactAvg = exactAvgPositions(sel)
	a.pointCols = pointColumns(sel)
	if len(a.pointCols) > 0 {
		a.lookup = lookupShape(sel)
	}
	roundedAvgs := 0
	for _, st := range a.scaleTargets {
		if st.rounds && !st.divides {
			roundedAvgs++
		}
	}
	if z.avgCalls > len(a.exactAvg)+len(a.predAvg)+roundedAvgs {
		// An avg that is not a whole output column would run in
		// floating point in DuckDB.
		z.flagWhy(flagUnsupported, "avg inside an expression (DuckDB averages numerics in floating point)")
	}
	z.finish()
}

func classifySet(a *analysis, s *pg_query.VariableSetStmt) {
	a.kind, a.reason = KindSet, ReasonSessionSetting
	switch s.Kind {
	case pg_query.VariableSetKind_VAR_RESET:
		a.kind = KindReset
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		a.kind, a.setsSession = KindReset, true
		return
	}
	switch strings.ToLower(s.Name) {
	case "search_path", "role", "session_authorization":
		a.setsSession = true
	}
}

func classifyExplain(a *analysis, e *pg_query.ExplainStmt) {
	a.kind, a.reason = KindExplain, ReasonUtility
	analyze := false
	for _, o := range e.Options {
		if d := o.GetDefElem(); d != nil && strings.EqualFold(d.Defname, "analyze") {
			analyze = true
		}
	}
	if analyze && e.Query != nil {
		var inner analysis
		classify(&inner, e.Query)
		a.writes = inner.writes // EXPLAIN ANALYZE runs the statement
		a.setsSession = inner.setsSession
	}
}

func transactionKind(k pg_query.TransactionStmtKind) Kind {
	switch k {
	case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
		return KindBegin
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT:
		return KindCommit
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		return KindRollback
	case pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		return KindSavepoint
	case pg_query.TransactionStmtKind_TRANS_STMT_RELEASE:
		return KindRelease
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return KindRollbackTo
	case pg_query.TransactionStmtKind_TRANS_STMT_PREPARE:
		return KindPrepareTransaction
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT_PREPARED:
		return KindCommitPrepared
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_PREPARED:
		return KindRollbackPrepared
	}
	return KindOther
}

// ddlChangesSession reports whether a DDL statement may change how the
// session resolves names: a temporary relation created, any relation
// dropped or renamed or moved (it may be a temporary one), a schema created,
// dropped or renamed (current_schemas lists only schemas that exist).
func ddlChangesSession(stmt *pg_query.Node) bool {
	switch n := stmt.GetNode().(type) {
	case *pg_query.Node_CreateStmt:
		return isTempRangeVar(n.CreateStmt.Relation)
	case *pg_query.Node_ViewStmt:
		return isTempRangeVar(n.ViewStmt.View)
	case *pg_query.Node_CreateSeqStmt:
		return isTempRangeVar(n.CreateSeqStmt.Sequence)
	case *pg_query.Node_CreateSchemaStmt, *pg_query.Node_CreateExtensionStmt,
		*pg_query.Node_AlterObjectSchemaStmt, *pg_query.Node_DropOwnedStmt:
		return true
	case *pg_query.Node_DropStmt:
		switch n.DropStmt.RemoveType {
		case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_VIEW,
			pg_query.ObjectType_OBJECT_MATVIEW, pg_query.ObjectType_OBJECT_SEQUENCE,
			pg_query.ObjectType_OBJECT_FOREIGN_TABLE, pg_query.ObjectType_OBJECT_SCHEMA:
			return true
		}
	case *pg_query.Node_RenameStmt:
		switch n.RenameStmt.RenameType {
		case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_VIEW,
			pg_query.ObjectType_OBJECT_MATVIEW, pg_query.ObjectType_OBJECT_SEQUENCE,
			pg_query.ObjectType_OBJECT_FOREIGN_TABLE, pg_query.ObjectType_OBJECT_SCHEMA:
			return true
		}
	}
	return false
}

// isTempRangeVar reports whether rv names a temporary relation being
// created: TEMP/TEMPORARY, or the pg_temp schema.
func isTempRangeVar(rv *pg_query.RangeVar) bool {
	return rv != nil && (rv.Relpersistence == "t" || isTempSchema(rv.Schemaname))
}

// isTempSchema reports whether schema is the session's temporary schema.
func isTempSchema(schema string) bool {
	return schema == "pg_temp" || strings.HasPrefix(schema, "pg_temp_")
}

// isCatalogSchema reports whether schema holds the system catalogs.
func isCatalogSchema(schema string) bool {
	return schema == "pg_catalog" || schema == "information_schema" || schema == "pg_toast"
}

// paramVisitor finds the highest $n.
type paramVisitor struct{ max int }

func (p *paramVisitor) enter(m proto.Message, _ *walker) {
	if r, ok := m.(*pg_query.ParamRef); ok && int(r.Number) > p.max {
		p.max = int(r.Number)
	}
}

func maxParam(stmt *pg_query.Node) int {
	var p paramVisitor
	walk(stmt, &p)
	return p.max
}

// TransactionControl returns KindBegin for a text that is one BEGIN or
// START TRANSACTION (with any transaction modes), KindCommit for one
// COMMIT or END and KindRollback for one ROLLBACK or ABORT, neither AND
// CHAIN; KindOther for anything else. It parses only texts whose first
// word is one of those, so it is cheap to ask of every statement.
func TransactionControl(sql string) Kind {
	if !startsTransactionWord(sql) {
		return KindOther
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return KindOther
	}
	t := tree.Stmts[0].GetStmt().GetTransactionStmt()
	if t == nil || t.Chain {
		return KindOther
	}
	switch k := transactionKind(t.Kind); k {
	case KindBegin, KindCommit, KindRollback:
		return k
	}
	return KindOther
}

// startsTransactionWord reports whether sql's first word is BEGIN, START,
// COMMIT, END, ROLLBACK or ABORT, in any case.
func startsTransactionWord(sql string) bool {
	w := LeadingWord(sql)
	for _, k := range [...]string{"begin", "start", "commit", "end", "rollback", "abort"} {
		if strings.EqualFold(w, k) {
			return true
		}
	}
	return false
}

// LeadingWord returns the run of ASCII letters that starts sql after its
// blanks (a keyword, if sql starts with one), without copying.
func LeadingWord(sql string) string {
	i := 0
	for i < len(sql) && (sql[i] == ' ' || sql[i] == '\t' || sql[i] == '\n' || sql[i] == '\r' || sql[i] == '\f') {
		i++
	}
	j := i
	for j < len(sql) && sql[j]|0x20 >= 'a' && sql[j]|0x20 <= 'z' {
		j++
	}
	return sql[i:j]
}

// SessionSetting returns the parameter and value of a text that is one
// SET [SESSION] name {TO | =} value with a single constant value: the
// name in lower case, the value as Postgres receives it (a string
// constant's text, or an integer's decimal digits). ok is false for
// anything else (SET LOCAL, DEFAULT, lists, RESET, several statements).
// It parses only texts whose first word is SET, so it is cheap to ask of
// every statement.
func SessionSetting(sql string) (name, value string, ok bool) {
	if !strings.EqualFold(LeadingWord(sql), "set") {
		return "", "", false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", "", false
	}
	s := tree.Stmts[0].GetStmt().GetVariableSetStmt()
	if s == nil || s.IsLocal || s.Kind != pg_query.VariableSetKind_VAR_SET_VALUE || len(s.Args) != 1 {
		return "", "", false
	}
	c := s.Args[0].GetAConst()
	if c == nil || c.Isnull {
		return "", "", false
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Sval:
		value = v.Sval.GetSval()
	case *pg_query.A_Const_Ival:
		value = strconv.Itoa(int(v.Ival.GetIval()))
	default:
		return "", "", false
	}
	return strings.ToLower(s.Name), value, true
}

// DiscardAll reports whether sql is one DISCARD ALL. It parses only texts
// whose first word is DISCARD.
func DiscardAll(sql string) bool {
	if !strings.EqualFold(LeadingWord(sql), "discard") {
		return false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return false
	}
	d := tree.Stmts[0].GetStmt().GetDiscardStmt()
	return d != nil && d.Target == pg_query.DiscardMode_DISCARD_ALL
}

// Deallocate reports whether sql is one DEALLOCATE statement, and what it
// drops: the prepared statement name (as Postgres reads the identifier),
// or every one (all; name is then "").
func Deallocate(sql string) (name string, all, ok bool) {
	if !strings.EqualFold(LeadingWord(sql), "deallocate") {
		return "", false, false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false, false
	}
	d := tree.Stmts[0].GetStmt().GetDeallocateStmt()
	if d == nil {
		return "", false, false
	}
	return d.Name, d.Isall, true
}

// ResetStep is one statement of a connection reset that a pool sends when
// a connection goes back to it (SessionReset).
type ResetStep byte

const (
	ResetUnlockAll   ResetStep = 'S' // SELECT pg_advisory_unlock_all()
	ResetCloseAll    ResetStep = 'C' // CLOSE ALL
	ResetUnlistenAll ResetStep = 'U' // UNLISTEN *
	ResetAll         ResetStep = 'R' // RESET ALL
)

// SessionReset reads sql as a connection reset: one or more statements,
// each of them SELECT pg_advisory_unlock_all() (without an alias), CLOSE
// ALL, UNLISTEN * or RESET ALL, as asyncpg's pool sends when a
// connection is released. It returns the statements' steps in order
// (as a string of ResetSteps); ok is false for anything else.
func SessionReset(sql string) (steps string, ok bool) {
	switch w := LeadingWord(sql); {
	case strings.EqualFold(w, "select"):
		// Every read of a session with no origin connection is asked:
		// only a text naming the function is parsed.
		if !containsFold(sql, "pg_advisory_unlock_all") {
			return "", false
		}
	case strings.EqualFold(w, "close"), strings.EqualFold(w, "unlisten"), strings.EqualFold(w, "reset"):
	default:
		return "", false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) == 0 {
		return "", false
	}
	b := make([]byte, 0, len(tree.Stmts))
	for _, raw := range tree.Stmts {
		st := raw.GetStmt()
		switch {
		case st.GetClosePortalStmt() != nil && st.GetClosePortalStmt().Portalname == "":
			b = append(b, byte(ResetCloseAll))
		case st.GetUnlistenStmt() != nil && st.GetUnlistenStmt().Conditionname == "":
			b = append(b, byte(ResetUnlistenAll))
		case st.GetVariableSetStmt() != nil && st.GetVariableSetStmt().Kind == pg_query.VariableSetKind_VAR_RESET_ALL:
			b = append(b, byte(ResetAll))
		case isUnlockAll(st.GetSelectStmt()):
			b = append(b, byte(ResetUnlockAll))
		default:
			return "", false
		}
	}
	return string(b), true
}

// isUnlockAll reports whether s is SELECT [pg_catalog.]pg_advisory_unlock_all()
// and nothing more.
func isUnlockAll(s *pg_query.SelectStmt) bool {
	if s == nil || len(s.TargetList) != 1 || len(s.FromClause) != 0 || s.WhereClause != nil || s.GroupClause != nil ||
		s.HavingClause != nil || s.WindowClause != nil || s.ValuesLists != nil || s.SortClause != nil ||
		s.LimitCount != nil || s.LimitOffset != nil || s.LockingClause != nil || s.WithClause != nil ||
		s.DistinctClause != nil || s.IntoClause != nil || s.Op != pg_query.SetOperation_SETOP_NONE {
		return false
	}
	rt := s.TargetList[0].GetResTarget()
	if rt == nil || rt.Name != "" {
		return false
	}
	fc := rt.Val.GetFuncCall()
	if fc == nil || len(fc.Args) != 0 || fc.AggStar || fc.AggDistinct || fc.FuncVariadic || fc.Over != nil ||
		fc.AggFilter != nil || len(fc.AggOrder) != 0 {
		return false
	}
	var names []string
	for _, n := range fc.Funcname {
		names = append(names, n.GetString_().GetSval())
	}
	return slices.Equal(names, []string{"pg_advisory_unlock_all"}) ||
		slices.Equal(names, []string{"pg_catalog", "pg_advisory_unlock_all"})
}

// containsFold reports whether s contains lower (lower-case ASCII) in any
// case, without allocating.
func containsFold(s, lower string) bool {
	for i := 0; i+len(lower) <= len(s); i++ {
		j := 0
		for ; j < len(lower); j++ {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lower[j] {
				break
			}
		}
		if j == len(lower) {
			return true
		}
	}
	return false
}
