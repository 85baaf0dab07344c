package planner

import (
	"maps"
	"slices"
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Scale-tracked output columns. A Postgres numeric carries its display
// scale value by value, so
//
//	SELECT sum(CASE WHEN status = 'paid' THEN amount ELSE 0 END) ...
//
// prints 12.50 for a group with a paid order and 0 for one without, while
// DuckDB's DECIMAL prints 0.00. numericscale.go sends such merges to the
// origin, except in an output column of the outermost SELECT built only
// from numeric or integer columns, integer and decimal literals, + - *,
// CASE, COALESCE and sum: there the rewrite computes, next to the value,
// the scale Postgres would give it, row by row,
//
//	scale(column numeric(p,s)) = s, scale(integer) = 0, scale(1.50) = 2
//	scale(a + b), scale(a - b) = greatest(scale(a), scale(b))
//	scale(a * b) = scale(a) + scale(b)
//	scale(CASE WHEN c THEN a ... ELSE b END) = CASE WHEN c THEN scale(a) ... ELSE scale(b) END
//	scale(COALESCE(a, b)) = CASE WHEN a IS NOT NULL THEN scale(a) ELSE scale(b) END
//	scale(sum(a)) = max(CASE WHEN a IS NOT NULL THEN scale(a) END), scale(count(...)) = 0
//
// (numeric_add, numeric_mul and numeric_sum in utils/adt/numeric.c), and
// the column becomes
//
//	pgaccel_numeric_scale(CAST(value AS text), scale)
//
// whose text the proxy encodes as a numeric with that scale (as for the
// exact avg). An output column that is a division a / b of two such
// expressions becomes
//
//	pgaccel_numeric_div(<a as above>, <b as above>)
//
// which divides the two texts as numeric_div does (the scale from
// select_div_scale, rounded half away from zero); with integers only, it
// stays an integer division, which DuckDB computes as Postgres does. DuckDB's value is exact and its scale at least Postgres's, so
// only zeros are dropped; the function fails otherwise, and the statement
// falls back to the origin. FROM holds plain tables (and joins of them), or
// only subqueries over plain tables: their output columns referred to by
// name must have a fixed scale (columns, literals, + - *). The statement
// must not refer to such a column
// by position or name in GROUP BY or ORDER BY (it would group or sort by
// text), nor be DISTINCT or a set operation.

// pgdef.FuncNumericScale is pgdef.FuncNumericScale, and
// pgdef.FuncNumericDiv pgdef.FuncNumericDiv.
const (
// pgdef.FuncNumericIn and pgdef.FuncNumericInScale are accelerator's.
// pgdef.FuncFloat8NumericText is pgdef.FuncFloat8NumericText.
// pgdef.FuncNumericStddev is pgdef.FuncNumericStddev.
// pgdef.FuncNumericSortkey is pgdef.FuncNumericSortkey.
)

// targetAt is the scale target at output position i, or nil.
func targetAt(targets []scaleTarget, i int) *scaleTarget {
	for j := range targets {
		if targets[j].pos == i {
			return &targets[j]
		}
	}
	return nil
}

// unguarded is a divisor without the division-by-zero guard the rewrite
// puts on it (guardDivisor): pgdef.FuncNumericDiv raises on zero itself.
func unguarded(n *pg_query.Node) *pg_query.Node {
	if c := n.GetCaseExpr(); c != nil && len(c.Args) == 1 && c.Defresult != nil && isZeroGuard(c) {
		return c.Defresult
	}
	return n
}

// divisionOp is the operator of a division A_Expr ("/" or "%").
func divisionOp(e *pg_query.A_Expr) string {
	op, _ := stringsOf(e.Name)
	if len(op) != 1 {
		return ""
	}
	return op[0]
}

// scaleTarget is an output column whose scale can be tracked.
type scaleTarget struct {
	pos    int
	cols   []string // names of the columns in value positions
	summed []string // those of cols inside a sum (sum of a bigint is a numeric)
	// castCols: columns cast to an unconstrained numeric: integers and
	// numerics keep their value and scale, double precision is read as
	// float8_numeric prints it (numericCasts).
	castCols []string
	decimal  bool // it has a decimal literal
	divides  bool // it is a / b, a and b trackable
	// rounds: it is round(avg(x), k) or round(a / b, k) (divides says
	// which), computed exactly as text and rounded to k (roundK).
	rounds bool
	roundK int
	// castP: it is CAST(a / b AS numeric(castP, roundK)), rounded as
	// round(a / b, roundK) and checked against the precision.
	castP int
	// stddev: it is (or rounds, with rounds) stddev or variance of a
	// numeric or integer, the kind of pgdef.FuncNumericStddev.
	stddev string
	// plain: it merges nothing; it is tracked only where one of its
	// columns is a numeric held as text (planScalesOf).
	plain bool
}

// stddevKinds maps Postgres's stddev and variance aggregates to the kinds
// of pgdef.FuncNumericStddev.
var stddevKinds = map[string]string{
	"stddev": "stddev_samp", "stddev_samp": "stddev_samp", "stddev_pop": "stddev_pop",
	"variance": "var_samp", "var_samp": "var_samp", "var_pop": "var_pop",
}

// stddevCall returns the kind of fc when it is a plain stddev or variance
// aggregate (a FILTER allowed) of a value whose scale is the same on every
// row, tracking that value into st.
func stddevCall(fc *pg_query.FuncCall, st *scaleTarget, merges map[proto.Message]bool) (string, bool) {
	kind, ok := stddevKinds[funcName(fc)]
	if !ok || len(fc.Args) != 1 || fc.AggStar || fc.AggDistinct || fc.Over != nil || len(fc.AggOrder) > 0 ||
		fc.AggWithinGroup || fc.FuncVariadic || len(fc.Funcname) != 1 || fixedScale(fc.Args[0]) == nil {
		return "", false
	}
	if !trackable(fc.Args[0], st, merges, true) {
		return "", false
	}
	merges[fc] = true
	return kind, true
}

// stddevExpr is pgdef.FuncNumericStddev over the exact sums of fc's value
// x, of scale s (its formula over colScale):
//
//	pgaccel_numeric_stddev(CAST(sum(x) AS text),
//	    CAST(sum(CAST(x AS decimal(38,s)) * CAST(x AS decimal(38,s))) AS text), count(x), kind)
//
// each aggregate with fc's FILTER.
func stddevExpr(fc *pg_query.FuncCall, kind string, colScale map[string]int) (*pg_query.Node, error) {
	x := fc.Args[0]
	f := fixedScale(x)
	if f == nil {
		return nil, errRewrite
	}
	scale, _, ok := f.eval(func(c string) (int, bool, bool) {
		s, ok := colScale[c]
		return s, true, ok
	})
	if !ok || scale < 0 || scale > 19 {
		return nil, errRewrite
	}
	agg := func(name string, arg *pg_query.Node) *pg_query.Node {
		n := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, []*pg_query.Node{arg}, -1)
		if fc.AggFilter != nil {
			n.GetFuncCall().AggFilter = proto.Clone(fc.AggFilter).(*pg_query.Node)
		}
		return n
	}
	dec := func() *pg_query.Node { return castTo(proto.Clone(x).(*pg_query.Node), "decimal", 38, int64(scale)) }
	square := binOp("*", dec(), dec())
	return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncNumericStddev)}, []*pg_query.Node{
		textCast(agg("sum", proto.Clone(x).(*pg_query.Node))),
		textCast(agg("sum", square)),
		agg("count", proto.Clone(x).(*pg_query.Node)),
		pg_query.MakeAConstStrNode(kind, -1),
	}, -1), nil
}

