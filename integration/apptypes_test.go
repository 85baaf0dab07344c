package integration

import (
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// The types of application schemas (issue 45): enums, and domains over
// them, accelerated and ordered as Postgres orders them.

// enumSchema is an enum whose sort order is not its labels' byte order
// nor their creation order ('meh' added before 'ok'), a domain over it,
// and a table of both.
func enumSchema(t *testing.T, exec func(t testing.TB, sql string), table string) {
	t.Helper()
	exec(t, `DROP TABLE IF EXISTS `+table+`; DROP DOMAIN IF EXISTS `+table+`_mood_d; DROP TYPE IF EXISTS `+table+`_mood;
		CREATE TYPE `+table+`_mood AS ENUM ('sad', 'ok', 'happy')`)
	// ADD VALUE's label cannot be used in the transaction that adds it.
	exec(t, `ALTER TYPE `+table+`_mood ADD VALUE 'meh' BEFORE 'ok'`)
	exec(t, `CREATE DOMAIN `+table+`_mood_d AS `+table+`_mood;
		CREATE TABLE `+table+` (id int PRIMARY KEY, status `+table+`_mood, st2 `+table+`_mood_d, amount numeric(12,2), name text);
		INSERT INTO `+table+` VALUES (1, 'happy', 'sad', 10.50, 'a'), (2, 'sad', 'ok', 3.25, 'b'), (3, 'meh', 'happy', NULL, 'c'),
		  (4, NULL, NULL, 7, 'd'), (5, 'ok', 'meh', 1.00, 'e'), (6, 'happy', 'ok', 2.5, 'f');
		GRANT SELECT ON `+table+` TO app;`)
}

func execSuper(t testing.TB, sql string) { mustExec(t, sql) }

// TestAppTypes_EnumsAreAcceleratedInTheirOrder: an enum column (and a
// domain over it) is held, ordered by the enum's sort order in ORDER BY,
// comparisons, BETWEEN, min/max and windows, answered byte for byte as
// the origin answers in both protocols; what Postgres refuses of an enum
// (a label it does not have, LIKE, text functions) goes to the origin,
// which says so.
func TestAppTypes_EnumsAreAcceleratedInTheirOrder(t *testing.T) {
	enumSchema(t, execSuper, "app_enum")
	t.Cleanup(func() {
		mustExec(t, "DROP TABLE IF EXISTS app_enum; DROP DOMAIN IF EXISTS app_enum_mood_d; DROP TYPE IF EXISTS app_enum_mood")
	})
	a := startApp(t, "  - from: postgres:public.app_enum\n")
	st, ok := a.Registry.State("app_enum")
	if !ok {
		t.Fatal("no dataset app_enum")
	}
	for _, c := range st.Columns {
		if (c.Name == "status" || c.Name == "st2") && (!c.Accelerated || !slices.Equal(c.EnumLabels, []string{"sad", "meh", "ok", "happy"})) {
			t.Errorf("column %s: accelerated %v (%s), labels %v; want accelerated, sad meh ok happy", c.Name, c.Accelerated, c.NotAccelerated, c.EnumLabels)
		}
	}
	direct, proxied := origin.DSN(appUser, appPass), appDSN(a, appUser, appPass)
	checkRouteCases(t, a, direct, proxied, []routeCase{
		{"SELECT id, status FROM app_enum ORDER BY status, id", acc},
		{"SELECT id, status, st2 FROM app_enum ORDER BY status DESC NULLS LAST, st2, id", acc},
		{"SELECT id FROM app_enum WHERE status > 'meh' ORDER BY id", acc},
		{"SELECT id FROM app_enum WHERE status <= 'ok' AND st2::text = 'meh' ORDER BY id", acc},
		{"SELECT id FROM app_enum WHERE status BETWEEN 'meh' AND 'ok' ORDER BY id", acc},
		{"SELECT min(status), max(status) FROM app_enum", acc},
		{"SELECT status, count(*), sum(amount) FROM app_enum GROUP BY status ORDER BY status", acc},
		{"SELECT id, rank() OVER (ORDER BY status), max(status) OVER (ORDER BY id) FROM app_enum ORDER BY id", acc},
		{"SELECT id, status::text, status || '!' FROM app_enum ORDER BY 2, 1", acc},
		{"SELECT id FROM app_enum WHERE status = 'ok' OR status IN ('sad', 'meh') ORDER BY id", acc},
		{"SELECT DISTINCT status FROM app_enum ORDER BY 1", acc},
		{"SELECT id, coalesce(status, 'ok') FROM app_enum ORDER BY 2, 1", acc},
		{"SELECT id, CASE WHEN id > 3 THEN status ELSE 'sad' END AS s FROM app_enum ORDER BY s, id", acc},
		{"SELECT DISTINCT ON (status) status, id FROM app_enum ORDER BY status, id DESC", acc},
		// Valid, but not keyed: the origin's.
		{"SELECT id, greatest(status, 'ok') FROM app_enum ORDER BY id", org},
		{"SELECT enum_first(status) FROM app_enum LIMIT 1", org},
	})
	// Postgres refuses these (a domain over an enum has none of anyenum's
	// operators, nor min/max); the answer is the origin's error.
	for _, sql := range []string{
		"SELECT id FROM app_enum WHERE status = 'nope'",
		"SELECT id FROM app_enum WHERE status < 'nope'",
		"SELECT upper(status) FROM app_enum",
		"SELECT id FROM app_enum WHERE status LIKE 'h%'",
		"SELECT id FROM app_enum WHERE status = name",
		"SELECT id FROM app_enum WHERE st2 < status ORDER BY id",
		"SELECT id FROM app_enum WHERE st2 = 'ok' ORDER BY id",
		"SELECT min(st2) FROM app_enum",
	} {
		t.Run(sql, func(t *testing.T) {
			differentialDSN(t, direct, proxied, func(t *testing.T, c *pgx.Conn, tr *transcript) {
				simple(ctxT(t), c, tr, sql)
				extended(ctxT(t), c, tr, sql, nil, []int16{1})
			})
		})
	}
	t.Run("parameters", func(t *testing.T) {
		sql := "SELECT id, status FROM app_enum WHERE status >= $1 ORDER BY status, id"
		before := routeCounts(t, a)
		differentialDSN(t, direct, proxied, func(t *testing.T, c *pgx.Conn, tr *transcript) {
			extended(ctxT(t), c, tr, sql, [][]byte{[]byte("meh")}, nil)
			extended(ctxT(t), c, tr, sql, [][]byte{[]byte("meh")}, []int16{1})
			extended(ctxT(t), c, tr, sql, [][]byte{[]byte("nope")}, nil)
		})
		if got := routeCounts(t, a)[acc] - before[acc]; got != 2 {
			t.Errorf("accelerated %v times, want 2 (the label it lacks goes to the origin)", got)
		}
	})
	if route := routeText(t, proxied, "SELECT id, greatest(status, 'ok') FROM app_enum"); !strings.Contains(route, "an enum") {
		t.Errorf("last route %q, want the reason", route)
	}
}

// TestAppTypes_EnumAddValueUnderChanges: under refresh_mode: changes, a
// label added with ALTER TYPE ... ADD VALUE (which the change stream does
// not carry) is answered exactly throughout: rows holding it before the
// acceleration read the new labels are ordered at the origin, and once it
// has, in the acceleration, in the enum's new order.
func TestAppTypes_EnumAddValueUnderChanges(t *testing.T) {
	const table = "cdc_enum"
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table) })
	enumSchema(t, execSuper, table)
	t.Cleanup(func() {
		mustExec(t, "DROP TABLE IF EXISTS cdc_enum; DROP DOMAIN IF EXISTS cdc_enum_mood_d; DROP TYPE IF EXISTS cdc_enum_mood")
	})
	a := startAppRuntime(t, "", "", changesDatasetYAML(table), true)
	v := newCDCView(t, appDSN(a, appUser, appPass), appAccelerated(t, a), appRoutes(t, a))
	ctx := ctxT(t)
	ordered := []string{
		"SELECT id, status FROM cdc_enum ORDER BY status, id",
		"SELECT max(status), min(status) FROM cdc_enum",
		"SELECT status, count(*) FROM cdc_enum GROUP BY status ORDER BY 1",
	}
	for _, sql := range ordered {
		if diff, accelerated, err := v.compare(ctx, sql, false, 0); err != nil || diff != "" || !accelerated {
			t.Fatalf("before ADD VALUE: %s: accelerated %v, %v\n%s", sql, accelerated, err, diff)
		}
	}
	mustExec(t, "ALTER TYPE cdc_enum_mood ADD VALUE 'ecstatic' AFTER 'happy'")
	mustExec(t, "ALTER TYPE cdc_enum_mood ADD VALUE 'awful' BEFORE 'sad'")
	mustExec(t, "INSERT INTO cdc_enum VALUES (7, 'ecstatic', 'awful', 1, 'g'), (8, 'awful', 'ecstatic', 2, 'h'); UPDATE cdc_enum SET status = 'awful' WHERE id = 2")
	// Once applied, and until the labels are read (every 10 s): exact,
	// wherever answered.
	pgtest.WaitFor(t, "the rows applied", func() bool {
		st, _ := a.Registry.State(table)
		return st.Rows == 8 && lagZero(a, table)()
	})
	for _, sql := range ordered {
		for _, ext := range []bool{false, true} {
			if diff, _, err := v.compare(ctx, sql, ext, 0); err != nil || diff != "" {
				t.Fatalf("right after ADD VALUE: %s: %v\n%s", sql, err, diff)
			}
		}
	}
	want := []string{"awful", "sad", "meh", "ok", "happy", "ecstatic"}
	pgtest.WaitFor(t, "the new labels in the acceleration", func() bool {
		st, _ := a.Registry.State(table)
		for _, c := range st.Columns {
			if c.Name == "status" {
				return slices.Equal(c.EnumLabels, want) && lagZero(a, table)()
			}
		}
		return false
	})
	for _, sql := range append(ordered, "SELECT id FROM cdc_enum WHERE status > 'happy' OR status < 'sad' ORDER BY id") {
		for _, ext := range []bool{false, true} {
			if diff, accelerated, err := v.compare(ctx, sql, ext, 0); err != nil || diff != "" || !accelerated {
				t.Errorf("after the labels were read: %s (extended %v): accelerated %v (%s), %v\n%s", sql, ext, accelerated,
					routeText(t, appDSN(a, appUser, appPass), sql), err, diff)
			}
		}
	}
	// A renamed label leaves stored rows holding a name the origin no
	// longer has: the dataset is rebuilt, and answers as the origin again.
	mustExec(t, "ALTER TYPE cdc_enum_mood RENAME VALUE 'meh' TO 'so-so'")
	v.fresh = true
	v.waitEqual(t, table, "after RENAME VALUE", replicationOf(a, table), lagZero(a, table))
}

