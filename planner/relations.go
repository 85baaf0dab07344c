package planner

import (
	"context"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/pgaccel/pgaccel/catalog"
)

// relRef is one relation reference of a read, as written.
type relRef struct {
	ordinal    int    // position among all RangeVars in walk order (CTE references included)
	schema     string // "" when unqualified
	name       string
	alias      string // "" when none
	colAliases bool   // the alias renames columns: FROM orders o(a, b)
}

// refName is the name the rest of the statement uses for the relation.
func (r relRef) refName() string {
	if r.alias != "" {
		return r.alias
	}
	return r.name
}

// qualColRef is a column reference of three parts, schema.table.column (or
// schema.table.*): after the rewrite the table is known by its alias only,
// so the schema must be dropped.
type qualColRef struct {
	ordinal int // position among all ColumnRefs in walk order
	schema  string
	rel     string
}

// columnUse is what a read says about columns.
type columnUse struct {
	names   map[string]struct{} // every name part of column references, USING lists and field selections
	star    bool                // * or t.* anywhere
	natural bool                // NATURAL JOIN anywhere
}

// Static reasons an analyzer may find, in order of precedence.
const (
	flagWrite uint8 = 1 << iota
	flagLocking
	flagCatalog
	flagTempTable
	flagFunction
	flagUnsupported
)

var flagReasons = []struct {
	flag   uint8
	reason string
}{
	{flagWrite, ReasonWrite},
	{flagLocking, ReasonLocking},
	{flagCatalog, ReasonCatalog},
	{flagTempTable, ReasonTempTable},
	{flagFunction, ReasonFunction},
	{flagUnsupported, ReasonUnsupported},
}

// analyzer is the visitor that analyses a read.
type analyzer struct {
	a        *analysis
	flags    uint8
	details  flagDetails // what first raised each flag (why.go)
	avgCalls int         // avg(...) calls anywhere in the statement
	// targetSRFs counts set-returning calls outside FROM (series.go).
	targetSRFs int
	rangeVar   int                         // RangeVars seen
	colRef     int                         // ColumnRefs seen
	refNames   map[string]struct{}         // names of relations, subqueries, functions and CTEs in FROM
	outNames   map[string]struct{}         // output column names given with AS
	bare       []string                    // one-part column references
	fromSRF    map[*pg_query.FuncCall]bool // function calls that are FROM items
	exempt     map[proto.Message]bool      // merges inside scale-tracked outputs
	floored    map[*pg_query.A_Expr]string // divisions x / N under floor(), ceil(), round(), trunc() (floordiv.go)
	predAvg    map[*pg_query.FuncCall]bool // plain avg calls inside predicates
	predRound  map[*pg_query.FuncCall]bool // round(x, k) and trunc(x, k) inside predicates
	// funcCalls numbers FuncCalls in walk order, as the rewrite's
	// collector does.
	funcCalls int
	// tieDependent: a window function, or an aggregate whose value
	// depends on the order of its rows (array_agg, string_agg, ...), or a
	// LIMIT below the top: the answer may differ between engines for tied
	// rows (Decision.Verifiable).
	tieDependent bool
	// byteaConsts are string literals cast to bytea (rewriteByteaLiteral).
	byteaConsts map[*pg_query.A_Const]bool
	// targetStars are the * and t.* items of select lists (any other is
	// a whole-row reference).
	targetStars map[*pg_query.ColumnRef]bool
	// topTargets are the statement's own output columns (aliases.go).
	topTargets map[*pg_query.ResTarget]bool
	// absorbed are merges whose scale is never printed (numericscale.go).
	absorbed map[proto.Message]bool
}

func newAnalyzer(a *analysis) *analyzer {
	a.cols = &columnUse{names: make(map[string]struct{})}
	return &analyzer{a: a, refNames: make(map[string]struct{}), fromSRF: make(map[*pg_query.FuncCall]bool)}
}

func (z *analyzer) flag(f uint8) { z.flags |= f }

// flagWhy raises f with its detail (for flags raised outside the walk).
func (z *analyzer) flagWhy(f uint8, why string) {
	z.details.note(z.flags, z.flags|f, why)
	z.flags |= f
}

