package planner

import (
	"slices"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Numerics held as text. A numeric column whose values a DECIMAL cannot
// hold (mixed display scales where none is declared, NaN, ±Infinity, more
// than 38 digits) is held as numeric_out's text (catalog.ColumnInfo.NumericText).
// A statement may use such a column where its text is what Postgres
// prints, or where only its value matters:
//
//   - as it is: a bare output column of the outermost SELECT (or its *),
//     when that SELECT has no DISTINCT, GROUP BY or HAVING and is no set
//     operation; its argument to count, and to IS [NOT] NULL. The proxy
//     encodes the text as the numeric it is (NaN and ±Infinity included);
//   - avg(x), a whole output (exactavg.go), from the sum printed at
//     Postgres's scale (heldAvgs);
//   - by value: wherever its display scale is never printed nor
//     compared: comparisons (=, <, IN, BETWEEN, ANY, IS DISTINCT FROM,
//     ...), WHERE, ON, HAVING, GROUP BY, ORDER BY, PARTITION BY, FILTER,
//     and + - * % abs sum min max CASE COALESCE GREATEST LEAST under
//     them; the arguments of round, trunc, floor, ceil and sign and of
//     casts to integers, floats, booleans and numeric(p,s), which set a
//     scale of their own. There the rewrite reads it as
//
//	CAST(pgaccel_numeric_held(column, s) AS DECIMAL(w, s))
//
//     with s the column's ValueScale and w its ValueWidth (pgdef.FuncNumericHeld),
//     which fails rather than round a value beyond it, and the statement
//     then goes to the origin. A column with NaN or ±Infinity (no
//     ValueScale) is used as it is only.
//
// Anything else (the value printed after arithmetic, as text, by an
// aggregate, a division, whose scale depends on its operands' scales, ...)
// goes to the origin. The analysis (numericTextUses) records how each
// column name is used, without the datasets; numericTextHazard judges it
// against the resolution, and heldNumerics rewrites.

// Ways a statement uses a column name.
const (
	useRaw     uint8 = 1 << iota // as it is: the text
	useValue                     // by value: the scale is not observed
	usePrinted                   // its scale may be printed or compared
)

// numericTextUse is how a SELECT uses its column names (numericTextUses).
type numericTextUse struct {
	// raw are the locations of the column references used as they are.
	raw map[int32]bool
	// use holds, per column name, the ways it is used.
	use map[string]uint8
	// wide: something uses every column of a relation in a way that may
	// print or compare them (a * that is not the outermost SELECT's own
	// output, NATURAL JOIN, a whole-row or t.* value).
	wide bool
	// printedIn holds, per column name, where its scale may be printed:
	// the positions of the outermost SELECT's outputs (whose scale the
	// scale tracking may follow, scaletrack.go), -1 elsewhere.
	printedIn map[string][]int
	target    int // the output being recorded, or -1
}

// pgdef.FuncNumericHeld and pgdef.FuncNumericTextScale are accelerator's.
const ()

// heldText is the text of a numeric held as text that tc reads by value
// (heldNumerics' CAST(pgaccel_numeric_held(column, s) AS DECIMAL(38, s))),
// or nil.
func heldText(tc *pg_query.TypeCast) *pg_query.Node {
	fc := tc.Arg.GetFuncCall()
	if fc == nil || funcName(fc) != pgdef.FuncNumericHeld || len(fc.Args) != 2 {
		return nil
	}
	return fc.Args[0]
}

// numericTextUses records how sel uses its column names.
func numericTextUses(sel *pg_query.SelectStmt) *numericTextUse {
	u := &numericTextUse{raw: map[int32]bool{}, use: map[string]uint8{}, printedIn: map[string][]int{}, target: -1}
	u.selectStmt(sel, true, usePrinted)
	return u
}

// selectStmt records sel's uses; outer: it is the statement's own SELECT;
// outputs is how its output columns are used.
func (u *numericTextUse) selectStmt(sel *pg_query.SelectStmt, outer bool, outputs uint8) {
	if sel == nil {
		return
	}
	saved := u.target
	u.target = -1
	defer func() { u.target = saved }()
	if sel.WithClause != nil {
		for _, c := range sel.WithClause.Ctes {
			if cte := c.GetCommonTableExpr(); cte != nil {
				u.query(cte.Ctequery)
			}
		}
	}
	if sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
		// The branches' values are compared (UNION) and printed.
		u.selectStmt(sel.Larg, false, usePrinted)
		u.selectStmt(sel.Rarg, false, usePrinted)
		for _, s := range sel.SortClause {
			u.generic(s) // by the outputs' text
		}
		u.expr(sel.LimitCount, useValue)
		u.expr(sel.LimitOffset, useValue)
		return
	}
	for _, row := range sel.ValuesLists {
		u.generic(row)
	}
	distinct := len(sel.DistinctClause) > 0
	plainDistinct := len(sel.DistinctClause) == 1 && sel.DistinctClause[0].GetNode() == nil
	asIs := outer && !distinct && len(sel.GroupClause) == 0 && sel.HavingClause == nil
	for i, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			u.generic(t)
			continue
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			if isStarRef(cr) {
				if !asIs {
					u.wide = true
				}
				continue
			}
			if asIs {
				u.asIs(cr)
				continue
			}
			u.expr(rt.Val, outputs) // a key of GROUP BY or DISTINCT: not tracked
			continue
		}
		if fc := rt.Val.GetFuncCall(); outer && fc != nil && outputAvg(fc) {
			if cr := fc.Args[0].GetColumnRef(); cr != nil && !isStarRef(cr) {
				// avg(x), a whole output: exact from sum(x) at
				// Postgres's scale and count(x) (heldAvgs).
				u.mark(cr, useValue)
				if fc.Over != nil {
					u.window(fc.Over)
				}
				continue
			}
		}
		if outer {
			u.target = i
		}
		u.expr(rt.Val, outputs)
		u.target = -1
	}
	for _, f := range sel.FromClause {
		u.fromItem(f)
	}
	u.expr(sel.WhereClause, useValue)
	for _, g := range sel.GroupClause {
		u.expr(g, useValue)
	}
	u.expr(sel.HavingClause, useValue)
	for _, w := range sel.WindowClause {
		if wd := w.GetWindowDef(); wd != nil {
			u.window(wd)
		}
	}
	if !plainDistinct {
		for _, d := range sel.DistinctClause {
			u.expr(d, useValue) // DISTINCT ON: grouped by value
		}
	}
	for _, s := range sel.SortClause {
		sb := s.GetSortBy()
		if sb == nil {
			u.generic(s)
			continue
		}
		target, ok := sortTarget(sel, sb.Node, func(s string) string { return s })
		if !ok {
			u.wide = true // a position past a *: which column is unknown
			continue
		}
		if target != sb.Node {
			// ORDER BY 1, or an output's name: by the output, which is
			// the text when it is a column as it is.
			out := target.GetColumnRef()
			if item := sb.Node.GetColumnRef(); out != nil && (item == nil || lastField(item) != lastField(out)) {
				u.mark(out, usePrinted)
				continue
			}
			if out == nil {
				continue // an expression, judged as an output
			}
		}
		u.expr(sb.Node, useValue)
	}
	u.expr(sel.LimitCount, useValue)
	u.expr(sel.LimitOffset, useValue)
}