// TestAppTypes_UnconstrainedNumeric: a numeric column without a declared
// scale whose values share one display scale is accelerated as a DECIMAL
// (revenue by an enum status answered from the acceleration, byte for
// byte); one whose values have different scales, or hold NaN or Infinity,
// is held as its text (numerictext_test.go): read as it is, by value, and
// summed from the acceleration (a NaN column's sum at the origin).
func TestAppTypes_UnconstrainedNumeric(t *testing.T) {
	enumSchema(t, execSuper, "app_num_st")
	mustExec(t, `DROP TABLE IF EXISTS app_num;
		CREATE TABLE app_num (id int PRIMARY KEY, status app_num_st_mood, amt numeric, mixed numeric, special numeric, big numeric);
		INSERT INTO app_num VALUES
		  (1, 'happy', 10.50, 1.5, 'NaN', 12345678901234567890123456789012.123456),
		  (2, 'sad', 3.25, 2, 1.00, -1.000000),
		  (3, 'meh', NULL, 3.125, 'Infinity', NULL),
		  (4, 'happy', 7.00, NULL, 2.50, 0.000000),
		  (5, NULL, -0.01, 0.1, '-Infinity', 99.999999),
		  (6, 'ok', 0.00, 7, 3.00, 5.500000);
		GRANT SELECT ON app_num TO app;`)
	t.Cleanup(func() {
		mustExec(t, "DROP TABLE IF EXISTS app_num; DROP TABLE IF EXISTS app_num_st; DROP DOMAIN IF EXISTS app_num_st_mood_d; DROP TYPE IF EXISTS app_num_st_mood")
	})
	a := startApp(t, "  - from: postgres:public.app_num\n")
	st, _ := a.Registry.State("app_num")
	for _, c := range st.Columns {
		switch c.Name {
		case "amt", "big":
			if !c.Accelerated || c.HeldScale == nil {
				t.Errorf("column %s: accelerated %v (%s), held scale %v; want accelerated", c.Name, c.Accelerated, c.NotAccelerated, c.HeldScale)
			}
		case "mixed", "special":
			if !c.Accelerated || !c.NumericText || c.HeldScale != nil || (c.ValueScale == nil) != (c.Name == "special") {
				t.Errorf("column %s: accelerated %v (%s), as text %v, held scale %v, value scale %v; want held as text",
					c.Name, c.Accelerated, c.NotAccelerated, c.NumericText, c.HeldScale, c.ValueScale)
			}
		}
	}
	direct, proxied := origin.DSN(appUser, appPass), appDSN(a, appUser, appPass)
	checkRouteCases(t, a, direct, proxied, []routeCase{
		{"SELECT id, amt, big FROM app_num ORDER BY id", acc},
		{"SELECT status, sum(amt), count(*) FROM app_num GROUP BY status ORDER BY status", acc},
		{"SELECT sum(amt), avg(amt), min(amt), max(big), sum(big) FROM app_num", acc},
		{"SELECT id, amt * 2, amt + 1, amt - big, amt * amt FROM app_num ORDER BY id", acc},
		{"SELECT id, amt::text, big::text FROM app_num WHERE amt > 1 ORDER BY amt DESC", acc},
		{"SELECT amt, count(*) FROM app_num GROUP BY amt ORDER BY amt NULLS FIRST", acc},
		{"SELECT id, coalesce(amt, 0) FROM app_num ORDER BY id", acc},
		{"SELECT id, mixed FROM app_num ORDER BY id", acc},
		{"SELECT id, special, mixed FROM app_num WHERE mixed > 1 ORDER BY mixed DESC", acc},
		{"SELECT status, sum(amt) FROM app_num GROUP BY status HAVING max(mixed) >= 2 ORDER BY status", acc},
		{"SELECT sum(special) FROM app_num", org},
		{"SELECT sum(mixed) FROM app_num", acc},
	})
}

