package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
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

// numericAvgDecFunction is accelerator.NumericAvgDecFunction.
const numericAvgDecFunction = "pgaccel_numeric_avg_dec"

// predicateAvgs returns the plain avg calls of sel that sit inside a
// predicate.
func predicateAvgs(sel *pg_query.SelectStmt) map[*pg_query.FuncCall]bool {
	f := &predFinder{found: map[*pg_query.FuncCall]bool{}}
	walk(sel, f)
	return f.found
}

// predicateRounds returns the round(x, k) and trunc(x, k) calls of sel
// inside predicates.
func predicateRounds(sel *pg_query.SelectStmt) map[*pg_query.FuncCall]bool {
	f := &predFinder{found: map[*pg_query.FuncCall]bool{}, rounds: map[*pg_query.FuncCall]bool{}}
	walk(sel, f)
	return f.rounds
}

// scaleSetting reports whether fc is round(x, k) or trunc(x, k): their
// result is a numeric with scale k, whatever x is — in DuckDB it keeps
// x's type and scale.
func scaleSetting(fc *pg_query.FuncCall) bool {
	name := funcName(fc)
	return (name == "round" || name == "trunc") && len(fc.Args) == 2
}

type predFinder struct {
	found map[*pg_query.FuncCall]bool
	// rounds: round(x, k) and trunc(x, k) calls inside predicates, where
	// only their value counts.
	rounds map[*pg_query.FuncCall]bool
}

func (f *predFinder) enter(m proto.Message, w *walker) {
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
			walk(p, avgCollector(f.found))
			if f.rounds != nil {
				walk(p, roundCollector(f.rounds))
			}
		}
	}
}

// roundCollector marks every round(x, k) and trunc(x, k) it sees.
type roundCollector map[*pg_query.FuncCall]bool

func (c roundCollector) enter(m proto.Message, w *walker) {
	if fc, ok := m.(*pg_query.FuncCall); ok && scaleSetting(fc) {
		c[fc] = true
	}
}

// avgCollector marks every plain avg call it sees.
type avgCollector map[*pg_query.FuncCall]bool

func (c avgCollector) enter(m proto.Message, w *walker) {
	if fc, ok := m.(*pg_query.FuncCall); ok && plainAvg(fc) {
		c[fc] = true
	}
}

// rewritePredicateAvg replaces avg(x) by the exact decimal form.
func rewritePredicateAvg(fc *pg_query.FuncCall) {
	arg := fc.Args[0]
	sum := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("sum")}, []*pg_query.Node{arg}, -1)
	count := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("count")}, []*pg_query.Node{proto.Clone(arg).(*pg_query.Node)}, -1)
	text := &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
		Arg:      sum,
		TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: -1},
		Location: -1,
	}}}
	fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(numericAvgDecFunction)}
	fc.Args = []*pg_query.Node{text, count}
}
