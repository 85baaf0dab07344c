package accelerator

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestNumericAvg_MatchesPostgres compares NumericAvg with the origin's
// avg(numeric) and avg(int) over groups of random values.
func TestNumericAvg_MatchesPostgres(t *testing.T) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, srv.SuperDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	r := rand.New(rand.NewSource(7))
	type group struct {
		typ  string
		vals []string
	}
	var groups []group
	for i := 0; i < 300; i++ {
		scale := r.Intn(5)
		typ := fmt.Sprintf("numeric(20,%d)", scale)
		if i%5 == 0 {
			typ, scale = "int8", 0
		}
		var vals []string
		for j := 0; j < 1+r.Intn(9); j++ {
			mag := []int64{1, 7, 100, 99999, 123456789, 1e12}[r.Intn(6)]
			v := r.Int63n(mag)
			if r.Intn(3) == 0 {
				v = -v
			}
			s := fmt.Sprint(v)
			if scale > 0 {
				neg := strings.HasPrefix(s, "-")
				s = strings.TrimPrefix(s, "-")
				for len(s) <= scale {
					s = "0" + s
				}
				s = s[:len(s)-scale] + "." + s[len(s)-scale:]
				if neg {
					s = "-" + s
				}
			}
			vals = append(vals, s)
		}
		groups = append(groups, group{typ, vals})
	}
	for _, g := range groups {
		q := fmt.Sprintf("SELECT avg(v)::text, sum(v)::text, count(v) FROM unnest(ARRAY[%s]::%s[]) v", strings.Join(g.vals, ","), g.typ)
		var want, sum string
		var n int64
		if err := c.QueryRow(ctx, q).Scan(&want, &sum, &n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		got, err := NumericAvg(sum, n)
		if err != nil || got != want {
			t.Errorf("avg of %v (%s): got %q (%v), want %q", g.vals, g.typ, got, err, want)
		}
	}
}

func TestNumericAvgDec_IsTheRoundedAvgExactly(t *testing.T) {
	for _, tc := range []struct {
		sum  string
		n    int64
		want string // unscaled DECIMAL(38,24)
		err  bool
	}{
		{"10", 3, "3333333333333333300000000", false},       // 3.3333333333333333 (rscale 16)
		{"-23.76", 2, "-11880000000000000000000000", false}, // -11.8800000000000000
		{"1", 100000000, "10000000000000000", false},        // 1e-8 (rscale 28, zeros past 24)
		{"1", 3000000000000, "", true},                      // non-zero digits past 24
		{"1234567890123456.00", 1, "", true},                // 16 integer digits
	} {
		got, err := NumericAvgDec(tc.sum, tc.n)
		if tc.err {
			if err == nil {
				t.Errorf("NumericAvgDec(%s, %d) = %v, want an error", tc.sum, tc.n, got)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("NumericAvgDec(%s, %d) = %v, %v; want %s", tc.sum, tc.n, got, err, tc.want)
		}
	}
}

func TestNumericRound_HalfAwayFromZero(t *testing.T) {
	tests := []struct {
		in   string
		k    int
		want string
	}{
		{"2.5", 0, "3"}, {"-2.5", 0, "-3"}, {"0.125", 2, "0.13"}, {"-0.125", 2, "-0.13"}, {"0.124999", 2, "0.12"},
		{"1.5", 3, "1.500"}, {"-0.004", 2, "0.00"}, {"12", 2, "12.00"}, {"0.0000000000000001", 4, "0.0000"},
		{"999.995", 2, "1000.00"}, {"-999.995", 2, "-1000.00"}, {"123.4567890123456789", 4, "123.4568"},
	}
	for _, tt := range tests {
		got, err := NumericRound(tt.in, tt.k)
		if err != nil || got != tt.want {
			t.Errorf("NumericRound(%s, %d) = %q, %v; want %q", tt.in, tt.k, got, err, tt.want)
		}
	}
}