// scaleCandidates returns the output columns of sel whose scale can be
// tracked, and the CASE and COALESCE nodes inside them.
func scaleCandidates(sel *pg_query.SelectStmt) ([]scaleTarget, map[proto.Message]bool, map[string]*staticScale) {
	targets, exempt, subs := scaleCandidatesFrom(sel, nil)
	if len(targets) == 0 {
		return nil, nil, nil
	}
	return targets, exempt, subs
}

func scaleCandidatesFrom(sel *pg_query.SelectStmt, inherited map[string]*pg_query.CommonTableExpr) ([]scaleTarget, map[proto.Message]bool, map[string]*staticScale) {
	if sel == nil || (sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED) ||
		len(sel.DistinctClause) > 0 || len(sel.ValuesLists) > 0 {
		return nil, nil, nil
	}
	// Column names are matched to the datasets' columns by name: FROM
	// holds only plain tables (and joins of them), or only subqueries
	// over plain tables, whose output columns have a fixed scale.
	if len(sel.FromClause) == 0 {
		return nil, nil, nil
	}
	tables, subqueries, ok := fromLeaves(sel, inherited)
	if !ok {
		return nil, nil, nil
	}
	funcCols := functionColumns(sel)
	var subs map[string]*staticScale
	exempt := map[proto.Message]bool{}
	hiddenMerges := map[string]map[proto.Message]bool{}
	if len(subqueries) > 0 || len(funcCols) > 0 {
		subs = map[string]*staticScale{}
		if tables > 0 {
			// Tables and subqueries: a name is the tables' column when
			// no subquery has it (planScales).
			subs[tablesToo] = &staticScale{op: 't'}
		}
		for _, ls := range subqueries {
			if !subqueryScales(ls, subs, hiddenMerges) {
				return nil, nil, nil
			}
		}
		for _, name := range funcCols {
			subs[name] = nil // a function's column (generate_series): no scale known
		}
	}
	var out []scaleTarget
	for i, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil {
			continue
		}
		st := scaleTarget{pos: i}
		merges := map[proto.Message]bool{}
		val := rt.Val
		if fc := val.GetFuncCall(); fc != nil && len(fc.Args) == 2 {
			// round(avg(x), k) or round(a / b, k): the exact quotient,
			// rounded as text.
			if k, ok := roundScale(fc); ok {
				inner := fc.Args[0]
				if avg := inner.GetFuncCall(); avg != nil && outputAvg(avg) && trackable(avg.Args[0], &st, merges, true) {
					st.rounds, st.roundK, st.decimal = true, k, true
					merges[fc], merges[avg] = true, true
				} else if sd := inner.GetFuncCall(); sd != nil && stddevKinds[funcName(sd)] != "" {
					if kind, ok := stddevCall(sd, &st, merges); ok {
						st.rounds, st.roundK, st.decimal, st.stddev = true, k, true, kind
						merges[fc] = true
					}
				} else if e := inner.GetAExpr(); e != nil && isDivision(e) && divisionOp(e) == "/" &&
					trackable(e.Lexpr, &st, merges, false) && trackable(unguarded(e.Rexpr), &st, merges, false) {
					st.rounds, st.roundK, st.divides, st.decimal = true, k, true, true
					merges[fc], merges[e] = true, true
				}
				if st.rounds {
					for m := range merges {
						exempt[m] = true
					}
					out = append(out, st)
					continue
				}
				st, merges = scaleTarget{pos: i}, map[proto.Message]bool{}
			}
		}
		if fc := val.GetFuncCall(); fc != nil && stddevKinds[funcName(fc)] != "" {
			// stddev(x), variance(x): from the exact sums.
			if kind, ok := stddevCall(fc, &st, merges); ok {
				st.stddev, st.decimal = kind, true
				for m := range merges {
					exempt[m] = true
				}
				out = append(out, st)
			}
			continue
		}
		if tc := val.GetTypeCast(); tc != nil {
			// CAST(a / b AS numeric(p,s)): the exact quotient rounded to
			// s, as round(a / b, s), then held to the precision.
			k, ok := castScale(tc)
			p := castPrecision(tc)
			if e := tc.Arg.GetAExpr(); ok && p >= 1 && p <= 38 && k <= p && e != nil && isDivision(e) && divisionOp(e) == "/" &&
				trackable(e.Lexpr, &st, merges, false) && trackable(unguarded(e.Rexpr), &st, merges, false) {
				st.rounds, st.roundK, st.castP, st.divides, st.decimal = true, k, p, true, true
				merges[e] = true
				for m := range merges {
					exempt[m] = true
				}
				out = append(out, st)
				continue
			}
			st, merges = scaleTarget{pos: i}, map[proto.Message]bool{}
		}
		if e := val.GetAExpr(); e != nil && isDivision(e) && divisionOp(e) == "/" {
			// A division, as the whole output: numeric division is
			// exact through the operands' texts (pgdef.FuncNumericDiv).
			if !trackable(e.Lexpr, &st, merges, false) || !trackable(e.Rexpr, &st, merges, false) {
				continue
			}
			st.divides = true
			merges[e] = true
		} else if !trackable(val, &st, merges, false) {
			continue
		} else if len(merges) == 0 && !readsHidden(st.cols, subs) {
			// Nothing merges values of other scales: tracked only if a
			// column is a numeric held as text, whose every value has
			// a scale of its own (plain).
			if val.GetColumnRef() == nil && len(st.cols) > 0 {
				st.plain = true
				out = append(out, st)
			}
			continue
		}
		for m := range merges {
			exempt[m] = true
		}
		out = append(out, st)
	}
	// A hidden scale stands only where the outer SELECT prints its
	// name in a tracked output (or compares, sorts or groups by it):
	// printed anywhere else, or through a *, it would carry DuckDB's
	// scale. Such names lose it (no scale known).
	if len(hiddenMerges) > 0 {
		tracked := map[int]bool{}
		for _, st := range out {
			tracked[st.pos] = true
		}
		averaged := averagedNames(sel)
		for name := range hiddenMerges {
			names := map[string]bool{name: true}
			drop := averaged[name]
			for i, t := range sel.TargetList {
				if isStar(t) || !tracked[i] && hasTrackedRef(withoutCounts(t), names) {
					drop = true
				}
			}
			for _, st := range out {
				if (st.stddev != "" || st.rounds && !st.divides) && hasTrackedRef(sel.TargetList[st.pos], names) {
					drop = true // avg and stddev take Postgres's scale of the sum
				}
			}
			if drop {
				subs[name] = nil
				delete(hiddenMerges, name)
			}
		}
		for _, hm := range hiddenMerges {
			for m := range hm {
				exempt[m] = true
			}
		}
	}
	// GROUP BY by position or by the output name of such a column would
	// group by the rewritten text.
	// A column whose scale is the same on every row (trunc(x, -3)) is
	// grouped alike by its text and by its value, and its rewrite is a
	// function of the grouped expression.
	constant := func(st *scaleTarget) bool {
		if st == nil || st.rounds || st.divides || st.stddev != "" || st.castP != 0 {
			return false
		}
		val := sel.TargetList[st.pos].GetResTarget().GetVal()
		if fc := val.GetFuncCall(); fc != nil {
			if _, ok := setScale(fc); ok {
				return true // round(x, k), trunc(x, k): scale max(k, 0)
			}
		}
		return fixedScale(val) != nil
	}
	for _, g := range sel.GroupClause {
		// By name, GROUP BY means an input column before an output
		// one (as in Postgres): which it is depends on the datasets.
		if st, ok := refersToTracked(g, out, sel); ok && (!constant(st) || g.GetColumnRef() != nil) {
			return nil, nil, nil
		}
		// GROUP BY the tracked expression itself: the rewritten output
		// would no longer match it.
		for i := range out {
			if sameExpr(g, sel.TargetList[out[i].pos].GetResTarget().GetVal()) && !constant(&out[i]) {
				return nil, nil, nil
			}
		}
	}
	for _, sc := range sel.SortClause {
		sb := sc.GetSortBy()
		if sb == nil {
			return nil, nil, nil
		}
		// ORDER BY such a column sorts by its value (rewriteScales puts
		// the expression there), except for a division, which DuckDB
		// would compute in floating point.
		if st, ok := refersToTracked(sb.Node, out, sel); ok && st == nil {
			return nil, nil, nil
		}
	}
	return out, exempt, subs
}

