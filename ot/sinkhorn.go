package ot

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Default values used by Sinkhorn for zero fields of SinkhornSettings.
const (
	DefaultSinkhornTol     = 1e-9
	DefaultSinkhornMaxIter = 1000
)

// parallelMin is the smallest n·m for which Sinkhorn splits its passes over
// goroutines.
const parallelMin = 1 << 16

// Limits of Sinkhorn's floating-point arithmetic.
const (
	// shiftAbove is the size of |C|/reg above which Sinkhorn first
	// subtracts row and column minima from C.
	shiftAbove = 1 << 20
	// maxExponent bounds the spread of C/reg (after those shifts): the
	// exponents (F_i + G_j − C_ij)/reg are rounded to about 2⁻⁵³ of it, so
	// beyond 10¹² the plan's entries would be off by more than 10⁻⁴ of
	// themselves (and the iteration would need about 10¹² steps).
	maxExponent = 1e12
	// minMass and maxMass bound Σa: the tolerance is an absolute amount
	// of mass, and far from 1 the plan's entries would leave the range of
	// normal float64 numbers.
	minMass, maxMass = 1e-100, 1e100
)

// SinkhornSettings configures Sinkhorn. The zero value, like a nil
// *SinkhornSettings, selects the defaults.
type SinkhornSettings struct {
	// Tol is the stopping tolerance on the L1 violation of the marginals,
	// ‖π1_m − a‖₁ + ‖πᵀ1_n − b̃‖₁ (an absolute amount of mass). Zero means
	// DefaultSinkhornTol; it must be finite, not negative or NaN.
	Tol float64

	// MaxIter caps the number of iterations, one iteration being one update
	// of F followed by one update of G. Zero means DefaultSinkhornMaxIter;
	// it must not be negative.
	MaxIter int

	// Workers caps the number of goroutines used by the row-wise and
	// column-wise passes. Zero means runtime.GOMAXPROCS(0) and 1 disables
	// parallelism; it must not be negative. Problems with n·m < 2¹⁶ always
	// run on the calling goroutine. The result does not depend on Workers:
	// every row and every column is reduced by a single goroutine in a
	// fixed order, so results are bit-identical for any value.
	Workers int
}

// SinkhornResult is the output of Sinkhorn.
type SinkhornResult struct {
	// Plan is the dense n×m regularised transport plan,
	// Plan_ij = math.Exp((F[i] + G[j] − C_ij) / reg).
	Plan *mat.Dense

	// Cost is ⟨C, Plan⟩_F, the transport cost of the regularised plan
	// without the entropy term.
	Cost float64

	// F and G are the dual potentials, in the units of C, with
	// Plan_ij = exp((F_i + G_j − C_ij)/reg). F_i = −Inf exactly when
	// a_i = 0 and G_j = −Inf exactly when b_j = 0; all other entries are
	// finite. The pair is defined up to F + t, G − t; no normalisation is
	// applied.
	F, G []float64

	// Iterations is the number of completed iterations (F and G updates).
	Iterations int

	// Converged reports whether the marginal violation of the iterates fell
	// below Tol within MaxIter iterations (see Sinkhorn for the test). Not
	// converging is not an error.
	Converged bool

	// MarginalError is ‖Plan 1_m − a‖₁ + ‖Planᵀ 1_n − b̃‖₁ evaluated on the
	// returned Plan, where b̃ is b rescaled to the mass of a (b̃ = b when
	// Σa = Σb).
	MarginalError float64
}

