package barycenter

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkLabeled computes one labeled barycenter of K = 8 atoms of 200
// points in R^64 with 10 classes (the default 10 iterations at most).
func BenchmarkLabeled(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	ms := make([]Measure, 8)
	alpha := make([]float64, 8)
	for k := range ms {
		ms[k] = Measure{X: gaussian(rng, 200, 64, float64(k)/4), Y: oneHot(rng, 200, 10)}
		alpha[k] = 1.0 / 8
	}
	b.ResetTimer()
	var iters int
	for i := 0; i < b.N; i++ {
		r, err := Labeled(ms, alpha, &Settings{Rand: rand.New(rand.NewPCG(1, uint64(i)))})
		if err != nil {
			b.Fatal(err)
		}
		iters = r.Iterations
	}
	b.ReportMetric(float64(iters), "iterations")
}
