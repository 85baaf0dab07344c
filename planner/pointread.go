package planner

import (
	"context"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgaccel/pgaccel/catalog"
)

// Point reads. A read of one table that pins its primary key, or the column
// of a one-column unique index, to a value (SELECT ... FROM orders WHERE
// id = 42, or = $1) touches at most one row,
// and the origin answers it from its primary-key index in tens of
// microseconds; DuckDB spends longer than that preparing any statement
// (bench/RESULTS.md, "Accelerated point reads"). With runtime.point_reads:
// origin (the default) such reads go to the origin. Both routes answer
// exactly, so the rule is a matter of speed only: the shape test below is
// conservative, and what it misses is accelerated as before.

// ReasonPointRead: a read of one dataset by its primary key.
const ReasonPointRead = "point_read"

// maxPointList is the longest IN list of keys that counts as point reads.
const maxPointList = 100

// pointColumns returns the columns that sel's WHERE pins to a constant or a
// parameter with = or to a few of them with IN (in its top-level AND), when
// sel is a plain SELECT of one table: no set operation, WITH, or other FROM
// item.
func pointColumns(sel *pg_query.SelectStmt) []string {
	if sel.Op != pg_query.SetOperation_SETOP_NONE || sel.WithClause != nil || len(sel.FromClause) != 1 || sel.WhereClause == nil {
		return nil
	}
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil {
		return nil
	}
	qualifiers := []string{rv.Relname}
	if rv.Alias != nil {
		qualifiers = []string{rv.Alias.Aliasname} // the alias hides the name
	}
	var cols []string
	var conjuncts func(n *pg_query.Node)
	conjuncts = func(n *pg_query.Node) {
		if b := n.GetBoolExpr(); b != nil {
			if b.Boolop == pg_query.BoolExprType_AND_EXPR {
				for _, arg := range b.Args {
					conjuncts(arg)
				}
			}
			return
		}
		e := n.GetAExpr()
		if e == nil || len(e.Name) != 1 || e.Name[0].GetString_().GetSval() != "=" {
			return
		}
		switch e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_OP:
			for _, pair := range [][2]*pg_query.Node{{e.Lexpr, e.Rexpr}, {e.Rexpr, e.Lexpr}} {
				if col, ok := columnOf(pair[0], qualifiers); ok && isValue(pair[1]) {
					cols = append(cols, col)
				}
			}
		case pg_query.A_Expr_Kind_AEXPR_IN: // col IN (v1, v2, ...), a few values
			list := e.Rexpr.GetList()
			if list == nil || len(list.Items) > maxPointList {
				return
			}
			for _, item := range list.Items {
				if !isValue(item) {
					return
				}
			}
			if col, ok := columnOf(e.Lexpr, qualifiers); ok {
				cols = append(cols, col)
			}
		}
	}
	conjuncts(sel.WhereClause)
	return cols
}

// columnOf returns the column n names: col, or q.col with q one of
// qualifiers.
func columnOf(n *pg_query.Node, qualifiers []string) (string, bool) {
	ref := n.GetColumnRef()
	if ref == nil {
		return "", false
	}
	var names []string
	for _, f := range ref.Fields {
		s := f.GetString_()
		if s == nil {
			return "", false // t.*
		}
		names = append(names, s.Sval)
	}
	switch {
	case len(names) == 1:
		return names[0], true
	case len(names) == 2 && slices.Contains(qualifiers, names[0]):
		return names[1], true
	}
	return "", false
}

// isValue reports whether n is a constant or a parameter, maybe cast.
func isValue(n *pg_query.Node) bool {
	for {
		if tc := n.GetTypeCast(); tc != nil {
			n = tc.Arg
			continue
		}
		return n.GetAConst() != nil || n.GetParamRef() != nil
	}
}

// isPointRead reports whether a reads the single dataset of r by its whole
// primary key (every column of it pinned) or by the column of a one-column
// unique index. (A dataset whose refresh_sql leaves a key column out makes
// the rest of the key look whole: such reads go to the origin, through the
// subset the acceleration holds, which answers them all the same.) A read
// that names a column the acceleration does not hold (refresh_sql chose
// the columns) is no point read: the acceleration cannot answer it, and it
// goes to the origin as it is, like any other read of such a column.
func isPointRead(a *analysis, r resolution) bool {
	if len(a.pointCols) == 0 || len(r.datasets) != 1 || len(a.rels) != 1 {
		return false
	}
	if !namesOnlyColumns(a, r.datasets[0].state.Columns) {
		return false
	}
	keyParts, pinned := 0, 0
	for _, c := range r.datasets[0].state.Columns {
		in := slices.Contains(a.pointCols, c.Name)
		if c.Unique && in {
			return true
		}
		if c.KeyPart > 0 {
			keyParts++
			if in {
				pinned++
			}
		}
	}
	return keyParts > 0 && pinned == keyParts
}

