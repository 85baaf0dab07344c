package planner

import (
	"math/big"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// real (float4): Postgres computes a real mixed with other numbers in
// double precision (float48pl, float48eq...), DuckDB in single precision.
// Arithmetic on a value that may be a real goes to the origin (real op
// real too: Postgres checks its overflow), wherever the real comes from (a
// column, a cast, CASE, COALESCE, GREATEST, abs, lag, a subquery); so does
// a comparison of one with a value that is not a real, a double precision
// or a literal a real holds exactly.

// realHazard returns why the statement computes with or compares a real
// as DuckDB would not, or "".
func (t *typer) realHazard() string {
	ts := &t.a.types
	for _, n := range ts.arith {
		if t.typesOf(n)&tFloat4 != 0 {
			return "arithmetic on " + describeExpr(n) + ", which may be a real (float4): Postgres computes it in double precision beside other numbers, DuckDB in single precision"
		}
	}
	for _, p := range ts.pairs {
		l, r := t.typesOf(p.l), t.typesOf(p.r)
		if l&tFloat4 != 0 && !t.realComparable(p.r, r) || r&tFloat4 != 0 && !t.realComparable(p.l, l) {
			return "comparing a value that may be a real (float4) with one Postgres compares in double precision (DuckDB compares in single precision)"
		}
	}
	return ""
}

// realComparable reports whether comparing a real with n, of types s,
// compares alike in both engines: n is a real, a double precision (both
// compare in double precision), a string literal, a parameter or a NULL
// (which take the real's type), or a number literal a real holds exactly.
func (t *typer) realComparable(n *pg_query.Node, s typeSet) bool {
	if s == tFloat4 || n.GetParamRef() != nil || t.a.kindOf(t.r, n, 0) == kindFloat8 {
		return true
	}
	if tc := n.GetTypeCast(); tc != nil && castTarget(tc, float8TypeNames) {
		return true
	}
	c := n.GetAConst()
	if c == nil {
		return false
	}
	var q *big.Rat
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Sval:
		return true
	case *pg_query.A_Const_Ival:
		q = new(big.Rat).SetInt64(int64(v.Ival.Ival))
	case *pg_query.A_Const_Fval:
		var ok bool
		if q, ok = new(big.Rat).SetString(v.Fval.Fval); !ok {
			return false
		}
	default:
		return c.Isnull
	}
	_, exact := q.Float32()
	return exact
}
