package planner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"

	"github.com/pgaccel/pgaccel/catalog"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The rewrite turns a Postgres read into the DuckDB statement:
//
//   - every relation that is a dataset becomes the dataset's DuckDB table
//     (Resolver.TableRef), keeping its alias, or aliased by its own name so
//     that orders.id still works;
//   - schema.table.column references lose the schema, since the table is
//     now known by its alias;
//   - ORDER BY items without NULLS FIRST/LAST get Postgres' default
//     explicitly (NULLS LAST ascending, NULLS FIRST descending): DuckDB puts
//     NULLs last both ways;
//   - x LIKE p becomes like_escape(x, p, '\') (and NOT LIKE, ILIKE, ESCAPE
//     alike) unless p is a literal without a backslash: Postgres' LIKE
//     escapes with a backslash by default, DuckDB's does not;
//   - pg_catalog.f(...) of the allowed built-ins and pg_catalog types the
//     deparser would print qualified lose the qualification, which DuckDB
//     does not know.
//
// The tree is deparsed by pg_query. $n parameters stay as they are.

// maxRewrites bounds how many rewritten forms one statement text keeps
// (one per distinct resolution: search paths and DuckDB table names).
const maxRewrites = 4

// rewriteCache holds the rewritten forms of one statement text.
type rewriteCache struct {
	mu      sync.Mutex
	entries []rewriteEntry
	next    int
}

type rewriteEntry struct {
	key string
	out rewritten
}

// rewritten is a statement rewritten for DuckDB, and whether it prints
// values with pgdef.FuncText (Decision.PrintsText); or why the rewrite
// refused it (refused, see refusal).
type rewritten struct {
	sql        string
	printsText bool
	refused    string
	// reason is the refusal's Decision reason (ReasonUnsupported when
	// empty).
	reason string
}

func (c *rewriteCache) get(key string) (rewritten, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.key == key {
			return e.out, true
		}
	}
	return rewritten{}, false
}

func (c *rewriteCache) put(key string, out rewritten) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) < maxRewrites {
		c.entries = append(c.entries, rewriteEntry{key, out})
		return
	}
	c.entries[c.next] = rewriteEntry{key, out}
	c.next = (c.next + 1) % maxRewrites
}

// rewrite returns the DuckDB form of a read resolved as r. tree, when not
// nil, is the statement's parse tree, unchanged since the analysis; the
// rewrite changes it.
func (p *Planner) rewrite(a *analysis, r resolution, tree *pg_query.ParseResult) (rewritten, error) {
	refs := make([]string, len(r.datasets))
	var key strings.Builder
	for i, d := range r.datasets {
		refs[i] = p.res.TableRef(d.ds.Name)
		key.WriteString(refs[i])
		key.WriteByte(0)
		// Many rewrites follow the columns' types (round of a double,
		// the division rule, the text function, case mapping): a
		// dataset whose columns changed is rewritten again.
		key.WriteString(strconv.FormatUint(columnsFingerprint(d.state.Columns), 36))
		key.WriteByte(0)
	}
	// The output is a function of the tables, which relation is which
	// table, and (for schema.table.column references) the schemas.
	for _, k := range r.relDS {
		key.WriteString(strconv.Itoa(k))
		key.WriteByte(1)
	}
	if len(a.qualified) > 0 {
		for _, s := range r.schemas {
			key.WriteString(s)
			key.WriteByte(1)
		}
	}
	// Scale-tracked outputs depend on the columns' scales.
	if sc := r.scale; sc.ok {
		for _, p := range sc.pos {
			key.WriteString(strconv.Itoa(p))
			key.WriteByte(2)
		}
		for _, st := range a.trackedTargets() {
			for _, c := range st.cols {
				key.WriteString(c)
				key.WriteByte(3)
				key.WriteString(strconv.Itoa(sc.colScale[c]))
			}
		}
	}
	// Text ordering depends on the default collation (collorder.go),
	// case mapping on the columns' LC_CTYPE.
	key.WriteString(r.defaultColl)
	key.WriteByte(4)
	key.WriteString(r.caseLocale)
	key.WriteByte(4)
	if out, ok := a.rewrites.get(key.String()); ok {
		return out, nil
	}
	wrapped := textWrapped(a, r)
	sql, err := rewriteTree(a, r, refs, tree, wrapped)
	var ref *refusal
	if errors.As(err, &ref) {
		out := rewritten{refused: ref.why, reason: ref.reason}
		a.rewrites.put(key.String(), out)
		return out, nil
	}
	if err != nil {
		return rewritten{}, err
	}
	out := rewritten{sql: sql, printsText: len(wrapped) > 0}
	a.rewrites.put(key.String(), out)
	return out, nil
}

