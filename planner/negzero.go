package planner

import (
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// -0 in sorted values. Postgres orders -0 and 0 as equal and returns the
// values it sorted as they are. DuckDB's sort returns the columns it
// sorts by from their normalized sort keys, where -0 has become 0 (as a
// float array's -0 elements): SELECT id, f FROM t ORDER BY f prints 0
// for a row whose f is -0. It does so for every sort: ORDER BY (of a
// subquery too), a window's ORDER BY and PARTITION BY (and the values
// of the window functions over it, lag(f) OVER (ORDER BY f)), an
// aggregate's ORDER BY (array_agg(f ORDER BY f)), DISTINCT ON with its
// ORDER BY.
//
// A column is returned from its sort key only when the sort key is that
// very column; a sort by another expression of the same order keeps the
// column's own values. So every sort key that may hold a double
// precision or a real (or an array of them), and is not known to hold
// none (kindsIn), becomes
//
//	CASE WHEN x IS NULL THEN NULL ELSE x END
//
// of the same type, value and order (NULLs included) as x, which DuckDB
// does not fold back into x. An ORDER BY item that names an output
// column (by position or name) sorts by that column's expression,
// copied; an ORDER BY of a set operation sorts it as a subquery, by its
// columns' names. What cannot be resolved so (a position in a * the
// planner cannot expand) goes to the origin.
//
// DuckDB's optimizer also takes expressions that differ only by
// constants comparing equal for one (see the interval constants in
// tstz.go): in SELECT f * '-0'::float8, f * 0 both columns are the
// first's. A statement with a -0 constant and another zero constant goes
// to the origin (floatZeroCollision).

// shieldFloatSorts makes the sorts of the rewritten statement root that
// may hold floats sort by a shielded copy of their key (see above).
func shieldFloatSorts(root *pg_query.Node, a *analysis, r resolution, unquote func(string) string) error {
	var c sortSites
	walk(root, &c)
	kinds := a.kindsIn(root, r, unquote)
	done := map[*pg_query.SortBy]bool{}
	for _, sel := range c.selects {
		if len(sel.SortClause) == 0 {
			continue
		}
		for _, item := range sel.SortClause {
			if sb := item.GetSortBy(); sb != nil {
				done[sb] = true
			}
		}
		if sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
			err := sortSetOp(sel, kinds, func(n *pg_query.Node, k kindSet) (*pg_query.Node, error) {
				if k.has(ksFloats) {
					return shield(n), nil
				}
				return nil, nil
			})
			if err != nil {
				return err
			}
			continue
		}
		for _, item := range sel.SortClause {
			sb := item.GetSortBy()
			if sb == nil {
				continue
			}
			expr, ok := sortTarget(sel, sb.Node, unquote)
			if !ok {
				if a.mayHoldFloats(r) {
					return refuse("an ORDER BY position in a * whose columns may be floats (DuckDB would return -0 as 0)")
				}
				continue
			}
			if kinds(expr).has(ksFloats) {
				sb.Node = shield(expr)
			}
		}
	}
	for _, sb := range c.sorts {
		if !done[sb] && kinds(sb.Node).has(ksFloats) {
			sb.Node = shield(sb.Node)
		}
	}
	for _, wd := range c.windows {
		for i, p := range wd.PartitionClause {
			if kinds(p).has(ksFloats) {
				wd.PartitionClause[i] = shield(p)
			}
		}
	}
	return floatExtremes(root, a.mayHoldFloatArrays(r), kinds)
}

// DuckDB computes some results from normalized keys too, which no copy of
// a key avoids: GREATEST and LEAST of reals (float4), INTERSECT ALL and EXCEPT
// ALL (numbered over their columns), min, max and the other aggregates
// that keep one of their values when the values are nested (a float
// array: min(fa) is {0,1} for {-0,1}), and SELECT DISTINCT ON's other
// columns when nested. GREATEST and LEAST of up to four values become
// CASE expressions (the first of equal values kept, as in Postgres); the
// rest goes to the origin.

// nestedValueAggs are the aggregates DuckDB keeps a nested value of by
// its sort key.
var nestedValueAggs = map[string]bool{
	"min": true, "max": true, "any_value": true, "mode": true, "arg_min": true, "arg_max": true,
	"first": true, "last": true, "percentile_disc": true,
}

