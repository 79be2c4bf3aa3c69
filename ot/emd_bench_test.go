package ot

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// gaussianCost returns the squared-Euclidean cost between two samples of n
// standard Gaussian points in R^d.
func gaussianCost(n, d int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 42))
	X := mat.NewDense(n, d, nil)
	Y := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			X.Set(i, k, rng.NormFloat64())
			Y.Set(i, k, rng.NormFloat64())
		}
	}
	C := mat.NewDense(n, n, nil)
	x, y, c := X.RawMatrix().Data, Y.RawMatrix().Data, C.RawMatrix().Data
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < d; k++ {
				t := x[i*d+k] - y[j*d+k]
				s += t * t
			}
			c[i*n+j] = s
		}
	}
	return C
}

// BenchmarkEMD solves uniform n×n problems between Gaussian samples in R^64
// with squared-Euclidean cost.
func BenchmarkEMD(b *testing.B) {
	for _, n := range []int{200, 1000, 2000, 5000} {
		b.Run(fmtN(n), func(b *testing.B) {
			C := gaussianCost(n, 64, uint64(n))
			var s EMDSolver
			var r EMDResult
			b.ResetTimer()
			for k := 0; k < b.N; k++ {
				if err := s.Solve(&r, nil, nil, C); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r.Pivots), "pivots")
		})
	}
}

func fmtN(n int) string { return fmt.Sprintf("n=%d", n) }