// collector gathers the nodes the rewrite changes, numbered as the
// analysis numbered them.
type collector struct {
	rangeVars []*pg_query.RangeVar
	colRefs   []*pg_query.ColumnRef
	sorts     []*pg_query.SortBy
	funcs     []*pg_query.FuncCall
	types     []*pg_query.TypeName
	likes     []likeSite
	targets   []*pg_query.ResTarget
	aliases   []*pg_query.Alias
	joins     []*pg_query.JoinExpr
	divisions []*pg_query.A_Expr
	// divisionNodes hold divisions (nil: held directly), for floordiv.go.
	divisionNodes []*pg_query.Node
	selects       []*pg_query.SelectStmt
	casts         []*pg_query.TypeCast
	concats       []*pg_query.A_Expr
	jsonOps       []likeSite // ->, ->>, #>, #>>, ? (jsonfuncs.go)
	anys          []likeSite // x op ANY(array)
	contains      []likeSite // @>, <@
	indices       []*pg_query.A_Indices
	castSites     []likeCast // casts and their wrappers
	intCalls      []likeCall // calls of int4 results DuckDB makes bigint
	rowNulls      []likeNull // ROW(...) IS [NOT] NULL
	subtracts     []likeSite // binary - (tstz.go)
}

// likeNull is a NULL test and the Node that holds it.
type likeNull struct {
	node *pg_query.Node
	test *pg_query.NullTest
}

// likeCall is a call and the Node that holds it.
type likeCall struct {
	node *pg_query.Node
	call *pg_query.FuncCall
}

// likeCast is a cast and the Node that holds it (nil: held directly).
type likeCast struct {
	node *pg_query.Node
	cast *pg_query.TypeCast
}

// likeSite is a LIKE expression and the Node that holds it.
type likeSite struct {
	node *pg_query.Node
	expr *pg_query.A_Expr
}

func (c *collector) enter(m proto.Message, w *walker) {
	switch n := m.(type) {
	case *pg_query.A_Expr:
		if isDivision(n) {
			c.divisions = append(c.divisions, n)
			c.divisionNodes = append(c.divisionNodes, w.node())
		}
		if isSubtraction(n) && w.node() != nil {
			c.subtracts = append(c.subtracts, likeSite{w.node(), n})
		}
		if _, ok := jsonOperatorFuncs[jsonOperator(n)]; ok && w.node() != nil {
			c.jsonOps = append(c.jsonOps, likeSite{w.node(), n})
		}
		if n.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ANY && w.node() != nil {
			c.anys = append(c.anys, likeSite{w.node(), n})
		}
		if op := jsonOperator(n); (op == "@>" || op == "<@") && w.node() != nil {
			c.contains = append(c.contains, likeSite{w.node(), n})
		}
		if n.Kind == pg_query.A_Expr_Kind_AEXPR_OP || n.Kind == pg_query.A_Expr_Kind_AEXPR_LIKE || n.Kind == pg_query.A_Expr_Kind_AEXPR_ILIKE {
			if _, ok := likeEscapeFunc(n); ok {
				c.likes = append(c.likes, likeSite{w.node(), n})
			}
		}
	case *pg_query.RangeVar:
		c.rangeVars = append(c.rangeVars, n)
	case *pg_query.ColumnRef:
		c.colRefs = append(c.colRefs, n)
	case *pg_query.SortBy:
		c.sorts = append(c.sorts, n)
	case *pg_query.FuncCall:
		c.funcs = append(c.funcs, n)
		if int4Results[funcName(n)] && w.node() != nil {
			c.intCalls = append(c.intCalls, likeCall{w.node(), n})
		}
	case *pg_query.TypeName:
		c.types = append(c.types, n)
	case *pg_query.ResTarget:
		c.targets = append(c.targets, n)
	case *pg_query.Alias:
		c.aliases = append(c.aliases, n)
	case *pg_query.JoinExpr:
		c.joins = append(c.joins, n)
	case *pg_query.SelectStmt:
		c.selects = append(c.selects, n)
	case *pg_query.TypeCast:
		c.casts = append(c.casts, n)
		c.castSites = append(c.castSites, likeCast{w.node(), n})
	case *pg_query.A_Indices:
		c.indices = append(c.indices, n)
	case *pg_query.NullTest:
		if n.Arg.GetRowExpr() != nil && w.node() != nil {
			c.rowNulls = append(c.rowNulls, likeNull{w.node(), n})
		}
	}
	if e, ok := m.(*pg_query.A_Expr); ok && isConcat(e) {
		c.concats = append(c.concats, e)
	}
}