// isStar reports whether cr is * or t.*.
func isStarRef(cr *pg_query.ColumnRef) bool {
	return len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}

// query records the uses of a subquery whose outputs may be printed.
func (u *numericTextUse) query(n *pg_query.Node) {
	if sel := n.GetSelectStmt(); sel != nil {
		u.selectStmt(sel, false, usePrinted)
		return
	}
	u.generic(n)
}

// fromItem records the uses in a FROM item.
func (u *numericTextUse) fromItem(n *pg_query.Node) {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_RangeVar:
	case *pg_query.Node_RangeSubselect:
		u.query(v.RangeSubselect.Subquery)
	case *pg_query.Node_JoinExpr:
		j := v.JoinExpr
		u.fromItem(j.Larg)
		u.fromItem(j.Rarg)
		u.expr(j.Quals, useValue)
		if j.IsNatural {
			u.wide = true
		}
		for _, name := range j.UsingClause {
			if s := name.GetString_(); s != nil {
				u.use[s.Sval] |= usePrinted // compared as DuckDB holds them
			}
		}
	default:
		u.generic(n)
	}
}

// window records the uses of a window definition: all by value.
func (u *numericTextUse) window(wd *pg_query.WindowDef) {
	for _, p := range wd.PartitionClause {
		u.expr(p, useValue)
	}
	u.sorts(wd.OrderClause)
	u.expr(wd.StartOffset, useValue)
	u.expr(wd.EndOffset, useValue)
}

