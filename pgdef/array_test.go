package pgdef

import (
	"encoding/binary"
	"testing"
)

// arrayBytes is array_send's form of an int4 array of the given
// dimensions and lower bounds, elements 1, 2, ... (0 stands for NULL).
func arrayBytes(dims, lbounds []int32, elems ...int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(dims)))
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, OIDInt4)
	for i := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(dims[i]))
		b = binary.BigEndian.AppendUint32(b, uint32(lbounds[i]))
	}
	for _, e := range elems {
		if e == 0 {
			b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
			continue
		}
		b = binary.BigEndian.AppendUint32(b, 4)
		b = binary.BigEndian.AppendUint32(b, uint32(e))
	}
	return b
}

// TestArrayText: array_out's forms of dimensions, bounds and NULLs (the
// full comparison with Postgres is integration's
// TestArrayText_MatchesPostgres).
func TestArrayText(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{arrayBytes(nil, nil), "{}"},
		{arrayBytes([]int32{3}, []int32{1}, 1, 0, 3), "{1,NULL,3}"},
		{arrayBytes([]int32{2, 2}, []int32{1, 1}, 1, 2, 3, 4), "{{1,2},{3,4}}"},
		{arrayBytes([]int32{2, 1, 2}, []int32{1, 1, 1}, 1, 2, 3, 4), "{{{1,2}},{{3,4}}}"},
		{arrayBytes([]int32{2}, []int32{0}, 5, 6), "[0:1]={5,6}"},
	} {
		if got, err := ArrayText(c.b); err != nil || got != c.want {
			t.Errorf("%x: %q, %v; want %q", c.b, got, err, c.want)
		}
	}
	for _, bad := range [][]byte{nil, arrayBytes([]int32{2}, []int32{1}, 1), arrayBytes([]int32{0, 2}, []int32{1, 1}), append(arrayBytes([]int32{1}, []int32{1}, 1), 0)} {
		if got, err := ArrayText(bad); err == nil {
			t.Errorf("%x: %q, want an error", bad, got)
		}
	}
}

// FuzzArrayText: any bytes give an error or a text, never a panic.
func FuzzArrayText(f *testing.F) {
	f.Add(arrayBytes([]int32{2, 2}, []int32{1, 1}, 1, 2, 3, 0))
	f.Add(arrayBytes([]int32{2}, []int32{-3}, 5, 6))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := ArrayText(b); err == nil && s == "" {
			t.Fatalf("%x: empty text", b)
		}
	})
}
