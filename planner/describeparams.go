package planner

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/pgaccel/pgaccel/pgdef"
)

// params types the parameters $1..$n of sel, each used where Postgres
// types it by a column or as LIMIT or OFFSET.
func (d *describer) params(sel *pg_query.SelectStmt, n int) ([]uint32, bool) {
	types := make([]uint32, n)
	typed := 0 // the ParamRefs typed
	set := func(p *pg_query.ParamRef, t uint32) bool {
		if p.Number < 1 || int(p.Number) > n || types[p.Number-1] != 0 && types[p.Number-1] != t {
			return false
		}
		types[p.Number-1] = t
		typed++
		return true
	}
	// Each described SELECT's clauses, with its own columns: the
	// statement's, its subqueries' (in FROM, WITH, the output, and those
	// of the clauses, added as they are met) and set operations' arms.
	for i := 0; i < len(d.ps.list); i++ {
		sc := d.ps.list[i]
		quals := []*pg_query.Node{sc.sel.WhereClause, sc.sel.HavingClause}
		var joins func(n *pg_query.Node)
		joins = func(n *pg_query.Node) {
			if j := n.GetJoinExpr(); j != nil {
				joins(j.Larg)
				joins(j.Rarg)
				quals = append(quals, j.Quals)
			}
		}
		for _, n := range sc.sel.FromClause {
			joins(n)
		}
		for _, q := range quals {
			if !sc.d.paramsIn(q, set) {
				return nil, false
			}
			sc.d.subLinks(q)
		}
		for _, lim := range []*pg_query.Node{sc.sel.LimitCount, sc.sel.LimitOffset} {
			if p := lim.GetParamRef(); p != nil && !set(p, pgdef.OIDInt8) {
				return nil, false
			}
		}
	}
	// A parameter cast in place ($1::timestamptz) has the cast's type.
	var uses paramUses
	walk(sel, &uses)
	for _, tc := range uses.casts {
		t, _, ok := describedCast(tc)
		if !ok || !set(tc.Arg.GetParamRef(), t) {
			return nil, false
		}
	}
	// Every ParamRef of the statement was typed, and every number.
	if uses.refs != typed || slices.Contains(types, 0) {
		return nil, false
	}
	return types, true
}

// subLinks describes the subqueries of a clause (EXISTS, IN, a scalar
// one compared with), outermost only, so that params types their
// parameters too; one that cannot be described leaves them untyped.
func (d *describer) subLinks(q *pg_query.Node) {
	if q == nil {
		return
	}
	var all subLinkFinder
	walk(q, &all)
	nested := map[*pg_query.SubLink]bool{}
	for _, sl := range all {
		var inner subLinkFinder
		walk(sl.Subselect, &inner)
		for _, in := range inner {
			nested[in] = true
		}
	}
	for _, sl := range all {
		if !nested[sl] {
			_, _ = d.sub().selectList(sl.Subselect.GetSelectStmt())
		}
	}
}

// subLinkFinder collects the SubLinks of a tree.
type subLinkFinder []*pg_query.SubLink

func (f *subLinkFinder) enter(m proto.Message, _ *walker) {
	if sl, ok := m.(*pg_query.SubLink); ok {
		*f = append(*f, sl)
	}
}

// paramComparisons are the operators whose parameter Postgres types as the
// column on the other side (for the types paramType knows).
var paramComparisons = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

// paramsIn types the parameters of a WHERE clause's comparisons; other
// parameters are left for params to count.
func (d *describer) paramsIn(n *pg_query.Node, set func(*pg_query.ParamRef, uint32) bool) bool {
	if n == nil {
		return true
	}
	if b := n.GetBoolExpr(); b != nil {
		for _, arg := range b.Args {
			if !d.paramsIn(arg, set) {
				return false
			}
		}
		return true
	}
	e := n.GetAExpr()
	if e == nil {
		return true
	}
	col := func(x *pg_query.Node) (uint32, bool) {
		// A column, or an expression of columns Describe types (id + 1,
		// lower(name), count(*) in HAVING).
		if x == nil || x.GetParamRef() != nil {
			return 0, false
		}
		f, _, ok := d.expr(x)
		if !ok {
			return 0, false
		}
		return paramType(f.TypeOID)
	}
	each := func(t uint32, items []*pg_query.Node) bool {
		for _, it := range items {
			if p := it.GetParamRef(); p != nil && !set(p, t) {
				return false
			}
		}
		return true
	}
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if len(e.Name) != 1 || !paramComparisons[e.Name[0].GetString_().GetSval()] {
			return true
		}
		if t, ok := col(e.Lexpr); ok {
			return each(t, []*pg_query.Node{e.Rexpr})
		}
		if t, ok := col(e.Rexpr); ok {
			return each(t, []*pg_query.Node{e.Lexpr})
		}
	case pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		if t, ok := col(e.Lexpr); ok && e.Rexpr.GetList() != nil {
			return each(t, e.Rexpr.GetList().Items)
		}
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		// text LIKE $1 (and ILIKE, NOT LIKE): the pattern is text.
		if t, ok := col(e.Lexpr); ok && t == pgdef.OIDText {
			return each(pgdef.OIDText, []*pg_query.Node{e.Rexpr})
		}
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		// col = ANY($1): an array of the type the column compares as.
		if len(e.Name) != 1 || !paramComparisons[e.Name[0].GetString_().GetSval()] {
			return true
		}
		if t, ok := col(e.Lexpr); ok && arrayTypes[t] != 0 {
			return each(arrayTypes[t], []*pg_query.Node{e.Rexpr})
		}
	}
	return true
}

// arrayTypes are the array types of the types paramType gives.
var arrayTypes = map[uint32]uint32{
	pgdef.OIDBool: 1000, pgdef.OIDInt2: 1005, pgdef.OIDInt4: 1007, pgdef.OIDInt8: 1016, pgdef.OIDFloat4: 1021, pgdef.OIDFloat8: 1022,
	pgdef.OIDNumeric: 1231, pgdef.OIDText: 1009, pgdef.OIDBpchar: 1014, pgdef.OIDDate: 1182, pgdef.OIDTimestamp: 1115, pgdef.OIDTimestamptz: 1185,
	pgdef.OIDInterval: 1187, pgdef.OIDUUID: 2951,
}

// paramType is the type Postgres gives a parameter compared with a column
// of type t, for the types worked out here: the column's own where the
// type has its comparison operators, text for varchar (which compares as
// text).
func paramType(t uint32) (uint32, bool) {
	switch t {
	case pgdef.OIDBool, pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDFloat4, pgdef.OIDFloat8, pgdef.OIDNumeric, pgdef.OIDText, pgdef.OIDDate,
		pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval, pgdef.OIDUUID, pgdef.OIDBpchar:
		return t, true
	case pgdef.OIDVarchar:
		return pgdef.OIDText, true
	}
	return 0, false
}

// paramUses counts the ParamRefs of a tree and collects their casts
// ($1::int).
type paramUses struct {
	refs  int
	casts []*pg_query.TypeCast
}

func (u *paramUses) enter(m proto.Message, _ *walker) {
	switch m := m.(type) {
	case *pg_query.ParamRef:
		u.refs++
	case *pg_query.TypeCast:
		if m.Arg.GetParamRef() != nil {
			u.casts = append(u.casts, m)
		}
	}
}
