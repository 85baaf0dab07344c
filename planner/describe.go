package planner

import (
	"context"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// Describing a read without the origin. The proxy sends the client the
// origin's RowDescription of an accelerated statement (its column names,
// types, typmods and source columns are Postgres's to decide), asked once
// per text and kept. While the origin is down it cannot ask, and a text
// it has not seen, nor one of the same description shape (descshape.go),
// went unanswered. Describe works the description out as Postgres's
// parser would, for the reads dashboards and ad hoc queries write most:
// one SELECT over datasets, subqueries in FROM and non-recursive WITH
// queries, joined with ON or not, and UNION, INTERSECT and EXCEPT of
// such, whose output columns are their columns (* included), constants,
// arithmetic of numbers and of dates, timestamps and intervals,
// comparisons, text || text, the aggregates count, sum, avg, min, max,
// stddev, variance, bool_and, bool_or and string_agg of a column or an
// expression (and Tableau's sum(1)), over a window or not, the
// ordered-set aggregates percentile_cont, percentile_disc and mode, the
// window functions row_number, rank, dense_rank, percent_rank, cume_dist, ntile,
// lag, lead, first_value and last_value, date_trunc, round, trunc, ceil,
// floor, upper, lower, length, extract and date_part, a few functions of
// text (concat, to_char, substr, replace, trim, ...), of arrays and of
// json, the json operators, abs, nullif, CASE, coalesce, greatest and
// least of values of one type (or of numbers), scalar subqueries and
// EXISTS, and casts of those to the common built-in types, with the
// parameters Postgres types by what they are compared with or cast to
// (see Describe), or as LIMIT and OFFSET. Everything else (other
// functions, types mixed otherwise, parameters elsewhere) it declines,
// and the statement waits for the origin as before. Its rules are
// checked against the origin's own descriptions: by
// TestSessions_DescribesNewReadsThroughOutage, by the differential
// corpora, and at run time for every new text (proxy.checkDerived).

// Field is one column of a row description as Postgres gives it.
type Field struct {
	Name     string
	TableOID uint32 // the origin table the column is, 0 for anything else
	AttNum   int16  // its attnum, 0 for anything else
	TypeOID  uint32
	TypLen   int16
	TypMod   int32
}

var typLens = map[uint32]int16{
	pgdef.OIDBool: 1, pgdef.OIDInt8: 8, pgdef.OIDInt2: 2, pgdef.OIDInt4: 4, pgdef.OIDText: -1, pgdef.OIDOID: 4, pgdef.OIDFloat4: 4, pgdef.OIDFloat8: 8,
	pgdef.OIDMoney: 8, pgdef.OIDBpchar: -1, pgdef.OIDVarchar: -1, pgdef.OIDDate: 4, pgdef.OIDTime: 8, pgdef.OIDTimestamp: 8, pgdef.OIDTimestamptz: 8,
	pgdef.OIDInterval: 16, pgdef.OIDTimetz: 12, pgdef.OIDNumeric: -1, pgdef.OIDJSON: -1, pgdef.OIDJSONB: -1,
}

// castTypes are the types a cast may name for Describe, by the last part
// of the name as pg_query gives it (int, integer and int4 are all int4).
var castTypes = map[string]uint32{
	"bool": pgdef.OIDBool, "int2": pgdef.OIDInt2, "int4": pgdef.OIDInt4, "int8": pgdef.OIDInt8, "float4": pgdef.OIDFloat4, "float8": pgdef.OIDFloat8,
	"numeric": pgdef.OIDNumeric, "text": pgdef.OIDText, "varchar": pgdef.OIDVarchar, "bpchar": pgdef.OIDBpchar, "date": pgdef.OIDDate,
	"timestamp": pgdef.OIDTimestamp, "timestamptz": pgdef.OIDTimestamptz, "interval": pgdef.OIDInterval,
}

// aggregateResult is the type Postgres's aggregate fn (count, sum, avg,
// min, max) returns for an argument of type arg; false when Describe does
// not know it.
func aggregateResult(fn string, arg uint32) (uint32, bool) {
	switch fn {
	case "count":
		return pgdef.OIDInt8, true
	case "sum":
		switch arg {
		case pgdef.OIDInt2, pgdef.OIDInt4:
			return pgdef.OIDInt8, true
		case pgdef.OIDInt8, pgdef.OIDNumeric:
			return pgdef.OIDNumeric, true
		case pgdef.OIDFloat4, pgdef.OIDFloat8, pgdef.OIDInterval, pgdef.OIDMoney:
			return arg, true
		}
	case "avg":
		switch arg {
		case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDNumeric:
			return pgdef.OIDNumeric, true
		case pgdef.OIDFloat4, pgdef.OIDFloat8:
			return pgdef.OIDFloat8, true
		case pgdef.OIDInterval:
			return pgdef.OIDInterval, true
		}
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		switch arg {
		case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDNumeric:
			return pgdef.OIDNumeric, true
		case pgdef.OIDFloat4, pgdef.OIDFloat8:
			return pgdef.OIDFloat8, true
		}
	case "bool_and", "bool_or", "every":
		if arg == pgdef.OIDBool {
			return pgdef.OIDBool, true
		}
	case "string_agg":
		if arg == pgdef.OIDText {
			return pgdef.OIDText, true
		}
	case "min", "max":
		switch arg {
		case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDFloat4, pgdef.OIDFloat8, pgdef.OIDNumeric, pgdef.OIDDate, pgdef.OIDTime, pgdef.OIDTimetz,
			pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval, pgdef.OIDMoney, pgdef.OIDOID, pgdef.OIDText:
			return arg, true
		case pgdef.OIDVarchar:
			return pgdef.OIDText, true // there is no max(varchar): max(text) takes it
		}
	}
	return 0, false
}

// Description is what Postgres would describe a statement with: its
// parameters' types ($1 first) and its row description.
type Description struct {
	Params []uint32
	Fields []Field
}

// Describe returns the description Postgres would give sql, a read that
// session s would have accelerated, when it is one of the forms worked
// out here (see above); false otherwise. Parameters are typed where
// Postgres types them by a column or expression they are compared with
// (col = $1, $1 < col, lower(col) = $1, col IN ($1, $2), col BETWEEN $1
// AND $2, col LIKE $1, col = ANY($1), in a WHERE, HAVING or JOIN ... ON
// clause of ANDs, ORs and NOTs, of the statement or of a subquery, with
// the subquery's own columns), by a cast ($1::int, anywhere), or as
// LIMIT and OFFSET (bigint); a parameter anywhere else declines.
func (p *Planner) Describe(ctx context.Context, sql string, s *Session) (Description, bool) {
	var none Description
	if s == nil {
		s = &Session{}
	}
	a, ok := p.cachedAnalysis(sql)
	var tree *pg_query.ParseResult
	if !ok {
		a, tree = analyze(sql)
	}
	if a.kind != KindSelect || a.reason != "" || a.writes {
		return none, false
	}
	r, reason := p.resolve(ctx, a, s)
	if reason != "" {
		return none, false
	}
	if tree == nil {
		var err error
		if tree, err = pg_query.Parse(sql); err != nil {
			return none, false
		}
	}
	if len(tree.Stmts) != 1 {
		return none, false
	}
	sel := tree.Stmts[0].GetStmt().GetSelectStmt()
	d := describer{a: a, r: r, ps: &paramScopes{seen: map[*pg_query.SelectStmt]bool{}}}
	var out Description
	if out.Fields, ok = d.selectList(sel); !ok {
		return none, false
	}
	if a.paramCount > 0 {
		if out.Params, ok = d.params(sel, a.paramCount); !ok {
			return none, false
		}
	}
	return out, true
}

// selectList describes the output of sel, one plain SELECT with a FROM
// clause, as the FROM items it adds to d resolve its columns.
func (d *describer) selectList(sel *pg_query.SelectStmt) ([]Field, bool) {
	if sel == nil || sel.IntoClause != nil || len(sel.ValuesLists) > 0 {
		return nil, false
	}
	if w := sel.WithClause; w != nil {
		// WITH queries, each a plain SELECT described in the scope of
		// those before it; not recursive, no column aliases.
		if w.Recursive {
			return nil, false
		}
		for _, n := range w.Ctes {
			cte := n.GetCommonTableExpr()
			if cte == nil || len(cte.Aliascolnames) > 0 || cte.SearchClause != nil || cte.CycleClause != nil {
				return nil, false
			}
			sub := d.sub()
			fields, ok := sub.selectList(cte.Ctequery.GetSelectStmt())
			if !ok {
				return nil, false
			}
			ctes := make(map[string][]Field, len(d.ctes)+1)
			for k, v := range d.ctes {
				ctes[k] = v
			}
			ctes[cte.Ctename] = fields
			d.ctes = ctes
		}
	}
	switch sel.Op {
	case pg_query.SetOperation_SETOP_NONE:
	case pg_query.SetOperation_SETOP_UNION, pg_query.SetOperation_SETOP_INTERSECT, pg_query.SetOperation_SETOP_EXCEPT:
		out, ok := d.setOp(sel)
		if ok {
			d.record(sel) // its LIMIT and OFFSET
		}
		return out, ok
	default:
		return nil, false
	}
	if len(sel.TargetList) == 0 || len(sel.FromClause) == 0 {
		return nil, false
	}
	for _, n := range sel.FromClause {
		if !d.from(n) {
			return nil, false
		}
	}
	var out []Field
	for _, n := range sel.TargetList {
		rt := n.GetResTarget()
		if rt == nil {
			return nil, false
		}
		if isStar(n) {
			cols, ok := d.star(rt.Val.GetColumnRef())
			if !ok {
				return nil, false
			}
			out = append(out, cols...)
			continue
		}
		f, _, ok := d.expr(rt.Val)
		if !ok {
			return nil, false
		}
		if rt.Name != "" {
			f.Name = rt.Name
		}
		out = append(out, f)
	}
	d.record(sel)
	return out, true
}

// setOp describes a UNION, INTERSECT or EXCEPT (ALL or not) of plain
// SELECTs or other set operations: the left arm's column names, each
// column's type the common type of the arms' (commonType) and its typmod
// theirs when they all agree (select_common_typmod); no column is a
// table's (Postgres marks no origin on a set operation's output).
func (d *describer) setOp(sel *pg_query.SelectStmt) ([]Field, bool) {
	if sel.Larg == nil || sel.Rarg == nil {
		return nil, false
	}
	left, okl := d.sub().selectList(sel.Larg)
	right, okr := d.sub().selectList(sel.Rarg)
	if !okl || !okr || len(left) != len(right) {
		return nil, false
	}
	out := make([]Field, len(left))
	for i := range left {
		t, ok := commonType([]Field{left[i], right[i]})
		if !ok {
			return nil, false
		}
		t.Name = left[i].Name
		out[i] = t
	}
	return out, true
}

// commonType is the type Postgres's select_common_type resolves for
// values of the types of fs (the arms of a CASE, COALESCE, GREATEST or a
// set operation), with the typmod select_common_typmod and exprTypmod
// give (theirs when all are of that type and share it, else -1), and no
// origin. Worked out only where there is no doubt: all of one type (a
// domain included), or integers, numeric and double precision mixed (the
// widest of them: each converts implicitly to those after it, not back).
// A Field with TypeOID 0 is a NULL, which takes the others' type.
func commonType(fs []Field) (Field, bool) {
	var t Field
	found, same := false, true
	for _, f := range fs {
		if f.TypeOID == 0 {
			continue
		}
		if !found {
			t, found = f, true
			continue
		}
		if f.TypeOID != t.TypeOID {
			same = false
		}
	}
	if !found {
		// All NULL: unknown, which an output column resolves as text.
		return Field{TypeOID: pgdef.OIDText, TypLen: -1, TypMod: -1}, true
	}
	if !same {
		for _, f := range fs {
			if f.TypeOID == 0 {
				continue
			}
			if !isNumber(f.TypeOID) {
				return Field{}, false
			}
			if numberRank[f.TypeOID] > numberRank[t.TypeOID] {
				t = f
			}
		}
	}
	mod := t.TypMod
	for _, f := range fs {
		if f.TypeOID != t.TypeOID || f.TypMod != mod {
			mod = -1
		}
	}
	return Field{TypeOID: t.TypeOID, TypLen: t.TypLen, TypMod: mod}, true
}

// params types the parameters $1..$n of sel, each used where Postgres
// types it by a column or as LIMIT or OFFSET.
func (d *describer) params(sel *pg_query.SelectStmt, n int) ([]uint32, bool) {
	types := make([]uint32, n)
	typed := 0 // the ParamRefs typed
	set := func(p *pg_query.ParamRef, t uint32) bool {
		if p.Number < 1 || int(p.Number) > n || types[p.Number-1] != 0 && types[p.Number-1] != t {
			return false
		}
		types[p.Number-1] = t
		typed++
		return true
	}
	// Each described SELECT's clauses, with its own columns: the
	// statement's, its subqueries' (in FROM, WITH, the output, and those
	// of the clauses, added as they are met) and set operations' arms.
	for i := 0; i < len(d.ps.list); i++ {
		sc := d.ps.list[i]
		quals := []*pg_query.Node{sc.sel.WhereClause, sc.sel.HavingClause}
		var joins func(n *pg_query.Node)
		joins = func(n *pg_query.Node) {
			if j := n.GetJoinExpr(); j != nil {
				joins(j.Larg)
				joins(j.Rarg)
				quals = append(quals, j.Quals)
			}
		}
		for _, n := range sc.sel.FromClause {
			joins(n)
		}
		for _, q := range quals {
			if !sc.d.paramsIn(q, set) {
				return nil, false
			}
			sc.d.subLinks(q)
		}
		for _, lim := range []*pg_query.Node{sc.sel.LimitCount, sc.sel.LimitOffset} {
			if p := lim.GetParamRef(); p != nil && !set(p, pgdef.OIDInt8) {
				return nil, false
			}
		}
	}
	// A parameter cast in place ($1::timestamptz) has the cast's type.
	var uses paramUses
	walk(sel, &uses)
	for _, tc := range uses.casts {
		t, _, ok := describedCast(tc)
		if !ok || !set(tc.Arg.GetParamRef(), t) {
			return nil, false
		}
	}
	// Every ParamRef of the statement was typed, and every number.
	if uses.refs != typed || slices.Contains(types, 0) {
		return nil, false
	}
	return types, true
}

// subLinks describes the subqueries of a clause (EXISTS, IN, a scalar
// one compared with), outermost only, so that params types their
// parameters too; one that cannot be described leaves them untyped.
func (d *describer) subLinks(q *pg_query.Node) {
	if q == nil {
		return
	}
	var all subLinkFinder
	walk(q, &all)
	nested := map[*pg_query.SubLink]bool{}
	for _, sl := range all {
		var inner subLinkFinder
		walk(sl.Subselect, &inner)
		for _, in := range inner {
			nested[in] = true
		}
	}
	for _, sl := range all {
		if !nested[sl] {
			_, _ = d.sub().selectList(sl.Subselect.GetSelectStmt())
		}
	}
}

// subLinkFinder collects the SubLinks of a tree.
type subLinkFinder []*pg_query.SubLink

func (f *subLinkFinder) enter(m proto.Message, _ *walker) {
	if sl, ok := m.(*pg_query.SubLink); ok {
		*f = append(*f, sl)
	}
}

// paramComparisons are the operators whose parameter Postgres types as the
// column on the other side (for the types paramType knows).
var paramComparisons = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

// paramsIn types the parameters of a WHERE clause's comparisons; other
// parameters are left for params to count.
func (d *describer) paramsIn(n *pg_query.Node, set func(*pg_query.ParamRef, uint32) bool) bool {
	if n == nil {
		return true
	}
	if b := n.GetBoolExpr(); b != nil {
		for _, arg := range b.Args {
			if !d.paramsIn(arg, set) {
				return false
			}
		}
		return true
	}
	e := n.GetAExpr()
	if e == nil {
		return true
	}
	col := func(x *pg_query.Node) (uint32, bool) {
		// A column, or an expression of columns Describe types (id + 1,
		// lower(name), count(*) in HAVING).
		if x == nil || x.GetParamRef() != nil {
			return 0, false
		}
		f, _, ok := d.expr(x)
		if !ok {
			return 0, false
		}
		return paramType(f.TypeOID)
	}
	each := func(t uint32, items []*pg_query.Node) bool {
		for _, it := range items {
			if p := it.GetParamRef(); p != nil && !set(p, t) {
				return false
			}
		}
		return true
	}
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if len(e.Name) != 1 || !paramComparisons[e.Name[0].GetString_().GetSval()] {
			return true
		}
		if t, ok := col(e.Lexpr); ok {
			return each(t, []*pg_query.Node{e.Rexpr})
		}
		if t, ok := col(e.Rexpr); ok {
			return each(t, []*pg_query.Node{e.Lexpr})
		}
	case pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		if t, ok := col(e.Lexpr); ok && e.Rexpr.GetList() != nil {
			return each(t, e.Rexpr.GetList().Items)
		}
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		// text LIKE $1 (and ILIKE, NOT LIKE): the pattern is text.
		if t, ok := col(e.Lexpr); ok && t == pgdef.OIDText {
			return each(pgdef.OIDText, []*pg_query.Node{e.Rexpr})
		}
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		// col = ANY($1): an array of the type the column compares as.
		if len(e.Name) != 1 || !paramComparisons[e.Name[0].GetString_().GetSval()] {
			return true
		}
		if t, ok := col(e.Lexpr); ok && arrayTypes[t] != 0 {
			return each(arrayTypes[t], []*pg_query.Node{e.Rexpr})
		}
	}
	return true
}

