package gmm

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// kmeansPP returns K seeds chosen by k-means++ (Arthur & Vassilvitskii
// 2007), as rows centred on e.center: the first row uniformly, each next
// one with probability proportional to D(x)², its squared distance to the
// nearest seed so far. When every row is already a seed (D ≡ 0) the next
// is drawn uniformly. The distances of each block are summed in row order
// and the blocks in block order, so the draw does not depend on the number
// of goroutines.
func (e *engine) kmeansPP(K int, rng *rand.Rand) *mat.Dense {
	C := mat.NewDense(K, e.d, nil)
	D := make([]float64, e.n)
	for i := range D {
		D[i] = math.Inf(1)
	}
	bsum := make([]float64, e.blocks)
	pick := rng.IntN(e.n)
	for k := range K {
		c := C.RawRowView(k)
		for j, v := range e.X.RawRowView(pick) {
			c[j] = v - e.center[j]
		}
		if k == K-1 {
			break
		}
		e.forBlocks(func(b int, _ *work) { bsum[b] = e.nearer(D, b, c) })
		pick = drawD2(D, bsum, rng, e)
	}
	return C
}

// nearer lowers D_i to the squared distance of row i (centred) to c for
// the rows of block b, and returns the block's Σ D_i in row order.
func (e *engine) nearer(D []float64, b int, c []float64) float64 {
	r0, r1 := e.block(b)
	var s float64
	for i := r0; i < r1; i++ {
		var dist float64
		for j, v := range e.X.RawRowView(i) {
			u := v - e.center[j] - c[j]
			dist += u * u
		}
		D[i] = min(D[i], dist)
		s += D[i]
	}
	return s
}

// drawD2 draws a row with probability D_i / Σ D.
func drawD2(D, bsum []float64, rng *rand.Rand, e *engine) int {
	var total float64
	for _, v := range bsum {
		total += v
	}
	if !(total > 0) || math.IsInf(total, 1) {
		return rng.IntN(e.n)
	}
	u := rng.Float64() * total
	b := 0
	for b < len(bsum)-1 && u >= bsum[b] {
		u -= bsum[b]
		b++
	}
	r0, r1 := e.block(b)
	last := -1
	var s float64
	for i := r0; i < r1; i++ {
		if D[i] > 0 {
			last = i
		}
		s += D[i]
		if s > u && D[i] > 0 {
			return i
		}
	}
	if last < 0 {
		return rng.IntN(e.n)
	}
	return last
}