// namesOnlyColumns reports whether every name a's column references use is
// a column of cols or names the read's one relation (its name, alias or
// schema).
func namesOnlyColumns(a *analysis, cols []catalog.ColumnInfo) bool {
	rel := a.rels[0]
	for name := range a.cols.names {
		if name == rel.name || name == rel.alias || name == rel.schema {
			continue
		}
		if !slices.ContainsFunc(cols, func(c catalog.ColumnInfo) bool { return c.Name == name }) {
			return false
		}
	}
	return true
}

// pointReadSQL is the statement a point read runs at the origin: a's, with
// the dataset read through the subset its acceleration holds. ok is false
// while that subset is not known, or when the statement cannot be
// rewritten.
func (p *Planner) pointReadSQL(a *analysis, r resolution) (string, bool) {
	return p.readThrough(a, r, func(d usedDataset) (string, bool) {
		return d.state.SubsetFilter, d.state.SubsetReady
	})
}

// Simple-protocol point reads carry their key as a literal, so each one is
// a new statement text that the analysis cache never sees again, and
// parsing it costs more than relaying it. Once a text has been planned as a
// point read, its shape (the text with every literal replaced by ?) is
// remembered: a later text of the same shape differs only in values, reads
// the same table by the same columns, and goes to the origin after a token
// scan. The scan must also find a plain SELECT that writes and changes
// nothing (quickScan), because nothing of it is tracked. A shape taken for
// another statement's could only send a statement to the origin, which
// answers everything exactly.

// pointShapeCacheSize bounds the remembered point-read shapes.
const pointShapeCacheSize = 1024

// quickPointRead is the planner's decision for a text whose shape was
// planned as a point read before, when it has one.
func (p *Planner) quickPointRead(ctx context.Context, sql string, s *Session) (Decision, bool) {
	shape, ok := literalShape(sql)
	if !ok {
		return Decision{}, false
	}
	a, ok := p.pointShapes.get(shape)
	if !ok {
		return Decision{}, false
	}
	if d, ok := p.quickScan(sql, nil); !ok || d.Kind != KindSelect {
		return Decision{}, false
	}
	r, reason := p.resolve(ctx, a, s)
	if reason != "" || !isPointRead(a, r) {
		return Decision{}, false
	}
	if st := r.datasets[0].state; !st.SubsetReady || st.SubsetFilter != "" {
		// Read through a subset: the rewrite needs this text's own parse.
		return Decision{}, false
	}
	return Decision{Route: RouteOrigin, Reason: ReasonPointRead, Kind: KindSelect, Tables: r.tables, Datasets: r.datasetNames()}, true
}

// rememberPointRead keeps the shape of sql, just planned as a point read.
func (p *Planner) rememberPointRead(sql string, a *analysis) {
	if shape, ok := literalShape(sql); ok {
		p.pointShapes.add(shape, a)
	}
}

// literalShape returns sql with its numeric and string literals replaced
// by ?, or false when the text has anything the scan does not read
// (comments, dollar quotes, parameters, prefixed strings such as E'...').
func literalShape(sql string) (string, bool) {
	var b strings.Builder
	b.Grow(len(sql))
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	i, n := 0, len(sql)
	for i < n {
		c := sql[i]
		switch {
		case c == '\'':
			end, ok := skipString(sql, i, false)
			if !ok {
				return "", false
			}
			b.WriteByte('?')
			i = end
		case c == '"':
			end, ok := skipQuotedIdent(sql, i)
			if !ok {
				return "", false
			}
			b.WriteString(sql[i:end])
			i = end
		case c == '$', c == '-' && i+1 < n && sql[i+1] == '-', c == '/' && i+1 < n && sql[i+1] == '*':
			return "", false
		case isDigit(c), c == '.' && i+1 < n && isDigit(sql[i+1]):
			j := i
			for j < n && (isDigit(sql[j]) || sql[j] == '.') {
				j++
			}
			if j < n && (sql[j] == 'e' || sql[j] == 'E') {
				k := j + 1
				if k < n && (sql[k] == '+' || sql[k] == '-') {
					k++
				}
				if k < n && isDigit(sql[k]) {
					for j = k; j < n && isDigit(sql[j]); j++ {
					}
				}
			}
			b.WriteByte('?')
			i = j
		case isIdentStart(sql, i):
			j := i
			for j < n && (isIdentChar(sql[j]) || sql[j] >= 0x80) {
				j++
			}
			if j < n && sql[j] == '\'' {
				return "", false // E'...', B'...', U&'...'
			}
			b.WriteString(sql[i:j])
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), true
}
