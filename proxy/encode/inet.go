package encode

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/pgaccel/pgaccel/pgdef"
)

// appendInet appends an inet or cidr, which the acceleration holds as the
// text Postgres prints (pgdef.InetText): as it is in text format,
// and in inet_send's binary form (family 2 or 3, bits, is_cidr, address
// length, address) otherwise.
func appendInet(dst []byte, c *column, v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, wrongValue(v, "inet")
	}
	if !c.binary {
		return append(dst, s...), nil
	}
	b, err := inetSend(s, c.cidr)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// inetSend is inet_send's form of an inet or cidr written plainly: an
// address (IPv4 dotted, IPv6 as net/netip reads it, no zone) with an
// optional /bits in decimal. The acceleration's printed values are such.
func inetSend(s string, cidr bool) ([]byte, error) {
	bad := fmt.Errorf("%w: inet %q", errBadInput, s)
	addrText, bitsText, masked := strings.Cut(s, "/")
	addr, err := netip.ParseAddr(addrText)
	if err != nil || addr.Zone() != "" {
		return nil, bad
	}
	family, size := byte(2), 4
	if addr.Is6() {
		family, size = 3, 16
	}
	bits := size * 8
	if masked {
		n, err := strconv.Atoi(bitsText)
		if err != nil || n < 0 || n > bits || strconv.Itoa(n) != bitsText {
			return nil, bad
		}
		bits = n
	}
	out := []byte{family, byte(bits), 0, byte(size)}
	if cidr {
		out[2] = 1
	}
	raw := addr.As16()
	return append(out, raw[16-size:]...), nil
}

// inetParamText is the printed form (pgdef.InetText) of an inet or
// cidr parameter sent as text, which the acceleration compares with the
// printed values it holds. Only inetSend's plain forms are decoded; a
// cidr needs its /bits and no bits set past them (Postgres's cidr_in
// supplies a classful mask, or rejects such input). Anything else goes to
// the origin.
func inetParamText(s string, cidr bool) (any, error) {
	if cidr && !strings.Contains(s, "/") {
		return nil, fmt.Errorf("%w: cidr %q without its mask", errBadInput, s)
	}
	b, err := inetSend(s, cidr)
	if err != nil {
		return nil, err
	}
	return inetParamBinary(b, cidr)
}

// inetParamBinary is the printed form of an inet or cidr parameter sent
// in inet_send's binary form; a cidr with bits set past its mask is
// refused, as cidr_recv refuses it.
func inetParamBinary(b []byte, cidr bool) (any, error) {
	if len(b) >= 4 {
		b = append([]byte(nil), b...)
		b[2] = 0
		if cidr {
			b[2] = 1
			if !hostBitsClear(b[4:], int(b[1])) {
				return nil, fmt.Errorf("%w: cidr with bits set past its mask", errBadInput)
			}
		}
	}
	s, err := pgdef.InetText(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadInput, err)
	}
	return s, nil
}

// hostBitsClear reports whether addr has no bit set past the first bits.
func hostBitsClear(addr []byte, bits int) bool {
	for i, x := range addr {
		keep := min(max(bits-8*i, 0), 8)
		if x&^byte(0xff<<(8-keep)) != 0 {
			return false
		}
	}
	return true
}
