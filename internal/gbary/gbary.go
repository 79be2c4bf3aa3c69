// Package gbary computes labeled Wasserstein barycenters (DaDiL paper,
// Algorithm 1) of K measures of n uniformly weighted points each, with an
// n-point uniform barycenter.
//
// With equal sizes and uniform weights every optimal plan is a permutation
// divided by n, so every barycenter point is an α-weighted sum of one
// point of each measure: x_B,j = Σ_t W_jt a_t over the stacked points a_t.
// The cost matrices of an iteration,
//
//	C^(k)_lj = ‖a_kl‖² + ‖x_B,j‖² − 2 S_j,(k,l) + β ‖y_kl − y_B,j‖²,
//
// need the inner products S = X_B Aᵀ of the support with all stacked
// points, and a row of S changes only when its support point does. They
// come one of two ways (Stack.Prepare chooses the cheaper):
//
//   - from the Gram matrix G = A Aᵀ, as S = W G, with no product with the
//     data once G is known: (K·n)²/2 inner products, computed once for
//     all the barycenters run on the stack;
//   - directly, S_changed = X_B,changed Aᵀ for the support points that
//     changed. The first two iterations change every point (from one atom
//     point to the weighted sums), later ones only the few whose
//     assignments moved (in DaDiL's learning about 10% in the third
//     iteration and fewer after): about 2.25·n·K·n inner products per
//     barycenter.
//
// This is the inner loop of DaDiL's learning and of its full-atom
// reconstructions.
package gbary

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/ot"
)

// ErrNonFinite is returned when a cost is not finite, or too large for
// the assignment solver (ot.MaxCost).
var ErrNonFinite = errors.New("non-finite or too large transport costs")

// Stack holds K measures of N points in R^D, with soft labels over C
// classes (C = 0 for unlabeled measures): row t = k·N + l of A is point l of
// measure k.
type Stack struct {
	K, N, D, C int
	A, YA      *mat.Dense // YA is nil when C = 0
	// G = A Aᵀ when Prepare chose the Gram matrix, nil otherwise.
	G    *mat.Dense
	Norm []float64 // ‖a_t‖²
	// NoGram makes Prepare take the direct way whatever the number of
	// runs: for stacks whose (K·N)² Gram matrix would not fit in memory.
	NoGram bool
}

// NewStack allocates a stack.
func NewStack(K, n, d, c int) *Stack {
	s := &Stack{K: K, N: n, D: d, C: c, A: mat.NewDense(K*n, d, nil), Norm: make([]float64, K*n)}
	if c > 0 {
		s.YA = mat.NewDense(K*n, c, nil)
	}
	return s
}

// UsesGram reports whether Prepare computes the Gram matrix of a stack of
// K measures for runs barycenters.
func UsesGram(K, runs int) bool { return 9*runs > 2*K }

// Prepare readies the stack, once A is filled, for runs barycenters: it
// computes the squared norms and, when that is cheaper, the Gram matrix.
// A barycenter costs about 2.25·N rows of K·N inner products computed
// directly, against K·N/2 such rows for the Gram matrix shared by all
// runs, so the Gram matrix is computed when 4.5·runs > K (UsesGram).
func (s *Stack) Prepare(runs int) {
	if !s.NoGram && UsesGram(s.K, runs) {
		m := s.K * s.N
		if s.G == nil {
			s.G = mat.NewDense(m, m, nil)
		}
		linalg.Gram(s.G, s.A)
		for i := range s.Norm {
			s.Norm[i] = s.G.At(i, i)
		}
		return
	}
	s.G = nil
	// The same dot products as linalg.MulABT's: a support point equal
	// to a stacked point has cost exactly zero to it.
	for t := range s.Norm {
		a := s.A.RawRowView(t)
		s.Norm[t] = linalg.Dot(a, a)
	}
}

// Term is one weighted stacked point of a barycenter point.
type Term struct {
	T int     // stacked row
	W float64 // weight
}