// refersToTracked reports whether n, an item of GROUP BY or ORDER BY,
// refers to a scale-tracked output column by position or output name, and
// which (nil for a literal that is no position, or a name that may mean
// several).
func refersToTracked(n *pg_query.Node, out []scaleTarget, sel *pg_query.SelectStmt) (*scaleTarget, bool) {
	if c := n.GetAConst(); c != nil {
		if _, isInt := c.Val.(*pg_query.A_Const_Ival); !isInt {
			return nil, true
		}
	}
	var found *scaleTarget
	for i := range out {
		if refersTo(n, out[i].pos, sel.TargetList[out[i].pos].GetResTarget()) {
			if found != nil {
				return nil, true
			}
			found = &out[i]
		}
	}
	return found, found != nil
}

// tablesToo is the key of subqueryScales' map that marks tables beside
// the subqueries in FROM.
const tablesToo = "\x00tables"

// fromLeaves returns what sel's FROM reads: how many tables, and the
// subqueries, those written in FROM and those its own CTEs name (a plain,
// non-recursive WITH), through joins. ok is false for anything else: a
// function in FROM, a recursive WITH, a CTE with a column list, a
// MATERIALIZED or data-modifying one, a CTE or subquery reading a CTE (its
// FROM would pass for plain tables), a join merging columns (USING,
// NATURAL) beside subqueries.
func fromLeaves(sel *pg_query.SelectStmt, inherited map[string]*pg_query.CommonTableExpr) (tables int, subs []leafSub, ok bool) {
	ctes := map[string]*pg_query.CommonTableExpr{}
	for name, cte := range inherited {
		ctes[name] = cte
	}
	if w := sel.WithClause; w != nil {
		if w.Recursive {
			return 0, nil, false
		}
		for _, c := range w.Ctes {
			cte := c.GetCommonTableExpr()
			if cte == nil || len(cte.Aliascolnames) > 0 || cte.Ctequery.GetSelectStmt() == nil ||
				cte.Ctematerialized == pg_query.CTEMaterialize_CTEMaterializeAlways {
				return 0, nil, false
			}
			ctes[cte.Ctename] = cte
		}
	}
	readsCTE := func(sub *pg_query.SelectStmt) bool {
		for _, f := range sub.FromClause {
			if namesCTE(f, ctes) {
				return true
			}
		}
		return false
	}
	merging := false
	var leaf func(n *pg_query.Node) bool
	leaf = func(n *pg_query.Node) bool {
		switch v := n.GetNode().(type) {
		case *pg_query.Node_RangeVar:
			if cte, isCTE := ctes[v.RangeVar.Relname]; isCTE && v.RangeVar.Schemaname == "" {
				if readsCTE(cte.Ctequery.GetSelectStmt()) {
					return false
				}
				own := false
				for _, c := range sel.WithClause.GetCtes() {
					own = own || c.GetCommonTableExpr() == cte
				}
				src := ""
				if own {
					src = cte.Ctename // a CTE of this SELECT's WITH: one a hidden scale can be added to
				}
				subs = append(subs, leafSub{rs: &pg_query.RangeSubselect{Subquery: cte.Ctequery, Alias: v.RangeVar.Alias}, cte: src, isCTE: true})
				return true
			}
			tables++
			return true
		case *pg_query.Node_RangeSubselect:
			if sub := v.RangeSubselect.Subquery.GetSelectStmt(); sub == nil || readsCTE(sub) {
				return false
			}
			subs = append(subs, leafSub{rs: v.RangeSubselect})
			return true
		case *pg_query.Node_JoinExpr:
			j := v.JoinExpr
			if len(j.UsingClause) > 0 || j.IsNatural {
				merging = true
			}
			return leaf(j.Larg) && leaf(j.Rarg)
		case *pg_query.Node_RangeFunction:
			// generate_series(...) AS s(d): counted as a table; its
			// column names (functionColumns) track no scale.
			if v.RangeFunction.Lateral || v.RangeFunction.Alias == nil {
				return false
			}
			tables++
			return true
		}
		return false
	}
	for _, f := range sel.FromClause {
		if !leaf(f) {
			return 0, nil, false
		}
	}
	if merging && len(subs) > 0 {
		return 0, nil, false
	}
	return tables, subs, true
}

// functionColumns returns the column names of the functions in sel's FROM
// (through joins): the alias's column names, or the alias itself (the
// name Postgres gives a one-column function's column).
func functionColumns(sel *pg_query.SelectStmt) []string {
	var names []string
	eachFromLeaf(sel, func(n *pg_query.Node) {
		if a := n.GetRangeFunction().GetAlias(); a != nil {
			if cols, ok := stringsOf(a.Colnames); ok && len(cols) > 0 {
				names = append(names, cols...)
			} else {
				names = append(names, a.Aliasname)
			}
		}
	})
	return names
}

// eachFromLeaf calls f with each item of sel's FROM, through joins.
func eachFromLeaf(sel *pg_query.SelectStmt, f func(n *pg_query.Node)) {
	var leaf func(n *pg_query.Node)
	leaf = func(n *pg_query.Node) {
		if j := n.GetJoinExpr(); j != nil {
			leaf(j.Larg)
			leaf(j.Rarg)
			return
		}
		f(n)
	}
	for _, n := range sel.FromClause {
		leaf(n)
	}
}

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

