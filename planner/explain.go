package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// ExplainTarget reports whether sql is one EXPLAIN the acceleration can
// answer with DuckDB's plan: EXPLAIN or EXPLAIN ANALYZE (also written
// EXPLAIN (ANALYZE), with ANALYZE true or false) of a statement, with no
// other option (VERBOSE, COSTS, BUFFERS, FORMAT, ... ask for what only
// Postgres's planner says). It returns the explained statement's text,
// deparsed, and whether ANALYZE was asked. Any other text, or an EXPLAIN
// of a statement with parameters, is not one.
func ExplainTarget(sql string) (inner string, analyze, ok bool) {
	trimmed := strings.TrimLeft(sql, " \t\r\n(")
	if len(trimmed) < 7 || !strings.EqualFold(trimmed[:7], "explain") {
		return "", false, false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false, false
	}
	e := tree.Stmts[0].Stmt.GetExplainStmt()
	if e == nil || e.Query == nil {
		return "", false, false
	}
	for _, o := range e.Options {
		d := o.GetDefElem()
		if d == nil || d.Defname != "analyze" {
			return "", false, false
		}
		switch {
		case d.Arg == nil:
			analyze = true
		case d.Arg.GetBoolean() != nil:
			analyze = d.Arg.GetBoolean().Boolval
		case d.Arg.GetString_() != nil:
			switch strings.ToLower(d.Arg.GetString_().Sval) {
			case "true", "on", "yes", "1":
				analyze = true
			case "false", "off", "no", "0":
			default:
				return "", false, false
			}
		default:
			return "", false, false
		}
	}
	if e.Query.GetSelectStmt() == nil {
		return "", false, false // only a read can be accelerated
	}
	out, err := pg_query.Deparse(&pg_query.ParseResult{Version: tree.Version, Stmts: []*pg_query.RawStmt{{Stmt: e.Query}}})
	if err != nil || strings.Contains(out, "$") {
		// Parameters (or a $ anywhere, conservatively): Postgres plans
		// those generically; the origin explains it.
		return "", false, false
	}
	return out, analyze, true
}
