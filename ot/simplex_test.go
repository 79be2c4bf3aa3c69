package ot

import (
	"math"
	"slices"
	"testing"
)

// bisectSimplex is a reference projection: it finds θ with
// Σ max(v_i − θ, 0) = 1 by bisection (the sum is decreasing in θ).
func bisectSimplex(v []float64) []float64 {
	lo, hi := slices.Min(v)-1, slices.Max(v)
	for it := 0; it < 200; it++ {
		mid := lo + (hi-lo)/2
		var s float64
		for _, x := range v {
			s += math.Max(x-mid, 0)
		}
		if s > 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	theta := lo + (hi-lo)/2
	x := make([]float64, len(v))
	for i := range v {
		x[i] = math.Max(v[i]-theta, 0)
	}
	return x
}

// checkSimplexKKT verifies that x is in Δ and is the projection of v:
// x_i = max(v_i − θ, 0) for a single θ (the KKT conditions), up to tol.
func checkSimplexKKT(t *testing.T, v, x []float64, tol float64) {
	t.Helper()
	var s float64
	for i, xi := range x {
		if !(xi >= 0) {
			t.Fatalf("x[%d] = %g", i, xi)
		}
		s += xi
	}
	if math.Abs(s-1) > tol {
		t.Fatalf("Σx = %.17g", s)
	}
	// θ from any positive entry; all positive entries must agree and all
	// zero entries must satisfy v_i ≤ θ.
	theta := math.NaN()
	for i, xi := range x {
		if xi > 0 {
			theta = v[i] - xi
			break
		}
	}
	scale := math.Max(1, slices.Max(v)-slices.Min(v))
	for i, xi := range x {
		if xi > 0 && math.Abs(v[i]-xi-theta) > tol*scale {
			t.Fatalf("x[%d] = %g: v − x = %.17g, θ = %.17g", i, xi, v[i]-xi, theta)
		}
		if xi == 0 && v[i] > theta+tol*scale {
			t.Fatalf("x[%d] = 0 but v = %g > θ = %g", i, v[i], theta)
		}
	}
}

func TestProjectSimplexTable(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name string
		v    []float64
		want []float64
	}{
		{"single", []float64{3.7}, []float64{1}},
		{"single negative", []float64{-1e300}, []float64{1}},
		{"all equal", []float64{2, 2, 2, 2}, []float64{0.25, 0.25, 0.25, 0.25}},
		{"all equal negative", []float64{-5, -5}, []float64{0.5, 0.5}},
		{"zeros", []float64{0, 0, 0, 0, 0}, []float64{0.2, 0.2, 0.2, 0.2, 0.2}},
		{"vertex", []float64{0, 1, 0}, []float64{0, 1, 0}},
		{"in simplex", []float64{0.25, 0.5, 0.25}, []float64{0.25, 0.5, 0.25}},
		{"dominant", []float64{10, 0, -3}, []float64{1, 0, 0}},
		{"ties", []float64{1, 1, 0, -1}, []float64{0.5, 0.5, 0, 0}},
		{"ties with gap", []float64{0.5, 0.5, 0.5, 0}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3, 0}},
		{"two active", []float64{0.8, 0.6, 0}, []float64{0.6, 0.4, 0}},
		{"huge", []float64{1e308, 1e308, 0}, []float64{0.5, 0.5, 0}},
		{"huge spread", []float64{-1e308, 1e308}, []float64{0, 1}},
		{"large close", []float64{1e17, 1e17 + 16}, []float64{0, 1}},
		{"minus infinity", []float64{-inf, 0.3, 0.1}, []float64{0, 0.6, 0.4}},
	} {
		got := make([]float64, len(tc.v))
		ProjectSimplex(got, tc.v)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-15 {
				t.Errorf("%s: ProjectSimplex(%v) = %v, want %v", tc.name, tc.v, got, tc.want)
				break
			}
		}
	}
}

