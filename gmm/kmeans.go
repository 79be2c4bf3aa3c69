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
		for j, v := range e.rows.row(pick) {
			c[j] = v - e.center[j]
		}
		if k == K-1 {
			break
		}
		if e.within() {
			for b := range e.blocks {
				r0, r1 := e.block(b)
				e.forChunks(r0, r1, func(c0, c1 int, _ *work) { e.nearer(D, c0, c1, c) })
				bsum[b] = sumRange(D, r0, r1)
			}
		} else {
			e.eachBlock(func(b int) {
				r0, r1 := e.block(b)
				e.nearer(D, r0, r1, c)
				bsum[b] = sumRange(D, r0, r1)
			})
		}
		pick = drawD2(D, bsum, rng, e)
	}
	return C
}

// nearer lowers D_i to the squared distance of row i (centred) to c for
// the rows r0 ≤ i < r1. Each distance is summed over the features in
// order; four rows go through the features together, so that their sums
// proceed side by side.
func (e *engine) nearer(D []float64, r0, r1 int, c []float64) {
	i := r0
	for ; i+4 <= r1; i += 4 {
		x0, x1, x2, x3 := e.centred(i), e.centred(i+1), e.centred(i+2), e.centred(i+3)
		x0, x1, x2, x3 = x0[:len(c)], x1[:len(c)], x2[:len(c)], x3[:len(c)]
		var s0, s1, s2, s3 float64
		if e.zc != nil {
			for j, cj := range c {
				u0, u1, u2, u3 := x0[j]-cj, x1[j]-cj, x2[j]-cj, x3[j]-cj
				s0, s1, s2, s3 = s0+u0*u0, s1+u1*u1, s2+u2*u2, s3+u3*u3
			}
		} else {
			m := e.center[:len(c)]
			for j, cj := range c {
				u0, u1, u2, u3 := x0[j]-m[j]-cj, x1[j]-m[j]-cj, x2[j]-m[j]-cj, x3[j]-m[j]-cj
				s0, s1, s2, s3 = s0+u0*u0, s1+u1*u1, s2+u2*u2, s3+u3*u3
			}
		}
		D[i], D[i+1], D[i+2], D[i+3] = min(D[i], s0), min(D[i+1], s1), min(D[i+2], s2), min(D[i+3], s3)
	}
	for ; i < r1; i++ {
		var s float64
		for j, v := range e.centred(i)[:len(c)] {
			if e.zc == nil {
				v -= e.center[j]
			}
			u := v - c[j]
			s += u * u
		}
		D[i] = min(D[i], s)
	}
}

// centred returns row i minus the center (the columns d… of the cache of
// Z) when Z is cached, else row i itself.
func (e *engine) centred(i int) []float64 {
	if e.zc != nil {
		return e.zcRows[i][e.d:]
	}
	return e.rows.row(i)
}

// sumRange returns Σ D_i over r0 ≤ i < r1, in row order.
func sumRange(D []float64, r0, r1 int) float64 {
	var s float64
	for _, v := range D[r0:r1] {
		s += v
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
