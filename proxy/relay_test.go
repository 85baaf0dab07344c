package proxy

import (
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// The copy of a received message must equal it and share none of the
// receive buffer that the next Receive overwrites.
func TestCopyBackendMessage(t *testing.T) {
	for _, msg := range []pgproto3.BackendMessage{
		&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{
			{Name: []byte("aid"), TableOID: 16390, TableAttributeNumber: 1, DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1},
			{Name: []byte(""), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1, Format: 1},
			{Name: []byte("abalance"), TableOID: 16390, TableAttributeNumber: 3, DataTypeOID: 1700, DataTypeSize: -1, TypeModifier: 655366},
		}},
		&pgproto3.RowDescription{},
		&pgproto3.ParameterDescription{ParameterOIDs: []uint32{23, 25}},
		&pgproto3.DataRow{Values: [][]byte{[]byte("1"), nil, {}}},
		&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")},
		&pgproto3.ErrorResponse{Severity: "ERROR", Code: "42P01", Message: `relation "x" does not exist`},
		&pgproto3.ReadyForQuery{TxStatus: 'T'},
	} {
		// Decode msg from a buffer, as Receive does, then scribble over
		// the buffer once the copy is made.
		enc, err := msg.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		received := reflect.New(reflect.TypeOf(msg).Elem()).Interface().(pgproto3.BackendMessage)
		if err := received.Decode(enc[5:]); err != nil {
			t.Fatalf("%T: %v", msg, err)
		}
		want, _ := received.Encode(nil)
		got := copyBackendMessage(received)
		for i := range enc {
			enc[i] = 'x'
		}
		if reflect.TypeOf(got) != reflect.TypeOf(msg) {
			t.Fatalf("copy of %T is a %T", msg, got)
		}
		gotEnc, err := got.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(gotEnc) != string(want) {
			t.Errorf("%T: copy encodes as %q, want %q", msg, gotEnc, want)
		}
	}
}
