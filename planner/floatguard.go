package planner

import (
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Double precision errors. Postgres raises 22003 (value out of range:
// overflow, underflow) where a double precision +, -, *, / of finite
// operands comes out infinite, or a * or / of non-zero ones comes out
// zero (float.h's float_overflow_error), and 2201E / 2201F where sqrt,
// ln, log, exp and power leave their domain (float.c); DuckDB answers
// Infinity, 0, NaN or NULL. The rewrite puts Postgres's checks in front of
// those operations whose operands the planner knows to be double
// precision or integers (divkinds.go):
//
//	a * b   becomes   CASE WHEN <a * b overflowed or underflowed> THEN error(...) ELSE a * b END
//
// so DuckDB fails and the statement falls back to the origin, which
// reports its own error.

// guardFloats walks the rewritten tree and guards its double precision
// arithmetic and functions.
func guardFloats(tree proto.Message, a *analysis, r resolution) {
	walk(tree, &floatGuard{a: a, r: r})
}

type floatGuard struct {
	a *analysis
	r resolution
}

func (g *floatGuard) kind(n *pg_query.Node) valueKind { return g.a.kindOf(g.r, n, 0) }

// real reports whether n is a double precision or an integer (which
// Postgres's float functions take as a double precision).
func (g *floatGuard) real(n *pg_query.Node) bool {
	switch g.kind(n) {
	case kindFloat8, kindInt4, kindInt8:
		return true
	}
	return false
}

func (g *floatGuard) enter(m proto.Message, w *walker) {
	wrapper := w.node()
	if wrapper == nil {
		return
	}
	c := func(n *pg_query.Node) *pg_query.Node { return proto.Clone(n).(*pg_query.Node) }
	switch n := m.(type) {
	case *pg_query.A_Expr:
		if n.Kind != pg_query.A_Expr_Kind_AEXPR_OP || n.Lexpr == nil || n.Rexpr == nil {
			return
		}
		op := divisionOp(n)
		switch op {
		case "+", "-", "*", "/":
		case "^":
			// x ^ y is power(x, y): double precision unless both are
			// numerics.
			if g.realArgs(n.Lexpr, n.Rexpr) {
				v := &pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: n}}
				guard(wrapper, v, powerChecks(c, n.Lexpr, n.Rexpr, v))
			}
			return
		default:
			return
		}
		if op == "-" && g.dateValue(n.Lexpr) && g.dateValue(n.Rexpr) {
			// date - date: Postgres refuses infinite dates.
			l, r, v := n.Lexpr, n.Rexpr, &pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: n}}
			guard(wrapper, v, []check{{or(isInf(c(l)), isInf(c(r))), "cannot subtract infinite dates"}})
			return
		}
		if g.kind(wrapper) != kindFloat8 && !g.floatWithNumeric(n.Lexpr, n.Rexpr) {
			return
		}
		l, r, v := n.Lexpr, n.Rexpr, &pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: n}}
		over := and(isInf(c(v)), not(isInf(c(l))), not(isInf(c(unguarded(r)))))
		if op == "/" {
			over = and(isInf(c(v)), not(isInf(c(l))))
		}
		// An invalid operation (Infinity - Infinity, 0 * Infinity)
		// gives the processor's NaN in Postgres, whose sign bit DuckDB
		// clears: fall back.
		invalid := and(isNaN(c(v)), not(isNaN(c(l))), not(isNaN(c(unguarded(r)))))
		checks := []check{{over, "value out of range: overflow"}, {invalid, "NaN of an invalid operation"}}
		switch op {
		case "*":
			checks = append(checks, check{and(isZero(c(v)), notZero(c(l)), notZero(c(r))), "value out of range: underflow"})
		case "/":
			checks = append(checks, check{and(isZero(c(v)), notZero(c(l)), not(isInf(c(unguarded(r))))), "value out of range: underflow"})
		}
		guard(wrapper, v, checks)
	case *pg_query.FuncCall:
		if len(n.Funcname) != 1 || n.Over != nil || n.AggStar || len(n.Args) == 0 {
			return
		}
		if !g.realArgs(n.Args...) {
			return // a numeric's (Postgres's numeric function) or unknown
		}
		x := n.Args[0]
		v := &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: n}}
		var checks []check
		switch funcName(n) {
		case "sqrt":
			checks = []check{{binOp("<", c(x), zero()), "cannot take square root of a negative number"}}
		case "ln", "log", "log10":
			if len(n.Args) != 1 {
				return
			}
			checks = []check{{binOp("=", c(x), zero()), "cannot take logarithm of zero"},
				{binOp("<", c(x), zero()), "cannot take logarithm of a negative number"}}
		case "exp":
			checks = []check{{and(isInf(c(v)), not(isInf(c(x)))), "value out of range: overflow"},
				{and(isZero(c(v)), not(isInf(c(x)))), "value out of range: underflow"}}
		case "power", "pow":
			if len(n.Args) != 2 {
				return
			}
			checks = powerChecks(c, x, n.Args[1], v)
		case "degrees":
			checks = []check{{and(isInf(c(v)), not(isInf(c(x)))), "value out of range: overflow"}}
		case "radians":
			checks = []check{{and(isZero(c(v)), notZero(c(x))), "value out of range: underflow"}}
		default:
			return
		}
		guard(wrapper, v, checks)
	}
}

