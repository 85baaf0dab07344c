package refresh

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
)

// This file turns time_column, time_format and time_partition_column into
// SQL: the filters of refresh_data_window and append refreshes (Postgres,
// at the origin) and the matching predicates over the acceleration
// (DuckDB).

// timeFormat is how a time column's values are read.
type timeFormat string

// timeFormatOf returns the format of column col: the configured one, or
// the one its type implies (see catalog.TimeFormatFor).
func timeFormatOf(col, configured string, all []accelerator.ColumnSpec) (timeFormat, error) {
	for _, c := range all {
		if c.Name != col {
			continue
		}
		f, err := catalog.TimeFormatFor(configured, c.TypeOID, c.TypeName)
		if err != nil {
			return "", fmt.Errorf("time_column %q %w: %w", col, err, errConfig)
		}
		return timeFormat(f), nil
	}
	return "", fmt.Errorf("time_column %q is not a column of the table: %w", col, errMissingColumn)
}

// originAfter is the Postgres predicate "column col is after e", where e
// is a timestamptz expression.
func (f timeFormat) originAfter(col, e string) string {
	return catalog.TimeAfter(string(f), col, e)
}

// numeric reports whether the format's values are numbers.
func (f timeFormat) numeric() bool {
	return f == catalog.TimeFormatUnixSeconds || f == catalog.TimeFormatUnixMillis
}

// duckValue is the DuckDB expression of column col as a point in time
// (numbers for the Unix formats).
func (f timeFormat) duckValue(col string) string {
	if f == catalog.TimeFormatISO8601 {
		return "TRY_CAST(" + col + " AS TIMESTAMPTZ)"
	}
	return col
}

// originValue is the Postgres expression of column col as a point in time.
func (f timeFormat) originValue(col string) string {
	if f == catalog.TimeFormatISO8601 {
		return col + "::timestamptz"
	}
	return col
}

// literals returns t as a Postgres and a DuckDB literal of the format's
// type.
func (f timeFormat) literals(t time.Time) (pg, duck string) {
	t = t.UTC()
	switch f {
	case catalog.TimeFormatDate:
		s := pgDateText(t)
		return "'" + s + "'::date", "DATE '" + s + "'"
	case catalog.TimeFormatTimestamp:
		s := timestampText(t)
		return "'" + s + "'::timestamp", "TIMESTAMP '" + s + "'"
	case catalog.TimeFormatUnixSeconds:
		s := strconv.FormatInt(t.Unix(), 10)
		return s, s
	case catalog.TimeFormatUnixMillis:
		s := strconv.FormatInt(t.UnixMilli(), 10)
		return s, s
	}
	s := timestampText(t) + "+00"
	return "'" + s + "'::timestamptz", "TIMESTAMPTZ '" + s + "'"
}

// pgDateText formats t's date as Postgres and DuckDB read it (years before 1
// with BC).
func pgDateText(t time.Time) string {
	y := t.Year()
	if y <= 0 {
		return fmt.Sprintf("%04d-%02d-%02d BC", 1-y, t.Month(), t.Day())
	}
	return t.Format("2006-01-02")
}

// timestampText formats t as a timestamp without time zone.
func timestampText(t time.Time) string {
	s := t.Format("15:04:05.999999")
	y := t.Year()
	if y <= 0 {
		return fmt.Sprintf("%04d-%02d-%02d %s BC", 1-y, t.Month(), t.Day(), s)
	}
	return t.Format("2006-01-02") + " " + s
}

// appendPlan is what an append refresh adds to its COPY and its merge.
type appendPlan struct {
	origin  []string // Postgres predicates: rows past the bound (and their partitions)
	overlap string   // DuckDB predicate: stored rows past the same bound
}

