package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// generate_series in a target list (select generate_series('2024-06-01'::
// date, '2024-06-30'::date, interval '1 day')::date as date_day, as dbt
// date spines write it) is a set of rows in Postgres and one list in
// DuckDB; the rewrite unnests it. It is allowed when it is the only
// set-returning call outside FROM in the statement (Postgres runs several
// in lockstep) and its arguments are literals: integers, or dates,
// timestamps and intervals cast from strings. Postgres resolves dates to
// the timestamptz form; the rewrite casts them to timestamptz so DuckDB
// does too.

// seriesTypeNames are the types of generate_series's literal bounds and
// steps that series.go unnests.
var seriesTypeNames = map[string]bool{"date": true, "timestamp": true, "timestamptz": true, "interval": true}

// literalSeries reports whether fc is generate_series over such literals.
func literalSeries(fc *pg_query.FuncCall) bool {
	if funcName(fc) != "generate_series" || len(fc.Args) < 2 || len(fc.Args) > 3 || fc.Over != nil || fc.AggStar {
		return false
	}
	ints, times := 0, 0
	for _, a := range fc.Args {
		switch {
		case a.GetAConst() != nil:
			if _, ok := a.GetAConst().Val.(*pg_query.A_Const_Ival); !ok {
				return false
			}
			ints++
		case a.GetTypeCast() != nil && a.GetTypeCast().Arg.GetAConst() != nil &&
			castTarget(a.GetTypeCast(), seriesTypeNames):
			if _, ok := a.GetTypeCast().Arg.GetAConst().Val.(*pg_query.A_Const_Sval); !ok {
				return false
			}
			times++
		default:
			return false
		}
	}
	return ints == len(fc.Args) || times == len(fc.Args)
}

// unnestSeries rewrites fc, such a generate_series, in place to
// unnest(generate_series(...)), its dates cast to timestamptz.
func unnestSeries(fc *pg_query.FuncCall) {
	inner := proto.Clone(fc).(*pg_query.FuncCall)
	inner.Funcname = []*pg_query.Node{pg_query.MakeStrNode("generate_series")}
	for i, a := range inner.Args {
		if tc := a.GetTypeCast(); tc != nil && castTarget(tc, dateTypeNames) {
			inner.Args[i] = castTo(a, "timestamptz")
		}
	}
	*fc = pg_query.FuncCall{
		Funcname: []*pg_query.Node{pg_query.MakeStrNode("unnest")},
		Args:     []*pg_query.Node{{Node: &pg_query.Node_FuncCall{FuncCall: inner}}},
		Location: -1,
	}
}

// fromFunctions returns the function calls of the FROM items of tree.
func fromFunctions(tree proto.Message) map[*pg_query.FuncCall]bool {
	f := fromFuncFinder{}
	walk(tree, f)
	return f
}

type fromFuncFinder map[*pg_query.FuncCall]bool

func (f fromFuncFinder) enter(m proto.Message, w *walker) {
	if rf, ok := m.(*pg_query.RangeFunction); ok {
		for _, item := range rf.Functions {
			if l := item.GetList(); l != nil && len(l.Items) > 0 {
				if fc := l.Items[0].GetFuncCall(); fc != nil {
					f[fc] = true
				}
			}
		}
	}
}
