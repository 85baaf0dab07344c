package accelerator

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pgaccel/pgaccel/pgdef"
)

// Postgres's array operators where DuckDB's namesakes differ:
//
//	pgaccel_array_contains(a, b) -> BOOLEAN: a @> b (and b <@ a) as
//	  Postgres's arraycontains computes it: every element of b is an
//	  element of a, and a NULL element of b matches nothing (DuckDB's
//	  list containment ignores it); NULL when a or b is. A macro: DuckDB
//	  inlines it.

// arrayContainsMacro defines pgdef.FuncArrayContains: DuckDB's @> is right
// once b holds no NULL (list_count counts the elements that are not).
const arrayContainsMacro = `CREATE OR REPLACE MACRO ` + pgdef.FuncArrayContains + `(a, b) AS
  (a @> b) AND (list_count(b) = len(b) OR a IS NULL)`

func registerArrayFunctions(conn *sql.Conn) error {
	if _, err := conn.ExecContext(context.Background(), arrayContainsMacro); err != nil {
		return fmt.Errorf("register %s: %w", pgdef.FuncArrayContains, err)
	}
	return nil
}