func (z *analyzer) enter(m proto.Message, w *walker) {
	before := z.flags
	z.enterNode(m, w)
	if z.flags != before {
		z.details.note(before, z.flags, describeNode(m))
	}
}

func (z *analyzer) enterNode(m proto.Message, w *walker) {
	z.noteOrdering(m)
	z.noteMerging(m)
	z.noteTypeSites(m, w)
	if why := checkArgs(m); why != "" {
		z.flagWhy(flagUnsupported, why)
	}
	switch n := m.(type) {
	case *pg_query.SelectStmt:
		if hasDistinctOn(n) && len(n.SortClause) <= len(n.DistinctClause) {
			// No ORDER BY key beyond DISTINCT ON's: which row of a group
			// of equal keys is kept is the engine's choice.
			for _, d := range n.DistinctClause {
				if d.GetNode() == nil {
					continue
				}
				if k, ok := constInt(d); ok && k >= 1 && int(k) <= len(n.TargetList) {
					// DISTINCT ON (1): the first output column.
					if v := n.TargetList[k-1].GetResTarget().GetVal(); v != nil {
						d = v
					}
				}
				z.a.distinctOn = append(z.a.distinctOn, copyNode(d))
			}
		}
		if n.LimitCount != nil || n.LimitOffset != nil || hasDistinctOn(n) {
			z.tieDependent = true // in a subquery too: which rows it keeps
		}
		for _, t := range n.TargetList {
			if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil {
				if z.targetStars == nil {
					z.targetStars = map[*pg_query.ColumnRef]bool{}
				}
				z.targetStars[cr] = true
			}
		}
		if len(n.LockingClause) > 0 {
			z.flag(flagLocking)
			z.a.writes = true
		}
		if n.IntoClause != nil {
			// SELECT INTO is CREATE TABLE AS.
			z.flag(flagWrite)
			z.a.kind, z.a.writes = KindDDL, true
			if isTempRangeVar(n.IntoClause.Rel) {
				z.a.setsSession = true
			}
		}
	case *pg_query.CommonTableExpr:
		z.refNames[n.Ctename] = struct{}{}
		if k := modifyingKind(n.Ctequery); k != KindOther {
			z.flag(flagWrite)
			z.a.kind, z.a.writes = k, true
		}
	case *pg_query.RangeVar:
		z.rangeVar++
		z.relation(n, z.rangeVar-1, w)
	case *pg_query.RangeSubselect:
		z.aliasName(n.Alias)
	case *pg_query.RangeFunction:
		z.aliasName(n.Alias)
		for _, item := range n.Functions {
			if l := item.GetList(); l != nil && len(l.Items) > 0 {
				if fc := l.Items[0].GetFuncCall(); fc != nil {
					z.fromSRF[fc] = true
				}
			}
		}
	case *pg_query.JoinExpr:
		z.aliasName(n.Alias)
		z.aliasName(n.JoinUsingAlias)
		if n.IsNatural {
			z.a.cols.natural = true
		}
		names, _ := stringsOf(n.UsingClause)
		for _, s := range names {
			z.a.cols.names[s] = struct{}{}
		}
	case *pg_query.RangeTableSample:
		z.flag(flagUnsupported) // sampling differs in DuckDB
		z.a.nondeterministic = true
	case *pg_query.RangeTableFunc, *pg_query.JsonTable:
		z.flag(flagUnsupported)
	case *pg_query.ResTarget:
		if n.Name != "" {
			if z.outNames == nil {
				z.outNames = map[string]struct{}{}
			}
			z.outNames[n.Name] = struct{}{}
		}
		z.noteAlias(n)
	case *pg_query.ColumnRef:
		z.colRef++
		z.columnRef(n, z.colRef-1)
	case *pg_query.A_Indirection:
		for _, ind := range n.Indirection {
			if s, ok := ind.GetNode().(*pg_query.Node_String_); ok {
				z.a.cols.names[s.String_.Sval] = struct{}{}
			} else if _, ok := ind.GetNode().(*pg_query.Node_AStar); ok {
				z.a.cols.star = true
			}
		}
	case *pg_query.ParamRef:
		z.a.paramCount = max(z.a.paramCount, int(n.Number))
	case *pg_query.FuncCall:
		if n.Over != nil || orderSensitiveAggs[funcName(n)] {
			z.tieDependent = true
		}
		if e, how := flooredDivision(n); e != nil {
			if z.floored == nil {
				z.floored = map[*pg_query.A_Expr]string{}
			}
			z.floored[e] = how
		}
		if funcName(n) == "avg" && !(len(n.Args) == 1 && floatArg(n)) {
			z.avgCalls++
			if z.predAvg[n] {
				z.a.predAvg = append(z.a.predAvg, z.funcCalls)
			}
		}
		z.funcCalls++
		if scaleSetting(n) && !z.predRound[n] && !z.absorbed[n] {
			// Printed with DuckDB's scale (round(2, 2) is 2, not 2.00)
			// unless its output is scale-tracked.
			if z.exempt[n] {
				z.a.roundTracked = true
			} else {
				z.a.roundUntracked = true
			}
		}
		z.noteFloatAggregate(n)
		z.noteValueFunction(n)
		z.noteExtract(n)
		z.noteTimeCall(n)
		switch funcName(n) {
		case "concat", "concat_ws":
			for _, arg := range n.Args {
				z.a.concatArgs = append(z.a.concatArgs, copyNode(arg))
			}
		case "array_to_string":
			if len(n.Args) > 0 {
				z.a.arrayToString = append(z.a.arrayToString, copyNode(n.Args[0]))
			}
		case "exp", "ln", "log", "log10", "sqrt", "power", "pow":
			var args []*pg_query.Node
			for _, arg := range n.Args {
				args = append(args, copyNode(arg))
			}
			z.a.mathCalls = append(z.a.mathCalls, args)
		case "percentile_cont":
			for _, sb := range n.AggOrder {
				if x := sb.GetSortBy().GetNode(); x != nil {
					z.a.percentileArgs = append(z.a.percentileArgs, copyNode(x))
				}
			}
		}
		if funcName(n) == "array_length" && !literalInt(n.Args, 1, 1) {
			z.flag(flagUnsupported) // dimensions other than 1: no DuckDB namesake
		}
		v := checkFuncCall(n)
		if name := funcName(n); name != "" && !slices.Contains(z.a.funcs, name) {
			z.a.funcs = append(z.a.funcs, name)
		}
		if (setReturning[funcName(n)] || funcName(n) == "unnest") && !z.fromSRF[n] {
			z.targetSRFs++
		}
		if setReturning[funcName(n)] && !z.fromSRF[n] && !literalSeries(n) {
			// generate_series(1, 3) in a target list is three rows at
			// the origin and one list in DuckDB (series.go unnests the
			// literal ones).
			v.flag |= flagUnsupported
		}
		if literalSeries(n) && !z.fromSRF[n] {
			z.a.unnestSeries = true
		}
		z.flags |= v.flag
		z.a.writes = z.a.writes || v.writes
		z.a.setsSession = z.a.setsSession || v.setsSession
	case *pg_query.SQLValueFunction:
		// CURRENT_DATE, CURRENT_USER, ...: time of the transaction, session.
		z.flag(flagFunction)
	case *pg_query.TypeName:
		z.flags |= checkTypeName(n)
	case *pg_query.A_Const:
		z.flags |= checkConst(n)
		if s, ok := n.Val.(*pg_query.A_Const_Sval); ok && strings.HasPrefix(s.Sval.Sval, `\x`) && !z.byteaConsts[n] {
			// A bytea in hex, taken as a bytea: DuckDB reads \xde as one
			// escaped byte and the rest as characters.
			z.flagWhy(flagUnsupported, "a string literal in bytea's hex format, not cast to bytea")
		}
	case *pg_query.A_Expr:
		if isDivision(n) {
			// Copies: the rewrite changes the analysed tree in place.
			z.a.divisions = append(z.a.divisions, division{
				l: proto.Clone(n.Lexpr).(*pg_query.Node), r: proto.Clone(n.Rexpr).(*pg_query.Node), tracked: z.exempt[n], floored: z.floored[n]})
		}
		if isSubtraction(n) {
			z.a.subtractions = append(z.a.subtractions, [2]*pg_query.Node{copyNode(n.Lexpr), copyNode(n.Rexpr)})
		}
		if n.Kind == pg_query.A_Expr_Kind_AEXPR_OP && n.Lexpr != nil && n.Rexpr != nil && divisionOp(n) == "^" {
			z.a.mathCalls = append(z.a.mathCalls, []*pg_query.Node{copyNode(n.Lexpr), copyNode(n.Rexpr)})
		}
		if n.Kind == pg_query.A_Expr_Kind_AEXPR_OP && n.Lexpr != nil && n.Rexpr != nil && divisionOp(n) == "+" {
			z.a.additions = append(z.a.additions, [2]*pg_query.Node{copyNode(n.Lexpr), copyNode(n.Rexpr)})
		}
		z.flags |= checkOperator(n)
		z.checkConcat(n)
		z.noteArithmetic(n)
	case *pg_query.TypeCast:
		if castTarget(n, map[string]bool{"bytea": true}) {
			if c := n.Arg.GetAConst(); c != nil {
				if s, ok := c.Val.(*pg_query.A_Const_Sval); ok {
					if !byteaLiteralOK(s.Sval.Sval) {
						z.flagWhy(flagUnsupported, "a bytea literal DuckDB reads otherwise (escapes or non-ASCII bytes)")
					}
					if z.byteaConsts == nil {
						z.byteaConsts = map[*pg_query.A_Const]bool{}
					}
					z.byteaConsts[c] = true
				}
			}
		}
		if text, ok := intervalConst(n); ok {
			z.a.intervalConsts = append(z.a.intervalConsts, text)
		}
		z.flags |= z.checkTextCast(n)
		if z.exempt[n] {
			// A scale-tracked output's: rewritten when its scale plan
			// holds (numericCasts), else valueHazard refuses it.
			z.a.trackedNumericCast = true
		} else {
			z.flags |= checkNumericCast(n)
		}
	case *pg_query.XmlExpr, *pg_query.XmlSerialize:
		z.flag(flagUnsupported)
	}
}

