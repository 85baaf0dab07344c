package planner

import (
	"maps"
	"slices"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

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
