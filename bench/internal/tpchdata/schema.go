package tpchdata

import (
	"context"
	"fmt"
	"strings"

	"github.com/pgaccel/pgaccel/integration/corpora"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// Table is one TPC-H table: its Postgres DDL and primary key.
type Table struct {
	Name    string
	Columns []string // "name type", in COPY order
	PKey    []string
}

// Tables are the eight TPC-H tables (corpora.TPCHTableDefs).
var Tables = func() []Table {
	var out []Table
	for _, t := range corpora.TPCHTableDefs {
		out = append(out, Table{t.Name, t.Columns, t.PKey})
	}
	return out
}()

// secondaryIndexes are the only indexes besides the primary keys. Postgres
// does not decorrelate the scalar subqueries of Q17 and Q20: without an
// index on lineitem's part key each of their outer rows scans lineitem,
// which takes hours at scale factor 1. TPC-H allows indexes on foreign keys.
var secondaryIndexes = []string{
	"CREATE INDEX lineitem_part_supp ON lineitem (l_partkey, l_suppkey)",
}

// createTables drops and creates the TPC-H tables, without keys (they are
// added after the load, which is faster).
func createTables(ctx context.Context, origin *pgtest.Server) error {
	var b strings.Builder
	for _, t := range Tables {
		fmt.Fprintf(&b, "DROP TABLE IF EXISTS %s;\nCREATE TABLE %s (\n  %s\n);\n", t.Name, t.Name, strings.Join(t.Columns, ",\n  "))
	}
	if err := origin.Exec(ctx, b.String()); err != nil {
		return fmt.Errorf("create TPC-H tables: %w", err)
	}
	return nil
}

// finishTables adds the primary keys and secondary indexes, vacuums and
// analyzes every table and grants SELECT on them to the client role.
func finishTables(ctx context.Context, origin *pgtest.Server) error {
	for _, t := range Tables {
		sql := fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)", t.Name, strings.Join(t.PKey, ", "))
		if err := origin.Exec(ctx, sql); err != nil {
			return fmt.Errorf("primary key of %s: %w", t.Name, err)
		}
	}
	for _, sql := range secondaryIndexes {
		if err := origin.Exec(ctx, sql); err != nil {
			return fmt.Errorf("secondary index: %w", err)
		}
	}
	var names []string
	for _, t := range Tables {
		names = append(names, t.Name)
	}
	list := strings.Join(names, ", ")
	// VACUUM as well: it sets the hint bits and the visibility map, which
	// the first reads would otherwise pay for.
	if err := origin.Exec(ctx, "VACUUM (ANALYZE) "+list); err != nil {
		return fmt.Errorf("vacuum analyze: %w", err)
	}
	if err := origin.Exec(ctx, fmt.Sprintf("GRANT SELECT ON %s TO %s", list, pgtest.AppUser)); err != nil {
		return fmt.Errorf("grant SELECT to %s: %w", pgtest.AppUser, err)
	}
	return nil
}

// ColumnNames are a table's column names in COPY order.
func (t Table) ColumnNames() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i], _, _ = strings.Cut(c, " ")
	}
	return out
}
