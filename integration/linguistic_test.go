package integration

import (
	"context"
	"encoding/json"
	"os"

	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/integration/corpora"
)

// linguisticSetup is a table of words that order otherwise under
// en_US.UTF-8 than by their bytes: case, accents, punctuation, spaces,
// digits, and letters of other scripts; a column in the C collation, a
// jsonb of the same words, an array of them, and a column of a collation
// whose recorded version is not this C library's.
const linguisticSetup = `
CREATE COLLATION stale_de (provider = libc, locale = 'de_DE.UTF-8', version = '1.0');
CREATE TABLE words (id int PRIMARY KEY, w text, v varchar(20), c text COLLATE "C", doc jsonb, n int, tags text[],
  s text COLLATE stale_de);
INSERT INTO words
SELECT i, w, left(w, 20), w, jsonb_build_object('w', w), i % 4, ARRAY[w, upper(w)], w
FROM unnest(ARRAY['apple', 'Apple', 'APPLE', 'banana', 'Banana', 'cherry', 'éclair', 'eclair', 'Éclair', 'zebra',
  'Zebra', 'co-op', 'coop', 'co op', 'côte', 'cote', 'coté', 'straße', 'strasse', '10', '9', '1', 'a b', 'ab', 'a-b',
  'Ωmega', 'омега', '中文', '', ' leading', 'résumé', 'resume', 'Resume', 'naïve', 'naive', 'x-ray', 'xray', 'O''Brien',
  'obrien', 'item 10', 'item 2', 'item-1']) WITH ORDINALITY u(w, i);
INSERT INTO words VALUES (100, NULL, NULL, NULL, NULL, 1, NULL, NULL);
GRANT SELECT ON words TO app;`

// wordsCases are the statements over linguisticSetup's words, run in a
// database whose default collation is libc's en_US.UTF-8 and in one whose
// default is ICU's en-US (TestCollation_ICUOrderIsKeyed): the same routes
// and answers under either provider.
var wordsCases = []routeCase{
	{"SELECT id, w FROM words ORDER BY w, id", acc},
	{"SELECT id, w FROM words ORDER BY w DESC NULLS LAST, id", acc},
	{"SELECT id, w AS x FROM words ORDER BY x, id", acc},
	{"SELECT id, v FROM words ORDER BY 2, 1", acc},
	{"SELECT id FROM words ORDER BY lower(w), id", acc},
	// Case mapping under en_US.UTF-8's LC_CTYPE.
	{"SELECT id, upper(w), lower(v), initcap(w || ' x-y o''b') FROM words ORDER BY id", acc},
	{"SELECT id FROM words WHERE w ILIKE 'É%' OR v NOT ILIKE '%E%' ORDER BY id", acc},
	{"SELECT id, upper(c), lower(c) FROM words ORDER BY id", acc},
	{"SELECT id, upper(w), upper(c) FROM words ORDER BY id", org}, // two LC_CTYPEs in one statement
	{"SELECT id FROM words ORDER BY w || 'x', id", acc},
	{"SELECT id FROM words ORDER BY substr(w, 2), id", acc},
	{"SELECT id FROM words ORDER BY doc->>'w', id", acc},
	{"SELECT id FROM words ORDER BY n::text || w, id", acc},
	{"SELECT id FROM words WHERE w > 'b' ORDER BY id", acc},
	{"SELECT id FROM words WHERE w <= 'Coop' ORDER BY id", acc},
	{"SELECT id FROM words WHERE w BETWEEN 'a' AND 'd' ORDER BY id", acc},
	{"SELECT id FROM words WHERE v NOT BETWEEN 'B' AND 'e' ORDER BY id", acc},
	{"SELECT id FROM words WHERE doc->>'w' < 'cote' ORDER BY id", acc},
	{"SELECT min(w), max(w), min(v), max(doc->>'w') FROM words", acc},
	{"SELECT n, min(w), max(w) FILTER (WHERE id > 3) FROM words GROUP BY n ORDER BY n", acc},
	{"SELECT id, max(w) OVER (PARTITION BY n ORDER BY id) FROM words ORDER BY id", acc},
	{"SELECT id, row_number() OVER (ORDER BY w, id), rank() OVER (PARTITION BY n ORDER BY w DESC) FROM words ORDER BY id", acc},
	{"SELECT n, string_agg(w, ',' ORDER BY w, id) FROM words GROUP BY n ORDER BY n", acc},
	{"SELECT DISTINCT ON (n) n, w FROM words ORDER BY n, w, id", acc},
	{"SELECT w, count(*) FROM words GROUP BY w ORDER BY w", acc},
	{"SELECT x.w FROM (SELECT w FROM words ORDER BY w LIMIT 5) x ORDER BY x.w DESC", acc},
	{"SELECT id FROM words WHERE w = 'apple' OR w IN ('Zebra', 'coop') ORDER BY id", acc},
	{"SELECT a.id, b.id FROM words a JOIN words b ON a.w < b.w AND b.id < 5 WHERE a.id < 5 ORDER BY 1, 2", acc},
	{"SELECT id FROM words WHERE w > (SELECT min(w) FROM words WHERE n = 2) ORDER BY id", acc},
	// The C collation's column is ordered by its bytes.
	{"SELECT id, c FROM words ORDER BY c, id", acc},
	{"SELECT max(c) FROM words", acc},
	// What is not keyed goes to the origin.
	{"SELECT id, greatest(w, 'm') FROM words ORDER BY id", org},
	{"SELECT id FROM words ORDER BY tags, id", org},
	{"SELECT w FROM words WHERE n = 1 UNION ALL SELECT v FROM words WHERE n = 2 ORDER BY 1", org},
	{"SELECT mode() WITHIN GROUP (ORDER BY w) FROM words", org},
	{"SELECT string_agg(DISTINCT w, ',') FROM words", org},
	{"SELECT id FROM words WHERE w < ANY (SELECT w FROM words WHERE n = 3) ORDER BY id", org},
	// A collation whose version is not this C library's: the origin's.
	{"SELECT id FROM words ORDER BY s, id", org},
	{"SELECT max(s) FROM words", org},
}

