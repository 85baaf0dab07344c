package accelerator

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestNumericStddev_MatchesPostgres compares NumericStddev, fed the sums
// Postgres computes, with Postgres's own four aggregates over random sets
// of numeric(p,s) and integer values: small and large counts, equal
// values, negative ones, scales 0 to 6.
func TestNumericStddev_MatchesPostgres(t *testing.T) {
	ctx, pg := superConn(t)
	rng := rand.New(rand.NewSource(7))
	checked := 0
	for set := 0; set < 120; set++ {
		scale := set % 7
		typ := fmt.Sprintf("numeric(18,%d)", scale)
		if set%5 == 4 {
			typ, scale = "int", 0
		}
		n := []int{1, 2, 3, 7, 50, 400}[set%6]
		var vals []string
		same := set%11 == 0
		first := ""
		for i := 0; i < n; i++ {
			v := fmt.Sprintf("%d", rng.Int63n(2_000_000)-1_000_000)
			if set%3 == 0 {
				v = fmt.Sprintf("%d", rng.Int63n(20)-10)
			}
			if scale > 0 {
				v += "." + fmt.Sprintf("%0*d", scale, rng.Int63n(int64(pow10Int(scale))))
			}
			if same {
				if first == "" {
					first = v
				}
				v = first
			}
			vals = append(vals, v)
		}
		q := fmt.Sprintf(`SELECT sum(x)::text, sum(x::numeric * x)::text, count(x), stddev_pop(x)::text, stddev_samp(x)::text, var_pop(x)::text, var_samp(x)::text
			FROM unnest('{%s}'::%s[]) AS x`, strings.Join(vals, ","), typ)
		res := pg.ExecParams(ctx, q, nil, nil, nil, nil).Read()
		if res.Err != nil {
			t.Fatalf("%s: %v", q, res.Err)
		}
		row := res.Rows[0]
		count := int64(0)
		fmt.Sscan(string(row[2]), &count)
		for i, kind := range []string{"stddev_pop", "stddev_samp", "var_pop", "var_samp"} {
			got, null, err := NumericStddev(string(row[0]), string(row[1]), count, kind)
			if err != nil {
				t.Fatalf("%s over %s: %v", kind, q, err)
			}
			want := row[3+i]
			if null != (want == nil) || !null && got != string(want) {
				t.Errorf("%s of %d %s values: got %q (null %v), Postgres %q\n%s", kind, n, typ, got, null, want, q)
			}
			checked++
		}
	}
	t.Logf("%d aggregates equal", checked)
}

func pow10Int(k int) int {
	p := 1
	for ; k > 0; k-- {
		p *= 10
	}
	return p
}
