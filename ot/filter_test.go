package ot

import (
	"math/rand/v2"
	"testing"
)

// TestFirstBelow compares the pricing filter kernel (AVX2 where the CPU has
// it) with the portable loop.
func TestFirstBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		n := 8 * rng.IntN(12)
		row := make([]float32, n)
		pd := make([]float32, n+rng.IntN(3))
		for i := range row {
			row[i] = float32(rng.NormFloat64())
		}
		for i := range pd {
			pd[i] = float32(rng.NormFloat64())
		}
		thr := float32(-2 - 2*rng.Float64())
		if trial%7 == 0 && n > 0 {
			// Plant a hit.
			i := rng.IntN(n)
			row[i] = pd[i] + thr - 1
		}
		if got, want := firstBelow(row, pd, thr), firstBelowGo(row, pd, thr); got != want {
			t.Fatalf("n=%d: firstBelow = %d, portable %d", n, got, want)
		}
	}
	t.Logf("AVX2 kernel in use: %v", useAVX2)
}