// TestCollation_LinguisticOrderIsKeyed: in a database whose default
// collation is libc's en_US.UTF-8, text ordering and range comparisons
// (ORDER BY, windows, aggregates' ORDER BY, <, BETWEEN, min/max, DISTINCT
// ON, text of a jsonb and of casts) are answered from the acceleration by
// the locale's keys, byte for byte as the origin answers them; what the
// rewrite cannot key goes to the origin, and so does ordering by a
// collation whose recorded version is not this C library's, with the
// reason in the route and in the dataset's status.
func TestCollation_LinguisticOrderIsKeyed(t *testing.T) {
	requireLocales(t, "en_US.UTF-8", "de_DE.UTF-8")
	dsn := otherDatabase(t, "pgaccel_enus", "LOCALE 'en_US.UTF-8'", linguisticSetup)
	a := startAppOn(t, dsn(origin.SuperUser, origin.SuperPassword), "  - from: postgres:public.words\n")
	proxyDSN := strings.Replace(appDSN(a, appUser, appPass), "/"+origin.Database+"?", "/pgaccel_enus?", 1)

	st, ok := a.Registry.State("words")
	if !ok {
		t.Fatal("no dataset words")
	}
	for _, c := range st.Columns {
		switch c.Name {
		case "w", "v", "tags":
			if c.CollationLocale != "en_US.UTF-8" || c.CaseLocale != "en_US.UTF-8" {
				t.Errorf("column %s: collation locale %q (%s), case locale %q (%s), want en_US.UTF-8", c.Name, c.CollationLocale, c.CollationNote,
					c.CaseLocale, c.CaseNote)
			}
		case "s":
			if c.CollationLocale != "" || !strings.Contains(c.CollationNote, "glibc 1.0") {
				t.Errorf("column s: collation locale %q, note %q; want none, for its version 1.0", c.CollationLocale, c.CollationNote)
			}
		}
	}
	checkRouteCases(t, a, dsn(appUser, appPass), proxyDSN, wordsCases)
	t.Run("parameters", func(t *testing.T) {
		sql := "SELECT id FROM words WHERE w >= $1 AND v < $2 ORDER BY w, id"
		before := routeCounts(t, a)
		differentialDSN(t, dsn(appUser, appPass), proxyDSN, func(t *testing.T, c *pgx.Conn, tr *transcript) {
			extended(ctxT(t), c, tr, sql, [][]byte{[]byte("B"), []byte("d")}, nil)
		})
		if got := routeCounts(t, a)[acc] - before[acc]; got != 1 {
			t.Errorf("accelerated %v times, want 1", got)
		}
	})
	// Status says, column by column, how text is ordered: by pgaccel
	// under the locale, or at the origin and why.
	d := datasetStatus(t, a.AdminAddr(), "", "words")
	colls, _ := json.Marshal(d["collations"])
	for _, want := range []string{`{"locale":"en_US.UTF-8","name":"w"}`, `"name":"s","ordered_at_origin":"`, "glibc 1.0"} {
		if !strings.Contains(string(colls), want) {
			t.Errorf("status collations %s, want %s", colls, want)
		}
	}
	// The route says why a statement ordering by the stale collation
	// went to the origin.
	if route := routeText(t, proxyDSN, "SELECT id FROM words ORDER BY s, id"); !strings.Contains(route, "collation") || !strings.Contains(route, "glibc 1.0") {
		t.Errorf("last route %q, want the collation's reason", route)
	}
}

