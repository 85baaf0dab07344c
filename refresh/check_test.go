package refresh

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

func TestProbeSelect_MatchesCopyQuery(t *testing.T) {
	ds := &catalog.Dataset{Schema: "public", Table: "t", Name: "t",
		Acceleration: catalog.Acceleration{RefreshSQL: "SELECT id FROM t WHERE id > 10"}}
	_, q, err := copyQuery(ds, checkColumnsOf("id"))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := probeSelect(q)
	if want := `SELECT "id" FROM "public"."t" WHERE (id > 10) LIMIT 0`; !ok || got != want {
		t.Errorf("probeSelect(%q) = %q, %v; want %q", q, got, ok, want)
	}
	if _, ok := probeSelect("SELECT 1"); ok {
		t.Error("probeSelect accepted a statement that is not copyQuery's")
	}
}

func TestWarnings_IgnoredSettingsAndRetention(t *testing.T) {
	cfg := parseConfig(t, "", t.TempDir(), dataset("w_full", "memory", "")+
		dataset("w_caching", "memory", "refresh_mode: caching\non_zero_results: use_source")+
		dataset("w_retention", "memory", "retention_check_enabled: true\nretention_period: 1d"))
	var got []string
	for _, p := range Warnings(cfg) {
		got = append(got, p.Format("test.yaml"))
	}
	text := strings.Join(got, "\n")
	if len(got) != 3 {
		t.Fatalf("want 3 warnings, got %d:\n%s", len(got), text)
	}
	for _, want := range []string{
		`dataset "w_caching": acceleration.on_zero_results: on_zero_results is ignored with refresh_mode: caching: a miss always asks the source`,
		`dataset "w_retention": acceleration.retention_check_enabled: no retention pass is scheduled: time_column is not set`,
		`dataset "w_retention": acceleration.retention_check_enabled: no retention pass is scheduled: retention_check_interval is missing`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("warnings lack %q:\n%s", want, text)
		}
	}
}

