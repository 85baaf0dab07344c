package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// leafSub is a subquery fromLeaves found: in FROM (rs as written), or a
// CTE (isCTE; cte is its name when it belongs to the SELECT's own WITH).
type leafSub struct {
	rs    *pg_query.RangeSubselect
	cte   string
	isCTE bool
}

// hiddenScale is a subquery output whose scale varies row by row
// (coalesce(sum(amount), 0) AS lifetime_value): the rewrite adds its
// scale to the subquery as a column of its own, hiddenColumn(name), which
// the outer SELECT's scale expressions read.
type hiddenScale struct {
	cte   string // the CTE it belongs to, or ""
	alias string // else the alias of the FROM subquery
	pos   int    // its position in the subquery's outputs
	st    scaleTarget
}

// averagedNames returns the column names inside avg, stddev and variance
// calls of sel: their answers depend on the display scale of the sum,
// which a hidden scale does not give DuckDB's.
func averagedNames(sel *pg_query.SelectStmt) map[string]bool {
	f := &averagedFinder{names: map[string]bool{}}
	walk(sel, f)
	return f.names
}

type averagedFinder struct{ names map[string]bool }

func (f *averagedFinder) enter(m proto.Message, w *walker) {
	fc, ok := m.(*pg_query.FuncCall)
	if !ok || funcName(fc) != "avg" && stddevKinds[funcName(fc)] == "" {
		return
	}
	for _, a := range fc.Args {
		walk(a, columnNameCollector(f.names))
	}
}

// columnNameCollector adds the last field of every column reference.
type columnNameCollector map[string]bool

func (c columnNameCollector) enter(m proto.Message, w *walker) {
	if cr, ok := m.(*pg_query.ColumnRef); ok && lastField(cr) != "" {
		c[lastField(cr)] = true
	}
}

// withoutCounts is a copy of n whose count(...) calls have no arguments:
// what they count is not printed.
func withoutCounts(n *pg_query.Node) *pg_query.Node {
	c := proto.Clone(n).(*pg_query.Node)
	walk(c, countStripper{})
	return c
}

type countStripper struct{}

func (countStripper) enter(m proto.Message, w *walker) {
	if fc, ok := m.(*pg_query.FuncCall); ok && funcName(fc) == "count" {
		fc.Args = nil
		fc.AggStar = true
	}
}

// readsHidden reports whether one of cols has a hidden scale.
func readsHidden(cols []string, subs map[string]*staticScale) bool {
	for _, c := range cols {
		if f := subs[c]; f != nil && f.op == 'h' {
			return true
		}
	}
	return false
}

// hiddenColumn is the name of the column that carries name's scale.
func hiddenColumn(name string) string { return "pgaccel_scale_" + name }

// hiddenScaleOf is colScale's value for a name whose scale is a hidden
// column (scaleExpr then reads that column).
const hiddenScaleOf = -1

// textScaleOf is colScale's value for a numeric held as text, whose scale
// is its text's, row by row (numerictext.go): scaleExpr reads it from the
// text inside the value's guard.
const textScaleOf = -2

// namesCTE reports whether a FROM item (a table or join of tables) names
// one of ctes.
func namesCTE(n *pg_query.Node, ctes map[string]*pg_query.CommonTableExpr) bool {
	if rv := n.GetRangeVar(); rv != nil {
		_, is := ctes[rv.Relname]
		return is && rv.Schemaname == ""
	}
	if j := n.GetJoinExpr(); j != nil {
		return namesCTE(j.Larg, ctes) || namesCTE(j.Rarg, ctes)
	}
	return false
}

// starColumns is the key of subqueryScales' map that marks a * among the
// outputs.
const starColumns = "*"

// staticScale is the scale of a subquery's output column, the same on
// every row: a formula over the columns of its tables.
type staticScale struct {
	op      byte // 'c' column, 'k' constant, '+' greatest of args, '*' sum of args
	col     string
	k       int
	decimal bool         // 'k': a decimal literal
	sum     bool         // a sum of the formula's columns (of bigints: a numeric)
	hidden  *hiddenScale // 'h': a scale that varies row by row, as a column of the subquery
	args    []*staticScale
}

// subqueryScales records the output columns of a FROM subquery over plain
// tables whose scale is fixed (nil for the others). Two outputs of one
// name, in one subquery or two, make the name unusable (nil).
func subqueryScales(ls leafSub, subs map[string]*staticScale, hiddenMerges map[string]map[proto.Message]bool) bool {
	rs := ls.rs
	if rs.Lateral || rs.Subquery == nil {
		return false
	}
	sub := rs.Subquery.GetSelectStmt()
	if sub == nil || sub.WithClause != nil || len(sub.ValuesLists) > 0 || len(sub.FromClause) == 0 ||
		(sub.Op != pg_query.SetOperation_SETOP_NONE && sub.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED) {
		return false
	}
	for _, f := range sub.FromClause {
		if !plainFrom(f) {
			return false
		}
	}
	if rs.Alias != nil && len(rs.Alias.Colnames) > 0 {
		return false // renamed columns
	}
	for i, t := range sub.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil {
			return false
		}
		name := rt.Name
		if cr := rt.Val.GetColumnRef(); cr != nil {
			if lastField(cr) == "" {
				// * or t.*: the tables' columns, by their names
				// (resolved against the datasets per plan).
				if _, dup := subs[starColumns]; !dup {
					subs[starColumns] = &staticScale{op: '*'}
				}
				continue
			}
			if name == "" {
				name = lastField(cr)
			}
		}
		if name == "" {
			continue // ?column? and the like: not referable by name
		}
		if _, dup := subs[name]; dup {
			subs[name] = nil
			delete(hiddenMerges, name)
			continue
		}
		subs[name] = fixedScale(rt.Val)
		if subs[name] == nil {
			subs[name] = hiddenScaleFor(ls, sub, i, rt.Val, name, hiddenMerges)
		}
	}
	return true
}