// Barycenter is the state of Algorithm 1 on a stack.
type Barycenter struct {
	// Terms[j] lists the stacked points whose weighted sum is barycenter
	// point j; Inv[k][j] is the point of measure k sent to j by the last
	// plan π^(k) (a permutation).
	Terms [][]Term
	Inv   [][]int
	S     *mat.Dense // N × K·N: S_jt = ⟨x_B,j, a_t⟩
	BNorm []float64  // ‖x_B,j‖²
	// XB and YB hold the support after Materialize.
	XB, YB *mat.Dense
	// C is an N×N scratch matrix, free for callers between runs.
	C *mat.Dense
	// Costs[k] = ⟨C^(k), π^(k)⟩ of the last iteration; J the α-weighted
	// sums per iteration.
	Costs     []float64
	J         []float64
	Iters     int
	Converged bool
	// Workers bounds the number of pair problems solved at once in an
	// iteration; 0 or 1 solves them in turn. Results do not depend on it.
	Workers int

	dirty []bool // rows of S to recompute
	// changed lists the dirty rows; xd and sd hold them and their rows of
	// S while S is updated.
	changed []int
	xd, sd  []float64
	// debugChanged, if set (by tests), receives the number of rows
	// supportDirect recomputes.
	debugChanged func(m int)
	pairs        []pairScratch
	w            []float64   // scratch: weights of a sum of rows
	xs           [][]float64 // scratch: its rows
}

// sumInto sets dst to Σ_t w_t rows(t) over the terms ts, term by term
// (linalg.AddScaledRows).
func (b *Barycenter) sumInto(dst []float64, ts []Term, rows func(t int) []float64) {
	b.w, b.xs = b.w[:0], b.xs[:0]
	for _, tm := range ts {
		b.w = append(b.w, tm.W)
		b.xs = append(b.xs, rows(tm.T))
	}
	clear(dst)
	linalg.AddScaledRows(dst, b.w, b.xs)
}

// labelBlock is the number of a measure's points whose label vectors the
// label term of the costs takes at a time: with up to ~100 classes their
// c+1 vectors of labelBlock values stay in a core's L2 cache. (A variable
// for the tests.)
var labelBlock = 256

// pairScratch is the per-measure state of an iteration.
type pairScratch struct {
	C      *mat.Dense
	assign ot.AssignmentSolver
	perm   ot.AssignmentResult
	yt     []float64 // the measure's labels by class, then β‖y_l‖²
	yj     []float64 // β‖y_j‖² of the support points
	w      []float64
	xs     [][]float64
}

// ensure allocates the buffers for the stack's shape.
func (b *Barycenter) ensure(s *Stack) {
	if b.S != nil {
		if r, c := b.S.Dims(); r == s.N && c == s.K*s.N {
			if _, d := b.XB.Dims(); d == s.D && len(b.Inv) == s.K && (s.C == 0) == (b.YB == nil) {
				return
			}
		}
	}
	b.Terms = make([][]Term, s.N)
	b.Inv = make([][]int, s.K)
	for k := range b.Inv {
		b.Inv[k] = make([]int, s.N)
	}
	b.S = mat.NewDense(s.N, s.K*s.N, nil)
	b.BNorm = make([]float64, s.N)
	b.XB = mat.NewDense(s.N, s.D, nil)
	b.YB = nil
	if s.C > 0 {
		b.YB = mat.NewDense(s.N, s.C, nil)
	}
	b.C = mat.NewDense(s.N, s.N, nil)
	b.Costs = make([]float64, s.K)
	b.dirty = make([]bool, s.N)
	b.pairs = make([]pairScratch, s.K)
	for k := range b.pairs {
		b.pairs[k].C = mat.NewDense(s.N, s.N, nil)
	}
}

