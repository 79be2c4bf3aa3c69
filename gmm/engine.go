package gmm

import (
	"math"
	"runtime"

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
	workers int
	blocks  int
	pool    chan *work
}

// newEngine returns an engine over X with buffers for K components;
// workers ≤ 0 means GOMAXPROCS.
func newEngine(X *mat.Dense, center []float64, workers, K int) *engine {
	n, d := X.Dims()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	e := &engine{X: X, n: n, d: d, center: center, blocks: (n + blockRows - 1) / blockRows}
	e.workers = min(workers, e.blocks)
	e.pool = make(chan *work, e.workers)
	for range e.workers {
		e.pool <- newWork(d, K)
	}
	return e
}

// block returns the rows [r0, r1) of block b.
func (e *engine) block(b int) (r0, r1 int) {
	return b * blockRows, min((b+1)*blockRows, e.n)
}

// forBlocks calls fn(b, wk) for every block b, wk being buffers no other
// call uses at the same time.
func (e *engine) forBlocks(fn func(b int, wk *work)) {
	par.ForEach(e.blocks, e.workers, func(b int) {
		wk := <-e.pool
		fn(b, wk)
		e.pool <- wk
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
}

func newWork(d, K int) *work {
	c := chunkSize(K, d)
	wk := &work{K: K, d: d, chunk: c, Z: mat.NewDense(c, 2*d, nil), L: mat.NewDense(c, padComponents(K), nil),
		rT: make([]float64, K*c), prob: make([]float64, K), zrows: make([][]float64, c)}
	for i := range wk.zrows {
		wk.zrows[i] = wk.Z.RawRowView(i)
	}
	return wk
}

// score fills Z with the rows [c0, c1) of X (at most wk.chunk) and
// returns their scores under sc: row i of L, cut to its first K entries,
// holds the K scores of row c0+i.
func (wk *work) score(X *mat.Dense, c0, c1 int, sc *scorer) *mat.Dense {
	rows, d := c1-c0, wk.d
	for i := range rows {
		x, z := X.RawRowView(c0+i), wk.zrows[i]
		for j, v := range x {
			u := v - sc.center[j]
			z[j] = u * u
			z[d+j] = u
		}
	}
	Z, L := wk.Z, wk.L
	if rows < wk.chunk {
		Z = mat.NewDense(rows, 2*d, wk.Z.RawMatrix().Data[:rows*2*d])
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
	return L
}
