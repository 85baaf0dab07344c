package integration

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// TestNumericText_MatchesPostgres: the acceleration's text of a numeric
// held as text (pgdef.NumericText, from numeric_send's binary form, as the
// COPY and change streams carry it) is Postgres's own numeric_out, for
// random values of every display scale and size (beyond DECIMAL(38)),
// zeros of every scale, negatives, NaN and the infinities.
func TestNumericText_MatchesPostgres(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	texts := []string{"NaN", "Infinity", "-Infinity", "0", "0.0", "-0.000", "0.00000001", "-1e-20", "1e40", "123456789012345678901234567890123456789012.5"}
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	for len(texts) < 4000 {
		intPart := digits(rng.IntN(45))
		if intPart == "" || rng.IntN(4) == 0 {
			intPart = "0"
		}
		s := intPart
		if sc := rng.IntN(30); sc > 0 {
			s += "." + digits(sc)
		}
		if rng.IntN(3) == 0 {
			s = "-" + s
		}
		if rng.IntN(8) == 0 {
			s += fmt.Sprintf("e%d", rng.IntN(41)-20)
		}
		texts = append(texts, s)
	}
	c := connect(t, origin.SuperDSN())
	rows, err := c.Query(ctxT(t), `SELECT concat(v), encode(numeric_send(v), 'hex')
		FROM (SELECT t::numeric AS v, n FROM unnest($1::text[]) WITH ORDINALITY AS x(t, n)) s ORDER BY n`, texts)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, bad := 0, 0
	for rows.Next() {
		var want, bin string
		if err := rows.Scan(&want, &bin); err != nil {
			t.Fatal(err)
		}
		b, err := hex.DecodeString(bin)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := pgdef.NumericText(b); err != nil || got != want {
			bad++
			if bad <= 10 {
				t.Errorf("%s (%s): %q (%v), Postgres %q", texts[n], bin, got, err, want)
			}
		} else if dot := strings.IndexByte(want, '.'); dot >= 0 && pgdef.NumericTextScale(got) != len(want)-dot-1 {
			t.Errorf("%s: scale %d", want, pgdef.NumericTextScale(got))
		}
		n++
	}
	if err := rows.Err(); err != nil || n != len(texts) {
		t.Fatalf("%d rows: %v", n, err)
	}
}

// numericSchema is an orders table whose numerics a DECIMAL cannot hold:
// amounts of mixed display scales (no declared scale), a ratio with NaN
// and the infinities, a numeric(50,10) wider than DECIMAL (its values fit 38 digits), and a fee
// numeric(10,2) holding NaN.
const numericSchema = `DROP TABLE IF EXISTS app_numeric;
	CREATE TABLE app_numeric (id int PRIMARY KEY, status text, amount numeric, ratio numeric, big numeric(50,10), fee numeric(10,2));
	INSERT INTO app_numeric VALUES
	  (1, 'paid', 12.5, 1.5, 1234567890123456789012345.0123456789, 1.50),
	  (2, 'paid', 3.10, 'NaN', -1, 2),
	  (3, 'open', 7, 'Infinity', 0, 'NaN'),
	  (4, 'open', 7.00, '-Infinity', NULL, NULL),
	  (5, 'void', 0.001, 0, 1e20, 0.10),
	  (6, 'void', -4.20, NULL, 2.5, -3),
	  (7, 'paid', NULL, 2, 3, 4),
	  (8, 'open', 100, 0.000001, 4, 5);
	GRANT SELECT ON app_numeric TO app;`

// TestAppTypes_NumericText: numerics a DECIMAL cannot hold (mixed display
// scales, NaN, ±Infinity, more than 38 digits) are held as their text and
// accelerated where the text or only the value is read, in C/UTC and
// en_US/Sydney, in both protocols, identical to the origin's answers;
// what prints a scale the acceleration does not follow goes to the
// origin.
func TestAppTypes_NumericText(t *testing.T) {
	inBothLocales(t, "pgaccel_numeric_enus", numericSchema, "DROP TABLE IF EXISTS app_numeric", "  - from: postgres:public.app_numeric\n", checkNumericText)
}

