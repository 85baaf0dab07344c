package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Ordering text under a linguistic collation. DuckDB orders strings by
// their bytes; Postgres by the collation of the values: a column's own, or
// the database's default for text of no column (a literal, to_char, the
// text out of a jsonb). Where that collation is a libc one the
// acceleration reproduces (catalog.ColumnInfo.CollationLocale for a
// column, Session.DefaultCollationLocale for the default), the rewrite
// orders and range-compares by the values' keys under that locale,
// pgaccel_collkey(x, locale) (accelerator.CollationKey: strxfrm_l, then the
// bytes, as Postgres breaks ties), and keeps returning the values:
//
//   - ORDER BY x (by position, name or expression), a window's ORDER BY,
//     an aggregate's ORDER BY (string_agg(x, ',' ORDER BY x)): by the key;
//   - x < y, <=, >, >=, [NOT] BETWEEN [SYMMETRIC]: of the keys (a string
//     literal or parameter beside a text taken as that text);
//   - min(x), max(x) (also over a window): arg_min(x, key), arg_max(x, key).
//
// Equality needs no key: a deterministic collation compares equal strings
// by their bytes (=, <>, IN, GROUP BY, DISTINCT, joins, PARTITION BY).
// Where the rewrite cannot key an ordering of such text — GREATEST and
// LEAST, ordering operators with ANY/ALL, WITHIN GROUP, an ORDER BY of a
// set operation, arrays of text, text of two collations — or cannot tell
// whether an ordered value is text, the statement goes to the origin.

// pgdef.FuncCollkey is pgdef.FuncCollkey.

// collClass is what the rewrite knows of a value's ordering.
type collClass struct {
	kind collKind
	// coll is a text's collation: "" bytewise, "L" + locale for a
	// reproduced one, "X" + why for one that is not.
	coll string
}

type collKind uint8

const (
	collNotText collKind = iota // no collation: numbers, dates, booleans, ...
	collText                    // text of coll
	collAdopt                   // a string literal or parameter: its partner's
	collArray                   // an array of text of coll
	collEnum                    // an enum of the type of coll ("E" + oid; enums.go)
	collUnknown                 // may be text of any collation
)

// linguistic reports whether c is text (or an array of it) whose order
// is not bytewise.
func (c collClass) linguistic() bool {
	return (c.kind == collText || c.kind == collArray) && c.coll != "" || c.kind == collEnum
}

// collScope classifies the values of one rewritten statement.
type collScope struct {
	a   *analysis
	r   resolution
	def string // the default collation's coll
	// visiting are the names whose alias definitions are being followed:
	// min(user_id) AS user_id refers to the column, not to itself.
	visiting map[string]bool
	// hasEnums: a dataset the statement reads has an enum column.
	hasEnums bool
	// funcCols are the columns of functions in FROM (unnest(a) WITH
	// ORDINALITY AS x(elem, ord), generate_series(...) AS s(d)).
	funcCols map[string][]collClass
}

// collationClass is the class of a column of the datasets.
func columnColl(c catalog.ColumnInfo) string {
	switch {
	case c.BinaryCollation:
		return ""
	case c.CollationLocale != "":
		return "L" + c.CollationLocale
	case c.CollationNote != "":
		return "X" + c.CollationNote
	}
	return "Xits collation is not bytewise"
}

// collTextArrays are the arrays of collatable types.
var collTextArrays = map[uint32]bool{pgdef.OIDTextArray: true, pgdef.OIDVarcharArray: true, pgdef.OIDBpcharArray: true, pgdef.OIDNameArray: true}

