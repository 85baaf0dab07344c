package gen

import (
	"fmt"
	"sort"
	"strings"
)

// Generator makes the statements of one seed.
type Generator struct {
	Seed uint64
}

// Opts are the comparison's options for q.
func (q Query) Opts() Opts {
	return Opts{Ordered: q.Ordered, Limited: q.Limited, MayTie: q.MayTie}
}

// Query is one generated statement and how to run and compare it.
type Query struct {
	Seed  uint64
	Index int
	Name  string // a statement read from a file (ReadStatements)
	SQL   string
	// Settings are SET statements to run before it, on both sides.
	Settings Settings
	// Ordered: the statement orders by every output column, so its rows
	// are compared in order; otherwise as a multiset.
	Ordered bool
	// Limited: LIMIT or OFFSET may cut through tied rows.
	Limited bool
	// Extended: run it also with the extended protocol and binary results.
	Extended bool
	// MayTie: the statement keeps one of several rows or values that
	// Postgres holds equal, depending on the order it meets them (GROUP
	// BY, DISTINCT, set operations, min, max, ordered aggregates), so
	// that equal values printed differently (-0 and 0, 1.5 and 1.50,
	// '1 mon' and '30 days') may legitimately come back either way.
	// (GREATEST and LEAST are not: they keep the first of equal
	// arguments.)
	MayTie bool
	// Features name the catalogue entries and shapes it uses.
	Features []string
}

// builder holds the state of one statement's generation.
type builder struct {
	r     *rng
	feats map[string]bool
	n     int   // aliases made so far
	ctes  []rel // the CTEs in scope
	nest  int   // SELECTs open
	// mayTie and limited: see Query.
	mayTie, limited bool
	// size is the statement's size class: small (most: few features,
	// so that most run on the acceleration), medium or large.
	size int
}

const (
	small = iota
	medium
	large
)

func (b *builder) feat(s string) { b.feats[s] = true }

func (b *builder) alias(prefix string) string {
	b.n++
	return fmt.Sprintf("%s%d", prefix, b.n)
}

// Query generates statement i of g's seed.
func (g Generator) Query(i int) Query {
	b := &builder{r: newRNG(g.Seed, uint64(i)), feats: map[string]bool{}}
	q := Query{Seed: g.Seed, Index: i}
	b.size = pickW(b.r, weighted[int]{{small, 50}, {medium, 35}, {large, 15}})
	q.Settings = b.settings()
	q.SQL, q.Ordered = b.statement()
	q.Extended = b.r.chance(0.25)
	q.MayTie, q.Limited = b.mayTie, b.limited
	for f := range b.feats {
		q.Features = append(q.Features, f)
	}
	sort.Strings(q.Features)
	return q
}

// statement writes a top-level read: a CTE list now and then, a SELECT
// or a set operation, and ORDER BY every output column (then LIMIT,
// OFFSET or FETCH ... WITH TIES) when the output types allow it.
func (b *builder) statement() (string, bool) {
	var with string
	if b.size != small && b.r.chance(0.2) {
		with = b.withClause()
	}
	types := b.outputShape()
	orderable := true
	for _, t := range types {
		orderable = orderable && t.orderable()
	}
	var body string
	var names []string
	distinctOn := false
	switch x := b.r.r.Float64(); {
	case x < 0.06:
		body, names = b.pointRead(types)
	case x < 0.20:
		body, names, types = b.setOperation(types)
	default:
		s := b.selectCore(nil, types, coreOpts{top: true, distinctOn: orderable && b.r.chance(0.07)})
		body, names, distinctOn = s.sql, s.names, s.distinctOn
	}
	ordered := orderable && (distinctOn || b.r.chance(0.65))
	if ordered {
		body += " ORDER BY " + b.orderAll(names)
		switch b.r.intn(8) {
		case 0, 1:
			b.feat("LIMIT")
			n := pick(b.r, []string{"1", "3", "10", "0", "ALL", "NULL"})
			body += " LIMIT " + n
			b.limited = n != "ALL" && n != "NULL"
		case 2:
			b.feat("LIMIT OFFSET")
			body += fmt.Sprintf(" LIMIT %s OFFSET %s", pick(b.r, []string{"2", "5"}), pick(b.r, []string{"0", "1", "4", "100"}))
			b.limited = true
		case 3:
			b.feat("FETCH WITH TIES")
			body += fmt.Sprintf(" FETCH FIRST %s ROWS WITH TIES", pick(b.r, []string{"1", "2", "5"}))
		}
	}
	return with + body, ordered
}

