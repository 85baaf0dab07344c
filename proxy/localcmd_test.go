package proxy

import (
	"strings"
	"testing"

	"github.com/pgaccel/pgaccel/planner"
)

// TestSetValue: the SETs a session answers without the origin, and the
// values Postgres would store; everything else is the origin's.
func TestSetValue(t *testing.T) {
	ss := &session{}
	ss.state.params = map[string]string{"TimeZone": "Etc/UTC", "DateStyle": "ISO, MDY", "standard_conforming_strings": "on", "client_encoding": "UTF8"}
	for sql, want := range map[string]string{
		"SET extra_float_digits = 3":                               "3",
		"SET extra_float_digits TO '-15'":                          "-15",
		"SET extra_float_digits = '+2'":                            "2",
		"SET extra_float_digits = 4":                               "!",
		"SET extra_float_digits = '0x3'":                           "!",
		"SET extra_float_digits = ' 3'":                            "!",
		"SET application_name = 'PostgreSQL JDBC Driver'":          "PostgreSQL JDBC Driver",
		"SET application_name = 'caf\u00e9'":                       "!",
		"SET application_name = '" + strings.Repeat("a", 64) + "'": "!",
		"SET intervalstyle = iso_8601":                             "iso_8601",
		"SET IntervalStyle TO 'SQL_Standard'":                      "sql_standard",
		"SET intervalstyle = 'iso'":                                "!",
		"SET client_min_messages TO 'warning'":                     "warning",
		"SET client_min_messages TO debug":                         "!",
		"SET SESSION timezone TO 'Etc/UTC'":                        "Etc/UTC",
		"SET TIME ZONE 'Etc/UTC'":                                  "Etc/UTC",
		"SET TIME ZONE 'UTC'":                                      "!",
		"SET datestyle = 'ISO, MDY'":                               "ISO, MDY",
		"SET datestyle = 'ISO'":                                    "!",
		"SET standard_conforming_strings = on":                     "on",
		"SET standard_conforming_strings = off":                    "!",
		"SET client_encoding = 'UTF8'":                             "UTF8",
		"SET client_encoding = 'LATIN1'":                           "!",
		"SET SESSION statement_timeout TO 5000":                    "5000",
		"SET statement_timeout = '5s'":                             "5000",
		"SET statement_timeout TO '2min'":                          "120000",
		"SET statement_timeout = 0":                                "0",
		"SET lock_timeout = '1h'":                                  "3600000",
		"SET statement_timeout = '24d'":                            "2073600000",
		"SET statement_timeout = '25d'":                            "!",
		"SET statement_timeout = '2147483647'":                     "2147483647",
		"SET statement_timeout = '2147483648'":                     "!",
		"SET statement_timeout = '010'":                            "!",
		"SET statement_timeout = '0x10'":                           "!",
		"SET statement_timeout = '1.5s'":                           "!",
		"SET statement_timeout = '5 s'":                            "!",
		"SET statement_timeout = '5S'":                             "!",
		"SET statement_timeout = '500us'":                          "!",
		"SET statement_timeout = '-1'":                             "!",
		"SET work_mem = '8MB'":                                     "-",
		"SET LOCAL extra_float_digits = 3":                         "-",
		"SET search_path = public":                                 "-",
	} {
		c, ok := localCommand(sql)
		if want == "-" {
			if ok {
				t.Errorf("%q: answered here (%+v)", sql, c)
			}
			continue
		}
		if !ok || c.Kind != planner.LocalSet {
			t.Errorf("%q: not a SET answered here", sql)
			continue
		}
		v, ok := ss.setValue(&c)
		if got := v; !ok {
			got = "!"
			if v != "" {
				t.Errorf("%q: value %q with !ok", sql, v)
			}
		} else if got != want {
			t.Errorf("%q: %q, want %q", sql, got, want)
		}
		if !ok && want != "!" {
			t.Errorf("%q: for the origin, want %q", sql, want)
		}
	}
}

// TestLocalCommand: the statements a session with no origin connection
// answers itself.
func TestLocalCommand(t *testing.T) {
	begin := planner.LocalCommand{Kind: planner.LocalTx, Tx: planner.KindBegin}
	commit := planner.LocalCommand{Kind: planner.LocalTx, Tx: planner.KindCommit}
	rollback := planner.LocalCommand{Kind: planner.LocalTx, Tx: planner.KindRollback}
	for sql, want := range map[string]planner.LocalCommand{
		"": {Kind: planner.LocalEmpty}, "  ;": {Kind: planner.LocalEmpty}, "-- ping": {Kind: planner.LocalEmpty}, "SELECT 1": {Kind: planner.LocalSelectOne}, "select 1;": {Kind: planner.LocalSelectOne},
		"BEGIN": begin, "START TRANSACTION READ ONLY": begin, "COMMIT": commit, "END": commit,
		"ROLLBACK": rollback, "ABORT": rollback, "COMMIT AND CHAIN": {}, "SELECT 2": {}, "SAVEPOINT a": {},
		"SET extra_float_digits = 3": {Kind: planner.LocalSet, Name: "extra_float_digits", Value: "3"}, "SET work_mem = 1": {},
		"DISCARD ALL": {Kind: planner.LocalDiscardAll}, "DISCARD PLANS": {},
		"DEALLOCATE ALL": {Kind: planner.LocalDeallocateAll}, "deallocate prepare all": {Kind: planner.LocalDeallocateAll},
		"DEALLOCATE _pg3_0": {Kind: planner.LocalDeallocate, Name: "_pg3_0"}, `DEALLOCATE PREPARE "S_1"`: {Kind: planner.LocalDeallocate, Name: "S_1"},
		"DEALLOCATE S_1": {Kind: planner.LocalDeallocate, Name: "s_1"}, "DEALLOCATE ALL; SELECT 1": {},
	} {
		c, ok := localCommand(sql)
		if !ok && c != (planner.LocalCommand{}) || c != want {
			t.Errorf("%q: %+v %v, want %+v", sql, c, ok, want)
		}
	}
}
