package encode

import (
	"encoding/binary"
	"math"
)

// appendArray appends a one-dimensional array from a DuckDB LIST ([]any).
//
// Text: Postgres's array_out syntax, {a,b,NULL}, quoting an element (with
// backslashes before " and \) when it is empty, equals NULL ignoring case,
// or contains {, }, ",", ", \ or white space. Binary: array_send's
// ndim, has-null flag, element OID, length and lower bound 1, then each
// element with its length (-1 for NULL); an empty array has ndim 0.
func (e *Encoder) appendArray(dst []byte, c *column, v any) ([]byte, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, wrongValue(v, "array")
	}
	var err error
	if c.binary {
		hasNull := uint32(0)
		for _, el := range list {
			if el == nil {
				hasNull = 1
				break
			}
		}
		if len(list) == 0 {
			dst = binary.BigEndian.AppendUint32(dst, 0)
			dst = binary.BigEndian.AppendUint32(dst, 0)
			return binary.BigEndian.AppendUint32(dst, c.elemOID), nil
		}
		dst = binary.BigEndian.AppendUint32(dst, 1)
		dst = binary.BigEndian.AppendUint32(dst, hasNull)
		dst = binary.BigEndian.AppendUint32(dst, c.elemOID)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(list)))
		dst = binary.BigEndian.AppendUint32(dst, 1)
		for _, el := range list {
			if el == nil {
				dst = binary.BigEndian.AppendUint32(dst, math.MaxUint32)
				continue
			}
			at := len(dst)
			dst = append(dst, 0, 0, 0, 0)
			if dst, err = e.appendScalar(dst, c, el); err != nil {
				return nil, err
			}
			binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
		}
		return dst, nil
	}
	dst = append(dst, '{')
	for i, el := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		if el == nil {
			dst = append(dst, "NULL"...)
			continue
		}
		at := len(dst)
		if dst, err = e.appendScalar(dst, c, el); err != nil {
			return nil, err
		}
		if needsQuote(dst[at:]) {
			e.scratch = append(e.scratch[:0], dst[at:]...)
			dst = append(dst[:at], '"')
			for _, ch := range e.scratch {
				if ch == '"' || ch == '\\' {
					dst = append(dst, '\\')
				}
				dst = append(dst, ch)
			}
			dst = append(dst, '"')
		}
	}
	return append(dst, '}'), nil
}

// needsQuote reports whether array_out would quote the element text s.
func needsQuote(s []byte) bool {
	if len(s) == 0 {
		return true
	}
	if len(s) == 4 && (s[0]|0x20) == 'n' && (s[1]|0x20) == 'u' && (s[2]|0x20) == 'l' && (s[3]|0x20) == 'l' {
		return true
	}
	for _, ch := range s {
		switch ch {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		}
	}
	return false
}
