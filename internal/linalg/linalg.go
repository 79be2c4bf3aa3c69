// Package linalg holds the dense kernels the rest of dadil spends its
// time in: C = A Bᵀ and the Gram matrices A Aᵀ and AᵀA of row-major
// matrices, single dot products, and sums of scaled rows; and
// TopEigenSym, the leading eigenpairs of a symmetric matrix without
// forming the other eigenvectors.
//
// Every entry is a dot product computed the same way whatever the shape,
// the blocking, the number of goroutines or the CPU: four partial sums in
// lanes t mod 4, accumulated with fused multiply-adds in increasing t,
// reduced as (l0+l2)+(l1+l3), then the k mod 4 trailing terms added with
// fused multiply-adds. On amd64 with AVX2 and FMA a 3×4 register-blocked
// assembly kernel computes that sum 4 lanes at a time, with AVX-512 a 6×8
// one the lanes of two sums per register; elsewhere (and at the edges)
// math.FMA computes the same values, so results are bit-for-bit identical
// on every path.
package linalg

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

const (
	rowBlock = 48 // rows of C per task (a multiple of every kernel's rows)
	tileCols = 64 // rows of B kept hot per pass (a multiple of every kernel's columns)
	parFlops = 1 << 21
)

// kernel is a register-blocked dot-product kernel. acc(a, lda, b, ldb, k4,
// lanes, init, out, ldc) advances, over t < k4 (a multiple of 4), the dot
// products of rows r < rows of a (stride lda) with rows s < cols of b
// (stride ldb), each kept in four lanes: lane t mod 4, fused multiply-adds
// in increasing t. The lanes of row r against row s live at
// lanes[4(cols·r+s) : 4(cols·r+s)+4] between calls, so that a dot product
// can be computed over consecutive slices of k; with init they start at
// zero. Reduced as (l0+l2)+(l1+l3) after the last slice, they give the dot
// products exactly as dot4 would: with out ≠ nil the kernel does that
// itself, writing the dot product of rows r and s to out[r·ldc+s] (and
// lanes is then left undefined).
type kernel struct {
	name       string // the instruction set, for KernelName
	rows, cols int
	acc        func(a []float64, lda int, b []float64, ldb int, k4 int, lanes []float64, init bool, out []float64, ldc int)
}

// portableKernel is the kernel without assembly.
var portableKernel = kernel{name: "portable", rows: 3, cols: 4, acc: dotAccGo3x4}

// storeReduced writes the reduced lanes of a rows×cols kernel block to out
// (row stride ldc).
func storeReduced(out []float64, ldc int, lanes []float64, rows, cols int) {
	for r := 0; r < rows; r++ {
		row := out[r*ldc : r*ldc+cols]
		l := lanes[4*cols*r : 4*cols*(r+1)]
		for s := range row {
			row[s] = (l[4*s] + l[4*s+2]) + (l[4*s+1] + l[4*s+3])
		}
	}
}

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

// Dot returns ⟨a, b⟩ computed as every entry of MulABT and Gram is, so
// that it equals the corresponding entry bit for bit. b must be at least
// as long as a.
func Dot(a, b []float64) float64 {
	if len(b) < len(a) {
		panic(mat.ErrShape)
	}
	return dot(a, b[:len(a)])
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
	// Mirror the upper triangle in square tiles, so that the strided
	// writes stay within a few cache lines.
	const tile = 32
	g := G.RawMatrix()
	for i0 := 0; i0 < m; i0 += tile {
		for j0 := i0; j0 < m; j0 += tile {
			for i := i0; i < min(i0+tile, m); i++ {
				src := g.Data[i*g.Stride:]
				for j := max(j0, i+1); j < min(j0+tile, m); j++ {
					g.Data[j*g.Stride+i] = src[j]
				}
			}
		}
	}
}

// Rows returns a copy of the rows idx of X, in that order; idx must not
// be empty.
func Rows(X *mat.Dense, idx []int) *mat.Dense {
	_, d := X.Dims()
	out := mat.NewDense(len(idx), d, nil)
	for i, r := range idx {
		copy(out.RawRowView(i), X.RawRowView(r))
	}
	return out
}