// relation records one RangeVar.
func (z *analyzer) relation(rv *pg_query.RangeVar, ordinal int, w *walker) {
	if rv.Catalogname != "" {
		z.flag(flagUnsupported) // db.schema.table
		return
	}
	if rv.Schemaname == "" && w.inCTEScope(rv.Relname) {
		z.aliasName(rv.Alias)
		if rv.Alias == nil {
			z.refNames[rv.Relname] = struct{}{}
		}
		return
	}
	switch {
	case isCatalogSchema(rv.Schemaname):
		z.flag(flagCatalog)
	case isTempSchema(rv.Schemaname):
		z.flag(flagTempTable)
	}
	if !rv.Inh {
		// FROM ONLY t: the acceleration holds inheritance children too.
		z.flag(flagUnsupported)
	}
	r := relRef{ordinal: ordinal, schema: rv.Schemaname, name: rv.Relname}
	if rv.Alias != nil {
		r.alias = rv.Alias.Aliasname
		r.colAliases = len(rv.Alias.Colnames) > 0
	}
	z.refNames[r.refName()] = struct{}{}
	z.a.rels = append(z.a.rels, r)
}

func (z *analyzer) aliasName(a *pg_query.Alias) {
	if a != nil && a.Aliasname != "" {
		z.refNames[a.Aliasname] = struct{}{}
	}
}