// hiddenScaleFor returns the hidden scale of sub's output i (val, named
// name) when its scale can be tracked row by row, recording its merges;
// else nil. The subquery must have a name the rewrite can find it by, and
// no DISTINCT (a column more would change it).
func hiddenScaleFor(ls leafSub, sub *pg_query.SelectStmt, i int, val *pg_query.Node, name string, hiddenMerges map[string]map[proto.Message]bool) *staticScale {
	h := &hiddenScale{cte: ls.cte, pos: i}
	switch {
	case ls.isCTE && ls.cte == "":
		return nil // an outer query's CTE
	case !ls.isCTE:
		if ls.rs.Alias == nil || ls.rs.Alias.Aliasname == "" {
			return nil
		}
		h.alias = ls.rs.Alias.Aliasname
	}
	if len(sub.DistinctClause) > 0 {
		return nil
	}
	merges := map[proto.Message]bool{}
	if !trackable(val, &h.st, merges, false) || len(merges) == 0 {
		return nil
	}
	for m := range merges {
		if _, isCast := m.(*pg_query.TypeCast); isCast {
			return nil // a cast to numeric, rewritten only in outputs (numericCasts)
		}
	}
	hiddenMerges[name] = merges
	return &staticScale{op: 'h', col: name, hidden: h}
}

// fixedScale is the formula of n's scale when it is the same on every row
// (columns, literals, + - *, and sum, min, max of such, count), else nil.
func fixedScale(n *pg_query.Node) *staticScale {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		if fc.Over != nil || fc.AggFilter != nil && funcName(fc) != "count" || fc.AggWithinGroup || len(fc.Funcname) != 1 {
			return nil
		}
		switch funcName(fc) {
		case "count":
			return &staticScale{op: 'k'}
		case "sum", "min", "max":
			// The scale of its values, on every row (NULL without any).
			if len(fc.Args) == 1 && !fc.AggStar {
				f := fixedScale(fc.Args[0])
				if f != nil && funcName(fc) == "sum" {
					c := *f
					c.sum = true
					return &c
				}
				return f
			}
		}
		return nil
	case *pg_query.Node_ColumnRef:
		if len(v.ColumnRef.Fields) > 3 || lastField(v.ColumnRef) == "" {
			return nil
		}
		return &staticScale{op: 'c', col: lastField(v.ColumnRef)}
	case *pg_query.Node_CaseExpr:
		// CASE WHEN ... THEN 1 ELSE 0 END: branches of one constant
		// scale (a missing ELSE is NULL, of no scale).
		branches := []*pg_query.Node{v.CaseExpr.Defresult}
		for _, w := range v.CaseExpr.Args {
			branches = append(branches, w.GetCaseWhen().GetResult())
		}
		return sameConstScale(branches)
	case *pg_query.Node_CoalesceExpr:
		return sameConstScale(v.CoalesceExpr.Args)
	case *pg_query.Node_AConst:
		switch c := v.AConst.Val.(type) {
		case *pg_query.A_Const_Ival:
			return &staticScale{op: 'k'}
		case *pg_query.A_Const_Fval:
			if s, ok := literalScale(c.Fval.Fval); ok {
				return &staticScale{op: 'k', k: s, decimal: true}
			}
		}
	case *pg_query.Node_AExpr:
		e := v.AExpr
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
			return nil
		}
		op, _ := stringsOf(e.Name)
		if len(op) != 1 {
			return nil
		}
		if e.Lexpr == nil {
			if op[0] == "-" {
				return fixedScale(e.Rexpr)
			}
			return nil
		}
		l, r := fixedScale(e.Lexpr), fixedScale(e.Rexpr)
		if l == nil || r == nil {
			return nil
		}
		switch op[0] {
		case "+", "-":
			return &staticScale{op: '+', args: []*staticScale{l, r}}
		case "*":
			return &staticScale{op: '*', args: []*staticScale{l, r}}
		}
	}
	return nil
}

// sameConstScale is the scale of values that are each NULL or a literal
// of one and the same scale, else nil.
func sameConstScale(vals []*pg_query.Node) *staticScale {
	var out *staticScale
	for _, n := range vals {
		if n == nil || n.GetAConst() != nil && n.GetAConst().Isnull {
			continue
		}
		f := fixedScale(n)
		if f == nil || f.op != 'k' || out != nil && (f.k != out.k || f.decimal != out.decimal) {
			return nil
		}
		out = f
	}
	return out
}

// eval computes the scale from the tables' column scales; numeric is true
// when a numeric column or a decimal literal is involved.
func (s *staticScale) eval(col func(string) (scale int, numeric, ok bool)) (scale int, numeric, ok bool) {
	switch s.op {
	case 'c':
		return col(s.col)
	case 'k':
		return s.k, s.decimal, true
	}
	l, ln, ok1 := s.args[0].eval(col)
	r, rn, ok2 := s.args[1].eval(col)
	if !ok1 || !ok2 {
		return 0, false, false
	}
	if s.op == '*' {
		return l + r, ln || rn, true
	}
	return max(l, r), ln || rn, true
}

// plainFrom reports whether a FROM item is a table or a join of tables.
func plainFrom(n *pg_query.Node) bool {
	if n.GetRangeVar() != nil {
		return true
	}
	if j := n.GetJoinExpr(); j != nil {
		return plainFrom(j.Larg) && plainFrom(j.Rarg)
	}
	return false
}