// arrayTypes are the array types of the types paramType gives.
var arrayTypes = map[uint32]uint32{
	pgdef.OIDBool: 1000, pgdef.OIDInt2: 1005, pgdef.OIDInt4: 1007, pgdef.OIDInt8: 1016, pgdef.OIDFloat4: 1021, pgdef.OIDFloat8: 1022,
	pgdef.OIDNumeric: 1231, pgdef.OIDText: 1009, pgdef.OIDBpchar: 1014, pgdef.OIDDate: 1182, pgdef.OIDTimestamp: 1115, pgdef.OIDTimestamptz: 1185,
	pgdef.OIDInterval: 1187, pgdef.OIDUUID: 2951,
}

// paramType is the type Postgres gives a parameter compared with a column
// of type t, for the types worked out here: the column's own where the
// type has its comparison operators, text for varchar (which compares as
// text).
func paramType(t uint32) (uint32, bool) {
	switch t {
	case pgdef.OIDBool, pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDFloat4, pgdef.OIDFloat8, pgdef.OIDNumeric, pgdef.OIDText, pgdef.OIDDate,
		pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval, pgdef.OIDUUID, pgdef.OIDBpchar:
		return t, true
	case pgdef.OIDVarchar:
		return pgdef.OIDText, true
	}
	return 0, false
}