// floatExtremes rewrites or refuses those of the rewritten statement root.
func floatExtremes(root *pg_query.Node, floatArrays bool, kinds func(*pg_query.Node) kindSet) error {
	var c extremeSites
	walk(root, &c)
	for _, sel := range c.selects {
		if (sel.Op == pg_query.SetOperation_SETOP_INTERSECT || sel.Op == pg_query.SetOperation_SETOP_EXCEPT) && sel.All {
			for i := 0; ; i++ {
				k, ok := setOpColumnKinds(sel, i, kinds)
				if !ok {
					break
				}
				if k.has(ksFloats) {
					return refuse("INTERSECT ALL or EXCEPT ALL of values that may be floats (DuckDB numbers rows by their normalized values, where -0 is 0)")
				}
			}
		}
		if hasDistinctOn(sel) && (c.nested || floatArrays) {
			for _, t := range sel.TargetList {
				if v := t.GetResTarget().GetVal(); v != nil && kinds(v).has(ksFloatArr) {
					return refuse("SELECT DISTINCT ON with " + exprText(v) + ", which may be an array of floats (DuckDB keeps it by its normalized value, where -0 is 0)")
				}
			}
		}
	}
	for _, fc := range c.calls {
		if !c.nested && !floatArrays || !nestedValueAggs[funcName(fc)] {
			continue
		}
		args := fc.Args
		if fc.AggWithinGroup {
			args = nil
			for _, o := range fc.AggOrder {
				args = append(args, o.GetSortBy().GetNode())
			}
		}
		if len(args) > 0 && kinds(args[0]).has(ksFloatArr) {
			return refuse(funcName(fc) + " of " + exprText(args[0]) + ", which may be an array of floats (DuckDB keeps it by its normalized value, where -0 is 0)")
		}
	}
	// Innermost first: a copy holds its operands' rewrites.
	for i := len(c.minMax) - 1; i >= 0; i-- {
		node := c.minMax[i]
		mm := node.GetMinMaxExpr()
		k := kindSet(0)
		for _, x := range mm.Args {
			k |= kinds(x)
		}
		switch {
		case !k.has(ksFloats):
			continue
		case k.has(ksFloatArr) || len(mm.Args) > 4:
			return refuse("GREATEST or LEAST of values that may be floats or arrays of them (DuckDB returns -0 as 0)")
		}
		op := ">"
		if mm.Op == pg_query.MinMaxOp_IS_LEAST {
			op = "<"
		}
		r := mm.Args[0]
		for _, b := range mm.Args[1:] {
			r = extremeCase(r, b, op)
		}
		node.Node = r.Node
	}
	return nil
}

// extremeCase is GREATEST(r, b) (op ">") or LEAST(r, b) (op "<") as
// Postgres computes it: NULLs skipped, the first of equal values kept.
func extremeCase(r, b *pg_query.Node, op string) *pg_query.Node {
	isNull := func(n *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
			Arg: copyNode(n), Nulltesttype: pg_query.NullTestType_IS_NULL, Location: -1}}}
	}
	when := func(cond, result *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{Expr: cond, Result: result, Location: -1}}}
	}
	return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
		Args: []*pg_query.Node{
			when(isNull(b), copyNode(r)),
			when(isNull(r), copyNode(b)),
			when(binOp(op, copyNode(b), copyNode(r)), copyNode(b)),
		},
		Defresult: copyNode(r), Location: -1}}}
}

// extremeSites are the SELECTs, function calls and GREATEST/LEAST nodes
// of a tree, and whether it builds nested values (arrays, rows) that may
// hold floats though no column is an array of them.
type extremeSites struct {
	selects []*pg_query.SelectStmt
	calls   []*pg_query.FuncCall
	minMax  []*pg_query.Node
	nested  bool
}

func (s *extremeSites) enter(m proto.Message, w *walker) {
	switch n := m.(type) {
	case *pg_query.A_ArrayExpr, *pg_query.RowExpr:
		s.nested = true
	case *pg_query.SubLink:
		if n.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK {
			s.nested = true
		}
	case *pg_query.TypeName:
		if len(n.ArrayBounds) > 0 {
			s.nested = true
		}
	case *pg_query.SelectStmt:
		s.selects = append(s.selects, n)
	case *pg_query.FuncCall:
		s.calls = append(s.calls, n)
		if name := funcName(n); strings.HasPrefix(name, "array") || strings.HasPrefix(name, "list") || name == "string_to_array" {
			s.nested = true
		}
	case *pg_query.MinMaxExpr:
		if w.node() != nil {
			s.minMax = append(s.minMax, w.node())
		}
	}
}

