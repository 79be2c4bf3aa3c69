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

// TestAdamRowPaths checks that the assembly kernel and the portable code
// give bit-identical steps, with and without a gradient, on rows of every
// length modulo 4.
func TestAdamRowPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	saved := useAVX2
	defer setAVX2(saved)
	for _, n := range []int{1, 3, 4, 5, 8, 13, 800, 803} {
		for _, withGrad := range []bool{false, true} {
			vec := func() []float64 {
				x := make([]float64, n)
				for i := range x {
					x[i] = rng.NormFloat64()
				}
				return x
			}
			p, m, v := vec(), vec(), vec()
			for i := range v {
				v[i] *= v[i]
			}
			var g []float64
			if withGrad {
				g = vec()
			}
			sc, ce := adamScale(3, 0.1)
			var out [2][3][]float64
			var lanes [2][4]float64
			for path := range 2 {
				setAVX2(path == 1)
				pp, mm, vv := append([]float64(nil), p...), append([]float64(nil), m...), append([]float64(nil), v...)
				adamRow(pp, mm, vv, g, sc, ce, &lanes[path])
				out[path] = [3][]float64{pp, mm, vv}
			}
			for w := range 3 {
				for i := range n {
					if out[0][w][i] != out[1][w][i] {
						t.Fatalf("n=%d grad=%v: array %d entry %d: portable %v, kernel %v", n, withGrad, w, i, out[0][w][i], out[1][w][i])
					}
				}
			}
			if lanes[0] != lanes[1] {
				t.Fatalf("n=%d grad=%v: lanes %v and %v", n, withGrad, lanes[0], lanes[1])
			}
			// One step against the textbook formula.
			c1, c2 := 1-math.Pow(adamB1, 3), math.Sqrt(1-math.Pow(adamB2, 3))
			for i := range n {
				gi := 0.0
				if withGrad {
					gi = g[i]
				}
				mi := adamB1*m[i] + (1-adamB1)*gi
				vi := adamB2*v[i] + (1-adamB2)*gi*gi
				want := p[i] - 0.1*(mi/c1)/(math.Sqrt(vi)/c2+adamEps)
				if got := out[0][0][i]; math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Fatalf("n=%d grad=%v entry %d: %v, textbook %v", n, withGrad, i, got, want)
				}
			}
		}
	}
}
