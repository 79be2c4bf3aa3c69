package mlp

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkTrainEpoch times one epoch of the CWRU encoder's training: the
// paper's 2048 → 1024 → 512 → 256 → 9 network, mini-batches of 128, on 3600
// rows (a quarter of the 14400 source windows of one CWRU target). It
// reports rows per second; an epoch of the benchmark takes 14400 / that.
func BenchmarkTrainEpoch(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	X, y := blobs(rng, 400, 9, 2048, 2)
	rows, _ := X.Dims()
	for b.Loop() {
		if _, err := Train(X, y, 9, &Settings{Epochs: 1, Batch: 128, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