// Run performs Algorithm 1 from the support init (init[j] is the stacked
// point barycenter point j starts at) for at most maxIter iterations or
// until the weighted cost J changes by less than tol. beta ≤ 0 selects,
// for every pair, the largest feature cost of the pair (labels are
// ignored for unlabeled stacks). The support of the last iteration's update
// is left in Terms; call Materialize for XB and YB.
func (b *Barycenter) Run(s *Stack, init []int, alpha []float64, beta float64, maxIter int, tol float64) error {
	b.ensure(s)
	for j := range b.Terms {
		b.Terms[j] = append(b.Terms[j][:0], Term{init[j], 1})
		b.dirty[j] = true
	}
	b.J = b.J[:0]
	b.Converged = false
	prev := math.NaN()
	errs := make([]error, s.K)
	for it := 1; it <= maxIter; it++ {
		b.support(s)
		if s.C > 0 {
			b.labels(s)
		}
		b.eachPair(s.K, func(k int) {
			b.Costs[k], errs[k] = b.pairCost(s, k, beta)
		})
		J := 0.0
		for k := 0; k < s.K; k++ {
			if errs[k] != nil {
				return errs[k]
			}
			J += alpha[k] * b.Costs[k]
		}
		b.J = append(b.J, J)
		b.Iters = it
		// New support: x_B,j = Σ_k α_k a_{k, inv_k(j)}; a row of S needs
		// recomputing only when its terms changed.
		for j := range b.Terms {
			old := b.Terms[j]
			same := true
			n := 0
			for k := 0; k < s.K; k++ {
				if alpha[k] == 0 {
					continue
				}
				t := Term{k*s.N + b.Inv[k][j], alpha[k]}
				if n >= len(old) || old[n] != t {
					same = false
				}
				n++
			}
			b.dirty[j] = !same || n != len(old)
			if !b.dirty[j] {
				continue
			}
			ts := old[:0]
			for k := 0; k < s.K; k++ {
				if alpha[k] != 0 {
					ts = append(ts, Term{k*s.N + b.Inv[k][j], alpha[k]})
				}
			}
			b.Terms[j] = ts
		}
		if math.Abs(J-prev) < tol {
			b.Converged = true
			break
		}
		prev = J
	}
	return nil
}

// eachPair runs f(k) for k < K, on Workers goroutines.
func (b *Barycenter) eachPair(K int, f func(k int)) {
	if b.Workers <= 1 {
		for k := 0; k < K; k++ {
			f(k)
		}
		return
	}
	par.ForEach(K, b.Workers, f, nil)
}

// support brings the changed rows of S and ‖x_B,j‖² up to date, from the
// Gram matrix when the stack has one and directly otherwise.
func (b *Barycenter) support(s *Stack) {
	if s.G != nil {
		b.supportGram(s)
		return
	}
	b.supportDirect(s)
}

// supportGram computes the changed rows of S = W G and ‖x_B,j‖² =
// Σ_t W_jt S_jt.
func (b *Barycenter) supportGram(s *Stack) {
	sr := b.S.RawMatrix()
	m := s.K * s.N
	for j, ts := range b.Terms {
		if !b.dirty[j] {
			continue
		}
		row := sr.Data[j*sr.Stride : j*sr.Stride+m]
		b.sumInto(row, ts, s.G.RawRowView)
		var nrm float64
		for _, tm := range ts {
			nrm += tm.W * row[tm.T]
		}
		b.BNorm[j] = nrm
	}
}

// supportDirect computes the changed support points x_B,j = Σ_t W_jt a_t,
// their squared norms, and their rows of S = X_B Aᵀ by one product of all
// changed points with A.
func (b *Barycenter) supportDirect(s *Stack) {
	xb := b.XB.RawMatrix()
	d := s.D
	b.changed = b.changed[:0]
	for j, ts := range b.Terms {
		if !b.dirty[j] {
			continue
		}
		xr := xb.Data[j*xb.Stride : j*xb.Stride+d]
		b.sumInto(xr, ts, s.A.RawRowView)
		b.BNorm[j] = linalg.Dot(xr, xr)
		b.changed = append(b.changed, j)
	}
	m := len(b.changed)
	if b.debugChanged != nil {
		b.debugChanged(m)
	}
	switch {
	case m == 0:
		return
	case m == s.N:
		linalg.MulABT(b.S, b.XB, s.A)
		return
	}
	kn := s.K * s.N
	if len(b.xd) < m*d {
		b.xd = make([]float64, m*d)
	}
	if len(b.sd) < m*kn {
		b.sd = make([]float64, m*kn)
	}
	for i, j := range b.changed {
		copy(b.xd[i*d:(i+1)*d], xb.Data[j*xb.Stride:j*xb.Stride+d])
	}
	Xd := mat.NewDense(m, d, b.xd[:m*d])
	Sd := mat.NewDense(m, kn, b.sd[:m*kn])
	linalg.MulABT(Sd, Xd, s.A)
	for i, j := range b.changed {
		copy(b.S.RawRowView(j), b.sd[i*kn:(i+1)*kn])
	}
}

