package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Ordering and comparing intervals. Postgres compares two intervals by
// one 128-bit span, months × 30 days + days + time (interval_cmp_value):
// '1 mon -1 day' equals '29 days', and '1 mon -4 days 04:00:00' (26 days
// 4 hours) orders before '27 days 04:00:00'. DuckDB carries days and
// microseconds into months and days with truncation and compares the
// fields in turn, which agrees for intervals whose fields share a sign
// and not otherwise: there, 1 mon -1 day is not 29 days, and 1 mon -4
// days 04:00:00 orders after 27 days 04:00:00.
//
// So where intervals are ordered or compared, the rewrite makes DuckDB
// order or compare their spans, pgdef.FuncIntervalKey (the accelerator's
// pgaccel_interval_key, a HUGEINT), and keeps returning the intervals
// themselves:
//
//   - ORDER BY x (by position, name or expression; of a set operation as
//     a subquery), a window's ORDER BY and PARTITION BY, an aggregate's
//     ORDER BY, DISTINCT ON: by pgaccel_interval_key(x);
//   - a op b (=, <>, <, <=, >, >=), IS [NOT] DISTINCT FROM, [NOT]
//     BETWEEN [SYMMETRIC], [NOT] IN (list), CASE x WHEN y, NULLIF(a, b):
//     of the keys (a string literal or parameter beside an interval
//     taken as an interval, as Postgres takes it);
//   - min(x), max(x): arg_min(x, key(x)), arg_max(x, key(x)).
//
// Where the rewrite cannot make DuckDB's equality Postgres's — GROUP BY,
// SELECT DISTINCT, UNION, INTERSECT and EXCEPT, JOIN ... USING and
// NATURAL JOIN, an aggregate's DISTINCT, mode() and percentile_*(),
// GREATEST and LEAST, IN (subquery), = ANY, row comparisons, arrays of
// intervals — of a value that may be an interval, and where it cannot
// tell whether a value ordered or compared is an interval, the
// statement goes to the origin.

// pgdef.FuncIntervalKey is pgdef.FuncIntervalKey.

// intervalKey is pgaccel_interval_key(n), n a string literal or a
// parameter cast to interval.
func intervalKey(n *pg_query.Node) *pg_query.Node {
	if isStringConst(n) || n.GetParamRef() != nil {
		// pg_catalog.interval, which the deparser prints as interval.
		tn := &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode("interval")}, Typemod: -1, Location: -1}
		n = &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: n, TypeName: tn, Location: -1}}}
	}
	return fnCall(pgdef.FuncIntervalKey, n)
}

const intervalWhy = " of values that may be intervals (DuckDB compares intervals whose fields have mixed signs otherwise than Postgres)"

// intervalRefusal refuses what (a GROUP BY, ...) of n, which may be an
// interval.
func intervalRefusal(what string, n *pg_query.Node) error {
	return refuse(what + " " + exprText(n) + ", which may be an interval (DuckDB compares intervals whose fields have mixed signs otherwise than Postgres)")
}

// orderIntervals rewrites the rewritten statement root as above, or
// refuses it.
func orderIntervals(root *pg_query.Node, a *analysis, r resolution, unquote func(string) string) error {
	kinds := a.kindsIn(root, r, unquote)
	var c intervalSites
	walk(root, &c)
	if !a.mayHoldIntervals(r) && !c.sources(kinds) {
		return nil // no value of the statement can be an interval
	}
	// Innermost first: a copy made below (NULLIF, min) then holds its
	// operands' rewrites.
	for i := len(c.nodes) - 1; i >= 0; i-- {
		if err := rewriteIntervalSite(c.nodes[i], kinds); err != nil {
			return err
		}
	}
	// Sorts: of statements (by position or name), then of windows and
	// aggregates.
	done := map[*pg_query.SortBy]bool{}
	for _, sel := range c.selects {
		for _, item := range sel.SortClause {
			if sb := item.GetSortBy(); sb != nil {
				done[sb] = true
			}
		}
		if err := intervalSelect(sel, a, r, kinds, unquote); err != nil {
			return err
		}
	}
	for _, sb := range c.sorts {
		if done[sb] {
			continue
		}
		k, err := intervalSortKey(sb.Node, kinds)
		if err != nil {
			return err
		}
		sb.Node = k
	}
	for _, wd := range c.windows {
		for i, p := range wd.PartitionClause {
			k, err := intervalSortKey(p, kinds)
			if err != nil {
				return err
			}
			wd.PartitionClause[i] = k
		}
	}
	return nil
}

