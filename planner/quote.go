package planner

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// duckdbKeywords are DuckDB's keywords that are not "unreserved" there
// (SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category <>
// 'unreserved', DuckDB 1.5). Postgres' deparser leaves many of them
// unquoted (e.g. a column named "at"), which DuckDB cannot parse.
var duckdbKeywords = map[string]bool{
	"all": true, "analyse": true, "analyze": true, "and": true, "anti": true, "any": true, "array": true,
	"as": true, "asc": true, "asof": true, "asymmetric": true, "at": true, "authorization": true,
	"between": true, "bigint": true, "binary": true, "bit": true, "boolean": true, "both": true, "by": true,
	"case": true, "cast": true, "char": true, "character": true, "check": true, "coalesce": true,
	"collate": true, "collation": true, "column": true, "columns": true, "concurrently": true,
	"constraint": true, "create": true, "cross": true, "dec": true, "decimal": true, "default": true,
	"deferrable": true, "desc": true, "describe": true, "distinct": true, "do": true, "else": true, "end": true,
	"except": true, "exists": true, "extract": true, "false": true, "fetch": true, "float": true, "for": true,
	"foreign": true, "freeze": true, "from": true, "full": true, "generated": true, "glob": true, "group": true,
	"grouping": true, "grouping_id": true, "having": true, "ilike": true, "in": true, "initially": true,
	"inner": true, "inout": true, "int": true, "integer": true, "intersect": true, "interval": true,
	"into": true, "is": true, "isnull": true, "join": true, "lambda": true, "lateral": true, "leading": true,
	"left": true, "like": true, "limit": true, "map": true, "national": true, "natural": true, "nchar": true,
	"none": true, "not": true, "notnull": true, "null": true, "nullif": true, "numeric": true, "offset": true,
	"on": true, "only": true, "or": true, "order": true, "out": true, "outer": true, "overlaps": true,
	"overlay": true, "pivot": true, "pivot_longer": true, "pivot_wider": true, "placing": true,
	"position": true, "positional": true, "precision": true, "primary": true, "qualify": true, "real": true,
	"references": true, "returning": true, "right": true, "row": true, "select": true, "semi": true,
	"setof": true, "show": true, "similar": true, "smallint": true, "some": true, "struct": true,
	"substring": true, "summarize": true, "symmetric": true, "table": true, "tablesample": true, "then": true,
	"time": true, "timestamp": true, "to": true, "trailing": true, "treat": true, "trim": true, "true": true,
	"try_cast": true, "union": true, "unique": true, "unpack": true, "unpivot": true, "using": true,
	"values": true, "varchar": true, "variadic": true, "verbose": true, "when": true, "where": true,
	"window": true, "with": true, "xmlattributes": true, "xmlconcat": true, "xmlelement": true,
	"xmlexists": true, "xmlforest": true, "xmlnamespaces": true, "xmlparse": true, "xmlpi": true,
	"xmlroot": true, "xmlserialize": true, "xmltable": true,
}

// quoteMarker starts the placeholder names that stand for identifiers
// which must be quoted for DuckDB; deparse output is then patched.
const quoteMarker = "pgaccel_qi_"

// identQuoter swaps identifiers that are DuckDB keywords for placeholders
// before deparsing, and the placeholders for quoted identifiers after.
type identQuoter struct {
	names []string
}

// protect replaces *s by a placeholder when it is a DuckDB keyword.
func (q *identQuoter) protect(s *string) {
	if !duckdbKeywords[*s] {
		return
	}
	q.names = append(q.names, *s)
	*s = quoteMarker + strconv.Itoa(len(q.names)-1) + "_"
}

// protectNode protects a String node.
func (q *identQuoter) protectNode(n *pg_query.Node) {
	if s, ok := n.GetNode().(*pg_query.Node_String_); ok {
		q.protect(&s.String_.Sval)
	}
}

// restore puts the quoted identifiers back into deparsed SQL. The
// placeholders are replaced from the highest number down so that
// pgaccel_qi_1_ never matches inside pgaccel_qi_11_.
func (q *identQuoter) restore(sql string) string {
	for i := len(q.names) - 1; i >= 0; i-- {
		quoted := `"` + strings.ReplaceAll(q.names[i], `"`, `""`) + `"`
		sql = strings.ReplaceAll(sql, quoteMarker+strconv.Itoa(i)+"_", quoted)
	}
	return sql
}
