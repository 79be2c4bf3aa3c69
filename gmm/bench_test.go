package gmm

import (
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Benchmarks on 1,000,000 rows × 64 features drawn from 20 components,
// generated once (docs/gmm.md has the numbers):
//
//	go test -run '^$' -bench EM -benchmem -benchtime 5x ./gmm
//	GOMAXPROCS=1 go test -run '^$' -bench EM -benchmem -benchtime 5x ./gmm
const (
	benchRows       = 1_000_000
	benchDim        = 64
	benchComponents = 20
)

var benchData = sync.OnceValue(func() *mat.Dense { return sampleRandom(benchRows, benchDim, benchComponents, 1) })

// sampleRandom returns n rows drawn from a random mixture of K components
// in d dimensions, the mixture drawn with seed and the rows with seed+1.
func sampleRandom(n, d, K int, seed uint64) *mat.Dense {
	truth := randMixture(rand.New(rand.NewPCG(seed, seed)), K, d, 0, 4, false)
	X := mat.NewDense(n, d, nil)
	if _, err := truth.Sample(X, rand.New(rand.NewPCG(seed+1, seed+1))); err != nil {
		panic(err)
	}
	return X
}

// BenchmarkEMIteration times one EM iteration (the M-step of the previous
// statistics and one pass over the rows: scores, responsibilities and the
// next statistics), buffers allocated once.
func BenchmarkEMIteration(b *testing.B) {
	X := benchData()
	p := prepare(X, 0, DefaultVarFloor)
	e := newEngine(X, p.mean, 0, benchComponents)
	seeds := e.kmeansPP(benchComponents, rand.New(rand.NewPCG(1, benchComponents)))
	st := newStats(e.blocks, benchComponents, benchDim)
	e.pass(st, nearestScorer(seeds, p.mean), true)
	mix := p.mstep(st, nil, seeds)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		mix = p.mstep(st, mix, nil)
		e.pass(st, newScorer(mix, p.mean), false)
	}
}

// BenchmarkEMFit times Fit with 20 components and 10 iterations, the
// k-means++ start included.
func BenchmarkEMFit(b *testing.B) {
	X := benchData()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Fit(X, &Settings{Components: benchComponents, MaxIter: 10, Tol: 1e-300, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// The shape of a CWRU target domain in GMM-DaDiL: 1800 rows × 1024
// features, 27 components, fewer rows than one block.
const (
	wideRows       = 1800
	wideDim        = 1024
	wideComponents = 27
)

var wideData = sync.OnceValue(func() *mat.Dense { return sampleRandom(wideRows, wideDim, wideComponents, 3) })

// BenchmarkEMFitWide times Fit on wideData with 27 components and 10
// iterations, the k-means++ start included.
func BenchmarkEMFitWide(b *testing.B) {
	X := wideData()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Fit(X, &Settings{Components: wideComponents, MaxIter: 10, Tol: 1e-300, VarFloor: 0.1, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
