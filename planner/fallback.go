package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/pgaccel/pgaccel/catalog"
)

// on_zero_results: use_source. When the acceleration's answer to a read has
// no rows, the proxy runs Decision.FallbackSQL on the origin instead. Rows
// that a dataset's retention policy evicted must not come back that way, so
// each reference to such a dataset reads it through the inverse of the
// policy (catalog.Dataset.FallbackFilter):
//
//	SELECT * FROM orders o WHERE o.id = 7
//	→ SELECT * FROM (SELECT * FROM "public"."orders" WHERE NOT (status = 'archived') OR (status = 'archived') IS NULL) o WHERE o.id = 7
//
// The subquery keeps the reference's alias (or takes the table's name), so
// the rest of the statement reads it as before; schema.table.column
// references lose the schema, as in the DuckDB rewrite.
//
// The decision is made on the whole answer, not per scan: a query whose
// answer has rows (an aggregate over no rows has one) does not fall back,
// and one whose filter is a subquery does fall back when its answer is
// empty.

// fallbackSQL returns the statement's FallbackSQL; ok is false when a
// use_source dataset's filter is not known yet (the statement then goes
// to the origin).
func (p *Planner) fallbackSQL(a *analysis, r resolution) (string, bool) {
	useSource := false
	for _, d := range r.datasets {
		useSource = useSource || d.ds.Acceleration.OnZeroResults == catalog.ZeroResultsUseSource
	}
	if !useSource {
		return "", true
	}
	return p.readThrough(a, r, func(d usedDataset) (string, bool) {
		if d.ds.Acceleration.OnZeroResults != catalog.ZeroResultsUseSource {
			return "", true
		}
		return d.state.FallbackFilter, d.state.FallbackReady
	})
}

// readThrough returns a's statement with every reference to a dataset
// whose filter (filterOf: the Postgres predicate, and whether it is known)
// is not "" read through it, as a subquery of the table with that WHERE
// clause; the statement itself when no filter applies. ok is false when a
// filter is not known or the statement cannot be rewritten. Rewrites are
// cached with the analysis, by tables, filters and resolved schemas.
func (p *Planner) readThrough(a *analysis, r resolution, filterOf func(usedDataset) (string, bool)) (string, bool) {
	filters := make([]string, len(r.datasets))
	filtered := false
	var key strings.Builder
	for i, d := range r.datasets {
		f, known := filterOf(d)
		if !known {
			return "", false
		}
		filters[i] = f
		filtered = filtered || f != ""
		key.WriteString(d.ds.QualifiedTable())
		key.WriteByte(0)
		key.WriteString(f)
		key.WriteByte(0)
	}
	if !filtered {
		return a.sql, true
	}
	for _, k := range r.relDS {
		key.WriteByte(byte('0' + k%64))
	}
	for _, s := range r.schemas {
		key.WriteString(s)
		key.WriteByte(1)
	}
	if out, ok := a.fallbacks.get(key.String()); ok {
		return out.sql, out.sql != ""
	}
	sql, ok := fallbackTree(a, r, filters)
	if !ok {
		sql = ""
	}
	a.fallbacks.put(key.String(), rewritten{sql: sql})
	return sql, ok
}

// relationNodes collects the Node wrappers of RangeVars and the ColumnRefs,
// numbered as the analysis numbered them.
type relationNodes struct {
	rangeVars []*pg_query.Node
	colRefs   []*pg_query.ColumnRef
}

func (c *relationNodes) enter(m proto.Message, w *walker) {
	switch n := m.(type) {
	case *pg_query.RangeVar:
		c.rangeVars = append(c.rangeVars, w.node())
	case *pg_query.ColumnRef:
		c.colRefs = append(c.colRefs, n)
	}
}

func fallbackTree(a *analysis, r resolution, filters []string) (string, bool) {
	tree, err := pg_query.Parse(a.sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false
	}
	var c relationNodes
	walk(tree.Stmts[0].Stmt, &c)
	for _, q := range a.qualified {
		i := qualifiedTarget(a, r, q)
		if q.ordinal >= len(c.colRefs) || i < 0 {
			return "", false
		}
		if filters[r.relDS[i]] != "" {
			cr := c.colRefs[q.ordinal]
			cr.Fields = cr.Fields[1:]
		}
	}
	for i, rel := range a.rels {
		f := filters[r.relDS[i]]
		if f == "" {
			continue
		}
		if rel.ordinal >= len(c.rangeVars) || c.rangeVars[rel.ordinal] == nil {
			return "", false
		}
		node := c.rangeVars[rel.ordinal]
		rv := node.GetRangeVar()
		if rv == nil || rv.Relname != rel.name || rv.Schemaname != rel.schema {
			return "", false
		}
		ds := r.datasets[r.relDS[i]].ds
		sub, err := pg_query.Parse("SELECT * FROM " + ds.QualifiedTable() + " WHERE " + f)
		if err != nil || len(sub.Stmts) != 1 {
			return "", false
		}
		alias := rv.Alias
		if alias == nil {
			alias = &pg_query.Alias{Aliasname: rel.name}
		}
		node.Node = &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
			Subquery: sub.Stmts[0].Stmt,
			Alias:    alias,
		}}
	}
	out, err := pg_query.Deparse(tree)
	if err != nil {
		return "", false
	}
	// The deparser prints what it cannot express (such as $0) as
	// something Postgres does not read; such a statement goes to the
	// origin as the client wrote it.
	if _, err := pg_query.Parse(out); err != nil {
		return "", false
	}
	return out, true
}
