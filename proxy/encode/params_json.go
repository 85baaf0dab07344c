package encode

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// validJSON reports whether json_in accepts s. Postgres's json type checks
// the syntax only (it does not de-escape, so any \uXXXX is accepted), as
// encoding/json does.
func validJSON(s string) bool { return json.Valid([]byte(s)) }

// maxJSONDepth bounds the recursion of canonicalJSONB.
const maxJSONDepth = 1000

// canonicalJSONB returns the text jsonb_out prints for the jsonb input s:
// object keys de-duplicated (the last value wins) and sorted by length then
// bytes, ", " and ": " separators, strings de-escaped and re-escaped as
// escape_json does, numbers as numeric_out prints numeric_in's value.
// Input jsonb_in rejects (\u0000, unpaired surrogates, syntax errors)
// returns ErrUnsupported.
func canonicalJSONB(s string) (any, error) {
	p := jsonParser{s: s}
	var b strings.Builder
	p.ws()
	if err := p.value(&b); err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, p.fail("trailing text")
	}
	return b.String(), nil
}

type jsonParser struct {
	s     string
	i     int
	depth int
}

func (p *jsonParser) fail(why string) error {
	return fmt.Errorf("%w: jsonb: %s at offset %d", errBadInput, why, p.i)
}

// ws skips JSON white space.
func (p *jsonParser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

// value appends the canonical text of one value.
func (p *jsonParser) value(b *strings.Builder) error {
	if p.i >= len(p.s) {
		return p.fail("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(b)
	case c == '[':
		return p.array(b)
	case c == '"':
		str, err := p.str()
		if err != nil {
			return err
		}
		appendJSONString(b, str)
		return nil
	case c == '-' || isDigit(c):
		return p.number(b)
	}
	for _, lit := range []string{"true", "false", "null"} {
		if strings.HasPrefix(p.s[p.i:], lit) {
			end := p.i + len(lit)
			if end < len(p.s) && isJSONAlnum(p.s[end]) {
				break
			}
			p.i = end
			b.WriteString(lit)
			return nil
		}
	}
	return p.fail("invalid token")
}

func isJSONAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c >= 0x80
}

func (p *jsonParser) object(b *strings.Builder) error {
	if p.depth++; p.depth > maxJSONDepth {
		return p.fail("too deep")
	}
	defer func() { p.depth-- }()
	p.i++ // {
	type pair struct{ k, v string }
	var pairs []pair
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		b.WriteString("{}")
		return nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return p.fail("expected a key")
		}
		k, err := p.str()
		if err != nil {
			return err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return p.fail("expected :")
		}
		p.i++
		p.ws()
		var vb strings.Builder
		if err := p.value(&vb); err != nil {
			return err
		}
		pairs = append(pairs, pair{k, vb.String()})
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			break
		}
		return p.fail("expected , or }")
	}
	// The last value of a key wins; keys sort by length, then bytes.
	sort.SliceStable(pairs, func(a, c int) bool {
		ka, kc := pairs[a].k, pairs[c].k
		if len(ka) != len(kc) {
			return len(ka) < len(kc)
		}
		return ka < kc
	})
	b.WriteByte('{')
	first := true
	for i, kv := range pairs {
		if i+1 < len(pairs) && pairs[i+1].k == kv.k {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		appendJSONString(b, kv.k)
		b.WriteString(": ")
		b.WriteString(kv.v)
	}
	b.WriteByte('}')
	return nil
}

func (p *jsonParser) array(b *strings.Builder) error {
	if p.depth++; p.depth > maxJSONDepth {
		return p.fail("too deep")
	}
	defer func() { p.depth-- }()
	p.i++ // [
	b.WriteByte('[')
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		b.WriteByte(']')
		return nil
	}
	for n := 0; ; n++ {
		if n > 0 {
			b.WriteString(", ")
		}
		p.ws()
		if err := p.value(b); err != nil {
			return err
		}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			b.WriteByte(']')
			return nil
		}
		return p.fail("expected , or ]")
	}
}

// str reads a string and returns it de-escaped, with jsonb's checks.
func (p *jsonParser) str() (string, error) {
	p.i++ // opening quote
	var out []byte
	hi := rune(-1) // pending high surrogate
	for {
		if p.i >= len(p.s) {
			return "", p.fail("unterminated string")
		}
		c := p.s[p.i]
		if c == '"' {
			if hi >= 0 {
				return "", p.fail("unpaired high surrogate")
			}
			p.i++
			return string(out), nil
		}
		if c < 0x20 {
			return "", p.fail("control character in string")
		}
		if c != '\\' {
			if hi >= 0 {
				return "", p.fail("unpaired high surrogate")
			}
			out = append(out, c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.s) {
			return "", p.fail("unterminated escape")
		}
		e := p.s[p.i]
		p.i++
		if e != 'u' {
			if hi >= 0 {
				return "", p.fail("unpaired high surrogate")
			}
			r, ok := map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[e]
			if !ok {
				return "", p.fail("invalid escape")
			}
			out = append(out, r)
			continue
		}
		if p.i+4 > len(p.s) {
			return "", p.fail("short \\u escape")
		}
		n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
		if err != nil || strings.ContainsAny(p.s[p.i:p.i+4], "+-") {
			return "", p.fail("invalid \\u escape")
		}
		p.i += 4
		ch := rune(n)
		switch {
		case utf16.IsSurrogate(ch) && ch < 0xdc00:
			if hi >= 0 {
				return "", p.fail("two high surrogates")
			}
			hi = ch
			continue
		case utf16.IsSurrogate(ch):
			if hi < 0 {
				return "", p.fail("unpaired low surrogate")
			}
			ch = utf16.DecodeRune(hi, ch)
			hi = -1
		case hi >= 0:
			return "", p.fail("unpaired high surrogate")
		case ch == 0:
			return "", p.fail("\\u0000 is not allowed in jsonb")
		}
		out = utf8.AppendRune(out, ch)
	}
}

// number appends numeric_out(numeric_in(the JSON number)).
func (p *jsonParser) number(b *strings.Builder) error {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case p.i < len(p.s) && p.s[p.i] >= '1' && p.s[p.i] <= '9':
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
	default:
		return p.fail("invalid number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		d := p.i
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
		if p.i == d {
			return p.fail("invalid number")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		d := p.i
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
		if p.i == d {
			return p.fail("invalid number")
		}
	}
	if p.i < len(p.s) && isJSONAlnum(p.s[p.i]) {
		return p.fail("invalid number")
	}
	text, err := numericText(p.s[start:p.i])
	if err != nil {
		return err
	}
	b.WriteString(text)
	return nil
}

// numericText is numeric_out(numeric_in(s)) for a valid decimal number s.
func numericText(s string) (string, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 1000 || e < -1000 {
			return "", fmt.Errorf("%w: number exponent out of the decoded range", errBadInput)
		}
		exp, s = e, s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		digits = "0"
	}
	d := decimalDigits{neg: neg, digits: []byte(digits), scale: len(frac) - exp}
	if d.scale < 0 {
		d.pad, d.scale = -d.scale, 0
	}
	if d.isZero() {
		d.neg, d.pad = false, 0
	}
	return string(d.appendText(nil)), nil
}

// appendJSONString is escape_json.
func appendJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}
