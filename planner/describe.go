package planner

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// Describing a read without the origin. The proxy sends the client the
// origin's RowDescription of an accelerated statement (its column names,
// types, typmods and source columns are Postgres's to decide), asked once
// per text and kept. While the origin is down it cannot ask, and a text
// it has not seen, nor one of the same description shape (descshape.go),
// went unanswered. Describe works the description out as Postgres's
// parser would, for the reads dashboards and ad hoc queries write most:
// one SELECT over datasets, subqueries in FROM and non-recursive WITH
// queries, joined with ON or not, and UNION, INTERSECT and EXCEPT of
// such, whose output columns are their columns (* included), constants,
// arithmetic of numbers and of dates, timestamps and intervals,
// comparisons, text || text, the aggregates count, sum, avg, min, max,
// stddev, variance, bool_and, bool_or and string_agg of a column or an
// expression (and Tableau's sum(1)), over a window or not, the
// ordered-set aggregates percentile_cont, percentile_disc and mode, the
// window functions row_number, rank, dense_rank, percent_rank, cume_dist, ntile,
// lag, lead, first_value and last_value, date_trunc, round, trunc, ceil,
// floor, upper, lower, length, extract and date_part, a few functions of
// text (concat, to_char, substr, replace, trim, ...), of arrays and of
// json, the json operators, abs, nullif, CASE, coalesce, greatest and
// least of values of one type (or of numbers), scalar subqueries and
// EXISTS, and casts of those to the common built-in types, with the
// parameters Postgres types by what they are compared with or cast to
// (see Describe), or as LIMIT and OFFSET. Everything else (other
// functions, types mixed otherwise, parameters elsewhere) it declines,
// and the statement waits for the origin as before. Its rules are
// checked against the origin's own descriptions: by
// TestSessions_DescribesNewReadsThroughOutage, by the differential
// corpora, and at run time for every new text (proxy.checkDerived).

// Field is one column of a row description as Postgres gives it.
type Field struct {
	Name     string
	TableOID uint32 // the origin table the column is, 0 for anything else
	AttNum   int16  // its attnum, 0 for anything else
	TypeOID  uint32
	TypLen   int16
	TypMod   int32
}

var typLens = map[uint32]int16{
	pgdef.OIDBool: 1, pgdef.OIDInt8: 8, pgdef.OIDInt2: 2, pgdef.OIDInt4: 4, pgdef.OIDText: -1, pgdef.OIDOID: 4, pgdef.OIDFloat4: 4, pgdef.OIDFloat8: 8,
	pgdef.OIDMoney: 8, pgdef.OIDBpchar: -1, pgdef.OIDVarchar: -1, pgdef.OIDDate: 4, pgdef.OIDTime: 8, pgdef.OIDTimestamp: 8, pgdef.OIDTimestamptz: 8,
	pgdef.OIDInterval: 16, pgdef.OIDTimetz: 12, pgdef.OIDNumeric: -1, pgdef.OIDJSON: -1, pgdef.OIDJSONB: -1,
}

// castTypes are the types a cast may name for Describe, by the last part
// of the name as pg_query gives it (int, integer and int4 are all int4).
var castTypes = map[string]uint32{
	"bool": pgdef.OIDBool, "int2": pgdef.OIDInt2, "int4": pgdef.OIDInt4, "int8": pgdef.OIDInt8, "float4": pgdef.OIDFloat4, "float8": pgdef.OIDFloat8,
	"numeric": pgdef.OIDNumeric, "text": pgdef.OIDText, "varchar": pgdef.OIDVarchar, "bpchar": pgdef.OIDBpchar, "date": pgdef.OIDDate,
	"timestamp": pgdef.OIDTimestamp, "timestamptz": pgdef.OIDTimestamptz, "interval": pgdef.OIDInterval,
}

// aggregateResult is the type Postgres's aggregate fn (count, sum, avg,
// min, max) returns for an argument of type arg; false when Describe does
// not know it.
func aggregateResult(fn string, arg uint32) (uint32, bool) {
	switch fn {
	case "count":
		return pgdef.OIDInt8, true
	case "sum":
		switch arg {
		case pgdef.OIDInt2, pgdef.OIDInt4:
			return pgdef.OIDInt8, true
		case pgdef.OIDInt8, pgdef.OIDNumeric:
			return pgdef.OIDNumeric, true
		case pgdef.OIDFloat4, pgdef.OIDFloat8, pgdef.OIDInterval, pgdef.OIDMoney:
			return arg, true
		}
	case "avg":
		switch arg {
		case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDNumeric:
			return pgdef.OIDNumeric, true
		case pgdef.OIDFloat4, pgdef.OIDFloat8:
			return pgdef.OIDFloat8, true
		case pgdef.OIDInterval:
			return pgdef.OIDInterval, true
		}
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		switch arg {
		case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDNumeric:
			return pgdef.OIDNumeric, true
		case pgdef.OIDFloat4, pgdef.OIDFloat8:
			return pgdef.OIDFloat8, true
		}
	case "bool_and", "bool_or", "every":
		if arg == pgdef.OIDBool {
			return pgdef.OIDBool, true
		}
	case "string_agg":
		if arg == pgdef.OIDText {
			return pgdef.OIDText, true
		}
	case "min", "max":
		switch arg {
		case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDFloat4, pgdef.OIDFloat8, pgdef.OIDNumeric, pgdef.OIDDate, pgdef.OIDTime, pgdef.OIDTimetz,
			pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval, pgdef.OIDMoney, pgdef.OIDOID, pgdef.OIDText:
			return arg, true
		case pgdef.OIDVarchar:
			return pgdef.OIDText, true // there is no max(varchar): max(text) takes it
		}
	}
	return 0, false
}

