package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/pgaccel/pgaccel/pgdef"
)

// Value kinds. Some types have values that are equal but not the same:
// a double precision -0 equals 0 but prints "-0", an interval '1 mon'
// equals '30 days'. DuckDB sorts, compares and deduplicates such values
// otherwise than Postgres (negzero.go, intervalorder.go, correlated.go),
// so the rewrite must know which expressions may hold them. kindsOf
// answers with the set of kinds an expression's value may be of, from the
// datasets' column types, casts, constants, operators and the functions
// it knows; anything else may be of any kind. It never says a value
// cannot be of a kind that it may be of.

// kindSet is a set of kinds.
type kindSet uint16

const (
	// ksOther: a type whose equal values are the same value, ordered
	// alike in both engines (integers, numerics, text, booleans, json,
	// uuid, bytea, arrays of those, ...).
	ksOther       kindSet = 1 << iota
	ksFloat               // float4, float8
	ksFloatArr            // arrays of them
	ksInterval            // interval
	ksIntervalArr         // arrays of intervals
	ksTemporal            // timestamp, timestamptz, time, timetz
	ksDate                // date
	// ksUnknown is a string literal, whose type is what it meets.
	ksUnknown

	ksAll       = ksOther | ksFloat | ksFloatArr | ksInterval | ksIntervalArr | ksTemporal | ksDate
	ksFloats    = ksFloat | ksFloatArr
	ksIntervals = ksInterval | ksIntervalArr
)

// has reports whether k may be of a kind of bits.
func (k kindSet) has(bits kindSet) bool { return k&bits != 0 }

// only reports whether every kind k may be of is in bits (string
// literals taking their type from bits), and k is not empty.
func (k kindSet) only(bits kindSet) bool {
	k &^= ksUnknown
	return k != 0 && k&^bits == 0
}

// arrayOf is the kinds of an array of elements of kinds k.
func (k kindSet) arrayOf() kindSet {
	out := kindSet(0)
	if k.has(ksFloats) {
		out |= ksFloatArr
	}
	if k.has(ksIntervals) {
		out |= ksIntervalArr
	}
	if k.has(ksOther | ksTemporal | ksDate | ksUnknown) {
		out |= ksOther
	}
	return out
}

// elementOf is the kinds of an element (or a slice) of an array of kinds k.
func (k kindSet) elementOf() kindSet {
	out := kindSet(0)
	if k.has(ksFloatArr) {
		out |= ksFloat | ksFloatArr
	}
	if k.has(ksIntervalArr) {
		out |= ksInterval | ksIntervalArr
	}
	if k.has(ksOther) {
		out |= ksOther | ksTemporal | ksDate
	}
	if k.has(ksFloat | ksInterval | ksTemporal | ksDate) {
		out |= ksAll // not an array: a field selection of a composite
	}
	return out
}

// oidKinds is the kind of a column of type oid.
func oidKinds(oid uint32) kindSet {
	switch oid {
	case pgdef.OIDFloat4, pgdef.OIDFloat8:
		return ksFloat
	case pgdef.OIDFloat4Array, pgdef.OIDFloat8Array: // float4[], float8[]
		return ksFloatArr
	case pgdef.OIDInterval:
		return ksInterval
	case pgdef.OIDIntervalArray: // interval[]
		return ksIntervalArr
	case pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDTime, pgdef.OIDTimetz:
		return ksTemporal
	case pgdef.OIDDate:
		return ksDate
	}
	return ksOther
}

