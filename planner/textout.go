package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Values turned into text inside a statement are formatted by Postgres's
// output functions, which DuckDB does not share: a float8 cast to text, an
// interval or a timestamptz in text, a number concatenated to a string all
// read differently. Such statements go to the origin:
//
//   - a cast to a text type (text, varchar, char, bpchar, name) of anything
//     but a string literal;
//   - an operand of || that is not known to be text: only string literals,
//     other || expressions, function calls (assumed to return text) and
//     columns whose origin type is text-like are allowed; the column check
//     needs the datasets' column types, so it is made per plan;
//   - substr/substring with a start that is not a positive integer literal
//     (DuckDB counts negative starts from the end of the string).

// textTypeNames are the spellings of Postgres's text-like types in a cast.
var textTypeNames = map[string]bool{"text": true, "varchar": true, "char": true, "bpchar": true, "name": true, "character varying": true, "character": true}

// textTypeOIDs are the origin column types whose text form is the value.
var textTypeOIDs = map[uint32]bool{25: true, 1043: true, 1042: true, 19: true}

// checkTextCast flags a cast of a non-literal to a text type.
func checkTextCast(tc *pg_query.TypeCast) uint8 {
	if tc.TypeName == nil || len(tc.TypeName.ArrayBounds) > 0 {
		return 0
	}
	names, ok := stringsOf(tc.TypeName.Names)
	if !ok || len(names) == 0 || !textTypeNames[strings.ToLower(names[len(names)-1])] {
		return 0
	}
	if c := tc.Arg.GetAConst(); c != nil {
		if _, isStr := c.Val.(*pg_query.A_Const_Sval); isStr || c.Isnull {
			return 0
		}
	}
	if tc.Arg.GetParamRef() != nil {
		// $1::text: the parameter arrives as text.
		return 0
	}
	return flagUnsupported
}

// checkConcat flags || operands that may not be text and records the
// column names among them for the per-plan type check.
func (z *analyzer) checkConcat(e *pg_query.A_Expr) {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 {
		return
	}
	if s, ok := e.Name[0].GetNode().(*pg_query.Node_String_); !ok || s.String_.Sval != "||" {
		return
	}
	for _, op := range []*pg_query.Node{e.Lexpr, e.Rexpr} {
		switch n := op.GetNode().(type) {
		case *pg_query.Node_AConst:
			if _, isStr := n.AConst.Val.(*pg_query.A_Const_Sval); !isStr && !n.AConst.Isnull {
				z.flag(flagUnsupported)
			}
		case *pg_query.Node_AExpr:
			if !isConcat(n.AExpr) {
				z.flag(flagUnsupported)
			}
		case *pg_query.Node_FuncCall, *pg_query.Node_TypeCast, *pg_query.Node_ParamRef:
			// Function results are taken as text; casts are checked by
			// checkTextCast; parameters of || are text.
		case *pg_query.Node_ColumnRef:
			if name := lastField(n.ColumnRef); name != "" {
				if z.a.concatCols == nil {
					z.a.concatCols = map[string]struct{}{}
				}
				z.a.concatCols[name] = struct{}{}
			} else {
				z.flag(flagUnsupported)
			}
		default:
			z.flag(flagUnsupported)
		}
	}
}

func isConcat(e *pg_query.A_Expr) bool {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 {
		return false
	}
	s, ok := e.Name[0].GetNode().(*pg_query.Node_String_)
	return ok && s.String_.Sval == "||"
}

func lastField(c *pg_query.ColumnRef) string {
	if len(c.Fields) == 0 {
		return ""
	}
	if s, ok := c.Fields[len(c.Fields)-1].GetNode().(*pg_query.Node_String_); ok {
		return s.String_.Sval
	}
	return ""
}

// checkSubstr flags substr/substring whose start is not a positive
// integer literal.
func checkSubstr(fc *pg_query.FuncCall) uint8 {
	switch funcName(fc) {
	case "substr", "substring":
	default:
		return 0
	}
	if len(fc.Args) < 2 {
		return 0
	}
	c := fc.Args[1].GetAConst()
	if c == nil {
		return flagUnsupported
	}
	iv, ok := c.Val.(*pg_query.A_Const_Ival)
	if !ok || iv.Ival.Ival < 1 {
		return flagUnsupported
	}
	return 0
}
