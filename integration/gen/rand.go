package gen

import "math/rand/v2"

// rng is the generator's source of choices.
type rng struct{ r *rand.Rand }

func newRNG(seed, index uint64) *rng {
	return &rng{r: rand.New(rand.NewPCG(seed, index^0x9e3779b97f4a7c15))}
}

// intn is a number in [0, n).
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return r.r.IntN(n)
}

// chance is true with probability p.
func (r *rng) chance(p float64) bool { return r.r.Float64() < p }

// pick is one of xs.
func pick[T any](r *rng, xs []T) T { return xs[r.intn(len(xs))] }

// weighted is a list of choices with weights.
type weighted[T any] []struct {
	v T
	w int
}

// add appends v with weight w.
func (ws *weighted[T]) add(v T, w int) {
	*ws = append(*ws, struct {
		v T
		w int
	}{v, w})
}

// pickW is one of ws, chosen by weight.
func pickW[T any](r *rng, ws weighted[T]) T {
	total := 0
	for _, x := range ws {
		total += x.w
	}
	n := r.intn(total)
	for _, x := range ws {
		if n < x.w {
			return x.v
		}
		n -= x.w
	}
	return ws[len(ws)-1].v
}
