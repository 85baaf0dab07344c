package planner

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Enums. The acceleration holds an enum value as its label (VARCHAR);
// Postgres orders enum values by their position in the type
// (pg_enum.enumsortorder), which catalog.ColumnInfo.EnumLabels lists. The
// collation pass (collorder.go) treats an enum column as a value of its own
// class, collEnum, and orders it by its key, the label's position:
//
//	list_position(list_value('sad', 'ok', 'happy'), x)
//
// guarded so that a label the acceleration does not know (the change stream
// brought one before its labels were read again) fails the statement, which
// then goes to the origin. ORDER BY, window and aggregate ORDER BY, < <= >
// >=, BETWEEN and min/max are keyed as for linguistic text; what the
// collation pass refuses for such text (GREATEST/LEAST, ANY/ALL orderings,
// WITHIN GROUP, ORDER BY of a set operation, DISTINCT aggregates) it
// refuses for enums.
//
// Postgres also refuses much that DuckDB would answer for the label's
// text; so that an error is not answered as a value, the pass sends to the
// origin:
//
//   - a string literal an enum adopts (compared, listed in IN, a CASE or
//     COALESCE arm beside an enum) that is not one of its labels (Postgres:
//     invalid input value for enum); a parameter there is checked when
//     DuckDB runs the statement;
//   - an enum compared with a value that is not of its type (a text
//     column, another enum);
//   - an enum given to a function other than those taking any type
//     (enumArgFuncs), to LIKE and its kin, to arithmetic;
//   - a cast of an enum to anything but text or varchar.
//
// Equality needs no key: labels are unique within a type.

// enumArgFuncs take an enum value as Postgres does (any type), with the
// same answer for its label.
var enumArgFuncs = map[string]bool{
	"count": true, "min": true, "max": true, "arg_min": true, "arg_max": true,
	"first_value": true, "last_value": true, "lag": true, "lead": true, "nth_value": true,
	"concat": true, "concat_ws": true, "format": true, "num_nulls": true, "num_nonnulls": true,
}

// enumColl is the class string of the enum type oid.
func enumColl(oid uint32) string { return "E" + strconv.FormatUint(uint64(oid), 10) }

// columnEnum is the class of an enum column.
func columnEnum(c catalog.ColumnInfo) collClass {
	return collClass{kind: collEnum, coll: enumColl(c.TypeOID)}
}

// enumLabels are the labels of the enum of class coll, as the datasets of
// the statement hold them (nil when none does).
func (k *collScope) enumLabels(coll string) []string {
	for _, d := range k.r.datasets {
		for _, c := range d.state.Columns {
			if len(c.EnumLabels) > 0 && enumColl(c.TypeOID) == coll {
				return c.EnumLabels
			}
		}
	}
	return nil
}

// anyEnumColumn reports whether a dataset the statement reads has an enum
// column.
func (k *collScope) anyEnumColumn() bool {
	return k.r.anyColumn(func(c catalog.ColumnInfo) bool { return len(c.EnumLabels) > 0 })
}

// labelList is list_value(<the labels of the enum of class coll>).
func (k *collScope) labelList(coll string) *pg_query.Node {
	labels := k.enumLabels(coll)
	list := make([]*pg_query.Node, len(labels))
	for i, l := range labels {
		list[i] = pg_query.MakeAConstStrNode(l, -1)
	}
	return fnCall("list_value", list...)
}

// enumKey is the key of n, an enum of class coll: its label's position.
func (k *collScope) enumKey(n *pg_query.Node, coll string) *pg_query.Node {
	pos := fnCall("list_position", k.labelList(coll), n)
	return guardValue(pos, func(p *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_BoolExpr{BoolExpr: &pg_query.BoolExpr{
			Boolop: pg_query.BoolExprType_AND_EXPR,
			Args: []*pg_query.Node{notNull(n), {Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
				Arg: p, Nulltesttype: pg_query.NullTestType_IS_NULL, Location: -1}}}},
			Location: -1}}}
	}, "pgaccel: an enum label the acceleration does not know")
}

