package planner

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The fast path's decisions may be kept by number shape: texts of one
// shape differ only in their numbers.
func TestNumberShape(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT abalance FROM pgbench_accounts WHERE aid = 48213;": "SELECT abalance FROM pgbench_accounts WHERE aid = 0;",
		"UPDATE t SET v = v + -4132 WHERE id = 7":                  "UPDATE t SET v = v + -0 WHERE id = 0",
		"SELECT t1.a2, $1, 1.5e10, 0x1F FROM t1":                   "SELECT t1.a2, $1, 0.0e10, 0x1F FROM t1",
		"SELECT '12' -- 34\n/* 56 */ , é1, $a1$ 7 $a1$":            "SELECT '0' -- 0\n/* 0 */ , é1, $a1$ 0 $a1$",
		"12":  "0",
		"":    "",
		"a 0": "a 0",
	} {
		if got := NumberShape(sql); got != want {
			t.Errorf("NumberShape(%q) = %q, want %q", sql, got, want)
		}
		if !SameShape(sql, want) {
			t.Errorf("SameShape(%q, %q) is false", sql, want)
		}
		if ShapeHash(sql) != ShapeHash(want) {
			t.Errorf("ShapeHash(%q) differs from its shape's", sql)
		}
	}
	for _, c := range [][2]string{
		{"SELECT 1", "SELECT 1 "}, {"SELECT a1", "SELECT a0"}, {"SELECT 1", "SELECT x"}, {"SELECT 12", "SELECT 0"},
	} {
		if SameShape(c[0], c[1]) != (NumberShape(c[0]) == NumberShape(c[1])) {
			t.Errorf("SameShape(%q, %q) disagrees with NumberShape", c[0], c[1])
		}
	}
	// A quoted identifier's digits are its name.
	if SameShape(`SELECT "1"`, `SELECT "2"`) || !SameShape(`SELECT "1" + 1`, `SELECT "1" + 1`) {
		t.Error("quoted texts: SameShape does not hold them apart")
	}
}

// TestSameShapeAgreesWithNumberShape: SameShape (which skips the common
// prefix first) says what comparing the shapes says, double quotes aside
// (a text with one has its own shape only).
func TestSameShapeAgreesWithNumberShape(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "1", "2", "0", " ", "_", "$", "é", "'", "x9"}
	gen := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 200000 {
		a, b := gen(), gen()
		if r.IntN(2) == 0 {
			// Mostly shared, as texts of one statement are.
			p := gen()
			a, b = p+a, p+b
		}
		want := NumberShape(a) == NumberShape(b)
		if strings.Contains(a, `"`) || strings.Contains(b, `"`) {
			want = a == b
		}
		if got := SameShape(a, b); got != want {
			t.Fatalf("SameShape(%q, %q) = %v, want %v", a, b, got, want)
		}
		if got := SameShape(a+`"q"`, b+`"q"`); got != (a == b) {
			t.Fatalf("SameShape(%q, %q) with a quote = %v", a, b, got)
		}
	}
}
