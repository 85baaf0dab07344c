package accelerator

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
)

// This file decodes Postgres's binary COPY format
// (https://www.postgresql.org/docs/current/sql-copy.html#id-1.9.3.55.9.4):
//
//	header:  "PGCOPY\n\377\r\n\0", int32 flags, int32 extension length, extension
//	tuple:   int16 field count, then per field int32 length (-1 = NULL) and bytes
//	trailer: int16 -1
//
// and the binary send formats of the types in types.go.

// copySignature opens every binary COPY stream.
var copySignature = []byte("PGCOPY\n\377\r\n\x00")

// errTruncated is returned when the stream ends before the trailer, e.g. when
// the origin went away mid-COPY.
var errTruncated = errors.New("copy stream ended before its trailer")

// copyBufSize is the initial read buffer: large reads keep the per-row cost
// of the pipe from the origin low.
const copyBufSize = 1 << 20

// tupleReader reads tuples from a binary COPY stream. The fields it returns
// point into its buffer and are valid until the next call of next.
type tupleReader struct {
	src    io.Reader
	buf    []byte
	r, w   int   // unread data is buf[r:w]
	read   int64 // bytes read from src
	srcErr error
}

func newTupleReader(src io.Reader) *tupleReader {
	return &tupleReader{src: src, buf: make([]byte, copyBufSize)}
}

// fill makes at least n bytes available at buf[r:]. It moves unread data to
// the front of the buffer (so offsets relative to r stay valid, absolute
// ones do not) and grows the buffer for large tuples.
func (t *tupleReader) fill(n int) error {
	for t.w-t.r < n {
		if t.srcErr != nil {
			if errors.Is(t.srcErr, io.EOF) {
				return errTruncated
			}
			return t.srcErr
		}
		if t.r+n > len(t.buf) { // no room for n bytes after r: compact or grow
			buf := t.buf
			if n > len(t.buf) {
				buf = make([]byte, max(n, 2*len(t.buf)))
			}
			copy(buf, t.buf[t.r:t.w])
			t.w -= t.r
			t.r = 0
			t.buf = buf
		}
		m, err := t.src.Read(t.buf[t.w:])
		t.w += m
		t.read += int64(m)
		if err != nil {
			t.srcErr = err
		}
	}
	return nil
}

// readHeader checks the signature and skips the flags and the extension.
func (t *tupleReader) readHeader() error {
	const fixed = 11 + 4 + 4
	if err := t.fill(fixed); err != nil {
		return fmt.Errorf("read copy header: %w", err)
	}
	h := t.buf[t.r : t.r+fixed]
	if !bytes.Equal(h[:11], copySignature) {
		return errors.New("not a binary COPY stream: bad signature")
	}
	flags := binary.BigEndian.Uint32(h[11:15])
	if flags&(1<<16) != 0 {
		return errors.New("binary COPY stream has OIDs; use COPY without the OIDS option")
	}
	ext := int(binary.BigEndian.Uint32(h[15:19]))
	if ext < 0 {
		return errors.New("binary COPY header: negative extension length")
	}
	if err := t.fill(fixed + ext); err != nil {
		return fmt.Errorf("read copy header: %w", err)
	}
	t.r += fixed + ext
	return nil
}