// sorts records the uses of a window's or an aggregate's ORDER BY: by value.
func (u *numericTextUse) sorts(items []*pg_query.Node) {
	for _, s := range items {
		if sb := s.GetSortBy(); sb != nil {
			u.expr(sb.Node, useValue)
		} else {
			u.generic(s)
		}
	}
}

// asIs records a column reference used as it is.
func (u *numericTextUse) asIs(cr *pg_query.ColumnRef) {
	if name := lastField(cr); name != "" {
		u.use[name] |= useRaw
		u.raw[cr.Location] = true
		return
	}
	u.generic(&pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: cr}})
}

// mark records a column reference used in way.
func (u *numericTextUse) mark(cr *pg_query.ColumnRef, way uint8) {
	if isStarRef(cr) {
		u.wide = true
		return
	}
	if name := lastField(cr); name != "" {
		u.use[name] |= way
		if way == usePrinted {
			u.printedIn[name] = append(u.printedIn[name], u.target)
		}
	}
}

// scaleResetting are functions whose result's scale is their own, or
// that have none: their arguments are used by value.
var scaleResetting = map[string]bool{"round": true, "trunc": true, "floor": true, "ceil": true, "ceiling": true, "sign": true}

// scaleKeeping are functions whose result is one of their arguments' values
// (or their sum) with its scale: their arguments are used as they are.
var scaleKeeping = map[string]bool{"sum": true, "min": true, "max": true, "abs": true}

// expr records the uses in n, whose value is used in way (useValue or
// usePrinted).
func (u *numericTextUse) expr(n *pg_query.Node, way uint8) {
	if n == nil {
		return
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		u.mark(v.ColumnRef, way)
	case *pg_query.Node_AConst, *pg_query.Node_ParamRef:
	case *pg_query.Node_TypeCast:
		tc := v.TypeCast
		switch {
		case castTarget(tc, absorbingCasts) || castTarget(tc, numericTypeNames) && tc.TypeName != nil && len(tc.TypeName.Typmods) == 2:
			u.expr(tc.Arg, useValue)
		case unconstrainedNumeric(tc):
			u.expr(tc.Arg, way)
		default:
			u.expr(tc.Arg, usePrinted)
		}
	case *pg_query.Node_AExpr:
		u.aExpr(v.AExpr, way)
	case *pg_query.Node_BoolExpr:
		for _, a := range v.BoolExpr.Args {
			u.expr(a, useValue)
		}
	case *pg_query.Node_NullTest:
		if cr := v.NullTest.Arg.GetColumnRef(); cr != nil && !isStarRef(cr) {
			u.asIs(cr)
			return
		}
		u.expr(v.NullTest.Arg, useValue)
	case *pg_query.Node_BooleanTest:
		u.expr(v.BooleanTest.Arg, useValue)
	case *pg_query.Node_FuncCall:
		u.funcCall(v.FuncCall, way)
	case *pg_query.Node_CaseExpr:
		c := v.CaseExpr
		u.expr(c.Arg, useValue)
		for _, w := range c.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				u.expr(cw.Expr, useValue)
				u.expr(cw.Result, way)
			}
		}
		u.expr(c.Defresult, way)
	case *pg_query.Node_CoalesceExpr:
		for _, a := range v.CoalesceExpr.Args {
			u.expr(a, way)
		}
	case *pg_query.Node_MinMaxExpr:
		for _, a := range v.MinMaxExpr.Args {
			u.expr(a, way)
		}
	case *pg_query.Node_SubLink:
		s := v.SubLink
		switch s.SubLinkType {
		case pg_query.SubLinkType_EXISTS_SUBLINK:
			if sel := s.Subselect.GetSelectStmt(); sel != nil {
				u.selectStmt(sel, false, useValue)
				return
			}
		case pg_query.SubLinkType_EXPR_SUBLINK:
			if sel := s.Subselect.GetSelectStmt(); sel != nil {
				u.selectStmt(sel, false, way)
				return
			}
		case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
			if sel := s.Subselect.GetSelectStmt(); sel != nil && (len(s.OperName) == 0 || comparison(s.OperName)) {
				u.expr(s.Testexpr, useValue)
				u.selectStmt(sel, false, useValue)
				return
			}
		}
		u.generic(n)
	case *pg_query.Node_List:
		for _, i := range v.List.Items {
			u.expr(i, way)
		}
	default:
		u.generic(n)
	}
}