func checkNumericText(t *testing.T, a *app.App, direct, proxied string) {
	st, _ := a.Registry.State("app_numeric")
	for _, c := range st.Columns {
		if !c.Accelerated {
			t.Errorf("column %s (%s) not accelerated: %s", c.Name, c.TypeName, c.NotAccelerated)
		}
		if want := c.Name == "amount" || c.Name == "ratio" || c.Name == "big" || c.Name == "fee"; c.NumericText != want {
			t.Errorf("column %s: NumericText %v", c.Name, c.NumericText)
		}
		if c.Name == "amount" && (c.ValueScale == nil || *c.ValueScale != 3) {
			t.Errorf("amount: ValueScale %v, want 3", c.ValueScale)
		}
		if (c.Name == "ratio" || c.Name == "fee") && c.ValueScale != nil {
			t.Errorf("%s holds NaN, but ValueScale %v", c.Name, *c.ValueScale)
		}
	}
	checkRouteCases(t, a, direct, proxied, []routeCase{
		{"SELECT * FROM app_numeric ORDER BY id", acc},
		{"SELECT id, amount, ratio, big, fee FROM app_numeric WHERE amount > 5 ORDER BY amount, id", acc},
		{"SELECT id, amount FROM app_numeric WHERE amount = 7.00 ORDER BY id", acc},
		{"SELECT id, amount FROM app_numeric WHERE amount BETWEEN 0 AND 10 ORDER BY amount DESC NULLS LAST, id", acc},
		{"SELECT id, amount FROM app_numeric ORDER BY amount NULLS FIRST, id", acc},
		{"SELECT count(*) FROM app_numeric WHERE amount IN (7, 12.5, 0.0010)", acc},
		{"SELECT status, count(*), count(amount), count(ratio) FROM app_numeric GROUP BY status ORDER BY status", acc},
		{"SELECT id FROM app_numeric WHERE amount IS NULL OR ratio IS NULL ORDER BY id", acc},
		{"SELECT status FROM app_numeric GROUP BY status HAVING sum(amount) > 10 ORDER BY 1", acc},
		{"SELECT id, big FROM app_numeric WHERE big > 1e19 OR big < 0 ORDER BY big", acc},
		{"SELECT id, amount FROM app_numeric WHERE amount + 1 > 8 AND abs(amount) < 50 ORDER BY id", acc},
		{"SELECT id, status, amount, row_number() OVER (PARTITION BY status ORDER BY amount DESC, id) FROM app_numeric ORDER BY id", acc},
		{"SELECT id, amount FROM app_numeric WHERE amount > (SELECT min(amount) FROM app_numeric WHERE status = 'paid') ORDER BY id", acc},
		{"SELECT id, floor(amount), ceil(amount), sign(amount) FROM app_numeric ORDER BY id", acc},
		{"SELECT id, ratio FROM app_numeric WHERE id > 1 ORDER BY id LIMIT 3", acc},
		// Printed values whose display scale the scale tracking follows
		// row by row (scaletrack.go): revenue by status, arithmetic.
		{"SELECT sum(amount) FROM app_numeric", acc},
		{"SELECT status, sum(amount), count(*) FROM app_numeric GROUP BY status ORDER BY status", acc},
		{"SELECT status, sum(amount) FILTER (WHERE id > 2), sum(amount * 2) FROM app_numeric GROUP BY status ORDER BY status", acc},
		{"SELECT id, amount * 2, amount + 1, -amount, amount - 0.5 FROM app_numeric ORDER BY id", acc},
		{"SELECT id, coalesce(amount, 0), CASE WHEN amount > 5 THEN amount ELSE 0 END FROM app_numeric ORDER BY id", acc},
		{"SELECT id, amount * big FROM app_numeric WHERE big < 1e10 ORDER BY id", acc},
		// The scale of a text cast, DISTINCT, a GROUP BY key, min and
		// max (which of equal values?), avg of an expression; a NaN
		// column read by value.
		{"SELECT min(amount), max(amount) FROM app_numeric", org},
		{"SELECT id, amount::text FROM app_numeric ORDER BY id", org},
		{"SELECT DISTINCT amount FROM app_numeric ORDER BY 1", org},
		{"SELECT amount, count(*) FROM app_numeric GROUP BY amount ORDER BY 1", org},
		{"SELECT id, amount AS a FROM app_numeric ORDER BY a, id", org},
		{"SELECT id FROM app_numeric WHERE ratio > 1 ORDER BY id", org},
		{"SELECT avg(amount) FROM app_numeric", acc},
		{"SELECT status, avg(amount), count(*) FROM app_numeric GROUP BY status ORDER BY status", acc},
		{"SELECT id, avg(amount) OVER (PARTITION BY status) FROM app_numeric ORDER BY id", acc},
		{"SELECT status, avg(amount) FROM app_numeric WHERE id >= 4 AND status <> 'void' GROUP BY status ORDER BY 2", acc},
		{"SELECT avg(amount * 2) FROM app_numeric", org},
		{"SELECT id, round(amount, 1) FROM app_numeric ORDER BY id", acc},
	})
	t.Run("parameters", func(t *testing.T) {
		const sql = "SELECT id, amount, ratio FROM app_numeric WHERE amount >= $1 ORDER BY id"
		before := routeCounts(t, a)
		differentialDSN(t, direct, proxied, func(t *testing.T, c *pgx.Conn, tr *transcript) {
			ctx := ctxT(t)
			for _, arg := range []string{"7", "7.000", "3.1", "-10", "7.0005", "3.0999", "12.49999"} {
				extended(ctx, c, tr, sql, [][]byte{[]byte(arg)}, nil)
			}
		})
		if got := routeCounts(t, a)[acc] - before[acc]; got != 7 {
			t.Errorf("accelerated %v of 7 executions", got)
		}
	})
}

