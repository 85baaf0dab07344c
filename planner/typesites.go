package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Rules by the type of a value, for the types whose semantics the
// acceleration does not share (typeguess.go says which types a value may
// have). The analysis records the values the rules judge (typeSites);
// typeHazard judges them once the datasets are resolved, and
// typerewrite.go makes the rewrites that keep such statements exact:
//
//   - jsonrules.go: jsonb and json, held as their text;
//   - charrules.go: char(n), held without its trailing spaces;
//   - realrules.go: real, which DuckDB computes with in single precision;
//   - rowcompare.go: rows, which DuckDB compares as structs.

// typeSites are what the analysis saw that the type rules judge once the
// datasets are resolved (copies: the rewrite changes the tree).
type typeSites struct {
	castTo   typeSet                     // the types casts name
	outputs  map[string][]*pg_query.Node // output columns by their names (ORDER BY name)
	ordered  []*pg_query.Node            // values ordered or range-compared
	equal    []*pg_query.Node            // values compared for equality, grouped or made distinct
	pairs    []typePair                  // values compared with each other
	arith    []*pg_query.Node            // operands of arithmetic
	concats  [][2]*pg_query.Node         // operands of ||
	casts    []*pg_query.Node            // values cast to a type other than text, json and jsonb
	likes    []*pg_query.Node            // the strings LIKE and ILIKE match
	printed  []*pg_query.Node            // arguments printed with their type's output function
	jsonGets [][2]*pg_query.Node         // document and key of -> and ->>
	contains [][2]*pg_query.Node         // container and contained of @> and <@
	args     []*pg_query.Node            // arguments of function calls but count's (inetrules.go)
	merged   []*pg_query.Node            // values CASE, COALESCE, NULLIF and set operations merge
	// rowCmp describes a row comparison the rewrite does not spell out.
	rowCmp string
	// slices: an array slice or trim_array, whose result keeps its
	// source's NULL bitmap at the origin (Decision.BinaryArraysInexact).
	slices bool
	// starOrdered and starEqual: ORDER BY and GROUP BY positions of
	// SELECT * FROM one relation.
	starOrdered, starEqual []starColumn
	// named are the ORDER BY items naming an output column of their
	// SELECT, judged by that column (noteSelect); each is forgotten when
	// the walk meets it.
	named map[*pg_query.SortBy]bool
}

// starColumn is column pos (from 1) of relation rel, as * expands it.
type starColumn struct {
	rel string
	pos int
}

// typePair is two values compared; any: r is an array whose elements are.
type typePair struct {
	l, r *pg_query.Node
	any  bool
}

