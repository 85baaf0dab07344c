package gen

import (
	"fmt"
	"strings"
)

// tableWeights: the wide table most, the empty one now and then.
var tableWeights = weighted[int]{{0, 45}, {1, 30}, {2, 15}, {3, 10}}

// from writes the FROM clause of lv and adds its items to lv.rels: one
// to three items, joined left to right (inner, left, right, full, cross,
// USING, or a comma before the last), the first a dataset when top.
func (b *builder) from(lv *level, top bool) string {
	n := 1
	switch x := b.r.intn(20); {
	case x < 3+2*b.size:
		n = 2
	case x < 4+3*b.size:
		n = 3
	}
	var out strings.Builder
	first, r := b.fromItem(lv, top, false)
	out.WriteString(first)
	lv.rels = append(lv.rels, r)
	for i := 1; i < n; i++ {
		last := i == n-1
		kind := pickW(b.r, weighted[string]{{"JOIN", 30}, {"LEFT JOIN", 22}, {"RIGHT JOIN", 8}, {"FULL JOIN", 9},
			{"CROSS JOIN", 4}, {",", 10}, {"USING", 8}, {"LATERAL", 6}})
		if kind == "," && !last {
			kind = "CROSS JOIN"
		}
		lateral := kind == "LATERAL"
		item, r := b.fromItem(lv, false, lateral)
		switch kind {
		case ",":
			b.feat("FROM comma")
			fmt.Fprintf(&out, ", %s", item)
			lv.rels = append(lv.rels, r)
		case "CROSS JOIN":
			b.feat("CROSS JOIN")
			fmt.Fprintf(&out, " CROSS JOIN %s", item)
			lv.rels = append(lv.rels, r)
		case "LATERAL":
			// LATERAL items see the items before them; only an inner
			// or left join may follow them.
			join := pick(b.r, []string{"CROSS JOIN", "LEFT JOIN", "JOIN"})
			b.feat("LATERAL " + join)
			lv.rels = append(lv.rels, r)
			fmt.Fprintf(&out, " %s %s", join, item)
			if join != "CROSS JOIN" {
				fmt.Fprintf(&out, " ON %s", b.joinCondition(lv, r))
			}
		case "USING":
			names := b.usingColumns(lv, r)
			if len(names) == 0 {
				lv.rels = append(lv.rels, r)
				fmt.Fprintf(&out, " JOIN %s ON %s", item, b.joinCondition(lv, r))
				break
			}
			join := pick(b.r, []string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"})
			b.feat(join + " USING")
			fmt.Fprintf(&out, " %s %s USING (%s)", join, item, strings.Join(names, ", "))
			lv.rels = append(lv.rels, r)
			merged := rel{alias: "", merged: true}
			for _, n := range names {
				for _, c := range r.cols {
					if c.name == n {
						merged.cols = append(merged.cols, c)
					}
				}
			}
			// A newer merge of a name hides an older one.
			for i := range lv.rels {
				if lv.rels[i].merged {
					var keep []col
					for _, c := range lv.rels[i].cols {
						if !contains(names, c.name) {
							keep = append(keep, c)
						}
					}
					lv.rels[i].cols = keep
				}
			}
			lv.rels = append(lv.rels, merged)
		default:
			b.feat(kind)
			lv.rels = append(lv.rels, r)
			fmt.Fprintf(&out, " %s %s ON %s", kind, item, b.joinCondition(lv, r))
		}
	}
	return out.String()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// usingColumns picks names r shares, with the same type, with exactly one
// column of the items before it (or their merged columns).
func (b *builder) usingColumns(lv *level, r rel) []string {
	var cands []string
	for _, c := range r.cols {
		n, typ := 0, Type("")
		merged := false
		for _, l := range lv.rels {
			for _, lc := range l.cols {
				if lc.name == c.name {
					if l.merged {
						merged, typ = true, lc.typ
					} else {
						n++
						if typ == "" || !merged {
							typ = lc.typ
						}
					}
				}
			}
		}
		if (merged || n == 1) && typ == c.typ && c.typ != JSON {
			cands = append(cands, c.name)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	first := pick(b.r, cands)
	out := []string{first}
	if len(cands) > 1 && b.r.chance(0.3) {
		if second := pick(b.r, cands); second != first {
			out = append(out, second)
		}
	}
	return out
}

// joinCondition joins r (the last of lv.rels) to the items before it:
// mostly an equality of columns of one type, sometimes more.
func (b *builder) joinCondition(lv *level, r rel) string {
	c := ectx{lv: lv, depth: 1 + b.r.intn(2)}
	var eqs []string
	for _, rc := range r.cols {
		for _, l := range lv.rels[:len(lv.rels)-1] {
			if l.merged {
				continue
			}
			for _, lc := range l.cols {
				if lc.typ == rc.typ && lc.typ != JSON && (lc.name == rc.name || rc.name == "k" && lc.name == key || lc.name == "k" && rc.name == key) {
					eqs = append(eqs, fmt.Sprintf("%s.%s = %s.%s", l.alias, lc.name, r.alias, rc.name))
				}
			}
		}
	}
	switch {
	case len(eqs) > 0 && b.r.chance(0.75):
		cond := pick(b.r, eqs)
		if b.r.chance(0.25) {
			cond += " AND " + b.expr(c, Bool)
		}
		return cond
	case b.r.chance(0.1):
		return "true"
	}
	return b.expr(c, Bool)
}

// fromItem writes one FROM item of lv and the relation it makes: a table,
// a subquery, a CTE, VALUES, or a set-returning function. A subquery sees
// lv's enclosing levels, and lv's items before it when lateral.
func (b *builder) fromItem(lv *level, table, lateral bool) (string, rel) {
	kind := "table"
	if !table {
		kind = pickW(b.r, weighted[string]{{"table", 60}, {"derived", 14}, {"cte", 10}, {"values", 5}, {"srf", 6}, {"nofrom", 5}})
	}
	if lateral {
		kind = pick(b.r, []string{"derived", "srf"})
	}
	if (kind == "derived" || kind == "nofrom") && b.nest >= 3 {
		kind = "table"
	}
	switch kind {
	case "cte":
		if len(b.ctes) == 0 {
			break
		}
		c := pick(b.r, b.ctes)
		r := c
		r.alias = b.alias("c")
		b.feat("FROM CTE")
		return c.alias + " AS " + r.alias, r
	case "derived", "nofrom":
		// A subquery in FROM: not LATERAL, it sees only the enclosing
		// levels (not lv's other items); LATERAL, those before it.
		outer := lv.outer
		if lateral {
			outer = &level{rels: append([]rel(nil), lv.rels...), outer: lv.outer}
		}
		types := b.outputShape()
		var s core
		if kind == "nofrom" {
			b.feat("FROM subquery without FROM")
			s = b.noFromSelect(outer, types)
		} else {
			b.feat("FROM subquery")
			s = b.selectCore(outer, types, coreOpts{})
		}
		alias := b.alias("d")
		r := rel{alias: alias}
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = b.columnName(t)
		}
		names = uniqueNames(names)
		for i, t := range types {
			r.cols = append(r.cols, col{names[i], t})
		}
		prefix := ""
		if lateral {
			prefix = "LATERAL "
		}
		return fmt.Sprintf("%s(%s) AS %s(%s)", prefix, s.sql, alias, strings.Join(names, ", ")), r
	case "values":
		b.feat("FROM VALUES")
		types := b.outputShape()
		rows := 1 + b.r.intn(3)
		var vals []string
		c := ectx{lv: &level{}, depth: 0, noNull: true}
		for i := 0; i < rows; i++ {
			row := make([]string, len(types))
			for j, t := range types {
				row[j] = b.constant(c, t)
				if i == 0 && !strings.Contains(row[j], "::") {
					row[j] = "(" + row[j] + ")::" + t.castName()
				}
			}
			vals = append(vals, "("+strings.Join(row, ", ")+")")
		}
		alias := b.alias("v")
		r := rel{alias: alias}
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = b.columnName(t)
		}
		names = uniqueNames(names)
		for i, t := range types {
			r.cols = append(r.cols, col{names[i], t})
		}
		return fmt.Sprintf("(VALUES %s) AS %s(%s)", strings.Join(vals, ", "), alias, strings.Join(names, ", ")), r
	case "srf":
		if s, r, ok := b.setReturning(lv, lateral); ok {
			return s, r
		}
	}
	tb := &Tables[pickW(b.r, tableWeights)]
	alias := b.alias(strings.TrimPrefix(tb.Name, "gen_"))
	r := rel{alias: alias, base: tb, key: key, cols: []col{{key, Int4}}}
	for _, c := range tb.Columns {
		r.cols = append(r.cols, col{c.Name, c.Type})
	}
	b.feat("table " + tb.Name)
	return tb.Name + " AS " + alias, r
}

// setReturning writes unnest of an array column of an item before it
// (implicitly LATERAL), or generate_series.
func (b *builder) setReturning(lv *level, lateral bool) (string, rel, bool) {
	alias := b.alias("f")
	if lateral {
		for _, at := range []Type{Int4Arr, TextArr, NumericArr, Float8Arr} {
			refs := lv.columns(at)
			var own []colRef
			for _, r := range refs {
				if !r.outer && r.qualified != "" {
					own = append(own, r)
				}
			}
			if len(own) == 0 || b.r.chance(0.5) {
				continue
			}
			e, _ := at.elem()
			ref := pick(b.r, own)
			b.feat("FROM unnest")
			// WITH ORDINALITY: (the row, n) is a key of the item.
			return fmt.Sprintf("unnest(%s) WITH ORDINALITY AS %s(x, n)", ref.qualified, alias),
				rel{alias: alias, cols: []col{{"x", e}, {"n", Int8}}, key: "n"}, true
		}
	}
	b.feat("FROM generate_series")
	switch b.r.intn(3) {
	case 0:
		return fmt.Sprintf("generate_series(1, %s) AS %s(g)", pick(b.r, []string{"3", "0", "5"}), alias),
			rel{alias: alias, cols: []col{{"g", Int4}}, key: "g"}, true
	case 1:
		return fmt.Sprintf("generate_series(%s, %s, %s) AS %s(g)", pick(b.r, []string{"'2024-03-09 00:00'::timestamptz", "'2024-11-02 12:00+00'::timestamptz"}),
				pick(b.r, []string{"'2024-03-11 00:00'::timestamptz", "'2024-11-04 00:00+00'::timestamptz"}), pick(b.r, []string{"'1 day'::interval", "'12 hours'::interval", "'1 day 1 hour'::interval"}), alias),
			rel{alias: alias, cols: []col{{"g", Timestamptz}}, key: "g"}, true
	}
	return fmt.Sprintf("generate_series(0.5, %s, %s) AS %s(g)", pick(b.r, []string{"2", "3.25"}), pick(b.r, []string{"0.5", "1"}), alias),
		rel{alias: alias, cols: []col{{"g", Numeric}}, key: "g"}, true
}

// noFromSelect writes SELECT <exprs> without FROM: its values come from
// the enclosing levels (the scoping of FROM subqueries: Postgres's are
// not LATERAL unless written so).
func (b *builder) noFromSelect(outer *level, types []Type) core {
	lv := &level{outer: outer}
	c := ectx{lv: lv, depth: b.r.intn(2), sub: 0, noNull: true}
	targets := make([]string, len(types))
	for i, t := range types {
		tc := c
		tc.noNull = true
		targets[i] = b.expr(tc, t)
	}
	return core{sql: "SELECT " + strings.Join(targets, ", "), lv: lv}
}

// subOuter is the level a subquery written in c nests in: a grouped
// level's rows are its groups, whose columns are not visible but through
// its keys, so the subquery nests in the level outside it instead.
func subOuter(c ectx) *level {
	if c.grouped() {
		return c.lv.outer
	}
	return c.lv
}

// scalarSubquery writes a subquery of one column of type t that returns
// at most one row: an aggregate, a row picked by its key, ORDER BY a key
// LIMIT 1, or a SELECT without FROM. Now and then one that may return
// more (Postgres's error 21000).
func (b *builder) scalarSubquery(c ectx, t Type) (string, bool) {
	outer := subOuter(c)
	switch b.r.intn(20) {
	case 0, 1, 2, 3, 4, 5, 6:
		b.feat("scalar subquery of an aggregate")
		s := b.selectCore(outer, []Type{t}, coreOpts{maxOneRow: true})
		return "(" + s.sql + ")", true
	case 7, 8, 9, 10:
		b.feat("scalar subquery LIMIT 1")
		s := b.selectCore(outer, []Type{t}, coreOpts{noWindow: true, noDistinct: true})
		keys, ok := s.lv.keyRefs()
		if s.lv.grouped || !ok {
			if !t.orderable() {
				return "", false
			}
			b.mayTie = true // one of the rows equal in column 1
			return "(" + s.sql + " ORDER BY 1 LIMIT 1)", true
		}
		return "(" + s.sql + " ORDER BY " + strings.Join(keys, ", ") + " LIMIT 1)", true
	case 11, 12, 13, 14, 15:
		b.feat("scalar subquery by key")
		tb := &Tables[pickW(b.r, tableWeights)]
		alias := b.alias("s")
		lv := &level{outer: outer, rels: []rel{{alias: alias, base: tb, key: key, cols: tableCols(tb)}}}
		sc := ectx{lv: lv, depth: 1 + b.r.intn(2), sub: c.sub - 1}
		kc := ectx{lv: outerLevel(outer), depth: 1, noNull: true}
		return fmt.Sprintf("(SELECT %s FROM %s AS %s WHERE %s.%s = %s)", b.expr(sc, t), tb.Name, alias, alias, key, b.expr(kc, Int4)), true
	case 16, 17, 18:
		b.feat("scalar subquery without FROM")
		s := b.noFromSelect(outer, []Type{t})
		return "(" + s.sql + ")", true
	}
	b.feat("scalar subquery of several rows")
	s := b.selectCore(outer, []Type{t}, coreOpts{noWindow: true})
	return "(" + s.sql + ")", true
}

// outerLevel is lv, or an empty level when nil.
func outerLevel(lv *level) *level {
	if lv == nil {
		return &level{}
	}
	return lv
}

func tableCols(tb *Table) []col {
	cols := []col{{key, Int4}}
	for _, c := range tb.Columns {
		cols = append(cols, col{c.Name, c.Type})
	}
	return cols
}

// subqueryPredicate writes EXISTS, IN, NOT IN, or a comparison with ANY
// or ALL of a subquery, correlated or not.
func (b *builder) subqueryPredicate(c ectx) (string, bool) {
	outer := subOuter(c)
	switch b.r.intn(5) {
	case 0, 1:
		b.feat("EXISTS")
		s := b.selectCore(outer, []Type{Int4}, coreOpts{noWindow: true})
		not := pick(b.r, []string{"", "NOT "})
		return "(" + not + "EXISTS (" + s.sql + "))", true
	}
	t := pickW(b.r, outputTypes)
	if t == JSON {
		t = Int4
	}
	s := b.selectCore(outer, []Type{t}, coreOpts{noWindow: true})
	x := b.expr(c.deeper(), t)
	switch b.r.intn(4) {
	case 0:
		b.feat("NOT IN subquery")
		return fmt.Sprintf("(%s NOT IN (%s))", x, s.sql), true
	case 1:
		op := pick(b.r, []string{"<", ">=", "<>", "="})
		q := pick(b.r, []string{"ANY", "ALL", "SOME"})
		b.feat("op " + q + " subquery")
		return fmt.Sprintf("(%s %s %s (%s))", x, op, q, s.sql), true
	}
	b.feat("IN subquery")
	return fmt.Sprintf("(%s IN (%s))", x, s.sql), true
}
