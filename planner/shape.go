package planner

import "strings"

// Number shapes. The fast path (fastpath.go) never looks at a number's
// value: a run of digits that does not continue an identifier, a $
// parameter or a dollar-quote tag is one token to it, or part of the
// string or comment it is in. So texts that differ only in such runs (a
// pgbench statement and its next execution) get one Quick decision, and a
// caller may keep that decision by the text's number shape: the text with
// each such run as one 0. A double quote ends that: a quoted identifier's
// digits are its name, so a text with one has the shape of itself alone.

// shapeByte returns the byte of sql's number shape at sql[i] (a whole run
// of digits is one '0') and the index after what it stands for.
// It is small enough to be inlined into the loops that call it for
// every byte of a statement (the run of digits is skipDigits's).
func shapeByte(sql string, i int) (byte, int) {
	c := sql[i]
	if !isDigit(c) || i > 0 && continuesIdent(sql[i-1]) {
		return c, i + 1
	}
	return '0', skipDigits(sql, i)
}

// skipDigits returns the index after the run of digits at sql[i].
func skipDigits(sql string, i int) int {
	for i < len(sql) && isDigit(sql[i]) {
		i++
	}
	return i
}

// NumberShape is sql's number shape (see above).
func NumberShape(sql string) string {
	b := make([]byte, 0, len(sql))
	for i := 0; i < len(sql); {
		var c byte
		c, i = shapeByte(sql, i)
		b = append(b, c)
	}
	return string(b)
}

// SameShape reports whether a and b have one number shape, without making
// either: they are the same but for their numbers, and have no double
// quote unless they are equal.
func SameShape(a, b string) bool {
	// Texts of one shape are mostly the same bytes: their common prefix
	// first, a byte at a time, back to the start of a run of digits it
	// ends in (shapeByte reads a byte before, which both texts share).
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] && a[i] != '"' {
		i++
	}
	if i == len(a) && i == len(b) {
		return true
	}
	for i > 0 && isDigit(a[i-1]) {
		i--
	}
	j := i
	for i < len(a) && j < len(b) {
		var ca, cb byte
		ca, i = shapeByte(a, i)
		cb, j = shapeByte(b, j)
		if ca != cb {
			return false
		}
		if ca == '"' {
			return a == b
		}
	}
	return i == len(a) && j == len(b)
}

// ShapeHash is an FNV-1a hash of sql's number shape, without making it:
// texts of one shape (SameShape) have one hash.
func ShapeHash(sql string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < len(sql); {
		var c byte
		c, i = shapeByte(sql, i)
		h = (h ^ uint64(c)) * prime
	}
	return h
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// continuesIdent reports whether a digit after c is part of an identifier,
// a parameter ($1) or a dollar-quote tag, as scanTokens reads them
// (non-ASCII bytes are identifier bytes to it).
func continuesIdent(c byte) bool { return isIdentChar(c) || c >= 0x80 }

// StatementHash is the fingerprint statement statistics key a text by:
// an FNV-1a hash of the text with each constant (a number that does not
// continue an identifier, a '…' string with any prefix, a $tag$…$tag$
// string) as one '?', comments dropped, runs of white space as one space
// and letters outside quoted identifiers in lower case. Texts of one
// number shape (SameShape) have one hash; so do the calls of one
// statement with other values. It reads the text once and allocates
// nothing.
func StatementHash(sql string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	add := func(c byte) { h = (h ^ uint64(c)) * prime }
	space := false
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			space = true
			i++
			continue
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			space = true
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				i = len(sql)
			} else {
				i += end + 4
			}
			space = true
			continue
		}
		if space {
			add(' ')
			space = false
		}
		switch {
		case c == '\'':
			j, ok := skipString(sql, i, i > 0 && (sql[i-1] == 'e' || sql[i-1] == 'E'))
			if !ok {
				j = len(sql) // not closed: the rest is the string
			}
			i = j
			add('?')
		case c == '"':
			j, ok := skipQuotedIdent(sql, i)
			if !ok {
				j = len(sql)
			}
			for ; i < j; i++ {
				add(sql[i])
			}
		case c == '$' && (i == 0 || !continuesIdent(sql[i-1])) && i+1 < len(sql) && !isDigit(sql[i+1]):
			if j, ok := skipDollarQuoted(sql, i); ok {
				i = j
				add('?')
			} else {
				add(c)
				i++
			}
		case isDigit(c) && (i == 0 || !continuesIdent(sql[i-1])):
			for i < len(sql) && (isDigit(sql[i]) || sql[i] == '.' || sql[i] == 'e' || sql[i] == 'E' || sql[i] == '_') {
				i++
			}
			add('?')
		default:
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			add(c)
			i++
		}
	}
	return h
}

// skipDollarQuoted returns the index after the $tag$…$tag$ string at
// sql[i], and false when sql[i] starts none.
func skipDollarQuoted(sql string, i int) (int, bool) {
	j := i + 1
	for j < len(sql) && sql[j] != '$' && (isIdentChar(sql[j]) || sql[j] >= 0x80) {
		j++
	}
	if j >= len(sql) || sql[j] != '$' {
		return 0, false
	}
	tag := sql[i : j+1]
	end := strings.Index(sql[j+1:], tag)
	if end < 0 {
		return len(sql), true
	}
	return j + 1 + end + len(tag), true
}
