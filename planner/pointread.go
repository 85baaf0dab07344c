package planner

import (
	"context"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
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
	rv, qualifiers := tableQualifiers(sel)
	if rv == nil {
		return nil
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

// tableQualifiers returns the one table sel's FROM names (nil if it is not
// a table) and the names its columns may be qualified with: its alias,
// which hides the table's name, or the name.
func tableQualifiers(sel *pg_query.SelectStmt) (*pg_query.RangeVar, []string) {
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil {
		return nil, nil
	}
	if rv.Alias != nil {
		return rv, []string{rv.Alias.Aliasname}
	}
	return rv, []string{rv.Relname}
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

// subsetAnswers reports whether a read of d through the subset its
// acceleration holds answers what the accelerated route would. Without
// on_zero_results: use_source it does. With it, the accelerated route
// answers from the subset, and when that answer is empty from the source
// less what retention evicts (FallbackFilter): one statement answers both
// only when the two sets of rows are the same, that is with no refresh_sql
// condition or data window, and retention checked if it is set. Otherwise
// (a key outside refresh_sql's subset must come back from the source; an
// IN list with a key inside must not; an aggregate has a row either way)
// the point read takes the accelerated route and its fallback.
func subsetAnswers(d usedDataset) bool {
	if d.ds.Acceleration.OnZeroResults != catalog.ZeroResultsUseSource {
		return true
	}
	st := d.state
	return st.SubsetReady && st.FallbackReady && st.SubsetFilter == st.FallbackFilter
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
	if st := r.datasets[0].state; !st.SubsetReady || st.SubsetFilter != "" || !subsetAnswers(r.datasets[0]) {
		// Read through a subset: the rewrite needs this text's own parse.
		// Or the accelerated route and its fallback answer it.
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
	shape, _, ok := scanLiterals(sql, false)
	return shape, ok
}

// literal is one literal of a text, as scanLiterals found it: kind 'i',
// 'f' or 's' (as in the shape), and its text (a string's without quotes,
// ” read as ').
type literal struct {
	kind byte
	text string
}

// scanLiterals is literalShape, also returning the literals in order when
// collect is set; the shape then tells their kinds apart: ?i (an integer:
// digits only), ?f (another number), ?s (a string).
func scanLiterals(sql string, collect bool) (string, []literal, bool) {
	var b strings.Builder
	var lits []literal
	b.Grow(len(sql))
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	i, n := 0, len(sql)
	for i < n {
		c := sql[i]
		switch {
		case c == '\'':
			end, ok := skipString(sql, i, false)
			if !ok {
				return "", nil, false
			}
			b.WriteByte('?')
			if collect {
				b.WriteByte('s')
				lits = append(lits, literal{kind: 's', text: strings.ReplaceAll(sql[i+1:end-1], "''", "'")})
			}
			i = end
		case c == '"':
			end, ok := skipQuotedIdent(sql, i)
			if !ok {
				return "", nil, false
			}
			b.WriteString(sql[i:end])
			i = end
		case c == '$', c == '-' && i+1 < n && sql[i+1] == '-', c == '/' && i+1 < n && sql[i+1] == '*':
			return "", nil, false
		case isDigit(c), c == '.' && i+1 < n && isDigit(sql[i+1]):
			j := i
			kind := byte('i')
			for j < n && (isDigit(sql[j]) || sql[j] == '.') {
				if sql[j] == '.' {
					kind = 'f'
				}
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
					kind = 'f'
				}
			}
			if j < n && (isIdentChar(sql[j]) || sql[j] >= 0x80) {
				return "", nil, false // 0x1F, 1_000, 123abc: not read here
			}
			b.WriteByte('?')
			if collect {
				b.WriteByte(kind)
				lits = append(lits, literal{kind: kind, text: sql[i:j]})
			}
			i = j
		case isIdentStart(sql, i):
			j := i
			for j < n && (isIdentChar(sql[j]) || sql[j] >= 0x80) {
				j++
			}
			if j < n && sql[j] == '\'' {
				return "", nil, false // E'...', B'...', U&'...'
			}
			b.WriteString(sql[i:j])
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), lits, true
}

// Point lookups. A point read the acceleration answers may be answered
// from the dataset's point index (accelerator.PointIndexes) instead of
// DuckDB when its shape is the plainest: output columns that are the
// table's columns as they are, and a WHERE that is only column = value
// for each column of the primary key. Decision.Point then says how.

// PointLookup is how a point read is answered from a point index.
type PointLookup struct {
	Dataset string
	// Columns are the output columns, in order: columns of the dataset.
	Columns []string
	// Keys pin the primary key's columns, in the key's order.
	Keys []PointKey
	// Shape is the text with its literals replaced by placeholders of
	// their kinds, when every literal is a key's value: every text of the
	// shape has the same output columns (the same description). "" when
	// the text has other literals or the scan does not read it.
	Shape string
}

// PointKey is the value one key column is pinned to: parameter $Param
// (from 1), or, when Param is 0, the literal Value (an int64 or a string).
type PointKey struct {
	Column string
	// Int: the column is of an integer type (the value must be an
	// integer); otherwise it is text or, with UUID, a uuid (the value
	// must be a string: a uuid's is its text form, for the caller to
	// read as the origin would).
	Int, UUID bool
	Param     int
	Value     any
}

// pointShape is the session-independent part of a PointLookup: a's
// statement is a plain SELECT of one table whose output columns are its
// columns (star: all of them) and whose WHERE pins columns, each once.
type pointShape struct {
	columns []string // "" for a star
	pins    map[string]pointPin
	// shape is the text's literalShape when every literal of the text is
	// a key pin's value (none is anywhere else): litOf then says which
	// literal (from 0) pins which column, and another text of this shape
	// is planned from this one (quickLookup). "" otherwise.
	shape string
	litOf map[string]int
}

// bindLiterals sets sh.shape and sh.litOf for sql, the text sh is of.
func (sh *pointShape) bindLiterals(sql string) {
	shape, lits, ok := scanLiterals(sql, true)
	if !ok {
		return
	}
	litOf := map[string]int{}
	used := make([]bool, len(lits))
	seen := map[any]bool{}
	for _, pin := range sh.pins {
		if pin.param == 0 {
			if seen[pin.value] {
				return // two pins of one value: which literal is whose?
			}
			seen[pin.value] = true
		}
	}
	for col, pin := range sh.pins {
		if pin.param > 0 {
			continue
		}
		found := -1
		for i, l := range lits {
			if !used[i] && literalValue(l) == pin.value {
				found = i
				break
			}
		}
		if found < 0 {
			return // -5 (a sign outside the literal), 'a' 'b' (joined)
		}
		used[found] = true
		litOf[col] = found
	}
	if len(litOf) != len(lits) {
		return // a literal outside the pins (LIMIT 1)
	}
	sh.shape, sh.litOf = shape, litOf
}

// literalValue is l's value as a pin holds it: an int64 for an integer
// that fits, a string for a string, nil otherwise.
func literalValue(l literal) any {
	switch l.kind {
	case 'i':
		if v, err := strconv.ParseInt(l.text, 10, 64); err == nil {
			return v
		}
	case 's':
		return l.text
	}
	return nil
}

type pointPin struct {
	param int
	value any // int64 or string
}

// lookupShape returns sel's pointShape, or nil.
func lookupShape(sel *pg_query.SelectStmt) *pointShape {
	if sel.Op != pg_query.SetOperation_SETOP_NONE || sel.WithClause != nil || sel.IntoClause != nil ||
		len(sel.LockingClause) > 0 || len(sel.DistinctClause) > 0 || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || len(sel.WindowClause) > 0 || len(sel.SortClause) > 0 ||
		len(sel.ValuesLists) > 0 || sel.LimitOffset != nil || len(sel.FromClause) != 1 || sel.WhereClause == nil {
		return nil
	}
	if sel.LimitCount != nil {
		// LIMIT n with n >= 1 keeps the row there is.
		c := sel.LimitCount.GetAConst()
		if c == nil || c.GetIval() == nil || c.GetIval().Ival < 1 {
			return nil
		}
	}
	rv, qualifiers := tableQualifiers(sel)
	if rv == nil || rv.Alias != nil && len(rv.Alias.Colnames) > 0 {
		return nil
	}
	sh := &pointShape{pins: map[string]pointPin{}}
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 {
			return nil
		}
		ref := rt.Val.GetColumnRef()
		if ref == nil {
			return nil
		}
		if last := ref.Fields[len(ref.Fields)-1]; last.GetAStar() != nil {
			if len(ref.Fields) == 2 {
				if q := ref.Fields[0].GetString_(); q == nil || !slices.Contains(qualifiers, q.Sval) {
					return nil
				}
			} else if len(ref.Fields) != 1 {
				return nil
			}
			sh.columns = append(sh.columns, "")
			continue
		}
		col, ok := columnOf(rt.Val, qualifiers)
		if !ok {
			return nil
		}
		sh.columns = append(sh.columns, col)
	}
	var conjunct func(n *pg_query.Node) bool
	conjunct = func(n *pg_query.Node) bool {
		if b := n.GetBoolExpr(); b != nil {
			if b.Boolop != pg_query.BoolExprType_AND_EXPR {
				return false
			}
			for _, arg := range b.Args {
				if !conjunct(arg) {
					return false
				}
			}
			return true
		}
		e := n.GetAExpr()
		if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 || e.Name[0].GetString_().GetSval() != "=" {
			return false
		}
		for _, pair := range [][2]*pg_query.Node{{e.Lexpr, e.Rexpr}, {e.Rexpr, e.Lexpr}} {
			col, ok := columnOf(pair[0], qualifiers)
			if !ok {
				continue
			}
			pin, ok := pinOf(pair[1])
			if !ok {
				return false
			}
			if _, dup := sh.pins[col]; dup {
				return false
			}
			sh.pins[col] = pin
			return true
		}
		return false
	}
	if !conjunct(sel.WhereClause) {
		return nil
	}
	return sh
}

// pinOf reads a parameter, an integer literal or a string literal (no
// cast: an integer literal has an integer type, a string literal takes
// the column's).
func pinOf(n *pg_query.Node) (pointPin, bool) {
	if p := n.GetParamRef(); p != nil {
		return pointPin{param: int(p.Number)}, p.Number > 0
	}
	c := n.GetAConst()
	switch {
	case c == nil || c.Isnull:
		return pointPin{}, false
	case c.GetIval() != nil:
		return pointPin{value: int64(c.GetIval().Ival)}, true
	case c.GetSval() != nil:
		return pointPin{value: c.GetSval().Sval}, true
	}
	return pointPin{}, false // a numeric, a bit string, a boolean
}

// pointLookup returns the PointLookup of a, an accelerated read of r's one
// dataset, with its key pinned by pins (nil: a's own), or nil when its
// shape is not one (see lookupShape) or the key is not the dataset's whole
// primary key of integer, text or uuid columns, each pinned to a value of
// its kind.
func pointLookup(a *analysis, r resolution, pins map[string]pointPin) *PointLookup {
	sh := a.lookup
	if sh == nil || len(r.datasets) != 1 || len(a.rels) != 1 {
		return nil
	}
	if pins == nil {
		pins = sh.pins
	}
	ds := r.datasets[0]
	cols := ds.state.Columns
	find := func(name string) (catalog.ColumnInfo, bool) {
		i := slices.IndexFunc(cols, func(c catalog.ColumnInfo) bool { return c.Name == name })
		if i < 0 || !cols[i].Accelerated {
			return catalog.ColumnInfo{}, false
		}
		return cols[i], true
	}
	pl := &PointLookup{Dataset: ds.ds.Name, Shape: sh.shape}
	for _, c := range sh.columns {
		if c == "" {
			for _, col := range cols {
				if !col.Accelerated {
					return nil
				}
				pl.Columns = append(pl.Columns, col.Name)
			}
			continue
		}
		if _, ok := find(c); !ok {
			return nil
		}
		pl.Columns = append(pl.Columns, c)
	}
	keyParts := 0
	for _, c := range cols {
		if c.KeyPart > keyParts {
			keyParts = c.KeyPart
		}
	}
	if keyParts == 0 || keyParts != len(pins) {
		return nil
	}
	pl.Keys = make([]PointKey, keyParts)
	for name, pin := range pins {
		c, ok := find(name)
		if !ok || c.KeyPart == 0 {
			return nil
		}
		k := PointKey{Column: name, Param: pin.param, Value: pin.value}
		switch c.TypeOID {
		case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8:
			k.Int = true
			if _, isInt := pin.value.(int64); pin.param == 0 && !isInt {
				return nil // '42': the origin reads it as the column's type
			}
		case pgdef.OIDText, pgdef.OIDVarchar:
			// Equality of text compares bytes under a deterministic
			// collation; the acceleration's only knows the binary ones.
			if !c.BinaryCollation && c.CollationLocale == "" {
				return nil
			}
			if _, isStr := pin.value.(string); pin.param == 0 && !isStr {
				return nil
			}
		case pgdef.OIDUUID:
			k.UUID = true
			if _, isStr := pin.value.(string); pin.param == 0 && !isStr {
				return nil
			}
		default:
			return nil
		}
		pl.Keys[c.KeyPart-1] = k
	}
	for _, k := range pl.Keys {
		if k.Column == "" {
			return nil
		}
	}
	return pl
}

// Simple-protocol point lookups carry their key as a literal, so each one
// is a new text: parsing, rewriting and describing it at the origin would
// cost more than the index saves. A text whose every literal pins its key
// (pointShape.shape) is remembered by shape once planned as a lookup; a
// later text of the same shape has the same tokens but for the literals'
// values, so the same parse but for the pins: it is planned from the
// remembered analysis without a parse, as a lookup whose SQL is not built
// (Decision.SQL ""), for callers that allow it (Session.PointOnly) and
// answer it from the index or plan it again without.

// quickLookup is the planner's decision for a text whose shape was planned
// as a point lookup before, when it has one: RouteAccelerate with Point
// and no SQL.
func (p *Planner) quickLookup(ctx context.Context, sql string, s *Session) (Decision, bool) {
	shape, lits, ok := scanLiterals(sql, true)
	if !ok {
		return Decision{}, false
	}
	a, ok := p.lookupShapes.get(shape)
	if !ok || len(a.lookup.litOf) != len(lits) || len(a.lookup.litOf) != len(a.lookup.pins) {
		return Decision{}, false
	}
	pins := make(map[string]pointPin, len(a.lookup.litOf))
	for col, i := range a.lookup.litOf {
		pins[col] = pointPin{value: literalValue(lits[i])}
	}
	return p.decide(ctx, sql, a, nil, s, true, pins)
}
