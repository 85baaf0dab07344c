package planner

import (
	"github.com/pgaccel/pgaccel/catalog"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// jsonb and json are held as their text. Postgres orders jsonb by type,
// then size, then content, compares its numbers by value (1.5 = 1.50),
// merges documents with ||, and refuses to cast a document of another
// JSON type to a number or boolean (22023); it has no ordering or
// equality for json at all. Ordering, range-comparing, comparing for
// equality (=, IN, GROUP BY, DISTINCT, set operations, PARTITION BY, JOIN
// USING), || with anything but text, and casts to other types of such
// values go to the origin. -> and ->> with an integer take a jsonb scalar
// as a one-element array (json's as nothing): the rewrite calls the jsonb
// forms for jsonb documents (typerewrite.go); a document that may be
// either goes to the origin.

// textAndJSONTypeNames are the cast targets a jsonb or json value keeps
// its text through.
var textAndJSONTypeNames = map[string]bool{"text": true, "varchar": true, "character varying": true, "name": true, "json": true, "jsonb": true}

// starTypes is the set of column pos of relation rel, or of anything
// when it is not known.
func (t *typer) starTypes(sc starColumn) typeSet {
	s := typeSet(0)
	for i, rel := range t.a.rels {
		if rel.name != sc.rel {
			continue
		}
		if i >= len(t.r.relDS) || t.r.relDS[i] >= len(t.r.datasets) {
			return t.unknown
		}
		cols := t.r.datasets[t.r.relDS[i]].state.Columns
		if sc.pos > len(cols) {
			return t.unknown
		}
		s |= columnTypes(cols[sc.pos-1])
	}
	if s == 0 {
		return t.unknown
	}
	return s
}

// jsonHazard returns why the statement orders, compares, merges or casts
// a jsonb or json value as the acceleration cannot, or "".
func (t *typer) jsonHazard() string {
	ts := &t.a.types
	for _, sc := range ts.starOrdered {
		if t.starTypes(sc)&tJSONAny != 0 {
			return "ordering by a column of * that may be jsonb or json (Postgres orders jsonb by type, then size, then content, and json not at all)"
		}
	}
	for _, sc := range ts.starEqual {
		if t.starTypes(sc)&tJSONAny != 0 {
			return "grouping by a column of * that may be jsonb or json (Postgres compares jsonb numbers by value, and json not at all)"
		}
	}
	for _, n := range ts.ordered {
		if t.typesOf(n)&tJSONAny != 0 {
			return "ordering or range-comparing " + describeExpr(n) + ", which may be jsonb or json (Postgres orders jsonb by type, then size, then content, and json not at all; the acceleration holds their text)"
		}
	}
	for _, n := range ts.equal {
		if t.typesOf(n)&tJSONAny != 0 {
			return "comparing " + describeExpr(n) + " for equality (=, IN, GROUP BY, DISTINCT, a set operation, PARTITION BY), which may be jsonb or json (Postgres compares jsonb numbers by value, 1.5 = 1.50, and json not at all; the acceleration compares their text)"
		}
	}
	for _, c := range ts.concats {
		l, r := t.typesOf(c[0]), t.typesOf(c[1])
		if l&tJSONAny != 0 && !t.definitelyText(c[1]) || r&tJSONAny != 0 && !t.definitelyText(c[0]) {
			return "|| of a value that may be jsonb or json with one not known to be text (jsonb || jsonb merges the documents)"
		}
	}
	for _, n := range ts.casts {
		if t.typesOf(n)&tJSONAny != 0 {
			return "a cast of " + describeExpr(n) + ", which may be jsonb or json, to a type other than text (Postgres refuses a document of another JSON type; DuckDB reads the text)"
		}
	}
	for _, g := range ts.jsonGets {
		if isStringConst(g[1]) {
			continue
		}
		if t.typesOf(g[0])&tJSONAny == tJSONAny {
			return "-> or ->> with a key that may be an integer, of a document that may be json or jsonb (jsonb takes a scalar as a one-element array, json does not)"
		}
	}
	for _, c := range ts.contains {
		s := t.typesOf(c[0])
		if s&tJSON != 0 || s&tJSONB != 0 && s&^tJSONAny != 0 {
			return "@> or <@ of a value that may be jsonb, json or an array"
		}
	}
	return ""
}

// definitelyText reports whether n is text, varchar or char(n) whatever
// the names in it stand for.
func (t *typer) definitelyText(n *pg_query.Node) bool {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_TypeCast:
		return castTarget(v.TypeCast, textTypeNames)
	case *pg_query.Node_AExpr:
		switch operatorName(v.AExpr) {
		case "->>", "#>>":
			return v.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_OP
		case "||":
			return v.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_OP && (t.definitelyText(v.AExpr.Lexpr) || t.definitelyText(v.AExpr.Rexpr))
		}
	case *pg_query.Node_FuncCall:
		return textResultFuncs[funcName(v.FuncCall)] && len(v.FuncCall.Funcname) == 1
	case *pg_query.Node_ColumnRef:
		name := lastField(v.ColumnRef)
		return name != "" && len(t.a.aliasDefs[name]) == 0 && len(t.a.types.outputs[name]) == 0 &&
			columnsAre(t.r, name, func(c catalog.ColumnInfo) bool { return textTypeOIDs[c.TypeOID] })
	}
	return false
}