// sortSites are the SELECTs, sort items and window definitions of a tree.
type sortSites struct {
	selects []*pg_query.SelectStmt
	sorts   []*pg_query.SortBy
	windows []*pg_query.WindowDef
}

func (s *sortSites) enter(m proto.Message, _ *walker) {
	switch n := m.(type) {
	case *pg_query.SelectStmt:
		s.selects = append(s.selects, n)
	case *pg_query.SortBy:
		s.sorts = append(s.sorts, n)
	case *pg_query.WindowDef:
		s.windows = append(s.windows, n)
	}
}

// shield is CASE WHEN x IS NULL THEN NULL ELSE x END, of copies of x.
func shield(x *pg_query.Node) *pg_query.Node {
	null := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}
	test := &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
		Arg: copyNode(x), Nulltesttype: pg_query.NullTestType_IS_NULL, Location: -1}}}
	when := &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{Expr: test, Result: null, Location: -1}}}
	return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
		Args: []*pg_query.Node{when}, Defresult: copyNode(x), Location: -1}}}
}

// sortTarget returns the expression an ORDER BY item of sel (a plain
// SELECT) sorts by: the output column it names by position or by name (as
// Postgres reads a bare name: an output column's before an input
// column's), or the item itself. ok is false for a position the planner
// cannot count to (a * before it).
func sortTarget(sel *pg_query.SelectStmt, n *pg_query.Node, unquote func(string) string) (*pg_query.Node, bool) {
	if c := n.GetAConst(); c != nil {
		iv, isInt := c.Val.(*pg_query.A_Const_Ival)
		if !isInt {
			return n, true
		}
		p := int(iv.Ival.Ival)
		if p < 1 || p > len(sel.TargetList) {
			return nil, false
		}
		for _, t := range sel.TargetList[:p] {
			if isStarTarget(t.GetResTarget()) {
				return nil, false
			}
		}
		rt := sel.TargetList[p-1].GetResTarget()
		if rt == nil || rt.Val == nil {
			return nil, false
		}
		return rt.Val, true
	}
	cr := n.GetColumnRef()
	if cr == nil || len(cr.Fields) != 1 || lastField(cr) == "" {
		return n, true
	}
	name := unquote(lastField(cr))
	var found *pg_query.Node
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil || isStarTarget(rt) {
			continue
		}
		out := unquote(rt.Name)
		if out == "" {
			out = figureColname(rt.Val, unquote)
		}
		if out == name {
			if found != nil && !sameExpr(found, rt.Val) {
				return n, true // ambiguous: Postgres refuses it
			}
			found = rt.Val
		}
	}
	if found == nil {
		return n, true // an input column
	}
	return found, true
}

// isStarTarget reports whether rt is * or t.*.
func isStarTarget(rt *pg_query.ResTarget) bool {
	if rt == nil {
		return false
	}
	cr := rt.Val.GetColumnRef()
	return cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}

// figureColname is the name Postgres gives an unnamed output expression
// (FigureColname), "?column?" when it has none of its own.
func figureColname(n *pg_query.Node, unquote func(string) string) string {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		return unquote(lastField(v.ColumnRef))
	case *pg_query.Node_FuncCall:
		return funcName(v.FuncCall)
	case *pg_query.Node_CaseExpr:
		return "case"
	case *pg_query.Node_CoalesceExpr:
		return "coalesce"
	case *pg_query.Node_MinMaxExpr:
		if v.MinMaxExpr.Op == pg_query.MinMaxOp_IS_LEAST {
			return "least"
		}
		return "greatest"
	case *pg_query.Node_AExpr:
		if v.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif"
		}
	case *pg_query.Node_TypeCast:
		if name := figureColname(v.TypeCast.Arg, unquote); name != "?column?" {
			return name
		}
		if parts, ok := stringsOf(v.TypeCast.TypeName.GetNames()); ok && len(parts) > 0 {
			return parts[len(parts)-1]
		}
	case *pg_query.Node_AIndirection:
		for i := len(v.AIndirection.Indirection) - 1; i >= 0; i-- {
			if s := v.AIndirection.Indirection[i].GetString_(); s != nil {
				return s.Sval
			}
		}
		return figureColname(v.AIndirection.Arg, unquote)
	case *pg_query.Node_SubLink:
		if v.SubLink.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK {
			return "exists"
		}
		if v.SubLink.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK {
			return "array"
		}
		if sel := v.SubLink.Subselect.GetSelectStmt(); sel != nil && v.SubLink.SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK {
			for sel.Larg != nil {
				sel = sel.Larg
			}
			if len(sel.TargetList) > 0 {
				if rt := sel.TargetList[0].GetResTarget(); rt != nil {
					if rt.Name != "" {
						return unquote(rt.Name)
					}
					return figureColname(rt.Val, unquote)
				}
			}
		}
	case *pg_query.Node_AArrayExpr:
		return "array"
	case *pg_query.Node_RowExpr:
		return "row"
	}
	return "?column?"
}

