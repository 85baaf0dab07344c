package planner

import "testing"

func TestDescriptionShape(t *testing.T) {
	same := [][2]string{
		{"SELECT count(*) FROM t WHERE id > 100 AND v <> 'x'", "SELECT count(*) FROM t WHERE id > 0 AND v <> 'a longer one'"},
		{"SELECT a FROM t WHERE ts BETWEEN '2026-12-01T00:00:00Z' AND '2026-12-02' LIMIT 10 OFFSET 5", "SELECT a FROM t WHERE ts BETWEEN 'x' AND 'y' LIMIT 1 OFFSET 0"},
		{"SELECT a FROM t WHERE b = -5", "SELECT a FROM t WHERE b = 7"},
		{"SELECT a FROM t WHERE b = - 5.5", "SELECT a FROM t WHERE b = 1.25"},
		{"SELECT a FROM t WHERE d > date '2020-01-01'", "SELECT a FROM t WHERE d > date '2021-02-03'"},
		{"SELECT a FROM t JOIN u ON u.id = t.id AND u.k = 3 WHERE true", "SELECT a FROM t JOIN u ON u.id = t.id AND u.k = 4 WHERE false"},
		{"SELECT k, sum(x) FROM t GROUP BY k HAVING sum(x) > 10", "SELECT k, sum(x) FROM t GROUP BY k HAVING sum(x) > 20"},
		{"SELECT a FROM t WHERE b IN (SELECT c FROM u WHERE d = 'p')", "SELECT a FROM t WHERE b IN (SELECT c FROM u WHERE d = 'q')"},
		{"SELECT a FROM (SELECT a FROM t WHERE b = 1) s WHERE a IS NOT NULL", "SELECT a FROM (SELECT a FROM t WHERE b = 2) s WHERE a IS NOT NULL"},
		{"SELECT a FROM t WHERE b = E'it''s' -- c 1\n", "SELECT a FROM t WHERE b = 'x' -- c 1\n"},
		{"SELECT count(*), sum(id) FROM t", "SELECT count(*), sum(id) FROM t ;\n"},
	}
	for _, p := range same {
		a, okA := DescriptionShape(p[0])
		b, okB := DescriptionShape(p[1])
		if !okA || !okB || a != b {
			t.Errorf("want one shape:\n%q -> %q %v\n%q -> %q %v", p[0], a, okA, p[1], b, okB)
		}
	}
	differ := [][2]string{
		{"SELECT 1 FROM t WHERE b = 1", "SELECT 2 FROM t WHERE b = 1"},
		{"SELECT 'x' FROM t", "SELECT 1 FROM t"},
		{"SELECT a FROM t WHERE b = 1", "SELECT a FROM t WHERE b = '1'"},
		{"SELECT a FROM t WHERE $1 = 1", "SELECT a FROM t WHERE $1 = 3000000000"},
		{"SELECT a FROM t WHERE $1 = 3000000000", "SELECT a FROM t WHERE $1 = 30000000000000000000"},
		{"SELECT a FROM t WHERE $1 = 1", "SELECT a FROM t WHERE $1 = 1.5"},
		{"SELECT a FROM t WHERE b = 1", "SELECT a FROM t WHERE b = NULL"},
		{"SELECT a FROM t WHERE b = 1", "SELECT b FROM t WHERE b = 1"},
		{"SELECT a FROM (VALUES (1)) v(a) WHERE a = 1", "SELECT a FROM (VALUES (1.5)) v(a) WHERE a = 1"},
		{"SELECT a FROM t WHERE b = 1 UNION SELECT 1", "SELECT a FROM t WHERE b = 1 UNION SELECT 1.5"},
	}
	for _, p := range differ {
		a, _ := DescriptionShape(p[0])
		b, _ := DescriptionShape(p[1])
		if a == b {
			t.Errorf("want two shapes: %q and %q -> %q", p[0], p[1], a)
		}
	}
	for _, sql := range []string{"INSERT INTO t VALUES (1)", "SELECT 1; SELECT 2", "SELECT * INTO x FROM t WHERE a = 1", "SELEC", "SELECT a FROM t WHERE b = '\x02'"} {
		if s, ok := DescriptionShape(sql); ok {
			t.Errorf("%q: shape %q, want none", sql, s)
		}
	}
	if s, ok := DescriptionShape("SELECT a FROM t;"); !ok || s != "SELECT a FROM t" {
		t.Errorf("no filter constants: %q %v", s, ok)
	}
}

func FuzzDescriptionShape(f *testing.F) {
	for _, s := range []string{"SELECT a FROM t WHERE b = -5 AND c = 'x' LIMIT 3", "SELECT 1", "SELECT a FROM t WHERE b = U&'d\\0061t\\+000061' UESCAPE '!'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		s, ok := DescriptionShape(sql)
		if ok {
			// Shaping is idempotent on its constants: the same text
			// twice gives the same shape.
			if s2, _ := DescriptionShape(sql); s2 != s {
				t.Fatalf("%q: %q then %q", sql, s, s2)
			}
		}
	})
}

