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
// the rows r0 ≤ i < r1, each summed over the features in order. Rows of
// the cache go four at a time (nearer4): four independent sums, each in
// the same order as one row's.
func (e *engine) nearer(D []float64, r0, r1 int, c []float64) {
	i := r0
	if e.zc != nil {
		d := e.d
		for ; i+4 <= r1; i += 4 {
			z := e.zcRows[i : i+4]
			s0, s1, s2, s3 := nearer4(z[0][d:], z[1][d:], z[2][d:], z[3][d:], c)
			D[i], D[i+1], D[i+2], D[i+3] = min(D[i], s0), min(D[i+1], s1), min(D[i+2], s2), min(D[i+3], s3)
		}
	}
	for ; i < r1; i++ {
		var dist float64
		if e.zc != nil {
			for j, v := range e.zcRows[i][e.d:] { // x − center
				u := v - c[j]
				dist += u * u
			}
		} else {
			for j, v := range e.X.RawRowView(i) {
				u := v - e.center[j] - c[j]
				dist += u * u
			}
		}
		D[i] = min(D[i], dist)
	}
}

// nearer4 returns ‖a − c‖², ‖b − c‖², ‖x − c‖² and ‖y − c‖², each summed
// over the entries in order.
func nearer4(a, b, x, y, c []float64) (s0, s1, s2, s3 float64) {
	a, b, x, y = a[:len(c)], b[:len(c)], x[:len(c)], y[:len(c)]
	for j, v := range c {
		u0, u1, u2, u3 := a[j]-v, b[j]-v, x[j]-v, y[j]-v
		s0 += u0 * u0
		s1 += u1 * u1
		s2 += u2 * u2
		s3 += u3 * u3
	}
	return s0, s1, s2, s3
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