// of is n's class.
func (k *collScope) of(n *pg_query.Node, depth int) collClass {
	unknown := collClass{kind: collUnknown}
	if n == nil {
		return collClass{}
	}
	if depth > maxAliasDepth {
		return unknown
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		name := lastField(v.ColumnRef)
		if name == "" {
			return unknown // a whole row
		}
		var out []collClass
		found := false
		if cs, ok := k.funcCols[name]; ok {
			out, found = append(out, cs...), true
		}
		for _, d := range k.r.datasets {
			for _, c := range d.state.Columns {
				if c.Name != name {
					continue
				}
				found = true
				switch {
				case len(c.EnumLabels) > 0:
					out = append(out, columnEnum(c))
				case collatable(c.TypeOID) && collTextArrays[c.TypeOID]:
					out = append(out, collClass{kind: collArray, coll: columnColl(c)})
				case collatable(c.TypeOID):
					out = append(out, collClass{kind: collText, coll: columnColl(c)})
				default:
					out = append(out, collClass{})
				}
			}
		}
		if !k.visiting[name] {
			if k.visiting == nil {
				k.visiting = map[string]bool{}
			}
			k.visiting[name] = true
			for _, def := range k.a.aliasDefs[name] {
				if cr := def.GetColumnRef(); cr != nil && lastField(cr) == name {
					continue
				}
				out = append(out, k.of(def, depth+1))
			}
			delete(k.visiting, name)
		} else if !found {
			return unknown
		}
		if !found && len(k.a.aliasDefs[name]) == 0 {
			if strings.HasPrefix(name, "pgaccel_") || name == "_pgaccel_key" {
				return collClass{} // the rewrite's own hidden columns: numbers
			}
			return unknown
		}
		return sameClass(out)
	case *pg_query.Node_AConst:
		if _, ok := v.AConst.Val.(*pg_query.A_Const_Sval); ok {
			return collClass{kind: collAdopt}
		}
		return collClass{}
	case *pg_query.Node_ParamRef:
		return collClass{kind: collAdopt}
	case *pg_query.Node_CollateClause:
		names, _ := stringsOf(v.CollateClause.Collname)
		if len(names) > 0 {
			switch strings.ToLower(names[len(names)-1]) {
			case "c", "posix", "ucs_basic":
				return collClass{kind: collText}
			case "default":
				return collClass{kind: collText, coll: k.def}
			}
		}
		return unknown
	case *pg_query.Node_TypeCast:
		tc := v.TypeCast
		if tc.TypeName == nil {
			return unknown
		}
		if len(tc.TypeName.ArrayBounds) > 0 {
			if castTarget(tc, textTypeNames) {
				return collClass{kind: collArray, coll: k.def}
			}
			return unknown
		}
		if castTarget(tc, textTypeNames) {
			if c := k.of(tc.Arg, depth+1); c.kind == collText {
				return c
			}
			return collClass{kind: collText, coll: k.def}
		}
		if castTarget(tc, plainTypeNames) || castTarget(tc, map[string]bool{"jsonb": true}) {
			return collClass{}
		}
		return unknown
	case *pg_query.Node_AExpr:
		e := v.AExpr
		switch e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_NULLIF:
			return k.of(e.Lexpr, depth+1)
		case pg_query.A_Expr_Kind_AEXPR_OP:
		default:
			return collClass{} // IN, LIKE, BETWEEN, DISTINCT FROM, ...: booleans
		}
		switch divisionOp(e) {
		case "->>", "#>>":
			return collClass{kind: collText, coll: k.def}
		case "->", "#>", "#-":
			return collClass{} // jsonb (its ordering is refused elsewhere)
		case "||":
			return k.combine(collText, []*pg_query.Node{e.Lexpr, e.Rexpr}, depth)
		case "+", "-", "*", "/", "%", "^", "&", "|", "#", "<<", ">>":
			return collClass{}
		}
		if comparisonOps[divisionOp(e)] {
			return collClass{}
		}
		return unknown
	case *pg_query.Node_FuncCall:
		return k.call(v.FuncCall, depth)
	case *pg_query.Node_CaseExpr:
		var rs []*pg_query.Node
		for _, w := range v.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				rs = append(rs, cw.Result)
			}
		}
		rs = append(rs, v.CaseExpr.Defresult)
		return k.combine(collNotText, rs, depth)
	case *pg_query.Node_CoalesceExpr:
		return k.combine(collNotText, v.CoalesceExpr.Args, depth)
	case *pg_query.Node_MinMaxExpr:
		return k.combine(collNotText, v.MinMaxExpr.Args, depth)
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest, *pg_query.Node_GroupingFunc:
		return collClass{}
	case *pg_query.Node_SubLink:
		sl := v.SubLink
		if sl.SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK {
			if sel := sl.Subselect.GetSelectStmt(); sel != nil && sel.Op == pg_query.SetOperation_SETOP_NONE && len(sel.TargetList) == 1 {
				if rt := sel.TargetList[0].GetResTarget(); rt != nil {
					return k.of(rt.Val, depth+1)
				}
			}
			return unknown
		}
		if sl.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK {
			return unknown
		}
		return collClass{} // EXISTS, IN, ANY, ALL: booleans
	case *pg_query.Node_AIndirection:
		c := k.of(v.AIndirection.Arg, depth+1)
		if c.kind == collArray {
			for _, ind := range v.AIndirection.Indirection {
				if ix := ind.GetAIndices(); ix != nil && ix.IsSlice {
					return c
				}
			}
			return collClass{kind: collText, coll: c.coll}
		}
		if c.kind == collNotText {
			return collClass{}
		}
		return unknown
	case *pg_query.Node_AArrayExpr:
		c := k.combine(collNotText, v.AArrayExpr.Elements, depth)
		if c.kind == collText {
			c.kind = collArray
		}
		return c
	}
	return unknown
}

