package barycenter

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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
		if usesGram(tc.K, 1) || !usesGram(tc.K, tc.K) {
			t.Fatalf("K=%d: Prepare(1) must go direct and Prepare(K) through the Gram matrix", tc.K)
		}
		s := randomStack(rng, tc.K, tc.n, tc.d, tc.c)
		init := rng.Perm(tc.K * tc.n)[:tc.n]

		s.Prepare(tc.K)
		if s.gram == nil {
			t.Fatal("Prepare(K) computed no Gram matrix")
		}
		var g UniformResult
		if err := (&UniformSolver{MaxIter: 10, Tol: 1e-12}).Solve(&g, s, tc.alpha, init); err != nil {
			t.Fatal(err)
		}
		gramNorm := append([]float64(nil), s.norm...)

		s.Prepare(1)
		if s.gram != nil {
			t.Fatal("Prepare(1) kept the Gram matrix")
		}
		for i, v := range s.norm {
			if v != gramNorm[i] {
				t.Fatalf("K=%d: norm %d is %v directly, %v from the Gram matrix", tc.K, i, v, gramNorm[i])
			}
		}
		partial := 0
		var b UniformResult
		u := UniformSolver{MaxIter: 10, Tol: 1e-12, Workers: 2}
		u.debugChanged = func(m int) {
			if m > 0 && m < tc.n {
				partial++
			}
		}
		if err := u.Solve(&b, s, tc.alpha, init); err != nil {
			t.Fatal(err)
		}
		if partial == 0 {
			t.Errorf("K=%d: no iteration recomputed only some rows", tc.K)
		}
		if b.Iterations != g.Iterations {
			t.Fatalf("K=%d: %d iterations directly, %d through the Gram matrix", tc.K, b.Iterations, g.Iterations)
		}
		for k := range b.Match {
			for j := range b.Match[k] {
				if b.Match[k][j] != g.Match[k][j] {
					t.Fatalf("K=%d: plans differ (measure %d, point %d)", tc.K, k, j)
				}
			}
		}
		for it := range b.History {
			if math.Abs(b.History[it]-g.History[it]) > 1e-9*math.Max(1, g.History[it]) {
				t.Errorf("K=%d iteration %d: cost %v directly, %v through the Gram matrix", tc.K, it, b.History[it], g.History[it])
			}
		}
		if !mat.EqualApprox(b.X, g.X, 1e-12) || !mat.EqualApprox(b.Y, g.Y, 1e-12) {
			t.Errorf("K=%d: supports differ", tc.K)
		}
		if !b.Converged {
			t.Fatalf("K=%d: not converged in 10 iterations", tc.K)
		}
		// S of the last iteration against a product with the support
		// (which the converged last update left unchanged).
		want := mat.NewDense(tc.n, tc.K*tc.n, nil)
		want.Mul(b.X, s.A.T())
		if !mat.EqualApprox(u.inner, want, 1e-9) {
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
	run := func(block int) *UniformResult {
		labelBlock = block
		var g UniformResult
		if err := (&UniformSolver{MaxIter: 10}).Solve(&g, s, []float64{0.2, 0.5, 0.3}, init); err != nil {
			t.Fatal(err)
		}
		return &g
	}
	want := run(1 << 20)
	for _, block := range []int{1, 7, 25, 50} {
		got := run(block)
		if !slices.Equal(got.History, want.History) || !slices.Equal(got.Costs, want.Costs) {
			t.Fatalf("block %d: J %v costs %v, unblocked %v %v", block, got.History, got.Costs, want.History, want.Costs)
		}
		for k := range want.Match {
			if !slices.Equal(got.Match[k], want.Match[k]) {
				t.Fatalf("block %d: plan %d differs", block, k)
			}
		}
		if !mat.Equal(got.X, want.X) || !mat.Equal(got.Y, want.Y) {
			t.Fatalf("block %d: support differs", block)
		}
	}
}

