package encode

import (
	"encoding/binary"
	"fmt"
	"github.com/pgaccel/pgaccel/pgdef"
	"math"
	"math/big"
	"strconv"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Column is one column of the origin's RowDescription: the type to encode
// as, its typmod, and the format the client asked for.
type Column struct {
	TypeOID uint32
	TypeMod int32
	Format  int16 // 0 text, 1 binary
}

// column is the planned encoder state of one result column. For an array
// column the fields describe the elements and elemOID is set.
type column struct {
	kind    kind
	binary  bool
	elemOID uint32 // array columns: the element type OID; else 0
	scale   int    // numeric: decimals to print (from the typmod), -1 = the value's own
	charLen int    // bpchar: length n from the typmod, -1 = none
	cidr    bool   // inet's binary form says cidr
	// rawArray: an array held as Postgres sends it (array_send's form, a
	// BLOB): sent as it is in binary, printed by pgdef.ArrayText in text.
	rawArray bool
	f        *format
}

// Encoder encodes DuckDB values as one result's columns. It is not safe for
// concurrent use.
type Encoder struct {
	cols    []column
	f       format
	scratch []byte // reused by array quoting and wide numerics
}

// NewEncoder plans the encoding of a result whose origin columns are cols
// and whose DuckDB columns have the types duckTypes (as
// ColumnTypeDatabaseTypeName reports them), under the session settings s.
// It returns an error wrapping ErrUnsupported, naming the column, if any
// column cannot be encoded exactly.
func NewEncoder(cols []Column, duckTypes []string, s *Settings) (*Encoder, error) {
	if len(cols) != len(duckTypes) {
		return nil, fmt.Errorf("%w: %d origin columns but %d DuckDB columns", ErrUnsupported, len(cols), len(duckTypes))
	}
	if s == nil {
		return nil, fmt.Errorf("%w: no session settings", ErrUnsupported)
	}
	e := &Encoder{cols: make([]column, len(cols))}
	var err error
	if e.f, err = s.format(); err != nil {
		return nil, err
	}
	for i, c := range cols {
		if e.cols[i], err = planColumn(c, duckTypes[i], &e.f); err != nil {
			return nil, fmt.Errorf("column %d: %w", i+1, err)
		}
	}
	return e, nil
}

// AppendValue appends the wire bytes of v, a value duckdb-go returned for
// column i, to dst, without the int32 length prefix. A nil v is SQL NULL:
// AppendValue returns a nil slice and isNull true, and the caller writes the
// length -1. On error out is nil and err wraps ErrUnsupported with the
// column and the reason; the caller then sends the statement to the origin.
func (e *Encoder) AppendValue(dst []byte, i int, v any) (out []byte, isNull bool, err error) {
	if v == nil {
		return nil, true, nil
	}
	if i < 0 || i >= len(e.cols) {
		return nil, false, fmt.Errorf("%w: column %d of %d", ErrUnsupported, i+1, len(e.cols))
	}
	c := &e.cols[i]
	if c.rawArray {
		out, err = appendRawArray(dst, c, v)
	} else if c.elemOID != 0 {
		out, err = e.appendArray(dst, c, v)
	} else {
		out, err = e.appendScalar(dst, c, v)
	}
	if err != nil {
		return nil, false, fmt.Errorf("column %d: %w", i+1, err)
	}
	return out, false, nil
}

// appendScalar appends one non-NULL scalar value.
func (e *Encoder) appendScalar(dst []byte, c *column, v any) ([]byte, error) {
	switch c.kind {
	case kindBool:
		b, ok := v.(bool)
		if !ok {
			return nil, wrongValue(v, "boolean")
		}
		if c.binary {
			if b {
				return append(dst, 1), nil
			}
			return append(dst, 0), nil
		}
		if b {
			return append(dst, 't'), nil
		}
		return append(dst, 'f'), nil
	case kindInt2, kindInt4, kindInt8:
		return appendInt(dst, c, v)
	case kindFloat4, kindFloat8:
		return appendFloat(dst, c, v)
	case kindNumeric:
		return e.appendNumeric(dst, c, v)
	case kindText, kindBpchar, kindJSONB:
		return appendText(dst, c, v)
	case kindBytea:
		return appendBytea(dst, c, v)
	case kindUUID:
		return appendUUID(dst, c, v)
	case kindDate:
		return appendDate(dst, c, v)
	case kindTime:
		return appendTime(dst, c, v)
	case kindTimestamp, kindTimestamptz:
		return appendTimestamp(dst, c, v)
	case kindInterval:
		return appendInterval(dst, c, v)
	case kindInet:
		return appendInet(dst, c, v)
	}
	return nil, fmt.Errorf("%w: no encoder for kind %d", ErrUnsupported, c.kind)
}

// wrongValue reports a Go value of a type the planned column does not expect.
func wrongValue(v any, want string) error {
	return fmt.Errorf("%w: DuckDB value of Go type %T for Postgres %s", ErrUnsupported, v, want)
}

// toInt64 returns v as an int64 if it is a Go integer, a *big.Int or a
// scale-0 duckdb.Decimal whose value fits.
func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int16:
		return int64(n), true
	case int8:
		return int64(n), true
	case int:
		return int64(n), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		if n > math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case *big.Int:
		if n == nil || !n.IsInt64() {
			return 0, false
		}
		return n.Int64(), true
	case duckdb.Decimal:
		if n.Scale != 0 || n.Value == nil || !n.Value.IsInt64() {
			return 0, false
		}
		return n.Value.Int64(), true
	}
	return 0, false
}

// appendInt appends an int2, int4 or int8 value, checking its range.
func appendInt(dst []byte, c *column, v any) ([]byte, error) {
	n, ok := toInt64(v)
	if !ok {
		return nil, fmt.Errorf("%w: a DuckDB %T value that is not a Postgres bigint", ErrUnsupported, v)
	}
	switch c.kind {
	case kindInt2:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return nil, fmt.Errorf("%w: value out of range for smallint", ErrUnsupported)
		}
		if c.binary {
			return binary.BigEndian.AppendUint16(dst, uint16(n)), nil
		}
	case kindInt4:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return nil, fmt.Errorf("%w: value out of range for integer", ErrUnsupported)
		}
		if c.binary {
			return binary.BigEndian.AppendUint32(dst, uint32(n)), nil
		}
	default:
		if c.binary {
			return binary.BigEndian.AppendUint64(dst, uint64(n)), nil
		}
	}
	return strconv.AppendInt(dst, n, 10), nil
}

// timeValue returns v as a time.Time or an error.
func timeValue(v any, want string) (time.Time, error) {
	t, ok := v.(time.Time)
	if !ok {
		return t, wrongValue(v, want)
	}
	return t, nil
}

// appendRawArray appends an array held as array_send's binary form (the
// load checked it whole): as it is in binary, as array_out prints it in
// text.
func appendRawArray(dst []byte, c *column, v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, wrongValue(v, "array")
	}
	if err := pgdef.ArrayOf(b, c.elemOID); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	if c.binary {
		return append(dst, b...), nil
	}
	text, err := pgdef.ArrayText(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return append(dst, text...), nil
}