// comparison reports whether an operator name is a comparison.
func comparison(name []*pg_query.Node) bool {
	op, ok := stringsOf(name)
	if !ok || len(op) != 1 {
		return false
	}
	switch op[0] {
	case "=", "<>", "!=", "<", ">", "<=", ">=":
		return true
	}
	return false
}

func (u *numericTextUse) aExpr(e *pg_query.A_Expr, way uint8) {
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if comparison(e.Name) {
			u.expr(e.Lexpr, useValue)
			u.expr(e.Rexpr, useValue)
			return
		}
		switch divisionOp(e) {
		case "+", "-", "*", "%":
			u.expr(e.Lexpr, way)
			u.expr(e.Rexpr, way)
			return
		}
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		if comparison(e.Name) {
			u.expr(e.Lexpr, useValue)
			u.expr(e.Rexpr, useValue)
			return
		}
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg_query.A_Expr_Kind_AEXPR_IN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		u.expr(e.Lexpr, useValue)
		u.expr(e.Rexpr, useValue)
		return
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		u.expr(e.Lexpr, way) // its value, or NULL
		u.expr(e.Rexpr, useValue)
		return
	}
	u.generic(&pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: e}})
}

func (u *numericTextUse) funcCall(fc *pg_query.FuncCall, way uint8) {
	name := funcName(fc)
	if len(fc.Funcname) > 1 {
		if s, ok := builtinName(fc.Funcname); !ok || s != name {
			name = "" // another schema's function
		}
	}
	args := way
	switch {
	case fc.AggWithinGroup || fc.FuncVariadic:
		args = usePrinted
	case name == "count" && !fc.AggDistinct:
		for _, a := range fc.Args {
			if cr := a.GetColumnRef(); cr != nil && !isStarRef(cr) {
				u.asIs(cr)
			} else {
				u.expr(a, useValue)
			}
		}
		args = 0
	case name == "count":
		args = useValue
	case scaleResetting[name]:
		args = useValue
	case scaleKeeping[name]:
		if fc.AggDistinct {
			args = usePrinted // which of equal values of other scales is summed
		}
	default:
		args = usePrinted
	}
	if args != 0 {
		for _, a := range fc.Args {
			u.expr(a, args)
		}
	}
	u.sorts(fc.AggOrder)
	u.expr(fc.AggFilter, useValue)
	if fc.Over != nil {
		u.window(fc.Over)
	}
}

// generic records every column reference under n as printed, and every *
// as wide.
func (u *numericTextUse) generic(n proto.Message) {
	if n == nil {
		return
	}
	walk(n, refMarker{u})
}

type refMarker struct{ u *numericTextUse }