// routeText runs sql through a new connection to dsn and returns what
// SHOW pgaccel.last_route says of it.
func routeText(t *testing.T, dsn, sql string) string {
	t.Helper()
	c, err := pgx.Connect(ctxT(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctxT(t), sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		return "error: " + err.Error()
	}
	var route string
	if err := c.QueryRow(ctxT(t), "SHOW pgaccel.last_route", pgx.QueryExecModeSimpleProtocol).Scan(&route); err != nil {
		t.Fatal(err)
	}
	return route
}

// allLocales: PGACCEL_TEST_LOCALES=all runs the accel and coverage corpora
// in both linguistic databases (en_US.UTF-8 and ICU en-US). By default
// make test runs the accel corpus in en_US.UTF-8 and the coverage corpus
// in ICU (TPC-H runs in both), which keeps it within its time budget.
func allLocales() bool { return os.Getenv("PGACCEL_TEST_LOCALES") == "all" }

// requireLocales fails the test, with the command that installs them,
// when this machine lacks a libc locale the test's origin needs.
func requireLocales(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := accelerator.LocaleAvailable(name); err != nil {
			t.Fatalf("%v (as root: apt-get install locales && localedef -i %s -f UTF-8 %s; .ci/run does it)", err, strings.SplitN(name, ".", 2)[0], name)
		}
	}
}

// TestCoverage_LinguisticDatabase runs the coverage corpus (BI tools'
// and dashboards' SQL) in a database whose default collation is libc's
// en_US.UTF-8 and in one whose default collation is ICU's en-US,
// directly and through pgaccel: every answer byte for byte the origin's,
// and the accelerated share within 3 points of the C database's
// (coverage_routes.txt, which TestCoverage_DifferentialCorpus checks).
func TestCoverage_LinguisticDatabase(t *testing.T) {
	requireLocales(t, "en_US.UTF-8")
	requireICU(t)
	qs, err := corpora.Coverage()
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []struct{ label, name, options string }{
		{"en_US.UTF-8", "pgaccel_cov_enus", "LOCALE 'en_US.UTF-8'"},
		{"ICU en-US", "pgaccel_cov_icu", icuDatabase},
	} {
		if db.label == "en_US.UTF-8" && !allLocales() {
			continue // make test runs the accel corpus in en_US, this one in ICU
		}
		t.Run(db.label, func(t *testing.T) {
			dsn := otherDatabase(t, db.name, db.options, corpora.CoverageSchema)
			var ds strings.Builder
			for _, name := range corpora.CoverageDatasets {
				ds.WriteString("  - from: postgres:public." + name + "\n")
			}
			// As TestCoverage_DifferentialCorpus: point reads accelerated.
			a := startAppOrigin(t, dsn(origin.SuperUser, origin.SuperPassword), "", "  point_reads: acceleration\n", ds.String(), true)
			proxyDSN := strings.Replace(appDSN(a, appUser, appPass), "/"+origin.Database+"?", "/"+db.name+"?", 1)
			accelC, accelHere := 0, 0
			var notHere []string
			for _, q := range qs {
				if q.Route == acc {
					accelC++
				}
				t.Run(q.Name, func(t *testing.T) {
					before := routeCounts(t, a)
					differentialDSN(t, dsn(appUser, appPass), proxyDSN, corpusSession(q))
					after := routeCounts(t, a)
					if after[acc]-before[acc] > 0 && after[fbk] == before[fbk] {
						accelHere++
					} else if q.Route == acc {
						notHere = append(notHere, q.Name+": "+routeText(t, proxyDSN, corpora.Inline(q.SQL, q.Args)))
					}
				})
			}
			share := func(n int) float64 { return 100 * float64(n) / float64(len(qs)) }
			t.Logf("accelerated: %d of %d (%.1f %%) in %s, %d (%.1f %%) in C", accelHere, len(qs), share(accelHere), db.label, accelC, share(accelC))
			for _, n := range notHere {
				t.Logf("accelerated in C, not in %s: %s", db.label, n)
			}
			if share(accelC)-share(accelHere) > 3 {
				t.Errorf("accelerated share %.1f %% in %s, more than 3 points below the C database's %.1f %%", share(accelHere), db.label, share(accelC))
			}
		})
	}
}

