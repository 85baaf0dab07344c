package planner

import (
	"encoding/json"
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
	// Tables are the relations it names (not its CTEs), as written:
	// schema.name when qualified, lower case unless quoted.
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
	js, err := pg_query.ParseToJSON(sql)
	if err != nil {
		return d
	}
	var tree struct {
		Stmts []struct {
			Stmt map[string]any `json:"stmt"`
		} `json:"stmts"`
	}
	if json.Unmarshal([]byte(js), &tree) != nil || len(tree.Stmts) == 0 {
		return d
	}
	ctes := map[string]bool{}
	var rels []string
	writes := false
	var walk func(v any)
	walk = func(v any) {
		switch n := v.(type) {
		case map[string]any:
			// A RangeVar: wrapped as a node, or a statement's relation.
			if name, ok := n["relname"].(string); ok && name != "" {
				if s, ok := n["schemaname"].(string); ok && s != "" {
					name = s + "." + name
				}
				rels = append(rels, name)
			}
			for k, c := range n {
				switch k {
				case "InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt", "lockingClause", "intoClause":
					writes = true
				case "CommonTableExpr":
					if m, ok := c.(map[string]any); ok {
						if name, ok := m["ctename"].(string); ok {
							ctes[name] = true
						}
					}
				}
				walk(c)
			}
		case []any:
			for _, c := range n {
				walk(c)
			}
		}
	}
	for _, s := range tree.Stmts {
		walk(s.Stmt)
	}
	_, sel := tree.Stmts[0].Stmt["SelectStmt"]
	d.Read = sel && len(tree.Stmts) == 1 && !writes
	seen := map[string]bool{}
	for _, r := range rels {
		if (!strings.Contains(r, ".") && ctes[r]) || seen[r] {
			continue
		}
		seen[r] = true
		d.Tables = append(d.Tables, r)
	}
	sort.Strings(d.Tables)
	return d
}
