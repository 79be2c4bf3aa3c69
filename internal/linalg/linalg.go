// Package linalg holds the dense products the rest of dadil spends its
// time in: C = A Bᵀ and the Gram matrix A Aᵀ of row-major matrices.
//
// Every entry is a dot product computed the same way whatever the shape,
// the blocking, the number of goroutines or the CPU: four partial sums in
// lanes t mod 4, accumulated with fused multiply-adds in increasing t,
// reduced as (l0+l2)+(l1+l3), then the k mod 4 trailing terms added with
// fused multiply-adds. On amd64 with AVX2 and FMA a 3×4 register-blocked
// assembly kernel computes that sum 4 lanes at a time; elsewhere (and at
// the edges) math.FMA computes the same values, so results are bit-for-bit
// identical on every path.
package linalg

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

const (
	rowBlock = 48 // rows of C per task (a multiple of 3)
	tileCols = 64 // rows of B kept hot per pass
	parFlops = 1 << 21
	kernRows = 3
	kernCols = 4
)

// dot4 returns Σ a[t]·b[t] over t < len(a) (a multiple of 4) in the
// canonical order: four lanes of fused multiply-adds, reduced as
// (l0+l2)+(l1+l3).
func dot4(a, b []float64) float64 {
	b = b[:len(a)]
	var l0, l1, l2, l3 float64
	for t := 0; t+4 <= len(a); t += 4 {
		l0 = math.FMA(a[t], b[t], l0)
		l1 = math.FMA(a[t+1], b[t+1], l1)
		l2 = math.FMA(a[t+2], b[t+2], l2)
		l3 = math.FMA(a[t+3], b[t+3], l3)
	}
	return (l0 + l2) + (l1 + l3)
}

// dot returns the canonical dot product of a and b (equal lengths).
func dot(a, b []float64) float64 {
	k4 := len(a) &^ 3
	v := dot4(a[:k4], b[:k4])
	for t := k4; t < len(a); t++ {
		v = math.FMA(a[t], b[t], v)
	}
	return v
}

// MulABT sets C = A Bᵀ: C_ij = ⟨a_i, b_j⟩ for the rows of A (m×k) and B
// (n×k). C must be m×n and share no storage with A or B. It panics on
// mismatched shapes.
func MulABT(C, A, B *mat.Dense) {
	m, k := A.Dims()
	n, kb := B.Dims()
	if cr, cc := C.Dims(); kb != k || cr != m || cc != n {
		panic(mat.ErrShape)
	}
	run(C, A, B, m, k, func(i0 int) int { return 0 })
}

// Gram sets G = A Aᵀ for A (m×k); G must be m×m. Only the upper triangle
// is computed; the lower one is its mirror image, so G is exactly
// symmetric.
func Gram(G, A *mat.Dense) {
	m, k := A.Dims()
	if r, c := G.Dims(); r != m || c != m {
		panic(mat.ErrShape)
	}
	run(G, A, A, m, k, func(i0 int) int { return i0 })
	g := G.RawMatrix()
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			g.Data[j*g.Stride+i] = g.Data[i*g.Stride+j]
		}
	}
}

// run computes the row blocks of C, each from column first(i0) on, in
// parallel when the product is large.
func run(C, A, B *mat.Dense, m, k int, first func(i0 int) int) {
	n, _ := B.Dims()
	a, b, c := A.RawMatrix(), B.RawMatrix(), C.RawMatrix()
	blocks := (m + rowBlock - 1) / rowBlock
	work := func(blk int) {
		i0 := blk * rowBlock
		i1 := min(i0+rowBlock, m)
		block(c, a, b, i0, i1, first(i0), n, k)
	}
	workers := runtime.GOMAXPROCS(0)
	if workers == 1 || blocks == 1 || float64(m)*float64(n)*float64(k) < parFlops {
		for blk := 0; blk < blocks; blk++ {
			work(blk)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(workers, blocks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				blk := int(next.Add(1)) - 1
				if blk >= blocks {
					return
				}
				work(blk)
			}
		}()
	}
	wg.Wait()
}

// block computes C_ij for rows i0 ≤ i < i1 and columns j0 ≤ j < n.
func block(c, a, b blas64.General, i0, i1, j0, n, k int) {
	k4 := k &^ 3
	var out [12]float64
	for t0 := j0; t0 < n; t0 += tileCols {
		t1 := min(t0+tileCols, n)
		i := i0
		for ; i+kernRows <= i1; i += kernRows {
			ar := a.Data[i*a.Stride:]
			j := t0
			for ; j+kernCols <= t1; j += kernCols {
				dot3x4(ar, a.Stride, b.Data[j*b.Stride:], b.Stride, k4, &out)
				for r := 0; r < kernRows; r++ {
					arow := a.Data[(i+r)*a.Stride : (i+r)*a.Stride+k]
					crow := c.Data[(i+r)*c.Stride:]
					for s := 0; s < kernCols; s++ {
						v := out[4*r+s]
						if k4 < k {
							brow := b.Data[(j+s)*b.Stride : (j+s)*b.Stride+k]
							for t := k4; t < k; t++ {
								v = math.FMA(arow[t], brow[t], v)
							}
						}
						crow[j+s] = v
					}
				}
			}
			for ; j < t1; j++ {
				brow := b.Data[j*b.Stride : j*b.Stride+k]
				for r := 0; r < kernRows; r++ {
					c.Data[(i+r)*c.Stride+j] = dot(a.Data[(i+r)*a.Stride:(i+r)*a.Stride+k], brow)
				}
			}
		}
		for ; i < i1; i++ {
			arow := a.Data[i*a.Stride : i*a.Stride+k]
			for j := t0; j < t1; j++ {
				c.Data[i*c.Stride+j] = dot(arow, b.Data[j*b.Stride:j*b.Stride+k])
			}
		}
	}
}