// Description is what Postgres would describe a statement with: its
// parameters' types ($1 first) and its row description.
type Description struct {
	Params []uint32
	Fields []Field
}

// Describe returns the description Postgres would give sql, a read that
// session s would have accelerated, when it is one of the forms worked
// out here (see above); false otherwise. Parameters are typed where
// Postgres types them by a column or expression they are compared with
// (col = $1, $1 < col, lower(col) = $1, col IN ($1, $2), col BETWEEN $1
// AND $2, col LIKE $1, col = ANY($1), in a WHERE, HAVING or JOIN ... ON
// clause of ANDs, ORs and NOTs, of the statement or of a subquery, with
// the subquery's own columns), by a cast ($1::int, anywhere), or as
// LIMIT and OFFSET (bigint); a parameter anywhere else declines.
func (p *Planner) Describe(ctx context.Context, sql string, s *Session) (Description, bool) {
	var none Description
	if s == nil {
		s = &Session{}
	}
	a, ok := p.cachedAnalysis(sql)
	var tree *pg_query.ParseResult
	if !ok {
		a, tree = analyze(sql)
	}
	if a.kind != KindSelect || a.reason != "" || a.writes {
		return none, false
	}
	r, reason := p.resolve(ctx, a, s)
	if reason != "" {
		return none, false
	}
	if tree == nil {
		var err error
		if tree, err = pg_query.Parse(sql); err != nil {
			return none, false
		}
	}
	if len(tree.Stmts) != 1 {
		return none, false
	}
	sel := tree.Stmts[0].GetStmt().GetSelectStmt()
	d := describer{a: a, r: r, ps: &paramScopes{seen: map[*pg_query.SelectStmt]bool{}}}
	var out Description
	if out.Fields, ok = d.selectList(sel); !ok {
		return none, false
	}
	if a.paramCount > 0 {
		if out.Params, ok = d.params(sel, a.paramCount); !ok {
			return none, false
		}
	}
	return out, true
}

// selectList describes the output of sel, one plain SELECT with a FROM
// clause, as the FROM items it adds to d resolve its columns.
func (d *describer) selectList(sel *pg_query.SelectStmt) ([]Field, bool) {
	if sel == nil || sel.IntoClause != nil || len(sel.ValuesLists) > 0 {
		return nil, false
	}
	if w := sel.WithClause; w != nil {
		// WITH queries, each a plain SELECT described in the scope of
		// those before it; not recursive, no column aliases.
		if w.Recursive {
			return nil, false
		}
		for _, n := range w.Ctes {
			cte := n.GetCommonTableExpr()
			if cte == nil || len(cte.Aliascolnames) > 0 || cte.SearchClause != nil || cte.CycleClause != nil {
				return nil, false
			}
			sub := d.sub()
			fields, ok := sub.selectList(cte.Ctequery.GetSelectStmt())
			if !ok {
				return nil, false
			}
			ctes := make(map[string][]Field, len(d.ctes)+1)
			for k, v := range d.ctes {
				ctes[k] = v
			}
			ctes[cte.Ctename] = fields
			d.ctes = ctes
		}
	}
	switch sel.Op {
	case pg_query.SetOperation_SETOP_NONE:
	case pg_query.SetOperation_SETOP_UNION, pg_query.SetOperation_SETOP_INTERSECT, pg_query.SetOperation_SETOP_EXCEPT:
		out, ok := d.setOp(sel)
		if ok {
			d.record(sel) // its LIMIT and OFFSET
		}
		return out, ok
	default:
		return nil, false
	}
	if len(sel.TargetList) == 0 || len(sel.FromClause) == 0 {
		return nil, false
	}
	for _, n := range sel.FromClause {
		if !d.from(n) {
			return nil, false
		}
	}
	var out []Field
	for _, n := range sel.TargetList {
		rt := n.GetResTarget()
		if rt == nil {
			return nil, false
		}
		if isStar(n) {
			cols, ok := d.star(rt.Val.GetColumnRef())
			if !ok {
				return nil, false
			}
			out = append(out, cols...)
			continue
		}
		f, _, ok := d.expr(rt.Val)
		if !ok {
			return nil, false
		}
		if rt.Name != "" {
			f.Name = rt.Name
		}
		out = append(out, f)
	}
	d.record(sel)
	return out, true
}