// next reads the next tuple and returns its bytes, valid until the next
// call; it returns ok=false at the trailer. For field i, spans[2*i] is its
// offset in the tuple (-1 for NULL) and spans[2*i+1] its length; len(spans)
// must be twice the stream's column count.
func (t *tupleReader) next(spans []int32) (tuple []byte, ok bool, err error) {
	if err := t.fill(2); err != nil {
		return nil, false, err
	}
	count := int(int16(binary.BigEndian.Uint16(t.buf[t.r:])))
	if count == -1 {
		t.r += 2
		return nil, false, nil
	}
	if 2*count != len(spans) {
		return nil, false, fmt.Errorf("copy tuple has %d fields, want %d", count, len(spans)/2)
	}
	off := 2 // relative to t.r, which fill keeps pointing at the tuple
	for i := range count {
		if err := t.fill(off + 4); err != nil {
			return nil, false, err
		}
		n := int(int32(binary.BigEndian.Uint32(t.buf[t.r+off:])))
		off += 4
		if n < 0 {
			if n != -1 {
				return nil, false, fmt.Errorf("copy field %d has length %d", i, n)
			}
			spans[2*i], spans[2*i+1] = -1, 0
			continue
		}
		if n > math.MaxInt32-off {
			return nil, false, fmt.Errorf("copy tuple is larger than 2 GiB")
		}
		if err := t.fill(off + n); err != nil {
			return nil, false, err
		}
		spans[2*i], spans[2*i+1] = int32(off), int32(n)
		off += n
	}
	tuple = t.buf[t.r : t.r+off : t.r+off]
	t.r += off
	return tuple, true, nil
}

// Binary send formats.

func decodeBool(b []byte) (bool, error) {
	if len(b) != 1 {
		return false, lengthError("bool", len(b), 1)
	}
	return b[0] != 0, nil
}

func decodeInt2(b []byte) (int16, error) {
	if len(b) != 2 {
		return 0, lengthError("int2", len(b), 2)
	}
	return int16(binary.BigEndian.Uint16(b)), nil
}

