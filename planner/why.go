package planner

import (
	"math/bits"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Decision.Reason is a bounded label for the metrics; Decision.Detail says
// which rule sent a statement to the origin, for the debug log: the node of
// the parse tree that first raised the winning reason ("function upper",
// "cast to text", "operator ||"), or the column and dataset of a
// session-dependent rule. Details are built once per statement text (the
// static ones are kept with the analysis) and never become metric labels.

// flagDetails keeps, for each static flag bit, what first raised it.
type flagDetails [8]string

// note records why for every flag in now that was not set before.
func (d *flagDetails) note(before, now uint8, why string) {
	for added := now &^ before; added != 0; added &= added - 1 {
		if i := bits.TrailingZeros8(added); d[i] == "" {
			d[i] = why
		}
	}
}

// of returns the detail of flag f (a single bit).
func (d *flagDetails) of(f uint8) string { return d[bits.TrailingZeros8(f)] }

// describeNode names a parse-tree node for a detail.
func describeNode(m proto.Message) string {
	switch n := m.(type) {
	case *pg_query.FuncCall:
		return "function " + qualifiedFuncName(n)
	case *pg_query.TypeCast:
		return "cast to " + typeNameText(n.TypeName)
	case *pg_query.TypeName:
		return "type " + typeNameText(n)
	case *pg_query.A_Expr:
		switch n.Kind {
		case pg_query.A_Expr_Kind_AEXPR_ILIKE:
			return "ILIKE (it follows the origin's LC_CTYPE)"
		case pg_query.A_Expr_Kind_AEXPR_SIMILAR:
			return "SIMILAR TO"
		}
		if names, ok := stringsOf(n.Name); ok && len(names) > 0 {
			return "operator " + strings.Join(names, ".")
		}
		return "an operator"
	case *pg_query.A_Const:
		return "a constant of a type the acceleration does not handle"
	case *pg_query.SQLValueFunction:
		return "the session-dependent " + strings.TrimPrefix(n.Op.String(), "SVFOP_")
	case *pg_query.SelectStmt:
		switch {
		case len(n.LockingClause) > 0:
			return "a locking clause (FOR UPDATE/SHARE)"
		case n.IntoClause != nil:
			return "SELECT INTO"
		}
	case *pg_query.RangeVar:
		switch {
		case n.Catalogname != "":
			return "a relation named with its database (db.schema.table)"
		case !n.Inh:
			return "FROM ONLY " + n.Relname + " (the acceleration holds inheritance children too)"
		case isCatalogSchema(n.Schemaname):
			return "the catalog relation " + n.Schemaname + "." + n.Relname
		case isTempSchema(n.Schemaname):
			return "the temporary relation " + n.Relname
		}
		return "relation " + n.Relname
	case *pg_query.ColumnRef:
		return "a column reference of more than three parts"
	case *pg_query.CommonTableExpr:
		return "the data-modifying CTE " + n.Ctename
	}
	return "syntax " + string(m.ProtoReflect().Descriptor().Name())
}

// qualifiedFuncName is a function call's name as written (schema.name).
func qualifiedFuncName(fc *pg_query.FuncCall) string {
	names, _ := stringsOf(fc.Funcname)
	if len(names) == 0 {
		return funcName(fc)
	}
	return strings.Join(names, ".")
}

// typeNameText is a type name as written, with array brackets.
func typeNameText(t *pg_query.TypeName) string {
	if t == nil {
		return "a type"
	}
	names, _ := stringsOf(t.Names)
	if len(names) > 1 && names[0] == "pg_catalog" {
		names = names[1:]
	}
	s := strings.Join(names, ".")
	if len(t.ArrayBounds) > 0 {
		s += "[]"
	}
	return s
}