// TestAppTypes_NumericTextUnderChanges: numerics held as text take the
// change stream's values (binary pgoutput) as Postgres prints them, NaN and
// the infinities included; a value with more decimals than the scale the
// load measured is read by value through the guard, which sends the
// statement to the origin rather than round it.
func TestAppTypes_NumericTextUnderChanges(t *testing.T) {
	const table = "cdc_numeric"
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table); mustExec(t, "DROP TABLE IF EXISTS cdc_numeric") })
	mustExec(t, strings.ReplaceAll(numericSchema, "app_numeric", table))
	a := startAppRuntime(t, "", "", changesDatasetYAML(table), true)
	st, _ := a.Registry.State(table)
	for _, c := range st.Columns {
		if c.Name == "amount" && (!c.Accelerated || !c.NumericText || c.ValueScale == nil || *c.ValueScale != 3) {
			t.Fatalf("amount: %+v", c)
		}
	}
	v := newCDCView(t, appDSN(a, appUser, appPass), appAccelerated(t, a), appRoutes(t, a))
	mustExec(t, `INSERT INTO cdc_numeric VALUES (9, 'paid', 8.12345, 'NaN', 1.5, 'NaN'), (10, 'open', -0.5, '-Infinity', NULL, 1);
		UPDATE cdc_numeric SET amount = 12.50000, ratio = 'Infinity' WHERE id = 1; DELETE FROM cdc_numeric WHERE id = 2`)
	v.waitEqual(t, table, "after the changes", replicationOf(a, table), lagZero(a, table))
	ctx := ctxT(t)
	for _, q := range []struct {
		sql         string
		accelerated bool
	}{
		{"SELECT id, amount, ratio, fee FROM cdc_numeric WHERE id > 0 ORDER BY id", true},
		{"SELECT id, amount FROM cdc_numeric WHERE status = 'open' ORDER BY id", true},
		// 8.12345 has more decimals than the 3 the load measured.
		{"SELECT id, amount FROM cdc_numeric WHERE amount > 8 ORDER BY id", false},
	} {
		for _, format := range []int16{0, 1} {
			if diff, accelerated, err := v.compare(ctx, q.sql, true, format); err != nil || diff != "" || accelerated != q.accelerated {
				t.Errorf("%s (format %d): accelerated %v, want %v, %v\n%s", q.sql, format, accelerated, q.accelerated, err, diff)
			}
		}
	}
}

