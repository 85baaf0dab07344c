package gen

import (
	"strings"
	"testing"
)

func res(fields []Field, rows ...[]string) Result {
	r := Result{Fields: fields, Tag: "SELECT"}
	for _, row := range rows {
		var vals [][]byte
		for _, v := range row {
			if v == "NULL" {
				vals = append(vals, nil)
			} else {
				vals = append(vals, []byte(v))
			}
		}
		r.Rows = append(r.Rows, vals)
	}
	return r
}

func TestCompare(t *testing.T) {
	f8 := []Field{{Name: "x", OID: 701, Mod: -1}}
	iv := []Field{{Name: "x", OID: 1186, Mod: -1}}
	ch := []Field{{Name: "x", OID: 1042, Mod: 7}}
	two := []Field{{Name: "a", OID: 23, Mod: -1}, {Name: "b", OID: 1700, Mod: -1}}
	errA := Result{Err: &Error{Code: "22012", Message: "division by zero"}}
	errB := Result{Err: &Error{Code: "22003", Message: "integer out of range"}}
	cases := []struct {
		name            string
		origin, pgaccel Result
		opts            Opts
		want            Verdict
	}{
		{"same rows, same order", res(two, []string{"1", "1.5"}, []string{"2", "NULL"}), res(two, []string{"1", "1.5"}, []string{"2", "NULL"}), Opts{Ordered: true}, Same},
		{"unordered: any order", res(two, []string{"1", "1.5"}, []string{"2", "NULL"}), res(two, []string{"2", "NULL"}, []string{"1", "1.5"}), Opts{}, Same},
		{"ordered: another order", res(two, []string{"1", "1.5"}, []string{"2", "NULL"}), res(two, []string{"2", "NULL"}, []string{"1", "1.5"}), Opts{Ordered: true}, Differ},
		{"ordered: tied rows in any order", res(two, []string{"1", "1.5"}, []string{"1", "1.50"}), res(two, []string{"1", "1.50"}, []string{"1", "1.5"}), Opts{Ordered: true}, Same},
		{"NULL is not an empty string", res(two, []string{"1", "NULL"}), res(two, []string{"1", ""}), Opts{}, Differ},
		{"-0 for 0 where Postgres has one answer", res(f8, []string{"-0"}), res(f8, []string{"0"}), Opts{}, Differ},
		{"-0 for 0 after a GROUP BY", res(f8, []string{"-0"}), res(f8, []string{"0"}), Opts{MayTie: true}, Tie},
		{"1.5 for 1.50 after a DISTINCT", res(two, []string{"1", "1.50"}), res(two, []string{"1", "1.5"}), Opts{MayTie: true}, Tie},
		{"1.5 for 1.51 is no tie", res(two, []string{"1", "1.51"}), res(two, []string{"1", "1.5"}), Opts{MayTie: true}, Differ},
		{"1 mon for 30 days after a GROUP BY", res(iv, []string{"1 mon"}), res(iv, []string{"30 days"}), Opts{MayTie: true}, Tie},
		{"sql_standard 0-1 for 30 0:00:00", res(iv, []string{"0-1"}), res(iv, []string{"30 0:00:00"}), Opts{MayTie: true}, Tie},
		{"iso_8601 P1M for P30D", res(iv, []string{"P1M"}), res(iv, []string{"P30D"}), Opts{MayTie: true}, Tie},
		{"verbose @ 1 day for @ 24 hours", res(iv, []string{"@ 1 day"}), res(iv, []string{"@ 24 hours"}), Opts{MayTie: true}, Tie},
		{"1 mon for 31 days is no tie", res(iv, []string{"1 mon"}), res(iv, []string{"31 days"}), Opts{MayTie: true}, Differ},
		{"char(n) padding is part of the value", res(ch, []string{"a      "}), res(ch, []string{"a"}), Opts{MayTie: true}, Differ},
		{"LIMIT through tied rows", res(f8, []string{"1"}, []string{"-0"}), res(f8, []string{"1"}, []string{"0"}), Opts{Ordered: true, Limited: true}, Same},
		{"tied rows before the cut are not", res(f8, []string{"-0"}, []string{"1"}), res(f8, []string{"0"}, []string{"1"}), Opts{Ordered: true, Limited: true}, Same},
		{"a middle run is no cut", res(f8, []string{"-1"}, []string{"-0"}, []string{"1"}), res(f8, []string{"-1"}, []string{"0"}, []string{"1"}), Opts{Ordered: true, Limited: true}, Differ},
		{"more rows", res(f8, []string{"1"}), res(f8, []string{"1"}, []string{"1"}), Opts{}, Differ},
		{"same error", errA, errA, Opts{}, Same},
		{"another error", errA, errB, Opts{}, Differ},
		{"an answer for an error", errA, res(f8), Opts{}, Differ},
		{"another column type", res(f8, []string{"1"}), res([]Field{{Name: "x", OID: 1700, Mod: -1}}, []string{"1"}), Opts{}, Differ},
		{"another column name", res(f8, []string{"1"}), res([]Field{{Name: "y", OID: 701, Mod: -1}}, []string{"1"}), Opts{}, Differ},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, detail := Compare(c.origin, c.pgaccel, c.opts)
			if got != c.want {
				t.Errorf("Compare = %s, want %s\n%s", got, c.want, detail)
			}
			if got != Same && strings.TrimSpace(detail) == "" {
				t.Error("no detail for a difference")
			}
		})
	}
}