// trackable reports whether the scale of value expression n can be
// tracked, collecting its columns and its CASE and COALESCE nodes.
func trackable(n *pg_query.Node, st *scaleTarget, merges map[proto.Message]bool, inSum bool) bool {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		if len(v.ColumnRef.Fields) > 3 || lastField(v.ColumnRef) == "" {
			return false
		}
		st.cols = append(st.cols, lastField(v.ColumnRef))
		return true
	case *pg_query.Node_AConst:
		switch c := v.AConst.Val.(type) {
		case *pg_query.A_Const_Ival:
			return true
		case *pg_query.A_Const_Fval:
			if _, ok := literalScale(c.Fval.Fval); !ok {
				return false
			}
			st.decimal = true
			return true
		}
		return v.AConst.Isnull
	case *pg_query.Node_AExpr:
		e := v.AExpr
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			// NULLIF(a, 0), as divisors are guarded: a, or NULL.
			c := e.Rexpr.GetAConst()
			if c == nil {
				return false
			}
			if iv, ok := c.Val.(*pg_query.A_Const_Ival); !ok || iv.Ival.Ival != 0 {
				return false
			}
			merges[e] = true
			return trackable(e.Lexpr, st, merges, inSum)
		}
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 {
			return false
		}
		op, _ := stringsOf(e.Name)
		if len(op) != 1 {
			return false
		}
		switch op[0] {
		case "+", "-", "*":
		default:
			return false
		}
		if e.Lexpr == nil { // unary
			return op[0] == "-" && trackable(e.Rexpr, st, merges, inSum)
		}
		return trackable(e.Lexpr, st, merges, inSum) && trackable(e.Rexpr, st, merges, inSum)
	case *pg_query.Node_CaseExpr:
		merges[v.CaseExpr] = true
		for _, w := range v.CaseExpr.Args {
			cw := w.GetCaseWhen()
			if cw == nil || cw.Result == nil || !trackable(cw.Result, st, merges, inSum) {
				return false
			}
		}
		return v.CaseExpr.Defresult == nil || trackable(v.CaseExpr.Defresult, st, merges, inSum)
	case *pg_query.Node_CoalesceExpr:
		merges[v.CoalesceExpr] = true
		for _, a := range v.CoalesceExpr.Args {
			if !trackable(a, st, merges, inSum) {
				return false
			}
		}
		return len(v.CoalesceExpr.Args) > 0
	case *pg_query.Node_MinMaxExpr:
		// GREATEST(a, b), LEAST(a, b): the scale of the value chosen.
		merges[v.MinMaxExpr] = true
		return len(v.MinMaxExpr.Args) == 2 && trackable(v.MinMaxExpr.Args[0], st, merges, inSum) &&
			trackable(v.MinMaxExpr.Args[1], st, merges, inSum)
	case *pg_query.Node_TypeCast:
		if unconstrainedNumeric(v.TypeCast) {
			// CAST(a AS numeric): the same value and scale for an
			// integer or numeric a; text is read as numeric_in reads
			// it (pgdef.FuncNumericIn). The rewrite replaces the cast
			// (numericCasts), which DuckDB would make a DECIMAL(18,3).
			merges[v.TypeCast] = true
			st.decimal = true
			if textExpr(v.TypeCast.Arg) {
				return true
			}
			if cr := v.TypeCast.Arg.GetColumnRef(); cr != nil && lastField(cr) != "" && len(cr.Fields) <= 3 {
				st.castCols = append(st.castCols, lastField(cr))
				return true
			}
			return trackable(v.TypeCast.Arg, st, merges, inSum)
		}
		// CAST(a AS numeric(p,s)): rounded half away from zero to s in
		// both engines (an overflow is an error in both).
		if _, ok := castScale(v.TypeCast); !ok {
			return false
		}
		st.decimal = true
		return trackable(v.TypeCast.Arg, st, merges, inSum)
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		if funcName(fc) == "count" && len(fc.Funcname) == 1 && !fc.AggWithinGroup {
			return true // a bigint: scale 0
		}
		if name := funcName(fc); (name == "lag" || name == "lead") && fc.Over != nil && len(fc.Funcname) == 1 &&
			len(fc.Args) >= 1 && len(fc.Args) <= 3 && !fc.AggStar && !fc.AggDistinct {
			// lag(x, k, d) OVER w: x of another row, or d where there is
			// none; k a literal.
			if len(fc.Args) >= 2 {
				if c := fc.Args[1].GetAConst(); c == nil {
					return false
				} else if _, isInt := c.Val.(*pg_query.A_Const_Ival); !isInt {
					return false
				}
			}
			merges[fc] = true
			if !trackable(fc.Args[0], st, merges, false) {
				return false
			}
			return len(fc.Args) < 3 || trackable(fc.Args[2], st, merges, false)
		}
		if funcName(fc) == "sum" && fc.Over != nil && len(fc.Funcname) == 1 && len(fc.Args) == 1 && !fc.AggStar &&
			!fc.AggDistinct && len(fc.AggOrder) == 0 && !fc.AggWithinGroup && !fc.FuncVariadic {
			// sum(...) OVER (...): its argument may hold aggregates
			// (computed before the window); the scale is the greatest
			// over the window.
			return st.summing(func() bool { return trackable(fc.Args[0], st, merges, false) })
		}
		if _, ok := setScale(fc); ok {
			merges[fc] = true // the scale changes here: track it
			st.decimal = true // round(integer, k) is a numeric
			return trackable(fc.Args[0], st, merges, inSum)
		}
		if inSum || funcName(fc) != "sum" || len(fc.Funcname) != 1 || len(fc.Args) != 1 || fc.AggStar || fc.AggDistinct ||
			fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggWithinGroup || fc.FuncVariadic {
			return false
		}
		return st.summing(func() bool { return trackable(fc.Args[0], st, merges, true) })
	}
	return false
}

// summing runs track, recording the columns it adds as summed.
func (st *scaleTarget) summing(track func() bool) bool {
	from := len(st.cols)
	ok := track()
	st.summed = append(st.summed, st.cols[from:]...)
	return ok
}

// bigintName reports whether a name may stand for a bigint: a dataset
// column of that type, or a FROM subquery's output over one. Its sum is a
// numeric in Postgres (int8_sum), a HUGEINT that divides as an integer in
// DuckDB.
func bigintName(r resolution, name string, subs map[string]*staticScale) bool {
	isInt8 := func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDInt8 }
	if f := subs[name]; f != nil {
		var cols func(s *staticScale) bool
		cols = func(s *staticScale) bool {
			if s.op == 'c' {
				found, _ := columnsNamed(r, s.col, nil)
				return found && !columnsAre(r, s.col, func(c catalog.ColumnInfo) bool { return !isInt8(c) })
			}
			for _, a := range s.args {
				if cols(a) {
					return true
				}
			}
			return false
		}
		return cols(f)
	}
	found, _ := columnsNamed(r, name, nil)
	return found && !columnsAre(r, name, func(c catalog.ColumnInfo) bool { return !isInt8(c) })
}

// unconstrainedNumeric reports whether tc casts to numeric without a
// precision and scale.
func unconstrainedNumeric(tc *pg_query.TypeCast) bool {
	return castTarget(tc, numericTypeNames) && len(tc.TypeName.Typmods) == 0
}

// numericCasts replaces, in the tracked outputs at pos of sel, each
// CAST(a AS numeric): by pgdef.FuncNumericIn(a) when a is text, by a
// itself otherwise (its value and scale are a's). It runs before the
// other rewrites, which may change how a text a is written.
func numericCasts(sel *pg_query.SelectStmt, targets []scaleTarget, floats map[string]bool) {
	if sel == nil {
		return
	}
	for _, st := range targets {
		if st.pos >= len(sel.TargetList) {
			continue
		}
		rt := sel.TargetList[st.pos].GetResTarget()
		if rt == nil || rt.Val == nil {
			continue
		}
		walk(rt.Val, numericCastRewriter{floats})
	}
}