func TestProjectSimplexRandom(t *testing.T) {
	rng := skRand(8)
	for trial := 0; trial < 2000; trial++ {
		n := 1 + rng.IntN(40)
		if trial%100 == 0 {
			n = 500 + rng.IntN(500)
		}
		scale := math.Pow(10, float64(rng.IntN(7)-3))
		v := make([]float64, n)
		for i := range v {
			v[i] = scale * (rng.NormFloat64() + float64(trial%3-1))
			if trial%5 == 0 && i%3 == 0 {
				v[i] = v[0] // ties
			}
		}
		x := make([]float64, n)
		ProjectSimplex(x, v)
		checkSimplexKKT(t, v, x, 1e-12)
		ref := bisectSimplex(v)
		for i := range x {
			if math.Abs(x[i]-ref[i]) > 1e-12 {
				t.Fatalf("trial %d: x[%d] = %.17g, bisection %.17g", trial, i, x[i], ref[i])
			}
		}
		// In place gives the same result, and projecting again is a no-op.
		y := slices.Clone(v)
		ProjectSimplex(y, y)
		if !slices.Equal(x, y) {
			t.Fatalf("trial %d: in-place result differs", trial)
		}
		z := make([]float64, n)
		ProjectSimplex(z, x)
		if !slices.Equal(x, z) {
			t.Fatalf("trial %d: projection is not idempotent", trial)
		}
		// Shifting v by a constant leaves the projection unchanged.
		for i := range y {
			y[i] = v[i] + 3
		}
		ProjectSimplex(y, y)
		for i := range y {
			if math.Abs(x[i]-y[i]) > 1e-12 {
				t.Fatalf("trial %d: not shift invariant", trial)
			}
		}
	}
}

func TestProjectSimplexInSimplexUnchanged(t *testing.T) {
	rng := skRand(10)
	for trial := 0; trial < 500; trial++ {
		n := 1 + rng.IntN(30)
		v := make([]float64, n)
		var s float64
		for i := range v {
			if rng.IntN(4) > 0 {
				v[i] = rng.Float64()
			}
			s += v[i]
		}
		if s == 0 {
			v[0], s = 1, 1
		}
		for i := range v {
			v[i] /= s
		}
		x := make([]float64, n)
		ProjectSimplex(x, v)
		for i := range v {
			if math.Abs(x[i]-v[i]) > 4e-16 {
				t.Fatalf("trial %d: %v projected to %v", trial, v, x)
			}
		}
	}
}

func TestProjectSimplexNonFinite(t *testing.T) {
	inf := math.Inf(1)
	for _, v := range [][]float64{
		{math.NaN()},
		{0.2, math.NaN(), 0.3},
		{1, inf},
		{-inf, -inf},
	} {
		x := []float64{7, 7, 7}[:len(v)]
		ProjectSimplex(x, v)
		for i := range x {
			if !math.IsNaN(x[i]) {
				t.Errorf("ProjectSimplex(%v) = %v, want all NaN", v, x)
				break
			}
		}
	}
}

func TestProjectSimplexEdge(t *testing.T) {
	ProjectSimplex(nil, nil) // no-op
	ProjectSimplex([]float64{}, []float64{})
	func() {
		defer func() {
			if recover() == nil {
				t.Error("no panic on length mismatch")
			}
		}()
		ProjectSimplex(make([]float64, 2), make([]float64, 3))
	}()
}

func TestProjectSimplexAllocations(t *testing.T) {
	v := make([]float64, 1000)
	small := make([]float64, 64)
	for i := range v {
		v[i] = float64(i%17) - 5
	}
	for i := range small {
		small[i] = float64(i%7) - 2
	}
	dst := make([]float64, len(v))
	if a := testing.AllocsPerRun(10, func() { ProjectSimplex(dst, v) }); a != 0 {
		t.Errorf("%v allocations with distinct slices", a)
	}
	work := make([]float64, len(small))
	if a := testing.AllocsPerRun(10, func() { copy(work, small); ProjectSimplex(work, work) }); a != 0 {
		t.Errorf("%v allocations in place with n = 64", a)
	}
}