func (m refMarker) enter(msg proto.Message, _ *walker) {
	if cr, ok := msg.(*pg_query.ColumnRef); ok {
		m.u.mark(cr, usePrinted)
	}
}

// numericTextHazard says why the statement cannot read the numerics held
// as text of r's datasets as it uses them, or "".
func (a *analysis) numericTextHazard(r resolution) string {
	if why := a.arrayBinaryHazard(r); why != "" {
		return why
	}
	names := r.textNums
	if len(names) == 0 {
		return ""
	}
	u := a.numText
	if u == nil {
		return "a statement that reads a numeric column held as text"
	}
	if u.wide {
		for name := range names {
			return "column " + name + " holds numerics of mixed display scales (or NaN, Infinity), as text, and the statement reads every column where their scale may show (a * inside the statement, NATURAL JOIN, a whole row)"
		}
	}
	for name, c := range names {
		way := u.use[name]
		if way == 0 {
			continue
		}
		if anyColumn(r, name, notNumericText) {
			return "column " + name + " holds numerics as text in one dataset of the statement and not in another"
		}
		for _, def := range a.aliasDefs[name] {
			if cr := def.GetColumnRef(); cr == nil || lastField(cr) != name {
				return "column " + name + " holds numerics as text, and the statement names an output " + name + " too"
			}
		}
		if way&usePrinted != 0 && !tracked(a, r, u.printedIn[name]) {
			return "column " + name + " holds numerics of mixed display scales (or NaN, Infinity), as text: the statement prints or compares a value of it whose display scale the acceleration does not follow (only the column as it is, comparisons, sorting and grouping by value are accelerated)"
		}
		if way&useValue != 0 && c.ValueScale == nil {
			return "column " + name + " holds NaN or Infinity (or more than 38 digits), as text: only the column as it is is accelerated"
		}
	}
	return ""
}

// tracked reports whether every output of the positions printed is one
// whose scale the scale tracking follows for r.
func tracked(a *analysis, r resolution, printed []int) bool {
	if a.pass != nil || !r.scale.ok || len(printed) == 0 {
		return false
	}
	for _, p := range printed {
		if p < 0 || !slices.Contains(r.scale.pos, p) {
			return false
		}
	}
	return true
}

// arrayBinaryHazard says why the statement cannot read the arrays held as
// Postgres sends them (catalog.ColumnInfo.ArrayBinary) of r's datasets as
// it uses them, or "": only as they are.
func (a *analysis) arrayBinaryHazard(r resolution) string {
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if !c.ArrayBinary || !c.Accelerated {
				continue
			}
			why := "column " + c.Name + " holds multi-dimensional arrays (or lower bounds other than 1), as Postgres sends them: only the column as it is (a bare output, *, count, IS NULL) is accelerated"
			u := a.numText
			if u == nil || u.wide {
				return why
			}
			if way := u.use[c.Name]; way&^useRaw != 0 || way != 0 && anyColumn(r, c.Name, func(c catalog.ColumnInfo) bool { return !c.ArrayBinary }) {
				return why
			}
		}
	}
	return ""
}

// readsHeldAsIs reports whether the statement may read a column of r's
// datasets held as Postgres sends it (a numeric as text, an array as its
// binary form): the point index does not serve it.
func readsHeldAsIs(a *analysis, r resolution) bool {
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if !c.Accelerated || !c.NumericText && !c.ArrayBinary {
				continue
			}
			if a.numText == nil || a.numText.wide || a.cols.star || a.cols.natural || a.numText.use[c.Name] != 0 {
				return true
			}
		}
	}
	return false
}

// numericTextNames are the accelerated numeric-text columns of r's
// datasets by name.
func numericTextNames(r resolution) map[string]catalog.ColumnInfo {
	var out map[string]catalog.ColumnInfo
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if !c.NumericText || !c.Accelerated {
				continue
			}
			if out == nil {
				out = map[string]catalog.ColumnInfo{}
			}
			if prev, ok := out[c.Name]; ok {
				// One reading for every column of the name: the greatest
				// scale, at the widest width.
				if prev.ValueScale == nil || c.ValueScale == nil {
					c.ValueScale = nil
				} else if *prev.ValueScale > *c.ValueScale {
					c.ValueScale = prev.ValueScale
				}
				c.ValueWidth = 38
			}
			out[c.Name] = c
		}
	}
	return out
}