// pointRead writes a read of one table by its primary key (WHERE id = k,
// or IN a few keys), the shape the planner's point-read rule and the
// proxy's point index answer.
func (b *builder) pointRead(types []Type) (string, []string) {
	b.feat("point read")
	tb := &Tables[pickW(b.r, weighted[int]{{0, 6}, {1, 3}, {2, 1}})]
	alias, from := tb.Name, tb.Name // unaliased: the table's name qualifies
	if b.r.chance(0.7) {
		alias = b.alias(strings.TrimPrefix(tb.Name, "gen_"))
		from = tb.Name + " AS " + alias
	}
	lv := &level{rels: []rel{{alias: alias, base: tb, key: key, cols: tableCols(tb)}}}
	c := ectx{lv: lv, depth: b.r.intn(2), noNull: true}
	targets := make([]string, len(types))
	names := make([]string, len(types))
	for i, t := range types {
		targets[i], names[i] = b.target(lv, b.expr(c, t), t)
	}
	ref := alias + "." + key
	if b.r.chance(0.4) {
		ref = key
	}
	keyOf := func() string { return pick(b.r, []string{"1", "2", "3", "5", "7", "16", "30", "31", "0", "-1"}) }
	where := ref + " = " + keyOf()
	if b.r.chance(0.3) {
		where = fmt.Sprintf("%s IN (%s, %s, %s)", ref, keyOf(), keyOf(), keyOf())
	}
	if b.r.chance(0.2) {
		where += " AND " + b.expr(ectx{lv: lv, depth: 1}, Bool)
	}
	return "SELECT " + strings.Join(targets, ", ") + " FROM " + from + " WHERE " + where, names
}

// outputShape is the list of a statement's output types.
func (b *builder) outputShape() []Type {
	n := 1 + b.r.intn(2+b.size)
	if b.size == large && b.r.chance(0.3) {
		n = 4 + b.r.intn(3)
	}
	out := make([]Type, n)
	for i := range out {
		out[i] = pickW(b.r, outputTypes)
	}
	return out
}

// orderAll is an ORDER BY list of every output column, by position or
// name, each with a direction and NULLS placement now and then.
func (b *builder) orderAll(names []string) string {
	seen := map[string]int{}
	for _, n := range names {
		seen[n]++
	}
	items := make([]string, len(names))
	for i, n := range names {
		item := fmt.Sprint(i + 1)
		if n != "" && seen[n] == 1 && b.r.chance(0.25) {
			item = n
			b.feat("ORDER BY output name")
		}
		item += pick(b.r, []string{"", "", " DESC", " NULLS FIRST", " DESC NULLS LAST", " ASC NULLS LAST", " DESC NULLS FIRST"})
		items[i] = item
	}
	return strings.Join(items, ", ")
}

// depth is how deep an expression may nest: by the statement's size.
func (b *builder) depth() int {
	return 1 + b.size/2 + b.r.intn(2+b.size/2)
}

// coreOpts shape one SELECT.
type coreOpts struct {
	top        bool // the statement's own: names a dataset first
	distinctOn bool // DISTINCT ON (1): the caller orders by every column
	maxOneRow  bool // a scalar subquery's: at most one row
	noWindow   bool
	noDistinct bool // ORDER BY what is not an output follows
}

// core is a written SELECT.
type core struct {
	sql        string
	names      []string // output names ("" when Postgres makes one up)
	lv         *level
	distinctOn bool
}