// columnRef records one column reference.
func (z *analyzer) columnRef(c *pg_query.ColumnRef, ordinal int) {
	var parts []string
	star := false
	for _, f := range c.Fields {
		switch v := f.GetNode().(type) {
		case *pg_query.Node_String_:
			parts = append(parts, v.String_.Sval)
			z.a.cols.names[v.String_.Sval] = struct{}{}
		case *pg_query.Node_AStar:
			star = true
		}
	}
	if star {
		z.a.cols.star = true
		if !z.targetStars[c] {
			// t.* anywhere but a select list (count(t.*), ROW(t.*),
			// t.* IS NULL) is a whole-row value, NULL for the
			// NULL-extended rows of an outer join in Postgres, a row of
			// NULLs in DuckDB.
			z.flagWhy(flagUnsupported, "the whole-row reference "+strings.Join(append(parts, "*"), "."))
		}
	}
	switch {
	case len(parts) == 1 && !star:
		z.bare = append(z.bare, parts[0])
	case len(c.Fields) == 3 && len(parts) >= 2:
		z.a.qualified = append(z.a.qualified, qualColRef{ordinal: ordinal, schema: parts[0], rel: parts[1]})
	case len(c.Fields) > 3:
		z.flag(flagUnsupported)
	}
}

// finish turns what the walk saw into the analysis' static verdict.
func (z *analyzer) finish() {
	if z.a.unnestSeries && z.targetSRFs > 1 {
		z.flagWhy(flagUnsupported, "generate_series beside another set-returning call outside FROM")
	}
	for _, f := range flagReasons {
		if z.flags&f.flag != 0 {
			z.a.reason, z.a.detail = f.reason, z.details.of(f.flag)
			break
		}
	}
	if z.a.reason == "" && len(z.a.rels) == 0 {
		z.a.reason = ReasonNoTables
	}
	seen := map[string]bool{}
	for _, b := range z.bare {
		if _, isColumn := z.outNames[b]; isColumn {
			// A subquery's output column of that name (SELECT nation FROM
			// (SELECT n_name AS nation FROM nation) s): Postgres resolves
			// the bare name to the column. Were it a whole-row reference
			// after all, its record type would make the encoder refuse it.
			continue
		}
		if _, ok := z.refNames[b]; ok && !seen[b] {
			seen[b] = true
			z.a.wholeRow = append(z.a.wholeRow, b)
		}
	}
}

