package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/pgaccel/pgaccel/pgdef"
)

// avg(x) inside a predicate — WHERE, HAVING or JOIN ... ON, at any depth,
// scalar subqueries included (TPC-H Q17: l_quantity < (SELECT 0.2 *
// avg(l_quantity) ...)) — is only compared, never printed. Its value must
// still be Postgres's: the numeric quotient rounded to select_div_scale's
// scale, not DuckDB's double. The rewrite makes it
//
//	pgaccel_numeric_avg_dec(sum(x)::text, count(x))
//
// a DECIMAL(38,24) holding that rounded quotient exactly; the function
// fails (and the statement falls back to the origin) when the quotient
// needs more than 24 fraction digits or 14 integer digits. Comparisons and
// + - * of DECIMALs are exact in DuckDB (an overflow is an error).

// pgdef.FuncNumericAvgDec is pgdef.FuncNumericAvgDec.

// predicateCalls returns the calls of sel inside predicates (WHERE,
// HAVING, JOIN ... ON, FILTER), where only their value counts: the plain
// avg calls, and the round(x, k) and trunc(x, k) calls.
func predicateCalls(sel *pg_query.SelectStmt) (avgs, rounds map[*pg_query.FuncCall]bool) {
	c := predCalls{avgs: map[*pg_query.FuncCall]bool{}, rounds: map[*pg_query.FuncCall]bool{}}
	walk(sel, predFinder{c})
	return c.avgs, c.rounds
}

// scaleSetting reports whether fc is round(x, k) or trunc(x, k): their
// result is a numeric with scale k, whatever x is — in DuckDB it keeps
// x's type and scale.
func scaleSetting(fc *pg_query.FuncCall) bool {
	name := funcName(fc)
	return (name == "round" || name == "trunc") && len(fc.Args) == 2
}

// predFinder walks every predicate of the tree with predCalls.
type predFinder struct{ calls predCalls }

func (f predFinder) enter(m proto.Message, w *walker) {
	var preds []*pg_query.Node
	switch n := m.(type) {
	case *pg_query.SelectStmt:
		preds = []*pg_query.Node{n.WhereClause, n.HavingClause}
	case *pg_query.JoinExpr:
		preds = []*pg_query.Node{n.Quals}
	case *pg_query.FuncCall:
		preds = []*pg_query.Node{n.AggFilter}
	}
	for _, p := range preds {
		if p != nil {
			walk(p, f.calls)
		}
	}
}

// predCalls marks the avg and round/trunc calls it sees.
type predCalls struct{ avgs, rounds map[*pg_query.FuncCall]bool }

func (c predCalls) enter(m proto.Message, w *walker) {
	fc, ok := m.(*pg_query.FuncCall)
	switch {
	case !ok:
	case plainAvg(fc):
		c.avgs[fc] = true
	case scaleSetting(fc):
		c.rounds[fc] = true
	}
}

// rewritePredicateAvg replaces avg(x) by the exact decimal form.
func rewritePredicateAvg(fc *pg_query.FuncCall) {
	fc.Args = avgArgs(fc)
	fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncNumericAvgDec)}
}
