package planner

import (
	"errors"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/pgaccel/pgaccel/pgdef"
)

// The rewrites of the type rules (typesites.go). They are found on the
// parse tree as the analysis saw it, before the other rewrites change it
// (prepareTypeRewrites), and made after them (apply), over the nodes as
// those left them:
//
//   - -> and ->> of a jsonb document call pgaccel_jsonb_get(_text), which
//     take a scalar as a one-element array as Postgres does for jsonb
//     (pgaccel_json_get(_text) are json's, for which a scalar has no
//     elements);
//   - x @> y and y <@ x: of jsonb x, pgaccel_jsonb_contains(x, y) (a jsonb
//     column's is rewritten already: rewriteJSONBContains); of arrays,
//     pgaccel_array_contains(x, y), which never matches a NULL element of
//     y, as Postgres does (DuckDB's list containment matches NULL with
//     NULL, or ignores it);
//   - LIKE and ILIKE of a char(n) column match rpad(column, n): Postgres
//     matches the value with its padding;
//   - row comparisons are spelled out field by field, with Postgres's
//     semantics (make_row_comparison_op): (a, b) = (c, d) is a = c AND
//     b = d, <> an OR of <>, and (a, b) < (c, d) is a < c OR (a = c AND
//     b < d), NULL where a deciding pair is; IN of rows an OR of such
//     equalities, IS DISTINCT FROM an OR of the fields'.

// typeRewrites are the sites prepareTypeRewrites found.
type typeRewrites struct {
	jsonbGets []*pg_query.Node // holders of -> and ->> of jsonb documents
	contains  []containSite
	pads      []padSite
	rows      []rowSite
}

type containSite struct {
	holder *pg_query.Node
	expr   *pg_query.A_Expr
	jsonb  bool // else arrays
}

type padSite struct {
	col *pg_query.Node // the column reference matched by LIKE
	n   int32
}

type rowSite struct {
	holder *pg_query.Node
	expr   *pg_query.A_Expr
}

// typeRewriter is the visitor of prepareTypeRewrites.
type typeRewriter struct {
	t   *typer
	out *typeRewrites
}

// prepareTypeRewrites finds the type rules' rewrites in stmt, the parse
// tree as analysed (not yet changed).
func prepareTypeRewrites(stmt proto.Message, a *analysis, r resolution) *typeRewrites {
	v := &typeRewriter{t: newTyper(a, r), out: &typeRewrites{}}
	walk(stmt, v)
	return v.out
}

func (v *typeRewriter) enter(m proto.Message, w *walker) {
	e, ok := m.(*pg_query.A_Expr)
	if !ok {
		return
	}
	holder := w.node()
	if _, ok := rowComparison(e); ok {
		v.out.rows = append(v.out.rows, rowSite{holder: holder, expr: e})
		return
	}
	op := operatorName(e)
	switch {
	case e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && (op == "->" || op == "->>") && e.Lexpr != nil && e.Rexpr != nil:
		if s := v.t.typesOf(e.Lexpr); s&tJSONAny == tJSONB && holder != nil {
			v.out.jsonbGets = append(v.out.jsonbGets, holder)
		}
	case e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && (op == "@>" || op == "<@") && e.Lexpr != nil && e.Rexpr != nil:
		container := e.Lexpr
		if op == "<@" {
			container = e.Rexpr
		}
		s := v.t.typesOf(container)
		switch {
		case s&tJSONAny == 0:
			v.out.contains = append(v.out.contains, containSite{holder: holder, expr: e})
		case s == tJSONB:
			v.out.contains = append(v.out.contains, containSite{holder: holder, expr: e, jsonb: true})
		}
	case e.Kind == pg_query.A_Expr_Kind_AEXPR_LIKE || e.Kind == pg_query.A_Expr_Kind_AEXPR_ILIKE ||
		e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && (op == "~~" || op == "!~~" || op == "~~*" || op == "!~~*"):
		if e.Lexpr != nil && v.t.typesOf(e.Lexpr)&tBpchar != 0 {
			if n, ok := v.t.paddedColumn(e.Lexpr); ok {
				v.out.pads = append(v.out.pads, padSite{col: e.Lexpr, n: n})
			}
		}
	}
}

// errTypeRewrite: a site of the type rules' rewrites is not where the
// rewrite can replace it (the statement goes to the origin).
var errTypeRewrite = errors.New("rewrite: a comparison of rows or arrays without a node to replace")

// apply makes the rewrites, after the other rewrites of the tree.
func (tr *typeRewrites) apply() error {
	for _, h := range tr.jsonbGets {
		if fc := h.GetFuncCall(); fc != nil {
			switch funcName(fc) {
			case pgdef.FuncJSONGet:
				fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncJSONBGet)}
			case pgdef.FuncJSONGetText:
				fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncJSONBGetText)}
			}
		}
	}
	for _, c := range tr.contains {
		if c.holder == nil {
			return errTypeRewrite
		}
		if c.holder.GetAExpr() != c.expr {
			continue // rewritten already (a jsonb column's)
		}
		container, contained := c.expr.Lexpr, c.expr.Rexpr
		if operatorName(c.expr) == "<@" {
			container, contained = contained, container
		}
		fn := pgdef.FuncArrayContains
		if c.jsonb {
			fn = pgdef.FuncJSONBContains
		}
		c.holder.Node = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(fn)},
			[]*pg_query.Node{container, contained}, -1).Node
	}
	for _, p := range tr.pads {
		inner := &pg_query.Node{Node: p.col.Node}
		p.col.Node = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("rpad")},
			[]*pg_query.Node{inner, pg_query.MakeAConstIntNode(int64(p.n), -1), pg_query.MakeAConstStrNode(" ", -1)}, -1).Node
	}
	// Innermost first: an outer comparison copies its fields.
	for i := len(tr.rows) - 1; i >= 0; i-- {
		rs := tr.rows[i]
		if rs.holder == nil || rs.holder.GetAExpr() != rs.expr {
			return errTypeRewrite
		}
		out, ok := rowComparison(rs.expr)
		if !ok {
			return errTypeRewrite
		}
		rs.holder.Node = out.Node
	}
	return nil
}