// setOp describes a UNION, INTERSECT or EXCEPT (ALL or not) of plain
// SELECTs or other set operations: the left arm's column names, each
// column's type the common type of the arms' (commonType) and its typmod
// theirs when they all agree (select_common_typmod); no column is a
// table's (Postgres marks no origin on a set operation's output).
func (d *describer) setOp(sel *pg_query.SelectStmt) ([]Field, bool) {
	if sel.Larg == nil || sel.Rarg == nil {
		return nil, false
	}
	left, okl := d.sub().selectList(sel.Larg)
	right, okr := d.sub().selectList(sel.Rarg)
	if !okl || !okr || len(left) != len(right) {
		return nil, false
	}
	out := make([]Field, len(left))
	for i := range left {
		t, ok := commonType([]Field{left[i], right[i]})
		if !ok {
			return nil, false
		}
		t.Name = left[i].Name
		out[i] = t
	}
	return out, true
}

// commonType is the type Postgres's select_common_type resolves for
// values of the types of fs (the arms of a CASE, COALESCE, GREATEST or a
// set operation), with the typmod select_common_typmod and exprTypmod
// give (theirs when all are of that type and share it, else -1), and no
// origin. Worked out only where there is no doubt: all of one type (a
// domain included), or integers, numeric and double precision mixed (the
// widest of them: each converts implicitly to those after it, not back).
// A Field with TypeOID 0 is a NULL, which takes the others' type.
func commonType(fs []Field) (Field, bool) {
	var t Field
	found, same := false, true
	for _, f := range fs {
		if f.TypeOID == 0 {
			continue
		}
		if !found {
			t, found = f, true
			continue
		}
		if f.TypeOID != t.TypeOID {
			same = false
		}
	}
	if !found {
		// All NULL: unknown, which an output column resolves as text.
		return Field{TypeOID: pgdef.OIDText, TypLen: -1, TypMod: -1}, true
	}
	if !same {
		for _, f := range fs {
			if f.TypeOID == 0 {
				continue
			}
			if !isNumber(f.TypeOID) {
				return Field{}, false
			}
			if numberRank[f.TypeOID] > numberRank[t.TypeOID] {
				t = f
			}
		}
	}
	mod := t.TypMod
	for _, f := range fs {
		if f.TypeOID != t.TypeOID || f.TypMod != mod {
			mod = -1
		}
	}
	return Field{TypeOID: t.TypeOID, TypLen: t.TypLen, TypMod: mod}, true
}

// describer resolves a SELECT's column references against its FROM items.
type describer struct {
	a    *analysis
	r    resolution
	rels []describedRel     // the FROM items, in order
	ctes map[string][]Field // the WITH queries in scope, described
	ps   *paramScopes       // shared by a statement's describers
}

// paramScopes are the SELECTs of a statement that were described (the
// statement's, its subqueries', WITH queries' and set operations' arms),
// each with the describer that resolves its columns, for params to type
// the parameters of each one's clauses.
type paramScopes struct {
	list []paramScope
	seen map[*pg_query.SelectStmt]bool
}

type paramScope struct {
	d   *describer
	sel *pg_query.SelectStmt
}

// sub is a describer for a subquery of d's SELECT: the WITH queries in
// scope, no FROM item yet.
func (d *describer) sub() *describer {
	return &describer{a: d.a, r: d.r, ctes: d.ctes, ps: d.ps}
}

// record adds sel, described by d, to the statement's scopes.
func (d *describer) record(sel *pg_query.SelectStmt) {
	if d.ps == nil || d.ps.seen[sel] {
		return
	}
	d.ps.seen[sel] = true
	d.ps.list = append(d.ps.list, paramScope{d: d, sel: sel})
}

type describedRel struct {
	ref    string // the name the statement knows it by: its alias, or its name
	schema string // its schema, resolved; "" when it has an alias (schema.table.column cannot name it)
	cols   []relCol
}

// relCol is a column of a FROM item: a table's, or a subquery's output.
type relCol struct {
	Field
	accelerated bool
}