// intervalSortKey is what n, a sort or partition key, becomes: its
// interval key when it is an interval, itself when it is none.
func intervalSortKey(n *pg_query.Node, kinds func(*pg_query.Node) kindSet) (*pg_query.Node, error) {
	k := kinds(n)
	switch {
	case !k.has(ksIntervals):
		return n, nil
	case k.only(ksInterval):
		return intervalKey(copyNode(n)), nil // n may be an output column's
	}
	return nil, intervalRefusal("ordering or partitioning by", n)
}

// intervalSelect rewrites or refuses what one SELECT of the statement
// does with intervals as a whole: its ORDER BY, DISTINCT ON, DISTINCT,
// GROUP BY, set operation and joins' USING.
func intervalSelect(sel *pg_query.SelectStmt, a *analysis, r resolution, kinds func(*pg_query.Node) kindSet, unquote func(string) string) error {
	setOp := sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED
	if setOp {
		if sel.Op != pg_query.SetOperation_SETOP_UNION || !sel.All {
			for i := 0; ; i++ {
				k, ok := setOpColumnKinds(sel, i, kinds)
				if !ok {
					break
				}
				if k.has(ksIntervals) {
					return refuse("UNION, INTERSECT or EXCEPT" + intervalWhy)
				}
			}
		}
		return sortSetOp(sel, kinds, func(n *pg_query.Node, k kindSet) (*pg_query.Node, error) {
			switch {
			case !k.has(ksIntervals):
				return nil, nil
			case k.only(ksInterval):
				return intervalKey(n), nil
			}
			return nil, intervalRefusal("ordering a set operation by", n)
		})
	}
	// ORDER BY.
	for _, item := range sel.SortClause {
		sb := item.GetSortBy()
		if sb == nil {
			continue
		}
		expr, ok := sortTarget(sel, sb.Node, unquote)
		if !ok {
			if a.mayHoldIntervals(r) {
				return refuse("an ORDER BY position in a * whose columns may be intervals")
			}
			continue
		}
		k, err := intervalSortKey(expr, kinds)
		if err != nil {
			return err
		}
		if k != expr {
			sb.Node = k
		}
	}
	// DISTINCT ON and DISTINCT.
	if hasDistinctOn(sel) {
		for i, d := range sel.DistinctClause {
			expr, ok := sortTarget(sel, d, unquote)
			if !ok {
				if a.mayHoldIntervals(r) {
					return refuse("a DISTINCT ON position in a * whose columns may be intervals")
				}
				continue
			}
			k, err := intervalSortKey(expr, kinds)
			if err != nil {
				return err
			}
			if k != expr {
				sel.DistinctClause[i] = k
			}
		}
	} else if len(sel.DistinctClause) > 0 {
		for _, t := range sel.TargetList {
			if v := t.GetResTarget().GetVal(); kinds(v).has(ksIntervals) && !constantExpr(v) {
				return intervalRefusal("SELECT DISTINCT", v)
			}
		}
	}
	// GROUP BY, grouping sets included.
	var groupErr error
	var group func(n *pg_query.Node)
	group = func(n *pg_query.Node) {
		if gs := n.GetGroupingSet(); gs != nil {
			for _, c := range gs.Content {
				group(c)
			}
			return
		}
		if l := n.GetList(); l != nil {
			for _, c := range l.Items {
				group(c)
			}
			return
		}
		expr := n
		if c := n.GetAConst(); c != nil {
			expr, _ = sortTarget(sel, n, unquote)
		}
		if expr == nil || kinds(expr).has(ksIntervals) && !constantExpr(expr) {
			groupErr = intervalRefusal("GROUP BY", expr)
		}
	}
	for _, g := range sel.GroupClause {
		group(g)
	}
	if groupErr != nil {
		return groupErr
	}
	// JOIN ... USING and NATURAL JOIN compare the columns.
	var joinErr error
	eachJoin(sel.FromClause, func(j *pg_query.JoinExpr) {
		if j.IsNatural && a.mayHoldIntervals(r) {
			joinErr = refuse("NATURAL JOIN" + intervalWhy)
		}
		for _, u := range j.UsingClause {
			name := u.GetString_().GetSval()
			col := pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, -1)
			if kinds(col).has(ksIntervals) {
				joinErr = intervalRefusal("JOIN ... USING", col)
			}
		}
	})
	return joinErr
}