// modifyingKind returns the kind of a data-modifying CTE body, or
// KindOther for a read.
func modifyingKind(n *pg_query.Node) Kind {
	switch n.GetNode().(type) {
	case *pg_query.Node_InsertStmt:
		return KindInsert
	case *pg_query.Node_UpdateStmt:
		return KindUpdate
	case *pg_query.Node_DeleteStmt:
		return KindDelete
	case *pg_query.Node_MergeStmt:
		return KindMerge
	}
	return KindOther
}

// resolution is how one session resolves the relations of a read.
type resolution struct {
	schemas  []string // resolved schema of each analysis.rels entry
	datasets []usedDataset
	relDS    []int // index in datasets of each analysis.rels entry
	tables   []TableID
	// touched names every dataset the read touches, ready or not, in the
	// order of the relations.
	touched []string
	// detail says which relation made resolve return its reason.
	detail string
	scale  scalePlan // set by Plan once resolved
	// textNums are the datasets' numerics held as text by name
	// (numericTextNames), set by Plan once resolved.
	textNums map[string]catalog.ColumnInfo
	// defaultColl is the class of the database's default collation
	// (collorder.go), set by Plan from the session: "" bytewise, "L" +
	// the locale the acceleration orders it by, "X" + why not.
	defaultColl string
	// caseLocale is the locale the statement's case mappings follow, ""
	// for ASCII letters only (analysis.caseMode), set by Plan.
	caseLocale string
}

type usedDataset struct {
	ds    *catalog.Dataset
	state catalog.DatasetState
}

// anyColumn reports whether a column of a dataset the statement reads
// is ok.
func (r resolution) anyColumn(ok func(catalog.ColumnInfo) bool) bool {
	for _, d := range r.datasets {
		if slices.ContainsFunc(d.state.Columns, ok) {
			return true
		}
	}
	return false
}

func (r *resolution) datasetNames() []string {
	out := make([]string, len(r.datasets))
	for i, d := range r.datasets {
		out[i] = d.ds.Name
	}
	return out
}