func TestTransactionControl(t *testing.T) {
	for sql, want := range map[string]Kind{
		"BEGIN": KindBegin, "begin;": KindBegin, "  Start Transaction Isolation Level Serializable, READ ONLY": KindBegin,
		"BEGIN ISOLATION LEVEL REPEATABLE READ": KindBegin, "COMMIT": KindCommit, "end": KindCommit,
		"ROLLBACK": KindRollback, "abort;": KindRollback, "COMMIT AND CHAIN": KindOther, "ROLLBACK AND CHAIN": KindOther,
		"ROLLBACK TO SAVEPOINT a": KindOther, "BEGIN; SELECT 1": KindOther, "SELECT 1": KindOther, "COMMIT PREPARED 'x'": KindOther,
		"/* c */ BEGIN": KindOther, "BEGINX": KindOther, "": KindOther, "START": KindOther,
	} {
		if got := TransactionControl(sql); got != want {
			t.Errorf("%q: %v, want %v", sql, got, want)
		}
	}
}

func TestSessionSetting(t *testing.T) {
	type want struct {
		name, value string
		ok          bool
	}
	for sql, w := range map[string]want{
		"SET extra_float_digits = 3":                         {"extra_float_digits", "3", true},
		"set extra_float_digits to -15;":                     {"extra_float_digits", "-15", true},
		"SET SESSION extra_float_digits = '2'":               {"extra_float_digits", "2", true},
		"SET application_name = 'PostgreSQL JDBC Driver'":    {"application_name", "PostgreSQL JDBC Driver", true},
		"SET Application_Name TO Dashboard":                  {"application_name", "dashboard", true},
		`SET application_name TO "Dash"`:                     {"application_name", "Dash", true},
		"SET LOCAL extra_float_digits = 3":                   {},
		"SET extra_float_digits TO DEFAULT":                  {},
		"SET extra_float_digits = 2.5":                       {},
		"SET search_path = a, b":                             {},
		"SET TIME ZONE 'UTC'":                                {"timezone", "UTC", true},
		"SET extra_float_digits = 3; SET application_name=x": {},
		"RESET extra_float_digits":                           {},
		"SELECT 1":                                           {},
		"SET extra_float_digits = NULL":                      {},
	} {
		n, v, ok := SessionSetting(sql)
		if (want{n, v, ok}) != w {
			t.Errorf("%q: (%q, %q, %v), want %v", sql, n, v, ok, w)
		}
	}
}

func TestDiscardAll(t *testing.T) {
	for sql, want := range map[string]bool{
		"DISCARD ALL": true, "discard all;": true, " Discard All ": true, "DISCARD PLANS": false,
		"DISCARD ALL; SELECT 1": false, "SELECT 1": false, "DISCARD": false,
	} {
		if got := DiscardAll(sql); got != want {
			t.Errorf("%q: %v, want %v", sql, got, want)
		}
	}
}

func TestDeallocate(t *testing.T) {
	type want struct {
		name    string
		all, ok bool
	}
	for sql, w := range map[string]want{
		"DEALLOCATE ALL": {"", true, true}, "deallocate prepare all;": {"", true, true},
		"DEALLOCATE _pg3_0": {"_pg3_0", false, true}, `DEALLOCATE "S_1"`: {"S_1", false, true}, "DEALLOCATE S_1": {"s_1", false, true},
		"DEALLOCATE ALL; SELECT 1": {}, "DISCARD ALL": {}, "DEALLOCATE": {},
	} {
		name, all, ok := Deallocate(sql)
		if (want{name, all, ok}) != w {
			t.Errorf("%q: %q %v %v, want %+v", sql, name, all, ok, w)
		}
	}
}

func TestSessionReset(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT pg_advisory_unlock_all();\nCLOSE ALL;\nUNLISTEN *;\nRESET ALL;": "SCUR",
		"select pg_catalog.PG_ADVISORY_UNLOCK_ALL()":                            "S",
		"CLOSE ALL": "C", "RESET ALL; RESET ALL": "RR", "UNLISTEN *": "U",
		"SELECT pg_advisory_unlock_all() AS x": "", "SELECT pg_advisory_unlock_all(), 1": "",
		"SELECT pg_advisory_unlock_all() FROM t": "", "SELECT * FROM pg_advisory_unlock_all()": "",
		"CLOSE c": "", "UNLISTEN ch": "", "RESET work_mem": "", "RESET ALL; SELECT 1": "", "SELECT 1": "",
		"ROLLBACK;\nSELECT pg_advisory_unlock_all();": "", "": "",
	} {
		got, ok := SessionReset(sql)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", sql, got, ok, want)
		}
	}
}