// constantExpr reports whether n is made of constants only (no column,
// parameter, subquery, aggregate or window function): every row has the
// same value, so DuckDB's equality of it is Postgres's.
func constantExpr(n *pg_query.Node) bool {
	c := constantCheck{ok: true}
	walk(n, &c)
	return c.ok
}

type constantCheck struct{ ok bool }

func (c *constantCheck) enter(m proto.Message, _ *walker) {
	switch v := m.(type) {
	case *pg_query.ColumnRef, *pg_query.ParamRef, *pg_query.SubLink, *pg_query.SQLValueFunction, *pg_query.GroupingFunc:
		c.ok = false
	case *pg_query.FuncCall:
		if v.Over != nil || v.AggStar || isAggregate(funcName(v)) || deniedFuncs[funcName(v)] != 0 {
			c.ok = false
		}
	}
}

// eachJoin calls f for every join of a FROM list.
func eachJoin(from []*pg_query.Node, f func(*pg_query.JoinExpr)) {
	for _, n := range from {
		if j := n.GetJoinExpr(); j != nil {
			f(j)
			eachJoin([]*pg_query.Node{j.Larg, j.Rarg}, f)
		}
	}
}

// mayHoldIntervals reports whether a dataset the statement reads has an
// interval column (or an array of intervals).
func (a *analysis) mayHoldIntervals(r resolution) bool {
	return r.anyColumn(func(c catalog.ColumnInfo) bool { return oidKinds(c.TypeOID).has(ksIntervals) })
}

// intervalSites are the nodes of a tree where intervals may be compared,
// with their Node wrappers, the SELECTs, sorts and windows, and what may
// make an interval: casts to interval, functions returning one, and
// subtractions.
type intervalSites struct {
	sortSites
	nodes     []*pg_query.Node
	named     bool // a type named interval
	functions bool // a function returning an interval
	subtracts []*pg_query.A_Expr
}

func (s *intervalSites) enter(m proto.Message, w *walker) {
	s.sortSites.enter(m, w)
	switch m.(type) {
	case *pg_query.A_Expr, *pg_query.CaseExpr, *pg_query.MinMaxExpr, *pg_query.SubLink, *pg_query.FuncCall:
		if w.node() != nil {
			s.nodes = append(s.nodes, w.node())
		}
	}
	switch n := m.(type) {
	case *pg_query.TypeName:
		if typeNameKinds(n).has(ksIntervals) {
			s.named = true
		}
	case *pg_query.FuncCall:
		if intervalFuncs[funcName(n)] || strings.HasPrefix(funcName(n), "justify_") {
			s.functions = true
		}
	case *pg_query.A_Expr:
		if isSubtraction(n) {
			s.subtracts = append(s.subtracts, n)
		}
	}
}

// sources reports whether a value of the tree may be an interval though
// no dataset column is one: an interval type named, a function returning
// one, or a subtraction of values that may be timestamps, times or dates.
func (s *intervalSites) sources(kinds func(*pg_query.Node) kindSet) bool {
	if s.named || s.functions {
		return true
	}
	for _, e := range s.subtracts {
		if kinds(e.Lexpr).has(ksTemporal|ksDate) && kinds(e.Rexpr).has(ksTemporal|ksDate) {
			return true
		}
	}
	return false
}

