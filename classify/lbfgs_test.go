package classify

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// testFunc adapts closures to the function interface.
type testFunc struct {
	f     func(x []float64) float64
	g     func(g, x []float64)
	evals int
}

func (t *testFunc) Func(x []float64) float64 { t.evals++; return t.f(x) }
func (t *testFunc) Grad(g, x []float64)      { t.g(g, x) }
func (t *testFunc) norm(g []float64) float64 { return floats.Norm(g, math.Inf(1)) }

// rosenbrock is the extended Rosenbrock function, minimum 0 at (1, …, 1).
func rosenbrock() *testFunc {
	return &testFunc{
		f: func(x []float64) float64 {
			var f float64
			for i := 0; i+1 < len(x); i += 2 {
				a, b := x[i+1]-x[i]*x[i], 1-x[i]
				f += 100*a*a + b*b
			}
			return f
		},
		g: func(g, x []float64) {
			for i := 0; i+1 < len(x); i += 2 {
				a := x[i+1] - x[i]*x[i]
				g[i] = -400*a*x[i] - 2*(1-x[i])
				g[i+1] = 200 * a
			}
		},
	}
}

// quadratic is f(x) = offset + ½ Σ_i h_i (x_i − 1)², with curvatures h_i
// spread over [1, cond].
func quadratic(n int, cond, offset float64) *testFunc {
	h := make([]float64, n)
	for i := range h {
		h[i] = math.Pow(cond, float64(i)/float64(n-1))
	}
	return &testFunc{
		f: func(x []float64) float64 {
			f := offset
			for i, v := range x {
				f += 0.5 * h[i] * (v - 1) * (v - 1)
			}
			return f
		},
		g: func(g, x []float64) {
			for i, v := range x {
				g[i] = h[i] * (v - 1)
			}
		},
	}
}

func TestMinimize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fn      *testFunc
		x0      []float64
		gradTol float64
		maxIter int
	}{
		{"rosenbrock 2", rosenbrock(), []float64{-1.2, 1}, 1e-10, 1000},
		{"rosenbrock 20", rosenbrock(), fill(20, -1.2), 1e-10, 1000},
		{"quadratic cond 1e3", quadratic(50, 1e3, 0), fill(50, 0), 1e-8, 5000},
		// With a large offset the decrease of f near the minimum is below
		// its rounding error: only the approximate Wolfe conditions let
		// the gradient reach the tolerance.
		{"quadratic offset 1e8", quadratic(50, 1e3, 1e8), fill(50, 0), 1e-9, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := append([]float64(nil), tc.x0...)
			f, g, iter, st := minimize(tc.fn, x, tc.maxIter, tc.gradTol)
			gn := floats.Norm(g, math.Inf(1))
			var dist float64
			for _, v := range x {
				dist = math.Max(dist, math.Abs(v-1))
			}
			t.Logf("f %.17g, ‖g‖∞ %.3g, %d iterations, %d evaluations, %v, max |x−1| %.2g", f, gn, iter, tc.fn.evals, st, dist)
			if st != optimize.GradientThreshold || gn >= tc.gradTol {
				t.Errorf("status %v, ‖g‖∞ = %g", st, gn)
			}
			if dist > 1e-6 {
				t.Errorf("minimiser off by %g", dist)
			}
			want := make([]float64, len(x))
			tc.fn.g(want, x)
			if !floats.Equal(want, g) || tc.fn.f(x) != f {
				t.Errorf("returned value or gradient is not that of the returned point")
			}
		})
	}
}

func TestMinimizeStops(t *testing.T) {
	fn := rosenbrock()
	x := []float64{-1.2, 1}
	_, _, iter, st := minimize(fn, x, 5, 1e-12)
	if iter != 5 || st != optimize.IterationLimit {
		t.Errorf("MaxIter 5: %d iterations, %v", iter, st)
	}
	// A function that cannot decrease along its gradient (inconsistent
	// gradient) fails in the line search.
	bad := &testFunc{
		f: func(x []float64) float64 { return x[0] * x[0] },
		g: func(g, x []float64) { g[0] = -1 },
	}
	x = []float64{1}
	f, _, _, st := minimize(bad, x, 100, 1e-12)
	if st != optimize.MethodConverge || f != 1 || x[0] != 1 {
		t.Errorf("inconsistent gradient: status %v, f %g at %v; want MethodConverge at the start", st, f, x)
	}
}

func TestInterpolate(t *testing.T) {
	// The cubic through a cubic's values and slopes finds its minimiser.
	phi := func(a float64) float64 { return (a-0.3)*(a-0.3)*(a+2) + 1 }
	dphi := func(a float64) float64 { return 2*(a-0.3)*(a+2) + (a-0.3)*(a-0.3) }
	if a := interpolate(0, phi(0), dphi(0), 1, phi(1), dphi(1), true); math.Abs(a-0.3) > 1e-12 {
		t.Errorf("cubic step %g, want 0.3", a)
	}
	// The quadratic through a quadratic's values and slope at lo too.
	q := func(a float64) float64 { return 2 * (a - 0.6) * (a - 0.6) }
	if a := interpolate(0, q(0), -2.4, 1, q(1), 0, false); math.Abs(a-0.6) > 1e-12 {
		t.Errorf("quadratic step %g, want 0.6", a)
	}
	// Reversed intervals and safeguards.
	if a := interpolate(1, q(1), 1.6, 0, q(0), 0, false); math.Abs(a-0.6) > 1e-12 {
		t.Errorf("reversed quadratic step %g, want 0.6", a)
	}
	if a := interpolate(0, 0, -1, 1, math.Inf(1), 0, false); a != 0.1 {
		t.Errorf("step towards an infinite value %g, want 0.1", a)
	}
	if a := interpolate(0, 0, -1, 2, math.NaN(), math.NaN(), true); a != 1 {
		t.Errorf("step with NaN data %g, want the midpoint 1", a)
	}
}

// fill returns n copies of v.
func fill(n int, v float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return x
}
