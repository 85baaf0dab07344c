package accelerator

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestNumericIn_MatchesPostgres reads texts with NumericIn and checks the
// value, printed at the scale it returns, is Postgres's text::numeric; and
// that the texts Postgres rejects, or whose value DECIMAL(38,24) cannot
// hold, are errors.
func TestNumericIn_MatchesPostgres(t *testing.T) {
	ctx, pg := superConn(t)
	texts := []string{"0", "1", "-1", "1.50", "10.77000000000000000000", " 12.5 ", "\t7\n", "+3.25", "-0.00", "-0", ".5", "5.", "007.100",
		"1e3", "1.5e3", "1.5E-3", "2.50e+2", "1e-24", "12345678901234.5", "99999999999999", "0.000000000000000000000001",
		"1e-25", "123456789012345", "1.0000000000000000000000001", "NaN", "Infinity", "-inf", "abc", "", " ", "1.2.3", "1e", "e5", "--1", "1_000", "0x1F", "1 2"}
	for _, s := range texts {
		v, scale, ierr := NumericIn(s)
		res := pg.ExecParams(ctx, "SELECT $1::numeric::text", [][]byte{[]byte(s)}, nil, nil, nil).Read()
		if res.Err != nil || ierr != nil {
			// Postgres rejects it, or it is outside what the
			// acceleration computes: NumericIn must refuse it.
			if ierr == nil {
				t.Errorf("NumericIn(%q) = %v, %d; Postgres: %v", s, v, scale, res.Err)
			}
			continue
		}
		want := string(res.Rows[0][0])
		if got := decimalText(v, numericInScale, scale); got != want {
			t.Errorf("NumericIn(%q) prints %q, Postgres %q", s, got, want)
		}
	}
}

// superConn connects to the test Postgres as its superuser, for a minute.
func superConn(t *testing.T) (context.Context, *pgconn.PgConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	pg, err := pgconn.Connect(ctx, srv.SuperDSN())
	if err != nil {
		t.Fatalf("connect to the test Postgres: %v", err)
	}
	t.Cleanup(func() { pg.Close(context.Background()) })
	return ctx, pg
}

// decimalText prints unscaled v (scaled by 10^from) with scale digits.
func decimalText(v *big.Int, from, scale int) string {
	neg := v.Sign() < 0
	digits := new(big.Int).Abs(v).String()
	if len(digits) <= from {
		digits = strings.Repeat("0", from-len(digits)+1) + digits
	}
	intPart, frac := digits[:len(digits)-from], digits[len(digits)-from:]
	frac = frac[:scale]
	out := intPart
	if scale > 0 {
		out += "." + frac
	}
	if neg && strings.Trim(out, "0.") != "" {
		out = "-" + out
	}
	return out
}
