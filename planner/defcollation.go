package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// The vocabulary of collations shared by collorder.go: which functions
// return text of their arguments' collation (or the database's default),
// which return one of their arguments, which return no text, and which
// casts name no collatable type.

// isStringConst reports whether n is a string literal (or an untyped cast
// of one).
func isStringConst(n *pg_query.Node) bool {
	if tc := n.GetTypeCast(); tc != nil && tc.TypeName == nil {
		n = tc.Arg
	}
	if c := n.GetAConst(); c != nil {
		_, ok := c.Val.(*pg_query.A_Const_Sval)
		return ok
	}
	return false
}

// describeExpr names an expression for the debug log.
func describeExpr(n *pg_query.Node) string {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		if name := lastField(v.ColumnRef); name != "" {
			return name
		}
	case *pg_query.Node_FuncCall:
		return "a call of " + funcName(v.FuncCall)
	case *pg_query.Node_AExpr:
		if names, ok := stringsOf(v.AExpr.Name); ok && len(names) > 0 {
			return "a value of operator " + names[len(names)-1]
		}
	case *pg_query.Node_AConst:
		return "a string literal"
	}
	return "an expression"
}

// collatedTextFuncs are functions whose result is text (or jsonb) whose
// collation derives from their collatable arguments, or is the database's
// default when none is collatable.
var collatedTextFuncs = map[string]bool{
	"lower": true, "upper": true, "initcap": true, "substr": true, "substring": true, "left": true,
	"right": true, "lpad": true, "rpad": true, "ltrim": true, "rtrim": true, "btrim": true, "trim": true,
	"replace": true, "concat": true, "concat_ws": true, "md5": true, "to_char": true, "string_agg": true,
	"array_to_string": true, "split_part": true, "reverse": true, "repeat": true, "translate": true,
	"regexp_replace": true, "format": true, "jsonb_typeof": true, "json_typeof": true,
	"jsonb_extract_path_text": true, "json_extract_path_text": true, "jsonb_extract_path": true,
	"to_jsonb": true, "jsonb_build_object": true, "jsonb_agg": true, "chr": true, "to_hex": true,
	"quote_ident": true, "quote_literal": true, "encode": true,
}

// passThroughFuncs return one of their arguments.
var passThroughFuncs = map[string]bool{
	"min": true, "max": true, "first_value": true, "last_value": true, "nth_value": true, "lag": true,
	"lead": true, "mode": true, "percentile_disc": true, "any_value": true, "coalesce": true, "nullif": true,
	"greatest": true, "least": true,
}

// plainTypeNames are types that are neither text nor jsonb: a cast to one
// of them orders by no collation.
var plainTypeNames = map[string]bool{
	"int2": true, "int4": true, "int8": true, "int": true, "integer": true, "smallint": true, "bigint": true,
	"float4": true, "float8": true, "real": true, "float": true, "double precision": true, "numeric": true,
	"decimal": true, "bool": true, "boolean": true, "date": true, "time": true, "timestamp": true,
	"timestamptz": true, "interval": true, "uuid": true, "bytea": true, "json": true,
}

// nonTextFuncs return no text: numbers, dates, booleans.
var nonTextFuncs = map[string]bool{
	"count": true, "sum": true, "avg": true, "abs": true, "round": true, "trunc": true, "floor": true,
	"ceil": true, "ceiling": true, "length": true, "char_length": true, "octet_length": true, "strpos": true,
	"position": true, "date_trunc": true, "date_part": true, "extract": true, "make_date": true, "to_date": true,
	"to_timestamp": true, "date": true, "age": true, "justify_hours": true, "justify_days": true,
	"justify_interval": true, "row_number": true, "rank": true, "dense_rank": true, "percent_rank": true,
	"cume_dist": true, "ntile": true, "stddev": true, "stddev_samp": true, "stddev_pop": true, "variance": true,
	"var_samp": true, "var_pop": true, "sqrt": true, "cbrt": true, "exp": true, "ln": true, "log": true,
	"log10": true, "power": true, "mod": true, "sign": true, "bool_and": true, "bool_or": true, "every": true,
	"array_length": true, "cardinality": true, "array_position": true, "jsonb_array_length": true,
	"json_array_length": true, "percentile_cont": true, "starts_with": true, "isfinite": true,
}