// collTextFuncs return text of their collatable arguments' collation,
// or the default when none is collatable (Postgres's and the rewrite's
// own names).
var collTextFuncs = map[string]bool{
	pgdef.FuncText: true, pgdef.FuncInitcapASCII: true, pgdef.FuncJSONGetText: true, pgdef.FuncJSONPathText: true,
	pgdef.FuncJSONTypeof: true, "translate": true, "strftime": true, pgdef.FuncToChar: true,
	pgdef.FuncUpper: true, pgdef.FuncLower: true, pgdef.FuncInitcap: true,
}

// call is the class of a function's result.
func (k *collScope) call(fc *pg_query.FuncCall, depth int) collClass {
	name := funcName(fc)
	switch {
	case name == "error":
		return collClass{kind: collAdopt} // never returns
	case name == "if" && len(fc.Args) == 3: // DuckDB's if(condition, a, b)
		return k.combine(collNotText, fc.Args[1:], depth)
	case name == "arg_min" || name == "arg_max":
		if len(fc.Args) > 0 {
			return k.of(fc.Args[0], depth+1)
		}
	case name == "string_agg":
		if len(fc.Args) > 0 {
			return k.combine(collText, fc.Args[:1], depth)
		}
	case name == "array_agg":
		if len(fc.Args) == 1 {
			c := k.of(fc.Args[0], depth+1)
			switch c.kind {
			case collText:
				c.kind = collArray
				return c
			case collNotText:
				return c
			}
		}
		return collClass{kind: collUnknown}
	case passThroughFuncs[name]:
		args := fc.Args
		if (name == "lag" || name == "lead") && len(args) > 1 {
			args = append([]*pg_query.Node{args[0]}, args[2:]...)
		}
		if name == "nth_value" && len(args) > 1 {
			args = args[:1]
		}
		if fc.AggWithinGroup && len(fc.AggOrder) > 0 {
			args = []*pg_query.Node{fc.AggOrder[0].GetSortBy().GetNode()}
		}
		return k.combine(collNotText, args, depth)
	case strings.HasPrefix(name, "pgaccel_json") && (strings.HasSuffix(name, "_text") || strings.HasSuffix(name, "_typeof")):
		return collClass{kind: collText, coll: k.def} // the text out of a json(b)
	case strings.HasPrefix(name, "pgaccel_json"):
		return collClass{} // json(b), numbers, booleans
	case collatedTextFuncs[name] || collTextFuncs[name]:
		switch name {
		case "array_to_string", "to_char", "jsonb_typeof", "json_typeof", "md5", "to_hex", "chr", "encode",
			"quote_ident", "quote_literal", pgdef.FuncText, pgdef.FuncJSONGetText, pgdef.FuncJSONPathText,
			pgdef.FuncJSONTypeof, "strftime", pgdef.FuncToChar, "jsonb_extract_path_text", "json_extract_path_text":
			return collClass{kind: collText, coll: k.def}
		}
		return k.combine(collText, fc.Args, depth)
	case nonTextFuncs[name] || floatFuncs[name] || intervalFuncs[name] || temporalFuncs[name] || dateFuncs[name] ||
		numericOrFloatFuncs[name] || name == pgdef.FuncCollkey || name == pgdef.FuncIntervalKey,
		strings.HasPrefix(name, "pgaccel_numeric") || strings.HasPrefix(name, "pgaccel_interval") ||
			strings.HasPrefix(name, "pgaccel_tstz") || strings.HasPrefix(name, "pgaccel_float8") ||
			strings.HasPrefix(name, "epoch"),
		name == "len" || name == "list_count" || name == "list_contains" || name == "list_position" || name == "strlen" || name == "isnan" ||
			name == "isinf" || name == "typeof" || name == "generate_series" || name == "max_by" || name == "min_by":
		return collClass{}
	}
	return collClass{kind: collUnknown}
}

