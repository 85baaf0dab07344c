package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Correlated subqueries. DuckDB runs a correlated subquery (a scalar,
// EXISTS or IN subquery, a LATERAL one, a function in FROM of another
// item's columns) once per distinct value of the outer columns it reads,
// then joins the answers back on those values. Values that are equal
// without being the same meet there: every outer row whose interval is
// '30 days' gets the answer computed for '1 mon' (or the other way
// round), every row whose double precision is 0 the answer for -0, so
// SELECT id, (SELECT t.iv) FROM t prints '1 mon' for a row holding '30
// days'. Postgres evaluates the subquery with each row's own value.
//
// Only floats (and their arrays) and intervals (and theirs) have such
// values in the acceleration (a numeric column has one scale; text,
// dates and timestamps compare by their bytes or instants). So a
// statement whose subquery reads an outer column that may be of those
// kinds goes to the origin, unless the subquery only compares it (=, <,
// BETWEEN, IN (...), IS DISTINCT FROM, IS NULL: equal values compare
// alike, intervals by their span, see intervalorder.go).

// correlatedHazard returns why the statement tree (not yet rewritten;
// rangeVars are its RangeVars in walk order, as analysis.rels numbers
// them) cannot run on DuckDB, or "".
func correlatedHazard(tree *pg_query.Node, a *analysis, r resolution, rangeVars []*pg_query.RangeVar) string {
	sel := tree.GetSelectStmt()
	if sel == nil || !hasSubquery(sel) {
		return ""
	}
	rangeDS := map[*pg_query.RangeVar]int{}
	for i, rel := range a.rels {
		if rel.ordinal < len(rangeVars) && i < len(r.relDS) {
			rangeDS[rangeVars[rel.ordinal]] = r.relDS[i]
		}
	}
	c := correlation{a: a, r: r, rangeDS: rangeDS, kinds: a.kindsIn(tree, r, noUnquote)}
	c.selectStmt(sel, nil, nil)
	return c.why
}

type correlation struct {
	a       *analysis
	r       resolution
	rangeDS map[*pg_query.RangeVar]int
	kinds   func(*pg_query.Node) kindSet
	why     string
}

// scopeLevel is one query level's FROM items: the names they are known
// by, and the columns they have (any: a column the planner cannot list).
type scopeLevel struct {
	rels map[string]bool
	cols map[string]bool
	any  bool
}

func newLevel() *scopeLevel { return &scopeLevel{rels: map[string]bool{}, cols: map[string]bool{}} }

// cteScope maps the names of the WITH queries in scope to their queries.
type cteScope map[string]*pg_query.SelectStmt

func (s cteScope) with(w *pg_query.WithClause) cteScope {
	if w == nil || len(w.Ctes) == 0 {
		return s
	}
	out := cteScope{}
	for k, v := range s {
		out[k] = v
	}
	for _, n := range w.Ctes {
		if cte := n.GetCommonTableExpr(); cte != nil {
			out[cte.Ctename] = cte.Ctequery.GetSelectStmt()
		}
	}
	return out
}

// selectStmt checks one SELECT, whose enclosing levels are outer.
func (c *correlation) selectStmt(sel *pg_query.SelectStmt, outer []*scopeLevel, ctes cteScope) {
	if sel == nil || c.why != "" {
		return
	}
	ctes = ctes.with(sel.WithClause)
	if sel.WithClause != nil {
		for _, n := range sel.WithClause.Ctes {
			if cte := n.GetCommonTableExpr(); cte != nil {
				c.selectStmt(cte.Ctequery.GetSelectStmt(), outer, ctes)
			}
		}
	}
	if sel.Larg != nil || sel.Rarg != nil {
		c.selectStmt(sel.Larg, outer, ctes)
		c.selectStmt(sel.Rarg, outer, ctes)
		return
	}
	level := newLevel()
	var subs []*pg_query.SelectStmt // FROM subqueries
	var funcArgs []*pg_query.Node   // arguments of functions in FROM
	var quals []*pg_query.Node      // JOIN ... ON
	var from func(n *pg_query.Node)
	from = func(n *pg_query.Node) {
		switch v := n.GetNode().(type) {
		case *pg_query.Node_RangeVar:
			rv := v.RangeVar
			name := rv.Relname
			if rv.Alias != nil {
				name = rv.Alias.Aliasname
			}
			level.rels[name] = true
			switch {
			case rv.Alias != nil && len(rv.Alias.Colnames) > 0:
				addNames(level, rv.Alias.Colnames)
			case rv.Schemaname == "" && ctes[rv.Relname] != nil:
				addOutputs(level, ctes[rv.Relname])
			default:
				if k, ok := c.rangeDS[rv]; ok && k < len(c.r.datasets) {
					for _, col := range c.r.datasets[k].state.Columns {
						level.cols[col.Name] = true
					}
				} else {
					level.any = true
				}
			}
		case *pg_query.Node_RangeSubselect:
			rs := v.RangeSubselect
			if rs.Alias != nil {
				level.rels[rs.Alias.Aliasname] = true
				if len(rs.Alias.Colnames) > 0 {
					addNames(level, rs.Alias.Colnames)
				} else {
					addOutputs(level, rs.Subquery.GetSelectStmt())
				}
			}
			subs = append(subs, rs.Subquery.GetSelectStmt())
		case *pg_query.Node_RangeFunction:
			rf := v.RangeFunction
			if rf.Alias != nil {
				level.rels[rf.Alias.Aliasname] = true
				if len(rf.Alias.Colnames) > 0 {
					addNames(level, rf.Alias.Colnames)
				} else {
					level.cols[rf.Alias.Aliasname] = true
				}
			} else {
				level.any = true
			}
			for _, item := range rf.Functions {
				funcArgs = append(funcArgs, item)
			}
		case *pg_query.Node_JoinExpr:
			j := v.JoinExpr
			from(j.Larg)
			from(j.Rarg)
			if j.Alias != nil {
				level.rels[j.Alias.Aliasname] = true
			}
			if j.Quals != nil {
				quals = append(quals, j.Quals)
			}
		default:
			level.any = true
		}
	}
	for _, n := range sel.FromClause {
		from(n)
	}
	inner := append(append([]*scopeLevel(nil), outer...), level)
	for _, s := range subs {
		c.selectStmt(s, inner, ctes)
	}
	// A function in FROM reading other items' columns is a correlated
	// (LATERAL) one: a level of its own, without columns.
	for _, f := range funcArgs {
		c.exprs(append(append([]*scopeLevel(nil), inner...), newLevel()), ctes, f)
	}
	c.exprs(inner, ctes, quals...)
	c.exprs(inner, ctes, sel.TargetList...)
	c.exprs(inner, ctes, sel.WhereClause, sel.HavingClause, sel.LimitCount, sel.LimitOffset)
	c.exprs(inner, ctes, sel.GroupClause...)
	c.exprs(inner, ctes, sel.SortClause...)
	c.exprs(inner, ctes, sel.DistinctClause...)
	c.exprs(inner, ctes, sel.WindowClause...)
	c.exprs(inner, ctes, sel.ValuesLists...)
}

// addNames adds column alias names to a level.
func addNames(level *scopeLevel, names []*pg_query.Node) {
	for _, n := range names {
		level.cols[n.GetString_().GetSval()] = true
	}
}

// addOutputs adds the output column names of sel (its first branch's) to
// a level.
func addOutputs(level *scopeLevel, sel *pg_query.SelectStmt) {
	for sel != nil && sel.Larg != nil {
		sel = sel.Larg
	}
	if sel == nil || len(sel.ValuesLists) > 0 {
		level.any = true
		return
	}
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		switch {
		case rt == nil || isStarTarget(rt):
			level.any = true
		case rt.Name != "":
			level.cols[rt.Name] = true
		default:
			level.cols[figureColname(rt.Val, noUnquote)] = true
		}
	}
}

