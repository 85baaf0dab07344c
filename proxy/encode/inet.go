package encode

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// appendInet appends an inet or cidr, which the acceleration holds as the
// text Postgres prints (accelerator.InetText): as it is in text format,
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

// inetSend is inet_send's form of the printed inet or cidr s.
func inetSend(s string, cidr bool) ([]byte, error) {
	addrText, bitsText, masked := strings.Cut(s, "/")
	addr, err := netip.ParseAddr(addrText)
	if err != nil || addr.Zone() != "" {
		return nil, fmt.Errorf("%w: inet %q", ErrUnsupported, s)
	}
	family, size := byte(2), 4
	if addr.Is6() {
		family, size = 3, 16
	}
	bits := size * 8
	if masked {
		n, err := strconv.Atoi(bitsText)
		if err != nil || n < 0 || n > bits {
			return nil, fmt.Errorf("%w: inet %q", ErrUnsupported, s)
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