// combine is the class of a value made of ns: text (of one collation) when
// each is text of it or adopts it, kind when none is text; unknown
// otherwise. kind collText: the value is text even of no text operand
// (the default collation's then).
func (k *collScope) combine(kind collKind, ns []*pg_query.Node, depth int) collClass {
	var cs []collClass
	for _, n := range ns {
		if n == nil {
			continue
		}
		if c := n.GetAConst(); c != nil && c.Isnull {
			continue
		}
		c := k.of(n, depth+1)
		if kind == collText && c.kind == collNotText {
			continue // substr(x, 2): the text is x's
		}
		if kind == collText && c.kind == collEnum {
			c = collClass{kind: collText, coll: k.def} // status || '!': the label's text
		}
		cs = append(cs, c)
	}
	out := sameClass(cs)
	switch {
	case out.kind == collAdopt && kind == collText:
		return collClass{kind: collText, coll: k.def}
	case out.kind == collNotText && kind == collText:
		return collClass{kind: collText, coll: k.def}
	case out.kind == collArray && kind == collText:
		return collClass{kind: collUnknown}
	}
	return out
}

// sameClass is the class shared by cs, adopting values taking their
// partners'; unknown when they differ.
func sameClass(cs []collClass) collClass {
	out := collClass{kind: collAdopt}
	seen := false
	for _, c := range cs {
		switch {
		case c.kind == collAdopt:
			continue
		case c.kind == collUnknown:
			return c
		case !seen:
			out, seen = c, true
		case c != out:
			return collClass{kind: collUnknown}
		}
	}
	if !seen && len(cs) == 0 {
		return collClass{}
	}
	return out
}

// collationWhy is the refusal of an ordering of n of class c.
func collationRefusal(what string, n *pg_query.Node, c collClass) error {
	why := "its collation is not bytewise"
	if c.kind == collEnum {
		why = "an enum, which the acceleration orders only where it keys it"
	}
	if strings.HasPrefix(c.coll, "X") {
		why = c.coll[1:]
	}
	if c.kind == collUnknown {
		why = "it may be text of a collation that is not bytewise"
	}
	return &refusal{why: what + " " + exprText(n) + ": " + why, reason: ReasonCollation}
}

// collKey is n's key under the locale of coll ("L" + locale).
func collKey(n *pg_query.Node, coll string) *pg_query.Node {
	return fnCall(pgdef.FuncCollkey, n, pg_query.MakeAConstStrNode(coll[1:], -1))
}