// Sinkhorn solves the entropically regularised optimal-transport problem
//
//	min_π ⟨C, π⟩_F + reg·Σ_ij π_ij (log π_ij − 1)
//	subject to  π 1_m = a,  πᵀ 1_n = b̃,  π ≥ 0,
//
// for source weights a (length n), target weights b (length m), an n×m cost
// matrix C and a regularisation strength reg > 0, in the units of C. A nil a
// or b stands for uniform weights 1/n or 1/m. The sums of a and b may differ
// by a relative 1e-9; b is rescaled to b̃ = b·(Σa/Σb) so that the problem is
// feasible. The settings s may be nil.
//
// The solution has the form π_ij = exp((F_i + G_j − C_ij)/reg), where the
// potentials F ∈ Rⁿ and G ∈ Rᵐ maximise the concave dual
//
//	⟨a, F⟩ + ⟨b̃, G⟩ − reg·Σ_ij exp((F_i + G_j − C_ij)/reg).
//
// Starting from G = 0, Sinkhorn alternates exact maximisation over F and
// over G (the Sinkhorn–Knopp iteration written in the log domain):
//
//	F_i ← reg·log a_i − reg·LSE_j((G_j − C_ij)/reg),   i = 1, …, n,
//	G_j ← reg·log b̃_j − reg·LSE_i((F_i − C_ij)/reg),   j = 1, …, m,
//
// where LSE_k(x_k) = s + log Σ_k exp(x_k − s) is evaluated with a shift s
// within 300 of max_k x_k, so that no exponential overflows and the largest
// term never underflows; this keeps the iteration stable for reg far below
// the scale of C (1e-4·max C and less), where the kernel exp(−C/reg) of
// the classical iteration underflows.
//
// The exponents are rounded relative to |C|/reg. When max|C_ij|/reg
// exceeds 2²⁰, Sinkhorn therefore iterates on C' = C − r1ᵀ − 1sᵀ, where
// r_i is the minimum of row i of C and s_j the minimum of column j of
// C − r1ᵀ: the optimal plan is the same, the exponents are as small as
// shifts can make them, and the returned F and G are those of C (F + r,
// G + s). When even max C'_ij/reg exceeds 10¹², float64 cannot represent
// the plan to better than 10⁻⁴ of its entries (nor would the iteration
// converge in practice), and Sinkhorn returns an error. A zero weight gives log 0 = −Inf: the
// corresponding potential is −Inf, its row or column of the plan is exactly
// zero, and it takes no part in the iteration.
//
// After a G update the column sums of π equal b̃ up to rounding. Before each
// F update, Sinkhorn evaluates the L1 marginal violation
// ‖π1_m − a‖₁ + ‖πᵀ1_n − b̃‖₁ of the current plan from the log-sum-exps of
// that update, at the cost of n + m exponentials, and stops without applying
// the update when the violation is below Tol or when MaxIter iterations
// have been done. Converged is true when the iteration stopped on Tol and
// the returned plan's MarginalError, computed anew from its entries, is
// below Tol too. The returned potentials are
// therefore always those just after a G update, and every plan entry is at
// most max_j b̃_j. The number of iterations needed grows as reg decreases;
// on nearly degenerate problems with reg ≪ max C the violation may decay
// only like 1/k in the iteration count k.
//
// Sinkhorn needs O(nm) memory besides C and the plan: it keeps a transposed
// copy of C so that the column-wise pass reads memory contiguously. Each
// iteration takes about 2nm exponentials; for n·m ≥ 2¹⁶ the passes are split
// over up to s.Workers goroutines with bit-identical results.
//
// Sinkhorn returns an error, prefixed "ot: ", when C is nil, empty or has a
// NaN or infinite entry; when a or b has the wrong length, a negative, NaN or
// infinite entry, or a sum outside [1e-100, 1e100] (Tol is an absolute
// amount of mass: rescale such weights); when Σa and Σb differ by more than
// a relative 1e-9; when reg is not positive and finite, C/reg overflows or
// the spread of C/reg exceeds 10¹² (above); or when a field of s is
// invalid.
func Sinkhorn(a, b []float64, C mat.Matrix, reg float64, s *SinkhornSettings) (*SinkhornResult, error) {
	if !(reg > 0) || math.IsInf(reg, 1) {
		return nil, fmt.Errorf("ot: sinkhorn: reg must be positive and finite, got %g", reg)
	}
	tol, maxIter, workers, err := sinkhornConfig(s)
	if err != nil {
		return nil, err
	}
	c, n, m, err := costData(C)
	if err != nil {
		return nil, err
	}
	a, b, err = checkMarginals(a, b, n, m)
	if err != nil {
		return nil, err
	}
	if _, err := checkMass("sinkhorn", a); err != nil {
		return nil, err
	}
	invReg := 1 / reg
	maxAbs := maxAbsOf(c)
	if !(maxAbs*invReg <= math.MaxFloat64/16) {
		return nil, fmt.Errorf("ot: sinkhorn: reg = %g is too small for costs of magnitude %g: C/reg overflows", reg, maxAbs)
	}
	given := c
	var rowShift, colShift []float64
	if maxAbs*invReg > shiftAbove {
		c, rowShift, colShift = shiftCosts(c, n, m)
		if spread := maxAbsOf(c); spread*invReg > maxExponent {
			return nil, fmt.Errorf("ot: sinkhorn: reg = %g is too small for costs spread over %g: the exponents (F+G−C)/reg reach %.3g, beyond the 1e12 that float64 represents to 1e-4; use a larger reg (or EMD)", reg, spread, spread*invReg)
		}
	}

	if n*m < parallelMin {
		workers = 1
	}
	workers = min(workers, max(n, m))
	p := newPool(workers)
	defer p.close()

	sk := newSinkhornSolver(a, b, c, n, m, invReg)
	p.run(m, sk.transpose)
	iter, converged := sk.iterate(p, tol, maxIter)

	res := &SinkhornResult{
		F:          make([]float64, n),
		G:          make([]float64, m),
		Iterations: iter,
		Converged:  converged,
	}
	for i, v := range sk.f {
		res.F[i] = reg * v
	}
	for j, v := range sk.g {
		res.G[j] = reg * v
	}
	res.Plan, res.Cost, res.MarginalError = sk.plan(p, res.F, res.G, reg)
	res.Converged = converged && res.MarginalError < tol
	if rowShift != nil {
		// The cost and the potentials of C as given.
		res.Cost = 0
		for k, v := range res.Plan.RawMatrix().Data {
			res.Cost += v * given[k]
		}
		for i, r := range rowShift {
			res.F[i] += r
		}
		for j, s := range colShift {
			res.G[j] += s
		}
	}
	return res, nil
}

