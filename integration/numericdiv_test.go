package integration

import (
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/pgaccel/pgaccel/accelerator"
)

// The exact numeric division and display scales of the acceleration
// against Postgres's own, for random operands of many magnitudes and
// scales (equal leading digits included).
func TestNumericDivAndScale_MatchPostgres(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	decimal := func() string {
		intDigits := rng.IntN(12)
		scale := rng.IntN(8)
		var b strings.Builder
		if rng.IntN(4) == 0 {
			b.WriteByte('-')
		}
		if intDigits == 0 {
			b.WriteByte('0')
		}
		for i := 0; i < intDigits; i++ {
			d := rng.IntN(10)
			if i == 0 && d == 0 {
				d = 1 + rng.IntN(9)
			}
			b.WriteByte(byte('0' + d))
		}
		if scale > 0 {
			b.WriteByte('.')
			for i := 0; i < scale; i++ {
				b.WriteByte(byte('0' + rng.IntN(10)))
			}
		}
		return b.String()
	}
	var as, bs []string
	for len(as) < 3000 {
		a, b := decimal(), decimal()
		if rng.IntN(5) == 0 { // same leading digits, other magnitudes
			b = strings.TrimPrefix(a, "-")
			if rng.IntN(2) == 0 {
				b += "1"
			} else if i := strings.IndexByte(b, '.'); i > 1 {
				b = b[:i-1] + "." + b[i-1:i] + b[i+1:]
			}
		}
		if strings.Trim(b, "-0.") == "" {
			continue
		}
		as, bs = append(as, a), append(bs, b)
	}
	matchPostgres(t, "(a::numeric / b::numeric)::text", as, bs, accelerator.NumericDiv, "/")
	// Scales: trailing zeros dropped or added, never other digits.
	for _, tc := range []struct {
		v     string
		scale int64
		want  string
	}{{"12.3400", 2, "12.34"}, {"-0.50", 1, "-0.5"}, {"7", 3, "7.000"}, {"1.00", 0, "1"}} {
		if got, err := accelerator.NumericScale(tc.v, tc.scale); err != nil || got != tc.want {
			t.Errorf("NumericScale(%s, %d) = %q, %v", tc.v, tc.scale, got, err)
		}
	}
	if _, err := accelerator.NumericScale("1.25", 1); err == nil {
		t.Error("NumericScale dropped a non-zero digit")
	}
}

// TestNumericFloorDiv_MatchesPostgres: floor(a / N), ceil, round and trunc
// as the acceleration computes them (pgaccel_numeric_div_int:
// floordiv.go) against Postgres's,
// for random decimals and for values just below and above multiples of N
// (where the quotient's rounding may reach the next integer), N from 1 to
// a billion and decimal N (bin widths such as 12.5).
func TestNumericFloorDiv_MatchesPostgres(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var as, ns []string
	for len(as) < 4000 {
		n := []int64{1, 7, 60, 300, 3600, 86400, 604800, 2592000, 31536000, 1_000_000_000}[rng.IntN(10)]
		if rng.IntN(3) == 0 {
			n = 1 + rng.Int64N(1_000_000_000)
		}
		scale := rng.IntN(9)
		k := rng.Int64N(3_000_000_000/n+2) - rng.Int64N(1_000_000_000/n+2)
		// k*n, then a unit of the last decimal below or above it, or a
		// random fraction.
		unit := "0." + strings.Repeat("0", max(scale-1, 0)) + "1"
		base := strconv.FormatInt(k*n, 10)
		var a string
		switch rng.IntN(3) {
		case 0:
			a = subDecimal(base, unit, scale)
		case 1:
			a = addDecimal(base, unit, scale)
		default:
			a = base
			if scale > 0 {
				a += "." + strconv.FormatInt(rng.Int64N(pow10i(scale)), 10)
			}
		}
		as, ns = append(as, a), append(ns, strconv.FormatInt(n, 10))
	}
	// Decimal divisors (Metabase's bin widths), dividends around their
	// multiples.
	for len(as) < 5000 {
		w := []string{"12.5", "0.25", "2.50", "0.001", "1.5", "100.0", "7.75"}[rng.IntN(7)]
		scale := rng.IntN(5)
		k := rng.Int64N(20000) - 10000
		wr, _ := new(big.Rat).SetString(w)
		base := new(big.Rat).Mul(wr, new(big.Rat).SetInt64(k)).FloatString(scale + 3)
		unit := "0." + strings.Repeat("0", scale+2) + "1"
		a := []string{subDecimal(base, unit, scale+3), addDecimal(base, unit, scale+3), base}[rng.IntN(3)]
		as, ns = append(as, a), append(ns, w)
	}
	for _, how := range []string{"floor", "ceil", "round", "trunc"} {
		matchPostgres(t, how+"(a::numeric / b::numeric)::text", as, ns, func(a, n string) (string, error) {
			q, err := accelerator.NumericDiv(a, n)
			if err != nil {
				return "", err
			}
			return accelerator.NumericToInt(q, how)
		}, how+" /")
	}
}

// matchPostgres checks compute(as[i], bs[i]) against Postgres's expr of
// a = as[i], b = bs[i] (text), for every i.
func matchPostgres(t *testing.T, expr string, as, bs []string, compute func(a, b string) (string, error), op string) {
	t.Helper()
	c := connect(t, origin.SuperDSN())
	rows, err := c.Query(ctxT(t), `SELECT `+expr+` FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(a, b, n) ORDER BY n`, as, bs)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i, bad := 0, 0
	for rows.Next() {
		var want string
		if err := rows.Scan(&want); err != nil {
			t.Fatal(err)
		}
		if got, err := compute(as[i], bs[i]); err != nil || got != want {
			bad++
			if bad <= 10 {
				t.Errorf("%s %s %s = %q (%v), Postgres %q", as[i], op, bs[i], got, err, want)
			}
		}
		i++
	}
	if err := rows.Err(); err != nil || i != len(as) {
		t.Fatalf("%d of %d rows: %v", i, len(as), err)
	}
	if bad > 0 {
		t.Errorf("%d of %d differ", bad, i)
	}
}

func pow10i(k int) int64 {
	p := int64(1)
	for range k {
		p *= 10
	}
	return p
}

// addDecimal and subDecimal are base ± unit with scale decimals, exactly.
func addDecimal(base, unit string, scale int) string { return decimalSum(base, unit, scale, 1) }
func subDecimal(base, unit string, scale int) string { return decimalSum(base, unit, scale, -1) }

func decimalSum(base, unit string, scale, sign int) string {
	b, _ := new(big.Rat).SetString(base)
	u, _ := new(big.Rat).SetString(unit)
	if sign < 0 {
		u.Neg(u)
	}
	return b.Add(b, u).FloatString(scale)
}