// rewriteIntervalSite rewrites or refuses one comparison, CASE, GREATEST
// or LEAST, subquery test or aggregate (held by node).
func rewriteIntervalSite(node *pg_query.Node, kinds func(*pg_query.Node) kindSet) error {
	// pair reports whether l and r are both intervals (or string
	// literals and parameters beside one), an error when either may be
	// an interval otherwise.
	adopts := func(n *pg_query.Node) bool { return isStringConst(n) || n.GetParamRef() != nil }
	// possible: n may be an interval, or take the type of one beside it.
	possible := func(n *pg_query.Node) bool { return kinds(n).has(ksIntervals) || adopts(n) }
	pair := func(l, r *pg_query.Node) (bool, error) {
		lk, rk := kinds(l), kinds(r)
		if !lk.has(ksIntervals) && !rk.has(ksIntervals) || !possible(l) || !possible(r) {
			return false, nil // not intervals: Postgres has no operator of an interval and another type
		}
		if l.GetRowExpr() != nil || r.GetRowExpr() != nil {
			return false, refuse("a row comparison" + intervalWhy)
		}
		if lk.only(ksInterval) && (rk.only(ksInterval) || adopts(r)) || rk.only(ksInterval) && adopts(l) {
			return true, nil
		}
		return false, intervalRefusal("comparing "+exprText(l)+" with", r)
	}
	switch v := node.GetNode().(type) {
	case *pg_query.Node_AExpr:
		e := v.AExpr
		switch e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_OP:
			switch divisionOp(e) {
			case "=", "<>", "!=", "<", ">", "<=", ">=":
			case "@>", "<@", "&&":
				if possible(e.Lexpr) && possible(e.Rexpr) && (kinds(e.Lexpr).has(ksIntervals) || kinds(e.Rexpr).has(ksIntervals)) {
					return intervalRefusal("array containment of", e.Lexpr)
				}
				return nil
			default:
				return nil
			}
			if e.Lexpr == nil {
				return nil
			}
			fallthrough
		case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
			both, err := pair(e.Lexpr, e.Rexpr)
			if both {
				e.Lexpr, e.Rexpr = intervalKey(e.Lexpr), intervalKey(e.Rexpr)
			}
			return err
		case pg_query.A_Expr_Kind_AEXPR_NULLIF:
			both, err := pair(e.Lexpr, e.Rexpr)
			if both {
				node.Node = nullIfCase(e.Lexpr, e.Rexpr).Node
			}
			return err
		case pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
			pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
			l := e.Rexpr.GetList()
			if l == nil {
				if kinds(e.Lexpr).has(ksIntervals) {
					return intervalRefusal("IN or BETWEEN of", e.Lexpr)
				}
				return nil
			}
			all := true
			for _, item := range l.Items {
				both, err := pair(e.Lexpr, item)
				if err != nil {
					return err
				}
				all = all && both
			}
			if !all {
				if kinds(e.Lexpr).has(ksIntervals) {
					return intervalRefusal("IN or BETWEEN of", e.Lexpr)
				}
				return nil
			}
			e.Lexpr = intervalKey(e.Lexpr)
			for i, item := range l.Items {
				l.Items[i] = intervalKey(item)
			}
		case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
			if possible(e.Lexpr) && possible(e.Rexpr) && (kinds(e.Lexpr).has(ksIntervals) || kinds(e.Rexpr).has(ksIntervals)) {
				return intervalRefusal("= ANY or ALL of", e.Lexpr)
			}
		}
	case *pg_query.Node_CaseExpr:
		ce := v.CaseExpr
		if ce.Arg == nil {
			return nil
		}
		all := true
		for _, w := range ce.Args {
			cw := w.GetCaseWhen()
			if cw == nil {
				return nil
			}
			both, err := pair(ce.Arg, cw.Expr)
			if err != nil {
				return err
			}
			all = all && both
		}
		if !all {
			return nil
		}
		ce.Arg = intervalKey(ce.Arg)
		for _, w := range ce.Args {
			cw := w.GetCaseWhen()
			cw.Expr = intervalKey(cw.Expr)
		}
	case *pg_query.Node_MinMaxExpr:
		some := false
		for _, x := range v.MinMaxExpr.Args {
			if !possible(x) {
				return nil
			}
			some = some || kinds(x).has(ksIntervals)
		}
		if some {
			return intervalRefusal("GREATEST or LEAST of", node)
		}
	case *pg_query.Node_SubLink:
		sl := v.SubLink
		if sl.Testexpr == nil {
			return nil
		}
		outs := subqueryOutputs(sl.Subselect.GetSelectStmt())
		var out *pg_query.Node
		if len(outs) > 0 {
			out = outs[0]
		}
		if !possible(sl.Testexpr) || out == nil || !possible(out) || !kinds(sl.Testexpr).has(ksIntervals) && !kinds(out).has(ksIntervals) {
			return nil
		}
		// x IN (SELECT y ...), x < ANY (SELECT y ...): of the keys, y
		// in every branch of the subquery.
		exact := sl.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK || sl.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK
		exact = exact && sl.Testexpr.GetRowExpr() == nil && (kinds(sl.Testexpr).only(ksInterval) || adopts(sl.Testexpr))
		for _, o := range outs {
			exact = exact && o != nil && (kinds(o).only(ksInterval) || adopts(o))
		}
		if !exact || adopts(sl.Testexpr) && !kinds(out).only(ksInterval) {
			return intervalRefusal("comparing with a subquery", sl.Testexpr)
		}
		sl.Testexpr = intervalKey(sl.Testexpr)
		setSubqueryOutputs(sl.Subselect.GetSelectStmt(), func(n *pg_query.Node) *pg_query.Node { return intervalKey(n) })
	case *pg_query.Node_FuncCall:
		// Array containment, as the type rewrite spells it
		// (typerewrite.go): of intervals, the origin's.
		if fc := v.FuncCall; funcName(fc) == pgdef.FuncArrayContains && len(fc.Args) == 2 &&
			possible(fc.Args[0]) && possible(fc.Args[1]) && (kinds(fc.Args[0]).has(ksIntervals) || kinds(fc.Args[1]).has(ksIntervals)) {
			return intervalRefusal("array containment of", fc.Args[0])
		}
		return rewriteIntervalAggregate(v.FuncCall, kinds)
	}
	return nil
}

