package accelerator

import (
	"bytes"
	"slices"
	"testing"
)

// The ICU keys order as ICU's en-US collation (case and accents after the
// letters, then the bytes break ties), and the case mappings are ICU's
// full, locale-sensitive ones. Integration tests compare both with a
// Postgres origin's; this one pins the functions themselves.
func TestICU_KeysAndCase(t *testing.T) {
	if _, err := ICURelease(); err != nil {
		t.Fatalf("%v (Debian: apt-get install libicu72)", err)
	}
	words := []string{"b", "B", "a", "É", "e", "é", "", "10", "9", "co-op", "coop", "ä"}
	slices.SortFunc(words, func(x, y string) int {
		kx, err := CollationKey("icu:en-US", x)
		if err != nil {
			t.Fatal(err)
		}
		ky, _ := CollationKey("icu:en-US", y)
		return bytes.Compare(kx, ky)
	})
	if want := []string{"", "10", "9", "a", "ä", "b", "B", "co-op", "coop", "e", "é", "É"}; !slices.Equal(words, want) {
		t.Errorf("en-US order %q, want %q", words, want)
	}
	for _, c := range []struct {
		locale, s string
		how       int
		want      string
	}{
		{"icu:en-US", "straße", 0, "STRASSE"},
		{"icu:tr-TR", "istanbul", 0, "İSTANBUL"},
		{"icu:tr-TR", "IŞIK", 1, "ışık"},
		{"icu:en-US", "hello wORLD o'brien", 2, "Hello World O'brien"},
		{"icu:en-US", "", 0, ""},
	} {
		got, err := MapCase(c.locale, c.s, c.how)
		if err != nil || got != c.want {
			t.Errorf("MapCase(%s, %q, %d) = %q, %v; want %q", c.locale, c.s, c.how, got, err, c.want)
		}
	}
	if v, err := ICUCollatorVersion("en-US"); err != nil || v == "" {
		t.Errorf("collator version %q, %v", v, err)
	}
	if err := LocaleAvailable("icu:en-US"); err != nil {
		t.Error(err)
	}
}

func TestParseDuckDBSize(t *testing.T) {
	gib := 11.7
	for in, want := range map[string]int64{"11.7 GiB": int64(gib * (1 << 30)), "512.0 MiB": 512 << 20, "0 bytes": 0, "1.5 GB": 1.5e9, "lots": -1, "1 XB": -1} {
		if got := parseDuckDBSize(in); got != want {
			t.Errorf("parseDuckDBSize(%q) = %d, want %d", in, got, want)
		}
	}
}
