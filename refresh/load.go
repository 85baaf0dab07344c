package refresh

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// loadOutcome is what one refresh did.
type loadOutcome struct {
	rows      int64 // rows read from the origin
	total     int64 // rows in the acceleration afterwards
	bytes     int64
	duration  time.Duration
	completed time.Time
	columns   []catalog.ColumnInfo
	filters   readFilters
	// nothing: none of the columns read can be accelerated; nothing was
	// loaded, and the stored acceleration, if any, is not served.
	nothing bool
	// merged: an append merged the rows into the stored ones.
	merged bool
	// heldAsIs: columns left out for values their DuckDB type cannot
	// hold that a load could hold as Postgres sends them
	// (accelerator.LoadStats.HeldAsIs).
	heldAsIs []string
}

// readFilters are the Postgres predicates through which the proxy reads a
// dataset's origin table: the inverse of the retention policy for
// on_zero_results: use_source (fallback), and the subset the acceleration
// holds for point reads (subset; see catalog.Dataset.SubsetFilter). A
// filter that is not ready is not used: use_source falls back to nothing,
// point reads are accelerated.
type readFilters struct {
	fallback      string
	fallbackReady bool
	subset        string
	subsetReady   bool
}

// loadDataset runs one refresh of ds: it reads the table's columns, then
// streams
//
//	COPY (SELECT <columns> FROM "schema"."table" WHERE <refresh_sql's WHERE> AND <data window> [AND <append bound>]) TO STDOUT (FORMAT binary)
//
// into Engine.LoadWith. A full refresh (and an append dataset's full
// reload) replaces the acceleration; an append refresh (appendRows) reads the rows past the stored max(time_column) less
// refresh_append_overlap and merges them in (see appendBounds). Rows the
// retention policy would evict are removed before the rows are published.
// The columns are refresh_sql's (all of them for *); those whose type
// cannot be accelerated are sent as NULLs, so that the stream still has
// every selected column and the acceleration records them as not
// accelerated. On failure the previous acceleration keeps serving.
//
// A full load that meets numeric values a column's DECIMAL cannot hold, or
// arrays a LIST cannot (accelerator.LoadStats.HeldAsIs), runs again at
// once with those columns held as Postgres sends them
// (ColumnSpec.NumericText, ColumnSpec.ArrayBinary), and later loads keep
// them so (keepStoredTypes). An append merge leaves such a column out until
// the next full load (its first load, when nothing is stored, is one).
func loadDataset(ctx context.Context, eng *accelerator.Engine, dsn string, ds *catalog.Dataset, appendRows bool, now time.Time, w *watch) (loadOutcome, error) {
	out, err := loadDatasetAs(ctx, eng, dsn, ds, appendRows, now, w, nil)
	if err != nil || out.merged || len(out.heldAsIs) == 0 {
		return out, err
	}
	return loadDatasetAs(ctx, eng, dsn, ds, appendRows, now, w, out.heldAsIs)
}

// loadDatasetAs is loadDataset with the columns named in asIs held as
// Postgres sends them.
func loadDatasetAs(ctx context.Context, eng *accelerator.Engine, dsn string, ds *catalog.Dataset, appendRows bool, now time.Time, w *watch, asIs []string) (loadOutcome, error) {
	conn, err := connectOrigin(ctx, dsn)
	if err != nil {
		return loadOutcome{}, err
	}
	closeConn := func() { conn.Close(context.Background()) }
	defer func() {
		if closeConn != nil {
			closeConn()
		}
	}()
	all, err := originColumns(ctx, conn, ds.Schema, ds.Table)
	if err != nil {
		return loadOutcome{}, err
	}
	if w != nil {
		w.schemaResolved()
		w.estimate.Store(estimateRows(ctx, conn, ds))
	}
	if err := checkColumns(ds, all); err != nil {
		return loadOutcome{}, err
	}
	filters, err := checkFilters(ctx, conn, ds, all)
	if err != nil {
		return loadOutcome{}, err
	}
	var opts accelerator.LoadOptions
	if w != nil {
		opts.Progress = &w.rows
	}
	// Before copyQuery, which selects NULL for a column not held.
	keepStoredTypes(ctx, eng, ds.Name, all, appendRows, asIs)
	if err := establishHeldScales(ctx, conn, ds, all); err != nil {
		return loadOutcome{}, err
	}
	cols, query, err := copyQuery(ds, all)
	if err != nil {
		return loadOutcome{}, err
	}
	if !anyAccelerated(cols) {
		// A complete outcome, not an error: the dataset is Ready with
		// nothing to serve, rather than failing every refresh.
		return loadOutcome{completed: now, columns: accelerator.ColumnInfos(cols), filters: filters, nothing: true}, nil
	}
	if appendRows {
		b, err := appendBounds(ctx, eng, ds, all, cols)
		if err != nil {
			return loadOutcome{}, err
		}
		opts.Append = &accelerator.AppendMerge{TimeColumn: ds.TimeColumn, PrimaryKey: ds.Acceleration.PrimaryKey, Overlap: b.overlap}
		if _, query, err = copyQuery(ds, all, b.origin...); err != nil {
			return loadOutcome{}, err
		}
	}
	closeConn = nil // copyInto takes the connection over
	out, err := copyInto(ctx, eng, conn, ds, cols, query, now, opts)
	if err != nil {
		return loadOutcome{}, err
	}
	out.filters = filters
	return out, nil
}