// appTypesSchema holds an enum declared out of its labels' byte order
// (and, in en_US.UTF-8, of their linguistic order: 'Zed' < 'apple'), a
// domain over it, and numerics without a declared scale, one whose values
// share a scale and one whose do not.
const appTypesSchema = `DROP TABLE IF EXISTS app_types; DROP DOMAIN IF EXISTS app_types_mood_d; DROP TYPE IF EXISTS app_types_mood;
CREATE TYPE app_types_mood AS ENUM ('sad', 'meh', 'ok', 'happy', 'Zed', 'apple');
CREATE DOMAIN app_types_mood_d AS app_types_mood;
CREATE TABLE app_types (id int PRIMARY KEY, status app_types_mood, st2 app_types_mood_d, amt numeric, mixed numeric, f float8, name text,
  special numeric, ip inet, grid int[]);
INSERT INTO app_types VALUES
 (1, 'happy', 'sad', 10.50, 1.5, 2.5, 'b', 'NaN', '10.1.2.3/8', '{{1,2},{3,4}}'),
 (2, 'sad', 'ok', 3.25, 2, -0.0, 'B', 'Infinity', '::1', '{5,6}'),
 (3, 'meh', 'happy', NULL, 3.125, NULL, 'a', '-Infinity', '192.168.0.1', NULL),
 (4, NULL, NULL, 7.00, NULL, 10, 'é', 1.5, '10.0.0.0/8', '{}'),
 (5, 'Zed', 'apple', -0.01, 0.1, 1e-7, 'Zed', 2, NULL, '{{7}}'),
 (6, 'apple', 'Zed', 0.00, 7, 100, NULL, NULL, '10.1.2.3', '{8}'),
 (7, 'ok', 'meh', 2.50, 1.50, 3, 'apple', 0, '2001:db8::/32', '{{1,NULL},{NULL,4}}');
GRANT SELECT ON app_types TO app;`