// checkLabels sends the statement to the origin when a string literal
// among ns, adopting the enum of class c, is not one of its labels, and
// makes DuckDB check a parameter there.
func (k *collScope) checkLabels(c collClass, ns ...*pg_query.Node) error {
	labels := k.enumLabels(c.coll)
	for _, n := range ns {
		if n == nil {
			continue
		}
		switch {
		case n.GetAConst() != nil:
			ac := n.GetAConst()
			sv, ok := ac.Val.(*pg_query.A_Const_Sval)
			if ac.Isnull || !ok {
				continue
			}
			if !slices.Contains(labels, sv.Sval.Sval) {
				return &refusal{why: "'" + sv.Sval.Sval + "' is not a label of the enum it is compared with (Postgres: invalid input value for enum)", reason: ReasonUnsupported}
			}
		case n.GetParamRef() != nil:
			*n = *guardValue(copyNode(n), func(p *pg_query.Node) *pg_query.Node {
				return &pg_query.Node{Node: &pg_query.Node_BoolExpr{BoolExpr: &pg_query.BoolExpr{
					Boolop: pg_query.BoolExprType_AND_EXPR,
					Args: []*pg_query.Node{notNull(p), {Node: &pg_query.Node_BoolExpr{BoolExpr: &pg_query.BoolExpr{
						Boolop: pg_query.BoolExprType_NOT_EXPR,
						Args:   []*pg_query.Node{fnCall("list_contains", k.labelList(c.coll), copyNode(p))}, Location: -1}}}},
					Location: -1}}}
			}, "invalid input value for enum")
		}
	}
	return nil
}

// enumRefusal refuses a use of an enum value Postgres does not answer as
// DuckDB would answer for its label.
func enumRefusal(what string, n *pg_query.Node) error {
	return &refusal{why: what + " " + exprText(n) + ", an enum: Postgres does not take it as its label's text", reason: ReasonUnsupported}
}

// enumSite judges one site for its enum values (before rewriteSite keys
// it): literals adopting an enum, and the uses Postgres refuses.
func (k *collScope) enumSite(node *pg_query.Node) error {
	if !k.hasEnums {
		return nil
	}
	isEnum := func(n *pg_query.Node) bool { return n != nil && k.of(n, 0).kind == collEnum }
	switch v := node.GetNode().(type) {
	case *pg_query.Node_AExpr:
		e := v.AExpr
		switch op := divisionOp(e); e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_OP, pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
			switch {
			case !isEnum(e.Lexpr) && !isEnum(e.Rexpr):
				return nil
			case e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || op == "=" || op == "<>" || op == "!=" || orderingOps[op]:
				return k.enumValues("comparing a value of another type with", e.Lexpr, e.Rexpr)
			case op == "||":
				return nil // anynonarray || text: the label's text
			}
			return enumRefusal("operator "+op+" of", e.Rexpr)
		case pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
			items := []*pg_query.Node{e.Rexpr}
			if list := e.Rexpr.GetList(); list != nil {
				items = list.Items
			} else if ae := e.Rexpr.GetAArrayExpr(); ae != nil {
				items = ae.Elements
			} else if isEnum(e.Lexpr) {
				return enumRefusal("comparing with an array", e.Lexpr) // = ANY($1): the elements are not seen
			}
			return k.enumValues("comparing with", append([]*pg_query.Node{e.Lexpr}, items...)...)
		case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
			pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
			if l := e.Rexpr.GetList(); l != nil {
				return k.enumValues("BETWEEN of", append([]*pg_query.Node{e.Lexpr}, l.Items...)...)
			}
		case pg_query.A_Expr_Kind_AEXPR_NULLIF:
			return k.enumValues("NULLIF of", e.Lexpr, e.Rexpr)
		default:
			for _, n := range []*pg_query.Node{e.Lexpr, e.Rexpr} {
				if isEnum(n) {
					return enumRefusal("LIKE or SIMILAR TO of", n)
				}
			}
		}
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		name := funcName(fc)
		if enumArgFuncs[name] {
			return nil
		}
		own := strings.HasPrefix(name, "pgaccel_") // the rewrite's, given what it chose
		for _, arg := range fc.Args {
			switch c := k.of(arg, 0); {
			case c.kind == collEnum:
				return enumRefusal("function "+name+" of", arg)
			case c.kind == collUnknown && !own && (collatedTextFuncs[name] || collTextFuncs[name]):
				return &refusal{why: "function " + name + " of " + exprText(arg) + ", which may be an enum (Postgres takes no enum as text)"}
			}
		}
	case *pg_query.Node_TypeCast:
		tc := v.TypeCast
		if isEnum(tc.Arg) && (tc.TypeName == nil || len(tc.TypeName.Typmods) > 0 || len(tc.TypeName.ArrayBounds) > 0 ||
			!castTarget(tc, map[string]bool{"text": true, "varchar": true, "character varying": true})) {
			return enumRefusal("a cast of", tc.Arg)
		}
	case *pg_query.Node_CaseExpr:
		ce := v.CaseExpr
		results, tests := []*pg_query.Node{ce.Defresult}, []*pg_query.Node{ce.Arg}
		for _, w := range ce.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				results, tests = append(results, cw.Result), append(tests, cw.Expr)
			}
		}
		if err := k.enumValues("a CASE result beside", results...); err != nil {
			return err
		}
		if ce.Arg != nil {
			return k.enumValues("CASE of", tests...)
		}
	case *pg_query.Node_CoalesceExpr:
		return k.enumValues("COALESCE of", v.CoalesceExpr.Args...)
	}
	return nil
}