// paramUses counts the ParamRefs of a tree and collects their casts
// ($1::int).
type paramUses struct {
	refs  int
	casts []*pg_query.TypeCast
}

func (u *paramUses) enter(m proto.Message, _ *walker) {
	switch m := m.(type) {
	case *pg_query.ParamRef:
		u.refs++
	case *pg_query.TypeCast:
		if m.Arg.GetParamRef() != nil {
			u.casts = append(u.casts, m)
		}
	}
}

// describer resolves a SELECT's column references against its FROM items.
type describer struct {
	a    *analysis
	r    resolution
	rels []describedRel     // the FROM items, in order
	ctes map[string][]Field // the WITH queries in scope, described
	ps   *paramScopes       // shared by a statement's describers
}

// paramScopes are the SELECTs of a statement that were described (the
// statement's, its subqueries', WITH queries' and set operations' arms),
// each with the describer that resolves its columns, for params to type
// the parameters of each one's clauses.
type paramScopes struct {
	list []paramScope
	seen map[*pg_query.SelectStmt]bool
}

type paramScope struct {
	d   *describer
	sel *pg_query.SelectStmt
}

// sub is a describer for a subquery of d's SELECT: the WITH queries in
// scope, no FROM item yet.
func (d *describer) sub() *describer {
	return &describer{a: d.a, r: d.r, ctes: d.ctes, ps: d.ps}
}

// record adds sel, described by d, to the statement's scopes.
func (d *describer) record(sel *pg_query.SelectStmt) {
	if d.ps == nil || d.ps.seen[sel] {
		return
	}
	d.ps.seen[sel] = true
	d.ps.list = append(d.ps.list, paramScope{d: d, sel: sel})
}

type describedRel struct {
	ref    string // the name the statement knows it by: its alias, or its name
	schema string // its schema, resolved; "" when it has an alias (schema.table.column cannot name it)
	cols   []relCol
}

// relCol is a column of a FROM item: a table's, or a subquery's output.
type relCol struct {
	Field
	accelerated bool
}

