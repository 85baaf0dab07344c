package main

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/rs/zerolog"
)

// TestExactAvg_MatchesPostgres is the differential test of exactAvgCTEs:
// groups of numeric(p,s) values of every magnitude, sign and count,
// averaged by Postgres and by the DuckDB rewrite, compared as text.
func TestExactAvg_MatchesPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	origin, err := pgtest.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer origin.Stop()
	conn, err := pgconn.Connect(ctx, origin.SuperDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	eng, err := accelerator.Open(accelerator.Options{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()

	rng := rand.New(rand.NewSource(1))
	for _, ps := range [][2]int{{15, 2}, {10, 0}, {18, 6}, {6, 5}, {30, 10}} {
		p, s := ps[0], ps[1]
		values := avgTestValues(rng, p, s)
		typ := fmt.Sprintf("numeric(%d,%d)", p, s)
		pgSQL := fmt.Sprintf("SELECT grp, avg(x::%s)::text FROM (VALUES %s) v(grp, x) GROUP BY grp ORDER BY grp", typ, values)
		res := conn.ExecParams(ctx, pgSQL, nil, nil, nil, nil).Read()
		if res.Err != nil {
			t.Fatalf("%s: postgres: %v", typ, res.Err)
		}
		var want []string
		for _, row := range res.Rows {
			want = append(want, string(row[0])+"|"+string(row[1]))
		}

		ctes, last := exactAvgCTEs("g", []avgTerm{{"avg_x", "x", s}})
		duckSQL := fmt.Sprintf("WITH g AS (SELECT grp, CAST(sum(x) * %s AS HUGEINT) AS u0, count(x) AS n0 "+
			"FROM (SELECT grp, CAST(x AS DECIMAL(%d,%d)) AS x FROM (VALUES %s) v(grp, x)) GROUP BY grp), %s "+
			"SELECT CAST(grp AS VARCHAR), t0 FROM %s ORDER BY grp", pow10(fmt.Sprint(s)), p, s, values, ctes, last)
		rows, err := eng.Query(ctx, duckSQL)
		if err != nil {
			t.Fatalf("%s: duckdb: %v", typ, err)
		}
		var got []string
		for rows.Next() {
			v := rows.Values()
			got = append(got, fmt.Sprint(v[0])+"|"+fmt.Sprint(v[1]))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if check, ok := compareRows(want, got); !ok {
			t.Errorf("%s: %s", typ, check)
		}
	}
}

// avgTestValues is a VALUES list of (group, value) for numeric(p,s):
// groups of 1 to 60 values (some of thousands), of random magnitude, some
// negative, all zero or all one.
func avgTestValues(rng *rand.Rand, p, s int) string {
	var vals []string
	for g := range 80 {
		n := 1 + rng.Intn(60)
		if g%9 == 0 {
			n = 1 + rng.Intn(5000)
		}
		digits := min(rng.Intn(p+1), 18)
		for range n {
			var v int64
			if digits > 0 {
				lim := int64(1)
				for range digits {
					lim *= 10
				}
				v = rng.Int63n(lim)
			}
			switch {
			case g%11 == 3:
				v = 0
			case g%13 == 4:
				v = 1
			case g%5 == 1 && rng.Intn(3) == 0:
				v = -v
			}
			vals = append(vals, fmt.Sprintf("(%d,%s)", g, decimalLiteral(v, s)))
		}
	}
	return strings.Join(vals, ",")
}

// decimalLiteral writes the unscaled v with s decimals.
func decimalLiteral(v int64, s int) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	str := fmt.Sprint(v)
	if s == 0 {
		return sign + str
	}
	if len(str) <= s {
		str = strings.Repeat("0", s-len(str)+1) + str
	}
	return sign + str[:len(str)-s] + "." + str[len(str)-s:]
}