// enumValues judges values that Postgres makes one type (compared,
// listed, merged): when one is an enum, every other must be of its type or
// a label of it (checkLabels), else the statement goes to the origin. what
// names the site for the refusal. NULL literals take any type.
func (k *collScope) enumValues(what string, ns ...*pg_query.Node) error {
	var vals []*pg_query.Node
	var cs []collClass
	anyEnum := false
	for _, n := range ns {
		if n == nil || isNullConst(n) {
			continue
		}
		c := k.of(n, 0)
		anyEnum = anyEnum || c.kind == collEnum
		vals, cs = append(vals, n), append(cs, c)
	}
	if !anyEnum {
		return nil
	}
	c := sameClass(cs)
	if c.kind != collEnum {
		return enumRefusal(what, vals[0])
	}
	return k.checkLabels(c, vals...)
}

// enumSetOps checks the arms of the set operations of sels: an output
// column that is an enum in one arm must be of it (or a label of it) in
// every arm.
func (k *collScope) enumSetOps(sels []*pg_query.SelectStmt) error {
	if !k.hasEnums {
		return nil
	}
	for _, sel := range sels {
		if !isSetOp(sel) {
			continue
		}
		// columns[i] are the values of output column i, arm by arm.
		var columns [][]*pg_query.Node
		add := func(i int, n *pg_query.Node) {
			for len(columns) <= i {
				columns = append(columns, nil)
			}
			columns[i] = append(columns[i], n)
		}
		for _, arm := range setOpArms(sel) {
			for i, t := range arm.TargetList {
				if rt := t.GetResTarget(); rt == nil || isStarTarget(rt) {
					return refuseCollation("a set operation whose columns may be enums the planner cannot follow")
				}
				add(i, t.GetResTarget().Val)
			}
			for _, row := range arm.ValuesLists {
				for i, v := range row.GetList().GetItems() {
					add(i, v)
				}
			}
		}
		for _, vals := range columns {
			if err := k.enumValues("a set operation's column beside a value of another type:", vals...); err != nil {
				return err
			}
		}
	}
	return nil
}

// enumTypes are the enum type OIDs of the columns of the datasets of r.
func (r resolution) enumTypes() []uint32 {
	var out []uint32
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if len(c.EnumLabels) > 0 && !slices.Contains(out, c.TypeOID) {
				out = append(out, c.TypeOID)
			}
		}
	}
	return out
}
