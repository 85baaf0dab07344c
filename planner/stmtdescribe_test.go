package planner

import (
	"fmt"
	"strings"
	"testing"
)

func TestStatementHash(t *testing.T) {
	same := [][2]string{
		{"SELECT * FROM t WHERE a = 1", "select *  from T where A = 22"},
		{"SELECT * FROM t WHERE a = 'x'", "SELECT * FROM t WHERE a = 'it''s'"},
		{"SELECT * FROM t WHERE a = E'\\'q'", "SELECT * FROM t WHERE a = E'z'"},
		{"SELECT $$a$$, $x$b$x$", "SELECT $$zzz$$, $x$$x$"},
		{"SELECT 1.5e3 -- note 1\n", "SELECT 2 /* c */"},
		{"SELECT a FROM t1 WHERE b IN (1, 2)", "SELECT a FROM t1 WHERE b IN (3, 44)"},
	}
	for _, p := range same {
		if StatementHash(p[0]) != StatementHash(p[1]) {
			t.Errorf("%q and %q: hashes differ", p[0], p[1])
		}
	}
	differ := [][2]string{
		{"SELECT * FROM t1", "SELECT * FROM t2"},
		{`SELECT * FROM "t1"`, `SELECT * FROM "t2"`},
		{`SELECT * FROM "T"`, `SELECT * FROM "t"`},
		{"SELECT a FROM t WHERE b = $1", "SELECT a FROM t WHERE b = $2"},
		{"SELECT a FROM t", "SELECT b FROM t"},
		{"SELECT 'a' FROM t", "SELECT a FROM t"},
	}
	for _, p := range differ {
		if StatementHash(p[0]) == StatementHash(p[1]) {
			t.Errorf("%q and %q: one hash", p[0], p[1])
		}
	}
}

// FuzzStatementHash: any text hashes (without a panic), and texts of one
// number shape have one hash (a session keeps statistics entries by
// both).
func FuzzStatementHash(f *testing.F) {
	for _, s := range []string{"SELECT 1", "SELECT * FROM t WHERE a = 'x1' AND b = 2", "SELECT $1::int, $$9$$", `SELECT "a1" FROM t -- 3`, "E'\\", "$a", "'"} {
		f.Add(s, uint8(7))
	}
	f.Fuzz(func(t *testing.T, sql string, d uint8) {
		h := StatementHash(sql)
		other := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return '0' + rune(d%10)
			}
			return r
		}, sql)
		if SameShape(sql, other) && StatementHash(other) != h {
			t.Errorf("%q and %q: one shape, two hashes", sql, other)
		}
	})
}

func TestDescribeStatement(t *testing.T) {
	for _, c := range []struct {
		sql, text, tables string
		read              bool
	}{
		{"SELECT a FROM t WHERE b = 'secret' AND c = 42", "SELECT a FROM t WHERE b = $1 AND c = $2", "[t]", true},
		{"WITH x AS (SELECT * FROM s.orders) SELECT * FROM x JOIN customers c ON true", "", "[customers s.orders]", true},
		{"SELECT * FROM t FOR UPDATE", "", "[t]", false},
		{"UPDATE t SET a = 1", "UPDATE t SET a = $1", "[]", false}, // tables: those a read names only
		{"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "", "[t]", false},
		{"SELECT 1; SELECT 2", "", "[]", false},
		{"ALTER ROLE r PASSWORD 'hunter2'", "ALTER ROLE r PASSWORD $1", "[]", false},
		{"SELEC nonsense 'secret'", "SELEC …", "[]", false},
	} {
		d := DescribeStatement(c.sql)
		if (c.text != "" && d.Text != c.text) || fmt.Sprint(d.Tables) != c.tables && !(c.tables == "[]" && d.Tables == nil) || d.Read != c.read {
			t.Errorf("%q: %+v", c.sql, d)
		}
		if strings.Contains(d.Text, "secret") || strings.Contains(d.Text, "hunter2") {
			t.Errorf("%q: a value in %q", c.sql, d.Text)
		}
	}
}

func TestShowsPgaccelAndExplainPgaccel(t *testing.T) {
	for sql, want := range map[string]PgaccelShow{
		"SHOW pgaccel.statements": ShowStatements, " show PGACCEL.STATS;": ShowStats, `SHOW "pgaccel.datasets"`: ShowDatasets,
		"show pgaccel.advice": ShowAdvice, "SHOW pgaccel.last_route": ShowLastRoute, `SHOW "pgaccel.stats`: ShowNone,
		"SHOW pgaccel.other": ShowNone, "SELECT 1": ShowNone,
	} {
		if got := ShowsPgaccel(sql); got != want {
			t.Errorf("%q: %d, want %d", sql, got, want)
		}
	}
	if inner, ok := ExplainPgaccel("explain (PGACCEL)\n SELECT 1;"); !ok || inner != "SELECT 1" {
		t.Errorf("%q %v", inner, ok)
	}
	for _, s := range []string{"EXPLAIN SELECT 1", "EXPLAIN (pgaccel)", "EXPLAIN (analyze) SELECT 1"} {
		if _, ok := ExplainPgaccel(s); ok {
			t.Errorf("%q taken as EXPLAIN (pgaccel)", s)
		}
	}
}
