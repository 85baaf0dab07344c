package pgdef

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// An array's binary form (array_send), which the COPY and change streams
// carry, is
//
//	int32 ndim, int32 has-nulls flag, uint32 element type OID,
//	ndim × (int32 length, int32 lower bound),
//	each element: int32 length (-1: NULL) and its binary form
//
// in row-major order. ArrayText prints it as array_out does
// (utils/adt/arrayfuncs.c): "[l:u]..." dimension decorations first when a
// lower bound is not 1, then nested braces; NULL elements as NULL; an
// element quoted (with " and \ escaped) when it is empty, is "NULL" in any
// case, or holds {, }, ",", ", \ or white space.

// ArrayElemPrintable reports whether ArrayText prints arrays of this
// element type.
func ArrayElemPrintable(oid uint32) bool {
	switch oid {
	case OIDBool, OIDName, OIDInt8, OIDInt2, OIDInt4, OIDText, OIDBpchar, OIDVarchar, OIDNumeric, OIDInet, OIDCidr:
		return true
	}
	return false
}

// ArrayOf checks that b, array_send's form, holds elements of type
// elemOID, and returns the error to give otherwise.
func ArrayOf(b []byte, elemOID uint32) error {
	if len(b) < 12 {
		return fmt.Errorf("array: %d bytes, want at least 12", len(b))
	}
	if oid := binary.BigEndian.Uint32(b[8:]); oid != elemOID {
		return fmt.Errorf("array elements have type OID %d, want %d", oid, elemOID)
	}
	return nil
}

// maxArrayDims is Postgres's MAXDIM.
const maxArrayDims = 6

// ArrayText prints an array of array_send's binary form as array_out does,
// for the element types ArrayElemPrintable accepts. It checks the whole
// form: an error means the bytes are not such an array.
func ArrayText(b []byte) (string, error) {
	if len(b) < 12 {
		return "", fmt.Errorf("array: %d bytes, want at least 12", len(b))
	}
	ndim := int(int32(binary.BigEndian.Uint32(b)))
	elemOID := binary.BigEndian.Uint32(b[8:])
	if !ArrayElemPrintable(elemOID) {
		return "", fmt.Errorf("array: elements of type OID %d are not printed here", elemOID)
	}
	if ndim < 0 || ndim > maxArrayDims {
		return "", fmt.Errorf("array: %d dimensions", ndim)
	}
	if ndim == 0 {
		if len(b) != 12 {
			return "", errors.New("array: an empty array with elements")
		}
		return "{}", nil
	}
	if len(b) < 12+8*ndim {
		return "", errors.New("array: truncated dimensions")
	}
	dims := make([]int, ndim)
	var out strings.Builder
	total := 1
	decorated := false
	for d := range ndim {
		n := int(int32(binary.BigEndian.Uint32(b[12+8*d:])))
		lb := int(int32(binary.BigEndian.Uint32(b[16+8*d:])))
		if n < 0 || n > 1<<27 || total*max(n, 1) > 1<<27 {
			return "", fmt.Errorf("array: dimension of %d elements", n)
		}
		dims[d] = n
		total *= n
		decorated = decorated || lb != 1
	}
	if total == 0 {
		return "", errors.New("array: a dimension of no elements")
	}
	if decorated {
		for d := range ndim {
			lb := int(int32(binary.BigEndian.Uint32(b[16+8*d:])))
			fmt.Fprintf(&out, "[%d:%d]", lb, lb+dims[d]-1)
		}
		out.WriteByte('=')
	}
	p := b[12+8*ndim:]
	// stride[d]: the elements of one sub-array of dimension d.
	stride := make([]int, ndim)
	stride[ndim-1] = dims[ndim-1]
	for d := ndim - 2; d >= 0; d-- {
		stride[d] = stride[d+1] * dims[d]
	}
	for range ndim {
		out.WriteByte('{')
	}
	for e := range total {
		if e > 0 {
			// Close the sub-arrays the previous element ended, and
			// open the next ones.
			k := 0
			for d := ndim - 1; d > 0 && e%stride[d] == 0; d-- {
				k++
			}
			for range k {
				out.WriteByte('}')
			}
			out.WriteByte(',')
			for range k {
				out.WriteByte('{')
			}
		}
		if len(p) < 4 {
			return "", errors.New("array: truncated elements")
		}
		l := int(int32(binary.BigEndian.Uint32(p)))
		p = p[4:]
		switch {
		case l == -1:
			out.WriteString("NULL")
		case l < 0 || l > len(p):
			return "", fmt.Errorf("array: element of %d bytes", l)
		default:
			s, err := elemText(elemOID, p[:l])
			if err != nil {
				return "", err
			}
			writeArrayElem(&out, s)
			p = p[l:]
		}
	}
	if len(p) != 0 {
		return "", errors.New("array: bytes after the last element")
	}
	for range ndim {
		out.WriteByte('}')
	}
	return out.String(), nil
}

// elemText prints one element's binary form as its output function does.
func elemText(oid uint32, b []byte) (string, error) {
	fixed := func(n int) error {
		if len(b) != n {
			return fmt.Errorf("array: element of %d bytes, want %d", len(b), n)
		}
		return nil
	}
	switch oid {
	case OIDBool:
		if err := fixed(1); err != nil {
			return "", err
		}
		if b[0] != 0 {
			return "t", nil
		}
		return "f", nil
	case OIDInt2:
		if err := fixed(2); err != nil {
			return "", err
		}
		return strconv.Itoa(int(int16(binary.BigEndian.Uint16(b)))), nil
	case OIDInt4:
		if err := fixed(4); err != nil {
			return "", err
		}
		return strconv.Itoa(int(int32(binary.BigEndian.Uint32(b)))), nil
	case OIDInt8:
		if err := fixed(8); err != nil {
			return "", err
		}
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(b)), 10), nil
	case OIDNumeric:
		return NumericText(b)
	case OIDInet, OIDCidr:
		return InetText(b)
	}
	return string(b), nil // text, varchar, name, bpchar: the characters
}

// writeArrayElem writes s as array_out writes an element: quoted when it
// must be.
func writeArrayElem(out *strings.Builder, s string) {
	quote := s == "" || strings.EqualFold(s, "NULL")
	for i := 0; i < len(s) && !quote; i++ {
		switch s[i] {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			quote = true
		}
	}
	if !quote {
		out.WriteString(s)
		return
	}
	out.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			out.WriteByte('\\')
		}
		out.WriteByte(s[i])
	}
	out.WriteByte('"')
}