// anyAccelerated reports whether a column of cols can be accelerated.
func anyAccelerated(cols []accelerator.ColumnSpec) bool {
	for _, c := range cols {
		if _, ok := accelerator.DuckDBType(c); ok {
			return true
		}
	}
	return false
}

// checkFilters builds and checks at the origin the filters the proxy
// reads the table there through: use_source's inverse of retention and
// the point reads' subset.
func checkFilters(ctx context.Context, conn *pgconn.PgConn, ds *catalog.Dataset, all []accelerator.ColumnSpec) (readFilters, error) {
	f := readFilters{fallbackReady: true}
	var err error
	if f.fallback, err = checkFallbackFilter(ctx, conn, ds, all); err != nil {
		return readFilters{}, err
	}
	if f.subset, f.subsetReady, err = checkSubsetFilter(ctx, conn, ds, all); err != nil {
		return readFilters{}, err
	}
	return f, nil
}

// copyInto loads the binary COPY of query, run on conn (which it takes
// over), into ds's acceleration as cols, with opts completed by what every
// load sets: the primary key, SQL_ASCII text, and the rows the retention
// policy evicts at now left out.
func copyInto(ctx context.Context, eng *accelerator.Engine, conn *pgconn.PgConn, ds *catalog.Dataset, cols []accelerator.ColumnSpec, query string, now time.Time, opts accelerator.LoadOptions) (loadOutcome, error) {
	opts.PrimaryKey = ds.Acceleration.PrimaryKey
	// A SQL_ASCII database's text is bytes, not UTF-8 characters.
	opts.ASCIIOnly = conn.ParameterStatus("server_encoding") == "SQL_ASCII"
	if del := retentionDeletes(ds, cols); del != nil {
		opts.Delete = del(now)
	}
	stream, err := startCopy(ctx, conn, query)
	if err != nil {
		return loadOutcome{}, err
	}
	defer stream.Close()
	st, err := eng.LoadWith(ctx, ds, cols, stream, opts)
	if err != nil {
		return loadOutcome{}, err
	}
	return loadOutcome{rows: st.Rows, total: st.Total, bytes: st.Bytes, duration: st.Duration, completed: st.Completed, columns: st.Columns, heldAsIs: st.HeldAsIs, merged: st.Merged}, nil
}

// checkFallbackFilter makes sure that the filter an on_zero_results:
// use_source fallback adds (the inverse of the retention policy) can be
// built and runs against the origin table; otherwise the dataset does not
// load, as the spec says, rather than let a fallback return evicted rows.
func checkFallbackFilter(ctx context.Context, conn *pgconn.PgConn, ds *catalog.Dataset, all []accelerator.ColumnSpec) (string, error) {
	if ds.Acceleration.OnZeroResults != catalog.ZeroResultsUseSource {
		return "", nil
	}
	filter, err := ds.FallbackFilter(originInfos(all))
	if err == nil {
		var connErr error
		if err, connErr = tryFilter(ctx, conn, ds, filter); connErr != nil {
			return "", connErr
		}
	}
	if err != nil {
		return "", fmt.Errorf("Failed to register dataset '%s' (postgres): `on_zero_results: use_source` cannot be combined with this retention configuration, so the dataset was not loaded. %v. Remove on_zero_results: use_source, or use a retention_sql or retention_period policy that can be evaluated as a filter on the source columns: %w",
			ds.Name, err, errConfig)
	}
	return filter, nil
}

