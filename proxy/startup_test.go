package proxy

import (
	"bytes"
	"encoding/binary"
	"maps"
	"testing"
)

// TestParseStartup_AsPostgres: the layouts Postgres accepts and refuses
// (ProcessStartupPacket), with the parameters it reads.
func TestParseStartup_AsPostgres(t *testing.T) {
	pkt := func(version uint32, body string) []byte {
		b := binary.BigEndian.AppendUint32(make([]byte, 4), version)
		b = append(b, body...)
		binary.BigEndian.PutUint32(b, uint32(len(b)))
		return b
	}
	for _, tc := range []struct {
		name   string
		pkt    []byte
		ok     bool
		params map[string]string
	}{
		{"user and database", pkt(3<<16, "user\x00u\x00database\x00d\x00\x00"), true, map[string]string{"user": "u", "database": "d"}},
		{"no parameters", pkt(3<<16, "\x00"), true, map[string]string{}},
		{"later pair wins", pkt(3<<16, "user\x00a\x00user\x00b\x00\x00"), true, map[string]string{"user": "b"}},
		{"newer minor version", pkt(3<<16|2, "user\x00u\x00\x00"), true, map[string]string{"user": "u"}},
		{"no terminator", pkt(3<<16, "user\x00u\x00"), false, nil},
		{"value missing", pkt(3<<16, "user\x00"), false, nil},
		{"bytes after the terminator", pkt(3<<16, "user\x00u\x00\x00x"), false, nil},
		{"protocol 2", pkt(2<<16, "user\x00u\x00\x00"), false, nil},
		{"protocol 4", pkt(4<<16, "user\x00u\x00\x00"), false, nil},
	} {
		m, ok := parseStartup(tc.pkt)
		if ok != tc.ok {
			t.Errorf("%s: ok %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if len(m.Parameters) != len(tc.params) {
			t.Errorf("%s: %v, want %v", tc.name, m.Parameters, tc.params)
		}
		for k, v := range tc.params {
			if m.Parameters[k] != v {
				t.Errorf("%s: %v, want %v", tc.name, m.Parameters, tc.params)
			}
		}
	}
}

// FuzzStartupPacket feeds arbitrary bytes to the startup-phase reader and
// parser, as a client could send them: no panic, and a packet taken for a
// StartupMessage says the same once encoded again.
func FuzzStartupPacket(f *testing.F) {
	for _, body := range []string{"user\x00u\x00database\x00d\x00\x00", "\x00", "user\x00", "user\x00a\x00user\x00b\x00\x00", "x\x00\x00\x00"} {
		b := binary.BigEndian.AppendUint32(make([]byte, 4), 3<<16)
		b = append(b, body...)
		binary.BigEndian.PutUint32(b, uint32(len(b)))
		f.Add(b)
	}
	f.Add([]byte{0, 0, 0, 8, 4, 210, 22, 47}) // SSLRequest
	f.Add([]byte{0x58, 0, 0, 0, 4, 0, 0, 0})  // Terminate where the StartupMessage would be
	f.Fuzz(func(t *testing.T, data []byte) {
		pkt, err := readStartupPacket(bytes.NewReader(data))
		if err != nil {
			return
		}
		m, ok := parseStartup(pkt)
		if !ok {
			return
		}
		again, err := m.Encode(nil)
		if err != nil {
			return // parameters pgproto3 will not encode (a NUL cannot be in one)
		}
		m2, ok := parseStartup(again)
		if !ok || !maps.Equal(m.Parameters, m2.Parameters) || m.ProtocolVersion != m2.ProtocolVersion {
			t.Fatalf("%q: parsed %+v, encoded and parsed again %+v (%v)", pkt, m, m2, ok)
		}
	})
}