// selectCore writes a SELECT of the given output types over a FROM of its
// own, nested in outer: plain, grouped or aggregating, with WHERE,
// HAVING, DISTINCT.
func (b *builder) selectCore(outer *level, types []Type, o coreOpts) core {
	b.nest++
	defer func() { b.nest-- }()
	lv := &level{outer: outer}
	from := b.from(lv, o.top)
	c := ectx{lv: lv, depth: b.depth()}
	if b.nest <= 2 && (b.size != small || b.nest == 1) {
		c.sub = 1
	}
	var where, group, having string
	if b.r.chance(0.55) {
		wc := c
		wc.depth = b.depth()
		where = " WHERE " + b.expr(wc, Bool)
	}
	kind := b.r.intn(10)
	switch {
	case kind < 3 && !o.maxOneRow:
		// GROUP BY.
		b.feat("GROUP BY")
		b.mayTie = true // a group shows one of its equal keys
		keys := b.groupKeys(c, types)
		lv.grouped, lv.keys = true, keys
		list := make([]string, len(keys))
		for i, k := range keys {
			list[i] = k.sql
		}
		switch b.r.intn(12) {
		case 0:
			b.feat("GROUP BY ROLLUP")
			group = " GROUP BY ROLLUP (" + strings.Join(list, ", ") + ")"
		case 1:
			b.feat("GROUP BY CUBE")
			group = " GROUP BY CUBE (" + strings.Join(list, ", ") + ")"
		case 2:
			b.feat("GROUP BY GROUPING SETS")
			group = " GROUP BY GROUPING SETS ((" + strings.Join(list, ", ") + "), (" + list[0] + "), ())"
		default:
			group = " GROUP BY " + strings.Join(list, ", ")
		}
		c.agg = true
		if b.r.chance(0.3) {
			hc := c
			hc.depth = 2
			having = " HAVING " + b.expr(hc, Bool)
		}
	case kind < 5 || o.maxOneRow:
		// Aggregates over all rows: one row.
		b.feat("aggregate without GROUP BY")
		lv.grouped = true
		c.agg = true
		if b.r.chance(0.2) {
			hc := c
			hc.depth = 2
			having = " HAVING " + b.expr(hc, Bool)
		}
	}
	c.win = !o.noWindow && !o.maxOneRow && b.r.chance(0.3)
	var distinct string
	switch {
	case o.distinctOn:
		b.feat("DISTINCT ON")
		b.mayTie = true
		distinct = "DISTINCT ON (1) "
	case !o.maxOneRow && !o.noDistinct && b.r.chance(0.1) && allOrderable(types):
		b.feat("DISTINCT")
		b.mayTie = true
		distinct = "DISTINCT "
	}
	targets := make([]string, len(types))
	names := make([]string, len(types))
	for i, t := range types {
		// Typed: an untyped literal would be a text column.
		tc := c
		tc.noNull = true
		e := b.expr(tc, t)
		if !lv.grouped && !o.maxOneRow && b.r.chance(0.03) {
			if srf, ok := b.targetSRF(tc, t); ok {
				e = srf
			}
		}
		targets[i], names[i] = b.target(lv, e, t)
	}
	sql := "SELECT " + distinct + strings.Join(targets, ", ")
	if from != "" {
		sql += " FROM " + from
	}
	sql += where + group + having
	return core{sql: sql, names: names, lv: lv, distinctOn: o.distinctOn}
}

// targetSRF is a set-returning call in a target list: generate_series of
// literals (which the planner unnests) or unnest of an array.
func (b *builder) targetSRF(c ectx, t Type) (string, bool) {
	if t == Int4 && b.r.chance(0.5) {
		b.feat("generate_series in the target list")
		return fmt.Sprintf("generate_series(%s, %s)", pick(b.r, []string{"1", "0", "3"}), pick(b.r, []string{"3", "2", "0"})), true
	}
	at, ok := arrayOf(t)
	if !ok {
		return "", false
	}
	b.feat("unnest in the target list")
	ac := c
	ac.depth = 1
	return "unnest(" + b.expr(ac, at) + ")", true
}

func allOrderable(ts []Type) bool {
	for _, t := range ts {
		if !t.orderable() {
			return false
		}
	}
	return true
}

// target names an output column now and then: a fresh name, or the name
// of an input column (ORDER BY and scoping follow output names first).
func (b *builder) target(lv *level, e string, t Type) (string, string) {
	switch b.r.intn(10) {
	case 0, 1, 2, 3:
		n := b.alias("o")
		return e + " AS " + n, n
	case 4:
		if refs := lv.columns(""); len(refs) > 0 {
			r := pick(b.r, refs)
			if r.bare != "" || r.qualified != "" {
				n := r.bare
				if n == "" {
					n = r.qualified[strings.IndexByte(r.qualified, '.')+1:]
				}
				b.feat("output named like an input column")
				return e + " AS " + n, n
			}
		}
	}
	// Postgres names it: the column's or function's name, or ?column?.
	return e, ""
}