// orderCollations rewrites the statement root as above, or refuses it.
// def is the default collation's coll.
func orderCollations(root *pg_query.Node, a *analysis, r resolution, def string, unquote func(string) string) error {
	k := &collScope{a: a, r: r, def: def}
	k.hasEnums = k.anyEnumColumn()
	if def == "" && !k.anyLinguisticColumn() && !k.hasEnums {
		return nil // every text is ordered by its bytes, and no enum is read
	}
	var s collSites
	walk(root, &s)
	k.noteFuncCols(s.rangeFuncs)
	// judge returns the key of n, or n when it needs none.
	judge := func(what string, n *pg_query.Node) (*pg_query.Node, error) {
		c := k.of(n, 0)
		switch {
		case c.kind == collNotText || c.kind == collAdopt || (c.kind == collText || c.kind == collArray) && c.coll == "":
			return n, nil
		case c.kind == collText && strings.HasPrefix(c.coll, "L"):
			return collKey(copyNode(n), c.coll), nil
		case c.kind == collEnum:
			return k.enumKey(copyNode(n), c.coll), nil
		}
		return nil, collationRefusal(what, n, c)
	}
	if err := k.enumSetOps(s.selects); err != nil {
		return err
	}
	// Operators and functions, innermost first.
	for i := len(s.nodes) - 1; i >= 0; i-- {
		if err := k.enumSite(s.nodes[i]); err != nil {
			return err
		}
		if err := k.rewriteSite(s.nodes[i]); err != nil {
			return err
		}
	}
	// Sorts: of statements (by position or name), then of windows and
	// aggregates.
	done := map[*pg_query.SortBy]bool{}
	for _, sel := range s.selects {
		for _, item := range sel.SortClause {
			sb := item.GetSortBy()
			if sb == nil {
				continue
			}
			done[sb] = true
			if isSetOp(sel) {
				if err := k.setOpSort(sel, sb); err != nil {
					return err
				}
				continue
			}
			expr, ok := sortTarget(sel, sb.Node, unquote)
			if !ok {
				return refuseCollation("an ORDER BY position in a * whose columns may be text of a collation that is not bytewise")
			}
			key, err := judge("ordering by", expr)
			if err != nil {
				return err
			}
			if key != expr {
				sb.Node = key
			}
		}
	}
	for _, fc := range s.withinGroup {
		for _, item := range fc.AggOrder {
			if sb := item.GetSortBy(); sb != nil {
				done[sb] = true
				if c := k.of(sb.Node, 0); c.linguistic() || c.kind == collUnknown {
					return collationRefusal(funcName(fc)+" WITHIN GROUP ordering by", sb.Node, c)
				}
			}
		}
	}
	for _, sb := range s.sorts {
		if done[sb] {
			continue
		}
		key, err := judge("ordering by", sb.Node)
		if err != nil {
			return err
		}
		sb.Node = key
	}
	return nil
}

// anyLinguisticColumn reports whether a dataset the statement reads has a
// text column (or array of text) whose order is not bytewise.
func (k *collScope) anyLinguisticColumn() bool {
	return k.r.anyColumn(func(c catalog.ColumnInfo) bool { return collatable(c.TypeOID) && !c.BinaryCollation })
}

// setOpSort refuses an ORDER BY of a set operation whose column may be
// text that does not order by its bytes.
func (k *collScope) setOpSort(sel *pg_query.SelectStmt, sb *pg_query.SortBy) error {
	arms := setOpArms(sel)
	left := arms[0]
	i := setOpOutput(left, sb.Node)
	var cs []collClass
	for _, arm := range arms {
		if i < 0 || i >= len(arm.TargetList) || isStarTarget(arm.TargetList[i].GetResTarget()) {
			return refuseCollation("an ORDER BY of a set operation the planner cannot resolve, whose columns may be text of a collation that is not bytewise")
		}
		cs = append(cs, k.of(arm.TargetList[i].GetResTarget().GetVal(), 0))
	}
	if c := sameClass(cs); c.linguistic() || c.kind == collUnknown {
		return collationRefusal("ordering a set operation by", sb.Node, c)
	}
	return nil
}

