package pgdef

import (
	"net/netip"
	"testing"
)

// TestInetText: the printed forms of inet_out and cidr_out for the cases
// inet_net_ntop.c singles out (the full comparison with Postgres is
// integration's TestInetText_MatchesPostgres).
func TestInetText(t *testing.T) {
	bin := func(addr string, bits int, cidr bool) []byte {
		a := netip.MustParseAddr(addr)
		raw := a.As16()
		if a.Is4() {
			return append([]byte{2, byte(bits), boolByte(cidr), 4}, raw[12:]...)
		}
		return append([]byte{3, byte(bits), boolByte(cidr), 16}, raw[:]...)
	}
	for _, c := range []struct {
		addr string
		bits int
		cidr bool
		want string
	}{
		{"10.0.0.1", 32, false, "10.0.0.1"},
		{"10.0.0.1", 32, true, "10.0.0.1/32"},
		{"10.0.0.0", 8, true, "10.0.0.0/8"},
		{"192.168.1.5", 24, false, "192.168.1.5/24"},
		{"::", 128, false, "::"},
		{"::", 0, true, "::/0"},
		{"::1", 128, false, "::1"},
		{"1::", 128, false, "1::"},
		{"::ffff:1.2.3.4", 128, false, "::ffff:1.2.3.4"},
		{"::1.2.3.4", 128, false, "::1.2.3.4"},
		{"1:0:0:2::3", 128, false, "1:0:0:2::3"},
		{"1:0:2:0:3:0:4:0", 128, false, "1:0:2:0:3:0:4:0"},
		{"2001:db8::", 32, true, "2001:db8::/32"},
		{"0:0:1::", 64, false, "0:0:1::/64"},
	} {
		if got, err := InetText(bin(c.addr, c.bits, c.cidr)); err != nil || got != c.want {
			t.Errorf("%s/%d cidr %v: %q (%v), want %q", c.addr, c.bits, c.cidr, got, err, c.want)
		}
	}
	for _, b := range [][]byte{nil, {2, 8, 0}, {2, 33, 0, 4, 1, 2, 3, 4}, {3, 8, 0, 4, 1, 2, 3, 4}, {2, 8, 0, 4, 1}} {
		if s, err := InetText(b); err == nil {
			t.Errorf("%v: %q, want an error", b, s)
		}
	}
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
