package encode

import (
	"fmt"
	"github.com/pgaccel/pgaccel/pgdef"
	"strconv"
	"strings"
)

// duckKind classifies a DuckDB result type by the Go values duckdb-go
// returns for it.
type duckKind uint8

const (
	duckInvalid     duckKind = iota
	duckNull                 // SQLNULL: every value is nil
	duckBool                 // bool
	duckInt                  // int8..int64, uint8..uint64, *big.Int (HUGEINT, UHUGEINT)
	duckFloat                // float32
	duckDouble               // float64
	duckDecimal              // duckdb.Decimal
	duckVarchar              // string
	duckBlob                 // []byte
	duckUUID                 // []byte of 16 (duckdb.UUID accepted too)
	duckDate                 // time.Time, UTC midnight
	duckTime                 // time.Time on 0001-01-01
	duckTimestamp            // time.Time, UTC wall clock (TIMESTAMP, _S, _MS)
	duckTimestampNS          // time.Time with nanoseconds
	duckTimestampTZ          // time.Time, the instant in UTC
	duckInterval             // duckdb.Interval
)

// duckType is a parsed DuckDB type name as ColumnTypeDatabaseTypeName
// reports it.
type duckType struct {
	kind  duckKind
	scale int  // DECIMAL scale
	list  bool // LIST (T[]) or ARRAY (T[n]) of kind
}

// duckNames maps DuckDB type names (and the aliases DuckDB accepts in casts)
// to their kind.
var duckNames = map[string]duckKind{
	"NULL":                        duckNull,
	`"NULL"`:                      duckNull,
	"SQLNULL":                     duckNull,
	"BOOLEAN":                     duckBool,
	"BOOL":                        duckBool,
	"TINYINT":                     duckInt,
	"SMALLINT":                    duckInt,
	"INTEGER":                     duckInt,
	"BIGINT":                      duckInt,
	"HUGEINT":                     duckInt,
	"UTINYINT":                    duckInt,
	"USMALLINT":                   duckInt,
	"UINTEGER":                    duckInt,
	"UBIGINT":                     duckInt,
	"UHUGEINT":                    duckInt,
	"INT1":                        duckInt,
	"INT2":                        duckInt,
	"INT4":                        duckInt,
	"INT8":                        duckInt,
	"INT":                         duckInt,
	"INT128":                      duckInt,
	"FLOAT":                       duckFloat,
	"FLOAT4":                      duckFloat,
	"REAL":                        duckFloat,
	"DOUBLE":                      duckDouble,
	"FLOAT8":                      duckDouble,
	"VARCHAR":                     duckVarchar,
	"TEXT":                        duckVarchar,
	"STRING":                      duckVarchar,
	"BLOB":                        duckBlob,
	"BYTEA":                       duckBlob,
	"UUID":                        duckUUID,
	"DATE":                        duckDate,
	"TIME":                        duckTime,
	"TIME WITHOUT TIME ZONE":      duckTime,
	"TIMESTAMP":                   duckTimestamp,
	"DATETIME":                    duckTimestamp,
	"TIMESTAMP WITHOUT TIME ZONE": duckTimestamp,
	"TIMESTAMP_S":                 duckTimestamp,
	"TIMESTAMP_MS":                duckTimestamp,
	"TIMESTAMP_NS":                duckTimestampNS,
	"TIMESTAMPTZ":                 duckTimestampTZ,
	"TIMESTAMP WITH TIME ZONE":    duckTimestampTZ,
	"INTERVAL":                    duckInterval,
}

// parseDuckType parses a DuckDB type name such as "INTEGER",
// "DECIMAL(12,2)", "VARCHAR[]" or "TIMESTAMP WITH TIME ZONE".
func parseDuckType(name string) (duckType, error) {
	n := strings.ToUpper(strings.TrimSpace(name))
	var t duckType
	if i := strings.LastIndexByte(n, '['); i > 0 && strings.HasSuffix(n, "]") {
		inner := n[i+1 : len(n)-1]
		if inner != "" {
			if _, err := strconv.Atoi(inner); err != nil {
				return t, fmt.Errorf("DuckDB type %s: %w", name, ErrUnsupported)
			}
		}
		n, t.list = strings.TrimSpace(n[:i]), true
		if strings.HasSuffix(n, "]") {
			return t, fmt.Errorf("DuckDB type %s: %w: only one-dimensional lists are encoded", name, ErrUnsupported)
		}
	}
	if k, ok := duckNames[n]; ok {
		t.kind = k
		return t, nil
	}
	for _, prefix := range []string{"DECIMAL(", "NUMERIC("} {
		if !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, ")") {
			continue
		}
		ps := strings.Split(n[len(prefix):len(n)-1], ",")
		if len(ps) != 2 {
			break
		}
		w, err1 := strconv.Atoi(strings.TrimSpace(ps[0]))
		s, err2 := strconv.Atoi(strings.TrimSpace(ps[1]))
		if err1 != nil || err2 != nil || w < 1 || w > 38 || s < 0 || s > w {
			break
		}
		t.kind, t.scale = duckDecimal, s
		return t, nil
	}
	return t, fmt.Errorf("DuckDB type %s: %w: no exact Postgres encoding", name, ErrUnsupported)
}