var errRewrite = errors.New("rewrite: tree differs from analysis")

func rewriteTree(a *analysis, r resolution, refs []string, tree *pg_query.ParseResult, wrapped map[string]bool) (string, error) {
	if tree == nil {
		var err error
		if tree, err = pg_query.Parse(a.sql); err != nil {
			return "", fmt.Errorf("rewrite: parse: %w", err)
		}
		if len(a.clocks) > 0 && len(tree.Stmts) == 1 && len(standInClocks(tree.Stmts[0].Stmt)) != len(a.clocks) {
			return "", errRewrite
		}
	}
	if len(tree.Stmts) != 1 {
		return "", errRewrite
	}
	var c collector
	walk(tree.Stmts[0].Stmt, &c)
	if why := correlatedHazard(tree.Stmts[0].Stmt, a, r, c.rangeVars); why != "" {
		return "", refuse(why)
	}
	typed := prepareTypeRewrites(tree.Stmts[0].Stmt, a, r)

	targets := make([]*pg_query.RangeVar, len(refs))
	for i, ref := range refs {
		var err error
		if targets[i], err = tableRefVar(ref); err != nil {
			return "", err
		}
	}
	// Column references first: matching them needs the relations as written.
	for _, q := range a.qualified {
		if q.ordinal >= len(c.colRefs) || qualifiedTarget(a, r, q) < 0 {
			return "", errRewrite
		}
		cr := c.colRefs[q.ordinal]
		cr.Fields = cr.Fields[1:]
	}
	for i, rel := range a.rels {
		if rel.ordinal >= len(c.rangeVars) {
			return "", errRewrite
		}
		rv := c.rangeVars[rel.ordinal]
		if rv.Relname != rel.name || rv.Schemaname != rel.schema {
			return "", errRewrite
		}
		t := targets[r.relDS[i]]
		rv.Catalogname, rv.Schemaname, rv.Relname = t.Catalogname, t.Schemaname, t.Relname
		if rv.Alias == nil {
			rv.Alias = &pg_query.Alias{Aliasname: rel.name}
		}
	}
	if err := sortsByOutputName(c.selects); err != nil {
		return "", err
	}
	if sc := r.scale; sc.ok && len(sc.pos) > 0 {
		// Before the rewrites below change how a text cast to numeric
		// is written (scaletrack.go).
		sel := tree.Stmts[0].Stmt.GetSelectStmt()
		if a.pass != nil {
			sel = a.pass.inner(sel)
		}
		numericCasts(sel, a.trackedTargets(), sc.floats)
	}
	// Innermost first: an operand may be another operator's call.
	for i := len(c.jsonOps) - 1; i >= 0; i-- {
		rewriteJSONOperator(c.jsonOps[i])
	}
	for i := len(c.anys) - 1; i >= 0; i-- {
		rewriteEqualsAny(c.anys[i])
	}
	for _, site := range c.contains {
		rewriteJSONBContains(site, a, r)
	}
	wrapText(c.casts, c.concats, wrapped)
	for _, s := range c.sorts {
		explicitNulls(s)
	}
	// Before the calls' rewrites, which may copy their arguments
	// (EXTRACT); outermost first, as the analysis judged them, each
	// replaced in place over its own operand nodes.
	for _, site := range c.subtracts {
		if tstzSubtraction(site.expr, a, r) {
			rewriteTstzSubtraction(site.node, site.expr, a, r)
		}
	}
	if len(c.divisions) != len(a.divisions) {
		return "", errRewrite
	}
	for i, e := range c.divisions {
		if d := a.divisions[i]; d.floored != "" && a.floorDividend(r, d) {
			if err := rewriteFloorDivision(c.divisionNodes[i], e, d.floored); err != nil {
				return "", err
			}
			continue
		}
		guardDivisor(e)
	}
	for _, ix := range c.indices {
		guardSubscript(ix)
	}
	for _, rn := range c.rowNulls {
		if err := rewriteRowNullTest(rn.node, rn.test); err != nil {
			return "", err
		}
	}
	for _, cs := range c.castSites {
		rewriteByteaLiteral(cs.node, cs.cast)
	}
	if len(a.exactAvg) > 0 {
		rewriteAvg(tree.Stmts[0].Stmt.GetSelectStmt(), a.exactAvg)
	}
	for _, i := range a.predAvg {
		if i >= len(c.funcs) || !plainAvg(c.funcs[i]) {
			return "", errRewrite
		}
		rewritePredicateAvg(c.funcs[i])
	}
	for _, l := range c.likes {
		rewriteILike(l.expr, r.caseLocale)
	}
	for _, l := range c.likes {
		if err := escapeLike(l); err != nil {
			return "", err
		}
	}
	var inFrom map[*pg_query.FuncCall]bool
	if a.unnestSeries {
		inFrom = fromFunctions(tree.Stmts[0].Stmt)
	}
	for _, f := range c.funcs {
		if a.unnestSeries && !inFrom[f] && literalSeries(f) {
			unnestSeries(f)
			continue
		}
		if _, ok := intAsFloat(f); ok {
			guardIntFloat(f)
			continue
		}
		if extractField(f) != "" {
			rewriteExtract(f, a, r)
			continue
		}
		if yearField(f) != "" {
			guardInfinite(f, a, r)
			rewriteYear(f)
			continue
		}
		if len(f.Funcname) == 2 && f.Funcformat != pg_query.CoercionForm_COERCE_SQL_SYNTAX && isPgCatalog(f.Funcname[0]) {
			f.Funcname = f.Funcname[1:]
		}
		rewriteTimeLiteral(f)
		rewriteCase(f, r.caseLocale)
		rewriteToChar(f)
		rewriteByArgType(f, a, r)
		rewriteSubstr(f)
		guardInfinite(f, a, r)
		guardArgs(f)
	}
	for _, t := range c.types {
		if len(t.Names) == 2 && isPgCatalog(t.Names[0]) && !deparserNamesType(t.Names[1]) {
			t.Names = t.Names[1:]
		}
	}
	for _, ic := range c.intCalls {
		if ic.node.GetFuncCall() == ic.call {
			ic.node.Node = castTo(&pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: ic.call}}, "int4").Node
		}
	}
	for _, cs := range c.castSites {
		guardNarrowing(cs.node, cs.cast, a, r)
	}
	guardFloats(tree.Stmts[0].Stmt, a, r)
	if err := typed.apply(); err != nil {
		return "", err
	}
	// Identifiers that are keywords in DuckDB but not reserved in Postgres
	// come out of the deparser unquoted; quote them. A statement that
	// already contains the marker text is left as it is (DuckDB may then
	// refuse it, and the statement falls back to the origin).
	heldNumerics(tree.Stmts[0].Stmt, a, r)
	var q identQuoter
	if !strings.Contains(a.sql, quoteMarker) {
		// A fresh walk: the rewrites above add column references of
		// their own (copies, wrappers).
		c = collector{}
		walk(tree.Stmts[0].Stmt, &c)
		for _, cr := range c.colRefs {
			for _, f := range cr.Fields {
				q.protectNode(f)
			}
		}
		for _, t := range c.targets {
			if t.Name != "" {
				q.protect(&t.Name)
			}
		}
		for _, al := range c.aliases {
			q.protect(&al.Aliasname)
			for _, n := range al.Colnames {
				q.protectNode(n)
			}
		}
		for _, j := range c.joins {
			for _, n := range j.UsingClause {
				q.protectNode(n)
			}
		}
	}
	// Last, so that the scale expressions clone the rewritten (and
	// quoted) conditions.
	if sc := r.scale; sc.ok && len(sc.pos) > 0 {
		sel := tree.Stmts[0].Stmt.GetSelectStmt()
		if a.pass != nil {
			sel = a.pass.inner(sel)
		}
		if err := addHiddenScales(sel, sc.hidden); err != nil {
			return "", err
		}
		if err := rewriteScales(sel, sc.pos, sc.colScale, a.trackedTargets()); err != nil {
			return "", err
		}
	}
	// Last, cloning the rewritten outputs (avgsort.go, intervalorder.go,
	// negzero.go).
	sortAvgsByValue(tree.Stmts[0].Stmt.GetSelectStmt(), a.exactAvg)
	if err := orderIntervals(tree.Stmts[0].Stmt, a, r, q.unquoteFunc()); err != nil {
		return "", err
	}
	if err := shieldFloatSorts(tree.Stmts[0].Stmt, a, r, q.unquoteFunc()); err != nil {
		return "", err
	}
	if err := orderCollations(tree.Stmts[0].Stmt, a, r, r.defaultColl, q.unquoteFunc()); err != nil {
		return "", err
	}
	if len(a.clocks) > 0 {
		clockParams(tree.Stmts[0].Stmt, a.paramCount)
	}
	out, err := pg_query.Deparse(tree)
	if err != nil {
		return "", fmt.Errorf("rewrite: deparse: %w", err)
	}
	if !readsBack(tree, out) {
		if readsBackHook != nil {
			readsBackHook(tree, out)
		}
		return "", refuse("the rewritten statement does not read back as the tree it was printed from (the deparser dropped parentheses a nesting of operators needs)")
	}
	return q.restore(out), nil
}

