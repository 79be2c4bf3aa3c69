package dictionary

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLazyAdamMatchesEager checks that applying the zero-gradient steps of
// rows outside the batch late (lazyAdam) gives bit-for-bit the parameters
// of eager steps on every row, and the same step sizes.
func TestLazyAdamMatchesEager(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const rows, width, steps = 30, 7, 40
	p0 := make([]float64, rows*width)
	for i := range p0 {
		p0[i] = rng.NormFloat64()
	}
	eager, lazy := append([]float64(nil), p0...), append([]float64(nil), p0...)
	var ea adam
	ea.init(rows * width)
	var la lazyAdam
	la.init(rows, width)
	g := make([]float64, rows*width)
	live := make([]bool, rows)
	var wantSq []float64
	for s := 0; s < steps; s++ {
		lr := 0.1
		if s >= steps/2 {
			lr = 0.01 // the plateau rule's annealing
		}
		// A batch of rows, some drawn twice.
		batch := make([]int, 6)
		for i := range batch {
			batch[i] = rng.IntN(rows)
		}
		clear(live)
		clear(g)
		for _, r := range batch {
			live[r] = true
			for q := 0; q < width; q++ {
				g[r*width+q] += rng.NormFloat64()
			}
		}
		// The batch's rows are read (brought up to date) before the step.
		for _, r := range batch {
			la.catchUp(lazy, r, la.t)
			for q := 0; q < width; q++ {
				if lazy[r*width+q] != eager[r*width+q] {
					t.Fatalf("step %d: row %d read as %v, eager %v", s, r, lazy[r*width+q], eager[r*width+q])
				}
			}
		}
		wantSq = append(wantSq, ea.stepRows(eager, g, width, live, lr))
		la.advance(lr)
		for _, r := range batch {
			la.stepRow(lazy, g[r*width:(r+1)*width], r)
		}
	}
	la.sync(lazy)
	for i := range eager {
		if lazy[i] != eager[i] || la.m[i] != ea.m[i] || la.v[i] != ea.v[i] {
			t.Fatalf("entry %d: lazy %v (m %v, v %v), eager %v (m %v, v %v)", i, lazy[i], la.m[i], la.v[i], eager[i], ea.m[i], ea.v[i])
		}
	}
	for s, want := range wantSq {
		if got := la.sq[s]; math.Abs(got-want) > 1e-12*want {
			t.Errorf("step %d: ‖Δp‖² = %v lazily, %v eagerly", s+1, got, want)
		}
	}
}