// noteTypeSites records what the type rules judge (relations.go calls it
// for every node of the analysis walk).
func (z *analyzer) noteTypeSites(m proto.Message, w *walker) {
	ts := &z.a.types
	switch n := m.(type) {
	case *pg_query.TypeName:
		ts.castTo |= castTypeSet(n) & tTracked
	case *pg_query.ResTarget:
		if n.Name != "" && n.Val != nil {
			if ts.outputs == nil {
				ts.outputs = map[string][]*pg_query.Node{}
			}
			ts.outputs[n.Name] = append(ts.outputs[n.Name], copyNode(n.Val))
		}
	case *pg_query.SelectStmt:
		ts.noteSelect(n, w)
		if n.Op != pg_query.SetOperation_SETOP_NONE && n.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
			for _, arm := range []*pg_query.SelectStmt{n.Larg, n.Rarg} {
				for _, t := range arm.GetTargetList() {
					if v := t.GetResTarget().GetVal(); v != nil {
						ts.noteTyped(&ts.merged, v)
					}
				}
				for _, row := range arm.GetValuesLists() {
					for _, v := range row.GetList().GetItems() {
						ts.noteTyped(&ts.merged, v)
					}
				}
			}
		}
	case *pg_query.SortBy:
		if ts.named[n] {
			delete(ts.named, n)
			break
		}
		ts.ordered = append(ts.ordered, copyNode(n.Node))
	case *pg_query.WindowDef:
		ts.noteEqual(n.PartitionClause...)
	case *pg_query.JoinExpr:
		// USING (a, b) and NATURAL compare the columns of those names.
		names, _ := stringsOf(n.UsingClause)
		for _, name := range names {
			ts.equal = append(ts.equal, pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, -1))
		}
		if n.IsNatural {
			ts.equal = append(ts.equal, pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeAStarNode()}, -1))
		}
	case *pg_query.MinMaxExpr:
		ts.noteOrdered(n.Args...)
	case *pg_query.CaseExpr:
		for _, arm := range n.Args {
			if cw := arm.GetCaseWhen(); cw != nil && cw.Result != nil {
				ts.noteTyped(&ts.merged, cw.Result)
			}
		}
		if n.Defresult != nil {
			ts.noteTyped(&ts.merged, n.Defresult)
		}
		if n.Arg != nil {
			for _, arm := range n.Args {
				if cw := arm.GetCaseWhen(); cw != nil {
					ts.notePair(n.Arg, cw.Expr, false, false)
				}
			}
		}
	case *pg_query.SubLink:
		ts.noteSubLink(n)
	case *pg_query.A_Indices:
		if n.IsSlice {
			ts.slices = true
		}
	case *pg_query.TypeCast:
		if n.TypeName != nil && !castTarget(n, textAndJSONTypeNames) {
			ts.casts = append(ts.casts, copyNode(n.Arg))
		}
	case *pg_query.FuncCall:
		name := funcName(n)
		switch {
		case orderingFuncs[name]:
			ts.noteOrdered(n.Args...)
		case printingFuncs[name]:
			for _, arg := range n.Args {
				ts.printed = append(ts.printed, copyNode(arg))
			}
		case name == "trim_array":
			ts.slices = true
		}
		if n.AggDistinct {
			ts.noteEqual(n.Args...)
		}
		if name != "count" {
			for _, arg := range n.Args {
				ts.noteTyped(&ts.args, arg)
			}
		}
	case *pg_query.CoalesceExpr:
		for _, arg := range n.Args {
			ts.noteTyped(&ts.merged, arg)
		}
	case *pg_query.A_Expr:
		ts.noteExpr(n)
	}
}

// noteTyped records n into sites unless it is a constant or a parameter,
// whose type the rules take from their context (typesOf: tOther).
func (ts *typeSites) noteTyped(sites *[]*pg_query.Node, n *pg_query.Node) {
	if n != nil && n.GetAConst() == nil && n.GetParamRef() == nil {
		*sites = append(*sites, copyNode(n))
	}
}

func (ts *typeSites) noteOrdered(ns ...*pg_query.Node) {
	for _, n := range ns {
		if n != nil {
			ts.ordered = append(ts.ordered, copyNode(n))
		}
	}
}

func (ts *typeSites) noteEqual(ns ...*pg_query.Node) {
	for _, n := range ns {
		if n != nil {
			ts.equal = append(ts.equal, copyNode(n))
		}
	}
}

// notePair records l and r compared (r an array of the compared values
// when any), ordered or for equality.
func (ts *typeSites) notePair(l, r *pg_query.Node, any, ordering bool) {
	if l == nil || r == nil || isNullConst(l) || isNullConst(r) {
		return // NULL whatever the other is (IS DISTINCT FROM NULL: IS NOT NULL)
	}
	lr, rr := l.GetRowExpr(), r.GetRowExpr()
	if lr != nil && rr != nil && len(lr.Args) == len(rr.Args) {
		for i := range lr.Args {
			ts.notePair(lr.Args[i], rr.Args[i], any, ordering)
		}
		return
	}
	if ae := r.GetAArrayExpr(); any && ae != nil {
		for _, el := range ae.Elements {
			ts.notePair(l, el, false, ordering)
		}
		return
	}
	lc, rc := copyNode(l), copyNode(r)
	ts.pairs = append(ts.pairs, typePair{l: lc, r: rc, any: any})
	if ordering {
		ts.ordered = append(ts.ordered, lc, rc)
	} else {
		ts.equal = append(ts.equal, lc, rc)
	}
}