// GramCols sets G = AᵀA for A (m×k); G must be k×k. It is computed by
// blocks of 1024 rows of A, each transposed and passed to Gram, so that it
// runs on the same kernel with little extra memory; G is exactly
// symmetric.
func GramCols(G, A *mat.Dense) {
	m, k := A.Dims()
	if r, c := G.Dims(); r != k || c != k {
		panic(mat.ErrShape)
	}
	const block = 1024
	G.Zero()
	part := mat.NewDense(k, k, nil)
	for i0 := 0; i0 < m; i0 += block {
		i1 := min(i0+block, m)
		T := mat.DenseCopyOf(A.Slice(i0, i1, 0, k).T())
		Gram(part, T)
		G.Add(G, part)
	}
}

// AddScaledRows adds Σ_t w[t]·xs[t] to dst, term by term:
//
//	dst[i] = (…((dst[i] + w[0]·xs[0][i]) + w[1]·xs[1][i]) + …) + w[T−1]·xs[T−1][i],
//
// every product and sum rounded on its own, which are the values of T
// successive floats.AddScaled calls, with one pass over dst. Every xs[t]
// must be at least as long as dst, and w at least as long as xs.
func AddScaledRows(dst, w []float64, xs [][]float64) {
	if len(w) < len(xs) {
		panic("linalg: fewer weights than rows")
	}
	for _, x := range xs {
		if len(x) < len(dst) {
			panic(mat.ErrShape)
		}
	}
	addScaledRows(dst, w, xs)
}

// AddScaledRows4 makes four AddScaledRows calls at once, one for every
// dst[j], with the weights interleaved: w[4t+j] weighs xs[t] in dst[j].
// Each dst[j] gets the values its own call would give, bit for bit; the
// rows are read once for the four. The dst[j] must have the same length,
// every xs[t] be at least as long, and w hold 4·len(xs) weights.
func AddScaledRows4(dst *[4][]float64, w []float64, xs [][]float64) {
	n := len(dst[0])
	for _, d := range dst {
		if len(d) != n {
			panic(mat.ErrShape)
		}
	}
	if len(w) < 4*len(xs) {
		panic("linalg: fewer weights than rows")
	}
	for _, x := range xs {
		if len(x) < n {
			panic(mat.ErrShape)
		}
	}
	addScaledRows4(dst, w, xs)
}

// SqDists sets dst[t] = max(0, ‖a‖² + ‖b_t‖² − 2⟨a, b_t⟩), squared
// distances from a point a to points b_t given norm = ‖a‖², norms[t] =
// ‖b_t‖² and dots[t] = ⟨a, b_t⟩ (computed as (norms[t] + norm) − 2·dots[t],
// negatives from rounding set to 0, NaN left as it is), and returns the
// largest of them (NaNs ignored; 0 when there is none larger). norms and
// dots must be at least as long as dst.
func SqDists(dst, norms, dots []float64, norm float64) float64 {
	if len(norms) < len(dst) || len(dots) < len(dst) {
		panic(mat.ErrShape)
	}
	return sqDists(dst, norms, dots, norm)
}

// sqDistsGo is the portable SqDists for the entries of dst from index from
// on, its maximum taken from m.
func sqDistsGo(dst, norms, dots []float64, norm float64, from int, m float64) float64 {
	for t := from; t < len(dst); t++ {
		v := norms[t] + norm - 2*dots[t]
		if v < 0 {
			v = 0
		}
		dst[t] = v
		if v > m {
			m = v
		}
	}
	return m
}

// AddClamped adds c to every entry of dst and sets the negative results
// (from rounding) to 0, leaving NaN as it is.
func AddClamped(dst []float64, c float64) { addClamped(dst, c) }

// addClampedGo is the portable AddClamped for the entries of dst from
// index from on.
func addClampedGo(dst []float64, c float64, from int) {
	for t := from; t < len(dst); t++ {
		v := dst[t] + c
		if v < 0 {
			v = 0
		}
		dst[t] = v
	}
}

