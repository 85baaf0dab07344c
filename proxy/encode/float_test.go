package encode

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestRyuTables_MatchPostgres checks generated table entries against the
// values in Postgres's d2s_full_table.h.
func TestRyuTables_MatchPostgres(t *testing.T) {
	tests := []struct {
		name string
		got  [2]uint64
		want [2]uint64
	}{
		{"POW5_INV_SPLIT[0]", doublePow5InvSplit[0], [2]uint64{1, 288230376151711744}},
		{"POW5_INV_SPLIT[1]", doublePow5InvSplit[1], [2]uint64{3689348814741910324, 230584300921369395}},
		{"POW5_INV_SPLIT[2]", doublePow5InvSplit[2], [2]uint64{2951479051793528259, 184467440737095516}},
		{"POW5_INV_SPLIT[3]", doublePow5InvSplit[3], [2]uint64{17118578500402463900, 147573952589676412}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// TestFloatText_MatchesPostgresRandom prints many random float4 and
// float8 values with every extra_float_digits branch and compares them
// with Postgres's output of the same values, read in one query each.
func TestFloatText_MatchesPostgresRandom(t *testing.T) {
	h := newHarness(t)
	r := rand.New(rand.NewPCG(7, 11))
	const n = 20000
	for _, bits := range []int{32, 64} {
		vals := make([]float64, 0, n)
		for len(vals) < n {
			var f float64
			switch len(vals) % 4 {
			case 0: // any bit pattern
				if bits == 32 {
					f = float64(math.Float32frombits(r.Uint32()))
				} else {
					f = math.Float64frombits(r.Uint64())
				}
			case 1: // ordinary magnitudes
				f = r.NormFloat64() * math.Pow(10, float64(r.IntN(30)-15))
			case 2: // integers and halves near the fixed/exponent thresholds
				f = math.Trunc(r.Float64()*math.Pow(10, float64(r.IntN(20)))) / float64(1+r.IntN(2))
			default: // short decimals, which stress the interval bounds
				f, _ = strconv.ParseFloat(fmt.Sprintf("%de%d", r.IntN(1000), r.IntN(60)-30), bits)
			}
			if bits == 32 {
				f = float64(float32(f))
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				continue
			}
			vals = append(vals, f)
		}
		var lit strings.Builder
		lit.WriteString("{")
		for i, f := range vals {
			if i > 0 {
				lit.WriteByte(',')
			}
			lit.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
		}
		lit.WriteString("}")
		typ := "float8"
		if bits == 32 {
			typ = "float4"
		}
		for _, efd := range []int{1, 3, 0, -4, -15} {
			h.exec(fmt.Sprintf("SET extra_float_digits = %d", efd))
			q := fmt.Sprintf("SELECT x::text FROM unnest($1::%s[]) WITH ORDINALITY AS u(x, n) ORDER BY n", typ)
			res := h.pg.ExecParams(context.Background(), q, [][]byte{[]byte(lit.String())}, nil, nil, nil).Read()
			if res.Err != nil {
				t.Fatalf("Postgres: %v", res.Err)
			}
			bad := 0
			for i, row := range res.Rows {
				got := string(appendFloatText(nil, vals[i], bits, efd))
				if got != string(row[0]) {
					if bad++; bad <= 10 {
						t.Errorf("%s %v (%b) efd %d: got %q, want %q", typ, vals[i], math.Float64bits(vals[i]), efd, got, row[0])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%s efd %d: %d of %d differ", typ, efd, bad, len(vals))
			}
		}
	}
	h.exec("RESET extra_float_digits")
}
