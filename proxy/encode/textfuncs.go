package encode

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// pgdef.FuncText is the DuckDB scalar function through which the
// acceleration prints a value as Postgres's output function does (a cast
// to text, an operand of ||) for the types whose text DuckDB prints its
// own way: date, time, timestamp, timestamptz, interval, real, double
// precision and bytea.
//
//	pgaccel_text(value, current_setting('TimeZone')) -> VARCHAR
//
// It prints under Postgres's default DateStyle (ISO), IntervalStyle
// (postgres), extra_float_digits (1) and bytea_output (hex), and the
// TimeZone of its second argument (the session's, which the engine sets
// for each statement). A statement that calls it is accelerated only in a
// session whose settings print alike (Settings.PrintsAsDefaults).

// textKinds are pgdef.FuncText's overloads: the DuckDB type of the value and
// the Postgres type it is printed as.
var textKinds = []struct {
	duck duckdb.Type
	kind kind
}{
	{duckdb.TYPE_DATE, kindDate},
	{duckdb.TYPE_TIME, kindTime},
	{duckdb.TYPE_TIMESTAMP, kindTimestamp},
	{duckdb.TYPE_TIMESTAMP_TZ, kindTimestamptz},
	{duckdb.TYPE_INTERVAL, kindInterval},
	{duckdb.TYPE_FLOAT, kindFloat4},
	{duckdb.TYPE_DOUBLE, kindFloat8},
	{duckdb.TYPE_BLOB, kindBytea},
}

// PrintsAsDefaults reports whether s prints dates, times, intervals,
// floats and bytea as pgdef.FuncText does: DateStyle ISO (any field order),
// IntervalStyle postgres, extra_float_digits above 0 (shortest exact
// output), bytea_output hex. LoadSettings decides it once.
func (s *Settings) PrintsAsDefaults() bool { return s.printsDefaults }

// printsAsDefaults is PrintsAsDefaults of the parsed format f.
func printsAsDefaults(f format) bool {
	return f.dateStyle == styleISO && f.intervalStyle == intervalPostgres && f.efd > 0 && f.byteaHex
}

// textFormats holds the default format for each TimeZone name met.
var textFormats sync.Map // string -> *format

func textFormat(zone string) (*format, error) {
	if f, ok := textFormats.Load(zone); ok {
		return f.(*format), nil
	}
	loc, err := LoadLocation(zone)
	if err != nil {
		return nil, err
	}
	s := Settings{TimeZone: loc, ExtraFloatDigits: 1}
	f, err := s.format()
	if err != nil {
		return nil, err
	}
	textFormats.Store(zone, &f)
	return &f, nil
}

// TextFunctions returns pgdef.FuncText's overloads, for
// duckdb.RegisterScalarUDFSet.
func TextFunctions() ([]duckdb.ScalarFunc, error) {
	var out []duckdb.ScalarFunc
	for _, tk := range textKinds {
		f, err := newScalarFunc([]duckdb.Type{tk.duck, duckdb.TYPE_VARCHAR}, textRow(tk.kind))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// scalarFunc is a DuckDB scalar function of fixed types returning VARCHAR,
// computed row by row.
type scalarFunc struct {
	in  []duckdb.TypeInfo
	out duckdb.TypeInfo
	row func(values []driver.Value) (any, error)
}

func newScalarFunc(in []duckdb.Type, row func([]driver.Value) (any, error)) (scalarFunc, error) {
	f := scalarFunc{row: row}
	var err error
	if f.out, err = duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR); err != nil {
		return f, err
	}
	for _, t := range in {
		ti, err := duckdb.NewTypeInfo(t)
		if err != nil {
			return f, err
		}
		f.in = append(f.in, ti)
	}
	return f, nil
}

func (f scalarFunc) Config() duckdb.ScalarFuncConfig {
	return duckdb.ScalarFuncConfig{InputTypeInfos: f.in, ResultTypeInfo: f.out}
}

func (f scalarFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: f.row}
}

// textRow prints (value, zone) as the Postgres type of kind prints it.
func textRow(k kind) func([]driver.Value) (any, error) {
	return func(values []driver.Value) (any, error) {
		zone, _ := values[1].(string)
		ft, err := textFormat(zone)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pgdef.FuncText, err)
		}
		// The encoder's own text output; these kinds use no Encoder state.
		var e Encoder
		out, err := e.appendScalar(nil, &column{kind: k, scale: -1, charLen: -1, f: ft}, values[0])
		if err != nil {
			// The message names the type, never the value.
			return nil, fmt.Errorf("%s: %s", pgdef.FuncText, strings.TrimPrefix(err.Error(), "encode: "))
		}
		return string(out), nil
	}
}
