package catalog

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// This file reads the few pieces of SQL the config holds: the table named by
// from, and the shapes of refresh_sql and retention_sql. It checks shapes
// only; the planner and the refresh package parse the SQL for real.

const postgresPrefix = "postgres:"

// maxIdentLen is Postgres's NAMEDATALEN-1.
const maxIdentLen = 63

var errNoFrom = errors.New("is required")

// parseFrom splits "postgres:schema.table" (or "postgres:table", in schema
// public) into its schema and table. Unquoted identifiers are folded to lower
// case, quoted ones kept as written, as Postgres reads them.
func parseFrom(from string) (schema, table string, err error) {
	from = strings.TrimSpace(from)
	if from == "" {
		return "", "", errNoFrom
	}
	rest, ok := strings.CutPrefix(from, postgresPrefix)
	if !ok {
		connector, _, _ := strings.Cut(from, ":")
		return "", "", fmt.Errorf("connector %q is not supported: only postgres: is supported", connector)
	}
	parts, err := parseQualifiedName(rest)
	if err != nil {
		return "", "", err
	}
	switch len(parts) {
	case 1:
		return "public", parts[0], nil
	case 2:
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("%q has %d parts; name a table as schema.table", rest, len(parts))
}

// parseQualifiedName reads a dotted SQL name such as public.orders or
// "My Schema"."Orders", returning its normalized parts.
func parseQualifiedName(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	var parts []string
	for {
		part, rest, err := parseIdent(s)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
		if rest == "" {
			return parts, nil
		}
		if rest[0] != '.' {
			return nil, fmt.Errorf("unexpected %q after %q; name a table as schema.table", rest, part)
		}
		s = rest[1:]
	}
}

// parseIdent reads one identifier at the start of s.
func parseIdent(s string) (ident, rest string, err error) {
	if s == "" {
		return "", "", errors.New("a name is missing")
	}
	if s[0] == '"' {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] != '"' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '"' {
				b.WriteByte('"')
				i++
				continue
			}
			if b.Len() == 0 {
				return "", "", errors.New(`"" is not a name`)
			}
			return b.String(), s[i+1:], nil
		}
		return "", "", fmt.Errorf("quoted name %s has no closing \"", s)
	}
	end := 0
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		ok := r == '_' || unicode.IsLetter(r) || end > 0 && (r == '$' || unicode.IsDigit(r))
		if !ok {
			break
		}
		end += size
	}
	if end == 0 {
		return "", "", fmt.Errorf("%q is not a name; quote it as \"...\" if it is one", s)
	}
	return asciiLower(s[:end]), s[end:], nil
}

// asciiLower folds ASCII letters to lower case, as Postgres folds unquoted
// identifiers.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

var datasetNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validName reports whether name is usable as a dataset name: a plain SQL
// identifier.
func validName(name string) bool {
	return len(name) <= maxIdentLen && datasetNameRe.MatchString(name)
}

// deleteStmt is a retention_sql statement.
type deleteStmt struct {
	target []string
	where  string
}

var deleteRe = regexp.MustCompile(`(?is)^\s*DELETE\s+FROM\s+(.+?)\s+WHERE\s+(.+?)[\s;]*$`)

// parseRetentionSQL reads DELETE FROM <table> WHERE <predicate>.
func parseRetentionSQL(sql string) (deleteStmt, error) {
	m := deleteRe.FindStringSubmatch(sql)
	if m == nil {
		return deleteStmt{}, errors.New("must be a statement of the form DELETE FROM <table> WHERE <condition>")
	}
	target, err := parseQualifiedName(m[1])
	if err != nil {
		return deleteStmt{}, fmt.Errorf("does not name a table after DELETE FROM: %w", err)
	}
	return deleteStmt{target: target, where: strings.TrimSpace(m[2])}, nil
}

// selectStmt is a refresh_sql statement.
type selectStmt struct {
	columns []string // nil for *
	target  []string
	where   string
}

var selectRe = regexp.MustCompile(`(?is)^\s*SELECT\s+(.+?)\s+FROM\s+(.+?)(?:\s+WHERE\s+(.+?))?[\s;]*$`)

