package accelerator

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/pgaccel/pgaccel/pgdef"
)

// TestIntervalKey_IsPostgresSpan: pgaccel_interval_key is (months × 30 +
// days) × 86400000000 + microseconds, for fields of both signs and at
// their extremes.
func TestIntervalKey_IsPostgresSpan(t *testing.T) {
	e := openEngine(t, "")
	ivs := [][3]int64{
		{0, 0, 0}, {1, 0, 0}, {0, 30, 0}, {1, -1, 0}, {0, 29, 0}, {1, -4, 14400000000}, {0, 27, 14400000000},
		{-13, -3, -14706789000}, {-1, 40, 0}, {0, 1, -3600000000}, {0, 0, 82800000000}, {0, 0, -1},
		{math.MaxInt32, math.MaxInt32, math.MaxInt64}, {math.MinInt32, math.MinInt32, math.MinInt64 + 1},
		{-2, 45, -43200000000}, {2136000000, 0, 0}, {7, -200, 123456789},
	}
	for _, iv := range ivs {
		q := fmt.Sprintf("SELECT CAST(%s(to_months(%d) + to_days(%d) + to_microseconds(%d)) AS VARCHAR)", pgdef.FuncIntervalKey, iv[0], iv[1], iv[2])
		rows, err := e.Query(context.Background(), q)
		if err != nil {
			t.Fatalf("%v: %v", iv, err)
		}
		var got string
		for rows.Next() {
			got = fmt.Sprint(rows.Values()[0])
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%v: %v", iv, err)
		}
		rows.Close()
		want := new(big.Int).Mul(big.NewInt(iv[0]), big.NewInt(30))
		want.Add(want, big.NewInt(iv[1]))
		want.Mul(want, big.NewInt(86400000000))
		want.Add(want, big.NewInt(iv[2]))
		if got != want.String() {
			t.Errorf("key of %d months %d days %d µs = %s, want %s", iv[0], iv[1], iv[2], got, want)
		}
	}
}
