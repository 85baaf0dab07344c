package encode

import (
	"fmt"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

const hexDigits = "0123456789abcdef"

// jsonbVersion is the first byte of jsonb's binary format.
const jsonbVersion = 1

// appendText appends a string for text, varchar, name, json, jsonb and
// bpchar. The bytes are the same in text and binary format except for jsonb,
// whose binary form is the version byte 1 followed by the text.
//
// bpchar(n) values are padded with spaces to n characters, as Postgres
// stores them (an acceleration stores them with trailing spaces removed).
// A value longer than n characters is accepted only if the excess is spaces.
// Without a typmod (an expression of type bpchar) the string is sent as is.
func appendText(dst []byte, c *column, v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, wrongValue(v, "text")
	}
	switch c.kind {
	case kindJSONB:
		if c.binary {
			dst = append(dst, jsonbVersion)
		}
	case kindBpchar:
		if c.charLen >= 0 {
			return appendBpchar(dst, s, c.charLen)
		}
	}
	return append(dst, s...), nil
}

// appendBpchar appends s padded or trimmed to n characters.
func appendBpchar(dst []byte, s string, n int) ([]byte, error) {
	chars := utf8.RuneCountInString(s)
	if chars > n {
		// Cut after the n-th character; only spaces may follow.
		cut := 0
		for i := 0; i < n; i++ {
			_, size := utf8.DecodeRuneInString(s[cut:])
			cut += size
		}
		for i := cut; i < len(s); i++ {
			if s[i] != ' ' {
				return nil, fmt.Errorf("%w: value longer than character(%d)", ErrUnsupported, n)
			}
		}
		return append(dst, s[:cut]...), nil
	}
	dst = append(dst, s...)
	for ; chars < n; chars++ {
		dst = append(dst, ' ')
	}
	return dst, nil
}

// appendBytea appends a bytea value. Binary is the raw bytes. Text is
// byteaout: with bytea_output hex, \x and two lowercase hex digits per byte;
// with escape, \\ for a backslash, \ooo (octal) for bytes below 0x20 or
// above 0x7e, other bytes as themselves.
func appendBytea(dst []byte, c *column, v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, wrongValue(v, "bytea")
	}
	if c.binary {
		return append(dst, b...), nil
	}
	if c.f.byteaHex {
		dst = append(dst, '\\', 'x')
		for _, x := range b {
			dst = append(dst, hexDigits[x>>4], hexDigits[x&15])
		}
		return dst, nil
	}
	for _, x := range b {
		switch {
		case x == '\\':
			dst = append(dst, '\\', '\\')
		case x < 0x20 || x > 0x7e:
			dst = append(dst, '\\', '0'+x>>6, '0'+(x>>3)&7, '0'+x&7)
		default:
			dst = append(dst, x)
		}
	}
	return dst, nil
}

// appendUUID appends a uuid: 16 bytes in binary, lowercase
// 8-4-4-4-12 hex digits in text. duckdb-go returns UUID columns as []byte.
func appendUUID(dst []byte, c *column, v any) ([]byte, error) {
	var u []byte
	switch x := v.(type) {
	case []byte:
		u = x
	case duckdb.UUID:
		u = x[:]
	case *duckdb.UUID:
		if x == nil {
			return nil, wrongValue(v, "uuid")
		}
		u = x[:]
	}
	if len(u) != 16 {
		return nil, wrongValue(v, "uuid")
	}
	if c.binary {
		return append(dst, u...), nil
	}
	for i, x := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[x>>4], hexDigits[x&15])
	}
	return dst, nil
}
