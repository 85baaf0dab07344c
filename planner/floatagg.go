package planner

import (
	"strings"

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
	for _, arg := range fc.Args {
		walk(arg, u)
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