// labels computes the soft labels of the changed rows of the support.
func (b *Barycenter) labels(s *Stack) {
	for j, ts := range b.Terms {
		if !b.dirty[j] {
			continue
		}
		row := b.YB.RawRowView(j)
		b.sumInto(row, ts, s.YA.RawRowView)
	}
}

// pairCost assembles the transposed cost matrix of the pair (measure k,
// support), row j for support point j and column l for point l of measure
// k, so that S is read row by row; solves the assignment of support points
// to measure points, whose permutation is Inv[k] directly; and returns
// ⟨C^(k), π^(k)⟩.
func (b *Barycenter) pairCost(s *Stack, k int, beta float64) (float64, error) {
	n := s.N
	p := &b.pairs[k]
	C := p.C.RawMatrix()
	sr := b.S.RawMatrix()
	norm := s.Norm[k*n : k*n+n]
	maxF := 0.0
	for j := 0; j < n; j++ {
		srow := sr.Data[j*sr.Stride+k*n : j*sr.Stride+k*n+n]
		row := C.Data[j*C.Stride : j*C.Stride+n]
		maxF = max(maxF, linalg.SqDists(row, norm, srow, b.BNorm[j]))
	}
	if s.C > 0 {
		bt := beta
		if bt <= 0 {
			bt = maxF
		}
		// β‖y_l − y_j‖² = β‖y_l‖² + β‖y_j‖² − 2β Σ_q y_jq y_lq: with the
		// measure's labels transposed (class by class), each row of C
		// takes one scaled vector addition per class.
		c := s.C
		ya := s.YA.RawMatrix()
		if len(p.yt) < (c+1)*n {
			p.yt = make([]float64, (c+1)*n)
		}
		ynA := p.yt[c*n : (c+1)*n]
		for l := range n {
			yl := ya.Data[(k*n+l)*ya.Stride : (k*n+l)*ya.Stride+c]
			var nn float64
			for q, v := range yl {
				p.yt[q*n+l] = v
				nn += v * v
			}
			ynA[l] = bt * nn
		}
		// β‖y_j‖² of every support point.
		if cap(p.yj) < n {
			p.yj = make([]float64, n)
		}
		yjs := p.yj[:n]
		for j := range yjs {
			var yj float64
			for _, v := range b.YB.RawRowView(j) {
				yj += v * v
			}
			yjs[j] = yj * bt
		}
		// Column blocks of labelBlock points keep the c+1 vectors a row
		// adds in cache for all rows; each entry still adds its terms in
		// class order, so the costs do not depend on the blocking.
		for l0 := 0; l0 < n; l0 += labelBlock {
			l1 := min(l0+labelBlock, n)
			for j := 0; j < n; j++ {
				y := b.YB.RawRowView(j)
				p.w = append(p.w[:0], 1)
				p.xs = append(p.xs[:0], ynA[l0:l1])
				for q, v := range y {
					if v != 0 {
						p.w = append(p.w, -2*bt*v)
						p.xs = append(p.xs, p.yt[q*n+l0:q*n+l1])
					}
				}
				row := C.Data[j*C.Stride+l0 : j*C.Stride+l1]
				linalg.AddScaledRows(row, p.w, p.xs)
				// Negatives from rounding set to 0: the label term is a
				// squared distance.
				linalg.AddClamped(row, yjs[j])
			}
		}
	}
	if err := p.assign.Solve(&p.perm, p.C); err != nil {
		return 0, ErrNonFinite
	}
	copy(b.Inv[k], p.perm.Perm)
	return p.perm.Cost / float64(n), nil
}

// Materialize writes the support XB = W A and, for labeled stacks, its
// labels YB = W Y_A.
func (b *Barycenter) Materialize(s *Stack) {
	for j := range b.dirty {
		b.dirty[j] = true
	}
	xb := b.XB.RawMatrix()
	d := s.D
	for j, ts := range b.Terms {
		xr := xb.Data[j*xb.Stride : j*xb.Stride+d]
		b.sumInto(xr, ts, s.A.RawRowView)
	}
	if s.C > 0 {
		b.labels(s)
	}
}
