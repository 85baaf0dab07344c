package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Name scoping of subqueries in FROM. In Postgres a subquery in FROM
// without LATERAL sees the columns of its own FROM items and of the
// queries around the whole FROM clause, never those of the other items of
// that clause: in
//
//	SELECT (SELECT r FROM (SELECT n_nationkey AS n_regionkey) x, (SELECT n_regionkey AS r) y) FROM nation
//
// y's n_regionkey is the outer nation's. DuckDB makes every subquery in
// FROM implicitly LATERAL: a name it does not find inside is looked for in
// the items before it first (x's n_regionkey). So a subquery in FROM that
// names anything it does not define itself, a reference to a query around
// it, may be read otherwise by DuckDB, and the statement goes to the
// origin. What is defined inside: the tables, subqueries, functions and
// CTEs of its FROM clauses (their names, and the columns of the datasets
// among them, known once resolved: fromScope.check), and the output names
// it and its inner queries give.

// fromScope is what a subquery in FROM names and defines, for the check
// once the datasets are resolved.
type fromScope struct {
	// rels are the ordinals (analysis.rels' relRef.ordinal) of the
	// tables inside it, or inside the CTEs it reads.
	rels map[int]bool
	// names are the unqualified names it references that no output name
	// inside defines: each must be a column of one of rels.
	names []string
}

// cteInfo is what a CTE defines: its output names, whether it has a * (its
// columns are then also those of its tables), and the ordinals of the
// tables inside it.
type cteInfo struct {
	outputs map[string]bool
	star    bool
	rels    map[int]bool
}

// analyzeScopes finds the subqueries in FROM of sel (not LATERAL), and
// returns the fromScopes whose names must be checked against the resolved
// datasets, or why the statement cannot be scoped as Postgres does.
func analyzeScopes(sel *pg_query.SelectStmt) (scopes []fromScope, why string) {
	ordinals := map[*pg_query.RangeVar]int{}
	ctes := map[string]*cteInfo{}
	var subs []*pg_query.RangeSubselect
	walk(sel, visitFunc(func(m proto.Message, _ *walker) {
		switch n := m.(type) {
		case *pg_query.RangeVar:
			ordinals[n] = len(ordinals)
		case *pg_query.RangeSubselect:
			if !n.Lateral && n.Subquery != nil {
				subs = append(subs, n)
			}
		}
	}))
	// The CTEs of the statement, by name (a CTE of an inner WITH of the
	// same name as an outer one: the union of both, conservatively).
	walk(sel, visitFunc(func(m proto.Message, _ *walker) {
		cte, ok := m.(*pg_query.CommonTableExpr)
		if !ok || cte.Ctequery == nil {
			return
		}
		info := ctes[cte.Ctename]
		if info == nil {
			info = &cteInfo{outputs: map[string]bool{}, rels: map[int]bool{}}
			ctes[cte.Ctename] = info
		}
		for _, c := range cte.Aliascolnames {
			if s := c.GetString_(); s != nil {
				info.outputs[s.Sval] = true
			}
		}
		if body := cte.Ctequery.GetSelectStmt(); body != nil {
			for _, t := range topTargetLists(body) {
				name, star := targetName(t)
				if star {
					info.star = true
				} else if name != "" {
					info.outputs[name] = true
				}
			}
		}
		walk(cte.Ctequery, visitFunc(func(m proto.Message, _ *walker) {
			if rv, ok := m.(*pg_query.RangeVar); ok {
				if o, ok := ordinals[rv]; ok {
					info.rels[o] = true
				}
			}
		}))
	}))
	for _, sub := range subs {
		s, outer := scopeOf(sub.Subquery, ordinals, ctes)
		if outer != "" {
			return nil, outer
		}
		if len(s.names) > 0 {
			scopes = append(scopes, s)
		}
	}
	return scopes, ""
}

