package accelerator

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// ResultColumn describes one column of a query result.
type ResultColumn struct {
	Name string
	// DuckType is DuckDB's name of the column's type, as the driver reports
	// it (DatabaseTypeName): "INTEGER", "DECIMAL(12,2)", "VARCHAR",
	// "TIMESTAMPTZ", "INTEGER[]", ...
	DuckType string
}

// ErrNotReadOnly is returned by Query for anything but one SELECT statement.
var ErrNotReadOnly = errors.New("accelerator queries must be a single SELECT statement")

// Sentinels of DuckDB's infinite dates and timestamps, as the driver returns
// them (see Rows.Values). Postgres's finite ranges never reach them.
var (
	// InfinityTimestamp and NegInfinityTimestamp are TIMESTAMP and
	// TIMESTAMPTZ 'infinity' and '-infinity'.
	InfinityTimestamp    = time.UnixMicro(math.MaxInt64).UTC()
	NegInfinityTimestamp = time.UnixMicro(-math.MaxInt64).UTC()
	// InfinityDate and NegInfinityDate are DATE 'infinity' and '-infinity'.
	InfinityDate    = time.Date(5881580, 7, 11, 0, 0, 0, 0, time.UTC)
	NegInfinityDate = time.Date(-5877641, 6, 24, 0, 0, 0, 0, time.UTC)
)

// Query runs one read-only statement (a SELECT) on DuckDB. Cancelling ctx
// interrupts DuckDB while the statement executes; the result is then
// materialized and Rows only reads it. Close the Rows to release the
// connection.
//
// The Go type of each value follows the column's DuckType:
//
//	BOOLEAN                     bool
//	TINYINT/SMALLINT/INTEGER/BIGINT  int8/int16/int32/int64
//	UTINYINT..UBIGINT           uint8..uint64
//	HUGEINT                     *big.Int
//	FLOAT / DOUBLE              float32 / float64 (NaN, ±Inf, -0 as stored)
//	DECIMAL(p,s)                duckdb.Decimal{Width: p, Scale: s, Value: *big.Int unscaled}
//	VARCHAR                     string
//	BLOB                        []byte
//	UUID                        []byte, 16 bytes in RFC 4122 order (not duckdb.UUID)
//	DATE                        time.Time at 00:00 UTC; ±infinity are InfinityDate / NegInfinityDate
//	TIME                        time.Time on 0001-01-01 UTC; 24:00:00 comes back as 00:00:00
//	                            (select col::VARCHAR to tell them apart)
//	TIMESTAMP                   time.Time in UTC (the wall clock as UTC); ±infinity are
//	                            InfinityTimestamp / NegInfinityTimestamp
//	TIMESTAMPTZ                 time.Time in UTC (the instant); same infinities
//	INTERVAL                    duckdb.Interval{Months, Days int32; Micros int64}
//	LIST (T[])                  []any of the element's Go values, nil for NULL elements
//	JSON                        the decoded document (any); pgaccel stores json as VARCHAR
//	NULL                        nil
func (e *Engine) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	return e.QueryIn(ctx, "", query, args...)
}

// QueryIn is Query with DuckDB's TimeZone set to timeZone (an IANA name,
// as Postgres's TimeZone setting) for the statement, so that timestamptz
// arithmetic, truncation, extraction and literals behave as they do in the
// client's session. An empty timeZone leaves the connection's as it is.
// A zone DuckDB does not know is an error: the statement must then go to
// the origin.
func (e *Engine) QueryIn(ctx context.Context, timeZone, query string, args ...any) (*Rows, error) {
	qc, err := e.getConn(ctx)
	if err != nil {
		return nil, fmt.Errorf("query duckdb: %w", err)
	}
	r := &Rows{e: e, qc: qc}
	sound := true
	err = qc.inSession(ctx, timeZone, func(c *duckdb.Conn) error {
		stmt, kept, err := e.prepared(qc, c, query)
		if err != nil {
			return err // DuckDB cannot plan it: the connection is fine
		}
		if !kept {
			r.stmt = stmt // the query's own, closed with it
		}
		named := make([]driver.NamedValue, len(args))
		for i, a := range args {
			named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		}
		rows, err := stmt.QueryContext(ctx, named)
		if err != nil {
			sound = false
			return err
		}
		// The connection stays the query's until Close, so the driver
		// objects may outlive this callback.
		r.rows = rows
		return nil
	})
	if err != nil {
		if r.stmt != nil {
			r.stmt.Close()
		}
		_ = e.putConn(qc, sound)
		return nil, fmt.Errorf("query duckdb: %w", withCause(ctx, err))
	}
	names := r.rows.Columns()
	r.cols = make([]ResultColumn, len(names))
	typed, _ := r.rows.(driver.RowsColumnTypeDatabaseTypeName)
	for i, n := range names {
		r.cols[i].Name = n
		if typed != nil {
			r.cols[i].DuckType = typed.ColumnTypeDatabaseTypeName(i)
		}
	}
	r.vals = make([]driver.Value, len(names))
	r.out = make([]any, len(names))
	return r, nil
}

