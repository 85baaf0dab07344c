package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

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