// FirstNonFinite returns the index of the first NaN or infinite entry of
// x, or −1 if every entry is finite.
func FirstNonFinite(x []float64) int { return firstAbove(x, math.MaxFloat64) }

// FirstAbove returns the index of the first entry of x that is NaN or
// larger than bound in absolute value, or −1 if there is none.
func FirstAbove(x []float64, bound float64) int { return firstAbove(x, bound) }

// firstAboveGo is the portable FirstAbove from index from on.
func firstAboveGo(x []float64, bound float64, from int) int {
	for i := from; i < len(x); i++ {
		// One comparison: false for NaN.
		if v := x[i]; !(v >= -bound && v <= bound) {
			return i
		}
	}
	return -1
}

// addScaledRowsGo is the portable AddScaledRows, for the entries of dst
// from index from on.
func addScaledRowsGo(dst, w []float64, xs [][]float64, from int) {
	for i := from; i < len(dst); i++ {
		v := dst[i]
		for t, x := range xs {
			v += float64(w[t] * x[i])
		}
		dst[i] = v
	}
}

// addScaledRows4Go is the portable AddScaledRows4, for the entries of
// every dst[j] from index from on.
func addScaledRows4Go(dst *[4][]float64, w []float64, xs [][]float64, from int) {
	for j, d := range dst {
		for i := from; i < len(d); i++ {
			v := d[i]
			for t, x := range xs {
				v += float64(w[4*t+j] * x[i])
			}
			d[i] = v
		}
	}
}

// run computes the row blocks of C, each from column first(i0) on, in
// parallel when the product is large.
func run(C, A, B *mat.Dense, m, k int, first func(i0 int) int) {
	n, _ := B.Dims()
	a, b, c := A.RawMatrix(), B.RawMatrix(), C.RawMatrix()
	blocks := (m + rowBlock - 1) / rowBlock
	kern := dotKernel()
	// Lane accumulators of every kernel block of a row block × column
	// tile, the last row group possibly padded.
	groups := (min(rowBlock, m) + kern.rows - 1) / kern.rows
	accLen := groups * (min(tileCols, n) / kern.cols) * 4 * kern.rows * kern.cols
	work := func(blk int, sc *scratch) {
		i0 := blk * rowBlock
		i1 := min(i0+rowBlock, m)
		block(c, a, b, i0, i1, first(i0), n, k, kern, sc)
	}
	newScratch := func() *scratch { return getScratch(accLen, kern.rows*k) }
	workers := runtime.GOMAXPROCS(0)
	if workers == 1 || blocks == 1 || float64(m)*float64(n)*float64(k) < parFlops {
		sc := newScratch()
		for blk := 0; blk < blocks; blk++ {
			work(blk, sc)
		}
		scratchPool.Put(sc)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(workers, blocks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := newScratch()
			defer scratchPool.Put(sc)
			for {
				blk := int(next.Add(1)) - 1
				if blk >= blocks {
					return
				}
				work(blk, sc)
			}
		}()
	}
	wg.Wait()
}

// scratch is a worker's buffers: the lane accumulators of a row block ×
// column tile, and a row group padded with zero rows.
type scratch struct {
	acc, pad []float64
}

// scratchPool recycles the buffers of products, which the many small
// products of a loop (EM's chunks) would otherwise allocate each time.
// Their contents never carry over: the kernels start the lanes at zero
// (init) and the padded group is cleared before use.
var scratchPool sync.Pool

// getScratch returns a scratch with acc and pad of the given lengths.
func getScratch(accLen, padLen int) *scratch {
	sc, _ := scratchPool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	if cap(sc.acc) < accLen {
		sc.acc = make([]float64, accLen)
	}
	if cap(sc.pad) < padLen {
		sc.pad = make([]float64, padLen)
	}
	sc.acc, sc.pad = sc.acc[:accLen], sc.pad[:padLen]
	return sc
}