// rewriteSite keys or refuses one comparison, GREATEST or LEAST, subquery
// test or min/max (held by node).
func (k *collScope) rewriteSite(node *pg_query.Node) error {
	switch v := node.GetNode().(type) {
	case *pg_query.Node_AExpr:
		e := v.AExpr
		op := divisionOp(e)
		switch e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_OP:
			if !orderingOps[op] || e.Lexpr == nil {
				return nil
			}
			c := sameClass([]collClass{k.of(e.Lexpr, 0), k.of(e.Rexpr, 0)})
			if !c.linguistic() && c.kind != collUnknown {
				return nil
			}
			if c.kind == collEnum {
				e.Lexpr, e.Rexpr = k.enumKey(e.Lexpr, c.coll), k.enumKey(e.Rexpr, c.coll)
				return nil
			}
			if c.kind != collText || !strings.HasPrefix(c.coll, "L") {
				return collationRefusal("comparing "+exprText(e.Lexpr)+" with", e.Rexpr, c)
			}
			e.Lexpr, e.Rexpr = collKey(e.Lexpr, c.coll), collKey(e.Rexpr, c.coll)
		case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
			if !orderingOps[op] {
				return nil
			}
			if c := k.of(e.Lexpr, 0); c.linguistic() || c.kind == collUnknown {
				return collationRefusal("comparing with ANY or ALL", e.Lexpr, c)
			}
		case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
			pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
			l := e.Rexpr.GetList()
			if l == nil {
				return nil
			}
			cs := []collClass{k.of(e.Lexpr, 0)}
			for _, item := range l.Items {
				cs = append(cs, k.of(item, 0))
			}
			c := sameClass(cs)
			if !c.linguistic() && c.kind != collUnknown {
				return nil
			}
			key := func(n *pg_query.Node) *pg_query.Node { return collKey(n, c.coll) }
			switch {
			case c.kind == collEnum:
				key = func(n *pg_query.Node) *pg_query.Node { return k.enumKey(n, c.coll) }
			case c.kind != collText || !strings.HasPrefix(c.coll, "L"):
				return collationRefusal("BETWEEN of", e.Lexpr, c)
			}
			e.Lexpr = key(e.Lexpr)
			for i, item := range l.Items {
				l.Items[i] = key(item)
			}
		}
	case *pg_query.Node_MinMaxExpr:
		if c := k.combine(collNotText, v.MinMaxExpr.Args, 0); c.linguistic() || c.kind == collUnknown {
			return collationRefusal("GREATEST or LEAST of", v.MinMaxExpr.Args[0], c)
		}
	case *pg_query.Node_SubLink:
		sl := v.SubLink
		if sl.SubLinkType != pg_query.SubLinkType_ANY_SUBLINK && sl.SubLinkType != pg_query.SubLinkType_ALL_SUBLINK || len(sl.OperName) == 0 {
			return nil
		}
		names, _ := stringsOf(sl.OperName)
		if len(names) == 0 || !orderingOps[names[len(names)-1]] {
			return nil
		}
		if c := k.of(sl.Testexpr, 0); c.linguistic() || c.kind == collUnknown {
			return collationRefusal("comparing with ANY or ALL (subquery)", sl.Testexpr, c)
		}
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		name := funcName(fc)
		if fc.AggDistinct && orderSensitiveAggs[name] && len(fc.AggOrder) == 0 && len(fc.Args) > 0 {
			// Postgres sorts the input of a DISTINCT aggregate, under its
			// collation: string_agg(DISTINCT w, ',') lists w in that order.
			if c := k.of(fc.Args[0], 0); c.linguistic() || c.kind == collUnknown {
				return collationRefusal(name+"(DISTINCT ...) of", fc.Args[0], c)
			}
		}
		if name != "min" && name != "max" || len(fc.Args) != 1 || fc.AggWithinGroup {
			return nil
		}
		c := k.of(fc.Args[0], 0)
		if !c.linguistic() && c.kind != collUnknown {
			return nil
		}
		if c.kind != collEnum && (c.kind != collText || !strings.HasPrefix(c.coll, "L")) || fc.AggDistinct {
			return collationRefusal(name+" of", fc.Args[0], c)
		}
		fn := "arg_min"
		if name == "max" {
			fn = "arg_max"
		}
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(fn)}
		if c.kind == collEnum {
			fc.Args = append(fc.Args, k.enumKey(copyNode(fc.Args[0]), c.coll))
		} else {
			fc.Args = append(fc.Args, collKey(copyNode(fc.Args[0]), c.coll))
		}
	}
	return nil
}

