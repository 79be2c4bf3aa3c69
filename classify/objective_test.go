package classify

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// testObjective builds the objective of Fit (soft targets) or FitLabels
// (labels) without training.
func testObjective(t *testing.T, X, T *mat.Dense, labels []int, c int, w []float64, lambda float64, workers int) *objective {
	t.Helper()
	xr, err := checkFeatures(X)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := checkWeights(w, xr.Rows)
	if err != nil {
		t.Fatal(err)
	}
	if T != nil {
		tr := T.RawMatrix()
		return newObjective(xr.Data, xr.Stride, xr.Rows, xr.Cols, tr.Data, tr.Stride, nil, c, w, sum, lambda, workers)
	}
	return newObjective(xr.Data, xr.Stride, xr.Rows, xr.Cols, nil, 0, labels, c, w, sum, lambda, workers)
}

// naiveLoss evaluates L(θ) straight from its definition.
func naiveLoss(X, T *mat.Dense, w []float64, lambda float64, theta []float64) float64 {
	n, d := X.Dims()
	_, c := T.Dims()
	var sum, sumW float64
	for i := range n {
		s := 1.0
		if w != nil {
			s = w[i]
		}
		z := make([]float64, c)
		for k := range c {
			z[k] = theta[c*d+k]
			for j := range d {
				z[k] += theta[k*d+j] * X.At(i, j)
			}
		}
		var norm float64
		for _, v := range z {
			norm += math.Exp(v)
		}
		for k := range c {
			sum -= s * T.At(i, k) * math.Log(math.Exp(z[k])/norm)
		}
		sumW += s
	}
	var pen float64
	for _, v := range theta[:c*d] {
		pen += v * v
	}
	return sum/sumW + lambda*pen
}

func TestGradientFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, d, c  int
		soft     bool
		weighted bool
		lambda   float64
		scale    float64 // of the random parameters
	}{
		{"labels", 23, 4, 3, false, false, 1e-3, 0.5},
		{"soft", 23, 4, 3, true, false, 1e-3, 0.5},
		{"soft weighted", 31, 5, 4, true, true, 0.1, 1},
		{"labels weighted", 31, 5, 4, false, true, 0, 1},
		{"several blocks", 700, 3, 3, true, true, 1e-2, 1},
		{"two classes", 40, 6, 2, true, true, 1e-3, 2},
		{"one class", 10, 3, 1, false, false, 1e-2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := newRand(uint64(tc.n*100 + tc.d))
			_, X, labels := clusters(rng, tc.n, tc.d, tc.c, 2)
			T := softTargets(rng, labels, tc.c)
			var w []float64
			if tc.weighted {
				w = make([]float64, tc.n)
				for i := range w {
					w[i] = rng.ExpFloat64()
				}
				w[0] = 0
			}
			var o *objective
			if tc.soft {
				o = testObjective(t, X, T, nil, tc.c, w, tc.lambda, 3)
			} else {
				T = oneHot(labels, tc.c)
				o = testObjective(t, X, nil, labels, tc.c, w, tc.lambda, 3)
			}
			for trial := range 3 {
				theta := make([]float64, o.dim())
				for i := range theta {
					theta[i] = tc.scale * rng.NormFloat64()
				}
				f := o.Func(theta)
				if want := naiveLoss(X, T, w, tc.lambda, theta); math.Abs(f-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Errorf("trial %d: loss %.17g, direct evaluation %.17g", trial, f, want)
				}
				g := make([]float64, len(theta))
				o.Grad(g, theta)
				fd := make([]float64, len(theta))
				for i := range theta {
					h := 1e-5 * math.Max(1, math.Abs(theta[i]))
					old := theta[i]
					theta[i] = old + h
					fp := o.Func(theta)
					theta[i] = old - h
					fm := o.Func(theta)
					theta[i] = old
					fd[i] = (fp - fm) / (2 * h)
				}
				scale := math.Max(1, floats.Norm(g, math.Inf(1)))
				for i := range g {
					if math.Abs(g[i]-fd[i]) > 1e-6*scale {
						t.Errorf("trial %d: ∂L/∂θ[%d] = %.12g, finite difference %.12g", trial, i, g[i], fd[i])
					}
				}
			}
		})
	}
}

// TestGradientUnnormalisedTargets checks that the gradient is that of L as
// written when the target rows sum to 1 only within the tolerance.
func TestGradientUnnormalisedTargets(t *testing.T) {
	rng := newRand(7)
	_, X, labels := clusters(rng, 30, 3, 3, 2)
	T := softTargets(rng, labels, 3)
	for i := range 30 {
		row := T.RawRowView(i)
		floats.Scale(1+9e-7*float64(i%3-1), row)
	}
	o := testObjective(t, X, T, nil, 3, nil, 0, 1)
	theta := make([]float64, o.dim())
	for i := range theta {
		theta[i] = 3 * rng.NormFloat64()
	}
	g := make([]float64, len(theta))
	o.Func(theta)
	o.Grad(g, theta)
	// L is invariant under b → b + β1 even though the rows do not sum to
	// 1, so Σ_k ∂L/∂b_k vanishes up to rounding.
	var sumB float64
	for _, v := range g[3*3:] {
		sumB += v
	}
	if math.Abs(sumB) > 1e-14 {
		t.Errorf("Σ_k ∂L/∂b_k = %g, want 0 (L is invariant under b → b + β1)", sumB)
	}
	for i := range theta {
		h := 1e-5
		old := theta[i]
		theta[i] = old + h
		fp := o.Func(theta)
		theta[i] = old - h
		fm := o.Func(theta)
		theta[i] = old
		if fd := (fp - fm) / (2 * h); math.Abs(fd-g[i]) > 1e-7 {
			t.Errorf("∂L/∂θ[%d] = %.12g, finite difference %.12g", i, g[i], fd)
		}
	}
}

// oneHot returns the one-hot targets of labels.
func oneHot(labels []int, c int) *mat.Dense {
	T := mat.NewDense(len(labels), c, nil)
	for i, y := range labels {
		T.Set(i, y, 1)
	}
	return T
}

func TestObjectiveOverflow(t *testing.T) {
	X := mat.NewDense(2, 1, []float64{1e300, -1e300})
	o := testObjective(t, X, nil, []int{0, 1}, 2, nil, 0, 1)
	if f := o.Func([]float64{1e10, -1e10, 0, 0}); !math.IsInf(f, 1) {
		t.Errorf("loss with overflowing logits = %g, want +Inf", f)
	}
}
