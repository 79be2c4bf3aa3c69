package gmm

import (
	"math"
	"runtime"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
)

// Rows are processed in blocks of blockRows, the unit of parallel work:
// each block's sums are kept apart and added in block order, so that the
// results depend on the number of rows only, never on the number of
// goroutines. Within a block, rows go through the kernels a chunk at a
// time (see chunkSize).
const blockRows = 8192

// chunkSize returns the rows per chunk for K components in d dimensions:
// a multiple of 48 (the row blocks of linalg.MulABT) in [48, 1024], as
// large as keeps the chunk's product below 2²¹ multiply-adds, the size
// under which MulABT runs on the calling goroutine and allocates its
// buffers once.
func chunkSize(K, d int) int {
	c := (1 << 21) / (padComponents(K) * 2 * d) / 48 * 48
	return min(max(c, 48), 1024)
}

// padComponents returns K rounded up to a multiple of 8, the number of
// rows of a scorer's W: the product kernels of internal/linalg take the
// components 4 or 8 at a time, and zero rows are cheaper than the scalar
// edge path.
func padComponents(K int) int { return (K + 7) &^ 7 }

// scorer holds the log-joint of every component as an affine function of
// [z∘z, z], z = x − center:
//
//	log w_k + log N(x; m_k, σ_k²) = ⟨[z∘z, z], W_k⟩ + c_k,
//	W_k = [−1/(2σ_k²), μ_k/σ_k²],
//	c_k = log w_k − Σ_j log σ_kj − (d/2) log 2π − ½ Σ_j μ_kj²/σ_kj²,
//
// with μ_k = m_k − center. Centring keeps the expansion of
// (z − μ)²/σ² accurate when the data sit far from the origin; the K
// dot products of a row are then one matrix product.
type scorer struct {
	K, d   int
	center []float64
	W      *mat.Dense // padComponents(K)×2d, rows past K zero
	c      []float64  // K
}

// newScorer returns the scorer of m around center.
func newScorer(m *Mixture, center []float64) *scorer {
	K, d := m.Components(), m.Dim()
	sc := &scorer{K: K, d: d, center: center, W: mat.NewDense(padComponents(K), 2*d, nil), c: make([]float64, K)}
	half := 0.5 * float64(d) * math.Log(2*math.Pi)
	for k := range K {
		mu, sd, w := m.Means.RawRowView(k), m.Std.RawRowView(k), sc.W.RawRowView(k)
		c := math.Log(m.Weights[k]) - half
		for j := range d {
			v := sd[j] * sd[j]
			u := mu[j] - center[j]
			w[j] = -0.5 / v
			w[d+j] = u / v
			c -= math.Log(sd[j]) + 0.5*u*u/v
		}
		sc.c[k] = c
	}
	return sc
}

// nearestScorer returns a scorer whose largest score over k is the centre
// C_k (rows, already centred) nearest to z: ⟨z, C_k⟩ − ½‖C_k‖².
func nearestScorer(C *mat.Dense, center []float64) *scorer {
	K, d := C.Dims()
	sc := &scorer{K: K, d: d, center: center, W: mat.NewDense(padComponents(K), 2*d, nil), c: make([]float64, K)}
	for k := range K {
		ck := C.RawRowView(k)
		copy(sc.W.RawRowView(k)[d:], ck)
		sc.c[k] = -0.5 * linalg.Dot(ck, ck)
	}
	return sc
}

// engine runs work over the fixed blocks of the rows of X on a bounded
// number of goroutines, each with its own buffers.
type engine struct {
	X       *mat.Dense
	n, d    int
	center  []float64
	procs   int // goroutines allowed
	workers int // goroutines over blocks: min(procs, blocks)
	blocks  int
	K       int          // components of the work buffers
	chunk   int          // rows per chunk of the work buffers
	pool    chan *work   // work buffers not in use
	made    atomic.Int32 // work buffers allocated, at most procs
	// zc, when not nil, holds Z = [z∘z, z] of every row (n×2d, see
	// cacheZ), zcRows its rows.
	zc     *mat.Dense
	zcRows [][]float64
	g      []float64 // responsibilities of a block (passWithin)
}

// zCacheBytes bounds the memory of an engine's cache of Z (cacheZ); a
// variable for the tests.
var zCacheBytes = 64 << 20

// cacheZ computes Z = [z∘z, z], z = x − center, of every row once, when it
// takes at most zCacheBytes, so that the passes of a fit (whose center
// does not change) read it instead of recomputing it chunk by chunk.
func (e *engine) cacheZ() {
	if e.n*2*e.d*8 > zCacheBytes {
		return
	}
	e.zc = mat.NewDense(e.n, 2*e.d, nil)
	e.zcRows = make([][]float64, e.n)
	for i := range e.zcRows {
		e.zcRows[i] = e.zc.RawRowView(i)
	}
	e.forChunks(0, e.n, func(c0, c1 int, _ *work) { fillRows(e.zcRows[c0:c1], e.X, c0, e.center, 0, e.d) })
}

// z returns the rows [c0, c1) of Z (at most a chunk) restricted to the
// features f0 ≤ f < f1 (columns f and d+f; the others are undefined when
// not cached), as a matrix and as row slices: the cache's, or wk's
// buffers filled.
func (e *engine) z(wk *work, c0, c1, f0, f1 int) (*mat.Dense, [][]float64) {
	rows, d2 := c1-c0, 2*e.d
	if e.zc != nil {
		return mat.NewDense(rows, d2, e.zc.RawMatrix().Data[c0*d2:c1*d2]), e.zcRows[c0:c1]
	}
	fillRows(wk.zrows[:rows], e.X, c0, e.center, f0, f1)
	if rows == wk.chunk {
		return wk.Z, wk.zrows
	}
	return mat.NewDense(rows, d2, wk.Z.RawMatrix().Data[:rows*d2]), wk.zrows[:rows]
}