// compatible reports whether values of DuckDB kind d can be printed exactly
// as Postgres type kind k, and if not, why.
//
// The rules are about representation. Per-value checks in the encoders
// reject the values that do not fit (an int8 value out of int2 range, a
// DECIMAL value with more decimals than a numeric(p,s) column shows, an
// integer not exactly representable as float8, a TIMESTAMP_NS with
// nanoseconds):
//
//   - bool: BOOLEAN.
//   - int2, int4, int8: any DuckDB integer (HUGEINT included: DuckDB's
//     sum(INTEGER) is HUGEINT where Postgres's sum(int4) is int8) and
//     DECIMAL(p,0).
//   - float4: FLOAT. float8: FLOAT, DOUBLE, integers. Never DECIMAL: which
//     double Postgres would have computed is unknowable.
//   - numeric: integers (count(*), sum(int8)), DECIMAL, and VARCHAR holding
//     numeric_out's text (NaN and ±Infinity included). With a typmod
//     numeric(p,s) every value is printed with s decimals, as the column
//     stores it; without one (an expression) the DECIMAL's own scale, or
//     the text's, is printed. FLOAT and DOUBLE are refused (avg of a
//     decimal in DuckDB).
//   - text, varchar, name, json, jsonb, bpchar: VARCHAR (DuckDB's JSON type is
//     refused: duckdb-go returns it parsed into maps, losing key order and
//     number spelling; store jsonb as VARCHAR holding Postgres's jsonb text).
//   - bytea: BLOB. uuid: UUID.
//   - date: DATE. time: TIME. timestamp: TIMESTAMP, TIMESTAMP_S/_MS/_NS.
//     timestamptz: TIMESTAMPTZ. interval: INTERVAL.
//   - arrays: a one-dimensional LIST of a compatible element type.
//   - any type: DuckDB's NULL type (every value is NULL).
func compatible(k kind, d duckType) error {
	if d.kind == duckNull {
		return nil
	}
	ok := false
	switch k {
	case kindBool:
		ok = d.kind == duckBool
	case kindInt2, kindInt4, kindInt8:
		ok = d.kind == duckInt || d.kind == duckDecimal && d.scale == 0
	case kindFloat4:
		ok = d.kind == duckFloat
	case kindFloat8:
		ok = d.kind == duckFloat || d.kind == duckDouble || d.kind == duckInt
	case kindNumeric:
		// VARCHAR: numeric_out's text, each value with its own display
		// scale (a numeric held as text, or one the planner computes
		// exactly as text: planner.Decision.NumericText).
		ok = d.kind == duckInt || d.kind == duckDecimal || d.kind == duckVarchar && !d.list
		if d.kind == duckDouble || d.kind == duckFloat {
			return fmt.Errorf("%w: a DuckDB floating-point value cannot be printed as the numeric Postgres would compute", ErrUnsupported)
		}
	case kindText, kindBpchar, kindJSONB, kindInet:
		ok = d.kind == duckVarchar
	case kindBytea:
		ok = d.kind == duckBlob
	case kindUUID:
		ok = d.kind == duckUUID
	case kindDate:
		ok = d.kind == duckDate
	case kindTime:
		ok = d.kind == duckTime
	case kindTimestamp:
		ok = d.kind == duckTimestamp || d.kind == duckTimestampNS
	case kindTimestamptz:
		ok = d.kind == duckTimestampTZ
	case kindInterval:
		ok = d.kind == duckInterval
	}
	if !ok {
		return fmt.Errorf("%w: no exact conversion", ErrUnsupported)
	}
	return nil
}

// Plan reports whether every DuckDB result column (named by its
// ColumnTypeDatabaseTypeName) can be encoded exactly as the corresponding
// origin column under s. It returns nil or an error wrapping ErrUnsupported
// that names the first column that cannot, and why. NewEncoder runs the same
// checks.
func Plan(cols []Column, duckTypes []string, s *Settings) error {
	_, err := NewEncoder(cols, duckTypes, s)
	return err
}

// planColumn builds the encoder state of one column.
func planColumn(c Column, duckName string, f *format) (column, error) {
	var col column
	if c.Format != 0 && c.Format != 1 {
		return col, fmt.Errorf("%w: format code %d", ErrUnsupported, c.Format)
	}
	info, ok := types[c.TypeOID]
	if !ok {
		return col, fmt.Errorf("%w: Postgres type OID %d is not encoded", ErrUnsupported, c.TypeOID)
	}
	d, err := parseDuckType(duckName)
	if err != nil {
		return col, err
	}
	if info.elem != 0 && d.kind == duckBlob && pgdef.ArrayElemPrintable(info.elem) {
		// An array held as Postgres sends it (accelerator's ArrayBinary).
		return column{kind: info.kind, binary: c.Format == 1, elemOID: info.elem, rawArray: true, scale: -1, charLen: -1, f: f}, nil
	}
	if d.list != (info.elem != 0) && d.kind != duckNull {
		return col, fmt.Errorf("%w: DuckDB %s for Postgres %s", ErrUnsupported, duckName, info.name)
	}
	if err := compatible(info.kind, d); err != nil {
		return col, fmt.Errorf("DuckDB %s as Postgres %s: %w", duckName, info.name, err)
	}
	col = column{
		kind:    info.kind,
		binary:  c.Format == 1,
		elemOID: info.elem,
		scale:   -1,
		charLen: -1,
		cidr:    c.TypeOID == pgdef.OIDCidr,
		f:       f,
	}
	switch info.kind {
	case kindNumeric:
		if c.TypeMod >= 4 {
			// PG15 typmod: ((precision << 16) | (scale & 0x7ff)) + 4, with
			// a signed 11-bit scale; a negative scale shows no decimals.
			s := int((((c.TypeMod - 4) & 0x7ff) ^ 1024) - 1024)
			col.scale = max(s, 0)
		}
	case kindBpchar:
		if c.TypeMod >= 4 {
			col.charLen = int(c.TypeMod - 4)
		}
	case kindTimestamptz:
		if f.loc == nil {
			return col, fmt.Errorf("%w: timestamptz needs the session TimeZone", ErrUnsupported)
		}
	}
	return col, nil
}