func decodeInt4(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, lengthError("int4", len(b), 4)
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

func decodeInt8(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, lengthError("int8", len(b), 8)
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

func decodeFloat4(b []byte) (float32, error) {
	if len(b) != 4 {
		return 0, lengthError("float4", len(b), 4)
	}
	return math.Float32frombits(binary.BigEndian.Uint32(b)), nil
}

func decodeFloat8(b []byte) (float64, error) {
	if len(b) != 8 {
		return 0, lengthError("float8", len(b), 8)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}

func lengthError(typ string, got, want int) error {
	return fmt.Errorf("%s value has %d bytes, want %d", typ, got, want)
}

// Numeric sign words.
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
)

// unstorableError is a valid Postgres value that the column's DuckDB type
// cannot hold exactly (numeric NaN, a two-dimensional array, ...): the load
// goes on, stores NULL in its place, and leaves the column out of the
// acceleration (copySource.leaveOut).
type unstorableError struct{ what string }

func (e *unstorableError) Error() string { return e.what }

// isUnstorable reports whether err is (or wraps) an unstorableError. It is
// a function of its own so that the decode loop, which calls it only on an
// error, does not allocate its target for every value.
func isUnstorable(err error) bool {
	var u *unstorableError
	return errors.As(err, &u)
}

func unstorable(format string, args ...any) error {
	return &unstorableError{what: fmt.Sprintf(format, args...)}
}

// pow10 holds 10^0 .. 10^18.
var pow10 = func() (p [19]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// heldScale checks that the numeric in b, of a column without a declared
// scale held at scale (colType.uniform), has that display scale: Postgres
// prints each value with its own, the acceleration all with the column's.
func heldScale(b []byte, scale int) error {
	if len(b) < 8 {
		return nil // decodeNumeric says what is wrong
	}
	if sign := binary.BigEndian.Uint16(b[4:]); sign != numericPos && sign != numericNeg {
		return nil // NaN, ±Infinity: decodeNumeric says so
	}
	if ds := int(binary.BigEndian.Uint16(b[6:])); ds != scale {
		return unstorable("numeric of scale %d beside values of scale %d (the column declares no scale; the acceleration holds its values at one)", ds, scale)
	}
	return nil
}

// decodeNumeric returns the numeric in b as an unscaled integer at the given
// scale: 12.34 at scale 3 is 12340. Small values come back in small (big is
// nil); values beyond int64 come back in big. A value with more fractional
// digits than scale is an error (the column's typmod rules that out).
func decodeNumeric(b []byte, scale int) (small int64, wide *big.Int, err error) {
	if len(b) < 8 {
		return 0, nil, fmt.Errorf("numeric value has %d bytes, want at least 8", len(b))
	}
	ndigits := int(int16(binary.BigEndian.Uint16(b[0:])))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	switch sign {
	case numericPos, numericNeg:
	case numericNaN:
		return 0, nil, unstorable("numeric NaN, which DECIMAL cannot hold")
	case numericPInf:
		return 0, nil, unstorable("numeric Infinity, which DECIMAL cannot hold")
	case numericNInf:
		return 0, nil, unstorable("numeric -Infinity, which DECIMAL cannot hold")
	default:
		return 0, nil, fmt.Errorf("numeric value has sign word %#x", sign)
	}
	if ndigits < 0 || len(b) != 8+2*ndigits {
		return 0, nil, fmt.Errorf("numeric value has %d bytes for %d digits", len(b), ndigits)
	}
	// The value is sum(d[i] * 10000^(weight-i)); scaled by 10^scale each
	// digit contributes d[i] * 10^(4*(weight-i)+scale).
	var hi, lo uint64 // 128-bit magnitude
	overflow := false
	for i := range ndigits {
		d := uint64(binary.BigEndian.Uint16(b[8+2*i:]))
		if d >= 10000 {
			return 0, nil, fmt.Errorf("numeric digit %d out of range", d)
		}
		exp := 4*(weight-i) + scale
		if exp < 0 {
			if exp <= -4 {
				if d != 0 {
					return 0, nil, errors.New("numeric value has more fractional digits than the column's scale")
				}
				continue
			}
			div := pow10[-exp]
			if d%div != 0 {
				return 0, nil, errors.New("numeric value has more fractional digits than the column's scale")
			}
			d /= div
			exp = 0
		}
		// magnitude += d * 10^exp, in 128 bits.
		mhi, mlo := uint64(0), d
		for exp > 0 {
			step := min(exp, 18)
			mhi, mlo, overflow = mul128(mhi, mlo, pow10[step], overflow)
			exp -= step
		}
		var c uint64
		lo, c = bits.Add64(lo, mlo, 0)
		hi, c = bits.Add64(hi, mhi, c)
		overflow = overflow || c != 0
	}
	if overflow || hi>>63 != 0 {
		return 0, nil, unstorable("a numeric that does not fit DECIMAL(38)")
	}
	if hi == 0 && lo <= math.MaxInt64 {
		v := int64(lo)
		if sign == numericNeg {
			v = -v
		}
		return v, nil, nil
	}
	v := new(big.Int).SetUint64(hi)
	v.Lsh(v, 64)
	v.Or(v, new(big.Int).SetUint64(lo))
	if sign == numericNeg {
		v.Neg(v)
	}
	return 0, v, nil
}

// mul128 multiplies the 128-bit (hi, lo) by m, reporting overflow.
func mul128(hi, lo, m uint64, overflow bool) (uint64, uint64, bool) {
	h1, l := bits.Mul64(lo, m)
	h2, x := bits.Mul64(hi, m)
	var c uint64
	h, c := bits.Add64(h1, x, 0)
	return h, l, overflow || h2 != 0 || c != 0
}

// Postgres dates count days and timestamps count microseconds from
// 2000-01-01; DuckDB counts from 1970-01-01.
const (
	pgEpochDays   = 10957
	pgEpochMicros = pgEpochDays * 86400 * 1000000
)

// decodeDate returns days since 1970-01-01, with Postgres's ±infinity
// (math.MaxInt32 / math.MinInt32) mapped to DuckDB's (±math.MaxInt32).
func decodeDate(b []byte) (int32, error) {
	d, err := decodeInt4(b)
	if err != nil {
		return 0, err
	}
	switch d {
	case math.MaxInt32:
		return math.MaxInt32, nil
	case math.MinInt32:
		return -math.MaxInt32, nil
	}
	return d + pgEpochDays, nil // Postgres's range keeps this far from overflow
}

// decodeTimestamp returns microseconds since 1970-01-01, keeping Postgres's
// ±infinity sentinels (math.MaxInt64 / math.MinInt64) for stageExpr.
func decodeTimestamp(b []byte) (int64, error) {
	us, err := decodeInt8(b)
	if err != nil {
		return 0, err
	}
	switch us {
	case math.MaxInt64, math.MinInt64:
		return us, nil
	}
	if us > math.MaxInt64-pgEpochMicros-1 {
		return 0, unstorable("a timestamp after 294246 AD, beyond DuckDB's range")
	}
	return us + pgEpochMicros, nil
}

// decodeTime returns microseconds since midnight (0 .. 86399999999).
// 24:00:00 is a valid Postgres time, and DuckDB stores it, but duckdb-go
// reads it back as 00:00:00: it is unstorable.
func decodeTime(b []byte) (int64, error) {
	us, err := decodeInt8(b)
	if err != nil {
		return 0, err
	}
	if us == 86400*1000000 {
		return 0, unstorable("time 24:00:00, which DuckDB gives back as 00:00:00")
	}
	if us < 0 || us > 86400*1000000 {
		return 0, fmt.Errorf("time value %d µs is out of range", us)
	}
	return us, nil
}

// pgInterval is an interval's three fields, kept apart as Postgres keeps them.
type pgInterval struct {
	months, days int32
	micros       int64
}

func decodeInterval(b []byte) (pgInterval, error) {
	if len(b) != 16 {
		return pgInterval{}, lengthError("interval", len(b), 16)
	}
	return pgInterval{
		micros: int64(binary.BigEndian.Uint64(b)),
		days:   int32(binary.BigEndian.Uint32(b[8:])),
		months: int32(binary.BigEndian.Uint32(b[12:])),
	}, nil
}

// trimSpaces removes the trailing spaces of a char(n) value.
func trimSpaces(b []byte) []byte {
	n := len(b)
	for n > 0 && b[n-1] == ' ' {
		n--
	}
	return b[:n]
}

// decodeJSONB strips the version byte of a jsonb value.
func decodeJSONB(b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != 1 {
		return nil, errors.New("jsonb value has an unknown format version")
	}
	return b[1:], nil
}

// arrayElems calls fn for each element of a one-dimensional binary array
// (nil for NULL). An empty array (ndim 0) has no elements.
// Multi-dimensional arrays and lower bounds other than 1 are errors: a LIST
// cannot keep them.
func arrayElems(b []byte, elemOID uint32, fn func(i, n int, elem []byte) error) error {
	if len(b) < 12 {
		return fmt.Errorf("array value has %d bytes, want at least 12", len(b))
	}
	ndim := int32(binary.BigEndian.Uint32(b))
	oid := binary.BigEndian.Uint32(b[8:])
	if oid != elemOID {
		return fmt.Errorf("array elements have type OID %d, want %d", oid, elemOID)
	}
	switch ndim {
	case 0:
		return fn(0, 0, nil)
	case 1:
	default:
		return unstorable("a %d-dimensional array; a DuckDB LIST holds one dimension", ndim)
	}
	if len(b) < 20 {
		return fmt.Errorf("array value has %d bytes, want at least 20", len(b))
	}
	n := int(int32(binary.BigEndian.Uint32(b[12:])))
	lbound := int32(binary.BigEndian.Uint32(b[16:]))
	if lbound != 1 {
		return unstorable("an array with lower bound %d; a DuckDB LIST starts at 1", lbound)
	}
	if n < 0 {
		return fmt.Errorf("array has %d elements", n)
	}
	p := b[20:]
	for i := range n {
		if len(p) < 4 {
			return errors.New("array value is truncated")
		}
		l := int(int32(binary.BigEndian.Uint32(p)))
		p = p[4:]
		var elem []byte
		if l >= 0 {
			if len(p) < l {
				return errors.New("array value is truncated")
			}
			elem = p[:l:l]
			p = p[l:]
		} else if l != -1 {
			return fmt.Errorf("array element has length %d", l)
		}
		if err := fn(i, n, elem); err != nil {
			return err
		}
	}
	return nil
}