// noteSelect records the ordering, grouping and distinct values of a
// SELECT: ORDER BY and GROUP BY positions stand for the output columns.
func (ts *typeSites) noteSelect(sel *pg_query.SelectStmt, w *walker) {
	// SELECT * FROM rel: a position is rel's column (rel a table, not
	// a WITH query).
	starOf := ""
	if len(sel.TargetList) == 1 && len(sel.FromClause) == 1 {
		cr := sel.TargetList[0].GetResTarget().GetVal().GetColumnRef()
		rv := sel.FromClause[0].GetRangeVar()
		if cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetAStar() != nil && rv != nil && (rv.Alias == nil || len(rv.Alias.Colnames) == 0) &&
			(rv.Schemaname != "" || !w.inCTEScope(rv.Relname) && !withNames(sel.WithClause, rv.Relname)) {
			starOf = rv.Relname
		}
	}
	starAt := func(n *pg_query.Node, into *[]starColumn) bool {
		k, ok := constInt(n)
		if !ok || starOf == "" || k < 1 {
			return false
		}
		*into = append(*into, starColumn{rel: starOf, pos: int(k)})
		return true
	}
	outputAt := func(n *pg_query.Node) *pg_query.Node {
		k, ok := constInt(n)
		if !ok {
			return nil
		}
		for i, t := range sel.TargetList {
			rt := t.GetResTarget()
			if rt == nil {
				return nil
			}
			if cr := rt.Val.GetColumnRef(); cr != nil && lastField(cr) == "" {
				return rt.Val // a * at or before the position: not known
			}
			if int64(i+1) == k {
				return rt.Val
			}
		}
		return nil
	}
	// ORDER BY name: an output column of that name, if any.
	named := func(sb *pg_query.SortBy) bool {
		cr := sb.GetNode().GetColumnRef()
		if cr == nil || len(cr.Fields) != 1 || lastField(cr) == "" {
			return false
		}
		found := false
		for _, t := range sel.TargetList {
			if rt := t.GetResTarget(); rt != nil && rt.Name == lastField(cr) && rt.Val != nil {
				ts.noteOrdered(rt.Val)
				found = true
			}
		}
		return found
	}
	for _, item := range sel.SortClause {
		sb := item.GetSortBy()
		if sb == nil {
			continue
		}
		if named(sb) {
			if ts.named == nil {
				ts.named = map[*pg_query.SortBy]bool{}
			}
			ts.named[sb] = true
			continue
		}
		if n := sb.GetNode(); starAt(n, &ts.starOrdered) {
			continue
		} else if v := outputAt(n); v != nil {
			ts.noteOrdered(v)
		}
	}
	var group func(items []*pg_query.Node)
	group = func(items []*pg_query.Node) {
		for _, g := range items {
			if gs := g.GetGroupingSet(); gs != nil {
				group(gs.Content)
				continue
			}
			if starAt(g, &ts.starEqual) {
				continue
			}
			if v := outputAt(g); v != nil {
				g = v
			}
			ts.noteEqual(g)
		}
	}
	group(sel.GroupClause)
	distinct := false
	for _, d := range sel.DistinctClause {
		if d == nil || d.GetNode() == nil {
			distinct = true // DISTINCT: of every output column
			continue
		}
		if v := outputAt(d); v != nil {
			d = v
		}
		ts.noteEqual(d)
	}
	setOp := sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED
	if distinct {
		for _, t := range sel.TargetList {
			ts.noteEqual(t.GetResTarget().GetVal())
		}
	}
	if setOp && (!sel.All || sel.Op != pg_query.SetOperation_SETOP_UNION) {
		// Compared row by row: the arms' output columns.
		for _, arm := range setOpArms(sel) {
			for _, t := range arm.TargetList {
				ts.noteEqual(t.GetResTarget().GetVal())
			}
			for _, l := range arm.ValuesLists {
				if items := l.GetList(); items != nil {
					ts.noteEqual(items.Items...)
				}
			}
		}
	}
}

// noteSubLink records x IN (SELECT ...) and its kin: x compared with the
// subquery's output; a row beside a subquery is a row comparison the
// rewrite does not spell out.
func (ts *typeSites) noteSubLink(sl *pg_query.SubLink) {
	switch sl.SubLinkType {
	case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK, pg_query.SubLinkType_ROWCOMPARE_SUBLINK:
	default:
		return
	}
	if sl.Testexpr.GetRowExpr() != nil || sl.SubLinkType == pg_query.SubLinkType_ROWCOMPARE_SUBLINK {
		ts.rowCmp = "a row compared with a subquery's rows"
		return
	}
	sel := sl.Subselect.GetSelectStmt()
	for sel != nil && sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
		sel = sel.Larg
	}
	if sel == nil || len(sel.TargetList) == 0 {
		return
	}
	ordering := false
	if names, ok := stringsOf(sl.OperName); ok && len(names) > 0 {
		ordering = orderingOps[names[len(names)-1]]
	}
	ts.notePair(sl.Testexpr, sel.TargetList[0].GetResTarget().GetVal(), false, ordering)
}

