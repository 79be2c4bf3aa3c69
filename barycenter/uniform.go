package barycenter

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/ot"
)

// UniformResult is a barycenter computed by UniformSolver, with uniform
// weights 1/n on its n support points.
type UniformResult struct {
	// X (n×d) and Y (n×c, nil for an unlabeled stack) are the support.
	X, Y *mat.Dense
	// Match[k][j] is the point of measure k that the plan π^(k) of the
	// last iteration (a permutation divided by n) sends to support point j
	// before the last update. The returned support is its image,
	//
	//	x_j = Σ_k α_k a_{k, Match[k][j]},   y_j = Σ_k α_k y_{k, Match[k][j]},
	//
	// so a caller can differentiate the barycenter with respect to the
	// measures and α with the plans held fixed (the envelope theorem, as
	// for Result.Plans).
	Match [][]int
	// Costs holds ⟨C^(k), π^(k)⟩ for every k, and Cost their α-weighted
	// sum J, of the last iteration.
	Costs []float64
	Cost  float64
	// History holds J for every iteration.
	History []float64
	// Iterations is the number of iterations made.
	Iterations int
	// Converged reports whether |J_it − J_it−1| < Tol stopped the
	// iterations (rather than MaxIter).
	Converged bool
}

// UniformSolver computes labeled Wasserstein barycenters (the paper's
// Algorithm 1; FreeSupport's iterations for an unlabeled Stack) of the K
// measures of a Stack, each of n uniformly weighted points, with a barycenter
// of n uniformly weighted points. It is the path Labeled and FreeSupport take
// for such measures (with Settings.InitSamples) and the inner loop of
// DaDiL's learning.
//
// With equal sizes and uniform weights every optimal plan is a permutation
// divided by n (Birkhoff), found exactly by ot.AssignmentSolver, so after an
// update (eq. 10) every support point is an α-weighted sum of one point of
// each measure: x_B,j = Σ_t W_jt a_t, with W the n × K·n matrix whose row j
// holds α_k at t = k·n + Match[k][j] and zeros elsewhere. The costs of an iteration (eq. 9, transposed:
// row j for support point j, column l for point l of measure k),
//
//	C^(k)_jl = ‖x_B,j‖² + ‖a_kl‖² − 2 S_j,(k,l) + β ‖y_B,j − y_kl‖²,
//
// need the inner products S = X_B Aᵀ of the support with all stacked
// points, and a row of S changes only when its support point does. They
// come one of two ways (Stack.Prepare chooses the cheaper):
//
//   - from the Gram matrix G = A Aᵀ, as S = W G, with no product with the
//     data once G is known: (K·n)²/2 inner products, computed once for
//     all the barycenters run on the stack;
//   - directly, S_changed = X_B,changed Aᵀ for the support points that
//     changed. The first two iterations change every point (from one
//     stacked point to the weighted sums), later ones only the few whose
//     assignments moved (in DaDiL's learning about 10% in the third
//     iteration and fewer after): about 2.25·n·K·n inner products per
//     barycenter.
//
// The label term expands as β‖y_l‖² + β‖y_j‖² − 2β Σ_q y_jq y_lq, with
// negatives from rounding set to zero.
//
// The zero value is ready to use once MaxIter is set; buffers are reused
// from one Solve to the next. A UniformSolver must not be used by several
// goroutines at once.
type UniformSolver struct {
	// Beta is β ≥ 0, the weight of the label term of the ground cost
	// (eq. 9); zero selects, for every pair, the largest feature cost of
	// the pair, as Settings.Beta. It is ignored for unlabeled stacks.
	Beta float64
	// MaxIter is N_itb ≥ 1, the maximal number of iterations.
	MaxIter int
	// Tol is τ ≥ 0: iterations stop when |J_it − J_it−1| < Tol
	// (Algorithm 1, line 4); zero makes all MaxIter iterations.
	Tol float64
	// Workers bounds the number of pair problems solved at once in an
	// iteration; 0 or 1 solves them in turn. Results do not depend on it.
	Workers int

	k, n, d, c int      // shape of the buffers
	terms      [][]term // terms[j]: the weighted stacked points summing to x_B,j
	inner      *mat.Dense
	bnorm      []float64  // ‖x_B,j‖²
	xb, yb     *mat.Dense // support (changed rows only, while iterating)
	dirty      []bool     // rows of inner to recompute
	// changed lists the dirty rows; xd and sd hold them and their rows of
	// inner while it is updated.
	changed []int
	xd, sd  []float64
	// debugChanged, if set (by tests), receives the number of rows
	// supportDirect recomputes.
	debugChanged func(m int)
	pairs        []pairScratch
	w            []float64   // scratch: weights of a sum of rows
	xs           [][]float64 // scratch: its rows
}