// checkMass returns Σa, or an error (naming the solver) when it lies
// outside [minMass, maxMass].
func checkMass(solver string, a []float64) (float64, error) {
	var mass float64
	for _, v := range a {
		mass += v
	}
	if !(mass >= minMass && mass <= maxMass) {
		return 0, fmt.Errorf("ot: %s: the weights sum to %g, outside [%g, %g]: rescale them (the plan scales with them)", solver, mass, minMass, maxMass)
	}
	return mass, nil
}

// maxAbsOf returns max_k |c_k|.
func maxAbsOf(c []float64) float64 {
	var mx float64
	for _, v := range c {
		mx = math.Max(mx, math.Abs(v))
	}
	return mx
}

// shiftCosts returns C' = C − r1ᵀ − 1sᵀ (a new slice) with r_i the minimum
// of row i of C and s_j the minimum of column j of C − r1ᵀ, and r and s.
func shiftCosts(c []float64, n, m int) (shifted, r, s []float64) {
	shifted = make([]float64, n*m)
	r = make([]float64, n)
	s = make([]float64, m)
	for j := range s {
		s[j] = math.Inf(1)
	}
	for i := range r {
		row := c[i*m : (i+1)*m]
		r[i] = row[0]
		for _, v := range row {
			r[i] = math.Min(r[i], v)
		}
		out := shifted[i*m : (i+1)*m]
		for j, v := range row {
			out[j] = v - r[i]
			s[j] = math.Min(s[j], out[j])
		}
	}
	for i := 0; i < n; i++ {
		out := shifted[i*m : (i+1)*m]
		for j := range out {
			out[j] -= s[j]
		}
	}
	return shifted, r, s
}

// sinkhornSolver holds the state of one Sinkhorn run. Potentials are kept
// scaled by 1/reg: f = F/reg, g = G/reg.
type sinkhornSolver struct {
	n, m   int
	a, b   []float64 // a and the rescaled b̃
	c, ct  []float64 // C (n×m) and Cᵀ (m×n), row-major
	invReg float64

	loga, logb []float64 // −Inf for zero weights
	f, g       []float64
	lr, lc     []float64 // last row and column log-sum-exps, used as shifts
	errR, errC []float64 // per-row and per-column marginal violations

	rowFn, colFn func(lo, hi int) // method values, bound once
}

func newSinkhornSolver(a, b, c []float64, n, m int, invReg float64) *sinkhornSolver {
	var sa, sb float64
	for _, v := range a {
		sa += v
	}
	for _, v := range b {
		sb += v
	}
	sk := &sinkhornSolver{
		n: n, m: m,
		a: a, b: make([]float64, m),
		c: c, ct: make([]float64, m*n),
		invReg: invReg,
		loga:   make([]float64, n), logb: make([]float64, m),
		f: make([]float64, n), g: make([]float64, m),
		lr: make([]float64, n), lc: make([]float64, m),
		errR: make([]float64, n), errC: make([]float64, m),
	}
	ratio := sa / sb
	for j, v := range b {
		sk.b[j] = v * ratio
		sk.logb[j] = math.Log(sk.b[j])
		if v == 0 {
			sk.g[j] = math.Inf(-1)
		}
	}
	for i, v := range a {
		sk.loga[i] = math.Log(v)
		if v == 0 {
			sk.f[i] = math.Inf(-1)
		}
	}
	sk.rowFn = sk.rowPass
	sk.colFn = sk.colPass
	return sk
}

