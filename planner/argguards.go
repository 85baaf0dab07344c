package planner

import (
	"math/big"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Arguments Postgres checks and DuckDB does not. Where Postgres raises an
// error for an argument (a count that must be positive, a position that
// must not be zero, a divisor), DuckDB answers a value: NULL, an empty
// string, an element counted from the end. Such arguments are either
// refused at analysis, when they must be constants to be checked
// (checkArgs: window functions' counts and frame offsets, shift amounts),
// or guarded in the rewrite (guardArgs): the argument becomes
//
//	CASE WHEN <Postgres's check fails> THEN error('...') ELSE arg END
//
// so that DuckDB fails where Postgres does and the statement falls back to
// the origin, which reports its own error. Guards may send to the origin
// more than Postgres refuses (lpad's limit is lower than Postgres's); never
// less.

// maxPadLength bounds the lengths lpad, rpad and repeat may make locally:
// Postgres refuses results over 1 GB ("requested length too large"), and an
// answer near that size is no acceleration's to give.
const maxPadLength = 10 << 20

// checkArgs returns why a call or operator's arguments cannot be checked
// as Postgres checks them, or "".
func checkArgs(m any) string {
	switch n := m.(type) {
	case *pg_query.SelectStmt:
		if n.HavingClause != nil && hasGroupingSets(n) && !containsAggregate(n.HavingClause) {
			// Postgres keeps such a HAVING above the aggregation, which
			// computes (and raises the errors of) every aggregate's
			// argument; DuckDB may drop the aggregation when the
			// condition is constant (HAVING false) and raise nothing.
			return "a HAVING without aggregates over grouping sets (Postgres computes the aggregates first, DuckDB may not)"
		}
	case *pg_query.SubLink:
		if sel := n.Subselect.GetSelectStmt(); n.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK && sel != nil &&
			(len(sel.GroupClause) > 0 || sel.HavingClause != nil || aggregateTargets(sel)) && !plainTargets(sel) {
			// Postgres evaluates the select list of a grouped EXISTS
			// subquery (and raises its errors); DuckDB never does.
			return "EXISTS over a grouped subquery whose select list computes values (Postgres evaluates them)"
		}
	case *pg_query.JoinExpr:
		if n.Jointype == pg_query.JoinType_JOIN_FULL && n.Quals != nil && !equalityConjuncts(n.Quals) {
			// Postgres runs a FULL JOIN by merge or hash only: on anything
			// but equalities it raises 0A000; DuckDB answers.
			return "a FULL JOIN on a condition other than equalities (Postgres refuses it)"
		}
	case *pg_query.A_Const:
		if s, ok := n.Val.(*pg_query.A_Const_Sval); ok && bcLiteral(s.Sval.Sval) {
			// '0044-03-15 BC': DuckDB reads it as 44 AD.
			return "a date or time literal of a year BC"
		}
	case *pg_query.FuncCall:
		if why := checkTimeArgs(n); why != "" {
			return why
		}
		if why := constArgRaises(n); why != "" {
			return why
		}
		if funcName(n) == "split_part" && len(n.Args) == 3 {
			if d, ok := constString(n.Args[1]); ok && d == "" {
				return "split_part with an empty delimiter (Postgres keeps the whole string, DuckDB splits it into characters)"
			}
		}
		switch funcName(n) {
		case "nth_value":
			if len(n.Args) != 2 || !positiveIntConst(n.Args[1]) {
				return "nth_value whose position is not a positive integer constant (Postgres checks it, DuckDB answers NULL)"
			}
		case "ntile":
			if len(n.Args) != 1 || !positiveIntConst(n.Args[0]) {
				return "ntile whose count is not a positive integer constant (Postgres checks it)"
			}
		}
		if w := n.Over; w != nil {
			if why := checkFrame(w); why != "" {
				return why
			}
		}
	case *pg_query.WindowDef:
		return checkFrame(n)
	case *pg_query.A_Expr:
		if constRaises(n) {
			return "integer arithmetic of constants that Postgres refuses while it plans the statement (overflow or division by zero)"
		}
		if n.Kind == pg_query.A_Expr_Kind_AEXPR_OP && n.Lexpr != nil && n.Rexpr != nil {
			switch divisionOp(n) {
			case "<<", ">>":
				if c, ok := constInt(n.Rexpr); !ok || c < 0 || c > 15 {
					return "a shift by an amount that is not a constant from 0 to 15 (Postgres shifts by it modulo the width, DuckDB gives 0)"
				}
			}
		}
	}
	return ""
}

// checkFrame returns why a window's frame offsets cannot be checked: they
// must be constants that are not negative (Postgres raises "frame starting
// offset must not be negative", DuckDB answers).
func checkFrame(w *pg_query.WindowDef) string {
	for _, off := range []*pg_query.Node{w.StartOffset, w.EndOffset} {
		if off == nil {
			continue
		}
		if !nonNegativeConst(off) {
			return "a window frame offset that is not a constant of 0 or more (Postgres checks it)"
		}
	}
	return ""
}

// constInt returns n's value when n is an integer constant.
func constInt(n *pg_query.Node) (int64, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	c := n.GetAConst()
	if c == nil || c.Isnull {
		return 0, false
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		return int64(v.Ival.Ival), true
	case *pg_query.A_Const_Fval:
		i, err := strconv.ParseInt(v.Fval.Fval, 10, 64)
		return i, err == nil
	}
	return 0, false
}

func positiveIntConst(n *pg_query.Node) bool {
	c, ok := constInt(n)
	return ok && c > 0
}

// nonNegativeConst reports whether n is a constant that is not negative:
// a number, or a string (an interval of RANGE frames) without a minus
// sign.
func nonNegativeConst(n *pg_query.Node) bool {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	c := n.GetAConst()
	if c == nil || c.Isnull {
		return false
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		return v.Ival.Ival >= 0
	case *pg_query.A_Const_Fval:
		return !strings.HasPrefix(v.Fval.Fval, "-")
	case *pg_query.A_Const_Sval:
		return !strings.Contains(v.Sval.Sval, "-") && !strings.Contains(strings.ToLower(v.Sval.Sval), "ago")
	}
	return false
}

// guardArgs puts Postgres's argument checks of call f in front of DuckDB
// (rewrite).
func guardArgs(f *pg_query.FuncCall) {
	if f.Over != nil || f.AggStar {
		return
	}
	arg := func(i int, cond func(*pg_query.Node) *pg_query.Node, msg string) {
		if i < len(f.Args) {
			f.Args[i] = guardValue(f.Args[i], cond, msg)
		}
	}
	// inRange guards an argument that must be within [lo, hi]; a constant
	// is judged here.
	inRange := func(i int, lo, hi int64, msg string) {
		if i >= len(f.Args) {
			return
		}
		if c, ok := constInt(f.Args[i]); ok && c >= lo && c <= hi {
			return // a constant in range
		}
		// (A bare error() as an argument DuckDB folds to NULL: the CASE
		// form raises.)
		arg(i, func(n *pg_query.Node) *pg_query.Node { return outside(n, lo, hi) }, msg)
	}
	switch name := funcName(f); {
	case name == "mod" && len(f.Args) == 2:
		arg(1, isZero, "division by zero")
	case name == "split_part" && len(f.Args) == 3:
		arg(2, isZero, "field position must not be zero")
		if !isStringConst(f.Args[1]) {
			// An empty delimiter: Postgres keeps the whole string as one
			// field, DuckDB splits it into characters.
			arg(1, func(n *pg_query.Node) *pg_query.Node { return binOp("=", n, pg_query.MakeAConstStrNode("", -1)) }, "an empty delimiter (Postgres splits otherwise)")
		}
	case (name == "lpad" || name == "rpad") && len(f.Args) >= 2:
		arg(1, func(n *pg_query.Node) *pg_query.Node { return binOp(">", n, intNode(maxPadLength)) }, "requested length too large")
	case name == "repeat" && len(f.Args) == 2:
		arg(1, func(n *pg_query.Node) *pg_query.Node {
			return binOp(">", binOp("*", fnCall("length", copyNode(f.Args[0])), n), intNode(maxPadLength))
		}, "requested length too large")
	case name == "make_date" && len(f.Args) == 3:
		// Postgres's year -44 is 44 BC, DuckDB's 45 BC; year 0 and fields
		// out of range are errors.
		inRange(0, 1, 1<<31-1, "date field value out of range")
		inRange(1, 1, 12, "date field value out of range")
		inRange(2, 1, 31, "date field value out of range")
	case name == "make_time" && len(f.Args) == 3:
		// make_time(24, 0, 0) is 24:00:00 in Postgres, 00:00:00 in DuckDB.
		inRange(0, 0, 23, "time field value out of range")
		inRange(1, 0, 59, "time field value out of range")
		if _, ok := constInt(f.Args[2]); ok {
			inRange(2, 0, 59, "time field value out of range")
		} else {
			arg(2, func(n *pg_query.Node) *pg_query.Node {
				return or(binOp("<", n, intNode(0)), binOp(">=", copyNode(n), intNode(60)))
			}, "time field value out of range")
		}
	case name == "chr" && len(f.Args) == 1:
		inRange(0, 1, 1114111, "requested character not valid")
	case name == "string_agg" && len(f.Args) == 2 && !isStringConst(f.Args[1]):
		// A NULL delimiter is none in Postgres; DuckDB's answer is NULL.
		f.Args[1] = &pg_query.Node{Node: &pg_query.Node_CoalesceExpr{CoalesceExpr: &pg_query.CoalesceExpr{
			Args: []*pg_query.Node{f.Args[1], pg_query.MakeAConstStrNode("", -1)}, Location: -1}}}
	case (name == "right" || name == "left") && len(f.Args) == 2:
		// |n| of the smallest integer overflows in Postgres.
		arg(1, func(n *pg_query.Node) *pg_query.Node { return binOp("=", n, intNode(-2147483648)) }, "integer out of range")
	}
}

// outside is n < lo OR n > hi.
func outside(n *pg_query.Node, lo, hi int64) *pg_query.Node {
	return or(binOp("<", n, intNode(lo)), binOp(">", copyNode(n), intNode(hi)))
}

// equalityConjuncts reports whether n is an equality or an AND of them.
func equalityConjuncts(n *pg_query.Node) bool {
	if b := n.GetBoolExpr(); b != nil {
		if b.Boolop != pg_query.BoolExprType_AND_EXPR {
			return false
		}
		for _, arg := range b.Args {
			if !equalityConjuncts(arg) {
				return false
			}
		}
		return true
	}
	e := n.GetAExpr()
	return e != nil && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && divisionOp(e) == "=" && e.Lexpr != nil && e.Rexpr != nil
}

// bcLiteral reports whether s may be a date or time literal of a year BC
// ("0044-03-15 BC", "44 BC"): a digit, then BC as a word.
func bcLiteral(s string) bool {
	low := strings.ToLower(s)
	for i := strings.Index(low, "bc"); i >= 0; {
		before := strings.TrimRight(low[:i], " ")
		after := low[i+2:]
		if len(before) > 0 && before[len(before)-1] >= '0' && before[len(before)-1] <= '9' && (after == "" || !isLetter(after[0])) {
			return true
		}
		j := strings.Index(low[i+2:], "bc")
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// guardValue returns CASE WHEN cond(v) THEN error(msg) ELSE v END.
func guardValue(v *pg_query.Node, cond func(*pg_query.Node) *pg_query.Node, msg string) *pg_query.Node {
	out := &pg_query.Node{}
	guard(out, v, []check{{cond(copyNode(v)), msg}})
	return out
}

// copyNode is a copy of n, for a condition on it (the tree must not share
// nodes).
func copyNode(n *pg_query.Node) *pg_query.Node { return proto.Clone(n).(*pg_query.Node) }

func intNode(v int64) *pg_query.Node {
	if v >= -2147483648 && v <= 2147483647 {
		return pg_query.MakeAConstIntNode(v, -1)
	}
	return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Fval{Fval: &pg_query.Float{Fval: strconv.FormatInt(v, 10)}}, Location: -1}}}
}

