package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
)

// otherDatabase creates (again) database name at the origin with the
// CREATE DATABASE options given, runs setup in it as the superuser, and
// returns the DSN of user in it.
func otherDatabase(t *testing.T, name, options, setup string) func(user, password string) string {
	t.Helper()
	mustExec(t, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	mustExec(t, "CREATE DATABASE "+name+" TEMPLATE template0 "+options)
	dsn := func(user, password string) string {
		return strings.Replace(origin.DSN(user, password), "/"+origin.Database+"?", "/"+name+"?", 1)
	}
	c, err := pgx.Connect(ctxT(t), dsn(origin.SuperUser, origin.SuperPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctxT(t), setup); err != nil {
		t.Fatalf("setup of %s: %v", name, err)
	}
	return dsn
}

// startAppOn starts pgaccel over the origin database of superDSN with the
// datasets given, and waits until they are ready.
func startAppOn(t *testing.T, superDSN, datasets string) *app.App {
	t.Helper()
	cfgText := fmt.Sprintf("origin:\n  dsn: %q\nserver:\n  listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\nruntime:\n  data_dir: %q\ndatasets:\n%s",
		superDSN, t.TempDir(), datasets)
	a := startAppText(t, cfgText)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCollation_DefaultCollationText: in a database whose default
// collation is linguistic (ICU en-US), text that comes from no column of
// its own collation (the text of a jsonb, to_char, a cast, a
// concatenation) orders by that collation. The refresh establishes the
// database's default collation even though no column of the dataset has
// it, and such ordering is keyed by it (byte for byte the origin's);
// jsonb itself and GREATEST still order at the origin. Text of a column in
// the C collation is ordered by its bytes.
func TestCollation_DefaultCollationText(t *testing.T) {
	dsn := otherDatabase(t, "pgaccel_icu_default", "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'", `
		CREATE TABLE docs (id int PRIMARY KEY, doc jsonb, c text COLLATE "C", n int);
		INSERT INTO docs VALUES (1, '{"n": "b"}', 'b', 5), (2, '{"n": "B"}', 'B', 40), (3, '{"n": "a"}', 'a', 300),
		  (4, '{"n": "Z"}', 'Z', -2), (5, '{"n": "é"}', 'é', 12), (6, '{"n": 7}', NULL, NULL);
		GRANT SELECT ON docs TO app;`)
	a := startAppOn(t, dsn(origin.SuperUser, origin.SuperPassword), "  - from: postgres:public.docs\n")
	proxyDSN := strings.Replace(appDSN(a, appUser, appPass), "/"+origin.Database+"?", "/pgaccel_icu_default?", 1)
	checkRouteCases(t, a, dsn(appUser, appPass), proxyDSN, []routeCase{
		{"SELECT id FROM docs ORDER BY doc->>'n', id", acc},
		{"SELECT max(doc->>'n'), min(doc->>'n') FROM docs", acc},
		{"SELECT id FROM docs WHERE doc->>'n' > 'b' ORDER BY id", acc},
		{"SELECT id FROM docs WHERE doc->>'n' BETWEEN 'a' AND 'c' ORDER BY id", acc},
		{"SELECT id, doc->>'n' AS k FROM docs ORDER BY k, id", acc},
		{"SELECT id, doc->>'n' FROM docs ORDER BY 2, 1", acc},
		{"SELECT id FROM docs ORDER BY doc->'n', id", org},
		{"SELECT id FROM docs ORDER BY doc, id", org},
		{"SELECT id FROM docs ORDER BY to_char(date '2020-01-01' + n, 'Mon DD'), id", acc},
		{"SELECT id FROM docs ORDER BY n::text, id", acc},
		{"SELECT id, row_number() OVER (ORDER BY doc->>'n', id) FROM docs ORDER BY id", acc},
		{"SELECT string_agg(doc->>'n', ',' ORDER BY doc->>'n') FROM docs", acc},
		{"SELECT greatest(doc->>'n', 'b') FROM docs ORDER BY id", org},
		// Text of a column of the C collation: its own.
		{"SELECT id FROM docs ORDER BY c, id", acc},
		{"SELECT max(c) FROM docs", acc},
		{"SELECT id FROM docs WHERE c > 'b' ORDER BY id", acc},
		{"SELECT id FROM docs ORDER BY lower(c), id", acc},
		// No ordering of text.
		{"SELECT id, doc->>'n' FROM docs WHERE doc->>'n' = 'b' ORDER BY id", acc},
		{"SELECT doc->>'n', count(*) FROM docs GROUP BY 1 ORDER BY count(*), 1", acc},
	})
}

// inBothLocales runs check against pgaccel serving datasets over schema,
// loaded into the origin's own database (C locale; the session in UTC),
// then into database db created in en_US.UTF-8 (the session in
// Australia/Sydney): the planner's and the encoder's rules must hold under
// a linguistic collation and a zone with daylight saving. drop, when not
// empty, removes the schema from the origin's own database afterwards.
func inBothLocales(t *testing.T, db, schema, drop, datasets string, check func(t *testing.T, a *app.App, direct, proxied string)) {
	t.Run("C, UTC", func(t *testing.T) {
		mustExec(t, schema)
		if drop != "" {
			t.Cleanup(func() { mustExec(t, drop) })
		}
		a := startApp(t, datasets)
		check(t, a, origin.DSN(appUser, appPass)+"&timezone=UTC", appDSN(a, appUser, appPass)+"&timezone=UTC")
	})
	t.Run("en_US.UTF-8, Australia/Sydney", func(t *testing.T) {
		requireLocales(t, "en_US.UTF-8")
		dsn := otherDatabase(t, db, "LOCALE 'en_US.UTF-8'", schema)
		t.Cleanup(func() { mustExec(t, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)") })
		a := startAppOrigin(t, dsn(origin.SuperUser, origin.SuperPassword), "", "", datasets, true)
		proxied := strings.Replace(appDSN(a, appUser, appPass), "/"+origin.Database+"?", "/"+db+"?", 1)
		const zone = "&timezone=Australia%2FSydney"
		check(t, a, dsn(appUser, appPass)+zone, proxied+zone)
	})
}