// realArgs reports whether Postgres resolves a function or operator of
// args to its double precision form: every argument a double precision,
// an integer or a decimal literal, and at least one not a literal of a
// numeric (a decimal literal beside integers only is a numeric).
func (g *floatGuard) realArgs(args ...*pg_query.Node) bool {
	float := false
	for _, arg := range args {
		switch g.kind(arg) {
		case kindFloat8:
			float = true
		case kindInt4, kindInt8:
		case kindNumLit:
			continue
		default:
			return false
		}
	}
	if float {
		return true
	}
	for _, arg := range args {
		if g.kind(arg) == kindNumLit {
			return false // numeric beside integers: the numeric form
		}
	}
	return true
}

// floatWithNumeric reports whether l op r is a double precision operation
// of a double precision and a numeric (Postgres casts the numeric to
// double precision; the planner's kinds call the pair unknown).
func (g *floatGuard) floatWithNumeric(l, r *pg_query.Node) bool {
	numeric := func(n *pg_query.Node) bool {
		if tc := n.GetTypeCast(); tc != nil && castTarget(tc, numericTypeNames) {
			return true
		}
		if g.kind(n) == kindNumLit || g.a.numericValue(g.r, n) {
			return true
		}
		_, ok := g.a.numericScaleOf(g.r, n, 0)
		return ok
	}
	lf, rf := g.kind(l) == kindFloat8, g.kind(r) == kindFloat8
	return lf && numeric(r) || rf && numeric(l)
}

// powerChecks are Postgres's errors of power(x, y) (dpow) for the value v.
func powerChecks(c func(*pg_query.Node) *pg_query.Node, x, y, v *pg_query.Node) []check {
	return []check{
		{and(binOp("=", c(x), zero()), binOp("<", c(y), zero())), "zero raised to a negative power is undefined"},
		{and(binOp("<", c(x), zero()), not(isInf(c(y))), binOp("<>", fnCall("floor", c(y)), c(y))),
			"a negative number raised to a non-integer power yields a complex result"},
		{and(isInf(c(v)), not(isInf(c(x))), not(isInf(c(y)))), "value out of range: overflow"},
		{and(isZero(c(v)), notZero(c(x)), not(isInf(c(x))), not(isInf(c(y)))), "value out of range: underflow"},
	}
}

// check is a condition under which Postgres raises the message.
type check struct {
	cond *pg_query.Node
	msg  string
}

// guard replaces wrapper's node by CASE WHEN check THEN error(msg) ...
// ELSE v END, v holding the node wrapper held.
func guard(wrapper, v *pg_query.Node, checks []check) {
	ce := &pg_query.CaseExpr{Defresult: v, Location: -1}
	for _, ch := range checks {
		fail := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("error")},
			[]*pg_query.Node{pg_query.MakeAConstStrNode(ch.msg, -1)}, -1)
		ce.Args = append(ce.Args, &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{Expr: ch.cond, Result: fail, Location: -1}}})
	}
	wrapper.Node = &pg_query.Node_CaseExpr{CaseExpr: ce}
}

func isInf(n *pg_query.Node) *pg_query.Node { return fnCall("isinf", n) }

func zero() *pg_query.Node { return pg_query.MakeAConstIntNode(0, -1) }

func isZero(n *pg_query.Node) *pg_query.Node  { return binOp("=", n, zero()) }
func notZero(n *pg_query.Node) *pg_query.Node { return binOp("<>", n, zero()) }

func not(n *pg_query.Node) *pg_query.Node {
	return pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{n}, -1)
}

func and(args ...*pg_query.Node) *pg_query.Node {
	return pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, args, -1)
}

func isNaN(n *pg_query.Node) *pg_query.Node { return fnCall("isnan", n) }

func or(args ...*pg_query.Node) *pg_query.Node {
	return pg_query.MakeBoolExprNode(pg_query.BoolExprType_OR_EXPR, args, -1)
}

// dateValue reports whether n is a date: a column whose every value is a
// date, or a cast to date.
func (g *floatGuard) dateValue(n *pg_query.Node) bool {
	if tc := n.GetTypeCast(); tc != nil {
		return castTarget(tc, dateTypeNames)
	}
	if vs, ok := passedValues(n); ok {
		// COALESCE, CASE, GREATEST, ... of dates.
		for _, v := range vs {
			if !g.dateValue(v) {
				return false
			}
		}
		return true
	}
	cr := n.GetColumnRef()
	if cr == nil || lastField(cr) == "" {
		return false
	}
	rule := nameRule{col: func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDDate }, expr: func(*pg_query.Node) bool { return false }}
	return g.a.safeName(g.r, lastField(cr), rule, 0)
}