type numericCastRewriter struct{ floats map[string]bool }

func (nr numericCastRewriter) enter(m proto.Message, w *walker) {
	tc, ok := m.(*pg_query.TypeCast)
	n := w.node()
	if !ok || n == nil || !unconstrainedNumeric(tc) || tc.Arg == nil {
		return
	}
	arg := tc.Arg
	if cr := arg.GetColumnRef(); cr != nil && nr.floats[lastField(cr)] {
		arg = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncFloat8NumericText)}, []*pg_query.Node{arg}, -1)
	} else if !textExpr(arg) {
		n.Node = tc.Arg.Node
		return
	}
	n.Node = &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
		Funcname: []*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncNumericIn)},
		Args:     []*pg_query.Node{arg},
		Location: -1,
	}}
}

// castScale is s of a cast to numeric(p,s) or decimal(p,s).
func castScale(tc *pg_query.TypeCast) (int, bool) {
	if tc.TypeName == nil || len(tc.TypeName.Typmods) != 2 || tc.TypeName.ArrayBounds != nil {
		return 0, false
	}
	names, ok := stringsOf(tc.TypeName.Names)
	if !ok || len(names) == 0 {
		return 0, false
	}
	switch strings.ToLower(names[len(names)-1]) {
	case "numeric", "decimal":
	default:
		return 0, false
	}
	c := tc.TypeName.Typmods[1].GetAConst()
	if c == nil {
		return 0, false
	}
	iv, ok := c.Val.(*pg_query.A_Const_Ival)
	if !ok || iv.Ival.Ival < 0 {
		return 0, false
	}
	return int(iv.Ival.Ival), true
}

// castPrecision is p of a cast to numeric(p,s), or 0.
func castPrecision(tc *pg_query.TypeCast) int {
	if tc.TypeName == nil || len(tc.TypeName.Typmods) != 2 {
		return 0
	}
	c := tc.TypeName.Typmods[0].GetAConst()
	if c == nil {
		return 0
	}
	iv, ok := c.Val.(*pg_query.A_Const_Ival)
	if !ok {
		return 0
	}
	return int(iv.Ival.Ival)
}

// roundScale is k of round(a, k) (0 for round(a)), for a literal k >= 0:
// Postgres's round gives scale k, rounding half away from zero, as DuckDB
// does for decimals.
func roundScale(fc *pg_query.FuncCall) (int, bool) {
	k, ok := digitsArg(fc, "round")
	return k, ok && k >= 0
}

// setScale is the display scale of round(a, k) or trunc(a, k) (and of
// round(a), trunc(a)) for a literal k: max(k, 0), whatever a's
// (numeric_round, numeric_trunc); DuckDB rounds decimals half away from
// zero and truncates toward zero as Postgres does.
func setScale(fc *pg_query.FuncCall) (int, bool) {
	k, ok := digitsArg(fc, "round")
	if !ok {
		k, ok = digitsArg(fc, "trunc")
	}
	return max(k, 0), ok
}

// digitsArg is the literal k, between -30 and 30, of a plain call
// name(a, k), or 0 for name(a).
func digitsArg(fc *pg_query.FuncCall, name string) (int, bool) {
	if funcName(fc) != name || fc.Over != nil || fc.AggStar || fc.AggDistinct || len(fc.Args) == 0 || len(fc.Args) > 2 {
		return 0, false
	}
	if len(fc.Args) == 1 {
		return 0, true
	}
	c := fc.Args[1].GetAConst()
	if c == nil {
		return 0, false
	}
	iv, ok := c.Val.(*pg_query.A_Const_Ival)
	if !ok || iv.Ival.Ival < -30 || iv.Ival.Ival > 30 {
		return 0, false
	}
	return int(iv.Ival.Ival), true
}

// literalScale is the display scale of a decimal literal as written.
func literalScale(s string) (int, bool) {
	if strings.ContainsAny(s, "eE") {
		return 0, false
	}
	_, frac, _ := strings.Cut(s, ".")
	return len(frac), true
}

