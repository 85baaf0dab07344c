package planner

import (
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// DuckDB compares and sorts strings by their bytes. So does Postgres under
// the C and POSIX collations, but not under a linguistic one (en_US,
// ICU...): a statement that orders or compares text of a column whose
// origin collation is not bytewise goes to the origin. Equality (=, <>,
// GROUP BY, DISTINCT, joins) is bytewise for every deterministic collation
// and is not affected.
//
// Case mapping (upper, lower, initcap, ILIKE) follows the origin's
// LC_CTYPE, which DuckDB does not share (under C, Postgres maps ASCII
// only; DuckDB maps all of Unicode). upper, lower and ILIKE of text built
// from columns whose LC_CTYPE is C or POSIX (ColumnInfo.ASCIICase) are
// rewritten to map ASCII letters only (translate(x, 'A..Z', 'a..z'));
// other case mappings, and initcap, go to the origin.

// caseFrom and caseTo are the ASCII letters upper and lower map.
const (
	asciiUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	asciiLower = "abcdefghijklmnopqrstuvwxyz"
)

// noteCaseMapped records the columns of text whose case is mapped; text
// built from no column follows the database's default LC_CTYPE, which is
// not known here.
func (z *analyzer) noteCaseMapped(args ...*pg_query.Node) {
	u := &caseUse{}
	for _, a := range args {
		walk(a, u)
	}
	if len(u.cols) == 0 || u.other {
		z.flag(flagUnsupported)
		return
	}
	if z.a.caseCols == nil {
		z.a.caseCols = map[string]struct{}{}
	}
	for _, c := range u.cols {
		z.a.caseCols[c] = struct{}{}
	}
}

// caseUse collects the column names inside case-mapped text.
type caseUse struct {
	cols  []string
	other bool // a column reference without a name (a *)
}

func (u *caseUse) enter(m proto.Message, w *walker) {
	if cr, ok := m.(*pg_query.ColumnRef); ok {
		if name := lastField(cr); name != "" {
			u.cols = append(u.cols, name)
		} else {
			u.other = true
		}
	}
}

// caseRule: case-mapped text is ASCII-mapped at the origin: columns under
// the C or POSIX LC_CTYPE, or integers and uuids, whose text has no letter
// a locale maps otherwise.
var caseRule = nameRule{
	col: func(c catalog.ColumnInfo) bool {
		switch c.TypeOID {
		case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDUUID:
			return true
		}
		return c.ASCIICase || c.CaseLocale != ""
	},
	expr: func(*pg_query.Node) bool { return false },
}

// caseMode is how the statement's case mappings are rewritten: "" ASCII
// letters only (every case-mapped column's LC_CTYPE is C or POSIX), or
// the libc locale every case-mapped column's LC_CTYPE is and the
// acceleration reproduces (accelerator.MapCase). ok is false when the
// columns' LC_CTYPEs differ.
func (a *analysis) caseMode(r resolution) (locale string, ok bool) {
	modes := map[string]bool{}
	var visit func(name string, depth int)
	visit = func(name string, depth int) {
		if depth > maxAliasDepth {
			modes["?"] = true
			return
		}
		found := false
		for _, d := range r.datasets {
			for _, c := range d.state.Columns {
				if c.Name != name {
					continue
				}
				found = true
				switch {
				case !collatable(c.TypeOID):
				case c.ASCIICase:
					modes[""] = true
				case c.CaseLocale != "":
					modes[c.CaseLocale] = true
				default:
					modes["?"] = true
				}
			}
		}
		for _, def := range a.aliasDefs[name] {
			u := &caseUse{}
			walk(def, u)
			for _, n := range u.cols {
				if n != name || !found {
					visit(n, depth+1)
				}
			}
		}
	}
	for name := range a.caseCols {
		visit(name, 0)
	}
	if modes["?"] || len(modes) > 1 {
		return "", len(modes) == 0
	}
	for m := range modes {
		return m, true
	}
	return "", true
}

// asciiCase maps the case of n's ASCII letters only: upper or lower.
func asciiCase(n *pg_query.Node, upper bool) *pg_query.Node {
	from, to := asciiUpper, asciiLower
	if upper {
		from, to = to, from
	}
	return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("translate")},
		[]*pg_query.Node{n, pg_query.MakeAConstStrNode(from, -1), pg_query.MakeAConstStrNode(to, -1)}, -1)
}

