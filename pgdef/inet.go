// Package pgdef is Postgres's vocabulary that the accelerator, the planner,
// refresh, auth and the proxy share (PROXY-REDESIGN.md), each declared
// once: the type OIDs (oid.go), the SQLSTATEs with their class predicates
// (sqlstate.go), the names of the pgaccel_* DuckDB functions that the
// accelerator registers and the planner writes (funcs.go), and the printed
// forms of inet, cidr and arrays and numeric's helpers. A leaf: it imports
// nothing of pgaccel's (internal/importrules checks it).
package pgdef

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// inet and cidr print (utils/adt/network.c inet_out and cidr_out, and
// inet_net_ntop.c) IPv4 as four decimal octets, IPv6 in hex words with the
// longest run of two or more zero words (the first of equal ones) as "::"
// and an embedded IPv4 address dotted, and "/bits" unless the mask covers
// the whole address of an inet (a cidr always has it). Their binary form
// (inet_send), which the COPY and change streams carry and clients may
// send, is
//
//	family (2: IPv4, 3: IPv6), bits, is_cidr, address length (4, 16), address

// InetText prints an inet or cidr value of inet_send's binary form as
// inet_out or cidr_out does.
func InetText(b []byte) (string, error) {
	if len(b) < 4 {
		return "", errors.New("inet: value shorter than its header")
	}
	family, bits, isCidr, n := b[0], int(b[1]), b[2] != 0, int(b[3])
	addr := b[4:]
	if len(addr) != n {
		return "", fmt.Errorf("inet: %d address bytes, header says %d", len(addr), n)
	}
	var s string
	switch {
	case family == 2 && n == 4 && bits <= 32:
		s = strconv.Itoa(int(addr[0])) + "." + strconv.Itoa(int(addr[1])) + "." + strconv.Itoa(int(addr[2])) + "." + strconv.Itoa(int(addr[3]))
		if bits != 32 {
			s += "/" + strconv.Itoa(bits)
		}
	case family == 3 && n == 16 && bits <= 128:
		s = ipv6Text(addr)
		if bits != 128 {
			s += "/" + strconv.Itoa(bits)
		}
	default:
		return "", fmt.Errorf("inet: family %d with %d address bytes and %d bits", family, n, bits)
	}
	if isCidr && !strings.Contains(s, "/") {
		s += "/" + strconv.Itoa(bits)
	}
	return s, nil
}

// ipv6Text is inet_net_ntop_ipv6's text of a 16-byte address, without
// the mask.
func ipv6Text(src []byte) string {
	var words [8]int
	for i := range 16 {
		words[i/2] |= int(src[i]) << ((1 - i%2) * 8)
	}
	bestBase, bestLen, curBase, curLen := -1, 0, -1, 0
	for i := range 8 {
		if words[i] == 0 {
			if curBase == -1 {
				curBase, curLen = i, 1
			} else {
				curLen++
			}
			continue
		}
		if curBase != -1 {
			if bestBase == -1 || curLen > bestLen {
				bestBase, bestLen = curBase, curLen
			}
			curBase = -1
		}
	}
	if curBase != -1 && (bestBase == -1 || curLen > bestLen) {
		bestBase, bestLen = curBase, curLen
	}
	if bestBase != -1 && bestLen < 2 {
		bestBase = -1
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if bestBase != -1 && i >= bestBase && i < bestBase+bestLen {
			if i == bestBase {
				b.WriteByte(':')
			}
			continue
		}
		if i != 0 {
			b.WriteByte(':')
		}
		if i == 6 && bestBase == 0 && (bestLen == 6 || bestLen == 7 && words[7] != 1 || bestLen == 5 && words[5] == 0xffff) {
			// An IPv4 address inside: dotted.
			b.WriteString(strconv.Itoa(int(src[12])) + "." + strconv.Itoa(int(src[13])) + "." + strconv.Itoa(int(src[14])) + "." + strconv.Itoa(int(src[15])))
			return b.String()
		}
		b.WriteString(strconv.FormatInt(int64(words[i]), 16))
	}
	if bestBase != -1 && bestBase+bestLen == 8 {
		b.WriteByte(':')
	}
	return b.String()
}