// from adds a FROM item: a dataset's table (aliased or not, without
// column aliases), or an inner or outer join of such with an ON clause.
func (d *describer) from(n *pg_query.Node) bool {
	if j := n.GetJoinExpr(); j != nil {
		if j.IsNatural || len(j.UsingClause) > 0 || j.Alias != nil || j.JoinUsingAlias != nil {
			return false
		}
		return d.from(j.Larg) && d.from(j.Rarg)
	}
	if rs := n.GetRangeSubselect(); rs != nil {
		// A subquery: its columns are its output, as described; one
		// that is a table's column keeps its origin (markTargetListOrigin
		// follows it down).
		if rs.Lateral || rs.Alias == nil || len(rs.Alias.Colnames) > 0 {
			return false
		}
		sub := d.sub()
		fields, ok := sub.selectList(rs.Subquery.GetSelectStmt())
		if !ok || !d.unique(rs.Alias.Aliasname) {
			return false
		}
		d.rels = append(d.rels, describedRel{ref: rs.Alias.Aliasname, cols: outputCols(fields)})
		return true
	}
	rv := n.GetRangeVar()
	if rv == nil || rv.Catalogname != "" || !rv.Inh || rv.Alias != nil && len(rv.Alias.Colnames) > 0 {
		return false
	}
	if fields, ok := d.ctes[rv.Relname]; ok && rv.Schemaname == "" {
		// A WITH query, which an unqualified name means before a table.
		ref := rv.Relname
		if rv.Alias != nil {
			ref = rv.Alias.Aliasname
		}
		if !d.unique(ref) {
			return false
		}
		d.rels = append(d.rels, describedRel{ref: ref, cols: outputCols(fields)})
		return true
	}
	for i, rel := range d.a.rels {
		if rel.name != rv.Relname || rel.schema != rv.Schemaname {
			continue
		}
		infos := d.r.datasets[d.r.relDS[i]].state.Columns
		cols := make([]relCol, len(infos))
		for i, c := range infos {
			if c.RelOID == 0 {
				return false // described before pgaccel read the oids
			}
			cols[i] = relCol{Field: columnField(c), accelerated: c.Accelerated}
		}
		ref, schema := rv.Relname, d.r.schemas[i]
		if rv.Alias != nil {
			ref, schema = rv.Alias.Aliasname, ""
		}
		if !d.unique(ref) {
			return false
		}
		d.rels = append(d.rels, describedRel{ref: ref, schema: schema, cols: cols})
		return true
	}
	return false
}

// outputCols are a subquery's or WITH query's output as a FROM item's
// columns.
func outputCols(fields []Field) []relCol {
	cols := make([]relCol, len(fields))
	for i, f := range fields {
		cols[i] = relCol{Field: f, accelerated: true}
	}
	return cols
}

// unique reports whether no FROM item is named ref yet (Postgres refuses
// the same name twice).
func (d *describer) unique(ref string) bool {
	for _, o := range d.rels {
		if o.ref == ref {
			return false
		}
	}
	return true
}

// star expands * or rel.*.
func (d *describer) star(cr *pg_query.ColumnRef) ([]Field, bool) {
	var out []Field
	switch len(cr.Fields) {
	case 1:
		for _, rel := range d.rels {
			for _, c := range rel.cols {
				out = append(out, c.Field)
			}
		}
	case 2, 3:
		rel, ok := d.qualifier(cr.Fields[:len(cr.Fields)-1])
		if !ok {
			return nil, false
		}
		for _, c := range rel.cols {
			out = append(out, c.Field)
		}
	default:
		return nil, false
	}
	return out, true
}

// qualifier finds the FROM item a column reference's qualifier names:
// table (or alias), or schema.table (an item without an alias).
func (d *describer) qualifier(names []*pg_query.Node) (describedRel, bool) {
	schema, ref := "", names[len(names)-1].GetString_().GetSval()
	if len(names) == 2 {
		if schema = names[0].GetString_().GetSval(); schema == "" {
			return describedRel{}, false
		}
	}
	for _, rel := range d.rels {
		if rel.ref == ref && (schema == "" || rel.schema == schema) {
			return rel, true
		}
	}
	return describedRel{}, false
}

// column resolves a column reference of one or two parts.
func (d *describer) column(cr *pg_query.ColumnRef) (relCol, bool) {
	var none relCol
	name := ""
	rels := d.rels
	switch len(cr.Fields) {
	case 1:
		name = cr.Fields[0].GetString_().GetSval()
	case 2, 3:
		rel, ok := d.qualifier(cr.Fields[:len(cr.Fields)-1])
		if !ok {
			return none, false
		}
		rels, name = []describedRel{rel}, cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
	default:
		return none, false
	}
	found, n := none, 0
	for _, rel := range rels {
		for _, c := range rel.cols {
			if c.Name == name {
				found, n = c, n+1
			}
		}
	}
	// None: an outer reference or a whole row; several: ambiguous.
	return found, n == 1 && name != ""
}

func columnField(c catalog.ColumnInfo) Field {
	return Field{Name: c.Name, TableOID: c.RelOID, AttNum: c.AttNum, TypeOID: c.TypeOID, TypLen: c.TypLen, TypMod: c.TypeMod}
}