// term is one weighted stacked point of a barycenter point.
type term struct {
	t int     // stacked row
	w float64 // weight
}

// errCosts is returned when a cost is not finite, or too large for the
// assignment solver (ot.MaxCost).
var errCosts = errors.New("barycenter: non-finite or too large transport costs")

// Solve runs Algorithm 1 on the stack s with weights alpha ∈ Δ_K from the
// support init, init[j] being the stacked row (k·n + l) barycenter point j
// starts at (with its label; Settings.InitSamples draws such a start), and
// writes the barycenter into dst, reusing its storage. The stack must have
// been prepared (Stack.Prepare) since A last changed. Solve returns an error
// for invalid arguments or settings, and when a cost is not finite or too
// large for ot.AssignmentSolver (features whose squared distances
// overflow); dst is then unspecified.
func (u *UniformSolver) Solve(dst *UniformResult, s *Stack, alpha []float64, init []int) error {
	if err := u.validate(dst, s, alpha, init); err != nil {
		return err
	}
	u.ensure(s)
	sizeResult(dst, s)
	for j := range u.terms {
		u.terms[j] = append(u.terms[j][:0], term{init[j], 1})
		u.dirty[j] = true
	}
	dst.Converged = false
	prev := math.NaN()
	for it := 1; it <= u.MaxIter; it++ {
		u.support(s)
		if s.c > 0 {
			u.labels(s)
		}
		err := u.eachPair(s.k, func(k int) (err error) {
			dst.Costs[k], err = u.pairCost(s, dst.Match[k], k)
			return err
		})
		if err != nil {
			return err
		}
		J := 0.0
		for k := 0; k < s.k; k++ {
			J += alpha[k] * dst.Costs[k]
		}
		dst.History = append(dst.History, J)
		dst.Cost = J
		dst.Iterations = it
		u.update(s, dst.Match, alpha)
		if math.Abs(J-prev) < u.Tol {
			dst.Converged = true
			break
		}
		prev = J
	}
	u.materialize(s, dst)
	return nil
}

// validate checks Solve's arguments and the solver's settings.
func (u *UniformSolver) validate(dst *UniformResult, s *Stack, alpha []float64, init []int) error {
	switch {
	case dst == nil:
		return errors.New("barycenter: the result destination is nil")
	case s == nil || !s.prepared:
		return errors.New("barycenter: the stack is nil or not prepared (Stack.Prepare)")
	case u.MaxIter < 1 || !(u.Tol >= 0) || u.Workers < 0:
		return fmt.Errorf("barycenter: UniformSolver needs MaxIter ≥ 1, Tol ≥ 0 and Workers ≥ 0 (MaxIter %d, Tol %g, Workers %d)", u.MaxIter, u.Tol, u.Workers)
	case !(u.Beta >= 0) || math.IsInf(u.Beta, 1):
		return fmt.Errorf("barycenter: β = %g must be a non-negative number", u.Beta)
	case len(init) != s.n:
		return fmt.Errorf("barycenter: %d initial points for a barycenter of %d", len(init), s.n)
	}
	for j, t := range init {
		if t < 0 || t >= s.k*s.n {
			return fmt.Errorf("barycenter: initial point %d is stacked row %d, outside [0, %d)", j, t, s.k*s.n)
		}
	}
	return checkAlpha(alpha, s.k)
}

// sizeResult sizes dst's storage for a barycenter of the stack s.
func sizeResult(dst *UniformResult, s *Stack) {
	dst.X = reuseDense(dst.X, s.n, s.d)
	dst.Y = nil
	if s.c > 0 {
		dst.Y = reuseDense(dst.Y, s.n, s.c)
	}
	if len(dst.Match) != s.k {
		dst.Match = make([][]int, s.k)
	}
	for k := range dst.Match {
		if len(dst.Match[k]) != s.n {
			dst.Match[k] = make([]int, s.n)
		}
	}
	if len(dst.Costs) != s.k {
		dst.Costs = make([]float64, s.k)
	}
	dst.History = dst.History[:0]
}