// from adds a FROM item: a dataset's table (aliased or not, without
// column aliases), or an inner or outer join of such with an ON clause.
func (d *describer) from(n *pg_query.Node) bool {
	if j := n.GetJoinExpr(); j != nil {
		if j.IsNatural || len(j.UsingClause) > 0 || j.Alias != nil || j.JoinUsingAlias != nil {
			return false
		}
		return d.from(j.Larg) && d.from(j.Rarg)
	}
	if rs := n.GetRangeSubselect(); rs != nil {
		// A subquery: its columns are its output, as described; one
		// that is a table's column keeps its origin (markTargetListOrigin
		// follows it down).
		if rs.Lateral || rs.Alias == nil || len(rs.Alias.Colnames) > 0 {
			return false
		}
		sub := d.sub()
		fields, ok := sub.selectList(rs.Subquery.GetSelectStmt())
		if !ok || !d.unique(rs.Alias.Aliasname) {
			return false
		}
		d.rels = append(d.rels, describedRel{ref: rs.Alias.Aliasname, cols: outputCols(fields)})
		return true
	}
	rv := n.GetRangeVar()
	if rv == nil || rv.Catalogname != "" || !rv.Inh || rv.Alias != nil && len(rv.Alias.Colnames) > 0 {
		return false
	}
	if fields, ok := d.ctes[rv.Relname]; ok && rv.Schemaname == "" {
		// A WITH query, which an unqualified name means before a table.
		ref := rv.Relname
		if rv.Alias != nil {
			ref = rv.Alias.Aliasname
		}
		if !d.unique(ref) {
			return false
		}
		d.rels = append(d.rels, describedRel{ref: ref, cols: outputCols(fields)})
		return true
	}
	for i, rel := range d.a.rels {
		if rel.name != rv.Relname || rel.schema != rv.Schemaname {
			continue
		}
		infos := d.r.datasets[d.r.relDS[i]].state.Columns
		cols := make([]relCol, len(infos))
		for i, c := range infos {
			if c.RelOID == 0 {
				return false // described before pgaccel read the oids
			}
			cols[i] = relCol{Field: columnField(c), accelerated: c.Accelerated}
		}
		ref, schema := rv.Relname, d.r.schemas[i]
		if rv.Alias != nil {
			ref, schema = rv.Alias.Aliasname, ""
		}
		if !d.unique(ref) {
			return false
		}
		d.rels = append(d.rels, describedRel{ref: ref, schema: schema, cols: cols})
		return true
	}
	return false
}

// outputCols are a subquery's or WITH query's output as a FROM item's
// columns.
func outputCols(fields []Field) []relCol {
	cols := make([]relCol, len(fields))
	for i, f := range fields {
		cols[i] = relCol{Field: f, accelerated: true}
	}
	return cols
}

// unique reports whether no FROM item is named ref yet (Postgres refuses
// the same name twice).
func (d *describer) unique(ref string) bool {
	for _, o := range d.rels {
		if o.ref == ref {
			return false
		}
	}
	return true
}

// star expands * or rel.*.
func (d *describer) star(cr *pg_query.ColumnRef) ([]Field, bool) {
	var out []Field
	switch len(cr.Fields) {
	case 1:
		for _, rel := range d.rels {
			for _, c := range rel.cols {
				out = append(out, c.Field)
			}
		}
	case 2, 3:
		rel, ok := d.qualifier(cr.Fields[:len(cr.Fields)-1])
		if !ok {
			return nil, false
		}
		for _, c := range rel.cols {
			out = append(out, c.Field)
		}
	default:
		return nil, false
	}
	return out, true
}

// qualifier finds the FROM item a column reference's qualifier names:
// table (or alias), or schema.table (an item without an alias).
func (d *describer) qualifier(names []*pg_query.Node) (describedRel, bool) {
	schema, ref := "", names[len(names)-1].GetString_().GetSval()
	if len(names) == 2 {
		if schema = names[0].GetString_().GetSval(); schema == "" {
			return describedRel{}, false
		}
	}
	for _, rel := range d.rels {
		if rel.ref == ref && (schema == "" || rel.schema == schema) {
			return rel, true
		}
	}
	return describedRel{}, false
}

// column resolves a column reference of one or two parts.
func (d *describer) column(cr *pg_query.ColumnRef) (relCol, bool) {
	var none relCol
	name := ""
	rels := d.rels
	switch len(cr.Fields) {
	case 1:
		name = cr.Fields[0].GetString_().GetSval()
	case 2, 3:
		rel, ok := d.qualifier(cr.Fields[:len(cr.Fields)-1])
		if !ok {
			return none, false
		}
		rels, name = []describedRel{rel}, cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
	default:
		return none, false
	}
	found, n := none, 0
	for _, rel := range rels {
		for _, c := range rel.cols {
			if c.Name == name {
				found, n = c, n+1
			}
		}
	}
	// None: an outer reference or a whole row; several: ambiguous.
	return found, n == 1 && name != ""
}

func columnField(c catalog.ColumnInfo) Field {
	return Field{Name: c.Name, TableOID: c.RelOID, AttNum: c.AttNum, TypeOID: c.TypeOID, TypLen: c.TypLen, TypMod: c.TypeMod}
}

// expr describes a value: an output column, or an operand of one. named
// reports whether Postgres names a cast of it by its name
// (FigureColname's strength 2) rather than by the cast's type.
func (d *describer) expr(n *pg_query.Node) (f Field, named, ok bool) {
	switch {
	case n.GetColumnRef() != nil:
		c, ok := d.column(n.GetColumnRef())
		if !ok || !c.accelerated {
			return f, false, false
		}
		return c.Field, true, true
	case n.GetFuncCall() != nil:
		return d.call(n.GetFuncCall())
	case n.GetAConst() != nil:
		t, ok := constType(n.GetAConst())
		if !ok {
			return f, false, false
		}
		return Field{Name: "?column?", TypeOID: t, TypLen: typLens[t], TypMod: -1}, false, true
	case n.GetAExpr() != nil && n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return d.nullIf(n.GetAExpr())
	case n.GetAExpr() != nil:
		t, ok := d.arithmetic(n.GetAExpr())
		if !ok {
			return f, false, false
		}
		return Field{Name: "?column?", TypeOID: t, TypLen: typLens[t], TypMod: -1}, false, true
	case n.GetCoalesceExpr() != nil:
		// coalesce(x, 0), as dashboards write it around an aggregate, and
		// coalesce of any values of one type: their common type.
		f, _, _, ok := d.common("coalesce", n.GetCoalesceExpr().Args)
		return f, ok, ok
	case n.GetMinMaxExpr() != nil:
		mm := n.GetMinMaxExpr()
		name := "greatest"
		if mm.Op == pg_query.MinMaxOp_IS_LEAST {
			name = "least"
		} else if mm.Op != pg_query.MinMaxOp_IS_GREATEST {
			return f, false, false
		}
		f, _, _, ok := d.common(name, mm.Args)
		return f, ok, ok
	case n.GetCaseExpr() != nil:
		// CASE: the common type of its results, a missing ELSE a NULL.
		ce := n.GetCaseExpr()
		results := make([]*pg_query.Node, 0, len(ce.Args)+1)
		for _, w := range ce.Args {
			cw := w.GetCaseWhen()
			if cw == nil {
				return f, false, false
			}
			results = append(results, cw.Result)
		}
		if ce.Defresult != nil {
			results = append(results, ce.Defresult)
		} else {
			results = append(results, nil)
		}
		// Named as its ELSE when that is named (a column, a function,
		// ...); else "case", weakly (a cast of it is named by the type).
		f, els, elseNamed, ok := d.common("case", results)
		if elseNamed {
			f.Name = els.Name
		}
		return f, elseNamed, ok
	case n.GetSubLink() != nil:
		return d.subLink(n.GetSubLink())
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		var inner Field
		named, ok := false, true
		if tc.Arg.GetParamRef() == nil {
			// $1::type is typed by the cast (params), and named by it.
			inner, named, ok = d.expr(tc.Arg)
		}
		if !ok {
			return f, false, false
		}
		t, last, ok := describedCast(tc)
		if !ok {
			return f, false, false
		}
		mod, ok := castTypmod(t, tc.TypeName.Typmods)
		if !ok || mod != -1 && tc.Arg.GetAConst() != nil {
			// A constant cast with a typmod: Postgres coerces the
			// constant itself; not worked out here.
			return f, false, false
		}
		if t == inner.TypeOID && mod == inner.TypMod {
			// To its own type and typmod (Tableau's CAST(col AS TEXT)):
			// coerce_to_target_type leaves the value as it is, a column
			// still the table's; named by the type if not by itself.
			if !named {
				inner.Name = last
			}
			return inner, named, true
		}
		// Otherwise a conversion, or a RelabelType showing the new typmod
		// (coerce_type_typmod): no longer a table's column.
		name := last
		if named {
			name = inner.Name
		}
		return Field{Name: name, TypeOID: t, TypLen: typLens[t], TypMod: mod}, named, true
	}
	return f, false, false
}