// anyColumn reports whether a dataset of r has a column of that name for
// which is holds.
func anyColumn(r resolution, name string, is func(catalog.ColumnInfo) bool) bool {
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if c.Name == name && is(c) {
				return true
			}
		}
	}
	return false
}

// heldNumerics rewrites, in stmt, each reference to a numeric column held
// as text that is not used as it is into its value (see the top of the
// file).
func heldNumerics(stmt *pg_query.Node, a *analysis, r resolution) {
	names := r.textNums
	if len(names) == 0 || a.numText == nil {
		return
	}
	f := &heldRefFinder{names: names, raw: a.numText.raw}
	walk(stmt, f)
	for _, s := range f.sites {
		c := names[lastField(s.ref)]
		if c.ValueScale == nil {
			continue // numericTextHazard refused a use by value
		}
		scale, width := *c.ValueScale, c.ValueWidth
		if width < scale || width > 38 {
			width = 38
		}
		ref := &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: s.ref}}
		held := fnCall(pgdef.FuncNumericHeld, ref, pg_query.MakeAConstIntNode(int64(scale), -1))
		s.node.Node = &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg: held,
			TypeName: &pg_query.TypeName{
				Names:   []*pg_query.Node{pg_query.MakeStrNode("decimal")},
				Typmods: []*pg_query.Node{pg_query.MakeAConstIntNode(int64(width), -1), pg_query.MakeAConstIntNode(int64(scale), -1)},
				Typemod: -1, Location: -1,
			},
			Location: -1,
		}}
	}
	heldAvgs(stmt)
}

// heldAvgs gives each exact avg of a numeric held as text (exactavg.go's
// pgaccel_numeric_avg(sum(x)::text, count(x)), x read by value) the sum at
// the display scale Postgres's sum has, the greatest of its values':
// numeric_avg divides at a scale that depends on it.
func heldAvgs(stmt *pg_query.Node) {
	var calls []*pg_query.FuncCall
	walk(stmt, visitFunc(func(m proto.Message, _ *walker) {
		if fc, ok := m.(*pg_query.FuncCall); ok && funcName(fc) == pgdef.FuncNumericAvg && len(fc.Args) == 2 {
			calls = append(calls, fc)
		}
	}))
	for _, fc := range calls {
		tc := fc.Args[0].GetTypeCast()
		if tc == nil {
			continue
		}
		sum := tc.Arg.GetFuncCall()
		if sum == nil || funcName(sum) != "sum" || len(sum.Args) != 1 || sum.Args[0].GetTypeCast() == nil || heldText(sum.Args[0].GetTypeCast()) == nil {
			continue
		}
		scale, ok := scaleExpr(tc.Arg, nil)
		if !ok {
			continue
		}
		fc.Args[0] = fnCall(pgdef.FuncNumericScale, fc.Args[0], scale)
	}
}

// refSite is a column reference and the Node that holds it.
type refSite struct {
	node *pg_query.Node
	ref  *pg_query.ColumnRef
}

type heldRefFinder struct {
	names map[string]catalog.ColumnInfo
	raw   map[int32]bool
	sites []refSite
}

func (f *heldRefFinder) enter(m proto.Message, w *walker) {
	cr, ok := m.(*pg_query.ColumnRef)
	if !ok || w.node() == nil {
		return
	}
	if _, held := f.names[lastField(cr)]; !held || cr.Location >= 0 && f.raw[cr.Location] {
		return
	}
	f.sites = append(f.sites, refSite{node: w.node(), ref: cr})
}

func notNumericText(c catalog.ColumnInfo) bool { return !c.NumericText }
