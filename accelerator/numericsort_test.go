package accelerator

import (
	"math/big"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// TestNumericSortKey_OrdersByValue sorts random decimal texts by their
// keys and checks the order is the values' order, with values equal but
// for trailing zeros given equal keys.
func TestNumericSortKey_OrdersByValue(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	texts := []string{"0", "0.00", "-0.00", "1", "1.0", "1.2", "1.23", "-1.2", "-1.23", "10", "9.999", "0.05", "-0.05", "100000000000000000000.5", "-0.0000000000000000001"}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		if rng.Intn(2) == 0 {
			b.WriteByte('-')
		}
		b.WriteString(strings.Repeat("0", rng.Intn(2)))
		for n := 1 + rng.Intn(6); n > 0; n-- {
			b.WriteByte(byte('0' + rng.Intn(10)))
		}
		if rng.Intn(3) > 0 {
			b.WriteByte('.')
			for n := 1 + rng.Intn(6); n > 0; n-- {
				b.WriteByte(byte('0' + rng.Intn(10)))
			}
		}
		texts = append(texts, b.String())
	}
	type item struct {
		text, key string
		val       *big.Rat
	}
	var items []item
	for _, s := range texts {
		k, err := NumericSortKey(s)
		if err != nil {
			t.Fatalf("NumericSortKey(%q): %v", s, err)
		}
		v, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("bad test value %q", s)
		}
		items = append(items, item{s, k, v})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
	for i := 1; i < len(items); i++ {
		a, b := items[i-1], items[i]
		c := a.val.Cmp(b.val)
		if c > 0 || (c == 0) != (a.key == b.key) {
			t.Fatalf("%q (key %q) sorts before %q (key %q)", a.text, a.key, b.text, b.key)
		}
	}
	for _, bad := range []string{"", "-", "1e5", "NaN", "1.2.3", "+1"} {
		if _, err := NumericSortKey(bad); err == nil {
			t.Errorf("NumericSortKey(%q): no error", bad)
		}
	}
}