// Rows is the result of Query. It is not safe for concurrent use.
type Rows struct {
	e      *Engine
	qc     *queryConn
	stmt   *duckdb.Stmt // set when the connection does not keep it
	rows   driver.Rows
	cols   []ResultColumn
	vals   []driver.Value
	out    []any
	err    error
	closed bool
	// mem holds the rows of an answer from a point index, none or one
	// (rows is nil then): memPos maps the result's columns to the
	// index's, memAt is the next row.
	mem    [][]any
	memPos []int
	memAt  int
}

// Columns describes the result's columns.
func (r *Rows) Columns() []ResultColumn { return r.cols }

// Next advances to the next row; false at the end or on an error (see Err).
func (r *Rows) Next() bool {
	if r.closed || r.err != nil {
		return false
	}
	if r.rows == nil {
		if r.memAt >= len(r.mem) {
			return false
		}
		row := r.mem[r.memAt]
		r.memAt++
		for i, p := range r.memPos {
			r.out[i] = row[p]
		}
		return true
	}
	if err := r.rows.Next(r.vals); err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = fmt.Errorf("read duckdb result: %w", err)
		}
		return false
	}
	for i, v := range r.vals {
		r.out[i] = v
	}
	return true
}

// Values returns the current row, valid until the next call of Next (the
// slice is reused; the values themselves are not).
func (r *Rows) Values() []any { return r.out }

// Err returns the error that ended Next early, if any.
func (r *Rows) Err() error { return r.err }

// Close releases the result and its connection. It is safe to call twice.
func (r *Rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.rows == nil {
		return nil // a point index's answer
	}
	// The connection (and its prepared statement) serves the next query
	// unless this one failed.
	cerr := r.rows.Close()
	errs := []error{cerr}
	if r.stmt != nil {
		errs = append(errs, r.stmt.Close())
	}
	errs = append(errs, r.e.putConn(r.qc, cerr == nil && r.err == nil))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close duckdb result: %w", err)
	}
	return nil
}

// Explain returns DuckDB's plan of query (one statement Query would run),
// line by line, under timeZone as QueryIn; with analyze, DuckDB runs the
// statement and returns its profile.
func (e *Engine) Explain(ctx context.Context, timeZone, query string, analyze bool) ([]string, error) {
	qc, err := e.getConn(ctx)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	sound := true
	var out []string
	err = qc.inSession(ctx, timeZone, func(c *duckdb.Conn) error {
		st, err := prepareSelect(c, query)
		if err != nil {
			return err
		}
		st.Close()
		prefix := "EXPLAIN "
		if analyze {
			prefix = "EXPLAIN ANALYZE "
		}
		rows, err := c.QueryContext(ctx, prefix+query, nil)
		if err != nil {
			sound = false
			return err
		}
		defer rows.Close()
		vals := make([]driver.Value, len(rows.Columns()))
		for {
			if err := rows.Next(vals); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				sound = false
				return err
			}
			if s, ok := vals[len(vals)-1].(string); ok {
				out = append(out, strings.Split(strings.TrimRight(s, "\n"), "\n")...)
			}
		}
	})
	_ = e.putConn(qc, sound)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", withCause(ctx, err))
	}
	return out, nil
}

// inSession runs fn on qc's DuckDB connection with its TimeZone set to
// timeZone (as QueryIn).
func (qc *queryConn) inSession(ctx context.Context, timeZone string, fn func(c *duckdb.Conn) error) error {
	return qc.conn.Raw(func(dc any) error {
		c, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		if err := qc.setTimeZone(ctx, c, timeZone); err != nil {
			return err
		}
		return fn(c)
	})
}

// withCause adds ctx's error to err when ctx has ended (a cancel or a
// statement_timeout), so that callers can tell.
func withCause(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
}