// reuseDense returns m if it is r×c, else a new r×c matrix.
func reuseDense(m *mat.Dense, r, c int) *mat.Dense {
	if m != nil {
		if mr, mc := m.Dims(); mr == r && mc == c {
			return m
		}
	}
	return mat.NewDense(r, c, nil)
}

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
func (u *UniformSolver) ensure(s *Stack) {
	if u.inner != nil && u.k == s.k && u.n == s.n && u.d == s.d && u.c == s.c {
		return
	}
	u.k, u.n, u.d, u.c = s.k, s.n, s.d, s.c
	u.terms = make([][]term, s.n)
	u.inner = mat.NewDense(s.n, s.k*s.n, nil)
	u.bnorm = make([]float64, s.n)
	u.xb = mat.NewDense(s.n, s.d, nil)
	u.yb = nil
	if s.c > 0 {
		u.yb = mat.NewDense(s.n, s.c, nil)
	}
	u.dirty = make([]bool, s.n)
	u.pairs = make([]pairScratch, s.k)
	for k := range u.pairs {
		u.pairs[k].C = mat.NewDense(s.n, s.n, nil)
	}
}

// update moves the support to x_B,j = Σ_k α_k a_{k, match_k(j)} (eq. 10),
// over the k with α_k ≠ 0, and marks dirty the points whose terms changed.
func (u *UniformSolver) update(s *Stack, match [][]int, alpha []float64) {
	for j := range u.terms {
		old := u.terms[j]
		same := true
		n := 0
		for k := 0; k < s.k; k++ {
			if alpha[k] == 0 {
				continue
			}
			t := term{k*s.n + match[k][j], alpha[k]}
			if n >= len(old) || old[n] != t {
				same = false
			}
			n++
		}
		u.dirty[j] = !same || n != len(old)
		if !u.dirty[j] {
			continue
		}
		ts := old[:0]
		for k := 0; k < s.k; k++ {
			if alpha[k] != 0 {
				ts = append(ts, term{k*s.n + match[k][j], alpha[k]})
			}
		}
		u.terms[j] = ts
	}
}