// exprs checks the expressions of the innermost of levels.
func (c *correlation) exprs(levels []*scopeLevel, ctes cteScope, ns ...*pg_query.Node) {
	for _, n := range ns {
		if n != nil && c.why == "" {
			c.msg(n.ProtoReflect(), levels, ctes, nil)
		}
	}
}

// msg walks an expression; parents are the messages above m, innermost
// last, Node wrappers left out.
func (c *correlation) msg(m protoreflect.Message, levels []*scopeLevel, ctes cteScope, parents []proto.Message) {
	if !m.IsValid() || c.why != "" {
		return
	}
	if m.Descriptor() == nodeOneof.Parent() {
		if fd := m.WhichOneof(nodeOneof); fd != nil {
			c.msg(m.Get(fd).Message(), levels, ctes, parents)
		}
		return
	}
	switch v := m.Interface().(type) {
	case *pg_query.SelectStmt:
		c.selectStmt(v, levels, ctes)
		return
	case *pg_query.ColumnRef:
		c.columnRef(v, levels, parents)
		return
	}
	parents = append(parents, m.Interface())
	for _, fd := range messageFields(m.Descriptor()) {
		if !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			l := m.Get(fd).List()
			for i := 0; i < l.Len(); i++ {
				c.msg(l.Get(i).Message(), levels, ctes, parents)
			}
			continue
		}
		c.msg(m.Get(fd).Message(), levels, ctes, parents)
	}
}