// scaleExpr builds the DuckDB expression of the scale of n, given the
// scale of each column name. n is the rewritten value expression (its
// parts are cloned into the result).
func scaleExpr(n *pg_query.Node, colScale map[string]int) (*pg_query.Node, bool) {
	intConst := func(i int) *pg_query.Node { return pg_query.MakeAConstIntNode(int64(i), -1) }
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		s, ok := colScale[lastField(v.ColumnRef)]
		if ok && s == textScaleOf {
			// heldNumerics reads every such reference through its
			// guard (the TypeCast case below) before this runs.
			return nil, false
		}
		if ok && s == hiddenScaleOf {
			// The subquery's column of its scale, as the name is qualified.
			cr := proto.Clone(v.ColumnRef).(*pg_query.ColumnRef)
			cr.Fields[len(cr.Fields)-1] = pg_query.MakeStrNode(hiddenColumn(lastField(v.ColumnRef)))
			return &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: cr}}, true
		}
		return intConst(s), ok
	case *pg_query.Node_AConst:
		switch c := v.AConst.Val.(type) {
		case *pg_query.A_Const_Ival:
			return intConst(0), true
		case *pg_query.A_Const_Fval:
			s, ok := literalScale(c.Fval.Fval)
			return intConst(s), ok
		}
		if v.AConst.Isnull {
			return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true}}}, true
		}
	case *pg_query.Node_AExpr:
		e := v.AExpr
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return scaleExpr(e.Lexpr, colScale) // NULL when the value is
		}
		op, _ := stringsOf(e.Name)
		if e.Lexpr == nil {
			return scaleExpr(e.Rexpr, colScale)
		}
		l, ok1 := scaleExpr(e.Lexpr, colScale)
		r, ok2 := scaleExpr(e.Rexpr, colScale)
		if !ok1 || !ok2 {
			return nil, false
		}
		if len(op) == 1 && op[0] == "*" {
			return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("+")}, l, r, -1), true
		}
		return &pg_query.Node{Node: &pg_query.Node_MinMaxExpr{MinMaxExpr: &pg_query.MinMaxExpr{
			Op: pg_query.MinMaxOp_IS_GREATEST, Args: []*pg_query.Node{l, r}, Location: -1}}}, true
	case *pg_query.Node_CaseExpr:
		c := v.CaseExpr
		out := &pg_query.CaseExpr{Location: -1}
		if c.Arg != nil {
			out.Arg = proto.Clone(c.Arg).(*pg_query.Node)
		}
		for _, w := range c.Args {
			cw := w.GetCaseWhen()
			r, ok := scaleExpr(cw.Result, colScale)
			if !ok {
				return nil, false
			}
			out.Args = append(out.Args, &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
				Expr: proto.Clone(cw.Expr).(*pg_query.Node), Result: r, Location: -1}}})
		}
		if c.Defresult != nil {
			d, ok := scaleExpr(c.Defresult, colScale)
			if !ok {
				return nil, false
			}
			out.Defresult = d
		}
		return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: out}}, true
	case *pg_query.Node_CoalesceExpr:
		out := &pg_query.CaseExpr{Location: -1}
		args := v.CoalesceExpr.Args
		for i, a := range args {
			s, ok := scaleExpr(a, colScale)
			if !ok {
				return nil, false
			}
			if i == len(args)-1 {
				out.Defresult = s
				break
			}
			out.Args = append(out.Args, &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
				Expr: notNull(a), Result: s, Location: -1}}})
		}
		return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: out}}, true
	case *pg_query.Node_MinMaxExpr:
		// Postgres keeps the first of equal values and skips NULLs
		// (ExecEvalMinMax): the scale of a unless b is NULL or wins.
		m := v.MinMaxExpr
		if len(m.Args) != 2 {
			return nil, false
		}
		a, b := m.Args[0], m.Args[1]
		sa, ok1 := scaleExpr(a, colScale)
		sb, ok2 := scaleExpr(b, colScale)
		if !ok1 || !ok2 {
			return nil, false
		}
		wins := "<"
		if m.Op == pg_query.MinMaxOp_IS_LEAST {
			wins = ">"
		}
		bWins := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(wins)},
			proto.Clone(a).(*pg_query.Node), proto.Clone(b).(*pg_query.Node), -1)
		when := func(cond, result *pg_query.Node) *pg_query.Node {
			return &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{Expr: cond, Result: result, Location: -1}}}
		}
		isNull := func(n *pg_query.Node) *pg_query.Node {
			return &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
				Arg: proto.Clone(n).(*pg_query.Node), Nulltesttype: pg_query.NullTestType_IS_NULL, Location: -1}}}
		}
		return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
			Args:      []*pg_query.Node{when(isNull(a), sb), when(isNull(b), sa), when(bWins, sb)},
			Defresult: sa,
			Location:  -1,
		}}}, true
	case *pg_query.Node_TypeCast:
		if text := heldText(v.TypeCast); text != nil {
			// A numeric held as text, read by value: its text's scale.
			return fnCall(pgdef.FuncNumericTextScale, proto.Clone(text).(*pg_query.Node)), true
		}
		s, ok := castScale(v.TypeCast)
		return intConst(s), ok
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		if funcName(fc) == "count" {
			return intConst(0), true
		}
		if name := funcName(fc); (name == "lag" || name == "lead") && fc.Over != nil {
			// The scale of x on the row it comes from, or d's where
			// there is no such row (lead(1, k, 0) is 0 there).
			sx, ok := scaleExpr(fc.Args[0], colScale)
			if !ok {
				return nil, false
			}
			shift := func(args ...*pg_query.Node) *pg_query.Node {
				n := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, args, -1)
				n.GetFuncCall().Over = proto.Clone(fc.Over).(*pg_query.WindowDef)
				return n
			}
			k := pg_query.MakeAConstIntNode(1, -1)
			if len(fc.Args) >= 2 {
				k = proto.Clone(fc.Args[1]).(*pg_query.Node)
			}
			shifted := shift(sx, k)
			if len(fc.Args) < 3 {
				return shifted, true
			}
			sd, ok := scaleExpr(fc.Args[2], colScale)
			if !ok {
				return nil, false
			}
			exists := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("=")},
				shift(pg_query.MakeAConstIntNode(1, -1), proto.Clone(k).(*pg_query.Node), pg_query.MakeAConstIntNode(0, -1)),
				pg_query.MakeAConstIntNode(1, -1), -1)
			return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
				Args: []*pg_query.Node{{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
					Expr: exists, Result: shifted, Location: -1}}}},
				Defresult: sd, Location: -1,
			}}}, true
		}
		if funcName(fc) == pgdef.FuncNumericIn && len(fc.Args) == 1 {
			return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncNumericInScale)},
				[]*pg_query.Node{proto.Clone(fc.Args[0]).(*pg_query.Node)}, -1), true
		}
		if s, ok := setScale(fc); ok {
			return intConst(s), true
		}
		s, ok := scaleExpr(fc.Args[0], colScale)
		if !ok {
			return nil, false
		}
		perRow := &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
			Args: []*pg_query.Node{{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
				Expr: notNull(fc.Args[0]), Result: s, Location: -1}}}},
			Location: -1,
		}}}
		max := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("max")}, []*pg_query.Node{perRow}, -1)
		if fc.AggFilter != nil {
			max.GetFuncCall().AggFilter = proto.Clone(fc.AggFilter).(*pg_query.Node)
		}
		if fc.Over != nil {
			max.GetFuncCall().Over = proto.Clone(fc.Over).(*pg_query.WindowDef)
		}
		return max, true
	}
	return nil, false
}

// notNull is "n IS NOT NULL" over a clone of n.
func notNull(n *pg_query.Node) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
		Arg: proto.Clone(n).(*pg_query.Node), Nulltesttype: pg_query.NullTestType_IS_NOT_NULL, Location: -1}}}
}

// scalePlan is planScales' answer for one resolution, computed once per
// Plan (resolution.scale) and used by the hazard check, the rewrite and
// Decision.NumericText.
type scalePlan struct {
	pos      []int // positions of the rewritten outputs, in the tracked SELECT
	out      []int // the same in the statement's output (passScale maps them)
	colScale map[string]int
	floats   map[string]bool // double precision columns cast to numeric
	hidden   map[string]hiddenPlan
	ok       bool
}

// planScales returns the scale-tracked output columns to rewrite for
// resolution r: those with a decimal literal or a numeric column (the
// others are integers, which need nothing). ok is false when a column of a
// candidate is not a numeric with a scale or an integer of the datasets:
// the merges then count as in numericscale.go.
func planScales(a *analysis, r resolution) scalePlan {
	targets, subs := a.scaleTargets, a.scaleSubs
	if a.pass != nil {
		targets, subs = a.pass.targets, a.pass.subs
	}
	if len(targets) == 0 {
		return scalePlan{}
	}
	plan := planScalesOf(targets, subs, r)
	plan.out = plan.pos
	if a.pass != nil && plan.ok {
		plan.out = nil
		for _, p := range plan.pos {
			if o, ok := a.pass.outer[p]; ok {
				plan.out = append(plan.out, o)
			}
		}
	}
	return plan
}

