package gen

import (
	"fmt"
	"strings"
)

// ReadStatements reads statements to run instead of generated ones: each
// ends with a semicolon at the end of a line and may span lines. Comment
// lines before a statement describe it:
//
//	-- name: bytea hex literal
//	-- settings: TimeZone=America/Los_Angeles; IntervalStyle=iso_8601
//	-- extended
//	-- maytie
//	SELECT ... ORDER BY 1;
//
// A statement with ORDER BY at its end is compared in order (it must
// order by every output column), others as multisets.
func ReadStatements(text string) ([]Query, error) {
	var out []Query
	var cur Query
	var body []string
	cur.Settings = Defaults
	for n, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case len(body) == 0 && strings.HasPrefix(trimmed, "--"):
			c := strings.TrimSpace(strings.TrimPrefix(trimmed, "--"))
			switch {
			case strings.HasPrefix(c, "name:"):
				cur.Name = strings.TrimSpace(strings.TrimPrefix(c, "name:"))
			case strings.HasPrefix(c, "settings:"):
				s, err := ParseSettings(strings.TrimPrefix(c, "settings:"))
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", n+1, err)
				}
				cur.Settings = s
			case c == "extended":
				cur.Extended = true
			case c == "maytie":
				cur.MayTie = true
			}
			continue
		case trimmed == "" && len(body) == 0:
			continue
		}
		body = append(body, line)
		if strings.HasSuffix(trimmed, ";") {
			cur.SQL = strings.TrimSuffix(strings.TrimSpace(strings.Join(body, "\n")), ";")
			cur.Ordered = orderedAtEnd(cur.SQL)
			cur.Index = len(out)
			if cur.Name == "" {
				cur.Name = fmt.Sprintf("statement %d", len(out)+1)
			}
			out = append(out, cur)
			cur, body = Query{Settings: Defaults}, nil
		}
	}
	if len(body) > 0 {
		return nil, fmt.Errorf("the last statement has no semicolon")
	}
	return out, nil
}

// orderedAtEnd reports whether the statement's last clause is ORDER BY
// (possibly followed by LIMIT/OFFSET), outside parentheses.
func orderedAtEnd(sql string) bool {
	upper := strings.ToUpper(sql)
	depth, last := 0, -1
	for i := 0; i < len(upper); i++ {
		switch upper[i] {
		case '(':
			depth++
		case ')':
			depth--
		case 'O':
			if depth == 0 && strings.HasPrefix(upper[i:], "ORDER BY") {
				last = i
			}
		}
	}
	return last >= 0
}