// typeNameKinds is the kind of a value cast to tn; ksAll for a type the
// planner does not know.
func typeNameKinds(tn *pg_query.TypeName) kindSet {
	if tn == nil {
		return ksAll
	}
	parts, ok := stringsOf(tn.Names)
	if !ok || len(parts) == 0 {
		return ksAll
	}
	var k kindSet
	switch strings.ToLower(parts[len(parts)-1]) {
	case "float4", "float8", "real", "float", "double precision":
		k = ksFloat
	case "interval":
		k = ksInterval
	case "timestamp", "timestamptz", "time", "timetz":
		k = ksTemporal
	case "date":
		k = ksDate
	case "int2", "int4", "int8", "int", "integer", "smallint", "bigint", "numeric", "decimal", "text", "varchar",
		"bpchar", "char", "bool", "boolean", "json", "jsonb", "uuid", "bytea", "name", "bit", "varbit", "money", "oid":
		k = ksOther
	default:
		return ksAll
	}
	if len(tn.ArrayBounds) > 0 {
		return k.arrayOf()
	}
	return k
}

// kindsIn returns the kinds function of the expressions of the
// (rewritten) statement root, resolved as r: the kinds their values may
// be of. unquote maps a column name the rewrite protected (identQuoter)
// back to its own. Names are followed to the datasets' columns, to the
// output columns of that name (analysis.aliasDefs), and to the columns
// FROM items declare in column alias lists (FROM generate_series(...)
// g(n), (SELECT ...) s(a, b), WITH r(n) AS (...)).
func (a *analysis) kindsIn(root proto.Message, r resolution, unquote func(string) string) func(*pg_query.Node) kindSet {
	d := declaredNames{names: map[string][]*pg_query.Node{}, unquote: unquote}
	walk(root, &d)
	k := kindScope{a: a, r: r, unquote: unquote, declared: d.names, visiting: map[string]bool{}}
	return func(n *pg_query.Node) kindSet {
		out := k.of(n, 0)
		if out == ksUnknown {
			return ksOther // a string literal alone is text
		}
		return out
	}
}

type kindScope struct {
	a        *analysis
	r        resolution
	unquote  func(string) string
	declared map[string][]*pg_query.Node // a nil definition: of any kind
	// visiting are the names being followed: an output column defined
	// by its own name (min(user_id) AS user_id) adds nothing to the
	// columns of that name.
	visiting map[string]bool
}

// declaredNames collects the columns FROM items and WITH queries declare
// in column alias lists, with the expressions that define them.
type declaredNames struct {
	names   map[string][]*pg_query.Node
	unquote func(string) string
}

func (d *declaredNames) add(name string, def *pg_query.Node) {
	name = d.unquote(name)
	d.names[name] = append(d.names[name], def)
}

func (d *declaredNames) enter(m proto.Message, _ *walker) {
	switch n := m.(type) {
	case *pg_query.RangeFunction:
		var fn *pg_query.Node
		if len(n.Functions) == 1 {
			if l := n.Functions[0].GetList(); l != nil && len(l.Items) > 0 && l.Items[0].GetFuncCall() != nil {
				fn = l.Items[0]
			}
		}
		if n.Alias == nil {
			return
		}
		if len(n.Alias.Colnames) == 0 {
			d.add(n.Alias.Aliasname, fn) // a one-column function's column takes the alias
			return
		}
		for i, c := range n.Alias.Colnames {
			def := fn
			switch {
			case n.Ordinality && i == len(n.Alias.Colnames)-1:
				def = pg_query.MakeAConstIntNode(1, -1)
			case i > 0:
				def = nil
			}
			d.add(c.GetString_().GetSval(), def)
		}
	case *pg_query.RangeSubselect:
		if n.Alias != nil {
			for i, c := range n.Alias.Colnames {
				d.add(c.GetString_().GetSval(), outputAt(n.Subquery.GetSelectStmt(), i))
			}
		}
	case *pg_query.CommonTableExpr:
		for i, c := range n.Aliascolnames {
			d.add(c.GetString_().GetSval(), outputAt(n.Ctequery.GetSelectStmt(), i))
		}
	}
}

