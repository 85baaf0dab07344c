package planner

import (
	"strconv"
	"strings"
	"testing"
)

func TestSubstituteParams(t *testing.T) {
	repl := func(n int) (string, bool) {
		if n > 11 {
			return "", false
		}
		return "CAST($" + strconv.Itoa(n) + " AS INTEGER)", true
	}
	cases := []struct{ in, want string }{
		{"SELECT $1", "SELECT CAST($1 AS INTEGER)"},
		{"SELECT $1 + $11, '$1', \"$2\"", "SELECT CAST($1 AS INTEGER) + CAST($11 AS INTEGER), '$1', \"$2\""},
		{"SELECT 'it''s $1' || $2 -- $3\n, $1", "SELECT 'it''s $1' || CAST($2 AS INTEGER) -- $3\n, CAST($1 AS INTEGER)"},
		{"SELECT a$1 FROM t", "SELECT a$1 FROM t"},
	}
	for _, c := range cases {
		got, ok := SubstituteParams(c.in, repl)
		if !ok || got != c.want {
			t.Errorf("%q: got %q (%v), want %q", c.in, got, ok, c.want)
		}
	}
	if _, ok := SubstituteParams("SELECT $12", repl); ok {
		t.Error("unknown parameter accepted")
	}
}

// TestTransactionScoped: SET LOCAL and SET TRANSACTION end with their
// transaction; other SETs are session state.
func TestTransactionScoped(t *testing.T) {
	for sql, want := range map[string]bool{
		"SET LOCAL statement_timeout = 0":              true,
		"set transaction isolation level serializable": true,
		"SET TimeZone = 'UTC'":                         false,
		"SET SESSION search_path = x":                  false,
		"RESET ALL":                                    false,
	} {
		if got := TransactionScoped(sql); got != want {
			t.Errorf("TransactionScoped(%q) = %v", sql, got)
		}
	}
}

// TestSessionStateCall: session-level advisory locks and set_config make a
// session's origin state one that cannot be set up again; transaction-level
// locks do not.
func TestSessionStateCall(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT pg_advisory_lock(1)":                   "pg_advisory_lock",
		"select PG_TRY_ADVISORY_LOCK_SHARED(2)":        "pg_try_advisory_lock",
		"SELECT pg_advisory_xact_lock(1)":              "",
		"SELECT pg_try_advisory_xact_lock(1), 1":       "",
		"SELECT set_config('search_path', 'x', false)": "set_config",
		"SELECT * FROM t WHERE id = 1":                 "",
		// The first of the list, wherever it is in the text.
		"SELECT setval('s', 1), pg_advisory_lock(1)": "pg_advisory_lock",
		"SELECT NextVal('s')":                        "nextval",
		"/* dblink_connect */ SELECT 1":              "dblink_connect",
		"SELECT 'setva'":                             "",
		"":                                           "",
	} {
		if got := SessionStateCall(sql); got != want {
			t.Errorf("SessionStateCall(%q) = %q, want %q", sql, got, want)
		}
	}
}

// TestSessionStateCall_AsAPlainSearch: the one-pass search finds what a
// case-insensitive search for each name in turn finds, Unicode folds
// (ſ for s, K for k) included.
func TestSessionStateCall_AsAPlainSearch(t *testing.T) {
	plain := func(sql string) string {
		for _, fn := range sessionStateFns {
			for i := 0; i+len(fn) <= len(sql); i++ {
				if strings.EqualFold(sql[i:i+len(fn)], fn) {
					return fn
				}
			}
		}
		return ""
	}
	texts := []string{"SELECT ſetval('s', 1)", "select SETVAL('s', 1)", "SELECT nextvaL", "nextva", "pg_advisory_loc",
		"SELECT 1 /* Set_Config */", "dblink_connectpg_advisory_lock", "PG_TRY_ADVISORY_LOCK(1); setval", "séLECT"}
	for _, a := range texts {
		for _, b := range texts {
			sql := a + " " + b
			if got, want := SessionStateCall(sql), plain(sql); got != want {
				t.Errorf("SessionStateCall(%q) = %q, a plain search %q", sql, got, want)
			}
		}
	}
}

func TestEmptyQueryAndSelectOne(t *testing.T) {
	for sql, want := range map[string]bool{
		"": true, " ;; ": true, "-- ping": true, "-- a\n/* b /* nested */ c */;\n": true, "/* open": false,
		"SELECT 1": false, "-- x\nSELECT 1": false, ";x": false,
	} {
		if got := EmptyQuery(sql); got != want {
			t.Errorf("EmptyQuery(%q) = %v", sql, got)
		}
	}
	for sql, want := range map[string]bool{
		"SELECT 1": true, "select 1;": true, " Select\n1 ; ": true, "SELECT 1;;": false, "SELECT 10": false,
		"SELECT 1 AS a": false, "SELECT1": false, "SELECT 1, 2": false, "SELECT '1'": false, "-- x\nSELECT 1": false,
	} {
		if got := IsSelectOne(sql); got != want {
			t.Errorf("IsSelectOne(%q) = %v", sql, got)
		}
	}
}