// guardSubscript makes DuckDB's subscripts count as Postgres's do for an
// array that starts at 1 (the only ones an acceleration holds): DuckDB
// counts a negative subscript from the end, where Postgres finds no
// element (a[-1] is NULL) and a slice bound below 1 stands for 1 (lower)
// or for an empty slice (upper).
func guardSubscript(ix *pg_query.A_Indices) {
	below1 := func(n, then *pg_query.Node) *pg_query.Node {
		if n == nil || n.GetAConst() != nil && !n.GetAConst().Isnull {
			if c, ok := constInt(n); !ok || c >= 1 {
				return n // a constant of 1 or more (or a key: jsonb)
			}
		}
		out := &pg_query.Node{}
		ce := &pg_query.CaseExpr{Defresult: n, Location: -1}
		ce.Args = []*pg_query.Node{{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
			Expr: binOp("<", copyNode(n), pg_query.MakeAConstIntNode(1, -1)), Result: then, Location: -1}}}}
		out.Node = &pg_query.Node_CaseExpr{CaseExpr: ce}
		return out
	}
	if !ix.IsSlice {
		ix.Uidx = below1(ix.Uidx, &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}})
		return
	}
	ix.Lidx = below1(ix.Lidx, pg_query.MakeAConstIntNode(1, -1))
	ix.Uidx = below1(ix.Uidx, pg_query.MakeAConstIntNode(0, -1))
}

