package proxy

import (
	"strconv"
	"testing"
)

func TestSubstituteParams(t *testing.T) {
	repl := func(n int) (string, bool) {
		if n > 11 {
			return "", false
		}
		return "CAST($" + strconv.Itoa(n) + " AS INTEGER)", true
	}
	cases := []struct{ in, want string }{
		{"SELECT $1", "SELECT CAST($1 AS INTEGER)"},
		{"SELECT $1 + $11, '$1', \"$2\"", "SELECT CAST($1 AS INTEGER) + CAST($11 AS INTEGER), '$1', \"$2\""},
		{"SELECT 'it''s $1' || $2 -- $3\n, $1", "SELECT 'it''s $1' || CAST($2 AS INTEGER) -- $3\n, CAST($1 AS INTEGER)"},
		{"SELECT a$1 FROM t", "SELECT a$1 FROM t"},
	}
	for _, c := range cases {
		got, ok := substituteParams(c.in, repl)
		if !ok || got != c.want {
			t.Errorf("%q: got %q (%v), want %q", c.in, got, ok, c.want)
		}
	}
	if _, ok := substituteParams("SELECT $12", repl); ok {
		t.Error("unknown parameter accepted")
	}
}
