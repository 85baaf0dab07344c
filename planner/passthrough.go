package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// A statement that only passes through the columns of the one subquery or
// CTE it reads, as dbt models end (with ... final as (...) select * from
// final order by id), prints that subquery's outputs as they are: when
// they are scale-tracked (scaletrack.go) there, they are rewritten there,
// to the exact text of their numeric, which the outer SELECT passes on.
// The outer SELECT must not group, aggregate, use a window, DISTINCT or a
// set operation, and may refer to such a column only in its output list
// (a WHERE or ORDER BY on it would compare text); a CTE must be read once.

// passScale is the tracked inner SELECT of such a statement.
type passScale struct {
	cte     int // index of the CTE in the WITH, or -1: FROM's subquery
	targets []scaleTarget
	subs    map[string]*staticScale
	outer   map[int]int // inner output position -> the statement's
}

// inner is the tracked SELECT within the (rewritten) statement sel.
func (p *passScale) inner(sel *pg_query.SelectStmt) *pg_query.SelectStmt {
	if p.cte >= 0 {
		if sel.WithClause == nil || p.cte >= len(sel.WithClause.Ctes) {
			return nil
		}
		return sel.WithClause.Ctes[p.cte].GetCommonTableExpr().GetCtequery().GetSelectStmt()
	}
	if len(sel.FromClause) != 1 || sel.FromClause[0].GetRangeSubselect() == nil {
		return nil
	}
	return sel.FromClause[0].GetRangeSubselect().Subquery.GetSelectStmt()
}

// trackedTargets are the scale-tracked outputs the rewrite changes: the
// statement's own, or its pass-through subquery's.
func (a *analysis) trackedTargets() []scaleTarget {
	if a.pass != nil {
		return a.pass.targets
	}
	return a.scaleTargets
}

// passThroughScales finds the tracked outputs of the subquery or CTE sel
// passes through, and their merges (exempt from the merge rules).
func passThroughScales(sel *pg_query.SelectStmt) (*passScale, map[proto.Message]bool) {
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED ||
		len(sel.DistinctClause) > 0 || len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.WindowClause) > 0 ||
		len(sel.FromClause) != 1 || len(sel.ValuesLists) > 0 || len(sel.LockingClause) > 0 {
		return nil, nil
	}
	p := &passScale{cte: -1}
	var inner *pg_query.SelectStmt
	ctes := map[string]*pg_query.CommonTableExpr{}
	if w := sel.WithClause; w != nil {
		if w.Recursive {
			return nil, nil
		}
		for _, c := range w.Ctes {
			if cte := c.GetCommonTableExpr(); cte != nil {
				ctes[cte.Ctename] = cte
			}
		}
	}
	from := sel.FromClause[0]
	switch {
	case from.GetRangeSubselect() != nil:
		rs := from.GetRangeSubselect()
		if rs.Lateral || rs.Alias != nil && len(rs.Alias.Colnames) > 0 {
			return nil, nil
		}
		inner = rs.Subquery.GetSelectStmt()
	case from.GetRangeVar() != nil && from.GetRangeVar().Schemaname == "":
		name := from.GetRangeVar().Relname
		for i, c := range sel.WithClause.GetCtes() {
			cte := c.GetCommonTableExpr()
			if cte != nil && cte.Ctename == name {
				if len(cte.Aliascolnames) > 0 || cte.Ctematerialized == pg_query.CTEMaterialize_CTEMaterializeAlways {
					return nil, nil
				}
				inner, p.cte = cte.Ctequery.GetSelectStmt(), i
			}
		}
		if p.cte < 0 || countRelation(sel, name) != 1 {
			return nil, nil
		}
		delete(ctes, name)
	}
	if inner == nil || inner.WithClause != nil {
		return nil, nil
	}
	targets, exempt, subs := scaleCandidatesFrom(inner, ctes)
	if len(targets) == 0 {
		return nil, nil
	}
	// The inner output names, and whether it has a *.
	innerStar := false
	names := map[string][]int{}
	for i, t := range inner.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			return nil, nil
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && lastField(cr) == "" {
			innerStar = true
			continue
		}
		name := rt.Name
		if name == "" {
			name = outputName(rt.Val)
		}
		names[name] = append(names[name], i)
	}
	tracked := map[int]bool{}
	trackedNames := map[string]bool{}
	for _, st := range targets {
		tracked[st.pos] = true
	}
	for name, pos := range names {
		for _, i := range pos {
			if tracked[i] {
				if len(pos) > 1 {
					return nil, nil // two outputs of one name
				}
				trackedNames[name] = true
			}
		}
	}
	// The outer outputs: a lone *, or column references.
	p.outer = map[int]int{}
	if len(sel.TargetList) == 1 && isStar(sel.TargetList[0]) {
		if innerStar {
			return nil, nil // positions unknown
		}
		for i := range inner.TargetList {
			p.outer[i] = i
		}
	} else {
		for o, t := range sel.TargetList {
			rt := t.GetResTarget()
			cr := rt.GetVal().GetColumnRef()
			if cr == nil || lastField(cr) == "" || len(cr.Fields) > 2 {
				if hasTrackedRef(rt.GetVal(), trackedNames) {
					return nil, nil
				}
				continue
			}
			name := lastField(cr)
			if trackedNames[name] {
				if innerStar {
					return nil, nil
				}
				p.outer[names[name][0]] = o
			}
		}
	}
	// Nowhere else: not by name, nor by position in ORDER BY.
	outPos := map[int]bool{}
	for _, o := range p.outer {
		outPos[o] = true
	}
	for _, sc := range sel.SortClause {
		if c := sc.GetSortBy().GetNode().GetAConst(); c != nil {
			if iv, ok := c.Val.(*pg_query.A_Const_Ival); !ok || outPos[int(iv.Ival.Ival)-1] {
				return nil, nil
			}
		}
	}
	rest := proto.Clone(sel).(*pg_query.SelectStmt)
	rest.TargetList, rest.WithClause, rest.FromClause = nil, nil, nil
	if hasTrackedRef(&pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: rest}}, trackedNames) {
		return nil, nil
	}
	p.targets, p.subs = targets, subs
	return p, exempt
}

// isStar reports whether a target is * (or t.*).
func isStar(n *pg_query.Node) bool {
	cr := n.GetResTarget().GetVal().GetColumnRef()
	return cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}

// hasTrackedRef reports whether n refers to one of names.
func hasTrackedRef(n *pg_query.Node, names map[string]bool) bool {
	f := &refFinder{names: names}
	if n != nil {
		walk(n, f)
	}
	return f.found
}

type refFinder struct {
	names map[string]bool
	found bool
}

func (f *refFinder) enter(m proto.Message, w *walker) {
	if cr, ok := m.(*pg_query.ColumnRef); ok && f.names[lastField(cr)] {
		f.found = true
	}
}

// countRelation counts the references to the unqualified relation name in
// sel, CTE bodies included.
func countRelation(sel *pg_query.SelectStmt, name string) int {
	c := &relCounter{name: name}
	walk(sel, c)
	return c.n
}

type relCounter struct {
	name string
	n    int
}

func (c *relCounter) enter(m proto.Message, w *walker) {
	if rv, ok := m.(*pg_query.RangeVar); ok && rv.Schemaname == "" && rv.Relname == c.name {
		c.n++
	}
}