// setOpAlias names a set operation the rewrite sorts as a subquery.
const setOpAlias = "pgaccel_setop"

// sortSetOp sorts the set operation sel by keyFor's keys of the columns
// its ORDER BY items name: when keyFor has one (not nil) for any, sel
// becomes
//
//	SELECT * FROM (<the set operation>) AS pgaccel_setop(c1, ..., cn)
//	ORDER BY <items: keyFor(pgaccel_setop.c_k) or pgaccel_setop.c_k> LIMIT ...
//
// with the same WITH clause. keyFor is given the column and its kinds
// over the branches.
func sortSetOp(sel *pg_query.SelectStmt, kinds func(*pg_query.Node) kindSet, keyFor func(*pg_query.Node, kindSet) (*pg_query.Node, error)) error {
	left := sel
	for left.Larg != nil {
		left = left.Larg
	}
	width := len(left.TargetList)
	for _, t := range left.TargetList {
		if isStarTarget(t.GetResTarget()) {
			width = -1
		}
	}
	// column returns the position (from 0) an item names, or -1.
	column := func(n *pg_query.Node) int {
		if c := n.GetAConst(); c != nil {
			if iv, ok := c.Val.(*pg_query.A_Const_Ival); ok && iv.Ival.Ival >= 1 && int(iv.Ival.Ival) <= len(left.TargetList) {
				return int(iv.Ival.Ival) - 1
			}
			return -1
		}
		cr := n.GetColumnRef()
		if cr == nil || len(cr.Fields) != 1 || lastField(cr) == "" {
			return -1
		}
		found := -1
		for i, t := range left.TargetList {
			rt := t.GetResTarget()
			name := rt.GetName()
			if name == "" && rt != nil {
				name = figureColname(rt.Val, func(s string) string { return s })
			}
			if name == lastField(cr) {
				if found >= 0 {
					return -1
				}
				found = i
			}
		}
		return found
	}
	ref := func(i int) *pg_query.Node {
		return pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(setOpAlias), pg_query.MakeStrNode("c" + strconv.Itoa(i+1))}, -1)
	}
	keys := make([]*pg_query.Node, len(sel.SortClause))
	any := false
	for k, item := range sel.SortClause {
		sb := item.GetSortBy()
		if sb == nil {
			continue
		}
		i := column(sb.Node)
		if i < 0 || width < 0 {
			key, err := keyFor(sb.Node, ksAll)
			if err != nil || key != nil {
				return refuse("an ORDER BY of a set operation the planner cannot resolve, of columns that may be floats or intervals")
			}
			continue
		}
		key, err := keyFor(ref(i), setOpColumn(sel, i, kinds))
		if err != nil {
			return err
		}
		if key != nil {
			keys[k], any = key, true
		}
	}
	if !any {
		return nil
	}
	inner := &pg_query.SelectStmt{Op: sel.Op, All: sel.All, Larg: sel.Larg, Rarg: sel.Rarg,
		LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT}
	alias := &pg_query.Alias{Aliasname: setOpAlias}
	for i := 1; i <= width; i++ {
		alias.Colnames = append(alias.Colnames, pg_query.MakeStrNode("c"+strconv.Itoa(i)))
	}
	star := pg_query.MakeResTargetNodeWithVal(pg_query.MakeColumnRefNode([]*pg_query.Node{{Node: &pg_query.Node_AStar{AStar: &pg_query.A_Star{}}}}, -1), -1)
	sel.Op, sel.All, sel.Larg, sel.Rarg = pg_query.SetOperation_SETOP_NONE, false, nil, nil
	sel.TargetList = []*pg_query.Node{star}
	sel.FromClause = []*pg_query.Node{{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
		Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: inner}}, Alias: alias}}}}
	for k, item := range sel.SortClause {
		sb := item.GetSortBy()
		switch {
		case sb == nil:
		case keys[k] != nil:
			sb.Node = keys[k]
		default:
			if i := column(sb.Node); i >= 0 {
				sb.Node = ref(i)
			}
		}
	}
	return nil
}

