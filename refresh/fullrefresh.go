package refresh

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
)

// fullRefresh replaces a dataset's acceleration with the origin's current
// rows: it reads the table's columns, then streams
//
//	COPY (SELECT <columns> FROM "schema"."table" WHERE <refresh_sql's WHERE> AND <data window>) TO STDOUT (FORMAT binary)
//
// into Engine.Load. The columns are refresh_sql's (all of them for *); those
// whose type cannot be accelerated are sent as NULLs, so that the stream
// still has every selected column and the acceleration records them as not
// accelerated. On failure the previous acceleration keeps serving.
func fullRefresh(ctx context.Context, eng *accelerator.Engine, dsn string, ds *catalog.Dataset) (accelerator.LoadStats, error) {
	conn, err := connectOrigin(ctx, dsn)
	if err != nil {
		return accelerator.LoadStats{}, err
	}
	closeConn := func() { conn.Close(context.Background()) }
	defer func() {
		if closeConn != nil {
			closeConn()
		}
	}()
	all, err := originColumns(ctx, conn, ds.Schema, ds.Table)
	if err != nil {
		return accelerator.LoadStats{}, err
	}
	cols, query, err := copyQuery(ds, all)
	if err != nil {
		return accelerator.LoadStats{}, err
	}
	closeConn = nil // startCopy takes the connection over
	stream, err := startCopy(ctx, conn, query)
	if err != nil {
		return accelerator.LoadStats{}, err
	}
	defer stream.Close()
	return eng.Load(ctx, ds, cols, stream)
}

// copyQuery returns the columns a full refresh of ds reads, in order, and
// its COPY statement.
func copyQuery(ds *catalog.Dataset, all []accelerator.ColumnSpec) ([]accelerator.ColumnSpec, string, error) {
	cols := all
	var where []string
	if ds.Acceleration.RefreshSQL != "" {
		names, pred, ok := ds.RefreshSelect()
		if !ok {
			return nil, "", fmt.Errorf("acceleration.refresh_sql is not of the form SELECT <columns> FROM <table> [WHERE <condition>]")
		}
		if names != nil {
			byName := make(map[string]accelerator.ColumnSpec, len(all))
			for _, c := range all {
				byName[c.Name] = c
			}
			cols = make([]accelerator.ColumnSpec, 0, len(names))
			for _, n := range names {
				c, ok := byName[n]
				if !ok {
					return nil, "", fmt.Errorf("acceleration.refresh_sql selects column %q, which %s.%s does not have", n, ds.Schema, ds.Table)
				}
				cols = append(cols, c)
			}
		}
		if pred != "" {
			where = append(where, "("+pred+")")
		}
	}
	if w := ds.Acceleration.RefreshDataWindow; w > 0 {
		pred, err := windowPredicate(ds, w)
		if err != nil {
			return nil, "", err
		}
		where = append(where, pred)
	}

	sel := make([]string, len(cols))
	for i, c := range cols {
		if _, ok := accelerator.DuckDBType(c); ok {
			sel[i] = quoteIdent(c.Name)
		} else {
			sel[i] = "NULL"
		}
	}
	q := "COPY (SELECT " + strings.Join(sel, ", ") + " FROM " + ds.QualifiedTable()
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return cols, q + ") TO STDOUT (FORMAT binary)", nil
}

// windowPredicate is refresh_data_window's filter: time_column newer than
// now() minus the window, in the column's time_format.
func windowPredicate(ds *catalog.Dataset, w time.Duration) (string, error) {
	if ds.TimeColumn == "" {
		return "", fmt.Errorf("acceleration.refresh_data_window needs time_column")
	}
	col := quoteIdent(ds.TimeColumn)
	since := "(now() - interval '" + strconv.FormatInt(w.Microseconds(), 10) + " microseconds')"
	switch ds.TimeFormat {
	case "", catalog.TimeFormatTimestamp, catalog.TimeFormatTimestamptz, catalog.TimeFormatDate:
		return col + " > " + since, nil
	case catalog.TimeFormatUnixSeconds:
		return col + " > extract(epoch from " + since + ")", nil
	case catalog.TimeFormatUnixMillis:
		return col + " > extract(epoch from " + since + ") * 1000", nil
	case catalog.TimeFormatISO8601:
		return col + "::timestamptz > " + since, nil
	}
	return "", fmt.Errorf("time_format %q is not supported with refresh_data_window", ds.TimeFormat)
}

// quoteIdent quotes a Postgres identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