// readsBack reports whether out, the deparsed text of tree, parses to
// tree again (locations aside). pg_query's deparser leaves out
// parentheses that some nestings of operators need: (a IS NOT DISTINCT
// FROM b) NOT IN (...) comes out as a IS NOT DISTINCT FROM b NOT IN (...),
// which both Postgres and DuckDB read as a IS NOT DISTINCT FROM (b NOT IN
// (...)). A text that does not read back is not run.
func readsBack(tree *pg_query.ParseResult, out string) bool {
	back, err := pg_query.Parse(out)
	if err != nil || len(back.Stmts) != len(tree.Stmts) {
		return false
	}
	for i := range tree.Stmts {
		// Both trees are cleared in place: back is this call's own, and
		// tree has been deparsed (the rewrite works on a parse of its own).
		a, b := tree.Stmts[i].Stmt, back.Stmts[i].Stmt
		clearPrintDetails(a.ProtoReflect())
		clearPrintDetails(b.ProtoReflect())
		if !proto.Equal(a, b) {
			return false
		}
	}
	return true
}

// explicitNulls writes Postgres' default NULL order into s.
func explicitNulls(s *pg_query.SortBy) {
	if s.SortbyNulls != pg_query.SortByNulls_SORTBY_NULLS_DEFAULT && s.SortbyNulls != pg_query.SortByNulls_SORT_BY_NULLS_UNDEFINED {
		return
	}
	switch s.SortbyDir {
	case pg_query.SortByDir_SORTBY_DESC:
		s.SortbyNulls = pg_query.SortByNulls_SORTBY_NULLS_FIRST
	case pg_query.SortByDir_SORTBY_USING:
		// The operator decides; DuckDB rejects USING anyway.
	default:
		s.SortbyNulls = pg_query.SortByNulls_SORTBY_NULLS_LAST
	}
}

