package accelerator

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// writeFunc decodes a non-NULL field into row of column col of a chunk.
type writeFunc func(ch duckdb.DataChunk, col, row int, b []byte) error

// writerFor returns the decoder of a column's binary values. With
// asciiOnly, text with bytes beyond ASCII is unstorable (see
// LoadOptions.ASCIIOnly).
func writerFor(t colType, asciiOnly bool) (writeFunc, error) {
	if t.elem != nil {
		val, err := valueFor(*t.elem, asciiOnly)
		if err != nil {
			return nil, err
		}
		elemOID := t.elemOID
		return func(ch duckdb.DataChunk, col, row int, b []byte) error {
			var list []any
			err := arrayElems(b, elemOID, func(i, n int, elem []byte) error {
				if list == nil {
					list = make([]any, 0, n)
				}
				if n == 0 {
					return nil
				}
				if elem == nil {
					list = append(list, nil)
					return nil
				}
				v, err := val(elem)
				if err != nil {
					return fmt.Errorf("element %d: %w", i+1, err)
				}
				list = append(list, v)
				return nil
			})
			if err != nil {
				return err
			}
			return duckdb.SetChunkValue(ch, col, row, list)
		}, nil
	}
	switch t.kind {
	case kindBool:
		return scalar(decodeBool), nil
	case kindInt2:
		return scalar(decodeInt2), nil
	case kindInt4:
		return scalar(decodeInt4), nil
	case kindInt8:
		return scalar(decodeInt8), nil
	case kindFloat4:
		return scalar(decodeFloat4), nil
	case kindFloat8:
		return scalar(decodeFloat8), nil
	case kindNumeric:
		scale, wide := int(t.scale), t.precision > 18
		return func(ch duckdb.DataChunk, col, row int, b []byte) error {
			if t.uniform {
				if err := heldScale(b, scale); err != nil {
					return err
				}
			}
			small, bigv, err := decodeNumeric(b, scale)
			if err != nil {
				return err
			}
			if bigv == nil {
				return duckdb.SetChunkValue(ch, col, row, small)
			}
			if !wide {
				return unstorable("a numeric that does not fit %s", t.duck)
			}
			return duckdb.SetChunkValue(ch, col, row, bigv)
		}, nil
	case kindText:
		if asciiOnly {
			return scalar(validText), nil
		}
		return func(ch duckdb.DataChunk, col, row int, b []byte) error {
			return duckdb.SetChunkValue(ch, col, row, b)
		}, nil
	case kindBytea:
		return func(ch duckdb.DataChunk, col, row int, b []byte) error {
			return duckdb.SetChunkValue(ch, col, row, b)
		}, nil
	case kindBpchar:
		if asciiOnly {
			return scalar(func(b []byte) ([]byte, error) { return validText(trimSpaces(b)) }), nil
		}
		return func(ch duckdb.DataChunk, col, row int, b []byte) error {
			return duckdb.SetChunkValue(ch, col, row, trimSpaces(b))
		}, nil
	case kindJSONB:
		if asciiOnly {
			return scalar(func(b []byte) ([]byte, error) {
				j, err := decodeJSONB(b)
				if err != nil {
					return nil, err
				}
				return validText(j)
			}), nil
		}
		return scalar(decodeJSONB), nil
	case kindDate:
		return func(ch duckdb.DataChunk, col, row int, b []byte) error {
			d, err := decodeDate(b)
			if err != nil {
				return err
			}
			return duckdb.SetChunkValue(ch, col, row, time.Unix(int64(d)*86400, 0))
		}, nil
	case kindTime:
		return scalar(decodeTime), nil
	case kindTimestamp, kindTimestamptz:
		return scalar(decodeTimestamp), nil
	case kindInterval:
		return func(ch duckdb.DataChunk, col, row int, b []byte) error {
			iv, err := decodeInterval(b)
			if err != nil {
				return err
			}
			return duckdb.SetChunkValue(ch, col, row, duckdb.Interval{Months: iv.months, Days: iv.days, Micros: iv.micros})
		}, nil
	case kindUUID:
		return func(ch duckdb.DataChunk, col, row int, b []byte) error {
			if len(b) != 16 {
				return lengthError("uuid", len(b), 16)
			}
			return duckdb.SetChunkValue(ch, col, row, b)
		}, nil
	case kindInet:
		return scalar(pgdef.InetText), nil
	case kindNumericText:
		return scalar(pgdef.NumericText), nil
	case kindArrayBinary:
		return func(ch duckdb.DataChunk, col, row int, b []byte) error {
			// Checked whole here; the encoder then trusts the bytes.
			if err := pgdef.ArrayOf(b, t.elemOID); err != nil {
				return err
			}
			if _, err := pgdef.ArrayText(b); err != nil {
				return err
			}
			return duckdb.SetChunkValue(ch, col, row, b)
		}, nil
	}
	return nil, fmt.Errorf("no decoder for %s", t.duck)
}