// planScalesOf is planScales for the targets of one SELECT and its FROM
// subqueries' scales.
func planScalesOf(targets []scaleTarget, scaleSubs map[string]*staticScale, r resolution) scalePlan {
	colScale := map[string]int{}
	numeric := map[string]bool{}
	var floats map[string]bool
	var hidden map[string]hiddenPlan
	var plain []scaleTarget
	for _, st := range targets {
		if st.plain {
			plain = append(plain, st)
			continue
		}
		cols := st.cols
		for _, name := range st.castCols {
			if scaleSubs[name] == nil && columnsAre(r, name, func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDFloat8 }) {
				if _, named := scaleSubs[name]; !named {
					if floats == nil {
						floats = map[string]bool{}
					}
					floats[name] = true
					continue
				}
			}
			cols = append(cols, name) // an integer or numeric: its own scale
		}
		for _, name := range cols {
			if _, done := colScale[name]; done {
				continue
			}
			var s int
			var isNum, found bool
			if scaleSubs != nil {
				f, named := scaleSubs[name]
				_, star := scaleSubs[starColumns]
				_, mixed := scaleSubs[tablesToo]
				switch {
				case named && f == nil:
					return scalePlan{} // ambiguous, or no fixed scale
				case named && f.op == 'h' && !(star || mixed && anyDatasetHasColumn(r, name)):
					inner := planScalesOf([]scaleTarget{f.hidden.st}, nil, r)
					if !inner.ok {
						return scalePlan{}
					}
					if hidden == nil {
						hidden = map[string]hiddenPlan{}
					}
					hidden[name] = hiddenPlan{h: f.hidden, colScale: inner.colScale}
					colScale[name], numeric[name] = hiddenScaleOf, true
					continue
				case named && (star || mixed && anyDatasetHasColumn(r, name)):
					return scalePlan{} // may clash with a column of the * or of a table
				case named:
					s, isNum, found = f.eval(func(c string) (int, bool, bool) { return datasetColumnScale(r, c) })
				case star && mixed:
					return scalePlan{} // a table's column, or the *'s?
				case star, mixed:
					s, isNum, found = datasetColumnScaleOrText(r, name)
				}
			} else {
				s, isNum, found = datasetColumnScaleOrText(r, name)
			}
			if !found {
				return scalePlan{}
			}
			colScale[name], numeric[name] = s, isNum
		}
	}
	var pos []int
	for _, st := range targets {
		if st.plain {
			continue
		}
		involved := st.decimal
		for _, c := range st.cols {
			involved = involved || numeric[c]
		}
		for _, c := range st.summed {
			involved = involved || bigintName(r, c, scaleSubs)
		}
		for _, c := range st.cols {
			if f := scaleSubs[c]; f != nil && f.sum {
				involved = involved || bigintName(r, c, scaleSubs)
			}
		}
		if involved {
			pos = append(pos, st.pos)
		}
	}
	pos = append(pos, plainTextTargets(plain, scaleSubs, r, colScale)...)
	slices.Sort(pos)
	return scalePlan{pos: pos, colScale: colScale, floats: floats, hidden: hidden, ok: true}
}

// plainTextTargets returns the positions of the plain targets (they merge
// nothing) that read a numeric held as text, whose every column's scale
// is known, adding those scales to colScale. The others are left as they
// are: their values print as DuckDB holds them.
func plainTextTargets(plain []scaleTarget, scaleSubs map[string]*staticScale, r resolution, colScale map[string]int) []int {
	if scaleSubs != nil {
		return nil // subqueries' columns: not followed here
	}
	var pos []int
	for _, st := range plain {
		if len(st.castCols) > 0 {
			continue
		}
		scales := map[string]int{}
		text, known := false, true
		for _, name := range st.cols {
			s, _, found := datasetColumnScaleOrText(r, name)
			if !found {
				known = false
				break
			}
			scales[name] = s
			text = text || s == textScaleOf
		}
		if !known || !text {
			continue
		}
		for name, s := range scales {
			if prev, ok := colScale[name]; ok && prev != s {
				known = false
			}
		}
		if !known {
			continue
		}
		maps.Copy(colScale, scales)
		pos = append(pos, st.pos)
	}
	return pos
}

// hiddenPlan is a hidden scale of a plan, with the scales of the columns
// its subquery output reads.
type hiddenPlan struct {
	h        *hiddenScale
	colScale map[string]int
}

// datasetColumnScaleOrText is datasetColumnScale, or textScaleOf for a
// numeric held as text that is read by value (every column of the name).
func datasetColumnScaleOrText(r resolution, name string) (scale int, numeric, ok bool) {
	if c, held := r.textNums[name]; held && c.ValueScale != nil && !anyColumn(r, name, notNumericText) {
		return textScaleOf, true, true
	}
	return datasetColumnScale(r, name)
}

// datasetColumnScale is the scale of the datasets' column of that name:
// a numeric's declared scale, 0 for integers. ok is false for another
// type, no such column, or columns of that name with different scales.
func datasetColumnScale(r resolution, name string) (scale int, numeric, ok bool) {
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if c.Name != name {
				continue
			}
			s, n := 0, false
			switch c.TypeOID {
			case pgdef.OIDNumeric:
				cs, held := numericColumnScale(c)
				if !held {
					return 0, false, false
				}
				s, n = cs, true
			case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8:
			default:
				return 0, false, false
			}
			if ok && (s != scale || n != numeric) {
				return 0, false, false
			}
			scale, numeric, ok = s, n, true
		}
	}
	return scale, numeric, ok
}

// addHiddenScales adds to the subqueries of sel (the rewritten tracked
// SELECT) the columns that carry the hidden scales of the plan.
func addHiddenScales(sel *pg_query.SelectStmt, hidden map[string]hiddenPlan) error {
	for name, hp := range hidden {
		sub := findSubquery(sel, hp.h)
		if sub == nil || hp.h.pos >= len(sub.TargetList) {
			return errRewrite
		}
		if hasOutput(sub, hiddenColumn(name)) {
			continue // a CTE read twice
		}
		rt := sub.TargetList[hp.h.pos].GetResTarget()
		if rt == nil || rt.Val == nil {
			return errRewrite
		}
		scale, ok := scaleExpr(rt.Val, hp.colScale)
		if !ok {
			return errRewrite
		}
		sub.TargetList = append(sub.TargetList, &pg_query.Node{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{
			Name: hiddenColumn(name), Val: scale, Location: -1}}})
	}
	return nil
}

// hasOutput reports whether sel has an output column of that name.
func hasOutput(sel *pg_query.SelectStmt, name string) bool {
	for _, t := range sel.TargetList {
		if t.GetResTarget().GetName() == name {
			return true
		}
	}
	return false
}

// findSubquery returns the SELECT of h's CTE in sel's WITH, or of the FROM
// subquery of h's alias.
func findSubquery(sel *pg_query.SelectStmt, h *hiddenScale) *pg_query.SelectStmt {
	if h.cte != "" {
		for _, c := range sel.WithClause.GetCtes() {
			if cte := c.GetCommonTableExpr(); cte != nil && cte.Ctename == h.cte {
				return cte.Ctequery.GetSelectStmt()
			}
		}
		return nil
	}
	var found *pg_query.SelectStmt
	eachFromLeaf(sel, func(n *pg_query.Node) {
		if rs := n.GetRangeSubselect(); rs != nil && rs.Alias != nil && rs.Alias.Aliasname == h.alias {
			found = rs.Subquery.GetSelectStmt()
		}
	})
	return found
}

