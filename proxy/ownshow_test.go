package proxy

import (
	"strings"
	"testing"

	"github.com/pgaccel/pgaccel/planner"
)

// Each own statement becomes a SELECT the proxy knows again (ownKind),
// and EXPLAIN (pgaccel)'s statement survives the trip as a literal.
func TestOwnStatementsRoundTrip(t *testing.T) {
	for sql, want := range map[string]planner.PgaccelShow{
		"SHOW pgaccel.last_route": planner.ShowLastRoute, "show pgaccel.statements;": planner.ShowStatements,
		"SHOW pgaccel.stats": planner.ShowStats, "SHOW pgaccel.datasets": planner.ShowDatasets, "SHOW pgaccel.advice": planner.ShowAdvice,
		"EXPLAIN (pgaccel) SELECT 'it''s', $1 FROM t": showExplain, "SELECT 1": planner.ShowNone,
	} {
		own := asOwnStatement(sql)
		if got := ownKind(own); got != want {
			t.Errorf("%q: kind %d, want %d (%s)", sql, got, want, own)
		}
		if !ownText(sql) != (want == planner.ShowNone) {
			t.Errorf("%q: ownText %v", sql, ownText(sql))
		}
	}
	own := asOwnStatement("EXPLAIN (pgaccel) SELECT 'it''s' FROM t")
	lit := strings.TrimSuffix(strings.TrimPrefix(own, explainPrefix), explainSuffix)
	if lit != "'SELECT ''it''''s'' FROM t'" {
		t.Errorf("the literal %s", lit)
	}
	// A text that only starts like the explain form is not one.
	if ownKind(explainPrefix+"'x'::text) AS other"+originFails("explain")) != planner.ShowNone {
		t.Error("a lookalike taken as EXPLAIN (pgaccel)")
	}
}

func TestDuckValues(t *testing.T) {
	cols := []ownCol{{"a", "text"}, {"n", "bigint"}, {"f", "float8"}}
	if got := duckValues(cols, nil); got != `SELECT CAST(NULL AS VARCHAR) AS "a", CAST(NULL AS BIGINT) AS "n", CAST(NULL AS DOUBLE) AS "f" WHERE false` {
		t.Errorf("empty: %s", got)
	}
	got := duckValues(cols, [][]any{{"it's", int64(3), 1.5}, {nil, nil, nil}})
	want := `SELECT * FROM (VALUES (CAST('it''s' AS VARCHAR), CAST(3 AS BIGINT), CAST(1.500 AS DOUBLE)), (CAST(NULL AS VARCHAR), CAST(NULL AS BIGINT), CAST(NULL AS DOUBLE))) AS t("a", "n", "f")`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestTagRows(t *testing.T) {
	for tag, want := range map[string]int64{"SELECT 3": 3, "INSERT 0 12": 12, "UPDATE 0": 0, "BEGIN": 0, "COPY 99999999999": 99999999999, "SELECT x": 0} {
		if got := tagRows([]byte(tag)); got != want {
			t.Errorf("%q: %d, want %d", tag, got, want)
		}
	}
}