// outputAt is the expression of output column i of sel (of its first
// branch), or nil.
func outputAt(sel *pg_query.SelectStmt, i int) *pg_query.Node {
	for sel != nil && sel.Larg != nil {
		sel = sel.Larg
	}
	if sel == nil {
		return nil
	}
	if len(sel.ValuesLists) > 0 {
		if l := sel.ValuesLists[0].GetList(); l != nil && i < len(l.Items) {
			return l.Items[i]
		}
		return nil
	}
	if i >= len(sel.TargetList) {
		return nil
	}
	for _, t := range sel.TargetList[:i+1] {
		if isStarTarget(t.GetResTarget()) {
			return nil
		}
	}
	return sel.TargetList[i].GetResTarget().GetVal()
}

func (k kindScope) name(s string) string {
	if k.unquote != nil {
		return k.unquote(s)
	}
	return s
}

// column returns the kinds of the column reference cr: of the dataset
// column its qualifier names, or of every column and output column of
// its name.
func (k kindScope) column(cr *pg_query.ColumnRef, depth int) kindSet {
	if len(cr.Fields) == 0 || lastField(cr) == "" {
		return ksAll // * or t.*
	}
	name := k.name(lastField(cr))
	if len(cr.Fields) >= 2 {
		qual := k.name(cr.Fields[len(cr.Fields)-2].GetString_().GetSval())
		for i, rel := range k.a.rels {
			if rel.refName() != qual || rel.colAliases || i >= len(k.r.relDS) || k.r.relDS[i] >= len(k.r.datasets) {
				continue
			}
			for _, c := range k.r.datasets[k.r.relDS[i]].state.Columns {
				if c.Name == name {
					return oidKinds(c.TypeOID)
				}
			}
		}
	}
	out, found := kindSet(0), false
	for _, d := range k.r.datasets {
		for _, c := range d.state.Columns {
			if c.Name == name {
				out |= oidKinds(c.TypeOID)
				found = true
			}
		}
	}
	if k.visiting[name] {
		return out
	}
	k.visiting[name] = true
	defer delete(k.visiting, name)
	for _, def := range k.a.aliasDefs[name] {
		if dc := def.GetColumnRef(); dc != nil && lastField(dc) == name {
			continue // a column under its own name: counted above
		}
		found = true
		if depth >= maxAliasDepth {
			return ksAll
		}
		out |= k.of(def, depth+1)
	}
	for _, def := range k.declared[name] {
		found = true
		if def == nil || depth >= maxAliasDepth {
			return ksAll
		}
		if dc := def.GetColumnRef(); dc != nil && k.name(lastField(dc)) == name && len(dc.Fields) == 1 {
			continue
		}
		out |= k.of(def, depth+1)
	}
	if !found {
		if strings.HasPrefix(name, hiddenColumn("")) {
			return ksOther // a scale the rewrite computes (scaletrack.go)
		}
		return ksAll // an outer column, a whole row, or a name not known
	}
	return out
}

// join is the union of the kinds of ns, string literals among other
// kinds taking theirs.
func (k kindScope) join(depth int, ns ...*pg_query.Node) kindSet {
	out := kindSet(0)
	for _, n := range ns {
		out |= k.of(n, depth+1)
	}
	if out != ksUnknown {
		out &^= ksUnknown
	}
	return out
}