func TestValueKey_BinaryFormats(t *testing.T) {
	// numeric 1.50 and 1.5 in binary: ndigits, weight, sign, dscale, digits.
	n150 := []byte{0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x13, 0x88}
	n15 := []byte{0, 2, 0, 0, 0, 0, 0, 1, 0, 1, 0x13, 0x88}
	f := Field{OID: 1700, Format: 1}
	if valueKey(f, n150) != valueKey(f, n15) || valueKey(f, n15) != "1.5" {
		t.Errorf("binary numerics: %q %q", valueKey(f, n150), valueKey(f, n15))
	}
	// interval 1 mon and 30 days.
	mon := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	days := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0, 0}
	fi := Field{OID: 1186, Format: 1}
	if valueKey(fi, mon) != valueKey(fi, days) {
		t.Errorf("binary intervals: %q %q", valueKey(fi, mon), valueKey(fi, days))
	}
	// float8 -0 and 0.
	ff := Field{OID: 701, Format: 1}
	if valueKey(ff, []byte{0x80, 0, 0, 0, 0, 0, 0, 0}) != valueKey(ff, make([]byte, 8)) {
		t.Error("binary -0 and 0 differ")
	}
}

func TestParseInterval_EveryStyle(t *testing.T) {
	// 1 year 2 mons -3 days +04:05:06.789 in each IntervalStyle.
	want, _ := parseInterval("1 year 2 mons -3 days +04:05:06.789")
	for _, s := range []string{
		"@ 1 year 2 mons -3 days 4 hours 5 mins 6.789 secs",
		"+1-2 -3 +4:05:06.789",
		"P1Y2M-3DT4H5M6.789S",
	} {
		got, ok := parseInterval(s)
		if !ok || got != want {
			t.Errorf("parseInterval(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
	// sql_standard: a leading minus alone applies to every field.
	neg, _ := parseInterval("-3 days -04:00:00")
	if got, ok := parseInterval("-3 4:00:00"); !ok || got != neg {
		t.Errorf(`parseInterval("-3 4:00:00") = %q, %v; want %q`, got, ok, neg)
	}
	mixed, _ := parseInterval("-3 days +04:00:00")
	if got, ok := parseInterval("-3 +4:00:00"); !ok || got != mixed {
		t.Errorf(`parseInterval("-3 +4:00:00") = %q, %v; want %q`, got, ok, mixed)
	}
	for _, s := range []string{"00:00:00", "0", "P0D", "@ 0"} {
		if got, ok := parseInterval(s); !ok || got != "iv:0" {
			t.Errorf("parseInterval(%q) = %q, %v; want zero", s, got, ok)
		}
	}
}
