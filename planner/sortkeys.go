package planner

import (
	"strconv"
	"strings"
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Helpers of the rewrites that sort, compare and refuse by the kinds of
// values (negzero.go, intervalorder.go, correlated.go): finding what an
// ORDER BY item sorts by, sorting a set operation by keys of its
// columns, and the refusal that sends a statement to the origin.

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
	pos, ambiguous := namedOutput(sel.TargetList, unquote(lastField(cr)), unquote)
	if pos < 0 || ambiguous {
		return n, true // an input column; or ambiguous: Postgres refuses it
	}
	return sel.TargetList[pos].GetResTarget().Val, true
}

// namedOutput is the position (from 0) of the first output column among
// targets that a bare name in ORDER BY or DISTINCT ON names, as Postgres
// reads it (findTargetlistEntrySQL92: an output column's name, or the one
// FigureColname gives an unnamed one, before an input column's), or -1.
// ambiguous: two outputs of different expressions have the name.
func namedOutput(targets []*pg_query.Node, name string, unquote func(string) string) (pos int, ambiguous bool) {
	pos = -1
	for i, t := range targets {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil || isStarTarget(rt) {
			continue
		}
		out := unquote(rt.Name)
		if out == "" {
			out = figureColname(rt.Val, unquote)
		}
		if out != name {
			continue
		}
		if pos < 0 {
			pos = i
		} else if !sameExpr(targets[pos].GetResTarget().Val, rt.Val) {
			ambiguous = true
		}
	}
	return pos, ambiguous
}

// isSetOp reports whether sel is a set operation (UNION, INTERSECT,
// EXCEPT) rather than a plain SELECT or VALUES.
func isSetOp(sel *pg_query.SelectStmt) bool {
	return sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED
}

// setOpArms are the plain SELECTs (and VALUES lists) whose rows the set
// operation sel combines, left to right; sel itself when it is none.
func setOpArms(sel *pg_query.SelectStmt) []*pg_query.SelectStmt {
	if sel == nil {
		return nil
	}
	if isSetOp(sel) {
		return append(setOpArms(sel.Larg), setOpArms(sel.Rarg)...)
	}
	return []*pg_query.SelectStmt{sel}
}

// isStarTarget reports whether rt is * or t.*.
func isStarTarget(rt *pg_query.ResTarget) bool {
	if rt == nil {
		return false
	}
	cr := rt.Val.GetColumnRef()
	return cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}

// noUnquote is figureColname's unquote for names the quoter has not
// touched.
func noUnquote(s string) string { return s }

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

// setOpOutput returns the position (from 0) of the output column an ORDER
// BY item of a set operation names (by position or by a name only one
// output of its leftmost arm, left, has), or -1.
func setOpOutput(left *pg_query.SelectStmt, n *pg_query.Node) int {
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
	if pos, ambiguous := namedOutput(left.TargetList, lastField(cr), noUnquote); !ambiguous {
		return pos
	}
	return -1
}

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
	column := func(n *pg_query.Node) int { return setOpOutput(left, n) }
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

// refusal is a rewrite's verdict that DuckDB cannot answer the statement
// as Postgres would: it goes to the origin (Decision.Reason unsupported,
// Detail the why).
type refusal struct {
	why    string
	reason string // the Decision's reason; ReasonUnsupported when empty
}

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

var deparseVersion = sync.OnceValue(func() int32 {
	tree, err := pg_query.Parse("SELECT 1")
	if err != nil {
		return 0
	}
	return tree.Version
})

// exprText is n as SQL, for a refusal's detail (at most 120 bytes).
func exprText(n *pg_query.Node) string {
	if n == nil {
		return "a value"
	}
	sel := &pg_query.SelectStmt{TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(copyNode(n), -1)},
		LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT, Op: pg_query.SetOperation_SETOP_NONE}
	out, err := pg_query.Deparse(&pg_query.ParseResult{Version: deparseVersion(),
		Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}}}})
	if err != nil {
		return "a value"
	}
	out = strings.TrimPrefix(out, "SELECT ")
	if len(out) > 120 {
		out = out[:117] + "..."
	}
	return out
}

// setOpColumnKinds is the kinds of column i of the set operation sel,
// over its branches; ok is false past its last column (or when a * makes
// it unknown: then ksAll for the first).
func setOpColumnKinds(sel *pg_query.SelectStmt, i int, kinds func(*pg_query.Node) kindSet) (kindSet, bool) {
	left := sel
	for left.Larg != nil {
		left = left.Larg
	}
	width := len(left.TargetList)
	if len(left.ValuesLists) > 0 {
		if l := left.ValuesLists[0].GetList(); l != nil {
			width = len(l.Items)
		}
	}
	for _, t := range left.TargetList {
		if isStarTarget(t.GetResTarget()) {
			return ksAll, i == 0
		}
	}
	if i >= width {
		return 0, false
	}
	return setOpColumn(sel, i, kinds), true
}
