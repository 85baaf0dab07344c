package planner

import (
	"net/netip"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// inet and cidr are held as the text Postgres prints them with
// (accelerator/inet.go): two values are equal exactly when their texts
// are, but Postgres orders them by family, network and mask, has its own
// functions and operators for them, casts them to text with the mask
// ('10.0.0.1'::inet::text is 10.0.0.1/32), and coerces a literal to the
// type (so '10.0.0.1/32' equals the inet printed 10.0.0.1). So the
// acceleration answers a statement whose inet or cidr values are only
// printed (SELECT *), tested for NULL, counted, grouped, made distinct, or
// compared for equality (=, <>, IN, IS DISTINCT FROM, JOIN ... USING) with
// a value of the same type, a literal written as Postgres prints it or a
// parameter; anything else (ordering, range comparison, min/max, functions and
// operators of them, casts, || and LIKE, merges in CASE, COALESCE, NULLIF
// and set operations, comparisons of an inet with a cidr or with a literal
// Postgres would print otherwise) goes to the origin. A parameter compared
// with an inet or cidr is decoded to its printed text
// (proxy/encode/inet.go) when written plainly; an Execute with another
// goes to the origin.

// inetHazard returns why the statement uses an inet or cidr value as the
// acceleration cannot, or "".
func (t *typer) inetHazard() string {
	ts := &t.a.types
	may := func(n *pg_query.Node) bool { return t.typesOf(n)&tInetAny != 0 }
	for _, sc := range ts.starOrdered {
		if t.starTypes(sc)&tInetAny != 0 {
			return "ordering by a column of * that may be inet or cidr (Postgres orders them by family, network and mask; the acceleration holds their text)"
		}
	}
	for _, n := range ts.ordered {
		if may(n) {
			return "ordering or range-comparing " + describeExpr(n) + ", which may be inet or cidr (Postgres orders them by family, network and mask; the acceleration holds their text)"
		}
	}
	for _, p := range ts.pairs {
		l, r := t.typesOf(p.l), t.typesOf(p.r)
		if (l|r)&tInetAny == 0 {
			continue
		}
		if !t.inetComparable(p.l, l, p.r, r) {
			return "comparing " + describeExpr(p.l) + " with " + describeExpr(p.r) + ", one of which may be inet or cidr, otherwise than with a value of the same type or a literal as Postgres prints it"
		}
	}
	for _, group := range [][]*pg_query.Node{ts.arith, ts.casts, ts.likes, ts.printed, ts.args, ts.merged} {
		for _, n := range group {
			if may(n) {
				return describeExpr(n) + ", which may be inet or cidr, in an operator, function, cast or merge (the acceleration holds their printed text: it compares them for equality and prints them)"
			}
		}
	}
	for _, c := range ts.concats {
		if may(c[0]) || may(c[1]) {
			return "|| of a value that may be inet or cidr"
		}
	}
	for _, c := range ts.contains {
		if may(c[0]) || may(c[1]) {
			return "@> or <@ of a value that may be inet or cidr"
		}
	}
	for _, g := range ts.jsonGets {
		if may(g[0]) {
			return "-> of a value that may be inet or cidr"
		}
	}
	return ""
}

// inetComparable reports whether l (of types ls) and r (rs) compare for
// equality as their texts do: both of the one type, or one of them of
// inet or cidr and the other a string literal printed as Postgres prints
// that type's value of it.
func (t *typer) inetComparable(l *pg_query.Node, ls typeSet, r *pg_query.Node, rs typeSet) bool {
	if (ls == tInet || ls == tCidr) && rs == ls {
		return true
	}
	lit := func(n *pg_query.Node, typ typeSet) bool {
		if typ != tInet && typ != tCidr {
			return false
		}
		if n.GetParamRef() != nil {
			// Of the type Postgres infers from the other side; the proxy
			// decodes it to its printed text (proxy/encode/inet.go).
			return true
		}
		s, ok := constString(n)
		return ok && isStringConst(n) && canonicalInet(s, typ == tCidr)
	}
	return lit(r, ls) || lit(l, rs)
}

// canonicalInet reports whether s is an inet (cidr) literal Postgres
// prints as s: an IPv4 address in four decimal octets without leading
// zeros, with /bits unless 32 (a cidr: always, and no bits set past the
// mask). IPv6 literals are not judged (Postgres's shortening rules are
// its own): they go to the origin.
func canonicalInet(s string, cidr bool) bool {
	addrText, bitsText, masked := strings.Cut(s, "/")
	addr, err := netip.ParseAddr(addrText)
	if err != nil || !addr.Is4() || addr.String() != addrText {
		return false
	}
	bits := 32
	if masked {
		n, err := strconv.Atoi(bitsText)
		if err != nil || n < 0 || n > 32 || strconv.Itoa(n) != bitsText {
			return false
		}
		bits = n
	}
	switch {
	case cidr:
		p, err := addr.Prefix(bits)
		return masked && err == nil && p.Addr() == addr
	default:
		return !masked || bits != 32
	}
}