// aggregates are the aggregates Describe types (aggregateResult), and
// windowFunctions the window functions (window).
var (
	aggregates = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true,
		"stddev": true, "stddev_samp": true, "stddev_pop": true, "variance": true, "var_samp": true, "var_pop": true,
		"bool_and": true, "bool_or": true, "every": true, "string_agg": true}
	windowFunctions = map[string]bool{"row_number": true, "rank": true, "dense_rank": true, "percent_rank": true,
		"cume_dist": true, "ntile": true, "lag": true, "lead": true, "first_value": true, "last_value": true}
)

// call describes a call of a built-in function: an aggregate (over a
// window or not), an ordered-set aggregate, a window function, or one of
// the scalar functions below. A call Postgres refuses (a window function
// without OVER, a scalar function with DISTINCT, FILTER, ORDER BY or
// OVER) is declined.
func (d *describer) call(fc *pg_query.FuncCall) (f Field, named, ok bool) {
	fn, ok := builtinName(fc.Funcname)
	if !ok || fc.FuncVariadic {
		return f, false, false
	}
	switch {
	case fc.AggWithinGroup:
		return d.withinGroup(fn, fc)
	case windowFunctions[fn]:
		return d.window(fn, fc)
	case aggregates[fn]:
		if fc.Over != nil && (fc.AggDistinct || len(fc.AggOrder) > 0) {
			return f, false, false // refused over a window
		}
		return d.aggregate(fn, fc)
	case fc.Over != nil || fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0:
		return f, false, false
	}
	switch fn {
	case "date_trunc":
		return d.dateTrunc(fc)
	case "round", "upper", "lower", "length", "extract", "date_part", "ceil", "ceiling", "floor", "trunc", "abs":
		return d.scalar(fn, fc)
	case "concat", "to_char", "substr", "substring", "replace", "left", "right", "initcap", "md5", "btrim", "ltrim", "rtrim":
		return d.text(fn, fc)
	case "strpos", "position", "array_length", "cardinality", "jsonb_typeof", "json_typeof", "jsonb_array_length", "json_array_length":
		return d.oneOf(fn, fc)
	}
	return f, false, false
}

// aggregate describes an aggregate of a value (count(*) and count(1)
// too), typed by aggregateResult.
func (d *describer) aggregate(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	var arg uint32
	switch {
	case fn == "count" && len(fc.Args) == 1 && fc.Args[0].GetAConst() != nil:
		// count(1): the argument's type does not matter.
	case fn == "sum" && len(fc.Args) == 1 && intConst(fc.Args[0]):
		arg = pgdef.OIDInt4 // Tableau's sum(1)
	case fn == "string_agg" && len(fc.Args) == 2 && fc.Args[1].GetAConst() != nil && fc.Args[1].GetAConst().GetSval() != nil:
		// string_agg(text, delimiter): text (bytea's is not worked out).
		af, _, ok := d.expr(fc.Args[0])
		if !ok || !isString(af.TypeOID) {
			return f, false, false
		}
		arg = pgdef.OIDText
	case fc.AggStar:
		if fn != "count" || len(fc.Args) != 0 {
			return f, false, false
		}
	case len(fc.Args) == 1:
		af, _, ok := d.expr(fc.Args[0])
		if c := fc.Args[0].GetAConst(); !ok || c != nil && c.GetSval() != nil {
			return f, false, false // a string constant: of unknown type
		}
		arg = af.TypeOID
	default:
		return f, false, false
	}
	t, _ := aggregateResult(fn, arg)
	return fixedField(fn, t)
}

// common describes what takes the common type of args (commonType):
// coalesce, greatest, least and CASE (whose results args are, a nil arg a
// missing ELSE), named name (FigureColname's strength 2). Each arg is
// described as an output column would be, or is a NULL, true or false; a
// string constant is taken as text only when every other arg is text
// (Postgres would coerce it to another type: not worked out here). last
// is the last arg's description, when it has one, and lastNamed whether
// it is named (CASE takes its ELSE's name).
func (d *describer) common(name string, args []*pg_query.Node) (f Field, last Field, lastNamed, ok bool) {
	if len(args) == 0 {
		return f, last, false, false
	}
	fs := make([]Field, len(args))
	literal := false
	for i, a := range args {
		if a == nil {
			continue // NULL
		}
		if c := a.GetAConst(); c != nil {
			switch {
			case c.Isnull:
				continue
			case c.GetBoolval() != nil:
				fs[i] = Field{TypeOID: pgdef.OIDBool, TypLen: 1, TypMod: -1}
				continue
			case c.GetSval() != nil:
				literal = true
			}
		}
		af, named, ok := d.expr(a)
		if !ok {
			return f, last, false, false
		}
		fs[i] = af
		if i == len(args)-1 {
			last, lastNamed = af, named
		}
	}
	t, ok := commonType(fs)
	if !ok || literal && t.TypeOID != pgdef.OIDText {
		return f, last, false, false
	}
	t.Name = name
	return t, last, lastNamed, true
}