// TestUniformSolverErrors: invalid arguments and settings are errors,
// prefixed "barycenter: ", as are costs the assignment solver cannot take.
func TestUniformSolverErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s := randomStack(rng, 2, 4, 3, 2)
	unprepared := randomStack(rng, 2, 4, 3, 2)
	s.Prepare(1)
	huge := NewStack(2, 2, 1, 0)
	huge.SetMeasure(0, mat.NewDense(2, 1, []float64{1e200, -1e200}), nil)
	huge.SetMeasure(1, mat.NewDense(2, 1, []float64{3e200, 0}), nil)
	huge.Prepare(1)
	ok := UniformSolver{MaxIter: 5}
	alpha, init := []float64{0.5, 0.5}, []int{0, 1, 5, 7}
	for _, tc := range []struct {
		name  string
		u     UniformSolver
		dst   *UniformResult
		s     *Stack
		alpha []float64
		init  []int
	}{
		{"nil result", ok, nil, s, alpha, init},
		{"unprepared stack", ok, &UniformResult{}, unprepared, alpha, init},
		{"MaxIter 0", UniformSolver{}, &UniformResult{}, s, alpha, init},
		{"NaN Tol", UniformSolver{MaxIter: 5, Tol: math.NaN()}, &UniformResult{}, s, alpha, init},
		{"negative Workers", UniformSolver{MaxIter: 5, Workers: -1}, &UniformResult{}, s, alpha, init},
		{"negative Beta", UniformSolver{MaxIter: 5, Beta: -1}, &UniformResult{}, s, alpha, init},
		{"infinite Beta", UniformSolver{MaxIter: 5, Beta: math.Inf(1)}, &UniformResult{}, s, alpha, init},
		{"short init", ok, &UniformResult{}, s, alpha, init[:3]},
		{"init out of range", ok, &UniformResult{}, s, alpha, []int{0, 1, 2, 8}},
		{"short alpha", ok, &UniformResult{}, s, alpha[:1], init},
		{"negative alpha", ok, &UniformResult{}, s, []float64{1.5, -0.5}, init},
		{"alpha off the simplex", ok, &UniformResult{}, s, []float64{0.5, 0.6}, init},
		{"overflowing costs", ok, &UniformResult{}, huge, alpha, []int{0, 3}},
	} {
		err := tc.u.Solve(tc.dst, tc.s, tc.alpha, tc.init)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
		} else if !strings.HasPrefix(err.Error(), "barycenter: ") {
			t.Errorf("%s: error %q lacks the package prefix", tc.name, err)
		}
	}
	if err := ok.Solve(&UniformResult{}, huge, alpha, []int{0, 3}); !errors.Is(err, errCosts) {
		t.Errorf("overflowing costs: error %v, want %v", err, errCosts)
	}
}

// TestUniformSolverReuse: a solver and a result reused across stacks of
// other shapes give bit for bit the results of fresh ones.
func TestUniformSolverReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	big, small := randomStack(rng, 3, 20, 5, 4), randomStack(rng, 2, 12, 3, 2)
	big.Prepare(1)
	small.Prepare(1)
	initBig, initSmall := rng.Perm(60)[:20], rng.Perm(24)[:12]
	alphaBig, alphaSmall := []float64{0.2, 0.3, 0.5}, []float64{0.6, 0.4}
	u := UniformSolver{MaxIter: 10, Tol: 1e-12}
	var r UniformResult
	for _, tc := range []struct {
		s     *Stack
		alpha []float64
		init  []int
	}{{big, alphaBig, initBig}, {small, alphaSmall, initSmall}, {big, alphaBig, initBig}} {
		if err := u.Solve(&r, tc.s, tc.alpha, tc.init); err != nil {
			t.Fatal(err)
		}
		var fresh UniformResult
		if err := (&UniformSolver{MaxIter: 10, Tol: 1e-12}).Solve(&fresh, tc.s, tc.alpha, tc.init); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.History, fresh.History) || !slices.Equal(r.Costs, fresh.Costs) ||
			r.Cost != fresh.Cost || r.Iterations != fresh.Iterations || r.Converged != fresh.Converged {
			t.Fatalf("reused: J %v costs %v, fresh %v %v", r.History, r.Costs, fresh.History, fresh.Costs)
		}
		for k := range fresh.Match {
			if !slices.Equal(r.Match[k], fresh.Match[k]) {
				t.Fatalf("reused: plan %d differs", k)
			}
		}
		if !mat.Equal(r.X, fresh.X) || !mat.Equal(r.Y, fresh.Y) {
			t.Fatal("reused: support differs")
		}
	}
}
