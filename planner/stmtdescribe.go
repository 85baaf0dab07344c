package planner

import (
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// StatementDescription is what statement statistics keep of a text:
// never a value.
type StatementDescription struct {
	// Text is the statement normalised by pg_query: each constant as $n.
	// A text pg_query cannot parse is kept as its first word and "…".
	Text string
	// Tables are the relations the statement reads (not its CTEs), as
	// the planner's analysis finds them (analyze): schema.name when
	// qualified. A write's target is not among them.
	Tables []string
	// Read: a SELECT (VALUES, TABLE) that writes nothing and locks no
	// row.
	Read bool
}

// DescribeStatement describes sql for the statement statistics. It parses
// the text, so it runs off the statement's path (stmtstats' describer).
func DescribeStatement(sql string) StatementDescription {
	norm, err := pg_query.Normalize(sql)
	if err != nil {
		return StatementDescription{Text: strings.ToUpper(LeadingWord(sql)) + " …"}
	}
	d := StatementDescription{Text: strings.TrimSpace(norm)}
	a, _ := analyze(sql)
	d.Read = a.kind == KindSelect && !a.writes
	seen := map[string]bool{}
	for _, r := range a.rels {
		name := r.name
		if r.schema != "" {
			name = r.schema + "." + name
		}
		if !seen[name] {
			seen[name] = true
			d.Tables = append(d.Tables, name)
		}
	}
	sort.Strings(d.Tables)
	return d
}