// resolve finds every relation of a read as Postgres would for session s,
// and its dataset. It returns a reason when the read must go to the origin.
// A relation that is no dataset, or a dataset that is not ready, does not
// end the resolution: the rest are resolved too, so that r.touched names
// every dataset the read touches (the metrics' labels).
func (p *Planner) resolve(ctx context.Context, a *analysis, s *Session) (resolution, string) {
	r := resolution{
		schemas: make([]string, len(a.rels)),
		relDS:   make([]int, len(a.rels)),
	}
	pending := "" // ReasonNotAccelerated or ReasonNotReady, once found
	for i, rel := range a.rels {
		schema := rel.schema
		if schema == "" {
			if s.TempTables[rel.name] {
				r.detail = "the session's temporary table " + rel.name
				return r, ReasonTempTable // pg_temp is searched before everything
			}
			// A self-join asks once.
			if j := sameUnqualified(a.rels[:i], rel.name); j >= 0 {
				schema = r.schemas[j]
			} else {
				sch, inCatalog, found, err := p.res.Relation(ctx, s.SearchPath, rel.name)
				switch {
				case err != nil:
					r.detail = "resolving " + rel.name + " at the origin failed: " + err.Error()
					return r, ReasonResolveError
				case inCatalog:
					r.detail = rel.name + " names a pg_catalog relation"
					return r, ReasonCatalog
				case !found:
					r.detail = "no relation " + rel.name + " on the search path"
					return r, ReasonUnresolved
				}
				schema = sch
			}
		}
		if isCatalogSchema(schema) {
			r.detail = "the catalog relation " + schema + "." + rel.name
			return r, ReasonCatalog
		}
		if isTempSchema(schema) {
			r.detail = "the temporary relation " + rel.name
			return r, ReasonTempTable
		}
		r.schemas[i] = schema
		id := TableID{Schema: schema, Name: rel.name}
		k := r.tableIndex(id)
		if k < 0 {
			r.tables = append(r.tables, id)
			ds, st, ok := p.reg.ByTable(schema, rel.name)
			if ok && !slices.Contains(r.touched, ds.Name) {
				r.touched = append(r.touched, ds.Name)
			}
			switch {
			case pending != "":
				continue
			case !ok:
				pending, r.detail = ReasonNotAccelerated, "relation "+id.String()+" is not a dataset"
				continue
			case st.NothingToAccelerate:
				pending, r.detail = ReasonColumnNotAccelerated, "none of the columns of dataset "+ds.Name+" can be accelerated"
				continue
			case !st.Servable():
				pending, r.detail = ReasonNotReady, "dataset "+ds.Name+" has no acceleration to serve yet (status "+st.Status.Display()+")"
				continue
			}
			r.datasets = append(r.datasets, usedDataset{ds: ds, state: st})
			k = len(r.datasets) - 1
		}
		r.relDS[i] = k
	}
	return r, pending
}

// tableIndex returns the position of id in r.tables, which equals its
// position in r.datasets while every table so far is a dataset; -1 when
// absent.
func (r *resolution) tableIndex(id TableID) int {
	for i, t := range r.tables {
		if t == id {
			return i
		}
	}
	return -1
}

func sameUnqualified(rels []relRef, name string) int {
	for j, o := range rels {
		if o.schema == "" && o.name == name {
			return j
		}
	}
	return -1
}

// checkColumns returns a reason, and which rule it is, when the read needs
// a column the acceleration does not hold, or a form of column reference
// the rewrite cannot keep exact.
func (p *Planner) checkColumns(a *analysis, r resolution) (reason, detail string) {
	if reason, detail := valueHazard(a, r); reason != "" {
		return reason, detail
	}
	if why := a.numericTextHazard(r); why != "" {
		return ReasonUnsupported, why
	}
	for _, name := range a.wholeRow {
		if !anyDatasetHasColumn(r, name) {
			// SELECT t FROM t: a whole-row value, a record at the origin.
			return ReasonUnsupported, "the whole-row reference " + name
		}
	}
	for _, q := range a.qualified {
		if qualifiedTarget(a, r, q) < 0 {
			return ReasonUnsupported, "the column reference " + q.schema + "." + q.rel + ".* of a relation read under an alias"
		}
	}
	for i, d := range r.datasets {
		subset := p.selectsSubset(d.ds)
		hidden := false
		for _, c := range d.state.Columns {
			if c.Accelerated {
				continue
			}
			hidden = true
			if _, ok := a.cols.names[c.Name]; ok {
				return ReasonColumnNotAccelerated, "column " + c.Name + " of dataset " + d.ds.Name + " is not accelerated: " + c.NotAccelerated
			}
		}
		if !hidden && !subset {
			continue
		}
		// The DuckDB table lacks columns the origin table has: anything
		// that expands to all columns would differ.
		if a.cols.star || a.cols.natural {
			return ReasonColumnNotAccelerated, "* or NATURAL JOIN over dataset " + d.ds.Name + ", whose acceleration lacks some of the table's columns"
		}
		for j, rel := range a.rels {
			if r.relDS[j] == i && rel.colAliases {
				return ReasonColumnNotAccelerated, "column aliases of dataset " + d.ds.Name + ", whose acceleration lacks some of the table's columns"
			}
		}
	}
	return "", ""
}

