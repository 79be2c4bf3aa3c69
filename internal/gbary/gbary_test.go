package gbary

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomStack returns a labeled stack of K measures of n points in R^d
// whose measures are shifted apart, with soft labels over c classes.
func randomStack(rng *rand.Rand, K, n, d, c int) *Stack {
	s := NewStack(K, n, d, c)
	for t := 0; t < K*n; t++ {
		for q := 0; q < d; q++ {
			s.A.Set(t, q, rng.NormFloat64()+0.5*float64(t/n))
		}
		var sum float64
		for q := 0; q < c; q++ {
			v := rng.ExpFloat64()
			s.YA.Set(t, q, v)
			sum += v
		}
		for q := 0; q < c; q++ {
			s.YA.Set(t, q, s.YA.At(t, q)/sum)
		}
	}
	return s
}

// TestDirectMatchesGram: the two ways of computing the support's inner
// products (Stack.Prepare) give the same plans, costs and support, for
// weight vectors with and without zeros, and the direct way goes through
// iterations that recompute only some rows (including counts that are not
// multiples of the kernel's row triple).
func TestDirectMatchesGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		K, n, d, c int
		alpha      []float64
	}{
		{5, 31, 9, 3, []float64{0.3, 0.1, 0.2, 0.25, 0.15}},
		{6, 40, 12, 4, []float64{0.5, 0, 0.2, 0, 0.3, 0}},
		{8, 24, 7, 2, []float64{0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125}},
	} {
		if UsesGram(tc.K, 1) || !UsesGram(tc.K, tc.K) {
			t.Fatalf("K=%d: Prepare(1) must go direct and Prepare(K) through the Gram matrix", tc.K)
		}
		s := randomStack(rng, tc.K, tc.n, tc.d, tc.c)
		init := rng.Perm(tc.K * tc.n)[:tc.n]

		s.Prepare(tc.K)
		if s.G == nil {
			t.Fatal("Prepare(K) computed no Gram matrix")
		}
		var g Barycenter
		if err := g.Run(s, init, tc.alpha, 0, 10, 1e-12); err != nil {
			t.Fatal(err)
		}
		g.Materialize(s)
		gramNorm := append([]float64(nil), s.Norm...)

		s.Prepare(1)
		if s.G != nil {
			t.Fatal("Prepare(1) kept the Gram matrix")
		}
		for i, v := range s.Norm {
			if v != gramNorm[i] {
				t.Fatalf("K=%d: norm %d is %v directly, %v from the Gram matrix", tc.K, i, v, gramNorm[i])
			}
		}
		partial := 0
		var b Barycenter
		b.Workers = 2
		b.debugChanged = func(m int) {
			if m > 0 && m < tc.n {
				partial++
			}
		}
		if err := b.Run(s, init, tc.alpha, 0, 10, 1e-12); err != nil {
			t.Fatal(err)
		}
		b.Materialize(s)
		if partial == 0 {
			t.Errorf("K=%d: no iteration recomputed only some rows", tc.K)
		}
		if b.Iters != g.Iters {
			t.Fatalf("K=%d: %d iterations directly, %d through the Gram matrix", tc.K, b.Iters, g.Iters)
		}
		for k := range b.Inv {
			for j := range b.Inv[k] {
				if b.Inv[k][j] != g.Inv[k][j] {
					t.Fatalf("K=%d: plans differ (measure %d, point %d)", tc.K, k, j)
				}
			}
		}
		for it := range b.J {
			if math.Abs(b.J[it]-g.J[it]) > 1e-9*math.Max(1, g.J[it]) {
				t.Errorf("K=%d iteration %d: cost %v directly, %v through the Gram matrix", tc.K, it, b.J[it], g.J[it])
			}
		}
		if !mat.EqualApprox(b.XB, g.XB, 1e-12) || !mat.EqualApprox(b.YB, g.YB, 1e-12) {
			t.Errorf("K=%d: supports differ", tc.K)
		}
		if !b.Converged {
			t.Fatalf("K=%d: not converged in 10 iterations", tc.K)
		}
		// S of the last iteration against a product with the support
		// (which the converged last update left unchanged).
		want := mat.NewDense(tc.n, tc.K*tc.n, nil)
		want.Mul(b.XB, s.A.T())
		if !mat.EqualApprox(b.S, want, 1e-9) {
			t.Errorf("K=%d: S differs from X_B Aᵀ", tc.K)
		}
	}
}

// TestLabelBlocksExact: the label term computed in column blocks gives
// bit for bit the plans, costs and support of the unblocked computation,
// with block sizes that do and do not divide the measures' size.
func TestLabelBlocksExact(t *testing.T) {
	defer func(b int) { labelBlock = b }(labelBlock)
	rng := rand.New(rand.NewPCG(3, 9))
	s := randomStack(rng, 3, 50, 6, 7)
	// Some labels exactly zero, as hard labels have.
	for t := 0; t < 50; t += 3 {
		s.YA.Set(t, 2, 0)
	}
	s.Prepare(1)
	init := rng.Perm(150)[:50]
	run := func(block int) *Barycenter {
		labelBlock = block
		var g Barycenter
		if err := g.Run(s, init, []float64{0.2, 0.5, 0.3}, 0, 10, 0); err != nil {
			t.Fatal(err)
		}
		g.Materialize(s)
		return &g
	}
	want := run(1 << 20)
	for _, block := range []int{1, 7, 25, 50} {
		got := run(block)
		if !slices.Equal(got.J, want.J) || !slices.Equal(got.Costs, want.Costs) {
			t.Fatalf("block %d: J %v costs %v, unblocked %v %v", block, got.J, got.Costs, want.J, want.Costs)
		}
		for k := range want.Inv {
			if !slices.Equal(got.Inv[k], want.Inv[k]) {
				t.Fatalf("block %d: plan %d differs", block, k)
			}
		}
		if !mat.Equal(got.XB, want.XB) || !mat.Equal(got.YB, want.YB) {
			t.Fatalf("block %d: support differs", block)
		}
	}
}
