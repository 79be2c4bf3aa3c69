package classify

import (
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// blockRows is the number of samples in one block of the fixed row
// partition used by the objective. Blocks are the unit of parallel work and
// of the ordered reduction that makes results independent of Workers.
const blockRows = 256

// maxBlocks caps the number of blocks (and so the memory held by per-block
// gradients); beyond maxBlocks·blockRows samples the blocks grow.
const maxBlocks = 64

// objective evaluates the training loss
//
//	L(W, b) = (1/S) Σ_i s_i CE(t_i, softmax(W x_i + b)) + λ‖W‖²_F
//
// and its gradient at a parameter vector θ = [vec(W) (row-major, c×d); b].
//
// An evaluation has two passes over fixed blocks of rows. The first
// (loss) computes the logits, the per-sample losses and the residuals
// r_i = s_i (p_i τ_i − t_i), τ_i = Σ_k t_ik, kept in res. The second (grad) accumulates
// Σ_i r_i x_iᵀ and Σ_i r_i per block; the block sums are then added in block
// order. Each block is always processed by one goroutine with the same
// arithmetic, so the value and gradient are bit-identical for any number of
// workers. The optimiser asks for the value before the gradient at a point,
// so the second pass only runs when the gradient is needed.
type objective struct {
	n, d, c int
	x       []float64 // n×d, row stride ldx
	ldx     int
	t       []float64 // n×c soft targets, row stride ldt; nil when labels is used
	ldt     int
	labels  []int     // class indices; nil when t is used
	w       []float64 // sample weights; nil means all 1
	invS    float64   // 1 / Σ_i s_i
	lambda  float64
	workers int

	bounds []int // block b holds rows bounds[b] to bounds[b+1]

	// State of the last loss pass.
	theta  []float64 // parameters of the last loss pass
	valid  bool      // theta, res and f are current
	f      float64   // objective value at theta
	res    []float64 // n×c residuals r_i
	blockF []float64 // per-block Σ_i s_i CE_i

	blockG [][]float64 // per-block gradient sums, c·d + c each
	z      [][]float64 // per-block logits, c × rows each, then one row's c
	gw     [][]float64 // per-block scratch of gradBlock
	gx     [][][]float64

	lossPasses int // number of loss passes so far
}

// newObjective returns an objective over the validated problem. Exactly one
// of t and labels is non-nil.
func newObjective(x []float64, ldx, n, d int, t []float64, ldt int, labels []int, c int, w []float64, sumW, lambda float64, workers int) *objective {
	nb := (n + blockRows - 1) / blockRows
	size := blockRows
	if nb > maxBlocks {
		nb = maxBlocks
		size = (n + nb - 1) / nb
		nb = (n + size - 1) / size
	}
	bounds := make([]int, nb+1)
	for b := range nb {
		bounds[b] = b * size
	}
	bounds[nb] = n
	o := &objective{
		n: n, d: d, c: c,
		x: x, ldx: ldx,
		t: t, ldt: ldt,
		labels:  labels,
		w:       w,
		invS:    1 / sumW,
		lambda:  lambda,
		workers: max(1, min(workers, nb)),
		bounds:  bounds,
		theta:   make([]float64, c*d+c),
		res:     make([]float64, n*c),
		blockF:  make([]float64, nb),
		blockG:  make([][]float64, nb),
		z:       make([][]float64, nb),
		gw:      make([][]float64, nb),
		gx:      make([][][]float64, nb),
	}
	for b := range nb {
		o.z[b] = make([]float64, (bounds[b+1]-bounds[b]+1)*c)
	}
	return o
}

// dim returns the number of parameters, c·d + c.
func (o *objective) dim() int { return o.c*o.d + o.c }

// Func returns L(θ).
func (o *objective) Func(theta []float64) float64 {
	o.loss(theta)
	return o.f
}

// norm returns ‖g‖_∞.
func (o *objective) norm(g []float64) float64 { return floats.Norm(g, math.Inf(1)) }

// Grad stores ∇L(θ) in grad.
func (o *objective) Grad(grad, theta []float64) {
	o.loss(theta)
	o.grad(grad, theta)
}

// run calls fn(b) for every block, on up to o.workers goroutines.
func (o *objective) run(fn func(b int)) {
	nb := len(o.bounds) - 1
	if o.workers <= 1 {
		for b := range nb {
			fn(b)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range o.workers {
		wg.Go(func() {
			for {
				b := int(next.Add(1)) - 1
				if b >= nb {
					return
				}
				fn(b)
			}
		})
	}
	wg.Wait()
}

// loss runs the loss pass at theta unless it is the point of the last one.
func (o *objective) loss(theta []float64) {
	if o.valid && equalBits(theta, o.theta) {
		return
	}
	copy(o.theta, theta)
	o.valid = true
	o.lossPasses++
	o.run(o.lossBlock)
	var sum float64
	for _, v := range o.blockF {
		sum += v
	}
	W := theta[:o.c*o.d]
	f := sum*o.invS + o.lambda*floats.Dot(W, W)
	if math.IsNaN(f) {
		// Overflowing logits; tell the line search the step is too long.
		f = math.Inf(1)
	}
	o.f = f
}

// lossBlock computes the logits, losses and residuals of block b.
func (o *objective) lossBlock(b int) {
	c, d := o.c, o.d
	bias := o.theta[c*d:]
	i0, i1 := o.bounds[b], o.bounds[b+1]
	// The block's logits without the bias, Zᵀ = W Xᵀ, in one product:
	// the kernel's rows are the c classes and its columns the block's
	// rows, of which there are many, so that few entries are left to
	// single dot products at the edges. Every entry is the canonical dot
	// product ⟨w_k, x_i⟩ whichever operand comes first.
	nb := i1 - i0
	var X, W, Zt mat.Dense
	X.SetRawMatrix(blas64.General{Rows: nb, Cols: d, Stride: o.ldx, Data: o.x[i0*o.ldx : (i1-1)*o.ldx+d]})
	W.SetRawMatrix(blas64.General{Rows: c, Cols: d, Stride: d, Data: o.theta[:c*d]})
	Zt.SetRawMatrix(blas64.General{Rows: c, Cols: nb, Stride: nb, Data: o.z[b][:c*nb]})
	linalg.MulABT(&Zt, &W, &X)
	zt, z := o.z[b][:c*nb], o.z[b][c*nb:]
	var sum float64
	for i := i0; i < i1; i++ {
		r := o.res[i*c : i*c+c]
		s := 1.0
		if o.w != nil {
			s = o.w[i]
			if s == 0 {
				clear(r)
				continue
			}
		}
		zmax := math.Inf(-1)
		for k := range c {
			v := bias[k] + zt[k*nb+i-i0]
			z[k] = v
			zmax = max(zmax, v)
		}
		// r temporarily holds exp(z_k − max_l z_l).
		var se float64
		for k := range c {
			e := math.Exp(z[k] - zmax)
			r[k] = e
			se += e
		}
		lse := zmax + math.Log(se)
		inv := 1 / se
		var ce float64
		if o.labels != nil {
			y := o.labels[i]
			ce = lse - z[y]
			for k := range c {
				if k == y {
					r[k] = s * (r[k]*inv - 1)
				} else {
					r[k] = s * (r[k] * inv)
				}
			}
		} else {
			// CE = Σ_k t_k (lse − z_k), whose gradient in z is
			// p Σ_k t_k − t: exact even when Σ_k t_k is 1 only to
			// within targetTol.
			t := o.t[i*o.ldt : i*o.ldt+c]
			var st float64
			for k, tk := range t {
				if tk != 0 {
					ce += tk * (lse - z[k])
				}
				st += tk
			}
			for k, tk := range t {
				r[k] = s * (r[k]*inv*st - tk)
			}
		}
		sum += s * ce
	}
	o.blockF[b] = sum
}

// grad runs the gradient pass for the point of the last loss pass.
func (o *objective) grad(grad, theta []float64) {
	o.run(o.gradBlock)
	clear(grad)
	for _, g := range o.blockG {
		floats.Add(grad, g)
	}
	floats.Scale(o.invS, grad)
	cd := o.c * o.d
	if o.lambda != 0 {
		floats.AddScaled(grad[:cd], 2*o.lambda, theta[:cd])
	}
}

// gradChunk is the number of samples whose terms gradBlock adds to a
// class's gradient in one pass over it.
const gradChunk = 16

// gradBlock accumulates Σ_i r_i x_iᵀ and Σ_i r_i over block b, the rows of
// W's gradient gradChunk samples at a time (linalg.AddScaledRows4 and
// linalg.AddScaledRows).
func (o *objective) gradBlock(b int) {
	c, d := o.c, o.d
	g := o.blockG[b]
	if g == nil {
		g = make([]float64, c*d+c)
		o.blockG[b] = g
		o.gw[b] = make([]float64, 4*gradChunk)
		o.gx[b] = make([][]float64, gradChunk)
	} else {
		clear(g)
	}
	gb := g[c*d:]
	w, xs := o.gw[b], o.gx[b]
	for i0 := o.bounds[b]; i0 < o.bounds[b+1]; i0 += gradChunk {
		i1 := min(i0+gradChunk, o.bounds[b+1])
		xs := xs[:i1-i0]
		for i := i0; i < i1; i++ {
			xs[i-i0] = o.x[i*o.ldx : i*o.ldx+d]
			for k, r := range o.res[i*c : i*c+c] {
				gb[k] += r
			}
		}
		// Four classes at a time, each row read once for the four, then
		// the others one by one: the sums of AddScaledRows, bit for bit.
		k := 0
		for ; k+4 <= c; k += 4 {
			w := w[:4*(i1-i0)]
			for i := i0; i < i1; i++ {
				copy(w[4*(i-i0):4*(i-i0)+4], o.res[i*c+k:i*c+k+4])
			}
			dst := [4][]float64{g[k*d : k*d+d], g[(k+1)*d : (k+1)*d+d], g[(k+2)*d : (k+2)*d+d], g[(k+3)*d : (k+3)*d+d]}
			linalg.AddScaledRows4(&dst, w, xs)
		}
		for ; k < c; k++ {
			w := w[:i1-i0]
			for i := i0; i < i1; i++ {
				w[i-i0] = o.res[i*c+k]
			}
			linalg.AddScaledRows(g[k*d:k*d+d], w, xs)
		}
	}
}

// equalBits reports whether a and b hold the same bit patterns.
func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i, v := range a {
		if math.Float64bits(v) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// shifted presents an objective in the coordinates θ̃ = (W, b̃) with
// b̃ = b + Wμ, in which the logits are z_i = W(x_i − μ) + b̃. For μ the
// weighted mean of the samples this decouples the bias from the weights,
// which removes the worst ill-conditioning of uncentred features (all
// positive, such as counts or pixel values) without copying or changing
// the data: L and its minimiser are the same, only the path of the
// optimiser changes. The gradient is ∂L/∂W|_b̃ = ∂L/∂W|_b − (∂L/∂b) μᵀ,
// ∂L/∂b̃ = ∂L/∂b.
type shifted struct {
	o     *objective
	mu    []float64 // μ
	theta []float64 // (W, b) of the last point
	g     []float64 // ∇L in (W, b) coordinates
}

// newShifted returns the shifted view of o with μ the weighted mean of its
// samples.
func newShifted(o *objective) *shifted {
	mu := make([]float64, o.d)
	for i := range o.n {
		s := 1.0
		if o.w != nil {
			s = o.w[i]
		}
		if s != 0 {
			// Weighting each term by s_i/S keeps the partial sums
			// within the range of the features.
			floats.AddScaled(mu, s*o.invS, o.x[i*o.ldx:i*o.ldx+o.d])
		}
	}
	return &shifted{o: o, mu: mu, theta: make([]float64, o.dim()), g: make([]float64, o.dim())}
}

// model stores in dst the (W, b) coordinates of v and returns dst.
func (sh *shifted) model(dst, v []float64) []float64 {
	c, d := sh.o.c, sh.o.d
	copy(dst[:c*d], v[:c*d])
	for k := range c {
		dst[c*d+k] = v[c*d+k] - floats.Dot(v[k*d:k*d+d], sh.mu)
	}
	return dst
}

// coordinates returns the shifted coordinates of the model m, (W, b + Wμ).
func (sh *shifted) coordinates(m *Softmax) []float64 {
	c, d := sh.o.c, sh.o.d
	v := make([]float64, sh.o.dim())
	for k := range c {
		w := m.W.RawRowView(k)
		copy(v[k*d:(k+1)*d], w)
		v[c*d+k] = m.B[k] + floats.Dot(w, sh.mu)
	}
	return v
}

// Func returns L at the shifted coordinates v.
func (sh *shifted) Func(v []float64) float64 {
	return sh.o.Func(sh.model(sh.theta, v))
}

// Grad stores in grad the gradient of L in shifted coordinates at v.
func (sh *shifted) Grad(grad, v []float64) {
	sh.o.Grad(sh.g, sh.model(sh.theta, v))
	c, d := sh.o.c, sh.o.d
	copy(grad, sh.g)
	for k := range c {
		floats.AddScaled(grad[k*d:k*d+d], -sh.g[c*d+k], sh.mu)
	}
}

// norm returns ‖∇L‖_∞ in (W, b) coordinates from the gradient grad in
// shifted coordinates.
func (sh *shifted) norm(grad []float64) float64 {
	c, d := sh.o.c, sh.o.d
	var m float64
	for k := range c {
		gb := grad[c*d+k]
		m = max(m, math.Abs(gb))
		for j, v := range grad[k*d : k*d+d] {
			m = max(m, math.Abs(v+gb*sh.mu[j]))
		}
	}
	return m
}