// int4Results are functions whose result is an integer in Postgres and a
// bigint in DuckDB: the rewrite casts them to INTEGER, so that arithmetic
// of them overflows where Postgres's does (length(x) - c_int4).
var int4Results = map[string]bool{
	"length": true, "char_length": true, "character_length": true, "octet_length": true, "strpos": true,
	"array_length": true, "cardinality": true, "array_position": true, "ntile": true,
}

// guardNarrowing makes a cast of a wider number to smallint or integer
// fail in DuckDB where Postgres's fails: DuckDB's optimizer drops such a
// cast inside a comparison (n::int4 > 0 of a bigint n beyond integer never
// overflows there).
func guardNarrowing(wrapper *pg_query.Node, tc *pg_query.TypeCast, a *analysis, r resolution) {
	if wrapper == nil || wrapper.GetTypeCast() != tc || tc.Arg == nil || tc.Arg.GetAConst() != nil {
		return
	}
	lo, hi := int64(-2147483648), int64(2147483647)
	switch {
	case castTarget(tc, map[string]bool{"int2": true, "smallint": true}):
		lo, hi = -32768, 32767
	case castTarget(tc, map[string]bool{"int4": true, "int": true, "integer": true}):
	default:
		return
	}
	switch k := a.kindOf(r, tc.Arg, 0); {
	case k == kindInt8 || k == kindFloat8 || k == kindInt4 && hi == 32767:
	case a.numericValue(r, tc.Arg):
	default:
		return
	}
	cast := &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: tc}}
	x := copyNode(tc.Arg)
	// A double rounds first: Postgres's rint, then the range check.
	if a.kindOf(r, tc.Arg, 0) == kindFloat8 {
		x = fnCall("round", x)
	}
	guard(wrapper, cast, []check{{outside(x, lo, hi), "integer out of range"}})
}

