package mlp

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkEpoch(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	X, y := blobs(rng, 400, 9, 2048, 2)
	for b.Loop() {
		Train(X, y, 9, &Settings{Epochs: 1, Seed: 1})
	}
}
