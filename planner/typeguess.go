package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// The type rules (typesites.go) ask of an expression whether it may be
// of a type whose semantics the acceleration does not share: jsonb and
// json (held as their text), char(n) (held without its trailing spaces)
// and varchar compared with it, and real (float4, which DuckDB computes
// with in single precision where Postgres widens to double precision).
// typesOf answers with the set of those types the value may have, by the
// datasets' columns (by name), casts, operators and the functions it
// knows; a value it cannot follow may be of any of them that the
// statement holds at all (present): a statement that reads no jsonb
// column, casts nothing to jsonb and calls no jsonb function holds no
// jsonb value anywhere.

// typeSet is a set of the types the type rules track; tOther stands for
// any other type.
type typeSet uint8

const (
	tJSONB typeSet = 1 << iota
	tJSON
	tBpchar
	tVarchar
	tFloat4
	tInet // inet, held as its printed text (inetrules.go)
	tCidr // cidr, likewise
	tOther

	tJSONAny = tJSONB | tJSON
	tInetAny = tInet | tCidr
	tTracked = tJSONB | tJSON | tBpchar | tVarchar | tFloat4 | tInet | tCidr
)

// columnTypes is the set of a dataset column's type (an array's: its
// element's, which its elements, subscripts and comparisons have).
func columnTypes(c catalog.ColumnInfo) typeSet {
	switch c.TypeOID {
	case pgdef.OIDJSONB, pgdef.OIDJSONBArray:
		return tJSONB
	case pgdef.OIDJSON, 199:
		return tJSON
	case pgdef.OIDBpchar, pgdef.OIDBpcharArray:
		return tBpchar
	case pgdef.OIDVarchar, pgdef.OIDVarcharArray:
		return tVarchar
	case pgdef.OIDFloat4, pgdef.OIDFloat4Array:
		return tFloat4
	case pgdef.OIDInet:
		return tInet
	case pgdef.OIDCidr:
		return tCidr
	}
	return tOther
}

// castTypeSet is the set of the type a type name names.
func castTypeSet(t *pg_query.TypeName) typeSet {
	if t == nil {
		return tTracked | tOther
	}
	names, ok := stringsOf(t.Names)
	if !ok || len(names) == 0 {
		return tTracked | tOther
	}
	switch strings.ToLower(names[len(names)-1]) {
	case "jsonb":
		return tJSONB
	case "json":
		return tJSON
	case "bpchar", "char", "character":
		return tBpchar
	case "varchar", "character varying":
		return tVarchar
	case "float4", "real":
		return tFloat4
	case "inet":
		return tInet
	case "cidr":
		return tCidr
	}
	return tOther
}

// jsonbResultFuncs and jsonResultFuncs return jsonb and json; other
// functions of those prefixes return text, numbers or booleans
// (jsonNotJSONFuncs).
var (
	jsonbResultFuncs = map[string]bool{"to_jsonb": true, "jsonb": true}
	jsonResultFuncs  = map[string]bool{"to_json": true, "row_to_json": true, "array_to_json": true, "json": true}
	jsonNotJSONFuncs = map[string]bool{
		"jsonb_typeof": true, "json_typeof": true, "jsonb_array_length": true, "json_array_length": true,
		"jsonb_extract_path_text": true, "json_extract_path_text": true, "jsonb_array_elements_text": true,
		"json_array_elements_text": true, "jsonb_each_text": true, "json_each_text": true, "jsonb_object_keys": true,
		"json_object_keys": true, "jsonb_pretty": true, "jsonb_path_exists": true, "jsonb_path_match": true,
		"jsonb_exists": true, "jsonb_exists_any": true, "jsonb_exists_all": true, "jsonb_contains": true,
		"jsonb_contained": true,
	}
)

// funcTypes is the set of what a function named name returns, when the
// name alone says: ok is false for functions that return (a form of)
// their arguments' types or that typesOf does not know.
func funcTypes(name string) (typeSet, bool) {
	switch {
	case jsonNotJSONFuncs[name]:
		return tOther, true
	case jsonbResultFuncs[name] || strings.HasPrefix(name, "jsonb_"):
		return tJSONB, true
	case jsonResultFuncs[name] || strings.HasPrefix(name, "json_"):
		return tJSON, true
	case name == "float4":
		return tFloat4, true
	case name == "varchar":
		return tVarchar, true
	case name == "bpchar":
		return tBpchar, true
	case nonTextFuncs[name], textResultFuncs[name], integerResultFuncs[name], collatedTextFuncs[name]:
		// (collatedTextFuncs' jsonb ones are caught above.)
		return tOther, true
	}
	return 0, false
}