// guardedValue is the value a guard of ours (guardValue, guardDivisor)
// wraps, or n itself: CASE WHEN ... THEN error(...) [...] ELSE v END is v.
func guardedValue(n *pg_query.Node) *pg_query.Node {
	for {
		c := n.GetCaseExpr()
		if c == nil || c.Arg != nil || c.Defresult == nil || len(c.Args) == 0 {
			return n
		}
		for _, w := range c.Args {
			fc := w.GetCaseWhen().GetResult().GetFuncCall()
			if fc == nil || funcName(fc) != "error" {
				return n
			}
		}
		n = c.Defresult
	}
}

// Constant expressions. Postgres evaluates an expression of constants
// while it plans the statement (eval_const_expressions), so its error
// comes whatever the rows: SELECT 1 / 0 FROM t WHERE false fails there.
// DuckDB evaluates such an expression per row, or in a wider type
// ((-2147483648) * (-2147483648) does not overflow there). constRaises
// finds the integer arithmetic of constants that raises in Postgres; the
// statement goes to the origin, which reports it. (The argument checks of
// checkArgs judge constant arguments the same way.)

// constRaises reports whether e, arithmetic of integer constants, raises
// in Postgres (overflow of its integer type, division by zero).
func constRaises(e *pg_query.A_Expr) bool {
	_, _, raises := constIntValue(&pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: e}}, 0)
	return raises
}