// noteExpr records an operator expression's operands.
func (ts *typeSites) noteExpr(e *pg_query.A_Expr) {
	op := operatorName(e)
	if ts.noteRows(e, op) {
		return
	}
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		switch {
		case op == "=" || op == "<>" || op == "!=":
			ts.notePair(e.Lexpr, e.Rexpr, false, false)
		case orderingOps[op]:
			ts.notePair(e.Lexpr, e.Rexpr, false, true)
		case op == "||":
			ts.concats = append(ts.concats, [2]*pg_query.Node{copyNode(e.Lexpr), copyNode(e.Rexpr)})
		case op == "->" || op == "->>":
			ts.jsonGets = append(ts.jsonGets, [2]*pg_query.Node{copyNode(e.Lexpr), copyNode(e.Rexpr)})
		case op == "@>":
			ts.contains = append(ts.contains, [2]*pg_query.Node{copyNode(e.Lexpr), copyNode(e.Rexpr)})
		case op == "<@":
			ts.contains = append(ts.contains, [2]*pg_query.Node{copyNode(e.Rexpr), copyNode(e.Lexpr)})
		case op == "~~" || op == "!~~" || op == "~~*" || op == "!~~*":
			ts.likes = append(ts.likes, copyNode(e.Lexpr))
		case e.Lexpr == nil && (op == "-" || op == "+" || op == "@"):
			// A sign changed or dropped: exact in both engines.
		case arithmeticOps[op] || e.Lexpr == nil:
			for _, x := range []*pg_query.Node{e.Lexpr, e.Rexpr} {
				if x != nil {
					ts.arith = append(ts.arith, copyNode(x))
				}
			}
		}
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		ts.notePair(e.Lexpr, e.Rexpr, true, orderingOps[op])
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NULLIF:
		ts.notePair(e.Lexpr, e.Rexpr, false, false)
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF && e.Lexpr != nil {
			ts.noteTyped(&ts.merged, e.Lexpr)
		}
	case pg_query.A_Expr_Kind_AEXPR_IN:
		if l := e.Rexpr.GetList(); l != nil {
			for _, item := range l.Items {
				ts.notePair(e.Lexpr, item, false, false)
			}
		}
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		if l := e.Rexpr.GetList(); l != nil {
			for _, item := range l.Items {
				ts.notePair(e.Lexpr, item, false, true)
			}
		}
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		ts.likes = append(ts.likes, copyNode(e.Lexpr))
	}
}

// arithmeticOps are the binary operators of numbers.
var arithmeticOps = map[string]bool{"+": true, "-": true, "*": true, "/": true, "%": true, "^": true}

// typeHazard returns the reason a statement must go to the origin by the
// type rules, and which rule it is, or "".
func (a *analysis) typeHazard(r resolution) (reason, detail string) {
	if a.types.rowCmp != "" {
		return ReasonUnsupported, a.types.rowCmp + ": Postgres compares rows field by field with SQL's NULL semantics"
	}
	t := newTyper(a, r)
	present := t.unknown & tTracked
	if present == 0 {
		return "", ""
	}
	if present&tJSONAny != 0 {
		if why := t.jsonHazard(); why != "" {
			return ReasonUnsupported, why
		}
	}
	if present&tBpchar != 0 {
		if why := t.bpcharHazard(); why != "" {
			return ReasonUnsupported, why
		}
	}
	if present&tFloat4 != 0 {
		if why := t.realHazard(); why != "" {
			return ReasonUnsupported, why
		}
	}
	if present&tInetAny != 0 {
		if why := t.inetHazard(); why != "" {
			return ReasonUnsupported, why
		}
	}
	return "", ""
}

// withNames reports whether a WITH clause defines name.
func withNames(with *pg_query.WithClause, name string) bool {
	if with == nil {
		return false
	}
	for _, c := range with.Ctes {
		if c.GetCommonTableExpr().GetCtename() == name {
			return true
		}
	}
	return false
}

// isNullConst reports whether n is the literal NULL.
func isNullConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && c.Isnull
}