// TestAppTypes_NumericScaleChangesUnderChanges: a numeric without a
// declared scale whose values shared one when a changes dataset loaded
// (held as DECIMAL) and then receives a value of another scale, and NaN,
// is rebuilt holding it as its text, and reads it as the origin does.
func TestAppTypes_NumericScaleChangesUnderChanges(t *testing.T) {
	const table = "cdc_numeric_scale"
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table); mustExec(t, "DROP TABLE IF EXISTS "+table) })
	mustExec(t, `DROP TABLE IF EXISTS cdc_numeric_scale;
		CREATE TABLE cdc_numeric_scale (id int PRIMARY KEY, amt numeric);
		INSERT INTO cdc_numeric_scale SELECT g, g * 1.25 FROM generate_series(1, 50) g;
		GRANT SELECT ON cdc_numeric_scale TO app;`)
	a := startAppRuntime(t, "", "", changesDatasetYAML(table), true)
	amt := func() catalog.ColumnInfo { return columnOf(a, table, "amt") }
	if c := amt(); !c.Accelerated || c.NumericText || c.HeldScale == nil || *c.HeldScale != 2 {
		t.Fatalf("amt at the load: %+v", c)
	}
	v := newCDCView(t, appDSN(a, appUser, appPass), appAccelerated(t, a), appRoutes(t, a))
	mustExec(t, `INSERT INTO cdc_numeric_scale VALUES (51, 1.5), (52, 'NaN'), (53, 7)`)
	waitColumn(t, amt, func(c catalog.ColumnInfo) bool { return c.Accelerated && c.NumericText })
	v.waitEqual(t, table, "after the rebuild", replicationOf(a, table), lagZero(a, table))
	ctx := ctxT(t)
	for _, sql := range []string{"SELECT id, amt FROM cdc_numeric_scale WHERE id > 45 ORDER BY id", "SELECT count(amt) FROM cdc_numeric_scale"} {
		for _, format := range []int16{0, 1} {
			if diff, accelerated, err := v.compare(ctx, sql, true, format); err != nil || diff != "" || !accelerated {
				t.Errorf("%s (format %d): accelerated %v, %v\n%s", sql, format, accelerated, err, diff)
			}
		}
	}
}

// TestArrayText_MatchesPostgres: the text of an array held as its binary
// form (pgdef.ArrayText) is Postgres's own array_out, for arrays of one to
// three dimensions, lower bounds other than 1, NULLs, and elements that
// must be quoted, of every element type it prints.
func TestArrayText_MatchesPostgres(t *testing.T) {
	values := []string{
		"'{{1,2},{3,4}}'::int[]", "'{{{1,NULL},{3,4}},{{5,6},{7,8}}}'::int8[]", "'[0:1]={7,8}'::int2[]",
		"'[-2:-1][3:4]={{1,2},{3,4}}'::int[]", "'{}'::int[]", "'{{t,f},{NULL,t}}'::bool[]",
		`'{{"a b","",NULL},{"null","x\"y","{}"}}'::text[]`, `'{{"NULL",c},{"a,b","back\\\\slash"}}'::varchar[]`,
		"'{{ab,c},{d,e}}'::char(2)[]", "'{{1.50,NaN},{-Infinity,0.000}}'::numeric[]", "'{{x}}'::name[]",
		"array_fill(7, ARRAY[2,3,2])", "array_fill('é'::text, ARRAY[2,2], ARRAY[5,0])", "ARRAY[[' lead', E'tab\\there']]",
	}
	c := connect(t, origin.SuperDSN())
	for _, v := range values {
		var want, bin string
		if err := c.QueryRow(ctxT(t), "SELECT concat(v), encode(array_send(v), 'hex') FROM (SELECT "+v+" AS v) s").Scan(&want, &bin); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		b, err := hex.DecodeString(bin)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := pgdef.ArrayText(b); err != nil || got != want {
			t.Errorf("%s: %q (%v), Postgres %q", v, got, err, want)
		}
	}
}

