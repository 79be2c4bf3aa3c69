package linalg

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func BenchmarkShapes(b *testing.B) {
	for _, sh := range [][3]int{{8000, 8000, 800}} {
		for _, p := range []int{1, 2} {
			b.Run(fmt.Sprintf("%v/p%d", sh, p), func(b *testing.B) {
				old := runtime.GOMAXPROCS(p)
				defer runtime.GOMAXPROCS(old)
				rng := rand.New(rand.NewPCG(7, 8))
				A, B := randDense(rng, sh[0], sh[2]), randDense(rng, sh[1], sh[2])
				C := mat.NewDense(sh[0], sh[1], nil)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					MulABT(C, A, B)
				}
				b.ReportMetric(float64(sh[0]*sh[1]*sh[2]*2)/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
			})
		}
	}
}