// appendBounds plans an append refresh of ds reading cols: rows whose
// time_column is past max(time_column) in the acceleration less
// refresh_append_overlap (for a date column, on or after the start of that
// day). With time_partition_column, the partition column must also be at
// least that of the newest stored row not past the bound, a bound that
// holds whatever the partitions' granularity. With nothing stored, or
// stored columns unlike cols (the next load replaces the table), there is no
// bound.
func appendBounds(ctx context.Context, eng *accelerator.Engine, ds *catalog.Dataset, all, cols []accelerator.ColumnSpec) (appendPlan, error) {
	tf, err := timeFormatOf(ds.TimeColumn, ds.TimeFormat, all)
	if err != nil {
		return appendPlan{}, err
	}
	var tcSpec accelerator.ColumnSpec
	selected := false
	for _, c := range cols {
		if c.Name == ds.TimeColumn {
			tcSpec, selected = c, true
		}
	}
	if !selected {
		return appendPlan{}, fmt.Errorf("refresh_sql must select time_column %q for refresh_mode: append: %w", ds.TimeColumn, errConfig)
	}
	if _, ok := accelerator.DuckDBType(tcSpec); !ok {
		return appendPlan{}, fmt.Errorf("time_column %q has type %s, which the acceleration cannot hold, so append cannot find new rows: %w",
			ds.TimeColumn, tcSpec.TypeName, errConfig)
	}
	info, err := eng.Stored(ctx, ds.Name)
	if err != nil || info == nil || !accelerator.SpecsMergeable(info.Specs, cols) {
		return appendPlan{}, err
	}
	table := eng.TableRef(ds.Name)
	tcPG, tcDuck := quoteIdent(ds.TimeColumn), quoteIdent(ds.TimeColumn)
	var (
		plan      appendPlan
		notPast   string // DuckDB: stored rows not past the bound
		originOp  = " > "
		duckOp    = " > "
		duckNotOp = " <= "
	)
	if tf.numeric() {
		v, err := firstValue(ctx, eng, "SELECT CAST(max("+tcDuck+") AS VARCHAR) FROM "+table)
		if err != nil {
			return appendPlan{}, fmt.Errorf("read max(time_column): %w", err)
		}
		maxText, ok := v.(string)
		if !ok {
			return appendPlan{}, nil // nothing stored
		}
		overlap := ds.Acceleration.RefreshAppendOverlap
		var back int64
		if tf == catalog.TimeFormatUnixMillis {
			back = int64(math.Ceil(float64(overlap) / float64(time.Millisecond)))
		} else {
			back = int64(math.Ceil(overlap.Seconds()))
		}
		bound := "(" + maxText + " - " + strconv.FormatInt(back, 10) + ")"
		plan.origin = append(plan.origin, tcPG+" > "+bound)
		plan.overlap = tcDuck + " > " + bound
		notPast = tcDuck + " <= " + bound
	} else {
		v, err := firstValue(ctx, eng, "SELECT max("+tf.duckValue(tcDuck)+") FROM "+table)
		if err != nil {
			return appendPlan{}, fmt.Errorf("read max(time_column): %w", err)
		}
		maxTime, ok := v.(time.Time)
		if !ok {
			return appendPlan{}, nil // nothing stored
		}
		bound := maxTime.UTC().Add(-ds.Acceleration.RefreshAppendOverlap)
		if tf == catalog.TimeFormatDate {
			bound = time.Date(bound.Year(), bound.Month(), bound.Day(), 0, 0, 0, 0, time.UTC)
			originOp, duckOp, duckNotOp = " >= ", " >= ", " < "
		}
		pgLit, duckLit := tf.literals(bound)
		plan.origin = append(plan.origin, tf.originValue(tcPG)+originOp+pgLit)
		plan.overlap = tf.duckValue(tcDuck) + duckOp + duckLit
		notPast = tf.duckValue(tcDuck) + duckNotOp + duckLit
	}

	if pc := ds.TimePartitionColumn; pc != "" {
		pred, err := partitionBound(ctx, eng, table, pc, cols, notPast, "ORDER BY "+tf.duckValue(tcDuck)+" DESC")
		if err != nil {
			return appendPlan{}, err
		}
		if pred != "" {
			plan.origin = append(plan.origin, pred)
		}
	}
	return plan, nil
}

// partitionBound is the Postgres predicate "pc >= the partition of the
// newest stored row not past the bound" ("" when there is none, or pc is
// not an accelerated column of cols).
func partitionBound(ctx context.Context, eng *accelerator.Engine, table, pc string, cols []accelerator.ColumnSpec, notPast, order string) (string, error) {
	i := slices.IndexFunc(cols, func(c accelerator.ColumnSpec) bool { return c.Name == pc })
	if i < 0 {
		return "", nil
	}
	if _, ok := accelerator.DuckDBType(cols[i]); !ok {
		return "", nil
	}
	v, err := firstValue(ctx, eng, "SELECT CAST("+quoteIdent(pc)+" AS VARCHAR) FROM "+table+" WHERE "+notPast+
		" AND "+quoteIdent(pc)+" IS NOT NULL "+order+" LIMIT 1")
	if err != nil {
		return "", fmt.Errorf("read the partition bound: %w", err)
	}
	s, ok := v.(string)
	if !ok {
		return "", nil
	}
	return quoteIdent(pc) + " >= " + quoteLiteral(s) + "::" + cols[i].TypeName, nil
}

// firstValue runs query on the engine and returns the first column of its
// first row (nil without rows).
func firstValue(ctx context.Context, eng *accelerator.Engine, query string) (any, error) {
	rows, err := eng.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	v := rows.Values()[0]
	return v, rows.Err()
}

// quoteLiteral quotes a Postgres string literal.
func quoteLiteral(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