// checkSubsetFilter builds the filter of the rows the acceleration holds
// (catalog.Dataset.SubsetFilter) and runs it at the origin once. ready is
// false when it cannot be built or the origin refuses it: point reads are
// then accelerated rather than sent to the origin. Only a failing
// connection is an error.
func checkSubsetFilter(ctx context.Context, conn *pgconn.PgConn, ds *catalog.Dataset, all []accelerator.ColumnSpec) (filter string, ready bool, err error) {
	filter, ferr := ds.SubsetFilter(originInfos(all))
	if ferr == nil {
		if ferr, err = tryFilter(ctx, conn, ds, filter); err != nil {
			return "", false, err
		}
	}
	if ferr != nil {
		return "", false, nil
	}
	return filter, true, nil
}

// tryFilter runs the predicate filter against the dataset's origin table
// (nothing for ""): rejected is the origin's error, connErr a failure of
// the connection itself.
func tryFilter(ctx context.Context, conn *pgconn.PgConn, ds *catalog.Dataset, filter string) (rejected, connErr error) {
	if filter == "" {
		return nil, nil
	}
	res := conn.ExecParams(ctx, "SELECT 1 FROM "+ds.QualifiedTable()+" WHERE "+filter+" LIMIT 0", nil, nil, nil, nil).Read()
	var pgErr *pgconn.PgError
	if res.Err != nil && !errors.As(res.Err, &pgErr) {
		return nil, res.Err
	}
	return res.Err, nil
}

// originInfos are the registry's view of the origin's columns.
func originInfos(all []accelerator.ColumnSpec) []catalog.ColumnInfo {
	cols := make([]catalog.ColumnInfo, len(all))
	for i, c := range all {
		cols[i] = catalog.ColumnInfo{Name: c.Name, TypeOID: c.TypeOID, TypeMod: c.TypeMod, TypeName: c.TypeName, RelOID: c.RelOID, AttNum: c.AttNum, TypLen: c.TypLen}
	}
	return cols
}

// watch lets the admin port follow a refresh: the rows read so far, the
// origin's estimate of the table's rows, and when its schema is resolved.
type watch struct {
	rows           atomic.Int64
	estimate       atomic.Int64 // -1: unknown
	schemaResolved func()
}