// appTypeQueries read enums and numerics without a declared scale, and
// order by names Postgres reads as output columns, in every form the
// planner rewrites; runEdgeClasses runs them in both locales and zones.
var appTypeQueries = []struct{ class, sql string }{
	{"ORDER BY an enum", "SELECT id, status FROM app_types ORDER BY status DESC, id"},
	{"enum ranges", "SELECT id FROM app_types WHERE status > 'meh' AND status <= 'Zed' OR status BETWEEN 'apple' AND 'apple' ORDER BY id"},
	{"min and max of an enum", "SELECT min(status), max(status), count(DISTINCT status) FROM app_types"},
	{"enum windows", "SELECT id, rank() OVER (ORDER BY status NULLS FIRST), max(status) OVER (ORDER BY id) FROM app_types ORDER BY id"},
	{"enum as text", "SELECT id, status::text, status || '!' FROM app_types ORDER BY 2, 3, 1"},
	{"enum in a union", "SELECT status FROM app_types UNION SELECT 'ok' ORDER BY 1"},
	{"enum in a union with VALUES", "SELECT status FROM app_types UNION VALUES ('ok')"},
	{"enum coalesce and case", "SELECT id, coalesce(status, 'apple'), CASE WHEN id > 3 THEN status ELSE 'Zed' END FROM app_types ORDER BY 2, 3, 1"},
	{"enum labels Postgres lacks", "SELECT id FROM app_types WHERE status IN ('ok', 'nope')"},
	{"domain over an enum", "SELECT id, st2 FROM app_types WHERE st2::text <> 'ok' ORDER BY st2, id"},
	{"revenue by status", "SELECT status, sum(amt), avg(amt), count(*) FROM app_types GROUP BY status ORDER BY status"},
	{"numeric without a scale", "SELECT id, amt, amt * 2, amt + 1, amt::text AS t, coalesce(amt, 0) FROM app_types ORDER BY amt NULLS FIRST, id"},
	{"numeric of mixed scales", "SELECT id, mixed, mixed + 1 FROM app_types ORDER BY id"},
	// inet, held as its text: printed, grouped and compared for equality
	// by the acceleration; ordered and its functions by the origin.
	{"inet printed and compared", "SELECT id, ip FROM app_types WHERE ip = '10.1.2.3' OR ip = '10.0.0.0/8' OR ip IS NULL ORDER BY id"},
	{"inet grouped", "SELECT ip, count(*), min(id) FROM app_types GROUP BY ip ORDER BY 3"},
	{"inet functions", "SELECT id, ip, masklen(ip), host(ip) FROM app_types WHERE ip << '10.0.0.0/8' OR family(ip) = 6 ORDER BY ip, id"},
	// Left out, and answered by the origin: NaN and ±Infinity in a
	// numeric, multi-dimensional arrays.
	{"numeric NaN and Infinity", "SELECT id, special, special > 1 FROM app_types ORDER BY special, id"},
	{"two-dimensional arrays", "SELECT id, grid, grid[1][2], array_dims(grid) FROM app_types ORDER BY id"},
	// Postgres reads these names as the output columns.
	{"ORDER BY the name of a cast", "SELECT id, amt::text, f::text FROM app_types ORDER BY amt DESC, f"},
	{"ORDER BY an integer's text", "SELECT id::text FROM app_types ORDER BY id"},
	{"DISTINCT ON the name of a cast", "SELECT DISTINCT ON (id) id::text FROM app_types ORDER BY id DESC"},
}

// TestAccel_AppTypeClasses: appTypeQueries answered byte for byte as the
// origin answers them, in a C database under UTC and an en_US.UTF-8 one
// under Australia/Sydney, in both protocols.
func TestAccel_AppTypeClasses(t *testing.T) {
	runEdgeClasses(t, "apptypes", appTypesSchema, "  - from: postgres:public.app_types\n", appTypeQueries)
}