// nullIf describes nullif(a, b): the type of a as the = operator takes
// it. Integers compare across their widths without conversion, so a
// keeps its type (and typmod) then; numbers of other kinds meet at the
// wider (a converted loses its typmod); a text with a string constant, or
// two values of one type, keep a's, but varchar, which = takes as text.
// Anything else is not worked out.
func (d *describer) nullIf(e *pg_query.A_Expr) (f Field, named, ok bool) {
	a, _, okA := d.expr(e.Lexpr)
	if !okA || e.Rexpr == nil {
		return f, false, false
	}
	var b Field
	if c := e.Rexpr.GetAConst(); c != nil && c.GetSval() != nil {
		if a.TypeOID != pgdef.OIDText {
			return f, false, false
		}
		b = Field{TypeOID: pgdef.OIDText}
	} else if b, _, ok = d.expr(e.Rexpr); !ok {
		return f, false, false
	}
	t := Field{Name: "nullif", TypeOID: a.TypeOID, TypLen: a.TypLen, TypMod: a.TypMod}
	switch {
	case a.TypeOID == b.TypeOID, isInteger(a.TypeOID) && isInteger(b.TypeOID):
	default:
		c, ok := commonType([]Field{a, b})
		if !ok {
			return f, false, false
		}
		if c.TypeOID != a.TypeOID {
			t.TypeOID, t.TypLen, t.TypMod = c.TypeOID, c.TypLen, -1
		}
	}
	if t.TypeOID == pgdef.OIDVarchar {
		// varchar has no = of its own: text's takes it, and nullif
		// gives what the operator took (text), as for varchar = text.
		t.TypeOID, t.TypMod = pgdef.OIDText, -1
	}
	return t, true, true
}

// withinGroup describes the ordered-set aggregates: percentile_cont(f)
// WITHIN GROUP (ORDER BY x), double precision (interval for an
// interval), and percentile_disc(f) and mode() of x's type.
func (d *describer) withinGroup(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	if fc.Over != nil || fc.AggDistinct || len(fc.AggOrder) != 1 {
		return f, false, false
	}
	sb := fc.AggOrder[0].GetSortBy()
	if sb == nil {
		return f, false, false
	}
	x, _, ok := d.expr(sb.Node)
	if !ok {
		return f, false, false
	}
	var t uint32
	switch fn {
	case "percentile_cont":
		if len(fc.Args) != 1 || fc.Args[0].GetAConst() == nil || fc.Args[0].GetAConst().GetFval() == nil && !intConst(fc.Args[0]) {
			break
		}
		switch {
		case x.TypeOID == pgdef.OIDInterval:
			t = pgdef.OIDInterval
		case isNumber(x.TypeOID):
			t = pgdef.OIDFloat8
		}
	case "percentile_disc", "mode":
		want := 1
		if fn == "mode" {
			want = 0
		}
		if len(fc.Args) == want && (want == 0 || fc.Args[0].GetAConst() != nil && fc.Args[0].GetAConst().GetSval() == nil) && typLens[x.TypeOID] != 0 {
			t = x.TypeOID
		}
	}
	return fixedField(fn, t)
}

// window describes a window function (fn, called with OVER): row_number,
// rank and dense_rank (bigint), percent_rank and cume_dist (double
// precision), ntile (integer), and lag, lead, first_value and last_value
// of a value of a built-in type, which they return as it is (lag and
// lead with a default: the common type of both), without its typmod.
func (d *describer) window(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	var none Field
	if fc.Over == nil || fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 {
		return none, false, false
	}
	var t uint32
	switch fn {
	case "row_number", "rank", "dense_rank":
		if len(fc.Args) == 0 {
			t = pgdef.OIDInt8
		}
	case "percent_rank", "cume_dist":
		if len(fc.Args) == 0 {
			t = pgdef.OIDFloat8
		}
	case "ntile":
		if len(fc.Args) == 1 && intConst(fc.Args[0]) {
			t = pgdef.OIDInt4
		}
	case "lag", "lead", "first_value", "last_value":
		n := 1
		if fn == "lag" || fn == "lead" {
			n = 3
		}
		if len(fc.Args) < 1 || len(fc.Args) > n || len(fc.Args) >= 2 && !intConst(fc.Args[1]) {
			return none, false, false
		}
		af, _, ok := d.expr(fc.Args[0])
		if !ok || typLens[af.TypeOID] == 0 {
			return none, false, false // a domain's or another type's: not worked out here
		}
		t = af.TypeOID
		if len(fc.Args) == 3 {
			// lag(anycompatible, integer, anycompatible): the common
			// type of the value and the default.
			def, _, ok := d.expr(fc.Args[2])
			if c := fc.Args[2].GetAConst(); !ok || c != nil && c.GetSval() != nil {
				return none, false, false
			}
			ct, ok := commonType([]Field{af, def})
			if !ok {
				return none, false, false
			}
			t = ct.TypeOID
		}
	}
	return fixedField(fn, t)
}

// text describes functions of text that return text, of a column of
// text or varchar (or, for to_char, of a number or a time) and constants:
// concat (of any columns), to_char, substr, substring, replace, left,
// right, initcap and md5.
func (d *describer) text(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	if len(fc.Args) == 0 {
		return f, false, false
	}
	columns := 0
	for i, a := range fc.Args {
		if c := a.GetAConst(); c != nil {
			if c.Isnull || i == 0 && fn != "concat" {
				return f, false, false
			}
			continue
		}
		af, _, ok := d.expr(a)
		if !ok {
			return f, false, false
		}
		switch {
		case fn == "concat":
		case i > 0:
			return f, false, false // a pattern, a length: constants only
		case fn == "to_char":
			switch af.TypeOID {
			case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDNumeric, pgdef.OIDFloat8, pgdef.OIDDate, pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval:
			default:
				return f, false, false
			}
		case !isString(af.TypeOID):
			return f, false, false
		}
		columns++
	}
	want := map[string][2]int{"concat": {1, 100}, "to_char": {2, 2}, "substr": {2, 3}, "substring": {2, 3},
		"replace": {3, 3}, "left": {2, 2}, "right": {2, 2}, "initcap": {1, 1}, "md5": {1, 1},
		"btrim": {1, 2}, "ltrim": {1, 2}, "rtrim": {1, 2}}[fn]
	if columns == 0 || len(fc.Args) < want[0] || len(fc.Args) > want[1] {
		return f, false, false
	}
	return fixedField(fn, pgdef.OIDText)
}

// oneOf describes functions of one typed argument (and constants) whose
// result type is fixed: strpos and position of text (integer),
// array_length and cardinality of an array (integer), json_typeof and
// jsonb_typeof (text), json_array_length and jsonb_array_length
// (integer).
func (d *describer) oneOf(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	if len(fc.Args) == 0 || len(fc.Args) > 2 {
		return f, false, false
	}
	var types []uint32
	for _, a := range fc.Args {
		af, _, ok := d.expr(a)
		if !ok {
			return f, false, false
		}
		types = append(types, af.TypeOID)
	}
	t := uint32(0)
	switch fn {
	case "strpos", "position":
		if len(types) == 2 && isString(types[0]) && isString(types[1]) {
			t = pgdef.OIDInt4
		}
	case "array_length":
		if len(types) == 2 && arrayType(types[0]) && intConst(fc.Args[1]) {
			t = pgdef.OIDInt4
		}
	case "cardinality":
		if len(types) == 1 && arrayType(types[0]) {
			t = pgdef.OIDInt4
		}
	case "jsonb_typeof", "jsonb_array_length", "json_typeof", "json_array_length":
		doc := uint32(pgdef.OIDJSONB)
		if strings.HasPrefix(fn, "json_") {
			doc = pgdef.OIDJSON
		}
		if len(types) == 1 && types[0] == doc {
			t = pgdef.OIDText
			if strings.HasSuffix(fn, "_array_length") {
				t = pgdef.OIDInt4
			}
		}
	}
	return fixedField(fn, t)
}