// kBlock is the length of the slices of k over which the kernel blocks of
// a column tile are advanced in turn, so that the kernel's rows of A stay
// in the L1 cache while it runs over the tile's rows of B. Lane
// accumulators carry over between slices, so the sums are those of one
// pass.
const kBlock = 256

// block computes C_ij for rows i0 ≤ i < i1 and columns j0 ≤ j < n. Rows go
// through the kernel kern.rows at a time; the rows left over are copied
// into a group padded with zero rows (sc.pad), whose extra products are
// discarded. Columns go through it kern.cols at a time; those left over at
// the end of the last tile are single dot products. When k is a multiple
// of 4 the kernel writes its full row groups to C on the last slice of k;
// otherwise (and for the padded group) the lanes are reduced here and the
// trailing k mod 4 terms added.
func block(c, a, b blas64.General, i0, i1, j0, n, k int, kern kernel, sc *scratch) {
	kr, kc := kern.rows, kern.cols
	k4 := k &^ 3
	r1 := i0 + (i1-i0)/kr*kr // end of the full row groups
	end := r1                // end of the rows of all groups
	if r1 < i1 {
		pad := sc.pad[:kr*k]
		clear(pad)
		for i := r1; i < i1; i++ {
			copy(pad[(i-r1)*k:(i-r1+1)*k], a.Data[i*a.Stride:i*a.Stride+k])
		}
		end = r1 + kr
	}
	// rowsOf returns the storage and stride of the group starting at i.
	rowsOf := func(i int) ([]float64, int) {
		if i < r1 {
			return a.Data[i*a.Stride:], a.Stride
		}
		return sc.pad, k
	}
	// direct: the kernel writes the full row groups to C itself.
	direct := k4 == k
	reduceFrom := i0 // the first group whose lanes are reduced below
	if direct {
		reduceFrom = r1
	}
	blockLen := 4 * kr * kc // lanes of one kernel block
	acc := sc.acc
	for t0 := j0; t0 < n; t0 += tileCols {
		t1 := min(t0+tileCols, n)
		q1 := t0 + (t1-t0)/kc*kc // end of the full column groups
		for k0 := 0; k0 == 0 || k0 < k4; k0 += kBlock {
			kl := min(kBlock, k4-k0)
			last := k0+kl >= k4
			slot := 0
			for i := i0; i < end; i += kr {
				ad, lda := rowsOf(i)
				ar := ad[k0:]
				for j := t0; j < q1; j += kc {
					var out []float64
					if direct && last && i < r1 {
						out = c.Data[i*c.Stride+j:]
					}
					kern.acc(ar, lda, b.Data[j*b.Stride+k0:], b.Stride, kl, acc[slot:slot+blockLen], k0 == 0, out, c.Stride)
					slot += blockLen
				}
			}
		}
		slot := (reduceFrom - i0) / kr * ((q1 - t0) / kc) * blockLen
		for i := i0; i < end; i += kr {
			ad, lda := rowsOf(i)
			rows := min(kr, i1-i)
			if i >= reduceFrom {
				for j := t0; j < q1; j += kc {
					storeReduced(c.Data[i*c.Stride+j:], c.Stride, acc[slot:slot+blockLen], rows, kc)
					slot += blockLen
					// The k mod 4 trailing terms, fused in order after the lanes.
					for r := 0; r < rows && k4 < k; r++ {
						arow := ad[r*lda : r*lda+k]
						crow := c.Data[(i+r)*c.Stride+j : (i+r)*c.Stride+j+kc]
						for s := range crow {
							brow := b.Data[(j+s)*b.Stride : (j+s)*b.Stride+k]
							v := crow[s]
							for t := k4; t < k; t++ {
								v = math.FMA(arow[t], brow[t], v)
							}
							crow[s] = v
						}
					}
				}
			}
			for j := q1; j < t1; j++ {
				brow := b.Data[j*b.Stride : j*b.Stride+k]
				for r := 0; r < rows; r++ {
					c.Data[(i+r)*c.Stride+j] = dot(ad[r*lda:r*lda+k], brow)
				}
			}
		}
	}
}