func TestCheckOrigin_ReportsEveryProblem(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS chk_good, chk_cols, chk_sql, chk_secret, chk_rls, chk_colpriv;
		CREATE TABLE chk_good (id int PRIMARY KEY, at timestamptz, kind text);
		INSERT INTO chk_good VALUES (1, now() - interval '10 days', 'old'), (2, now(), 'new');
		CREATE TABLE chk_cols (id int PRIMARY KEY, at timestamptz);
		CREATE TABLE chk_sql (id int PRIMARY KEY, kind text);
		CREATE TABLE chk_secret (id int PRIMARY KEY);
		CREATE TABLE chk_rls (id int PRIMARY KEY);
		ALTER TABLE chk_rls ENABLE ROW LEVEL SECURITY;
		CREATE POLICY chk_rls_none ON chk_rls USING (false);
		CREATE TABLE chk_colpriv (id int PRIMARY KEY, secret text);
		GRANT SELECT ON chk_good, chk_cols, chk_sql, chk_rls TO app;
		GRANT SELECT (id) ON chk_colpriv TO app;`)
	t.Cleanup(func() {
		originExec(t, "DROP TABLE IF EXISTS chk_good, chk_cols, chk_sql, chk_secret, chk_rls, chk_colpriv")
	})

	datasets := dataset("chk_good", "memory", `refresh_sql: SELECT id, at FROM chk_good WHERE kind <> 'x'
retention_sql: DELETE FROM chk_good WHERE at < now() - interval '1 day'
retention_check_enabled: true
retention_check_interval: 1h
on_zero_results: use_source`) +
		"    time_column: at\n" +
		dataset("chk_missing", "memory", "") +
		dataset("chk_cols", "memory", "primary_key: [id, nope]\nrefresh_sql: SELECT id, gone FROM chk_cols") +
		"    time_column: when\n" +
		dataset("chk_sql", "memory", `refresh_sql: SELECT * FROM chk_sql WHERE no_such_function(kind)
retention_sql: DELETE FROM chk_sql WHERE kind > 5`) +
		dataset("chk_secret", "memory", "") +
		dataset("chk_rls", "memory", "") +
		dataset("chk_colpriv", "memory", "refresh_sql: SELECT id FROM chk_colpriv") +
		"  - from: postgres:public.chk_not_accelerated\n    acceleration:\n      enabled: false\n"
	cfg := parseConfig(t, srv.DSN(pgtest.AppUser, pgtest.AppPassword), t.TempDir(), datasets)

	problems, err := CheckOrigin(context.Background(), cfg)
	if err != nil {
		t.Fatalf("CheckOrigin: %v", err)
	}
	byDataset := map[string][]string{}
	var all []string
	for _, p := range problems {
		byDataset[p.Dataset] = append(byDataset[p.Dataset], p.Error())
		all = append(all, p.Format("test.yaml"))
	}
	text := strings.Join(all, "\n")
	for ds, wants := range map[string][]string{
		"chk_missing": {"from: table public.chk_missing does not exist in database " + pgtest.TestDatabase},
		"chk_cols": {
			`time_column: "when" is not a column of public.chk_cols; name one of its columns: id, at`,
			`acceleration.primary_key: "nope" is not a column`,
			`acceleration.refresh_sql: "gone" is not a column`,
		},
		"chk_sql": {
			"acceleration.refresh_sql: the refresh's query fails at the origin: ERROR: function no_such_function(text) does not exist (SQLSTATE 42883)",
			`acceleration.retention_sql: its condition fails at the origin: ERROR: operator does not exist: text > integer (SQLSTATE 42883); the query: SELECT 1 FROM "public"."chk_sql" WHERE (kind > 5) LIMIT 0`,
		},
		"chk_secret": {`from: the refresh role app (the user of origin.dsn) may not read public.chk_secret; run GRANT SELECT ON "public"."chk_secret" TO "app" at the origin`},
		"chk_rls":    {"from: row level security applies to the refresh role app on public.chk_rls"},
	} {
		got := strings.Join(byDataset[ds], "\n")
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Errorf("dataset %s: problems lack %q; all problems:\n%s", ds, want, text)
			}
		}
		if len(byDataset[ds]) != len(wants) {
			t.Errorf("dataset %s: want %d problems, got %d:\n%s", ds, len(wants), len(byDataset[ds]), got)
		}
	}
	for _, ds := range []string{"chk_good", "chk_colpriv", "chk_not_accelerated"} {
		if len(byDataset[ds]) != 0 {
			t.Errorf("dataset %s: unexpected problems:\n%s", ds, strings.Join(byDataset[ds], "\n"))
		}
	}
	// retention_sql's DELETE never runs: the old row is still there.
	if rows := originQuery(t, "SELECT count(*) FROM chk_good"); *rows[0][0] != "2" {
		t.Errorf("chk_good has %s rows after the checks, want 2", *rows[0][0])
	}
}

func TestCheckOrigin_UnreachableOrigin(t *testing.T) {
	cfg := parseConfig(t, "postgres://app:hunter2@127.0.0.1:1/db?sslmode=disable&connect_timeout=5", t.TempDir(), dataset("x", "memory", ""))
	_, err := CheckOrigin(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "connect to origin") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("CheckOrigin of an unreachable origin: %v", err)
	}
}

// checkColumnsOf is integer columns with the names given.
func checkColumnsOf(names ...string) []accelerator.ColumnSpec {
	out := make([]accelerator.ColumnSpec, len(names))
	for i, n := range names {
		out[i] = accelerator.ColumnSpec{Name: n, TypeOID: 23, TypeMod: -1}
	}
	return out
}

// TestCheckOrigin_Changes: what refresh_mode: changes needs of the origin.
func TestCheckOrigin_Changes(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS chk_cdc_ok, chk_cdc_nokey, chk_cdc_otherkey;
		CREATE TABLE chk_cdc_ok (id int PRIMARY KEY, v text);
		CREATE TABLE chk_cdc_nokey (id int, v text);
		CREATE TABLE chk_cdc_otherkey (id int, v text PRIMARY KEY);
		GRANT SELECT ON chk_cdc_ok, chk_cdc_nokey, chk_cdc_otherkey TO app;`)
	t.Cleanup(func() { originExec(t, "DROP TABLE IF EXISTS chk_cdc_ok, chk_cdc_nokey, chk_cdc_otherkey") })
	datasets := changesDataset("chk_cdc_ok", "memory") + changesDataset("chk_cdc_nokey", "memory") +
		changesDataset("chk_cdc_otherkey", "memory") + "    params:\n      pg_publication: no_such_pub\n"
	// As the superuser: REPLICATION and wal_level hold.
	problems, err := CheckOrigin(context.Background(), parseConfig(t, "", t.TempDir(), datasets))
	if err != nil {
		t.Fatal(err)
	}
	byDataset := map[string]string{}
	for _, p := range problems {
		byDataset[p.Dataset] += p.Error() + "\n"
	}
	if byDataset["chk_cdc_ok"] != "" {
		t.Errorf("chk_cdc_ok: %s", byDataset["chk_cdc_ok"])
	}
	if !strings.Contains(byDataset["chk_cdc_nokey"], "has no primary key and no REPLICA IDENTITY FULL") {
		t.Errorf("chk_cdc_nokey: %q", byDataset["chk_cdc_nokey"])
	}
	for _, want := range []string{`is not the replica identity of "public"."chk_cdc_otherkey" ([v])`, "params.pg_publication: publication no_such_pub does not exist at the origin"} {
		if !strings.Contains(byDataset["chk_cdc_otherkey"], want) {
			t.Errorf("chk_cdc_otherkey lacks %q: %q", want, byDataset["chk_cdc_otherkey"])
		}
	}
	// As app, which has no REPLICATION.
	problems, err = CheckOrigin(context.Background(), parseConfig(t, srv.DSN(pgtest.AppUser, pgtest.AppPassword), t.TempDir(), changesDataset("chk_cdc_ok", "memory")))
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 || !strings.Contains(problems[0].Error(), "REPLICATION attribute") ||
		!strings.Contains(problems[1].Error(), "may not create the publication the change stream reads") {
		t.Errorf("as app: %v", problems)
	}
}

