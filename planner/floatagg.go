package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Aggregates over floating-point values depend on the order and method of
// summation: Postgres and DuckDB add the same doubles differently (DuckDB
// in parallel, with compensated sums), so sum(float8) or avg(float8) can
// differ in the last digit. Such statements go to the origin.
var floatSensitiveAggs = map[string]bool{
	"sum": true, "avg": true, "stddev": true, "stddev_samp": true, "stddev_pop": true,
	"variance": true, "var_samp": true, "var_pop": true, "corr": true,
	"covar_pop": true, "covar_samp": true, "regr_avgx": true, "regr_avgy": true,
	"regr_intercept": true, "regr_r2": true, "regr_slope": true, "regr_sxx": true,
	"regr_sxy": true, "regr_syy": true,
}

// floatTypeNames are the spellings of float4 and float8 in a cast.
var floatTypeNames = map[string]bool{"float4": true, "float8": true, "real": true, "float": true, "double precision": true}

// aggUse collects, inside the arguments of float-sensitive aggregates, the
// column names used and whether anything is cast to a float type.
type aggUse struct {
	cols      map[string]struct{}
	floatCast bool
}

func (u *aggUse) enter(m proto.Message, w *walker) {
	switch n := m.(type) {
	case *pg_query.ColumnRef:
		for _, f := range n.Fields {
			if s, ok := f.GetNode().(*pg_query.Node_String_); ok {
				u.cols[s.String_.Sval] = struct{}{}
			}
		}
	case *pg_query.TypeName:
		for _, part := range n.Names {
			if s, ok := part.GetNode().(*pg_query.Node_String_); ok && floatTypeNames[strings.ToLower(s.String_.Sval)] {
				u.floatCast = true
			}
		}
	}
}

// noteFloatAggregate records the columns inside a float-sensitive
// aggregate's arguments.
func (z *analyzer) noteFloatAggregate(fc *pg_query.FuncCall) {
	if !floatSensitiveAggs[funcName(fc)] {
		return
	}
	if z.a.aggCols == nil {
		z.a.aggCols = map[string]struct{}{}
	}
	u := &aggUse{cols: z.a.aggCols}
	if col, ok := intAsFloat(fc); ok {
		// sum or avg of an integer column cast to double precision:
		// exact in any order while the sum fits in 2^53 (intFloatSafe).
		if z.a.intFloatCols == nil {
			z.a.intFloatCols = map[string]struct{}{}
		}
		z.a.intFloatCols[col] = struct{}{}
	} else {
		for _, arg := range fc.Args {
			walk(arg, u)
		}
	}
	if fc.AggFilter != nil {
		walk(fc.AggFilter, u)
	}
	if u.floatCast {
		z.a.aggFloatCast = true
	}
}

// valueFuncs return one of their argument's values as it is: over a
// char(n) column, Postgres returns it padded to n with the type's length
// lost (bpchar without a typmod), which the acceleration, keeping char(n)
// without its trailing spaces, cannot reproduce.
var valueFuncs = map[string]bool{
	"min": true, "max": true, "first_value": true, "last_value": true, "nth_value": true,
	"lag": true, "lead": true, "mode": true, "percentile_disc": true, "any_value": true,
	"array_agg": true, "greatest": true, "least": true,
}

// noteValueFunction records the column names that are direct arguments of
// the valueFuncs.
func (z *analyzer) noteValueFunction(fc *pg_query.FuncCall) {
	if !valueFuncs[funcName(fc)] {
		return
	}
	args := fc.Args
	if fc.AggWithinGroup {
		args = nil
		for _, o := range fc.AggOrder {
			if sb := o.GetSortBy(); sb != nil {
				args = append(args, sb.Node)
			}
		}
	}
	for _, arg := range args {
		if cr := arg.GetColumnRef(); cr != nil {
			if name := lastField(cr); name != "" {
				if z.a.valueCols == nil {
					z.a.valueCols = map[string]struct{}{}
				}
				z.a.valueCols[name] = struct{}{}
			}
		}
	}
}

// intAsFloat returns the column of sum(CAST(col AS double precision)) or
// avg(...) of the same.
func intAsFloat(fc *pg_query.FuncCall) (string, bool) {
	switch funcName(fc) {
	case "sum", "avg":
	default:
		return "", false
	}
	if len(fc.Args) != 1 || fc.AggDistinct || fc.AggStar || len(fc.AggOrder) > 0 || fc.AggWithinGroup {
		return "", false
	}
	tc := fc.Args[0].GetTypeCast()
	if tc == nil || !castTarget(tc, float8TypeNames) {
		return "", false
	}
	cr := tc.Arg.GetColumnRef()
	if cr == nil || lastField(cr) == "" || len(cr.Fields) > 3 {
		return "", false
	}
	return lastField(cr), true
}

// maxIntFloatRows bounds the values an aggregate of an integer column
// cast to double precision may add: fewer than 2^22 values of at most 2^31
// in magnitude sum to less than 2^53, so every partial sum is exact and no
// order of summation can change it (avg is that sum over the count, one
// IEEE division in both engines). The rewrite checks it as DuckDB reads
// (guardIntFloat); a group with more values fails, and the statement
// falls back to the origin.
const maxIntFloatRows = 1<<22 - 1

// intFloatSafe reports whether every column of a.intFloatCols is an
// integer (smallint or integer) of the datasets, named by no output
// column; it returns the first that is not.
func (a *analysis) intFloatSafe(r resolution) (string, bool) {
	for name := range a.intFloatCols {
		if len(a.aliasDefs[name]) > 0 || !columnsAre(r, name, func(c catalog.ColumnInfo) bool { return columnKind(c) == kindInt4 }) {
			return name, false
		}
	}
	return "", true
}

// guardIntFloat turns fc, sum or avg of an integer cast to double
// precision, into
//
//	if(count(x) > maxIntFloatRows, error(...), fc)
//
// with the count over fc's FILTER and window.
func guardIntFloat(fc *pg_query.FuncCall) {
	inner := proto.Clone(fc).(*pg_query.FuncCall)
	count := &pg_query.FuncCall{
		Funcname: []*pg_query.Node{pg_query.MakeStrNode("count")},
		Args:     []*pg_query.Node{proto.Clone(inner.Args[0].GetTypeCast().Arg).(*pg_query.Node)},
		Location: -1,
	}
	if inner.AggFilter != nil {
		count.AggFilter = proto.Clone(inner.AggFilter).(*pg_query.Node)
	}
	if inner.Over != nil {
		count.Over = proto.Clone(inner.Over).(*pg_query.WindowDef)
	}
	tooMany := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(">")},
		&pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: count}}, pg_query.MakeAConstIntNode(maxIntFloatRows, -1), -1)
	fail := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("error")},
		[]*pg_query.Node{pg_query.MakeAConstStrNode("too many values to sum exactly in double precision", -1)}, -1)
	*fc = pg_query.FuncCall{
		Funcname: []*pg_query.Node{pg_query.MakeStrNode("if")},
		Args:     []*pg_query.Node{tooMany, fail, {Node: &pg_query.Node_FuncCall{FuncCall: inner}}},
		Location: -1,
	}
}
