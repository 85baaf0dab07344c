package proxy

import (
	"strconv"
	"strings"
)

// substituteParams replaces each $n parameter of sql (outside string
// literals, quoted identifiers and comments) with repl(n). It reports false
// when a parameter number has no replacement.
func substituteParams(sql string, repl func(n int) (string, bool)) (string, bool) {
	var b strings.Builder
	b.Grow(len(sql) + 32)
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			// A quoted literal or identifier; a doubled quote escapes.
			j := i + 1
			for j < len(sql) {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(sql))
			b.WriteString(sql[i:end])
			i = end
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				j = len(sql) - i
			}
			b.WriteString(sql[i : i+j])
			i += j
		case c == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9' && (i == 0 || !isIdentChar(sql[i-1])):
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(sql[i+1 : j])
			if err != nil {
				return "", false
			}
			r, ok := repl(n)
			if !ok {
				return "", false
			}
			b.WriteString(r)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), true
}

func isIdentChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// placeParams replaces each $n of sql with placeholders[n-1]; false when a
// number has none.
func placeParams(sql string, placeholders []string) (string, bool) {
	return substituteParams(sql, func(n int) (string, bool) {
		if n < 1 || n > len(placeholders) {
			return "", false
		}
		return placeholders[n-1], true
	})
}
