package accelerator

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/pgaccel/pgaccel/pgdef"
)

// TestCollationKey: keys order as the locale's strcoll, equal-collating
// strings by their bytes, in Go and through DuckDB.
func TestCollationKey(t *testing.T) {
	if err := LocaleAvailable("en_US.UTF-8"); err != nil {
		t.Fatalf("%v", err)
	}
	words := []string{"b", "B", "a", "A", "ä", "Ab", "a b", "ab", "a-b", "", "1", "10", "9", "résumé", "resume", "Resume", "ß", "ss"}
	sorted := slices.Clone(words)
	slices.SortFunc(sorted, func(x, y string) int {
		kx, err := CollationKey("en_US.UTF-8", x)
		if err != nil {
			t.Fatal(err)
		}
		ky, _ := CollationKey("en_US.UTF-8", y)
		return bytes.Compare(kx, ky)
	})
	// glibc 2.28+ en_US: case and accents second, punctuation ignored at
	// first level.
	if sorted[0] != "" || slices.Index(sorted, "a") > slices.Index(sorted, "B") || slices.Index(sorted, "a") > slices.Index(sorted, "A") {
		t.Errorf("en_US order: %q", sorted)
	}
	if err := LocaleAvailable("xx_NOPE.UTF-8"); err == nil {
		t.Errorf("a locale that does not exist is available")
	}
	e := openEngine(t, "")
	rows, err := e.Query(context.Background(), "SELECT s FROM (VALUES ('b'), ('A'), ('a'), ('B'), (NULL)) v(s) ORDER BY "+pgdef.FuncCollkey+"(s, 'en_US.UTF-8') NULLS LAST")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		got = append(got, fmt.Sprint(rows.Values()[0]))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "A", "b", "B", "<nil>"}; !slices.Equal(got, want) {
		t.Errorf("DuckDB order %q, want %q", got, want)
	}
	if v := LibcVersion(); v == "" {
		t.Errorf("no libc version")
	}
}

// TestMapCase: upper, lower and initcap under en_US.UTF-8 map every code
// point the C library maps, one code point to one (ß stays ß), as
// Postgres's str_toupper and kin do there.
func TestMapCase(t *testing.T) {
	for _, c := range []struct {
		in   string
		how  int
		want string
	}{
		{"straße éclair ǆ ω", 0, "STRAßE ÉCLAIR Ǆ Ω"},
		{"ÉCLAIR Ω İ", 1, "éclair ω i"},
		{"hello wORLD o'brien x-ray 1st", 2, "Hello World O'Brien X-Ray 1st"},
	} {
		got, err := MapCase("en_US.UTF-8", c.in, c.how)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%q (%d): %q, want %q", c.in, c.how, got, c.want)
		}
	}
}