// rewriteScales wraps the output columns of sel (the rewritten statement)
// at pos in pgdef.FuncNumericScale.
func rewriteScales(sel *pg_query.SelectStmt, pos []int, colScale map[string]int, targets []scaleTarget) error {
	for _, i := range pos {
		if sel == nil || i >= len(sel.TargetList) {
			return errRewrite
		}
		rt := sel.TargetList[i].GetResTarget()
		if rt == nil || rt.Val == nil {
			return errRewrite
		}
		// ORDER BY this column sorts by its value, not by its text.
		var sorts []*pg_query.SortBy
		for _, sc := range sel.SortClause {
			if sb := sc.GetSortBy(); sb != nil && refersTo(sb.Node, i, rt) {
				sorts = append(sorts, sb)
			}
		}
		if st := targetAt(targets, i); st != nil && st.stddev != "" && !st.rounds {
			fc := rt.Val.GetFuncCall()
			if fc == nil {
				return errRewrite
			}
			v, err := stddevExpr(fc, st.stddev, colScale)
			if err != nil {
				return err
			}
			rt.Val = v
			sortByKey(sorts, rt.Val)
			continue
		}
		if st := targetAt(targets, i); st != nil && st.rounds && st.castP > 0 {
			tc := rt.Val.GetTypeCast()
			if tc == nil || tc.Arg.GetAExpr() == nil || !isDivision(tc.Arg.GetAExpr()) {
				return errRewrite
			}
			exact, err := exactQuotient(tc.Arg.GetAExpr(), colScale)
			if err != nil {
				return err
			}
			rounded := fnCall(pgdef.FuncNumericRound, exact, pg_query.MakeAConstIntNode(int64(st.roundK), -1))
			// Through DECIMAL(p,s), which fails where numeric(p,s)
			// overflows, back to its text (s digits, as Postgres's).
			rt.Val = textCast(castTo(rounded, "decimal", int64(st.castP), int64(st.roundK)))
			sortByKey(sorts, rt.Val)
			continue
		}
		if st := targetAt(targets, i); st != nil && st.rounds {
			fc := rt.Val.GetFuncCall()
			if fc == nil || len(fc.Args) != 2 {
				return errRewrite
			}
			var exact *pg_query.Node
			if sd := fc.Args[0].GetFuncCall(); st.stddev != "" && sd != nil {
				var err error
				if exact, err = stddevExpr(sd, st.stddev, colScale); err != nil {
					return err
				}
			} else if avg := fc.Args[0].GetFuncCall(); avg != nil && outputAvg(avg) {
				exact = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncNumericAvg)}, avgArgs(avg), -1)
			} else if e := fc.Args[0].GetAExpr(); e != nil && isDivision(e) {
				var err error
				if exact, err = exactQuotient(e, colScale); err != nil {
					return err
				}
			} else {
				return errRewrite
			}
			rt.Val = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncNumericRound)},
				[]*pg_query.Node{exact, pg_query.MakeAConstIntNode(int64(st.roundK), -1)}, -1)
			sortByKey(sorts, rt.Val)
			continue
		}
		if e := rt.Val.GetAExpr(); e != nil && isDivision(e) && divisionOp(e) == "/" {
			// a / b: both operands as Postgres's texts, divided exactly.
			v, err := exactQuotient(e, colScale)
			if err != nil {
				return err
			}
			rt.Val = v
			sortByKey(sorts, rt.Val)
			continue
		}
		for _, sb := range sorts {
			sb.Node = proto.Clone(rt.Val).(*pg_query.Node)
		}
		// GROUP BY its position (a column of one scale,
		// scaleCandidates) groups by its value, of which the text is a
		// function.
		for gi, g := range sel.GroupClause {
			if g.GetAConst() != nil && refersTo(g, i, rt) {
				sel.GroupClause[gi] = proto.Clone(rt.Val).(*pg_query.Node)
			}
		}
		v, err := scaledText(rt.Val, colScale)
		if err != nil {
			return err
		}
		rt.Val = v
	}
	return nil
}

// exactQuotient is pgdef.FuncNumericDiv of the operands of division e as
// Postgres's texts (scaledText). The divisor may carry the division-by-
// zero guard (guardDivisor): the function raises on zero itself.
func exactQuotient(e *pg_query.A_Expr, colScale map[string]int) (*pg_query.Node, error) {
	l, err := scaledText(e.Lexpr, colScale)
	if err != nil {
		return nil, err
	}
	r, err := scaledText(unguarded(e.Rexpr), colScale)
	if err != nil {
		return nil, err
	}
	return fnCall(pgdef.FuncNumericDiv, l, r), nil
}

// sortByKey makes the ORDER BY items sort by pgdef.FuncNumericSortkey of
// the exact text val (a quotient or a rounded value, which DuckDB could
// only compute in floating point).
func sortByKey(sorts []*pg_query.SortBy, val *pg_query.Node) {
	for _, sb := range sorts {
		sb.Node = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncNumericSortkey)},
			[]*pg_query.Node{proto.Clone(val).(*pg_query.Node)}, -1)
	}
}

// refersTo reports whether a GROUP BY or ORDER BY item names the output
// column rt at position i (from 0), by position or output name.
func refersTo(n *pg_query.Node, i int, rt *pg_query.ResTarget) bool {
	if c := n.GetAConst(); c != nil {
		iv, isInt := c.Val.(*pg_query.A_Const_Ival)
		return isInt && int64(iv.Ival.Ival) == int64(i)+1
	}
	cr := n.GetColumnRef()
	if cr == nil || len(cr.Fields) != 1 {
		return false
	}
	name := lastField(cr)
	return rt.Name == name || rt.Name == "" && outputName(rt.Val) == name
}

// scaledText is pgdef.FuncNumericScale(CAST(n AS text), scale of n).
func scaledText(n *pg_query.Node, colScale map[string]int) (*pg_query.Node, error) {
	scale, ok := scaleExpr(n, colScale)
	if !ok {
		return nil, errRewrite
	}
	return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncNumericScale)}, []*pg_query.Node{textCast(n), scale}, -1), nil
}

// isZeroGuard reports whether c is guardDivisor's CASE WHEN b = 0 THEN
// error(...) ELSE b END.
func isZeroGuard(c *pg_query.CaseExpr) bool {
	cw := c.Args[0].GetCaseWhen()
	if cw == nil || cw.Result == nil {
		return false
	}
	fc := cw.Result.GetFuncCall()
	return fc != nil && funcName(fc) == "error"
}

// outputName is a narrow form of figureColname (Postgres's
// FigureColname): a column's name, a function's name, "case",
// "coalesce", or "?column?". Scale tracking matches GROUP BY and ORDER BY
// names against it; with FigureColname's full naming, GROUP BY b would
// match an output b::numeric, which Postgres reads as the input column b
// (GROUP BY prefers input columns), and such statements would be
// refused. Resolving GROUP BY to input columns first and ORDER BY to
// output names first, as Postgres does, would let both use
// figureColname; until then the narrow naming stays as it was.
func outputName(n *pg_query.Node) string {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		return lastField(v.ColumnRef)
	case *pg_query.Node_FuncCall:
		return funcName(v.FuncCall)
	case *pg_query.Node_CaseExpr:
		return "case"
	case *pg_query.Node_CoalesceExpr:
		return "coalesce"
	}
	return "?column?"
}

// sameExpr reports whether two expressions are the same but for where
// they stand in the text.
func sameExpr(a, b *pg_query.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := proto.Clone(a), proto.Clone(b)
	clearLocations(x.ProtoReflect())
	clearLocations(y.ProtoReflect())
	return proto.Equal(x, y)
}

// clearLocations zeroes every "location" field under m.
func clearLocations(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Name() == "location" && fd.Kind() == protoreflect.Int32Kind:
			m.Clear(fd)
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				clearLocations(l.Get(i).Message())
			}
		case !fd.IsList() && !fd.IsMap() && fd.Kind() == protoreflect.MessageKind:
			clearLocations(v.Message())
		}
		return true
	})
}