// dotAccGo3x4 is the portable 3×4 kernel: the same lanes, fused
// multiply-adds and order as the assembly kernels.
func dotAccGo3x4(a []float64, lda int, b []float64, ldb int, k4 int, acc []float64, init bool, out []float64, ldc int) {
	const rows, cols = 3, 4
	if init {
		clear(acc[:4*rows*cols])
	}
	for r := 0; r < rows; r++ {
		ar := a[r*lda : r*lda+k4]
		for s := 0; s < cols; s++ {
			br := b[s*ldb : s*ldb+k4]
			l := acc[4*(cols*r+s) : 4*(cols*r+s)+4]
			l0, l1, l2, l3 := l[0], l[1], l[2], l[3]
			for t := 0; t+4 <= k4; t += 4 {
				l0 = math.FMA(ar[t], br[t], l0)
				l1 = math.FMA(ar[t+1], br[t+1], l1)
				l2 = math.FMA(ar[t+2], br[t+2], l2)
				l3 = math.FMA(ar[t+3], br[t+3], l3)
			}
			l[0], l[1], l[2], l[3] = l0, l1, l2, l3
		}
	}
	if out != nil {
		storeReduced(out, ldc, acc, rows, cols)
	}
}

// KernelName names the dot-product kernel MulABT and Gram run on this
// machine: "AVX-512 6×8", "AVX2 3×4" or "portable 3×4". All give the same
// bits; only their speed differs.
func KernelName() string {
	k := dotKernel()
	return fmt.Sprintf("%s %d×%d", k.name, k.rows, k.cols)
}

// FirstNonFiniteEntry is FirstNonFinite for the rows of A: the position of
// the first NaN or infinite entry in row-major order and false, or true
// when every entry is finite.
func FirstNonFiniteEntry(A *mat.Dense) (i, j int, ok bool) {
	return FirstEntryAbove(A, math.MaxFloat64)
}

// FirstEntryAbove is FirstAbove for a matrix: it returns the row and
// column of the first entry of A, in row-major order, that is NaN or
// larger than bound in absolute value, and ok = false; or ok = true if
// there is none.
func FirstEntryAbove(A *mat.Dense, bound float64) (i, j int, ok bool) {
	r, _ := A.Dims()
	for i := 0; i < r; i++ {
		if j := firstAbove(A.RawRowView(i), bound); j >= 0 {
			return i, j, false
		}
	}
	return 0, 0, true
}

// SimplexTol is the tolerance on the sum of a vector of weights (such as
// barycentric coordinates α) on the probability simplex.
const SimplexTol = 1e-9

// OnSimplex reports whether x lies on the probability simplex: every entry
// a finite non-negative number and |Σx − 1| ≤ tol. When it does not, bad
// is the index of the first entry that is negative, NaN or infinite (−1 if
// none) and sum is Σx, for the caller's message.
func OnSimplex(x []float64, tol float64) (ok bool, bad int, sum float64) {
	for k, v := range x {
		if !(v >= 0) || math.IsInf(v, 1) {
			return false, k, math.NaN()
		}
		sum += v
	}
	return math.Abs(sum-1) <= tol, -1, sum
}

// Centre subtracts from v the mean of its entries: its projection onto the
// hyperplane Σv = 0, the tangent space of the probability simplex, in which
// a gradient with respect to barycentric coordinates moves them.
func Centre(v []float64) {
	var mean float64
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for i := range v {
		v[i] -= mean
	}
}

// Softmax sets dst to softmax(z): dst_j = exp(z_j − max z) / Σ_q exp(z_q − max z).
// dst and z have the same length and may be the same slice.
func Softmax(dst, z []float64) {
	mx := math.Inf(-1)
	for _, v := range z {
		mx = math.Max(mx, v)
	}
	var s float64
	for j, v := range z {
		dst[j] = math.Exp(v - mx)
		s += dst[j]
	}
	for j := range dst {
		dst[j] /= s
	}
}