// TestCollation_OtherLocalesAreKeyed: the same keys and case mappings in
// a database whose LC_COLLATE is Swedish (å, ä and ö after z, v and w
// apart) and whose LC_CTYPE is Turkish (upper('i') is İ, lower('I') is ı):
// established by the probes and answered byte for byte as the origin
// answers.
func TestCollation_OtherLocalesAreKeyed(t *testing.T) {
	requireLocales(t, "sv_SE.UTF-8", "tr_TR.UTF-8")
	dsn := otherDatabase(t, "pgaccel_sv_tr", "LC_COLLATE 'sv_SE.UTF-8' LC_CTYPE 'tr_TR.UTF-8'", `
		CREATE TABLE words (id int PRIMARY KEY, w text);
		INSERT INTO words SELECT i, w FROM unnest(ARRAY['zebra', 'åsna', 'ärta', 'öl', 'Öl', 'apa', 'vin', 'wok', 'Wien',
		  'istanbul', 'Istanbul', 'İzmir', 'ılık', 'IŞIK', 'ışık', 'yoğurt', 'aa', 'ab']) WITH ORDINALITY u(w, i);
		GRANT SELECT ON words TO app;`)
	a := startAppOn(t, dsn(origin.SuperUser, origin.SuperPassword), "  - from: postgres:public.words\n")
	proxyDSN := strings.Replace(appDSN(a, appUser, appPass), "/"+origin.Database+"?", "/pgaccel_sv_tr?", 1)
	st, _ := a.Registry.State("words")
	for _, c := range st.Columns {
		if c.Name == "w" && (c.CollationLocale != "sv_SE.UTF-8" || c.CaseLocale != "tr_TR.UTF-8") {
			t.Fatalf("column w: collation %q (%s), case %q (%s)", c.CollationLocale, c.CollationNote, c.CaseLocale, c.CaseNote)
		}
	}
	checkRouteCases(t, a, dsn(appUser, appPass), proxyDSN, []routeCase{
		{"SELECT id, w FROM words ORDER BY w, id", acc},
		{"SELECT id FROM words WHERE w > 'v' ORDER BY id", acc},
		{"SELECT min(w), max(w) FROM words", acc},
		{"SELECT id, upper(w), lower(w), initcap(w) FROM words ORDER BY id", acc},
		{"SELECT id FROM words WHERE w ILIKE 'i%' ORDER BY id", acc},
		{"SELECT id, w FROM words ORDER BY upper(w), id", acc},
	})
}

// routeCase is a read and the route both its runs must take.
type routeCase struct{ sql, route string }

// checkRouteCases runs each case directly (directDSN) and through a
// (proxyDSN), in the simple protocol and the extended one with binary
// results, compares the answers byte for byte and checks that both runs
// took the case's route (saying, when not, what SHOW pgaccel.last_route
// says of it).
func checkRouteCases(t *testing.T, a *app.App, directDSN, proxyDSN string, cases []routeCase) {
	t.Helper()
	for _, q := range cases {
		t.Run(q.sql, func(t *testing.T) {
			before := routeCounts(t, a)
			differentialDSN(t, directDSN, proxyDSN, func(t *testing.T, c *pgx.Conn, tr *transcript) {
				ctx := ctxT(t)
				simple(ctx, c, tr, q.sql)
				extended(ctx, c, tr, q.sql, nil, []int16{1})
			})
			after := routeCounts(t, a)
			if got := after[q.route] - before[q.route]; got != 2 {
				t.Errorf("want both runs %s, got %v (%s)", q.route, map[string]float64{acc: after[acc] - before[acc], org: after[org] - before[org], fbk: after[fbk] - before[fbk]},
					routeText(t, proxyDSN, q.sql))
			}
		})
	}
}