// fixedField is the output column named fn of type t, a function's
// result (no origin, no typmod); false when t is 0 (not worked out).
func fixedField(fn string, t uint32) (f Field, named, ok bool) {
	if t == 0 {
		return f, false, false
	}
	return Field{Name: fn, TypeOID: t, TypLen: typLens[t], TypMod: -1}, true, true
}

// arrayType reports whether t is one of the array types arrayTypes
// names.
func arrayType(t uint32) bool { return isArrayType[t] }

var isArrayType = func() map[uint32]bool {
	m := make(map[uint32]bool, len(arrayTypes))
	for _, a := range arrayTypes {
		m[a] = true
	}
	return m
}()

// subLink describes a scalar subquery (its one column's name, type and
// typmod, but no origin) and EXISTS (boolean "exists").
func (d *describer) subLink(sl *pg_query.SubLink) (f Field, named, ok bool) {
	switch sl.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		if _, ok := d.sub().selectList(sl.Subselect.GetSelectStmt()); !ok {
			return f, false, false
		}
		return Field{Name: "exists", TypeOID: pgdef.OIDBool, TypLen: 1, TypMod: -1}, true, true
	case pg_query.SubLinkType_EXPR_SUBLINK:
		fields, ok := d.sub().selectList(sl.Subselect.GetSelectStmt())
		if !ok || len(fields) != 1 {
			return f, false, false
		}
		inner := fields[0]
		return Field{Name: inner.Name, TypeOID: inner.TypeOID, TypLen: inner.TypLen, TypMod: inner.TypMod}, true, true
	}
	return f, false, false
}

// dateTrunc describes date_trunc('unit', column): Postgres's date_trunc
// takes a timestamp, a timestamptz (which a date becomes) or an interval.
func (d *describer) dateTrunc(fc *pg_query.FuncCall) (f Field, named, ok bool) {
	if len(fc.Args) != 2 || fc.Args[0].GetAConst() == nil || fc.Args[0].GetAConst().GetSval() == nil {
		return f, false, false
	}
	af, _, ok := d.expr(fc.Args[1])
	if !ok {
		return f, false, false
	}
	t := af.TypeOID
	switch t {
	case pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval:
	case pgdef.OIDDate:
		t = pgdef.OIDTimestamptz
	default:
		return f, false, false
	}
	return fixedField("date_trunc", t)
}

// scalar describes a few functions of one value whose result type
// Postgres fixes by the value's: round and trunc (numeric [, integer],
// or double precision); ceil, floor and abs; upper, lower and length of
// text or varchar;
// extract(field FROM c) (numeric) and date_part('field', c) (double
// precision) of a date or time.
func (d *describer) scalar(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	if len(fc.Args) == 0 || len(fc.Args) > 2 {
		return f, false, false
	}
	col := fc.Args[len(fc.Args)-1]
	if fn != "extract" && fn != "date_part" {
		col = fc.Args[0]
	}
	af, _, ok := d.expr(col)
	if !ok {
		return f, false, false
	}
	var t uint32
	switch fn {
	case "round", "trunc":
		switch {
		case af.TypeOID == pgdef.OIDNumeric && (len(fc.Args) == 1 || intConst(fc.Args[1])):
			t = pgdef.OIDNumeric
		case af.TypeOID == pgdef.OIDFloat8 && len(fc.Args) == 1:
			t = pgdef.OIDFloat8
		}
	case "ceil", "ceiling", "floor":
		if len(fc.Args) == 1 && (af.TypeOID == pgdef.OIDNumeric || af.TypeOID == pgdef.OIDFloat8) {
			t = af.TypeOID
		}
	case "abs":
		if len(fc.Args) == 1 && isNumber(af.TypeOID) {
			t = af.TypeOID
		}
	case "upper", "lower", "length":
		if len(fc.Args) == 1 && isString(af.TypeOID) {
			t = pgdef.OIDText
			if fn == "length" {
				t = pgdef.OIDInt4
			}
		}
	case "extract", "date_part":
		field := fc.Args[0].GetAConst()
		if len(fc.Args) != 2 || field == nil || field.GetSval() == nil {
			break
		}
		switch af.TypeOID {
		case pgdef.OIDDate, pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval, pgdef.OIDTime:
			t = pgdef.OIDNumeric
			if fn == "date_part" {
				t = pgdef.OIDFloat8
			}
		}
	}
	return fixedField(fn, t)
}

// constType is the type Postgres gives a constant in a target list or
// arithmetic: int4, int8 or numeric for numbers, text for a string (an
// unknown-type output column is text); false for the rest.
func constType(c *pg_query.A_Const) (uint32, bool) {
	switch {
	case c.Isnull:
		return 0, false
	case c.GetIval() != nil:
		return pgdef.OIDInt4, true
	case c.GetFval() != nil:
		// make_const: an integer that fits int4 (only -2147483648 can
		// be one here) or int8 is one; another number is numeric.
		v := c.GetFval().Fval
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			if n == int64(int32(n)) {
				return pgdef.OIDInt4, true
			}
			return pgdef.OIDInt8, true
		}
		if strings.Trim(v, "-0123456789.eE+") != "" {
			return 0, false // hex, octal, underscores: not worked out here
		}
		return pgdef.OIDNumeric, true
	case c.GetSval() != nil:
		return pgdef.OIDText, true
	}
	return 0, false
}

// numberRank orders the number types Describe works with as Postgres
// converts them implicitly: each to those after it, not back.
var numberRank = map[uint32]int{pgdef.OIDInt2: 1, pgdef.OIDInt4: 2, pgdef.OIDInt8: 3, pgdef.OIDNumeric: 4, pgdef.OIDFloat8: 5}

func isInteger(t uint32) bool { return numberRank[t] >= 1 && numberRank[t] <= 3 }
func isNumber(t uint32) bool  { return numberRank[t] > 0 }
func isString(t uint32) bool  { return t == pgdef.OIDText || t == pgdef.OIDVarchar }