// rewriteCase rewrites upper(x) and lower(x) to asciiCase, and initcap(x)
// to the accelerator's ASCII initcap; under a libc locale (caseMode) to
// the accelerator's mappings in it.
func rewriteCase(fc *pg_query.FuncCall, locale string) {
	name := funcName(fc)
	if locale != "" {
		if (name == "upper" || name == "lower" || name == "initcap") && len(fc.Args) == 1 && fc.Over == nil {
			fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("pgaccel_" + name)}
			fc.Args = append(fc.Args, pg_query.MakeAConstStrNode(locale, -1))
		}
		return
	}
	if name == "initcap" && len(fc.Args) == 1 {
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncInitcapASCII)}
		return
	}
	if (name != "upper" && name != "lower") || len(fc.Args) != 1 || fc.Over != nil {
		return
	}
	fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("translate")}
	from, to := asciiUpper, asciiLower
	if name == "upper" {
		from, to = to, from
	}
	fc.Args = append(fc.Args, pg_query.MakeAConstStrNode(from, -1), pg_query.MakeAConstStrNode(to, -1))
}

// rewriteILike turns x ILIKE p into lower(x) LIKE lower(p), both lowered
// by asciiCase (the pattern's escapes are no letters' business).
func rewriteILike(e *pg_query.A_Expr, locale string) {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_ILIKE {
		return
	}
	lower := func(n *pg_query.Node) *pg_query.Node { return asciiCase(n, false) }
	if locale != "" {
		lower = func(n *pg_query.Node) *pg_query.Node {
			return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncLower)},
				[]*pg_query.Node{n, pg_query.MakeAConstStrNode(locale, -1)}, -1)
		}
	}
	op := "~~"
	if names, _ := stringsOf(e.Name); len(names) > 0 && names[len(names)-1] == "!~~*" {
		op = "!~~"
	}
	e.Kind = pg_query.A_Expr_Kind_AEXPR_LIKE
	e.Name = []*pg_query.Node{pg_query.MakeStrNode(op)}
	e.Lexpr = lower(e.Lexpr)
	if fc := e.Rexpr.GetFuncCall(); fc != nil && funcName(fc) == "like_escape" && len(fc.Args) == 2 {
		fc.Args[0] = lower(fc.Args[0])
		return
	}
	e.Rexpr = lower(e.Rexpr)
}

// orderingOps are the operators whose result depends on the collation.
var orderingOps = map[string]bool{"<": true, ">": true, "<=": true, ">=": true}

// orderingFuncs are functions whose result depends on the collation.
var orderingFuncs = map[string]bool{"min": true, "max": true, "greatest": true, "least": true}

// noteOrdering records that the statement orders or range-compares values
// (the column rule of hazards.go: a collation the acceleration does not
// reproduce; collorder.go keys or refuses each ordering of the others),
// and the columns whose case it maps.
func (z *analyzer) noteOrdering(m any) {
	switch n := m.(type) {
	case *pg_query.SortBy, *pg_query.MinMaxExpr:
		z.a.ordering = true
	case *pg_query.A_Expr:
		switch n.Kind {
		case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
			pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
			z.a.ordering = true
		case pg_query.A_Expr_Kind_AEXPR_OP, pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
			if len(n.Name) == 1 {
				if s, ok := n.Name[0].GetNode().(*pg_query.Node_String_); ok && orderingOps[s.String_.Sval] {
					z.a.ordering = true
				}
			}
		case pg_query.A_Expr_Kind_AEXPR_ILIKE:
			z.noteCaseMapped(n.Lexpr, n.Rexpr)
		}
	case *pg_query.FuncCall:
		switch funcName(n) {
		case "upper", "lower", "initcap":
			if len(n.Args) == 1 {
				z.noteCaseMapped(n.Args...)
			} else {
				z.flag(flagUnsupported)
			}
		}
		if orderingFuncs[funcName(n)] {
			z.a.ordering = true
		}
	}
}

// collatable reports whether values of the type compare by a collation.
func collatable(oid uint32) bool {
	switch oid {
	case pgdef.OIDText, pgdef.OIDVarchar, pgdef.OIDBpchar, pgdef.OIDName, pgdef.OIDTextArray, pgdef.OIDVarcharArray, pgdef.OIDBpcharArray, pgdef.OIDNameArray: // text, varchar, bpchar, name and their arrays
		return true
	}
	return false
}

// caseNoteOf is why the acceleration does not map the case of the
// datasets' column name, when refresh said.
func caseNoteOf(r resolution, name string) string {
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if c.Name == name && c.CaseNote != "" {
				return ": " + c.CaseNote
			}
		}
	}
	return ""
}
