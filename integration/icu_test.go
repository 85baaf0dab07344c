package integration

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pgaccel/pgaccel/accelerator"
)

// icuDatabase is the CREATE DATABASE option of an origin database whose
// default collation is ICU's en-US (its LC_COLLATE and LC_CTYPE, which
// Postgres 15 still asks for, en_US.UTF-8).
const icuDatabase = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'en_US.UTF-8'"

// requireICU fails the test, with the command that installs it, when this
// process cannot load an ICU library (accelerator/icu.go).
func requireICU(t *testing.T) {
	t.Helper()
	if _, err := accelerator.ICURelease(); err != nil {
		t.Fatalf("%v (Debian: apt-get install libicu72, which postgresql depends on)", err)
	}
}

// TestCollation_ICUOrderIsKeyed: in a database whose default collation is
// ICU's en-US, ordering, range comparisons and case mapping are answered
// from the acceleration by ICU's sort keys and case mappings, byte for
// byte as the origin answers them; also under an ICU collation with
// options (numeric ordering) and another language's. An ICU collation
// whose recorded version is not this process's ICU collator's is ordered
// at the origin, with the reason in status and in the route.
func TestCollation_ICUOrderIsKeyed(t *testing.T) {
	requireLocales(t, "en_US.UTF-8", "de_DE.UTF-8")
	requireICU(t)
	dsn := otherDatabase(t, "pgaccel_icu", icuDatabase, linguisticSetup+`
		CREATE COLLATION num_icu (provider = icu, locale = 'en-u-kn-true');
		CREATE COLLATION stale_icu (provider = icu, locale = 'de-DE', version = '1.0');
		CREATE TABLE icu_words (id int PRIMARY KEY, k text COLLATE num_icu, sv text COLLATE "sv-x-icu", tr text COLLATE "tr-x-icu",
		  old text COLLATE stale_icu);
		INSERT INTO icu_words SELECT i, w, w, w, w FROM unnest(ARRAY['item 10', 'item 2', 'item 1', 'a10', 'a9', 'A9', 'zebra', 'åsna',
		  'ärta', 'öl', 'Öl', 'wok', 'vin', 'istanbul', 'Istanbul', 'İzmir', 'ılık', 'IŞIK', 'straße', 'Straße', '', '2', '10'])
		  WITH ORDINALITY u(w, i);
		GRANT SELECT ON icu_words TO app;`)
	a := startAppOn(t, dsn(origin.SuperUser, origin.SuperPassword), "  - from: postgres:public.words\n  - from: postgres:public.icu_words\n")
	proxyDSN := strings.Replace(appDSN(a, appUser, appPass), "/"+origin.Database+"?", "/pgaccel_icu?", 1)

	st, _ := a.Registry.State("words")
	for _, c := range st.Columns {
		switch c.Name {
		case "w", "v", "tags":
			if c.CollationLocale != "icu:en-US" || c.CaseLocale != "icu:en-US" {
				t.Errorf("column %s: collation locale %q (%s), case locale %q (%s), want icu:en-US", c.Name, c.CollationLocale, c.CollationNote,
					c.CaseLocale, c.CaseNote)
			}
		case "c":
			if !c.BinaryCollation {
				t.Errorf("column c (COLLATE \"C\") is not bytewise: %+v", c)
			}
		}
	}
	st, _ = a.Registry.State("icu_words")
	for _, c := range st.Columns {
		switch c.Name {
		case "k", "sv", "tr":
			if !strings.HasPrefix(c.CollationLocale, "icu:") {
				t.Errorf("column %s: collation locale %q (%s), want an ICU one", c.Name, c.CollationLocale, c.CollationNote)
			}
		case "old":
			if c.CollationLocale != "" || !strings.Contains(c.CollationNote, "collator version 1.0") {
				t.Errorf("column old: collation locale %q, note %q; want none, for its version 1.0", c.CollationLocale, c.CollationNote)
			}
		}
	}
	checkRouteCases(t, a, dsn(appUser, appPass), proxyDSN, append(slices.Clone(wordsCases), []routeCase{
		{"SELECT id, upper(w), lower(v), initcap(w || ' x-y o''b don''t') FROM words ORDER BY id", acc},
		// Other ICU collations: numeric ordering, Swedish, Turkish case.
		{"SELECT id, k FROM icu_words ORDER BY k, id", acc},
		{"SELECT id FROM icu_words WHERE k > 'item 9' ORDER BY id", acc},
		{"SELECT id, sv FROM icu_words ORDER BY sv, id", acc},
		{"SELECT min(sv), max(sv), min(tr), max(tr) FROM icu_words", acc},
		{"SELECT id, upper(tr), lower(tr), initcap(tr) FROM icu_words ORDER BY id", acc},
		{"SELECT id, upper(sv), lower(sv) FROM icu_words WHERE sv ILIKE '%Ö%' OR tr ILIKE 'i%' ORDER BY id", org}, // sv-SE and tr-TR
		{"SELECT id, upper(sv), lower(sv) FROM icu_words WHERE sv ILIKE '%Ö%' ORDER BY id", acc},
		{"SELECT id, upper(tr), upper(sv) FROM icu_words ORDER BY id", org}, // two locales in one statement
		// A collation whose version is not this ICU's: the origin's.
		{"SELECT id FROM icu_words ORDER BY old, id", org},
		{"SELECT max(old) FROM icu_words", org},
	}...))
	d := datasetStatus(t, a.AdminAddr(), "", "icu_words")
	colls, _ := json.Marshal(d["collations"])
	for _, want := range []string{`"locale":"icu:en-u-kn-true","name":"k"`, `"name":"old","ordered_at_origin":"`, "collator version 1.0"} {
		if !strings.Contains(string(colls), want) {
			t.Errorf("status collations %s, want %s", colls, want)
		}
	}
	if route := routeText(t, proxyDSN, "SELECT id FROM icu_words ORDER BY old, id"); !strings.Contains(route, "collation") || !strings.Contains(route, "collator version 1.0") {
		t.Errorf("last route %q, want the collation's reason", route)
	}
}