// estimateRows is the planner's estimate of the table's rows (-1 when the
// table was never analyzed). It does not bound a refresh_sql filter.
func estimateRows(ctx context.Context, conn *pgconn.PgConn, ds *catalog.Dataset) int64 {
	res := conn.ExecParams(ctx, `SELECT c.reltuples::bigint FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
		[][]byte{[]byte(ds.Schema), []byte(ds.Table)}, nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 {
		return -1
	}
	n, err := strconv.ParseInt(string(res.Rows[0][0]), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// checkColumns checks that the columns the dataset names exist at the
// origin: time_column, time_partition_column and primary_key.
func checkColumns(ds *catalog.Dataset, all []accelerator.ColumnSpec) error {
	has := make(map[string]bool, len(all))
	for _, c := range all {
		has[c.Name] = true
	}
	check := func(key, col string) error {
		if col != "" && !has[col] {
			return fmt.Errorf("%s %q is not a column of %s.%s: %w", key, col, ds.Schema, ds.Table, errMissingColumn)
		}
		return nil
	}
	if err := check("time_column", ds.TimeColumn); err != nil {
		return err
	}
	if err := check("time_partition_column", ds.TimePartitionColumn); err != nil {
		return err
	}
	for _, k := range ds.Acceleration.PrimaryKey {
		if err := check("acceleration.primary_key column", k); err != nil {
			return err
		}
	}
	return nil
}

// copyQuery returns the columns a full refresh of ds reads, in order, and
// its COPY statement.
// extra predicates (Postgres SQL) are added to the WHERE clause.
func copyQuery(ds *catalog.Dataset, all []accelerator.ColumnSpec, extra ...string) ([]accelerator.ColumnSpec, string, error) {
	cols := all
	var where []string
	if ds.Acceleration.RefreshSQL != "" {
		names, pred, ok := ds.RefreshSelect()
		if !ok {
			return nil, "", fmt.Errorf("acceleration.refresh_sql is not of the form SELECT <columns> FROM <table> [WHERE <condition>]: %w", errConfig)
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
					return nil, "", fmt.Errorf("acceleration.refresh_sql selects column %q, which %s.%s does not have: %w", n, ds.Schema, ds.Table, errMissingColumn)
				}
				cols = append(cols, c)
			}
		}
		if pred != "" {
			where = append(where, "("+pred+")")
		}
	}
	if w := ds.Acceleration.RefreshDataWindow; w > 0 {
		pred, err := windowPredicate(ds, all, w)
		if err != nil {
			return nil, "", err
		}
		where = append(where, pred)
	}
	where = append(where, extra...)

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
// now() minus the window, in the column's time format.
func windowPredicate(ds *catalog.Dataset, all []accelerator.ColumnSpec, w time.Duration) (string, error) {
	if ds.TimeColumn == "" {
		return "", fmt.Errorf("acceleration.refresh_data_window needs time_column: %w", errConfig)
	}
	tf, err := timeFormatOf(ds.TimeColumn, ds.TimeFormat, all)
	if err != nil {
		return "", err
	}
	since := "(now() - interval '" + strconv.FormatInt(w.Microseconds(), 10) + " microseconds')"
	return tf.originAfter(quoteIdent(ds.TimeColumn), since), nil
}

// quoteIdent quotes a Postgres identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// retentionDeletes returns the DuckDB predicates, over cols (the columns
// a load reads), of the rows the retention policy evicts at a time: what a
// load leaves out and a change stream does not insert. nil without
// retention checks or a usable policy.
func retentionDeletes(ds *catalog.Dataset, cols []accelerator.ColumnSpec) func(time.Time) []string {
	if !ds.Acceleration.RetentionCheckEnabled {
		return nil
	}
	pol, err := retentionPolicy(ds, cols)
	if err != nil || pol == nil {
		return nil
	}
	return pol.duckPredicates
}

// keepStoredTypes holds the numeric and array columns named in asIs, and those
// the stored acceleration holds so, as Postgres sends them
// (ColumnSpec.NumericText, ColumnSpec.ArrayBinary): a column whose values
// once needed it is not loaded twice at every refresh.
// For an append load (appendRows) it also gives the numeric columns
// without a declared scale the scales the stored rows are held at
// (ColumnSpec.HeldScale), before establishHeldScales asks the origin for
// the others: for a column whose values do not share one scale, the
// origin's one value could differ from load to load, which would make
// every append a full reload. New rows of another scale then leave the
// column out, as at a full load.
func keepStoredTypes(ctx context.Context, eng *accelerator.Engine, name string, cols []accelerator.ColumnSpec, appendRows bool, asIs []string) {
	for i := range cols {
		switch {
		case !slices.Contains(asIs, cols[i].Name):
		case cols[i].TypeOID == pgdef.OIDNumeric && cols[i].ElemOID == 0:
			cols[i].NumericText = true
		case cols[i].ElemOID != 0 && pgdef.ArrayElemPrintable(cols[i].ElemOID):
			cols[i].ArrayBinary = true
		}
	}
	info, err := eng.Stored(ctx, name)
	if err != nil || info == nil {
		return
	}
	for i := range cols {
		for _, sp := range info.Specs {
			if sp.Name != cols[i].Name || sp.TypeOID != cols[i].TypeOID || sp.ElemOID != cols[i].ElemOID {
				continue
			}
			cols[i].NumericText = cols[i].NumericText || sp.NumericText
			cols[i].ArrayBinary = cols[i].ArrayBinary || sp.ArrayBinary
			if appendRows && accelerator.NeedsHeldScale(cols[i]) && accelerator.NeedsHeldScale(sp) && sp.HeldScale != nil {
				s := *sp.HeldScale
				cols[i].HeldScale = &s
			}
		}
	}
}
