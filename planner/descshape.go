package planner

import (
	"sort"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Description shapes. The row description Postgres gives a SELECT (column
// names, types, typmods, source columns) comes from its target lists and
// FROM items; a WHERE, HAVING or JOIN ... ON clause or a LIMIT or OFFSET
// is a filter and changes none of it, whatever constants it holds. So
// texts that differ only in such constants (a dashboard's filter values,
// the time range Grafana writes into each query) have one description,
// and so do the parameter types Postgres infers, as long as each constant
// keeps its kind: a constant's kind (an integer within int4, one within
// int8, another number, a string, a bit string, a boolean, NULL) is all
// Postgres types it by, never its value.
//
// The proxy describes an accelerated statement by asking the origin and
// keeps the answer by text. While the origin is down it cannot ask, and a
// text it has not seen would fail; DescriptionShape lets it use the
// description of a text of the same shape instead.

// descShapeMark starts the mark that stands for a constant in a
// description shape; no SQL text holds the byte (the lexer refuses it).
const descShapeMark = '\x02'

// DescriptionShape returns sql's description shape: sql with each
// constant of a WHERE, HAVING or JOIN ... ON clause, a LIMIT or an OFFSET,
// at any depth, replaced by a mark of its kind, and without the blanks
// and semicolons that end it. It reports false for
// anything but one plain SELECT (or VALUES, or set operation of them) that
// parses.
func DescriptionShape(sql string) (string, bool) {
	if strings.IndexByte(sql, descShapeMark) >= 0 {
		return "", false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false
	}
	sel := tree.Stmts[0].GetStmt().GetSelectStmt()
	if sel == nil || sel.IntoClause != nil {
		return "", false
	}
	f := &filterConsts{kinds: map[int32]byte{}}
	walk(sel, f)
	if len(f.kinds) == 0 {
		return trimEnd(sql), true
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return "", false
	}
	toks := scan.GetTokens()
	locs := make([]int32, 0, len(f.kinds))
	for at := range f.kinds {
		locs = append(locs, at)
	}
	sort.Slice(locs, func(i, j int) bool { return locs[i] < locs[j] })
	var b strings.Builder
	b.Grow(len(sql))
	done := 0 // sql[:done] is written
	for _, at := range locs {
		i := sort.Search(len(toks), func(i int) bool { return toks[i].GetStart() >= at })
		if i == len(toks) || toks[i].GetStart() != at || int(at) < done {
			continue // not where a token starts: left as it is
		}
		end, ok := constEnd(toks, i)
		if !ok {
			continue
		}
		b.WriteString(sql[done:at])
		b.WriteByte(descShapeMark)
		b.WriteByte(f.kinds[at])
		done = end
	}
	b.WriteString(sql[done:])
	return trimEnd(b.String()), true
}

// trimEnd drops the blanks and semicolons that end a statement: psql's
// text of a statement is pgx's with a semicolon.
func trimEnd(s string) string { return strings.TrimRight(s, " \t\r\n\f;") }

// constEnd returns where the constant whose first token is toks[i] ends:
// the token itself, or, for a negative number (its location is the minus
// sign's), the number after it. It reports false for tokens that are not
// plain constants (U&'...' with its UESCAPE, say), which stay in the shape.
func constEnd(toks []*pg_query.ScanToken, i int) (int, bool) {
	t := toks[i]
	switch t.GetToken() {
	case pg_query.Token_ICONST, pg_query.Token_FCONST, pg_query.Token_SCONST, pg_query.Token_BCONST,
		pg_query.Token_XCONST, pg_query.Token_TRUE_P, pg_query.Token_FALSE_P, pg_query.Token_NULL_P:
		return int(t.GetEnd()), true
	case pg_query.Token_ASCII_45: // '-'
		if i+1 < len(toks) {
			switch n := toks[i+1]; n.GetToken() {
			case pg_query.Token_ICONST, pg_query.Token_FCONST:
				return int(n.GetEnd()), true
			}
		}
	}
	return 0, false
}

// filterConsts finds the constants of filters (see above), by location.
type filterConsts struct {
	kinds map[int32]byte
}

func (f *filterConsts) enter(m proto.Message, _ *walker) {
	switch n := m.(type) {
	case *pg_query.SelectStmt:
		for _, sub := range []*pg_query.Node{n.WhereClause, n.HavingClause, n.LimitCount, n.LimitOffset} {
			f.collect(sub)
		}
	case *pg_query.JoinExpr:
		f.collect(n.Quals)
	}
}

func (f *filterConsts) collect(n *pg_query.Node) {
	if n != nil {
		walk(n, constKinds(f.kinds))
	}
}

// constKinds records every A_Const it sees with its kind.
type constKinds map[int32]byte

func (k constKinds) enter(m proto.Message, _ *walker) {
	c, ok := m.(*pg_query.A_Const)
	if !ok {
		return
	}
	var kind byte
	switch {
	case c.Isnull:
		kind = 'z'
	case c.GetIval() != nil:
		kind = 'i' // an int4
	case c.GetFval() != nil:
		// An integer beyond int4 is an int8 if it fits; any other number
		// is a numeric.
		kind = 'n'
		if _, err := strconv.ParseInt(c.GetFval().GetFval(), 10, 64); err == nil {
			kind = 'l'
		}
	case c.GetBoolval() != nil:
		kind = 'b'
	case c.GetSval() != nil:
		kind = 's'
	case c.GetBsval() != nil:
		kind = 'x'
	default:
		return
	}
	k[c.Location] = kind
}
