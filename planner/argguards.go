package planner

import (
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
	case *pg_query.FuncCall:
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
	switch name := funcName(f); {
	case name == "mod" && len(f.Args) == 2:
		arg(1, isZero, "division by zero")
	case name == "split_part" && len(f.Args) == 3:
		arg(2, isZero, "field position must not be zero")
	case (name == "lpad" || name == "rpad") && len(f.Args) >= 2:
		arg(1, func(n *pg_query.Node) *pg_query.Node { return binOp(">", n, intNode(maxPadLength)) }, "requested length too large")
	case name == "repeat" && len(f.Args) == 2:
		arg(1, func(n *pg_query.Node) *pg_query.Node {
			return binOp(">", binOp("*", fnCall("length", copyNode(f.Args[0])), n), intNode(maxPadLength))
		}, "requested length too large")
	case (name == "right" || name == "left") && len(f.Args) == 2:
		// |n| of the smallest integer overflows in Postgres.
		arg(1, func(n *pg_query.Node) *pg_query.Node { return binOp("=", n, intNode(-2147483648)) }, "integer out of range")
	}
}

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