// TestCheckOrigin_ChangesPublicationAndSlot: validate -origin checks that
// the refresh role can do what a changes refresh runs at the origin (open
// a replication connection, create or extend the publication, take a
// slot), without creating anything.
func TestCheckOrigin_ChangesPublicationAndSlot(t *testing.T) {
	const role, pass = "chk_cdc_role", "chk-cdc-pass"
	originExec(t, `DROP TABLE IF EXISTS chk_cdc_rights, chk_cdc_unlogged;
		DROP PUBLICATION IF EXISTS chk_cdc_pub, chk_cdc_other_pub, pgaccel_0badcafe_chk_cdc_rights;
		DO $$ BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'chk_cdc_role') THEN
			EXECUTE 'DROP OWNED BY chk_cdc_role'; DROP ROLE chk_cdc_role; END IF; END $$;
		CREATE ROLE chk_cdc_role LOGIN REPLICATION PASSWORD 'chk-cdc-pass';
		CREATE TABLE chk_cdc_rights (id int PRIMARY KEY, v text);
		CREATE UNLOGGED TABLE chk_cdc_unlogged (id int PRIMARY KEY, v text);
		GRANT SELECT ON chk_cdc_rights, chk_cdc_unlogged TO chk_cdc_role;
		CREATE PUBLICATION chk_cdc_pub FOR TABLE chk_cdc_rights;
		CREATE PUBLICATION chk_cdc_other_pub;`)
	t.Cleanup(func() {
		originExec(t, `DROP TABLE IF EXISTS chk_cdc_rights, chk_cdc_unlogged;
			DROP PUBLICATION IF EXISTS chk_cdc_pub, chk_cdc_other_pub, pgaccel_0badcafe_chk_cdc_rights;
			DROP OWNED BY chk_cdc_role; DROP ROLE chk_cdc_role`)
	})
	dsn := srv.DSN(role, pass)
	state := func() string {
		return rowsText(originQuery(t, `SELECT (SELECT count(*) FROM pg_publication), (SELECT count(*) FROM pg_publication_rel),
			(SELECT count(*) FROM pg_replication_slots)`))
	}
	// check returns the problems CheckOrigin finds, one a line; it must
	// leave the publications and slots as they were.
	check := func(name, dsn, dataDir, datasets string) string {
		t.Helper()
		if dataDir == "" {
			dataDir = t.TempDir()
		}
		before := state()
		problems, err := CheckOrigin(context.Background(), parseConfig(t, dsn, dataDir, datasets))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if after := state(); after != before {
			t.Errorf("%s: the checks changed publications or slots: %s, then %s", name, before, after)
		}
		var out []string
		for _, p := range problems {
			out = append(out, p.Error())
		}
		return strings.Join(out, "\n")
	}
	const createMsg = `acceleration.refresh_mode: the refresh role chk_cdc_role may not create the publication the change stream reads (CREATE PUBLICATION ... FOR TABLE "public"."chk_cdc_rights" needs CREATE on the database and ownership of the table), and it lacks `
	// pgaccel's own publication at its instance id, existing without the table.
	ownDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(ownDir, instanceIDFile), []byte("0badcafe\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	named := func(pub string) string {
		return changesDataset("chk_cdc_rights", "memory") + "    params:\n      pg_publication: " + pub + "\n"
	}
	for _, tc := range []struct {
		name, setup, dsn, dataDir, datasets, want string
	}{
		{"no CREATE, not the owner", "", dsn, "", changesDataset("chk_cdc_rights", "memory"),
			createMsg + "CREATE on database " + pgtest.TestDatabase + ` and ownership of "public"."chk_cdc_rights"; create one yourself (CREATE PUBLICATION chk_cdc_rights_pub FOR TABLE "public"."chk_cdc_rights") and name it with params.pg_publication, or grant the role what it lacks`},
		{"the owner without CREATE", `ALTER TABLE chk_cdc_rights OWNER TO chk_cdc_role`, dsn, "", changesDataset("chk_cdc_rights", "memory"),
			createMsg + "CREATE on database " + pgtest.TestDatabase + ";"},
		{"the owner with CREATE", `GRANT CREATE ON DATABASE ` + pgtest.TestDatabase + ` TO chk_cdc_role`, dsn, "", changesDataset("chk_cdc_rights", "memory"), ""},
		{"a named publication that publishes the table", `ALTER TABLE chk_cdc_rights OWNER TO ` + pgtest.SuperUser + `; GRANT SELECT ON chk_cdc_rights TO chk_cdc_role`, dsn, "", named("chk_cdc_pub"), ""},
		{"a named publication without the table", "", dsn, "", named("chk_cdc_other_pub"),
			`params.pg_publication: publication chk_cdc_other_pub does not publish "public"."chk_cdc_rights" at the origin; run ALTER PUBLICATION "chk_cdc_other_pub" ADD TABLE "public"."chk_cdc_rights" at the origin`},
		{"pgaccel's own publication, not the role's", `CREATE PUBLICATION pgaccel_0badcafe_chk_cdc_rights`, dsn, ownDir, changesDataset("chk_cdc_rights", "memory"),
			`acceleration.refresh_mode: the refresh role chk_cdc_role may not add "public"."chk_cdc_rights" to publication pgaccel_0badcafe_chk_cdc_rights, as the refresh would`},
		{"pgaccel's own publication, as the superuser", "", "", ownDir, changesDataset("chk_cdc_rights", "memory"), ""},
		{"an unlogged table", "", "", "", changesDataset("chk_cdc_unlogged", "memory"),
			`from: "public"."chk_cdc_unlogged" is an unlogged or temporary table, which logical replication cannot publish`},
	} {
		if tc.setup != "" {
			originExec(t, tc.setup)
		}
		got := check(tc.name, tc.dsn, tc.dataDir, tc.datasets)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) || strings.Count(got, "\n") > 0 {
			t.Errorf("%s: problems\n%s\nwant one: %s", tc.name, got, tc.want)
		}
	}
	// Every slot taken: none is left for a new one.
	originExec(t, `ALTER TABLE chk_cdc_rights OWNER TO chk_cdc_role`)
	slots := rowsText(originQuery(t, "SELECT current_setting('max_replication_slots')::int - (SELECT count(*) FROM pg_replication_slots)"))
	free, _ := strconv.Atoi(strings.TrimSpace(slots))
	cfg, err := pgconn.ParseConfig(srv.SuperDSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["replication"] = "database"
	c, err := pgconn.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background()) // its temporary slots go with it
	for i := range free {
		if _, err := pglogrepl.CreateReplicationSlot(context.Background(), c, fmt.Sprintf("chk_cdc_fill_%d", i), "pgoutput",
			pglogrepl.CreateReplicationSlotOptions{Temporary: true, Mode: pglogrepl.LogicalReplication, SnapshotAction: "NOEXPORT_SNAPSHOT"}); err != nil {
			t.Fatal(err)
		}
	}
	want := "acceleration.refresh_mode: changes needs a replication slot, and the origin's"
	if got := check("no free slot", dsn, "", changesDataset("chk_cdc_rights", "memory")); !strings.Contains(got, want) || strings.Count(got, "\n") > 0 {
		t.Errorf("no free slot: problems\n%s\nwant one: %s", got, want)
	}
}