// TestAppTypes_MultiDimArrays: arrays a LIST cannot hold (two or more
// dimensions, lower bounds other than 1) are held as Postgres sends them
// and read as they are (SELECT *, bare outputs, count, IS NULL), in text
// and binary, identical to the origin; anything that looks inside them
// goes to the origin; in C/UTC and en_US/Sydney.
func TestAppTypes_MultiDimArrays(t *testing.T) {
	inBothLocales(t, "pgaccel_grid_enus", gridSchema, "DROP TABLE IF EXISTS app_grid", "  - from: postgres:public.app_grid\n", checkMultiDimArrays)
}

// gridSchema holds arrays of two and three dimensions, lower bounds other
// than 1, NULLs, elements array_out quotes, numerics without a declared
// scale (NaN among them), arrays of inet and cidr (held as sent in any
// dimension), and a plain one-dimensional array.
const gridSchema = `DROP TABLE IF EXISTS app_grid;
		CREATE TABLE app_grid (id int PRIMARY KEY, grid int[], words text[], amounts numeric[], flags bool[][], plain int[],
		  addrs inet[], nets cidr[]);
		INSERT INTO app_grid VALUES
		  (1, '{{1,2},{3,4}}', '{{"a b",NULL},{"x\"y","NULL"}}', '[0:1]={1.50,NaN}', '{{t},{f}}', '{1,2}',
		   '{10.0.0.1,10.0.0.0/8,::1,2001:db8::1/64,NULL}', '{10.0.0.0/8,192.168.1.0/24,2001:db8::/32}'),
		  (2, '{5,6}', '{c}', '{2}', NULL, '{}', '{{192.168.0.1/32,::ffff:1.2.3.4}}', '{}'),
		  (3, NULL, '{{{p}}}', '{{-1e-3}}', '{t,NULL}', NULL, '{}', NULL),
		  (4, '[2:3][0:0]={{7},{8}}', '{}', NULL, '{}', '{3}', NULL, '[0:0]={0.0.0.0/0}');
		GRANT SELECT ON app_grid TO app;`

func checkMultiDimArrays(t *testing.T, a *app.App, direct, proxied string) {
	st, _ := a.Registry.State("app_grid")
	for _, c := range st.Columns {
		if want := c.Name != "id" && c.Name != "plain"; !c.Accelerated || c.ArrayBinary != want {
			t.Errorf("column %s: accelerated %v (%s), held as sent %v, want %v", c.Name, c.Accelerated, c.NotAccelerated, c.ArrayBinary, want)
		}
	}
	checkRouteCases(t, a, direct, proxied, []routeCase{
		{"SELECT * FROM app_grid ORDER BY id", acc},
		{"SELECT id, grid, words FROM app_grid WHERE id > 1 ORDER BY id", acc},
		{"SELECT count(grid), count(flags), count(*) FROM app_grid WHERE amounts IS NOT NULL", acc},
		{"SELECT id, plain, plain[1] FROM app_grid ORDER BY id", acc},
		{"SELECT id, grid[1][2] FROM app_grid ORDER BY id", org},
		{"SELECT id, array_dims(grid) FROM app_grid ORDER BY id", org},
		{"SELECT id FROM app_grid WHERE grid = '{{1,2},{3,4}}' ORDER BY id", org},
		{"SELECT id, grid FROM app_grid ORDER BY grid, id", org},
		{"SELECT DISTINCT grid FROM app_grid", org},
		{"SELECT id, words::text FROM app_grid ORDER BY id", org},
		{"SELECT id, addrs, nets FROM app_grid ORDER BY id", acc},
		{"SELECT count(addrs) FROM app_grid WHERE nets IS NULL", acc},
		{"SELECT id, addrs[1] FROM app_grid ORDER BY id", org},
		{"SELECT id FROM app_grid WHERE '10.0.0.1' = ANY (addrs) ORDER BY id", org},
	})
}

