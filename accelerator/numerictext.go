package accelerator

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// A numeric column whose values a DECIMAL cannot hold (mixed display
// scales where none is declared, NaN, ±Infinity, more than 38 digits) is
// held as numeric_out's text (ColumnSpec.NumericText): printed as it is, it
// is the origin's text. The planner reads its values, where only they
// matter (comparisons, sorting, sums that print no scale, ...), as
//
//	CAST(pgaccel_numeric_held(column, s) AS DECIMAL(w, s))
//
// with s the column's ValueScale and w its ValueWidth (18 when the values
// fit it: DuckDB casts text to a DECIMAL(38) at about 3 µs a value, to a
// DECIMAL(18) about 150 times as fast), and its display scale as
// pgaccel_numeric_text_scale(column). Both are macros, which DuckDB
// inlines and runs vectorised:
//
//	pgaccel_numeric_held(VARCHAR, s) -> VARCHAR
//	pgaccel_numeric_text_scale(VARCHAR) -> INTEGER
//
// The first returns the text when it has at most s decimals and fails
// otherwise (a value a change brought after the load measured s): the
// cast to DECIMAL(38, s) would round it. The cast itself fails on NaN,
// the infinities and values with more than w - s integer digits. A
// failure sends the statement to the origin.
const ()

const numericHeldMacro = `CREATE OR REPLACE MACRO ` + pgdef.FuncNumericHeld + `(t, s) AS
  CASE WHEN strpos(t, '.') > 0 AND length(t) - strpos(t, '.') > s
  THEN error('numeric ' || t || ' has more than ' || s || ' decimals, the scale the acceleration reads it at')
  ELSE t END`

const numericTextScaleMacro = `CREATE OR REPLACE MACRO ` + pgdef.FuncNumericTextScale + `(t) AS
  CASE WHEN strpos(t, '.') = 0 THEN 0 ELSE length(t) - strpos(t, '.') END`

func registerNumericTextMacros(conn *sql.Conn) error {
	for name, m := range map[string]string{pgdef.FuncNumericHeld: numericHeldMacro, pgdef.FuncNumericTextScale: numericTextScaleMacro} {
		if _, err := conn.ExecContext(context.Background(), m); err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	return nil
}

// valueScales measures, in table (a quoted reference holding cols'
// accelerated columns), the ValueScale of each accelerated NumericText
// column, setting it in cols and infos (nil when a value is NaN or
// ±Infinity or the values need more than 38 digits).
func valueScales(ctx context.Context, conn *sql.Conn, table string, cols []ColumnSpec, infos []catalog.ColumnInfo) error {
	var which []int
	var sel []string
	for i, c := range cols {
		cols[i].ValueScale, infos[i].ValueScale = nil, nil
		cols[i].ValueWidth, infos[i].ValueWidth = 0, 0
		if t, ok := resolveType(c); !ok || t.kind != kindNumericText || !infos[i].Accelerated {
			continue
		}
		col := quoteIdent(c.Name)
		which = append(which, i)
		// The greatest scale, the most integer digits, and whether a
		// value is not a finite number.
		sel = append(sel,
			"coalesce(max("+pgdef.FuncNumericTextScale+"("+col+")), 0)",
			"coalesce(max(length(ltrim(split_part("+col+", '.', 1), '-'))), 0)",
			"coalesce(bool_or("+col+" IN ('NaN', 'Infinity', '-Infinity')), false)")
	}
	if len(which) == 0 {
		return nil
	}
	vals := make([]any, 3*len(which))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := conn.QueryRowContext(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+table).Scan(ptrs...); err != nil {
		return fmt.Errorf("measure the scales of numerics held as text: %w", err)
	}
	for j, i := range which {
		scale, intDigits := intValue(vals[3*j]), intValue(vals[3*j+1])
		special, _ := vals[3*j+2].(bool)
		if special || scale > maxDecimalWidth || scale+intDigits > maxDecimalWidth {
			continue
		}
		s, w := scale, maxDecimalWidth
		if scale+intDigits <= 18 {
			w = 18
		}
		cols[i].ValueScale, cols[i].ValueWidth = &s, w
		infos[i].ValueScale, infos[i].ValueWidth = &s, w
	}
	return nil
}

// intValue reads an integer DuckDB returned as any of Go's integer types.
func intValue(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case int32:
		return int(n)
	case int:
		return n
	}
	return 0
}

// mergeValueScale widens the value scale measured on the rows a merge adds
// (col, info) to cover the stored rows' (current): the greatest scale at
// the widest width, or none when either has none.
func mergeValueScale(col *ColumnSpec, info *catalog.ColumnInfo, current catalog.ColumnInfo) {
	if col.ValueScale == nil || !current.NumericText {
		return
	}
	if current.ValueScale == nil {
		col.ValueScale, info.ValueScale, col.ValueWidth, info.ValueWidth = nil, nil, 0, 0
		return
	}
	s, w := max(*col.ValueScale, *current.ValueScale), max(col.ValueWidth, current.ValueWidth)
	col.ValueScale, info.ValueScale, col.ValueWidth, info.ValueWidth = &s, &s, w, w
}