// eachPair runs f(k) for every k < K, on Workers goroutines, and returns
// the error of the lowest k that failed (see par.Run).
func (u *UniformSolver) eachPair(K int, f func(k int) error) error {
	if u.Workers <= 1 {
		var first error
		for k := 0; k < K; k++ {
			if err := f(k); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	return par.Run(K, u.Workers, f, nil)
}

// sumInto sets dst to Σ_t w_t rows(t) over the terms ts, term by term
// (linalg.AddScaledRows).
func (u *UniformSolver) sumInto(dst []float64, ts []term, rows func(t int) []float64) {
	u.w, u.xs = u.w[:0], u.xs[:0]
	for _, tm := range ts {
		u.w = append(u.w, tm.w)
		u.xs = append(u.xs, rows(tm.t))
	}
	clear(dst)
	linalg.AddScaledRows(dst, u.w, u.xs)
}

// support brings the changed rows of S and ‖x_B,j‖² up to date, from the
// Gram matrix when the stack has one and directly otherwise.
func (u *UniformSolver) support(s *Stack) {
	if s.gram != nil {
		u.supportGram(s)
		return
	}
	u.supportDirect(s)
}

// supportGram computes the changed rows of S = W G and ‖x_B,j‖² =
// Σ_t W_jt S_jt.
func (u *UniformSolver) supportGram(s *Stack) {
	sr := u.inner.RawMatrix()
	m := s.k * s.n
	for j, ts := range u.terms {
		if !u.dirty[j] {
			continue
		}
		row := sr.Data[j*sr.Stride : j*sr.Stride+m]
		u.sumInto(row, ts, s.gram.RawRowView)
		var nrm float64
		for _, tm := range ts {
			nrm += tm.w * row[tm.t]
		}
		u.bnorm[j] = nrm
	}
}

// supportDirect computes the changed support points x_B,j = Σ_t W_jt a_t,
// their squared norms, and their rows of S = X_B Aᵀ by one product of all
// changed points with A.
func (u *UniformSolver) supportDirect(s *Stack) {
	xb := u.xb.RawMatrix()
	d := s.d
	u.changed = u.changed[:0]
	for j, ts := range u.terms {
		if !u.dirty[j] {
			continue
		}
		xr := xb.Data[j*xb.Stride : j*xb.Stride+d]
		u.sumInto(xr, ts, s.A.RawRowView)
		u.bnorm[j] = linalg.Dot(xr, xr)
		u.changed = append(u.changed, j)
	}
	m := len(u.changed)
	if u.debugChanged != nil {
		u.debugChanged(m)
	}
	switch {
	case m == 0:
		return
	case m == s.n:
		linalg.MulABT(u.inner, u.xb, s.A)
		return
	}
	u.innerChanged(s, m)
}

// innerChanged computes the rows of S of the m changed support points by
// one product of those points, gathered, with A.
func (u *UniformSolver) innerChanged(s *Stack, m int) {
	xb := u.xb.RawMatrix()
	d, kn := s.d, s.k*s.n
	if len(u.xd) < m*d {
		u.xd = make([]float64, m*d)
	}
	if len(u.sd) < m*kn {
		u.sd = make([]float64, m*kn)
	}
	for i, j := range u.changed {
		copy(u.xd[i*d:(i+1)*d], xb.Data[j*xb.Stride:j*xb.Stride+d])
	}
	Xd := mat.NewDense(m, d, u.xd[:m*d])
	Sd := mat.NewDense(m, kn, u.sd[:m*kn])
	linalg.MulABT(Sd, Xd, s.A)
	for i, j := range u.changed {
		copy(u.inner.RawRowView(j), u.sd[i*kn:(i+1)*kn])
	}
}

// labels computes the soft labels y_B,j = Σ_t W_jt y_t of the changed
// support points.
func (u *UniformSolver) labels(s *Stack) {
	for j, ts := range u.terms {
		if !u.dirty[j] {
			continue
		}
		u.sumInto(u.yb.RawRowView(j), ts, s.YA.RawRowView)
	}
}

// labelBlock is the number of a measure's points whose label vectors the
// label term of the costs takes at a time: with up to ~100 classes their
// c+1 vectors of labelBlock values stay in a core's L2 cache. (A variable
// for the tests.)
var labelBlock = 256

// pairCost assembles the transposed cost matrix of the pair (measure k,
// support), row j for support point j and column l for point l of measure
// k, so that S is read row by row; solves the assignment of support points
// to measure points, whose permutation is written into match directly; and
// returns ⟨C^(k), π^(k)⟩.
func (u *UniformSolver) pairCost(s *Stack, match []int, k int) (float64, error) {
	n := s.n
	p := &u.pairs[k]
	C := p.C.RawMatrix()
	sr := u.inner.RawMatrix()
	norm := s.norm[k*n : k*n+n]
	maxF := 0.0
	for j := 0; j < n; j++ {
		srow := sr.Data[j*sr.Stride+k*n : j*sr.Stride+k*n+n]
		row := C.Data[j*C.Stride : j*C.Stride+n]
		maxF = max(maxF, linalg.SqDists(row, norm, srow, u.bnorm[j]))
	}
	if s.c > 0 {
		bt := u.Beta
		if bt == 0 {
			bt = maxF
		}
		u.addLabelCosts(s, p, k, bt)
	}
	if err := p.assign.Solve(&p.perm, p.C); err != nil {
		return 0, errCosts
	}
	copy(match, p.perm.Perm)
	return p.perm.Cost / float64(n), nil
}

// addLabelCosts adds β‖y_l − y_j‖² = β‖y_l‖² + β‖y_j‖² − 2β Σ_q y_jq y_lq
// to the costs of pair k: with the measure's labels transposed (class by
// class), each row of C takes one scaled vector addition per class.
func (u *UniformSolver) addLabelCosts(s *Stack, p *pairScratch, k int, bt float64) {
	n := s.n
	C := p.C.RawMatrix()
	ynA := p.transposeLabels(s, k, bt)
	yjs := p.supportLabelNorms(u.yb, n, bt)
	// Column blocks of labelBlock points keep the c+1 vectors a row adds
	// in cache for all rows; each entry still adds its terms in class
	// order, so the costs do not depend on the blocking.
	for l0 := 0; l0 < n; l0 += labelBlock {
		l1 := min(l0+labelBlock, n)
		for j := 0; j < n; j++ {
			p.w = append(p.w[:0], 1)
			p.xs = append(p.xs[:0], ynA[l0:l1])
			for q, v := range u.yb.RawRowView(j) {
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

// transposeLabels writes the labels of measure k class by class into p.yt,
// followed by β‖y_l‖² for every point l, which it returns.
func (p *pairScratch) transposeLabels(s *Stack, k int, bt float64) []float64 {
	n, c := s.n, s.c
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
	return ynA
}

// supportLabelNorms returns β‖y_j‖² for the n support points of YB.
func (p *pairScratch) supportLabelNorms(YB *mat.Dense, n int, bt float64) []float64 {
	if cap(p.yj) < n {
		p.yj = make([]float64, n)
	}
	yjs := p.yj[:n]
	for j := range yjs {
		var yj float64
		for _, v := range YB.RawRowView(j) {
			yj += v * v
		}
		yjs[j] = yj * bt
	}
	return yjs
}

// materialize writes the support X_B = W A and, for labeled stacks, its
// labels Y_B = W Y_A into dst.
func (u *UniformSolver) materialize(s *Stack, dst *UniformResult) {
	for j, ts := range u.terms {
		u.sumInto(dst.X.RawRowView(j), ts, s.A.RawRowView)
		if s.c > 0 {
			u.sumInto(dst.Y.RawRowView(j), ts, s.YA.RawRowView)
		}
	}
}
