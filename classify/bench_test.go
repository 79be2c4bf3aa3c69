package classify

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkFitLabels trains on Gaussian class clusters (class means at
// distance about 2√2 noise standard deviations, so the classes overlap
// in every coordinate but are separable in d dimensions), reporting
// iterations and loss evaluations per fit.
func BenchmarkFitLabels(b *testing.B) {
	for _, bc := range []struct {
		n, d, c, workers int
	}{
		{200, 64, 10, 0},
		{1000, 800, 10, 0},
		{1000, 800, 10, 1},
		{2000, 4096, 10, 0},
		{2000, 4096, 10, 1},
	} {
		name := fmt.Sprintf("n=%d/d=%d/c=%d", bc.n, bc.d, bc.c)
		if bc.workers != 0 {
			name += fmt.Sprintf("/workers=%d", bc.workers)
		}
		b.Run(name, func(b *testing.B) {
			rng := newRand(1)
			_, X, labels := clusters(rng, bc.n, bc.d, bc.c, 2)
			s := &Settings{Workers: bc.workers}
			var iters, evals int
			for b.Loop() {
				_, r, err := FitLabels(X, labels, bc.c, nil, s)
				if err != nil {
					b.Fatal(err)
				}
				if !r.Converged {
					b.Fatalf("not converged: %+v", *r)
				}
				iters, evals = r.Iterations, r.Evaluations
			}
			b.ReportMetric(float64(iters), "iters/op")
			b.ReportMetric(float64(evals), "evals/op")
		})
	}
}

// BenchmarkEvaluation measures one loss and gradient evaluation.
func BenchmarkEvaluation(b *testing.B) {
	for _, bc := range []struct{ n, d, c int }{{1000, 800, 10}, {2000, 4096, 10}, {3000, 4096, 31}} {
		b.Run(fmt.Sprintf("n=%d/d=%d/c=%d", bc.n, bc.d, bc.c), func(b *testing.B) {
			rng := newRand(1)
			_, X, labels := clusters(rng, bc.n, bc.d, bc.c, 2)
			xr := X.RawMatrix()
			o := newObjective(xr.Data, xr.Stride, bc.n, bc.d, nil, 0, labels, bc.c, nil, float64(bc.n), DefaultL2, runtime.GOMAXPROCS(0))
			theta := make([]float64, o.dim())
			for i := range theta {
				theta[i] = 1e-3 * rng.NormFloat64()
			}
			g := make([]float64, len(theta))
			for b.Loop() {
				theta[0] += 1e-9 // defeat the cache
				o.Func(theta)
				o.Grad(g, theta)
			}
		})
	}
}