// transpose writes rows [lo, hi) of Cᵀ, by 32×32 blocks.
func (sk *sinkhornSolver) transpose(lo, hi int) {
	const bs = 32
	n, m := sk.n, sk.m
	for j0 := lo; j0 < hi; j0 += bs {
		j1 := min(j0+bs, hi)
		for i0 := 0; i0 < n; i0 += bs {
			i1 := min(i0+bs, n)
			for j := j0; j < j1; j++ {
				dst := sk.ct[j*n+i0 : j*n+i1]
				for k := range dst {
					dst[k] = sk.c[(i0+k)*m+j]
				}
			}
		}
	}
}

// rowPass computes, for the rows i in [lo, hi) with a_i > 0, the
// log-sum-exp lr_i = LSE_j(g_j − C_ij/reg) and the violation
// |exp(f_i + lr_i) − a_i| of row i of the current plan.
func (sk *sinkhornSolver) rowPass(lo, hi int) {
	m := sk.m
	for i := lo; i < hi; i++ {
		if math.IsInf(sk.loga[i], -1) {
			continue
		}
		l := logSumExp(sk.c[i*m:(i+1)*m], sk.g, sk.invReg, sk.lr[i])
		sk.lr[i] = l
		sk.errR[i] = math.Abs(math.Exp(sk.f[i]+l) - sk.a[i])
	}
}

// colPass computes, for the columns j in [lo, hi) with b̃_j > 0, the
// log-sum-exp lc_j = LSE_i(f_i − C_ij/reg), updates g_j = log b̃_j − lc_j and
// records the column violation |exp(g_j + lc_j) − b̃_j| (a rounding error).
func (sk *sinkhornSolver) colPass(lo, hi int) {
	n := sk.n
	for j := lo; j < hi; j++ {
		if math.IsInf(sk.logb[j], -1) {
			continue
		}
		l := logSumExp(sk.ct[j*n:(j+1)*n], sk.f, sk.invReg, sk.lc[j])
		sk.lc[j] = l
		sk.g[j] = sk.logb[j] - l
		sk.errC[j] = math.Abs(math.Exp(sk.g[j]+l) - sk.b[j])
	}
}

// iterate runs the Sinkhorn iterations and reports the number of completed
// iterations and whether the tolerance was met.
func (sk *sinkhornSolver) iterate(p *pool, tol float64, maxIter int) (iter int, converged bool) {
	for {
		p.run(sk.n, sk.rowFn)
		if iter > 0 {
			var e float64
			for _, v := range sk.errR {
				e += v
			}
			for _, v := range sk.errC {
				e += v
			}
			if e < tol {
				return iter, true
			}
		}
		if iter == maxIter {
			return iter, false
		}
		for i, la := range sk.loga {
			if !math.IsInf(la, -1) {
				sk.f[i] = la - sk.lr[i]
			}
		}
		p.run(sk.m, sk.colFn)
		iter++
	}
}

// plan materialises π_ij = exp((F_i + G_j − C_ij)/reg) and returns it with
// its cost ⟨C, π⟩ and its L1 marginal violation.
func (sk *sinkhornSolver) plan(p *pool, F, G []float64, reg float64) (*mat.Dense, float64, float64) {
	n, m := sk.n, sk.m
	plan := make([]float64, n*m)
	rowSum, rowCost, colSum := sk.errR, sk.lr, make([]float64, m) // errR and lr are free now
	p.run(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := plan[i*m : (i+1)*m]
			if math.IsInf(F[i], -1) {
				rowSum[i], rowCost[i] = 0, 0 // row is already zero
				continue
			}
			crow := sk.c[i*m : (i+1)*m]
			var s, cost float64
			for j := range row {
				v := math.Exp((F[i] + G[j] - crow[j]) / reg)
				row[j] = v
				s += v
				cost += v * crow[j]
			}
			rowSum[i], rowCost[i] = s, cost
		}
	})
	p.run(m, func(lo, hi int) {
		cs := colSum[lo:hi]
		for i := 0; i < n; i++ {
			for k, v := range plan[i*m+lo : i*m+hi] {
				cs[k] += v
			}
		}
	})
	var cost, e float64
	for i, v := range rowCost {
		cost += v
		e += math.Abs(rowSum[i] - sk.a[i])
	}
	for j, v := range colSum {
		e += math.Abs(v - sk.b[j])
	}
	return mat.NewDense(n, m, plan), cost, e
}