// newEngine returns an engine over the rows of X with buffers for K
// components; workers ≤ 0 means GOMAXPROCS.
func newEngine(X *mat.Dense, center []float64, workers, K int) *engine {
	n, d := X.Dims()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	e := &engine{X: X, n: n, d: d, center: center, procs: workers, blocks: (n + blockRows - 1) / blockRows,
		K: K, chunk: chunkSize(K, d), pool: make(chan *work, workers)}
	e.workers = min(workers, e.blocks)
	return e
}

// take returns work buffers no other goroutine uses, allocating them on
// first need (at most procs sets); give them back with put.
func (e *engine) take() *work {
	select {
	case wk := <-e.pool:
		return wk
	default:
	}
	if e.made.Add(1) <= int32(e.procs) {
		return newWork(e.d, e.K)
	}
	return <-e.pool
}

// put gives back buffers from take.
func (e *engine) put(wk *work) { e.pool <- wk }

// block returns the rows [r0, r1) of block b.
func (e *engine) block(b int) (r0, r1 int) {
	return b * blockRows, min((b+1)*blockRows, e.n)
}

// forBlocks calls fn(b, wk) for every block b, wk being buffers no other
// call uses at the same time.
func (e *engine) forBlocks(fn func(b int, wk *work)) {
	par.ForEach(e.blocks, e.workers, func(b int) {
		wk := e.take()
		fn(b, wk)
		e.put(wk)
	}, nil)
}

// eachBlock calls fn(b) for every block b, in parallel.
func (e *engine) eachBlock(fn func(b int)) { par.ForEach(e.blocks, e.workers, fn, nil) }

// within reports whether work is split within blocks rather than over
// them: when there are fewer blocks than goroutines allowed.
func (e *engine) within() bool { return e.procs > 1 && e.blocks < e.procs }

// forChunks calls fn(c0, c1, wk) for the chunks [c0, c1) of rows r0 ≤ c0
// < c1 ≤ r1, chunk sizes being those of the work buffers, on up to procs
// goroutines.
func (e *engine) forChunks(r0, r1 int, fn func(c0, c1 int, wk *work)) {
	par.ForEach((r1-r0+e.chunk-1)/e.chunk, e.procs, func(c int) {
		wk := e.take()
		c0 := r0 + c*e.chunk
		fn(c0, min(c0+e.chunk, r1), wk)
		e.put(wk)
	}, nil)
}

// work holds one goroutine's buffers for a chunk of rows: Z = [z∘z, z]
// (chunk×2d), the scores L (chunk×padComponents(K), columns past K
// unused), the responsibilities by component rT (K×chunk), a row of
// probabilities, and the rows of Z as slices.
type work struct {
	K, d  int
	chunk int // rows per chunk
	Z, L  *mat.Dense
	rT    []float64
	prob  []float64
	zrows [][]float64
	ztile [][]float64 // column slices of rows of Z (addSums)
	zall  [][]float64 // the same for every row of a chunk
	// nz[k] and wz[k] list the rows of a chunk whose responsibility of
	// component k is not 0, and those responsibilities, or nz[k] is nil
	// when there is no 0 (addSums); they live in nzBuf and wzBuf (K×chunk).
	nz    [][]int
	wz    [][]float64
	nzBuf []int
	wzBuf []float64
}

func newWork(d, K int) *work {
	c := chunkSize(K, d)
	wk := &work{K: K, d: d, chunk: c, Z: mat.NewDense(c, 2*d, nil), L: mat.NewDense(c, padComponents(K), nil),
		rT: make([]float64, K*c), prob: make([]float64, K), zrows: make([][]float64, c),
		ztile: make([][]float64, c), zall: make([][]float64, c), nz: make([][]int, K), wz: make([][]float64, K),
		nzBuf: make([]int, K*c), wzBuf: make([]float64, K*c)}
	for i := range wk.zrows {
		wk.zrows[i] = wk.Z.RawRowView(i)
	}
	return wk
}

// fillRows sets the columns of the features f0 ≤ f < f1 of the rows dst
// of Z, z∘z and z for z = x − center, from the rows c0, c0+1, … of r.
func fillRows(dst [][]float64, X *mat.Dense, c0 int, center []float64, f0, f1 int) {
	c := center[f0:f1]
	for i, z := range dst {
		d := len(z) / 2
		x := X.RawRowView(c0 + i)[f0:f1]
		sq, lin := z[f0:f1], z[d+f0:d+f1]
		for j, v := range x[:len(c)] {
			u := v - c[j]
			sq[j] = u * u
			lin[j] = u
		}
	}
}

// score returns the scores under sc of the rows [c0, c1) of e (at most a
// chunk): row i of L, cut to its first K entries, holds the K scores of
// row c0+i. It also returns the rows of Z. sc must be centred on e.center.
func (e *engine) score(wk *work, c0, c1 int, sc *scorer) (*mat.Dense, [][]float64) {
	rows := c1 - c0
	Z, zr := e.z(wk, c0, c1, 0, e.d)
	L := wk.L
	if rows < wk.chunk {
		kp := padComponents(wk.K)
		L = mat.NewDense(rows, kp, wk.L.RawMatrix().Data[:rows*kp])
	}
	linalg.MulABT(L, Z, sc.W)
	for i := range rows {
		l := L.RawRowView(i)
		for k, c := range sc.c {
			l[k] += c
		}
	}
	return L, zr
}