// columnRef judges a column reference of the innermost level: an outer
// one of a kind with equal values that are not the same, used otherwise
// than compared, makes the hazard.
func (c *correlation) columnRef(cr *pg_query.ColumnRef, levels []*scopeLevel, parents []proto.Message) {
	if len(levels) < 2 || len(cr.Fields) == 0 {
		return
	}
	at := -1 // the level the reference resolves to
	name := lastField(cr)
	star := cr.Fields[len(cr.Fields)-1].GetAStar() != nil
	if star && len(cr.Fields) == 1 {
		return // *: the level's own columns
	}
	if len(cr.Fields) >= 2 {
		qual := cr.Fields[len(cr.Fields)-2].GetString_().GetSval()
		for i := len(levels) - 1; i >= 0; i-- {
			if levels[i].rels[qual] {
				at = i
				break
			}
		}
	} else {
		for i := len(levels) - 1; i >= 0; i-- {
			if levels[i].cols[name] || levels[i].any {
				at = i
				break
			}
		}
	}
	if at < 0 || at == len(levels)-1 {
		return // local, or not a column the planner can place
	}
	ref := &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: cr}}
	if name == "" {
		c.why = "a correlated subquery reading the whole row " + exprText(ref) + " of an outer query (DuckDB runs it once per distinct outer value)"
		return
	}
	if !c.kinds(ref).has(ksFloats|ksIntervals) || onlyCompared(parents) {
		return
	}
	c.why = "a correlated subquery reading " + exprText(ref) + ", which may be a float or an interval, of an outer query (DuckDB runs it once per distinct outer value, so equal values such as -0 and 0 or '1 mon' and '30 days' take one another's answer)"
}

// hasSubquery reports whether sel holds a subquery or a function in FROM
// (what DuckDB may run as a correlated one).
func hasSubquery(sel *pg_query.SelectStmt) bool {
	var f subqueryFinder
	walk(sel, &f)
	return f.found
}

type subqueryFinder struct{ found bool }

func (f *subqueryFinder) enter(m proto.Message, _ *walker) {
	switch m.(type) {
	case *pg_query.SubLink, *pg_query.RangeSubselect, *pg_query.RangeFunction:
		f.found = true
	}
}

// onlyCompared reports whether the value whose parents are given is an
// operand of a comparison (or an IS NULL test), whose result equal values
// share.
func onlyCompared(parents []proto.Message) bool {
	if len(parents) == 0 {
		return false
	}
	p := parents[len(parents)-1]
	if l, ok := p.(*pg_query.List); ok && len(parents) >= 2 {
		e, ok := parents[len(parents)-2].(*pg_query.A_Expr)
		if !ok {
			return false
		}
		switch e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
			pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
			return l != nil
		}
		return false
	}
	switch v := p.(type) {
	case *pg_query.NullTest:
		return true
	case *pg_query.A_Expr:
		switch v.Kind {
		case pg_query.A_Expr_Kind_AEXPR_OP:
			switch divisionOp(v) {
			case "=", "<>", "!=", "<", ">", "<=", ">=":
				return v.Lexpr != nil
			}
		case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT,
			pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
			pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
			return true
		}
	}
	return false
}