// typePassFuncs return one of their arguments (those at argument
// positions args, -1 for all; the sorted value of WITHIN GROUP for mode
// and percentile_disc): the arguments' types. sum and abs of a real are
// reals; array_agg, unnest, array functions carry their elements' types.
var typePassFuncs = map[string][]int{
	"min": {0}, "max": {0}, "first_value": {0}, "last_value": {0}, "nth_value": {0}, "any_value": {0},
	"lag": {0, 2}, "lead": {0, 2}, "coalesce": {-1}, "nullif": {0}, "greatest": {-1}, "least": {-1},
	"sum": {0}, "abs": {0}, "array_agg": {0}, "unnest": {0}, "array_append": {-1}, "array_prepend": {-1},
	"array_cat": {-1}, "array_remove": {0}, "array_replace": {-1}, "trim_array": {0}, "array_fill": {0},
	"mode": {}, "percentile_disc": {},
}

// present is the set of tracked types a statement may hold anywhere: the
// types of the datasets' columns it names (all of them for * and
// NATURAL), of its casts and of the functions it calls.
func (a *analysis) present(r resolution) typeSet {
	var s typeSet
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if _, named := a.cols.names[c.Name]; named || a.cols.star || a.cols.natural {
				s |= columnTypes(c)
			}
		}
	}
	s |= a.types.castTo
	for _, name := range a.funcs {
		if t, ok := funcTypes(name); ok {
			s |= t
		}
	}
	return s & tTracked
}

// typer judges expressions for one plan.
type typer struct {
	a       *analysis
	r       resolution
	unknown typeSet // what a value typesOf cannot follow may be
	// visiting are the names whose definitions are being followed.
	visiting map[string]bool
}

func newTyper(a *analysis, r resolution) *typer {
	return &typer{a: a, r: r, unknown: a.present(r) | tOther}
}

// typesOf is the set of types n may have.
func (t *typer) typesOf(n *pg_query.Node) typeSet { return t.types(n, 0) }

func (t *typer) types(n *pg_query.Node, depth int) typeSet {
	if n == nil {
		return 0
	}
	if depth >= 2*maxAliasDepth {
		return t.unknown
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		return t.nameTypes(v.ColumnRef, depth)
	case *pg_query.Node_AConst, *pg_query.Node_ParamRef:
		// A literal or parameter takes its type from its context (whose
		// other operand the rules judge), or is a number or boolean.
		return tOther
	case *pg_query.Node_TypeCast:
		return castTypeSet(v.TypeCast.TypeName)
	case *pg_query.Node_CollateClause:
		return t.types(v.CollateClause.Arg, depth+1)
	case *pg_query.Node_AExpr:
		return t.exprTypes(v.AExpr, depth)
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest, *pg_query.Node_GroupingFunc:
		return tOther
	case *pg_query.Node_CaseExpr:
		s := t.types(v.CaseExpr.Defresult, depth+1)
		for _, w := range v.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				s |= t.types(cw.Result, depth+1)
			}
		}
		return s | tOther
	case *pg_query.Node_CoalesceExpr:
		return t.all(v.CoalesceExpr.Args, depth)
	case *pg_query.Node_MinMaxExpr:
		return t.all(v.MinMaxExpr.Args, depth)
	case *pg_query.Node_RowExpr:
		return t.all(v.RowExpr.Args, depth) | tOther
	case *pg_query.Node_AArrayExpr:
		return t.all(v.AArrayExpr.Elements, depth) | tOther
	case *pg_query.Node_AIndirection:
		for _, ind := range v.AIndirection.Indirection {
			if ind.GetAIndices() == nil {
				return t.unknown // a field of a composite value
			}
		}
		return t.types(v.AIndirection.Arg, depth+1)
	case *pg_query.Node_SubLink:
		switch v.SubLink.SubLinkType {
		case pg_query.SubLinkType_EXPR_SUBLINK, pg_query.SubLinkType_ARRAY_SUBLINK:
			return t.outputTypes(v.SubLink.Subselect.GetSelectStmt(), 0, depth)
		}
		return tOther
	case *pg_query.Node_FuncCall:
		return t.callTypes(v.FuncCall, depth)
	}
	return t.unknown
}

// all is the union of the types of ns (a missing one, NULL, adds none).
func (t *typer) all(ns []*pg_query.Node, depth int) typeSet {
	s := typeSet(0)
	for _, n := range ns {
		s |= t.types(n, depth+1)
	}
	if s == 0 {
		return tOther
	}
	return s
}

