package gen

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

func TestGenerator_SameSeedAndIndexSameStatement(t *testing.T) {
	g := Generator{Seed: 7}
	for i := 0; i < 200; i++ {
		a, b := g.Query(i), g.Query(i)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("query %d differs between two generations:\n%s\n%s", i, a.SQL, b.SQL)
		}
	}
	if g.Query(1).SQL == g.Query(2).SQL || g.Query(1).SQL == (Generator{Seed: 8}).Query(1).SQL {
		t.Error("different indexes or seeds gave the same statement")
	}
}

// TestGenerator_StatementsParse: every statement is valid SQL to
// Postgres's parser (what fails at the origin fails at analysis or at run
// time, on purpose or by type).
func TestGenerator_StatementsParse(t *testing.T) {
	g := Generator{Seed: 1}
	for i := 0; i < 3000; i++ {
		q := g.Query(i)
		if _, err := pg_query.Parse(q.SQL); err != nil {
			t.Fatalf("query %d does not parse: %v\n%s", i, err, q.SQL)
		}
		if q.Settings.TimeZone == "" {
			t.Fatalf("query %d has no time zone", i)
		}
	}
}

// issueShapes are the shapes of the wrong answers issue 44 lists: the
// generator must be able to write each.
var issueShapes = []struct {
	name    string
	sql     *regexp.Regexp
	feature string
	zone    string
}{
	{name: "float8 ^ a huge float8", sql: regexp.MustCompile(`\^ 1e200::float8`)},
	{name: "nth_value(x, 0)", sql: regexp.MustCompile(`nth_value\(.*, 0\) OVER`)},
	{name: "interval year", sql: regexp.MustCompile(`::interval year\b`)},
	{name: "interval day to minute", sql: regexp.MustCompile(`::interval day to minute`)},
	{name: "timestamptz - timestamptz in Los Angeles", feature: "($1 - $2) :timestamptz,timestamptz", zone: "America/Los_Angeles"},
	{name: "count(t.*) over an outer join", sql: regexp.MustCompile(`count\([a-z]+[0-9]+\.\*\).* (LEFT|RIGHT|FULL) JOIN `)},
	{name: "a FROM subquery naming an outer column its sibling defines", feature: "FROM subquery without FROM", sql: regexp.MustCompile(`\(SELECT [a-z_]+\) AS d[0-9]+`)},
	{name: "lead(int, 1, numeric)", feature: "window lag/lead value and default of different types"},
}

func TestGenerator_WritesTheIssueShapes(t *testing.T) {
	g := Generator{Seed: 1}
	found := make([]int, len(issueShapes))
	for i := 0; i < 20000; i++ {
		q := g.Query(i)
		for j, s := range issueShapes {
			if s.sql != nil && !s.sql.MatchString(q.SQL) {
				continue
			}
			if s.feature != "" && !contains(q.Features, s.feature) {
				continue
			}
			if s.zone != "" && q.Settings.TimeZone != s.zone {
				continue
			}
			found[j]++
		}
	}
	for j, s := range issueShapes {
		if found[j] == 0 {
			t.Errorf("no statement of 20000 has the shape %q", s.name)
		}
		t.Logf("%5d statements of 20000: %s", found[j], s.name)
	}
}

// TestCatalog_EveryEntryIsWritten: every operator, function, cast and
// aggregate of the catalogue appears in a few thousand statements.
func TestCatalog_EveryEntryIsWritten(t *testing.T) {
	seen := map[string]bool{}
	g := Generator{Seed: 3}
	for i := 0; i < 20000; i++ {
		for _, f := range g.Query(i).Features {
			seen[f] = true
		}
	}
	total, missing := 0, []string{}
	for _, ty := range allTypes {
		for _, f := range catalog[ty] {
			total++
			if !seen[f.Tag()] {
				missing = append(missing, f.Tag())
			}
		}
	}
	for _, a := range aggregates {
		total++
		if !seen[a.Tag()] {
			missing = append(missing, a.Tag())
		}
	}
	t.Logf("%d of %d catalogue entries written in 20000 statements", total-len(missing), total)
	if len(missing) > 0 {
		t.Errorf("never written: %s", strings.Join(missing, "; "))
	}
}

func TestSchemaSQL_FillsEveryTable(t *testing.T) {
	sql := SchemaSQL("app")
	if _, err := pg_query.Parse(sql); err != nil {
		t.Fatalf("schema does not parse: %v", err)
	}
	for _, tb := range Tables {
		if !strings.Contains(sql, "CREATE TABLE "+tb.Name+" (") {
			t.Errorf("no CREATE TABLE %s", tb.Name)
		}
		for _, c := range tb.Columns {
			if tb.Rows > 0 && !contains(c.Values, "NULL") {
				t.Errorf("%s.%s has no NULL", tb.Name, c.Name)
			}
		}
	}
	if !strings.Contains(DatasetsYAML(), "postgres:public.gen_t") {
		t.Error("gen_t is no dataset")
	}
}

func TestSettings_RoundTrip(t *testing.T) {
	s := Settings{TimeZone: "Europe/Moscow", DateStyle: "SQL, DMY", IntervalStyle: "iso_8601", ExtraFloatDigits: "0", ByteaOutput: "escape"}
	got, err := ParseSettings(s.String())
	if err != nil || got != s {
		t.Fatalf("ParseSettings(%q) = %+v, %v", s.String(), got, err)
	}
	if _, err := ParseSettings("search_path=x"); err == nil {
		t.Error("an unknown setting was accepted")
	}
}