// constIntValue evaluates integer arithmetic of constants as Postgres does:
// the value, whether it is an int8 (else an int4), and whether the
// evaluation raises. ok is false when n is not such an expression.
func constIntValue(n *pg_query.Node, depth int) (v int64, wide bool, raises bool) {
	v, wide, raises, _ = constInt64(n, depth)
	return v, wide, raises
}

func constInt64(n *pg_query.Node, depth int) (v int64, wide, raises, ok bool) {
	if n == nil || depth > 32 {
		return 0, false, false, false
	}
	switch x := n.GetNode().(type) {
	case *pg_query.Node_AConst:
		switch c := x.AConst.Val.(type) {
		case *pg_query.A_Const_Ival:
			return int64(c.Ival.Ival), false, false, true
		case *pg_query.A_Const_Fval:
			i, err := strconv.ParseInt(c.Fval.Fval, 10, 64)
			if err != nil {
				return 0, false, false, false // a numeric
			}
			return i, true, false, true
		}
	case *pg_query.Node_TypeCast:
		switch {
		case castTarget(x.TypeCast, map[string]bool{"int8": true, "bigint": true}):
			v, _, raises, ok := constInt64(x.TypeCast.Arg, depth+1)
			return v, true, raises, ok
		case castTarget(x.TypeCast, map[string]bool{"int4": true, "int": true, "integer": true}):
			v, _, raises, ok := constInt64(x.TypeCast.Arg, depth+1)
			if ok && (v < -2147483648 || v > 2147483647) {
				raises = true
			}
			return v, false, raises, ok
		}
	case *pg_query.Node_AExpr:
		e := x.AExpr
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
			return 0, false, false, false
		}
		op := divisionOp(e)
		if e.Lexpr == nil { // unary
			r, w, rr, ok := constInt64(e.Rexpr, depth+1)
			if !ok || op != "-" {
				return 0, false, false, false
			}
			if rr {
				return 0, w, true, true
			}
			if w && r == -9223372036854775808 || !w && r == -2147483648 {
				return 0, w, true, true
			}
			return -r, w, false, true
		}
		l, lw, lr, lok := constInt64(e.Lexpr, depth+1)
		r, rw, rr, rok := constInt64(e.Rexpr, depth+1)
		if !lok || !rok {
			return 0, false, false, false
		}
		wide := lw || rw
		if lr || rr {
			return 0, wide, true, true
		}
		lo, hi := int64(-2147483648), int64(2147483647)
		if wide {
			lo, hi = -9223372036854775808, 9223372036854775807
		}
		var res *big.Int
		bl, br := big.NewInt(l), big.NewInt(r)
		switch op {
		case "+":
			res = new(big.Int).Add(bl, br)
		case "-":
			res = new(big.Int).Sub(bl, br)
		case "*":
			res = new(big.Int).Mul(bl, br)
		case "/", "%":
			if r == 0 {
				return 0, wide, true, true
			}
			if op == "/" {
				res = new(big.Int).Quo(bl, br)
			} else {
				res = new(big.Int).Rem(bl, br)
			}
		default:
			return 0, false, false, false
		}
		if res.Cmp(big.NewInt(lo)) < 0 || res.Cmp(big.NewInt(hi)) > 0 {
			return 0, wide, true, true
		}
		return res.Int64(), wide, false, true
	}
	return 0, false, false, false
}