// TestAppTypes_MultiDimArrayUnderChanges: a two-dimensional value arriving
// through the change stream in a column held as a LIST rebuilds the
// dataset holding the column as Postgres sends it.
func TestAppTypes_MultiDimArrayUnderChanges(t *testing.T) {
	const table = "cdc_grid"
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table); mustExec(t, "DROP TABLE IF EXISTS "+table) })
	mustExec(t, `DROP TABLE IF EXISTS cdc_grid;
		CREATE TABLE cdc_grid (id int PRIMARY KEY, grid int[]);
		INSERT INTO cdc_grid SELECT g, ARRAY[g, g + 1] FROM generate_series(1, 20) g;
		GRANT SELECT ON cdc_grid TO app;`)
	a := startAppRuntime(t, "", "", changesDatasetYAML(table), true)
	grid := func() catalog.ColumnInfo { return columnOf(a, table, "grid") }
	if c := grid(); !c.Accelerated || c.ArrayBinary {
		t.Fatalf("grid at the load: %+v", c)
	}
	v := newCDCView(t, appDSN(a, appUser, appPass), appAccelerated(t, a), appRoutes(t, a))
	mustExec(t, `INSERT INTO cdc_grid VALUES (21, '{{1,2},{3,4}}'), (22, '[0:1]={5,6}')`)
	waitColumn(t, grid, func(c catalog.ColumnInfo) bool { return c.Accelerated && c.ArrayBinary })
	v.waitEqual(t, table, "after the rebuild", replicationOf(a, table), lagZero(a, table))
	ctx := ctxT(t)
	const sql = "SELECT id, grid FROM cdc_grid WHERE id > 15 ORDER BY id"
	for _, format := range []int16{0, 1} {
		if diff, accelerated, err := v.compare(ctx, sql, true, format); err != nil || diff != "" || !accelerated {
			t.Errorf("%s (format %d): accelerated %v, %v\n%s", sql, format, accelerated, err, diff)
		}
	}
}

// columnOf is the registry's view of column name of dataset table.
func columnOf(a *app.App, table, name string) catalog.ColumnInfo {
	st, _ := a.Registry.State(table)
	for _, c := range st.Columns {
		if c.Name == name {
			return c
		}
	}
	return catalog.ColumnInfo{}
}

// waitColumn waits up to 30 s for column() to satisfy ok.
func waitColumn(t *testing.T, column func() catalog.ColumnInfo, ok func(catalog.ColumnInfo) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c := column(); !ok(c); c = column() {
		if time.Now().After(deadline) {
			t.Fatalf("column after the changes: %+v", c)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAppTypes_NumericTextUnderAppend: an append dataset keeps holding a
// numeric as text across merges, and the value scale it reads at covers
// the stored rows and the merged ones.
func TestAppTypes_NumericTextUnderAppend(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS app_num_log; CREATE TABLE app_num_log (id int PRIMARY KEY, amt numeric, at timestamptz);
		INSERT INTO app_num_log SELECT g, CASE WHEN g % 2 = 0 THEN g * 1.125 ELSE g END, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute' FROM generate_series(1, 40) g;
		GRANT SELECT ON app_num_log TO app;`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS app_num_log") })
	a := startApp(t, `  - from: postgres:public.app_num_log
    time_column: at
    acceleration:
      refresh_mode: append
      primary_key: id
`)
	if c := columnOf(a, "app_num_log", "amt"); !c.NumericText || c.ValueScale == nil || *c.ValueScale != 3 {
		t.Fatalf("amt after the first load: %+v", c)
	}
	mustExec(t, `INSERT INTO app_num_log SELECT g, g + 0.5, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute' FROM generate_series(41, 50) g`)
	if err := a.Runner.Refresh(ctxT(t), "app_num_log"); err != nil {
		t.Fatal(err)
	}
	if c := columnOf(a, "app_num_log", "amt"); !c.Accelerated || !c.NumericText || c.ValueScale == nil || *c.ValueScale != 3 {
		t.Fatalf("amt after an append: %+v", c)
	}
	checkRouteCases(t, a, origin.DSN(appUser, appPass), appDSN(a, appUser, appPass), []routeCase{
		{"SELECT count(*), sum(amt), avg(amt) FROM app_num_log", acc},
		{"SELECT id, amt FROM app_num_log WHERE amt > 40 ORDER BY amt DESC, id", acc},
	})
}