// rewriteIntervalAggregate makes min and max of intervals arg_min and
// arg_max by their keys, and refuses the aggregates that compare
// intervals otherwise.
func rewriteIntervalAggregate(fc *pg_query.FuncCall, kinds func(*pg_query.Node) kindSet) error {
	name := funcName(fc)
	args := fc.Args
	if fc.AggWithinGroup {
		for _, o := range fc.AggOrder {
			if sb := o.GetSortBy(); sb != nil && kinds(sb.Node).has(ksIntervals) {
				return intervalRefusal(name+" WITHIN GROUP (ORDER BY", sb.Node)
			}
		}
		return nil
	}
	anyInterval := false
	for _, x := range args {
		if kinds(x).has(ksIntervals) {
			anyInterval = true
		}
	}
	if !anyInterval {
		return nil
	}
	if fc.AggDistinct && !(len(args) == 1 && constantExpr(args[0])) {
		return intervalRefusal(name+"(DISTINCT ...) of", args[0])
	}
	if (name == "min" || name == "max") && len(args) == 1 && len(fc.Funcname) <= 2 {
		if !kinds(args[0]).only(ksInterval) {
			return intervalRefusal(name+" of", args[0])
		}
		fn := "arg_min"
		if name == "max" {
			fn = "arg_max"
		}
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(fn)}
		fc.Args = []*pg_query.Node{args[0], intervalKey(copyNode(args[0]))}
		return nil
	}
	switch name {
	case "array_position", "array_positions", "array_remove", "array_replace", "greatest", "least":
		return intervalRefusal(name+" of", args[0])
	}
	return nil
}

// subqueryOutputs are the first output columns of every branch of the
// subquery sel (nil for a branch whose first column the planner cannot
// find).
func subqueryOutputs(sel *pg_query.SelectStmt) []*pg_query.Node {
	if sel == nil {
		return nil
	}
	if sel.Larg != nil || sel.Rarg != nil {
		return append(subqueryOutputs(sel.Larg), subqueryOutputs(sel.Rarg)...)
	}
	if len(sel.ValuesLists) > 0 {
		var out []*pg_query.Node
		for _, row := range sel.ValuesLists {
			if l := row.GetList(); l != nil && len(l.Items) > 0 {
				out = append(out, l.Items[0])
			} else {
				out = append(out, nil)
			}
		}
		return out
	}
	if len(sel.TargetList) == 0 || isStarTarget(sel.TargetList[0].GetResTarget()) {
		return []*pg_query.Node{nil}
	}
	return []*pg_query.Node{sel.TargetList[0].GetResTarget().GetVal()}
}

// setSubqueryOutputs replaces the first output column of every branch of
// sel by f of it.
func setSubqueryOutputs(sel *pg_query.SelectStmt, f func(*pg_query.Node) *pg_query.Node) {
	if sel == nil {
		return
	}
	if sel.Larg != nil || sel.Rarg != nil {
		setSubqueryOutputs(sel.Larg, f)
		setSubqueryOutputs(sel.Rarg, f)
		return
	}
	for _, row := range sel.ValuesLists {
		if l := row.GetList(); l != nil && len(l.Items) > 0 {
			l.Items[0] = f(l.Items[0])
		}
	}
	if len(sel.TargetList) > 0 {
		if rt := sel.TargetList[0].GetResTarget(); rt != nil && rt.Val != nil {
			rt.Val = f(rt.Val)
		}
	}
}

// nullIfCase is NULLIF(l, r) of two intervals: CASE WHEN key(l) = key(r)
// THEN NULL ELSE l END.
func nullIfCase(l, r *pg_query.Node) *pg_query.Node {
	null := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}
	when := &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
		Expr: binOp("=", intervalKey(copyNode(l)), intervalKey(r)), Result: null, Location: -1}}}
	return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
		Args: []*pg_query.Node{when}, Defresult: l, Location: -1}}}
}