// escapeLike replaces x LIKE p by like_escape(x, p, e), with e the
// statement's ESCAPE or Postgres' default backslash, unless p is a literal
// in which a backslash cannot matter.
func escapeLike(l likeSite) error {
	fn, _ := likeEscapeFunc(l.expr)
	pattern := l.expr.Rexpr
	escape := pg_query.MakeAConstStrNode(`\`, -1)
	if fc := pattern.GetFuncCall(); fc != nil && funcName(fc) == "like_escape" && len(fc.Args) == 2 {
		pattern, escape = fc.Args[0], fc.Args[1]
	} else if c := pattern.GetAConst(); c != nil {
		if s, ok := c.Val.(*pg_query.A_Const_Sval); ok && !strings.Contains(s.Sval.Sval, `\`) {
			return nil
		}
	}
	if l.node == nil || l.expr.Lexpr == nil || pattern == nil {
		return errRewrite
	}
	call := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(fn)},
		[]*pg_query.Node{l.expr.Lexpr, pattern, escape}, l.expr.Location)
	call.GetFuncCall().Funcformat = pg_query.CoercionForm_COERCE_EXPLICIT_CALL
	l.node.Node = call.Node
	return nil
}

func isPgCatalog(n *pg_query.Node) bool {
	s, ok := n.GetNode().(*pg_query.Node_String_)
	return ok && s.String_.Sval == "pg_catalog"
}

// deparserNamesType reports whether the deparser prints pg_catalog.name
// as an SQL type name (int, bigint, varchar, ...) rather than qualified.
func deparserNamesType(n *pg_query.Node) bool {
	s, ok := n.GetNode().(*pg_query.Node_String_)
	if !ok {
		return false
	}
	switch s.String_.Sval {
	case "bpchar", "varchar", "numeric", "bool", "int2", "int4", "int8", "real", "float4", "float8",
		"time", "timetz", "timestamp", "timestamptz", "interval":
		return true
	}
	return false
}

// tableRefVar parses a DuckDB table reference such as
// `"ds_orders"."main"."orders"` into its parts.
func tableRefVar(ref string) (*pg_query.RangeVar, error) {
	tree, err := pg_query.Parse("SELECT * FROM " + ref)
	if err != nil {
		return nil, fmt.Errorf("table reference %q: %w", ref, err)
	}
	var rv *pg_query.RangeVar
	if len(tree.Stmts) == 1 {
		if sel := tree.Stmts[0].Stmt.GetSelectStmt(); sel != nil && len(sel.FromClause) == 1 && len(sel.TargetList) == 1 {
			rv = sel.FromClause[0].GetRangeVar()
		}
	}
	if rv == nil || rv.Alias != nil {
		return nil, fmt.Errorf("table reference %q is not a table name", ref)
	}
	return rv, nil
}

// columnsFingerprint hashes what the rewrites read of a dataset's
// columns: names, types, type modifiers and the collation and case facts.
func columnsFingerprint(cols []catalog.ColumnInfo) uint64 {
	h := fnv.New64a()
	var buf [10]byte
	for _, c := range cols {
		h.Write([]byte(c.Name))
		binary.LittleEndian.PutUint32(buf[0:], c.TypeOID)
		binary.LittleEndian.PutUint32(buf[4:], uint32(c.TypeMod))
		buf[8] = 0
		if c.Accelerated {
			buf[8] |= 1
		}
		if c.BinaryCollation {
			buf[8] |= 2
		}
		if c.ASCIICase {
			buf[8] |= 4
		}
		h.Write([]byte(c.CollationLocale))
		h.Write([]byte{0})
		h.Write([]byte(c.CaseLocale))
		if c.HeldScale != nil {
			h.Write([]byte{2, byte(*c.HeldScale)})
		}
		if c.NumericText {
			h.Write([]byte{3})
			if c.ValueScale != nil {
				h.Write([]byte{byte(*c.ValueScale), byte(c.ValueWidth)})
			}
		}
		for _, l := range c.EnumLabels { // the enum's order (enums.go)
			h.Write([]byte{1})
			h.Write([]byte(l))
		}
		buf[9] = 0xff // between columns
		h.Write(buf[:])
	}
	return h.Sum64()
}

// readsBackHook, when set (tests), sees a text that did not read back.
var readsBackHook func(*pg_query.ParseResult, string)

// clearPrintDetails clears what the deparser may print otherwise than the
// tree holds it without changing the statement: locations, how a call was
// written (funcformat), type names (int4 printed as int reads back as
// pg_catalog.int4) and integer constants' form. Operators, their nesting
// and operands stay.
func clearPrintDetails(m protoreflect.Message) {
	if c, ok := m.Interface().(*pg_query.A_Const); ok {
		// -2147483648 is an integer in the tree and reads back as a
		// numeric literal: numbers compare by their text.
		if iv := c.GetIval(); iv != nil {
			c.Val = &pg_query.A_Const_Fval{Fval: &pg_query.Float{Fval: strconv.FormatInt(int64(iv.Ival), 10)}}
		}
		c.Location = 0
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Name() == "location" || fd.Name() == "funcformat":
			m.Clear(fd)
		case fd.Kind() == protoreflect.MessageKind && fd.Message().Name() == "TypeName":
			if fd.IsList() {
				m.Clear(fd)
			} else {
				m.Clear(fd)
				m.Set(fd, protoreflect.ValueOfMessage(m.NewField(fd).Message()))
			}
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				clearPrintDetails(l.Get(i).Message())
			}
		case !fd.IsList() && !fd.IsMap() && fd.Kind() == protoreflect.MessageKind:
			clearPrintDetails(v.Message())
		}
		return true
	})
}

// sortsByOutputName makes an ORDER BY name that names an output column
// name it by its position. Postgres resolves an ORDER BY name to an output
// column first (namedOutput: the column of amt::text is "amt"), and only
// then to an input column; DuckDB names that output "CAST(amt AS
// VARCHAR)", and would sort SELECT amt::text FROM t ORDER BY amt by the
// number, where Postgres sorts by the text. DISTINCT ON reads its names
// alike; a position there is a constant to DuckDB, so such a DISTINCT ON
// goes to the origin. A name two outputs have (Postgres: ambiguous) is
// left, as is an ORDER BY after * (the positions are not known here) and
// one of a set operation (its outputs are the only names).
func sortsByOutputName(sels []*pg_query.SelectStmt) error {
	// output is the position of the output column other than the bare
	// column n that n names, or -1.
	output := func(sel *pg_query.SelectStmt, n *pg_query.Node) int {
		cr := n.GetColumnRef()
		if cr == nil || len(cr.Fields) != 1 || lastField(cr) == "" {
			return -1
		}
		pos, ambiguous := namedOutput(sel.TargetList, lastField(cr), noUnquote)
		if pos < 0 || ambiguous || sameExpr(sel.TargetList[pos].GetResTarget().Val, n) {
			return -1
		}
		for _, t := range sel.TargetList[:pos] {
			if isStarTarget(t.GetResTarget()) {
				return -1
			}
		}
		return pos
	}
	for _, sel := range sels {
		if isSetOp(sel) {
			continue
		}
		for _, d := range sel.DistinctClause {
			if output(sel, d) >= 0 {
				return refuse("DISTINCT ON " + exprText(d) + ", which Postgres reads as the output column of that name")
			}
		}
		for _, item := range sel.SortClause {
			if sb := item.GetSortBy(); sb != nil {
				if pos := output(sel, sb.Node); pos >= 0 {
					sb.Node = pg_query.MakeAConstIntNode(int64(pos+1), -1)
				}
			}
		}
	}
	return nil
}