// groupKeys are 1-3 GROUP BY expressions: mostly columns, often of the
// output types, so that outputs are keys.
func (b *builder) groupKeys(c ectx, types []Type) []typedExpr {
	var out []typedExpr
	seen := map[string]bool{}
	addKey := func(e string, t Type) {
		if !seen[e] && len(out) < 3 {
			seen[e] = true
			out = append(out, typedExpr{e, t})
		}
	}
	kc := c
	kc.depth, kc.sub, kc.noOuter, kc.noNull = 0, 0, true, true
	for _, t := range types {
		if t.orderable() && b.r.chance(0.6) {
			if e, ok := b.column(kc, t); ok {
				addKey(e, t)
			}
		}
	}
	for len(out) == 0 || b.r.chance(0.2) && len(out) < 3 {
		t := pickW(b.r, outputTypes)
		if t == JSON {
			t = JSONB
		}
		if b.r.chance(0.3) {
			// An expression of columns.
			ec := kc
			ec.depth = 1
			if e := b.expr(ec, t); !strings.HasPrefix(e, "NULL") && !bareInteger(e) && !strings.HasPrefix(e, "'") {
				addKey(e, t)
				continue
			}
		}
		if e, ok := b.column(kc, t); ok {
			addKey(e, t)
		} else if len(out) == 0 && b.r.chance(0.2) {
			addKey("1 + 0", Int4)
		}
	}
	return out
}

// bareInteger reports whether e is an integer literal, which GROUP BY
// and ORDER BY take as an output column's position.
func bareInteger(e string) bool {
	e = strings.Trim(e, "()-")
	if e == "" {
		return false
	}
	for _, r := range e {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// setOperation writes two SELECTs of the same shape joined by UNION,
// INTERSECT or EXCEPT (ALL or not): operands of mixed types now and then.
func (b *builder) setOperation(types []Type) (string, []string, []Type) {
	ops := []string{"UNION ALL", "UNION", "INTERSECT", "EXCEPT", "INTERSECT ALL", "EXCEPT ALL"}
	op := pick(b.r, ops)
	if !allOrderable(types) {
		op = "UNION ALL"
	}
	b.feat("set operation " + op)
	if op != "UNION ALL" {
		b.mayTie = true
	}
	arm := func(top bool) core {
		ts := make([]Type, len(types))
		for i, t := range types {
			ts[i] = b.mixed(t)
			if ts[i] != t {
				b.feat("set operation of mixed types")
			}
		}
		return b.selectCore(nil, ts, coreOpts{top: top})
	}
	l := arm(true)
	r := arm(b.r.chance(0.7))
	sql := l.sql + " " + op + " " + r.sql
	if b.r.chance(0.2) {
		sql = "(" + l.sql + ") " + op + " (" + r.sql + ")"
	}
	return sql, l.names, types
}

// withClause writes WITH and one or two CTEs, which the statement's FROM
// items may then name.
func (b *builder) withClause() string {
	n := 1 + b.r.intn(2)
	var defs []string
	recursive := false
	for i := 0; i < n; i++ {
		name := b.alias("cte")
		if b.r.chance(0.15) {
			recursive = true
			b.feat("WITH RECURSIVE")
			defs = append(defs, fmt.Sprintf("%s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM %s WHERE n < %s)", name, name, pick(b.r, []string{"3", "5"})))
			b.ctes = append(b.ctes, rel{alias: name, cols: []col{{"n", Int4}}, key: "n"})
			continue
		}
		b.feat("WITH")
		types := b.outputShape()
		s := b.selectCore(nil, types, coreOpts{top: true})
		cols := make([]col, len(types))
		names := make([]string, len(types))
		for j, t := range types {
			names[j] = b.columnName(t)
			cols[j] = col{typ: t}
		}
		mat := pick(b.r, []string{"", "", "MATERIALIZED ", "NOT MATERIALIZED "})
		names = uniqueNames(names)
		for j := range cols {
			cols[j].name = names[j]
		}
		defs = append(defs, fmt.Sprintf("%s(%s) AS %s(%s)", name, strings.Join(names, ", "), mat, s.sql))
		b.ctes = append(b.ctes, rel{alias: name, cols: cols})
	}
	w := "WITH "
	if recursive {
		w = "WITH RECURSIVE "
	}
	return w + strings.Join(defs, ", ") + " "
}

// columnName is a name for a derived table's column of type t: fresh, or
// the name of a table column (of the same type, so that a wrong
// resolution still type-checks).
func (b *builder) columnName(t Type) string {
	if b.r.chance(0.4) {
		var names []string
		for _, tb := range Tables {
			for _, c := range tb.Columns {
				if c.Type == t {
					names = append(names, c.Name)
				}
			}
		}
		if len(names) > 0 {
			return pick(b.r, names)
		}
	}
	return b.alias("a")
}

// uniqueNames renames repeated names (a derived table's column list must
// not repeat one).
func uniqueNames(names []string) []string {
	seen := map[string]int{}
	out := make([]string, len(names))
	for i, n := range names {
		seen[n]++
		out[i] = n
		if seen[n] > 1 {
			out[i] = fmt.Sprintf("%s_%d", n, seen[n])
		}
	}
	return out
}