// arithmetic types x op y (+, -, *, /, %) of integers, numerics and
// double precision as Postgres resolves the operator: two integers give
// the wider, an integer or numeric with a numeric gives numeric, anything
// with a double precision gives double precision; -x keeps x's type;
// text || text is text. Constants are typed as constType says, strings
// only for ||.
func (d *describer) arithmetic(e *pg_query.A_Expr) (uint32, bool) {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 {
		return 0, false
	}
	op := e.Name[0].GetString_().GetSval()
	operand := func(n *pg_query.Node) (uint32, bool) {
		f, _, ok := d.expr(n)
		return f.TypeOID, ok
	}
	if e.Lexpr == nil {
		t, ok := operand(e.Rexpr)
		if op != "-" || !ok || !isNumber(t) && t != pgdef.OIDInterval {
			return 0, false
		}
		return t, true
	}
	l, okl := operand(e.Lexpr)
	r, okr := operand(e.Rexpr)
	if !okl || !okr {
		return 0, false
	}
	if op == "||" {
		if isString(l) && isString(r) {
			return pgdef.OIDText, true
		}
		return 0, false
	}
	if l == pgdef.OIDJSON || l == pgdef.OIDJSONB {
		// doc -> key and doc -> index keep the document's type, ->> gives
		// text; #> and #>> the same with a path; ? (jsonb) a boolean. The
		// key, index or path a constant.
		if c := e.Rexpr.GetAConst(); c == nil || c.Isnull {
			return 0, false
		}
		switch {
		case (op == "->" || op == "#>") && (r == pgdef.OIDText || op == "->" && r == pgdef.OIDInt4):
			return l, true
		case (op == "->>" || op == "#>>") && (r == pgdef.OIDText || op == "->>" && r == pgdef.OIDInt4):
			return pgdef.OIDText, true
		case op == "?" && l == pgdef.OIDJSONB && r == pgdef.OIDText:
			return pgdef.OIDBool, true
		}
		return 0, false
	}
	if paramComparisons[op] {
		// A comparison of two values of one type, or of numbers, or of
		// text and varchar: boolean.
		if l == r && typLens[l] != 0 || isNumber(l) && isNumber(r) || isString(l) && isString(r) {
			return pgdef.OIDBool, true
		}
		return 0, false
	}
	switch op {
	case "+", "-", "*", "/", "%":
	default:
		return 0, false
	}
	if t, ok := dateArithmetic(op, l, r); ok {
		return t, true
	}
	switch {
	case !isNumber(l) || !isNumber(r) || op == "%" && (l == pgdef.OIDFloat8 || r == pgdef.OIDFloat8):
		return 0, false
	case isInteger(l) && isInteger(r), l == pgdef.OIDFloat8 || r == pgdef.OIDFloat8:
		// Two integers give the wider; anything with a double precision
		// is one.
		if numberRank[l] >= numberRank[r] {
			return l, true
		}
		return r, true
	}
	return pgdef.OIDNumeric, true // an integer or numeric with a numeric
}

// dateArithmetic types the operators of dates, times and intervals as
// Postgres's catalog declares them: a timestamp (with time zone or not)
// or time plus or minus an interval keeps its type; a date plus or minus
// an interval is a timestamp, plus or minus an integer a date; the
// difference of two dates is an integer, of two timestamps an interval;
// intervals add and subtract, and multiply and divide by numbers.
func dateArithmetic(op string, l, r uint32) (uint32, bool) {
	integer := func(t uint32) bool { return t == pgdef.OIDInt2 || t == pgdef.OIDInt4 } // date + int8 has no operator
	switch op {
	case "+":
		if r == pgdef.OIDInterval {
			l, r = r, l // interval + x is x + interval
		}
		switch {
		case r == pgdef.OIDInterval && (l == pgdef.OIDTimestamp || l == pgdef.OIDTimestamptz || l == pgdef.OIDTime || l == pgdef.OIDInterval):
			return l, true
		case r == pgdef.OIDInterval && l == pgdef.OIDDate:
			return pgdef.OIDTimestamp, true
		case l == pgdef.OIDInterval && (r == pgdef.OIDTimestamp || r == pgdef.OIDTimestamptz || r == pgdef.OIDTime || r == pgdef.OIDInterval):
			return r, true
		case l == pgdef.OIDInterval && r == pgdef.OIDDate:
			return pgdef.OIDTimestamp, true
		case l == pgdef.OIDDate && integer(r), integer(l) && r == pgdef.OIDDate:
			return pgdef.OIDDate, true
		}
	case "-":
		switch {
		case r == pgdef.OIDInterval && (l == pgdef.OIDTimestamp || l == pgdef.OIDTimestamptz || l == pgdef.OIDTime || l == pgdef.OIDInterval):
			return l, true
		case r == pgdef.OIDInterval && l == pgdef.OIDDate:
			return pgdef.OIDTimestamp, true
		case l == pgdef.OIDDate && integer(r):
			return pgdef.OIDDate, true
		case l == pgdef.OIDDate && r == pgdef.OIDDate:
			return pgdef.OIDInt4, true
		case l == r && (l == pgdef.OIDTimestamp || l == pgdef.OIDTimestamptz):
			return pgdef.OIDInterval, true
		}
	case "*":
		if l == pgdef.OIDInterval && isNumber(r) || isNumber(l) && r == pgdef.OIDInterval {
			return pgdef.OIDInterval, true
		}
	case "/":
		if l == pgdef.OIDInterval && isNumber(r) {
			return pgdef.OIDInterval, true
		}
	}
	return 0, false
}

// intConst reports whether n is an integer constant Postgres types int4.
func intConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && !c.Isnull && c.GetIval() != nil
}

// builtinName is the name of a function call, unqualified or in
// pg_catalog (call declines the names it does not know).
func builtinName(names []*pg_query.Node) (string, bool) {
	if len(names) == 2 && names[0].GetString_().GetSval() != "pg_catalog" || len(names) == 0 || len(names) > 2 {
		return "", false
	}
	fn := names[len(names)-1].GetString_().GetSval()
	return fn, fn != ""
}

// describedCast is the type a cast names, among castTypes, and its name as
// pg_query gives it (int4 for int and integer).
func describedCast(tc *pg_query.TypeCast) (uint32, string, bool) {
	if tc.TypeName == nil || tc.TypeName.Setof || len(tc.TypeName.ArrayBounds) > 0 || tc.TypeName.PctType {
		return 0, "", false
	}
	names := tc.TypeName.Names
	if len(names) == 0 || len(names) > 2 || len(names) == 2 && names[0].GetString_().GetSval() != "pg_catalog" {
		return 0, "", false
	}
	last := names[len(names)-1].GetString_().GetSval()
	t, ok := castTypes[last]
	return t, last, ok
}

// castTypmod is the typmod a cast to type t with the given modifiers
// gives: -1 without them; numeric(p[,s]) and varchar(n) or char(n) as
// Postgres encodes them. false for anything else.
func castTypmod(t uint32, mods []*pg_query.Node) (int32, bool) {
	if len(mods) == 0 {
		return -1, true
	}
	vals := make([]int32, len(mods))
	for i, m := range mods {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return 0, false
		}
		vals[i] = c.GetIval().Ival
	}
	switch t {
	case pgdef.OIDNumeric:
		p, s := vals[0], int32(0)
		if len(vals) == 2 {
			s = vals[1]
		}
		if len(vals) > 2 || p < 1 || p > 1000 || s < 0 || s > p {
			return 0, false
		}
		return (p<<16 | s) + 4, true
	case pgdef.OIDVarchar, pgdef.OIDBpchar:
		if len(vals) != 1 || vals[0] < 1 || vals[0] > 10485760 {
			return 0, false
		}
		return vals[0] + 4, true
	}
	return 0, false
}