func anyDatasetHasColumn(r resolution, name string) bool {
	found, _ := columnsNamed(r, name, nil)
	return found
}

// columnsNamed reports whether the datasets the statement reads have a
// column of that name, and whether every one of them passes ok (nil: any).
func columnsNamed(r resolution, name string, ok func(catalog.ColumnInfo) bool) (found, all bool) {
	all = true
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if c.Name == name {
				found = true
				if ok != nil && !ok(c) {
					all = false
				}
			}
		}
	}
	return found, found && all
}

// columnsAre reports whether the datasets have columns of that name and
// every one passes ok.
func columnsAre(r resolution, name string, ok func(catalog.ColumnInfo) bool) bool {
	_, all := columnsNamed(r, name, ok)
	return all
}

// qualifiedTarget returns the index in a.rels of the unaliased relation a
// three-part column reference names, or -1.
func qualifiedTarget(a *analysis, r resolution, q qualColRef) int {
	for i, rel := range a.rels {
		if rel.alias == "" && rel.name == q.rel && r.schemas[i] == q.schema {
			return i
		}
	}
	return -1
}

// selectsSubset reports whether the dataset's refresh_sql selects only some
// columns, so that the acceleration lacks the others.
func (p *Planner) selectsSubset(d *catalog.Dataset) bool {
	sql := d.Acceleration.RefreshSQL
	if sql == "" {
		return false
	}
	if v, ok := p.subsets.Load(sql); ok {
		return v.(bool)
	}
	cols, _, ok := d.RefreshSelect()
	subset := ok && cols != nil
	p.subsets.Store(sql, subset)
	return subset
}

// literalInt reports whether args[i] is the integer literal v.
func literalInt(args []*pg_query.Node, i int, v int64) bool {
	if i >= len(args) {
		return false
	}
	c := args[i].GetAConst()
	if c == nil {
		return false
	}
	iv, ok := c.Val.(*pg_query.A_Const_Ival)
	return ok && int64(iv.Ival.Ival) == v
}

// orderSensitiveAggs are aggregates whose value depends on the order of
// their rows when it is not given (or given with ties).
var orderSensitiveAggs = map[string]bool{
	"array_agg": true, "string_agg": true, "json_agg": true, "jsonb_agg": true, "json_object_agg": true,
	"jsonb_object_agg": true, "mode": true, "xmlagg": true,
}

// hasDistinctOn reports whether sel is SELECT DISTINCT ON (...).
func hasDistinctOn(sel *pg_query.SelectStmt) bool {
	for _, d := range sel.DistinctClause {
		if d != nil && d.GetNode() != nil {
			return true
		}
	}
	return false
}

// byteaLiteralOK reports whether DuckDB reads the bytea literal s as
// Postgres does once rewritten (rewriteByteaLiteral): hex format of whole
// bytes, or printable ASCII without a backslash.
func byteaLiteralOK(s string) bool {
	if strings.HasPrefix(s, `\x`) {
		h := s[2:]
		if len(h)%2 != 0 {
			return false
		}
		for i := 0; i < len(h); i++ {
			c := h[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' || s[i] < 32 || s[i] > 126 {
			return false
		}
	}
	return true
}

// rewriteByteaLiteral writes '\x...'::bytea as DuckDB's from_hex('...').
func rewriteByteaLiteral(wrapper *pg_query.Node, tc *pg_query.TypeCast) {
	if wrapper == nil || !castTarget(tc, map[string]bool{"bytea": true}) {
		return
	}
	c := tc.Arg.GetAConst()
	if c == nil {
		return
	}
	s, ok := c.Val.(*pg_query.A_Const_Sval)
	if !ok || !strings.HasPrefix(s.Sval.Sval, `\x`) {
		return
	}
	wrapper.Node = fnCall("from_hex", pg_query.MakeAConstStrNode(s.Sval.Sval[2:], -1)).Node
}