// scalar makes a writeFunc of a decoder whose result DuckDB takes as is.
func scalar[T any](decode func([]byte) (T, error)) writeFunc {
	return func(ch duckdb.DataChunk, col, row int, b []byte) error {
		v, err := decode(b)
		if err != nil {
			return err
		}
		return duckdb.SetChunkValue(ch, col, row, v)
	}
}

// validText returns b when it is ASCII, else an unstorableError.
func validText(b []byte) ([]byte, error) {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return nil, unstorable("text with bytes beyond ASCII in a SQL_ASCII database, where Postgres takes each byte for a character and DuckDB reads UTF-8")
		}
	}
	return b, nil
}

// valueFor returns the decoder of an array element, as the Go value a LIST
// child of the element's staged type takes.
func valueFor(t colType, asciiOnly bool) (func([]byte) (any, error), error) {
	if asciiOnly {
		switch t.kind {
		case kindText, kindBpchar, kindJSONB:
			plain, err := valueFor(t, false)
			if err != nil {
				return nil, err
			}
			return func(b []byte) (any, error) {
				v, err := plain(b)
				if s, ok := v.(string); ok && err == nil {
					if _, err := validText([]byte(s)); err != nil {
						return nil, err
					}
				}
				return v, err
			}, nil
		}
	}
	box := func(f func([]byte) (any, error)) (func([]byte) (any, error), error) { return f, nil }
	switch t.kind {
	case kindBool:
		return box(func(b []byte) (any, error) { return decodeBool(b) })
	case kindInt2:
		return box(func(b []byte) (any, error) { return decodeInt2(b) })
	case kindInt4:
		return box(func(b []byte) (any, error) { return decodeInt4(b) })
	case kindInt8:
		return box(func(b []byte) (any, error) { return decodeInt8(b) })
	case kindFloat4:
		return box(func(b []byte) (any, error) { return decodeFloat4(b) })
	case kindFloat8:
		return box(func(b []byte) (any, error) { return decodeFloat8(b) })
	case kindNumeric:
		scale, wide := int(t.scale), t.precision > 18
		return box(func(b []byte) (any, error) {
			if t.uniform {
				if err := heldScale(b, scale); err != nil {
					return nil, err
				}
			}
			small, bigv, err := decodeNumeric(b, scale)
			switch {
			case err != nil:
				return nil, err
			case bigv == nil:
				return small, nil
			case !wide:
				return nil, fmt.Errorf("numeric value does not fit %s", t.duck)
			}
			return bigv, nil
		})
	case kindText:
		return box(func(b []byte) (any, error) { return string(b), nil })
	case kindBpchar:
		return box(func(b []byte) (any, error) { return string(trimSpaces(b)), nil })
	case kindJSONB:
		return box(func(b []byte) (any, error) {
			j, err := decodeJSONB(b)
			return string(j), err
		})
	case kindBytea:
		return box(func(b []byte) (any, error) { return append([]byte(nil), b...), nil })
	case kindDate:
		return box(func(b []byte) (any, error) {
			d, err := decodeDate(b)
			return time.Unix(int64(d)*86400, 0), err
		})
	case kindTime:
		return box(func(b []byte) (any, error) { return decodeTime(b) })
	case kindTimestamp, kindTimestamptz:
		return box(func(b []byte) (any, error) { return decodeTimestamp(b) })
	case kindInterval:
		return box(func(b []byte) (any, error) {
			iv, err := decodeInterval(b)
			return duckdb.Interval{Months: iv.months, Days: iv.days, Micros: iv.micros}, err
		})
	case kindUUID:
		return box(func(b []byte) (any, error) {
			if len(b) != 16 {
				return nil, lengthError("uuid", len(b), 16)
			}
			return append([]byte(nil), b...), nil
		})
	}
	return nil, fmt.Errorf("no decoder for %s", t.duck)
}