// scopeOf is the fromScope of one subquery in FROM; outer is set when it
// names a relation it does not define (t.x of a query around it).
func scopeOf(body *pg_query.Node, ordinals map[*pg_query.RangeVar]int, ctes map[string]*cteInfo) (s fromScope, outer string) {
	s.rels = map[int]bool{}
	relNames := map[string]bool{}
	outputs := map[string]bool{}
	var refs []*pg_query.ColumnRef
	addAlias := func(a *pg_query.Alias) {
		if a == nil {
			return
		}
		if a.Aliasname != "" {
			relNames[a.Aliasname] = true
		}
		for _, c := range a.Colnames {
			if str := c.GetString_(); str != nil {
				outputs[str.Sval] = true
			}
		}
	}
	walk(body, visitFunc(func(m proto.Message, _ *walker) {
		switch n := m.(type) {
		case *pg_query.RangeVar:
			relNames[n.Relname] = true
			addAlias(n.Alias)
			if o, ok := ordinals[n]; ok {
				s.rels[o] = true
			}
			if n.Schemaname == "" {
				if c := ctes[n.Relname]; c != nil {
					for name := range c.outputs {
						outputs[name] = true
					}
					if c.star {
						for o := range c.rels {
							s.rels[o] = true
						}
					}
				}
			}
		case *pg_query.RangeSubselect:
			addAlias(n.Alias)
		case *pg_query.RangeFunction:
			addAlias(n.Alias)
			for _, item := range n.Functions {
				if l := item.GetList(); l != nil && len(l.Items) > 0 {
					if fc := l.Items[0].GetFuncCall(); fc != nil {
						name := funcName(fc)
						relNames[name] = true
						outputs[name] = true
						if n.Alias != nil && len(n.Alias.Colnames) == 0 {
							outputs[n.Alias.Aliasname] = true
						}
					}
				}
			}
		case *pg_query.JoinExpr:
			addAlias(n.Alias)
			addAlias(n.JoinUsingAlias)
		case *pg_query.CommonTableExpr:
			relNames[n.Ctename] = true
		case *pg_query.SelectStmt:
			for _, t := range n.TargetList {
				if name, _ := targetName(t); name != "" {
					outputs[name] = true
				}
			}
		case *pg_query.ColumnRef:
			refs = append(refs, n)
		}
	}))
	seen := map[string]bool{}
	for _, cr := range refs {
		var parts []string
		for _, f := range cr.Fields {
			if str := f.GetString_(); str != nil {
				parts = append(parts, str.Sval)
			} else if f.GetAStar() != nil {
				parts = append(parts, "*")
			}
		}
		switch {
		case len(parts) == 1:
			if parts[0] == "*" || outputs[parts[0]] || seen[parts[0]] {
				continue
			}
			seen[parts[0]] = true
			s.names = append(s.names, parts[0])
		case len(parts) >= 2:
			rel := parts[len(parts)-2]
			if !relNames[rel] {
				return s, "a subquery in FROM that names " + rel + " of a query around it (DuckDB looks for it in the other FROM items first)"
			}
		}
	}
	return s, ""
}

// topTargetLists returns the target lists of sel's output: its own, or
// those of the arms of its set operation.
func topTargetLists(sel *pg_query.SelectStmt) []*pg_query.Node {
	if sel == nil {
		return nil
	}
	if sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
		return append(topTargetLists(sel.Larg), topTargetLists(sel.Rarg)...)
	}
	return sel.TargetList
}

// targetName is the name a select-list item gives its column (its alias,
// or the column it names), and whether it is a * or t.*.
func targetName(t *pg_query.Node) (name string, star bool) {
	rt := t.GetResTarget()
	if rt == nil {
		return "", false
	}
	if rt.Name != "" {
		return rt.Name, false
	}
	if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 {
		last := cr.Fields[len(cr.Fields)-1]
		if last.GetAStar() != nil {
			return "", true
		}
		if str := last.GetString_(); str != nil {
			return str.Sval, false
		}
	}
	if fc := rt.Val.GetFuncCall(); fc != nil {
		return funcName(fc), false
	}
	return "", false
}

// scopeHazard returns, once the datasets are resolved, the first name a
// subquery in FROM takes from a query around it: a name that is no column
// of the tables inside it.
func (a *analysis) scopeHazard(r resolution) string {
	if len(a.fromScopes) == 0 {
		return ""
	}
	byOrdinal := map[int]int{}
	for i, rel := range a.rels {
		byOrdinal[rel.ordinal] = i
	}
	for _, s := range a.fromScopes {
		for _, name := range s.names {
			found := false
			for o := range s.rels {
				i, ok := byOrdinal[o]
				if !ok || i >= len(r.relDS) || r.relDS[i] < 0 || r.relDS[i] >= len(r.datasets) {
					continue
				}
				for _, c := range r.datasets[r.relDS[i]].state.Columns {
					if c.Name == name {
						found = true
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				return "a subquery in FROM that names " + name + ", not a column of its own tables (a query around it may hold it; DuckDB looks for it in the other FROM items first)"
			}
		}
	}
	return ""
}

// visitFunc is a visitor of a function.
type visitFunc func(m proto.Message, w *walker)

func (f visitFunc) enter(m proto.Message, w *walker) { f(m, w) }
