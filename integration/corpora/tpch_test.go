package corpora

import "testing"

func TestQ11Fraction_IsExact(t *testing.T) {
	tests := []struct {
		sf   float64
		want string
	}{
		{1, "0.0001"}, {0.1, "0.001"}, {0.01, "0.01"}, {10, "0.00001"}, {100, "0.000001"},
	}
	for _, tt := range tests {
		if got := q11Fraction(tt.sf); got != tt.want {
			t.Errorf("q11Fraction(%g) = %s, want %s", tt.sf, got, tt.want)
		}
	}
}