// setOpColumn is the union of the kinds of column i (from 0) over the
// branches of the set operation s.
func setOpColumn(s *pg_query.SelectStmt, i int, kinds func(*pg_query.Node) kindSet) kindSet {
	if s == nil {
		return 0
	}
	if s.Larg != nil || s.Rarg != nil {
		return setOpColumn(s.Larg, i, kinds) | setOpColumn(s.Rarg, i, kinds)
	}
	if len(s.ValuesLists) > 0 {
		out := kindSet(0)
		for _, row := range s.ValuesLists {
			l := row.GetList()
			if l == nil || i >= len(l.Items) {
				return ksAll
			}
			out |= kinds(l.Items[i])
		}
		return out
	}
	if i >= len(s.TargetList) {
		return ksAll
	}
	for _, t := range s.TargetList[:i+1] {
		if isStarTarget(t.GetResTarget()) {
			return ksAll
		}
	}
	return kinds(s.TargetList[i].GetResTarget().GetVal())
}

// mayHoldFloatArrays reports whether a dataset the statement reads has a
// column of arrays of floats.
func (a *analysis) mayHoldFloatArrays(r resolution) bool {
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if oidKinds(c.TypeOID).has(ksFloatArr) {
				return true
			}
		}
	}
	return false
}

// mayHoldFloats reports whether a dataset the statement reads has a
// float column (or an array of floats).
func (a *analysis) mayHoldFloats(r resolution) bool {
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if oidKinds(c.TypeOID).has(ksFloats) {
				return true
			}
		}
	}
	return false
}

// floatZeroCollision returns why the statement's constants could be taken
// one for another by DuckDB: a float constant -0 beside a zero constant.
func floatZeroCollision(sel *pg_query.SelectStmt) string {
	var z zeroConsts
	walk(sel, &z)
	if z.negative && z.zeros > 0 {
		return "a double precision or real constant -0 beside a zero constant (DuckDB takes expressions that differ only by constants comparing equal for one)"
	}
	return ""
}

// zeroConsts counts a statement's zero constants, and whether one is a
// float -0: '-0'::float8, -'0'::float4, -(0::float8), ...
type zeroConsts struct {
	negative bool
	zeros    int
}

func (z *zeroConsts) enter(m proto.Message, _ *walker) {
	switch n := m.(type) {
	case *pg_query.A_Const:
		// A string '-0' is a -0 only cast to a float type (below).
		if v, ok := constNumber(n); ok && v == 0 && !math.Signbit(v) {
			z.zeros++
		}
	case *pg_query.TypeCast:
		if c := n.Arg.GetAConst(); c != nil && castTarget(n, floatTypeNames) {
			if s, ok := c.Val.(*pg_query.A_Const_Sval); ok {
				if v, err := strconv.ParseFloat(strings.TrimSpace(s.Sval.Sval), 64); err == nil && v == 0 && math.Signbit(v) {
					z.negative = true
				}
			}
		}
	case *pg_query.A_Expr:
		// Unary minus of a zero: -0 in a float context.
		if n.Kind == pg_query.A_Expr_Kind_AEXPR_OP && n.Lexpr == nil && divisionOp(n) == "-" && isZeroConst(n.Rexpr) {
			z.negative = true
		}
	}
}

// constNumber is the value of a numeric or string constant that reads as
// a number.
func constNumber(c *pg_query.A_Const) (float64, bool) {
	var s string
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		return float64(v.Ival.Ival), true
	case *pg_query.A_Const_Fval:
		s = v.Fval.Fval
	case *pg_query.A_Const_Sval:
		s = v.Sval.Sval
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}

// isZeroConst reports whether n is a zero constant, cast or not.
func isZeroConst(n *pg_query.Node) bool {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	c := n.GetAConst()
	if c == nil {
		return false
	}
	v, ok := constNumber(c)
	return ok && v == 0
}

// refusal is a rewrite's verdict that DuckDB cannot answer the statement
// as Postgres would: it goes to the origin (Decision.Reason unsupported,
// Detail the why).
type refusal struct{ why string }

func (e *refusal) Error() string { return e.why }

func refuse(why string) error { return &refusal{why: why} }

// unquoteFunc maps a name the quoter protected back to its own.
func (q *identQuoter) unquoteFunc() func(string) string {
	return func(s string) string {
		rest, ok := strings.CutPrefix(s, quoteMarker)
		if !ok {
			return s
		}
		i, err := strconv.Atoi(strings.TrimSuffix(rest, "_"))
		if err != nil || i < 0 || i >= len(q.names) {
			return s
		}
		return q.names[i]
	}
}