// nameTypes is the set of a column reference: the datasets' columns of
// its name and the output columns so named (aliases.go, and the
// statement's own, which ORDER BY may name); what it is when neither has
// it is not known. A name met again inside its own definitions
// (min(user_id) AS user_id) is the datasets' column.
func (t *typer) nameTypes(cr *pg_query.ColumnRef, depth int) typeSet {
	name := lastField(cr)
	if name == "" || len(cr.Fields) > 3 {
		return t.unknown
	}
	s, found := typeSet(0), false
	for _, d := range t.r.datasets {
		for _, c := range d.state.Columns {
			if c.Name == name {
				s, found = s|columnTypes(c), true
			}
		}
	}
	if t.visiting[name] {
		return s
	}
	if t.visiting == nil {
		t.visiting = map[string]bool{}
	}
	t.visiting[name] = true
	defer delete(t.visiting, name)
	for _, defs := range [][]*pg_query.Node{t.a.aliasDefs[name], t.a.types.outputs[name]} {
		for _, def := range defs {
			if dc := def.GetColumnRef(); dc != nil && lastField(dc) == name {
				continue // the column under its own name: counted above
			}
			s, found = s|t.types(def, depth+1), true
		}
	}
	if !found {
		return t.unknown
	}
	return s
}

// outputTypes is the set of output column i of a subquery (of both sides
// of a set operation).
func (t *typer) outputTypes(sel *pg_query.SelectStmt, i, depth int) typeSet {
	if sel == nil {
		return t.unknown
	}
	if sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
		return t.outputTypes(sel.Larg, i, depth+1) | t.outputTypes(sel.Rarg, i, depth+1)
	}
	if i >= len(sel.TargetList) {
		return t.unknown
	}
	rt := sel.TargetList[i].GetResTarget()
	if rt == nil || rt.Val == nil {
		return t.unknown
	}
	if cr := rt.Val.GetColumnRef(); cr != nil && lastField(cr) == "" {
		return t.unknown // a *
	}
	return t.types(rt.Val, depth+1)
}

// exprTypes is the set of an operator expression's value.
func (t *typer) exprTypes(e *pg_query.A_Expr, depth int) typeSet {
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return t.types(e.Lexpr, depth+1)
	case pg_query.A_Expr_Kind_AEXPR_OP:
	default:
		return tOther // IN, LIKE, BETWEEN, IS DISTINCT FROM, op ANY: booleans
	}
	op := operatorName(e)
	switch op {
	case "->", "#>":
		if s := t.types(e.Lexpr, depth+1) & tJSONAny; s != 0 {
			return s
		}
		return tOther
	case "->>", "#>>":
		return tOther
	case "||":
		// jsonb || jsonb is jsonb; with text, text; arrays concatenate.
		l, r := t.types(e.Lexpr, depth+1), t.types(e.Rexpr, depth+1)
		return (l|r)&tJSONB | tOther
	case "+", "-", "*", "/", "%", "^":
		if e.Lexpr == nil {
			return t.types(e.Rexpr, depth+1)&tFloat4 | tOther // -real is a real
		}
		l, r := t.types(e.Lexpr, depth+1), t.types(e.Rexpr, depth+1)
		s := tOther
		if op == "-" {
			s |= l & tJSONB // jsonb - key
		}
		if l&tFloat4 != 0 && r&tFloat4 != 0 && op != "^" {
			s |= tFloat4 // real op real is a real
		}
		return s
	case "#-":
		return t.types(e.Lexpr, depth+1)&tJSONB | tOther
	}
	if comparisonOps[op] {
		return tOther
	}
	if e.Lexpr == nil {
		return t.types(e.Rexpr, depth+1) // @ real is a real
	}
	return t.unknown
}

// callTypes is the set of a function call's value.
func (t *typer) callTypes(fc *pg_query.FuncCall, depth int) typeSet {
	if len(fc.Funcname) > 1 && !(len(fc.Funcname) == 2 && isPgCatalog(fc.Funcname[0])) {
		return t.unknown
	}
	name := funcName(fc)
	if pos, ok := typePassFuncs[name]; ok {
		var args []*pg_query.Node
		switch {
		case fc.AggWithinGroup:
			for _, o := range fc.AggOrder {
				args = append(args, o.GetSortBy().GetNode())
			}
		case len(pos) == 1 && pos[0] == -1:
			args = fc.Args
		default:
			for _, i := range pos {
				if i < len(fc.Args) {
					args = append(args, fc.Args[i])
				}
			}
		}
		s := t.all(args, depth)
		if name == "sum" || name == "abs" {
			s = s&tFloat4 | tOther
		}
		return s
	}
	if s, ok := funcTypes(name); ok {
		return s
	}
	return t.unknown
}

// operatorName is the last part of an operator's name.
func operatorName(e *pg_query.A_Expr) string {
	names, ok := stringsOf(e.Name)
	if !ok || len(names) == 0 {
		return ""
	}
	return names[len(names)-1]
}
