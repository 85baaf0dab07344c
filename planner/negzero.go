package planner

import (
	"math"
	"strconv"
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
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
				expr, ok = starPosition(sel, sb.Node, r)
			}
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
// array: min(fa) is {0,1} for {-0,1}), SELECT DISTINCT ON's other
// columns when nested, and a subquery's nested value (a scalar subquery
// returning an array, ARRAY(SELECT f ...)). GREATEST and LEAST of up to four values become
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
	for _, sl := range c.sublinks {
		out := outputAt(sl.Subselect.GetSelectStmt(), 0)
		switch {
		case out == nil:
		case sl.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK && kinds(out).has(ksFloats),
			sl.SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK && (c.nested || floatArrays) && kinds(out).has(ksFloatArr):
			return refuse("a subquery's " + exprText(out) + ", which may be an array of floats or make one (DuckDB keeps a subquery's nested value by its normalized value, where -0 is 0)")
		}
	}
	// Innermost first: a copy holds its operands' rewrites.
	for i := len(c.minMax) - 1; i >= 0; i-- {
		node := c.minMax[i]
		mm := node.GetMinMaxExpr()
		if mm == nil {
			continue
		}
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
	selects  []*pg_query.SelectStmt
	calls    []*pg_query.FuncCall
	minMax   []*pg_query.Node
	sublinks []*pg_query.SubLink
	nested   bool
}

func (s *extremeSites) enter(m proto.Message, w *walker) {
	switch n := m.(type) {
	case *pg_query.A_ArrayExpr, *pg_query.RowExpr:
		s.nested = true
	case *pg_query.SubLink:
		if n.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK {
			s.nested = true
		}
		s.sublinks = append(s.sublinks, n)
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

// shield is CASE WHEN x IS NULL THEN NULL ELSE x END, of copies of x.
func shield(x *pg_query.Node) *pg_query.Node {
	null := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}
	test := &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
		Arg: copyNode(x), Nulltesttype: pg_query.NullTestType_IS_NULL, Location: -1}}}
	when := &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{Expr: test, Result: null, Location: -1}}}
	return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
		Args: []*pg_query.Node{when}, Defresult: copyNode(x), Location: -1}}}
}

// mayHoldFloatArrays reports whether a dataset the statement reads has a
// column of arrays of floats.
func (a *analysis) mayHoldFloatArrays(r resolution) bool {
	return r.anyColumn(func(c catalog.ColumnInfo) bool { return oidKinds(c.TypeOID).has(ksFloatArr) })
}

// mayHoldFloats reports whether a dataset the statement reads has a
// float column (or an array of floats).
func (a *analysis) mayHoldFloats(r resolution) bool {
	return r.anyColumn(func(c catalog.ColumnInfo) bool { return oidKinds(c.TypeOID).has(ksFloats) })
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

// starPosition is the column an ORDER BY position names in SELECT * of one
// dataset's table: SELECT * FROM t ORDER BY 2 sorts by t's second column.
func starPosition(sel *pg_query.SelectStmt, n *pg_query.Node, r resolution) (*pg_query.Node, bool) {
	c := n.GetAConst()
	if c == nil || len(sel.TargetList) != 1 || len(sel.FromClause) != 1 || sel.FromClause[0].GetRangeVar() == nil || len(r.datasets) != 1 {
		return nil, false
	}
	if cr := sel.TargetList[0].GetResTarget().GetVal().GetColumnRef(); cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetAStar() == nil {
		return nil, false
	}
	iv, ok := c.Val.(*pg_query.A_Const_Ival)
	cols := r.datasets[0].state.Columns
	if !ok || iv.Ival.Ival < 1 || int(iv.Ival.Ival) > len(cols) {
		return nil, false
	}
	return &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: &pg_query.ColumnRef{
		Fields: []*pg_query.Node{pg_query.MakeStrNode(cols[iv.Ival.Ival-1].Name)}, Location: -1}}}, true
}
