package planner

import (
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
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
