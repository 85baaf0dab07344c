package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
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
//   - LIKE and ILIKE of a char(n) column match rpad(column, n): Postgres
//     matches the value with its padding;

// typeRewrites are the sites prepareTypeRewrites found.
type typeRewrites struct {
	jsonbGets []*pg_query.Node // holders of -> and ->> of jsonb documents
	pads      []padSite
}

type padSite struct {
	col *pg_query.Node // the column reference matched by LIKE
	n   int32
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
	op := operatorName(e)
	switch {
	case e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && (op == "->" || op == "->>") && e.Lexpr != nil && e.Rexpr != nil:
		if s := v.t.typesOf(e.Lexpr); s&tJSONAny == tJSONB && holder != nil {
			v.out.jsonbGets = append(v.out.jsonbGets, holder)
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

// apply makes the rewrites, after the other rewrites of the tree.
func (tr *typeRewrites) apply() error {
	for _, h := range tr.jsonbGets {
		if fc := h.GetFuncCall(); fc != nil {
			switch funcName(fc) {
			case "pgaccel_json_get":
				fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("pgaccel_jsonb_get")}
			case "pgaccel_json_get_text":
				fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("pgaccel_jsonb_get_text")}
			}
		}
	}
	for _, p := range tr.pads {
		inner := &pg_query.Node{Node: p.col.Node}
		p.col.Node = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("rpad")},
			[]*pg_query.Node{inner, pg_query.MakeAConstIntNode(int64(p.n), -1), pg_query.MakeAConstStrNode(" ", -1)}, -1).Node
	}
	return nil
}