// lseWindow bounds how far the shift of logSumExp may lie from the maximum.
const lseWindow = 300

// logSumExp returns log Σ_j exp(pot_j − c_j·invReg) for len(c) terms. shift
// is a guess of the result (the previous value); it is used directly when
// the largest exponent lies within lseWindow of it, which saves the pass
// that finds the maximum, and replaced by the maximum otherwise. The result
// does not depend on the guess beyond rounding.
func logSumExp(c, pot []float64, invReg, shift float64) float64 {
	s, mx := sumExpShifted(c, pot, invReg, shift)
	if mx < -lseWindow || mx > lseWindow {
		shift += mx
		s, _ = sumExpShifted(c, pot, invReg, shift)
	}
	return shift + math.Log(s)
}

// Constants of expNeg.
const (
	expTabBits = 8
	expTabN    = 1 << expTabBits
	expLn2Hi   = 6.93147180369123816490e-01 // high bits of ln 2, trailing zeros
	expLn2Lo   = 1.90821492927058770002e-10 // ln 2 − expLn2Hi
	expShifter = 0x1.8p52                   // rounds to an integer when added
	expUnder   = -708                       // exp(x) is treated as 0 below this
)

// expTab holds the bits of 2^(k/expTabN), k = 0, …, expTabN−1.
var expTab = func() (t [expTabN]uint64) {
	for k := range t {
		t[k] = math.Float64bits(math.Exp2(float64(k) / expTabN))
	}
	return t
}()

var expShifterBits = int64(math.Float64bits(expShifter))

// sumExpShifted returns s = Σ_j exp(x_j) and mx = max_j x_j for
// x_j = pot_j − c_j·invReg − shift. Terms with x_j < −708 count as zero.
// Only when mx ≤ 700 is s meaningful.
//
// The exponential is inlined: x = (k·256 + i)·ln2/256 + r with |r| ≤
// ln2/512, exp(x) = 2^k · 2^(i/256) · exp(r), exp(r) by its degree-4 Taylor
// polynomial (truncation error < 4e-17). It agrees with math.Exp to a few
// ulps and is about twice as fast.
func sumExpShifted(c, pot []float64, invReg, shift float64) (s, mx float64) {
	pot = pot[:len(c)]
	mx = math.Inf(-1)
	for j, cj := range c {
		x := pot[j] - cj*invReg - shift
		if x > mx {
			mx = x
		}
		if !(x >= expUnder) {
			continue
		}
		t := x*(expTabN*math.Log2E) + expShifter
		kf := t - expShifter
		k := int64(math.Float64bits(t)) - expShifterBits
		r := x - kf*(expLn2Hi/expTabN) - kf*(expLn2Lo/expTabN)
		q := (((r*(1.0/24)+1.0/6)*r+0.5)*r+1)*r + 1
		s += q * math.Float64frombits(expTab[k&(expTabN-1)]+uint64(k>>expTabBits)<<52)
	}
	return s, mx
}

// expNeg is the exponential of sumExpShifted for a single x ≤ 700. It is
// used in tests.
func expNeg(x float64) float64 {
	s, _ := sumExpShifted([]float64{0}, []float64{x}, 0, 0)
	return s
}

// pool runs a function over index ranges on a fixed set of goroutines.
// A pool with one worker runs everything on the calling goroutine.
type pool struct {
	tasks []chan poolTask
	done  chan struct{}
}

type poolTask struct {
	fn     func(lo, hi int)
	lo, hi int
}

func newPool(workers int) *pool {
	p := &pool{}
	if workers <= 1 {
		return p
	}
	p.tasks = make([]chan poolTask, workers-1)
	p.done = make(chan struct{}, workers-1)
	for w := range p.tasks {
		ch := make(chan poolTask, 1)
		p.tasks[w] = ch
		go func() {
			for t := range ch {
				t.fn(t.lo, t.hi)
				p.done <- struct{}{}
			}
		}()
	}
	return p
}

// run calls fn on a partition of [0, n) into contiguous ranges, one per
// worker, and waits for all of them.
func (p *pool) run(n int, fn func(lo, hi int)) {
	k := len(p.tasks) + 1
	for w := 1; w < k; w++ {
		p.tasks[w-1] <- poolTask{fn, w * n / k, (w + 1) * n / k}
	}
	fn(0, n/k)
	for w := 1; w < k; w++ {
		<-p.done
	}
}

func (p *pool) close() {
	for _, ch := range p.tasks {
		close(ch)
	}
}