// parseRefreshSQL reads SELECT <columns> FROM <table> [WHERE <predicate>],
// where the columns are * or plain column names.
func parseRefreshSQL(sql string) (selectStmt, error) {
	m := selectRe.FindStringSubmatch(sql)
	if m == nil {
		return selectStmt{}, errors.New("must be a statement of the form SELECT <columns> FROM <table> WHERE <condition>")
	}
	target, err := parseQualifiedName(m[2])
	if err != nil {
		return selectStmt{}, fmt.Errorf("must read from one table, without joins or subqueries: %w", err)
	}
	stmt := selectStmt{target: target, where: strings.TrimSpace(m[3])}
	if err := checkRefreshShape(sql); err != nil {
		return selectStmt{}, err
	}
	if strings.TrimSpace(m[1]) == "*" {
		return stmt, nil
	}
	for col := range strings.SplitSeq(m[1], ",") {
		name, rest, err := parseIdent(strings.TrimSpace(col))
		if err != nil || strings.TrimSpace(rest) != "" {
			return selectStmt{}, fmt.Errorf("selects %q: only * or column names are supported, not expressions or aliases", strings.TrimSpace(col))
		}
		stmt.columns = append(stmt.columns, name)
	}
	return stmt, nil
}

// checkRefreshShape checks with Postgres' own parser what the pattern
// cannot see: one plain SELECT, and a filter that reads only the dataset
// (no subqueries).
func checkRefreshShape(sql string) error {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return fmt.Errorf("is not valid SQL: %v", err)
	}
	if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return errors.New("must be one SELECT statement")
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	switch {
	case sel.Op != pg_query.SetOperation_SETOP_NONE:
		return errors.New("must be one SELECT, without UNION, INTERSECT or EXCEPT")
	case sel.WithClause != nil:
		return errors.New("must not use WITH")
	case len(sel.DistinctClause) > 0, len(sel.GroupClause) > 0, sel.HavingClause != nil, len(sel.SortClause) > 0,
		sel.LimitCount != nil, sel.LimitOffset != nil, len(sel.LockingClause) > 0, sel.IntoClause != nil, len(sel.WindowClause) > 0:
		return errors.New("may only choose columns and filter rows: DISTINCT, GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET, FOR UPDATE, INTO and WINDOW are not supported")
	case len(sel.FromClause) != 1 || sel.FromClause[0].GetRangeVar() == nil:
		return errors.New("must read from one table, without joins or subqueries")
	}
	if sel.WhereClause != nil {
		js, err := pg_query.ParseToJSON(sql)
		if err == nil && strings.Contains(js, `"SubLink"`) {
			return errors.New("may filter only on this dataset's columns: subqueries (IN (SELECT ...), EXISTS, ANY/ALL) are not supported")
		}
	}
	return nil
}

// namesDataset reports whether a statement's target names dataset d: its
// name, its table, or schema.table.
func namesDataset(target []string, d *Dataset) bool {
	switch len(target) {
	case 1:
		return strings.EqualFold(target[0], d.Name) || target[0] == d.Table
	case 2:
		return target[0] == d.Schema && target[1] == d.Table
	}
	return false
}

// WithRefreshSQL returns a copy of d whose refresh_sql is sql, checked as
// the config file's would be ("" removes it).
func (d *Dataset) WithRefreshSQL(sql string) (*Dataset, error) {
	nd := *d
	nd.Acceleration.RefreshSQL = strings.TrimSpace(sql)
	if nd.Acceleration.RefreshSQL == "" {
		return &nd, nil
	}
	stmt, err := parseRefreshSQL(nd.Acceleration.RefreshSQL)
	if err != nil {
		return nil, fmt.Errorf("refresh_sql %s", err)
	}
	if !namesDataset(stmt.target, d) {
		return nil, fmt.Errorf("refresh_sql reads from %s, not from this dataset; write SELECT * FROM %s WHERE <condition>", strings.Join(stmt.target, "."), d.Name)
	}
	if d.Acceleration.RefreshMode == RefreshChanges && stmt.where != "" {
		return nil, errors.New("refresh_sql may choose columns but not filter rows with refresh_mode: changes")
	}
	return &nd, nil
}