// constArgRaises returns why a call raises in Postgres for its constant
// arguments alone (Postgres evaluates it while planning, whatever the
// rows), or "".
func constArgRaises(f *pg_query.FuncCall) string {
	outOf := func(i int, lo, hi int64) bool {
		if i >= len(f.Args) {
			return false
		}
		c, ok := constInt(f.Args[i])
		return ok && (c < lo || c > hi)
	}
	allConst := true
	for _, a := range f.Args {
		if _, ok := constInt(a); !ok && !isStringConst(a) {
			allConst = false
		}
	}
	if !allConst {
		return ""
	}
	raises := false
	switch name := funcName(f); {
	case name == "make_date" && len(f.Args) == 3:
		raises = outOf(0, 1, 1<<31-1) || outOf(1, 1, 12) || outOf(2, 1, 31)
	case name == "make_time" && len(f.Args) == 3:
		raises = outOf(0, 0, 23) || outOf(1, 0, 59) || outOf(2, 0, 59)
	case name == "chr" && len(f.Args) == 1:
		raises = outOf(0, 1, 1114111)
	case name == "mod" && len(f.Args) == 2:
		c, ok := constInt(f.Args[1])
		raises = ok && c == 0
	case name == "split_part" && len(f.Args) == 3:
		c, ok := constInt(f.Args[2])
		d, dok := constString(f.Args[1])
		raises = ok && c == 0 || dok && d == ""
	}
	if raises {
		return "a call of " + funcName(f) + " whose constant arguments Postgres refuses while it plans the statement (or answers otherwise)"
	}
	return ""
}

// plainTargets reports whether sel's select list is constants, columns
// and stars only.
func plainTargets(sel *pg_query.SelectStmt) bool {
	for _, t := range sel.TargetList {
		v := t.GetResTarget().GetVal()
		if v.GetAConst() == nil && v.GetColumnRef() == nil {
			return false
		}
	}
	return true
}

// rewriteRowNullTest spells ROW(a, b) IS [NOT] NULL out field by field:
// in Postgres a row IS NULL when every field is NULL and IS NOT NULL when
// none is; DuckDB tests the struct itself, which is never NULL. A field
// that is itself a row is refused (Postgres looks into it).
func rewriteRowNullTest(holder *pg_query.Node, t *pg_query.NullTest) error {
	row := t.Arg.GetRowExpr()
	if holder.GetNullTest() != t || row == nil || len(row.Args) == 0 {
		return refuse("a NULL test of a row")
	}
	var tests []*pg_query.Node
	for _, f := range row.Args {
		if f.GetRowExpr() != nil || f.GetColumnRef() != nil && lastField(f.GetColumnRef()) == "" {
			return refuse("a NULL test of a row holding a row")
		}
		tests = append(tests, &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
			Arg: f, Nulltesttype: t.Nulltesttype, Location: -1}}})
	}
	if len(tests) == 1 {
		holder.Node = tests[0].Node
		return nil
	}
	holder.Node = pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, tests, -1).Node
	return nil
}

// aggregateTargets reports whether sel's select list calls an aggregate.
func aggregateTargets(sel *pg_query.SelectStmt) bool {
	for _, t := range sel.TargetList {
		if containsAggregate(t) {
			return true
		}
	}
	return false
}

// hasGroupingSets reports whether sel groups by ROLLUP, CUBE, GROUPING
// SETS or () (Postgres moves a HAVING without aggregates below the
// aggregation only when there are none).
func hasGroupingSets(sel *pg_query.SelectStmt) bool {
	for _, g := range sel.GroupClause {
		if g.GetGroupingSet() != nil {
			return true
		}
	}
	return false
}

// containsAggregate reports whether n calls an aggregate (not a window
// function).
func containsAggregate(n *pg_query.Node) bool {
	found := false
	walk(n, visitFunc(func(m proto.Message, _ *walker) {
		if fc, ok := m.(*pg_query.FuncCall); ok && fc.Over == nil && (fc.AggStar || isAggregate(funcName(fc))) {
			found = true
		}
	}))
	return found
}

// isAggregate reports whether name is an aggregate the planner knows
// (Describe's, the order-sensitive ones, and the ordered-set ones).
func isAggregate(name string) bool {
	return aggregates[name] || orderSensitiveAggs[name] || name == "percentile_cont" || name == "percentile_disc"
}