func (k kindScope) of(n *pg_query.Node, depth int) kindSet {
	if n == nil {
		return 0
	}
	if depth > 64 {
		return ksAll
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		return k.column(v.ColumnRef, depth)
	case *pg_query.Node_AConst:
		switch v.AConst.Val.(type) {
		case nil:
			return 0 // NULL
		case *pg_query.A_Const_Sval:
			return ksUnknown
		}
		return ksOther
	case *pg_query.Node_TypeCast:
		return typeNameKinds(v.TypeCast.TypeName)
	case *pg_query.Node_CollateClause:
		return k.of(v.CollateClause.Arg, depth+1)
	case *pg_query.Node_ParamRef:
		return ksAll
	case *pg_query.Node_FuncCall:
		return k.call(v.FuncCall, depth)
	case *pg_query.Node_AExpr:
		return k.expr(v.AExpr, depth)
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest, *pg_query.Node_GroupingFunc:
		return ksOther
	case *pg_query.Node_CaseExpr:
		ns := []*pg_query.Node{v.CaseExpr.Defresult}
		for _, w := range v.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				ns = append(ns, cw.Result)
			}
		}
		return k.join(depth, ns...)
	case *pg_query.Node_CoalesceExpr:
		return k.join(depth, v.CoalesceExpr.Args...)
	case *pg_query.Node_MinMaxExpr:
		return k.join(depth, v.MinMaxExpr.Args...)
	case *pg_query.Node_AArrayExpr:
		return k.join(depth, v.AArrayExpr.Elements...).arrayOf()
	case *pg_query.Node_RowExpr:
		return k.join(depth, v.RowExpr.Args...).arrayOf() // nested, as an array
	case *pg_query.Node_AIndirection:
		base := k.of(v.AIndirection.Arg, depth+1)
		for _, ind := range v.AIndirection.Indirection {
			if ind.GetAIndices() == nil {
				return ksAll // a field of a composite
			}
			base = base.elementOf()
		}
		return base
	case *pg_query.Node_SubLink:
		sl := v.SubLink
		switch sl.SubLinkType {
		case pg_query.SubLinkType_EXPR_SUBLINK, pg_query.SubLinkType_ARRAY_SUBLINK:
			sel := sl.Subselect.GetSelectStmt()
			for sel != nil && sel.Larg != nil {
				sel = sel.Larg
			}
			if sel == nil || len(sel.TargetList) == 0 {
				return ksAll
			}
			out := k.of(sel.TargetList[0].GetResTarget().GetVal(), depth+1)
			if out == ksUnknown {
				out = ksOther
			}
			if sl.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK {
				return out.arrayOf()
			}
			return out
		}
		return ksOther // EXISTS, IN, ANY, ALL
	}
	return ksAll
}

// expr is the kinds of an operator's result.
func (k kindScope) expr(e *pg_query.A_Expr, depth int) kindSet {
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return k.join(depth, e.Lexpr)
	default:
		return ksOther // comparisons, IN, BETWEEN, LIKE, IS DISTINCT FROM
	}
	op := divisionOp(e)
	switch op {
	case "=", "<>", "!=", "<", ">", "<=", ">=", "~~", "!~~", "~~*", "!~~*", "~", "~*", "!~", "!~*", "@>", "<@", "&&", "?", "?|", "?&", "@@",
		"->", "->>", "#>", "#>>", "&", "|", "#", "<<", ">>", "!":
		return ksOther
	case "|/", "||/":
		return ksFloat
	case "||":
		a := k.join(depth, e.Lexpr, e.Rexpr)
		return ksOther | a&(ksFloatArr|ksIntervalArr) | (a & (ksFloat | ksInterval)).arrayOf()
	case "#-", "@?":
		return ksOther
	case "+", "-", "*", "/", "%", "^", "@":
	default:
		// An operator the planner does not know: an interval only if
		// an operand may be one.
		if k.join(depth, e.Lexpr, e.Rexpr).has(ksIntervals) {
			return ksAll
		}
		return ksAll &^ ksIntervals
	}
	if e.Lexpr == nil { // unary
		return k.join(depth, e.Rexpr)
	}
	l, r := k.of(e.Lexpr, depth+1), k.of(e.Rexpr, depth+1)
	switch {
	case l == ksUnknown && r == ksUnknown:
		l, r = ksOther, ksOther
	case l == ksUnknown:
		l = r
	case r == ksUnknown:
		r = l
	}
	l &^= ksUnknown
	r &^= ksUnknown
	out := kindSet(0)
	for lb := ksOther; lb <= ksDate; lb <<= 1 {
		if !l.has(lb) {
			continue
		}
		for rb := ksOther; rb <= ksDate; rb <<= 1 {
			if r.has(rb) {
				out |= arithKind(op, lb, rb)
			}
		}
	}
	return out
}