// refuseCollation refuses for a collation's sake.
func refuseCollation(why string) error { return &refusal{why: why, reason: ReasonCollation} }

// collSites are the nodes where text may be ordered.
type collSites struct {
	sortSites
	nodes       []*pg_query.Node
	withinGroup []*pg_query.FuncCall
	rangeFuncs  []*pg_query.RangeFunction
}

func (s *collSites) enter(m proto.Message, w *walker) {
	s.sortSites.enter(m, w)
	switch n := m.(type) {
	case *pg_query.RangeFunction:
		s.rangeFuncs = append(s.rangeFuncs, n)
	case *pg_query.A_Expr, *pg_query.MinMaxExpr, *pg_query.SubLink, *pg_query.TypeCast, *pg_query.CaseExpr, *pg_query.CoalesceExpr:
		if w.node() != nil {
			s.nodes = append(s.nodes, w.node())
		}
	case *pg_query.FuncCall:
		if w.node() != nil {
			s.nodes = append(s.nodes, w.node())
		}
		if n.AggWithinGroup {
			s.withinGroup = append(s.withinGroup, n)
		}
	}
}

// defaultCollClass is the class of the session's default collation.
func defaultCollClass(s *Session) string {
	switch {
	case s == nil || s.TextBytewise:
		return ""
	case s.DefaultCollationLocale != "":
		return "L" + s.DefaultCollationLocale
	}
	return "Xthe database's default collation is not bytewise, and pgaccel has not established that it orders as the origin"
}

// noteFuncCols records the classes of the columns functions in FROM
// name: generate_series's values are numbers or times, unnest's the
// elements of its array, an ordinality a bigint; anything else may be
// text.
func (k *collScope) noteFuncCols(rfs []*pg_query.RangeFunction) {
	for _, rf := range rfs {
		if rf.Alias == nil || len(rf.Alias.Colnames) == 0 {
			continue
		}
		var classes []collClass
		for _, item := range rf.Functions {
			l := item.GetList()
			if l == nil || len(l.Items) == 0 {
				continue
			}
			fc := l.Items[0].GetFuncCall()
			switch {
			case fc == nil:
				classes = append(classes, collClass{kind: collUnknown})
			case funcName(fc) == "generate_series":
				classes = append(classes, collClass{})
			case funcName(fc) == "unnest":
				for _, arg := range fc.Args {
					c := k.of(arg, 1)
					switch c.kind {
					case collArray:
						c.kind = collText
					case collNotText:
					default:
						c = collClass{kind: collUnknown}
					}
					classes = append(classes, c)
				}
			default:
				classes = append(classes, collClass{kind: collUnknown})
			}
		}
		if rf.Ordinality {
			classes = append(classes, collClass{})
		}
		if k.funcCols == nil {
			k.funcCols = map[string][]collClass{}
		}
		for i, n := range rf.Alias.Colnames {
			name := n.GetString_().GetSval()
			c := collClass{kind: collUnknown}
			if i < len(classes) && len(classes) == len(rf.Alias.Colnames) {
				c = classes[i]
			}
			k.funcCols[name] = append(k.funcCols[name], c)
		}
	}
}
