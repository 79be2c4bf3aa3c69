// Package barycenter computes Wasserstein barycenters of empirical
// distributions: the free-support barycenter of Cuturi & Doucet (2014, paper
// eq. 7) and the barycenter of labeled distributions of the DaDiL paper
// (Montesuma, Ngolè Mboula & Souloumiac, ECAI 2023, Algorithm 1).
//
// For measures P_1 … P_K and weights α ∈ Δ_K the barycenter is
//
//	B(α; P) = argmin_B Σ_k α_k W_c(P_k, B)        (paper eq. 6)
//
// over empirical measures B with a fixed number of support points. Both
// functions alternate exact optimal transport (ot.EMD) between every P_k
// and the current support with the move of every support point to the
// α-weighted average of its barycentric images (paper eqs. 5, 7 and 10).
// The K transport problems of an iteration are independent and solved in
// parallel; results do not depend on the number of goroutines.
//
// For K measures of n uniformly weighted points each and a barycenter of n
// points, every optimal plan is a permutation and the iterations take a
// faster, allocation-free form: UniformSolver, on the measures held in a
// Stack. FreeSupport and Labeled use it for such measures when
// Settings.InitSamples is set; DaDiL's learning (package dictionary) uses
// it directly.
//
// Errors returned by this package are prefixed with "barycenter: ".
package barycenter

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/ot"
)

// Measure is an empirical distribution Σ_i w_i δ(x_i), optionally labeled.
type Measure struct {
	// X holds the support, one point per row (n×d).
	X *mat.Dense
	// Y holds soft labels (n×c, each row a probability vector; one-hot for
	// hard labels), or is nil for an unlabeled measure.
	Y *mat.Dense
	// W holds the weights of the points; nil means uniform weights 1/n.
	W []float64
}

// Settings control the barycenter iterations. The zero value (or a nil
// *Settings) gives the defaults.
type Settings struct {
	// Support is the number n_B of barycenter points. It defaults to the
	// number of rows of Init, else to the size of the largest measure.
	Support int
	// MaxIter is N_itb, the maximal number of iterations; default 10.
	MaxIter int
	// Tol is τ: iterations stop when |J_it − J_it−1| < τ (Algorithm 1,
	// line 4), J being the weighted transport cost. Default 1e-9.
	Tol float64
	// Beta is β, the weight of the label term of the ground cost
	// C_ij = ‖x_i − x_j‖² + β‖y_i − y_j‖² (paper eq. 9); Labeled only.
	// Zero selects, for every transport problem, β = max_ij ‖x_i − x_j‖²,
	// the largest feature cost of the pair, so that labels weigh as much as
	// features whatever the scale of the data. Negative values are an error.
	Beta float64
	// Init, when not nil, is the initial support (X, and Y for Labeled);
	// its weights are ignored. Otherwise the support is initialised as in
	// Algorithm 1: x_i ~ N(0, I_d) and, for Labeled, y_i one-hot of a class
	// drawn uniformly, using Rand — unless InitSamples is set.
	Init *Measure
	// InitSamples, when Init is nil, initialises the support with n_B
	// points (and their labels) drawn without replacement from the union
	// of the measures' supports, using Rand (when n_B exceeds the union's
	// size, the points of one random permutation of the union are taken
	// in turn, so each is drawn ⌊n_B/size⌋ or ⌈n_B/size⌉ times). Starting next to the data
	// makes the first transport plans meaningful, where N(0, I) points far
	// from data of another scale would be matched almost at random.
	InitSamples bool
	// Rand is the source for the default initialisation; nil means a
	// generator seeded with 1.
	Rand *rand.Rand
	// Workers bounds the number of transport problems solved at once;
	// 0 means runtime.GOMAXPROCS(0). It must not be negative.
	Workers int
}

// Result is a barycenter and the transport plans that produced it.
type Result struct {
	// Measure is the barycenter: support X (n_B×d), labels Y (n_B×c, for
	// Labeled) and uniform weights W.
	Measure
	// Plans holds π^(k), the optimal plans of the last iteration between
	// measure k (rows) and the support before the last update (columns).
	// The returned support is their image:
	//
	//	x_i = Σ_k α_k Σ_l π^(k)_li x^(k)_l / Σ_l π^(k)_li,
	//
	// and likewise for the labels, so a caller can differentiate the
	// barycenter with respect to the measures and α with the plans held
	// fixed (the envelope-theorem rule of the paper's appendix).
	Plans []ot.Plan
	// Costs holds ⟨C^(k), π^(k)⟩ for every k, and Cost their α-weighted
	// sum J of the last iteration.
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

// FreeSupport returns the free-support Wasserstein barycenter (squared
// Euclidean cost) of the measures with weights alpha (Cuturi & Doucet 2014,
// paper eq. 7). Each iteration solves the K problems π^(k) = OT(P_k, B) and
// moves every support point to Σ_k α_k T_{π^(k)}(x_i), the minimiser of the
// objective for fixed plans (step θ = 0 in eq. 7), so the objective never
// increases. Labels of the measures, if any, are ignored.
func FreeSupport(measures []Measure, alpha []float64, s *Settings) (*Result, error) {
	return solve(measures, alpha, s, false)
}

// Labeled returns the labeled Wasserstein barycenter of Algorithm 1: the
// ground cost C_ij = ‖x_i − x_j‖² + β‖y_i − y_j‖² (eq. 9) couples features
// and labels, and each iteration moves both the features and the soft labels
// of the support to their α-weighted barycentric images (eq. 10). Every
// measure must be labeled with the same number of classes, each row of its
// labels Y a probability vector (non-negative, summing to 1 within 1e-6).
//
// Both barycenters hold a cost matrix per measure, n_B × n_k numbers,
// and for uniform measures of n_B points each also their inner products
// with the support, n_B × K·n_B: about (2K + 1)·n² numbers for K measures
// of n points (2.4 GB at K = 3 and n = 6500), and exact transport that
// grows like n³. dictionary.Reconstruct splits atoms of more than 2048
// points into blocks for that reason.
func Labeled(measures []Measure, alpha []float64, s *Settings) (*Result, error) {
	return solve(measures, alpha, s, true)
}

func solve(measures []Measure, alpha []float64, s *Settings, labeled bool) (*Result, error) {
	var set Settings
	if s != nil {
		set = *s
	}
	d, c, err := check(measures, alpha, &set, labeled)
	if err != nil {
		return nil, err
	}
	if set.MaxIter == 0 {
		set.MaxIter = 10
	}
	if set.Tol == 0 {
		set.Tol = 1e-9
	}
	if set.Workers <= 0 {
		set.Workers = runtime.GOMAXPROCS(0)
	}
	nb := supportSize(measures, &set)
	if set.Init == nil && set.InitSamples && permFits(measures, nb) {
		return solvePerm(measures, alpha, &set, labeled, nb, d, c)
	}
	K := len(measures)
	res := &Result{
		Plans:   make([]ot.Plan, K),
		Costs:   make([]float64, K),
		History: make([]float64, 0, set.MaxIter),
	}
	initSupport(res, measures, &set, labeled, nb, d, c)
	if err := iterate(res, measures, alpha, &set, labeled); err != nil {
		return nil, err
	}
	return res, nil
}

// supportSize returns n_B, the number of support points: that of
// s.Init, else s.Support, else the largest measure's.
func supportSize(measures []Measure, s *Settings) int {
	nb := s.Support
	if s.Init != nil {
		nb, _ = s.Init.X.Dims()
	}
	if nb == 0 {
		for _, m := range measures {
			nb = max(nb, m.X.RawMatrix().Rows)
		}
	}
	return nb
}

// initSupport sets res's initial support of nb points with uniform
// weights: a copy of s.Init, points drawn from the measures
// (s.InitSamples), or, as in Algorithm 1, x_i ~ N(0, I_d) and, labeled,
// y_i one-hot of a class drawn uniformly; draws use s.Rand (nil: a
// generator seeded with 1).
func initSupport(res *Result, measures []Measure, s *Settings, labeled bool, nb, d, c int) {
	res.W = ot.Uniform(nb)
	res.X = mat.NewDense(nb, d, nil)
	if labeled {
		res.Y = mat.NewDense(nb, c, nil)
	}
	if s.Init != nil {
		res.X.Copy(s.Init.X)
		if labeled {
			res.Y.Copy(s.Init.Y)
		}
		return
	}
	rng := s.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 0))
	}
	if s.InitSamples {
		initFromSamples(res, measures, rng, labeled)
		return
	}
	raw := res.X.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	if labeled {
		for i := 0; i < nb; i++ {
			res.Y.Set(i, rng.IntN(c), 1)
		}
	}
}

// iterate runs the fixed-point iterations of Algorithm 1 from res's
// support: solve the K problems π^(k) = OT(P_k, B) in parallel, record
// J = Σ_k α_k ⟨C^(k), π^(k)⟩, and move the support (and, labeled, its
// labels) to Σ_k α_k T_{π^(k)} (eqs. 7 and 10), until |J_it − J_it−1| <
// s.Tol or s.MaxIter iterations.
func iterate(res *Result, measures []Measure, alpha []float64, s *Settings, labeled bool) error {
	work := make([]worker, len(measures))
	for k := range work {
		work[k].measure = &measures[k]
	}
	nb, d := res.X.Dims()
	next := mat.NewDense(nb, d, nil)
	var nextY *mat.Dense
	if labeled {
		_, c := res.Y.Dims()
		nextY = mat.NewDense(nb, c, nil)
	}
	prev := math.NaN()
	for it := 1; it <= s.MaxIter; it++ {
		err := par.Run(len(work), s.Workers, func(k int) error {
			if err := work[k].transport(&res.Measure, s.Beta, labeled, &res.Plans[k]); err != nil {
				return fmt.Errorf("barycenter: measure %d: %w", k, err)
			}
			return nil
		}, nil)
		if err != nil {
			return err
		}
		J := 0.0
		for k := range work {
			res.Costs[k] = work[k].cost
			J += alpha[k] * work[k].cost
		}
		res.Cost = J
		res.History = append(res.History, J)
		res.Iterations = it

		mapSupport(next, res.Plans, measures, alpha, false)
		res.X, next = next, res.X
		if labeled {
			mapSupport(nextY, res.Plans, measures, alpha, true)
			res.Y, nextY = nextY, res.Y
		}
		if math.Abs(J-prev) < s.Tol {
			res.Converged = true
			break
		}
		prev = J
	}
	return nil
}

// worker holds the per-measure buffers reused across iterations.
type worker struct {
	measure *Measure
	solver  ot.EMDSolver
	sol     ot.EMDResult
	assign  ot.AssignmentSolver
	perm    ot.AssignmentResult
	C, CY   mat.Dense
	cost    float64
}

// transport solves OT between the worker's measure and the support b and
// stores the plan in plan.
func (w *worker) transport(b *Measure, beta float64, labeled bool, plan *ot.Plan) error {
	m := w.measure
	if err := ot.SqEuclidean(&w.C, m.X, b.X); err != nil {
		return err
	}
	if labeled {
		if err := ot.SqEuclidean(&w.CY, m.Y, b.Y); err != nil {
			return err
		}
		bt := beta
		if bt == 0 {
			bt = mat.Max(&w.C)
		}
		w.C.Add(&w.C, scaled(&w.CY, bt))
	}
	n, _ := m.X.Dims()
	if nb, _ := b.X.Dims(); n == nb && m.W == nil {
		// Uniform weights on both sides and equal sizes: an optimal plan
		// is a permutation divided by n (Birkhoff), found exactly and
		// faster by the assignment solver.
		if err := w.assign.Solve(&w.perm, &w.C); err != nil {
			return err
		}
		w.cost = w.perm.Cost / float64(n)
		permutationPlan(plan, w.perm.Perm)
		return nil
	}
	if err := w.solver.Solve(&w.sol, m.W, b.W, &w.C); err != nil {
		return err
	}
	w.cost = w.sol.Cost
	plan.N, plan.M = w.sol.Plan.N, w.sol.Plan.M
	plan.Row = append(plan.Row[:0], w.sol.Plan.Row...)
	plan.Col = append(plan.Col[:0], w.sol.Plan.Col...)
	plan.Mass = append(plan.Mass[:0], w.sol.Plan.Mass...)
	return nil
}

// maxPerm bounds the entries of the inner-product matrices (support ×
// stacked points, and the stack's Gram matrix when the Stack uses one)
// solvePerm may allocate (1.2 GB of float64). (A variable for the tests.)
var maxPerm = 150_000_000

// permFits reports whether the measures can go through solvePerm: uniform
// weights, all of the barycenter's size, and inner-product matrices that
// fit in maxPerm entries: the support × stacked points ones of the direct
// way at least, the stack's Gram matrix too if it is to be used (see
// permGram).
func permFits(measures []Measure, nb int) bool {
	for _, m := range measures {
		if r, _ := m.X.Dims(); m.W != nil || r != nb {
			return false
		}
	}
	return nb*len(measures)*nb <= maxPerm
}

// permGram reports whether solvePerm computes the Gram matrix of the K
// stacked measures of nb points: when Stack.Prepare prefers it and it fits
// in maxPerm entries. Otherwise the direct way keeps the memory at nb × K·nb
// (many classes make K·nb large: 65 classes at 100 points each and K = 3
// would need a 3 GB Gram matrix).
func permGram(K, nb int) bool {
	return usesGram(K, 1) && K*nb*K*nb <= maxPerm
}

// solvePerm runs the same iterations as solve with a UniformSolver: with
// uniform weights and equal sizes every plan is a permutation, so every
// support point is a weighted sum of one point per measure, and an
// iteration needs new inner products with the data only for the support
// points that moved. Its results equal solve's up to rounding.
func solvePerm(measures []Measure, alpha []float64, set *Settings, labeled bool, nb, d, c int) (*Result, error) {
	st := stackOf(measures, labeled, nb, d, c)
	rng := set.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 0))
	}
	// The same initial support as initFromSamples.
	init := rng.Perm(len(measures) * nb)[:nb]
	u := UniformSolver{Beta: set.Beta, MaxIter: set.MaxIter, Tol: set.Tol, Workers: set.Workers}
	var r UniformResult
	if err := u.Solve(&r, st, alpha, init); errors.Is(err, errCosts) {
		// Finite data whose squared distances overflow.
		return nil, fmt.Errorf("%w (do the features overflow when squared?)", err)
	} else if err != nil {
		return nil, err
	}
	res := &Result{
		Plans:      make([]ot.Plan, len(measures)),
		Costs:      r.Costs,
		History:    r.History,
		Cost:       r.Cost,
		Iterations: r.Iterations,
		Converged:  r.Converged,
	}
	res.W = ot.Uniform(nb)
	res.X, res.Y = r.X, r.Y
	perm := make([]int, nb)
	for k := range res.Plans {
		for j, l := range r.Match[k] {
			perm[l] = j
		}
		permutationPlan(&res.Plans[k], perm)
	}
	return res, nil
}

// stackOf returns the measures stacked, with their labels if labeled, and
// prepared for one barycenter.
func stackOf(measures []Measure, labeled bool, nb, d, c int) *Stack {
	if !labeled {
		c = 0
	}
	st := NewStack(len(measures), nb, d, c)
	for k, m := range measures {
		if labeled {
			st.SetMeasure(k, m.X, m.Y)
		} else {
			st.SetMeasure(k, m.X, nil)
		}
	}
	st.NoGram = !permGram(len(measures), nb)
	st.Prepare(1)
	return st
}

// permutationPlan writes the plan of the permutation perm (row i sends
// 1/n to column perm[i]) into plan.
func permutationPlan(plan *ot.Plan, perm []int) {
	n := len(perm)
	plan.N, plan.M = n, n
	plan.Row = plan.Row[:0]
	plan.Col = plan.Col[:0]
	plan.Mass = plan.Mass[:0]
	w := 1 / float64(n)
	for i, j := range perm {
		plan.Row = append(plan.Row, i)
		plan.Col = append(plan.Col, j)
		plan.Mass = append(plan.Mass, w)
	}
}

// initFromSamples fills res's support with points drawn without
// replacement from the union of the measures' supports.
func initFromSamples(res *Result, measures []Measure, rng *rand.Rand, labeled bool) {
	total := 0
	for _, m := range measures {
		r, _ := m.X.Dims()
		total += r
	}
	nb, _ := res.X.Dims()
	pick := rng.Perm(total)
	for i := 0; i < nb; i++ {
		g := pick[i%total]
		k := 0
		for {
			r, _ := measures[k].X.Dims()
			if g < r {
				break
			}
			g -= r
			k++
		}
		copy(res.X.RawRowView(i), measures[k].X.RawRowView(g))
		if labeled {
			copy(res.Y.RawRowView(i), measures[k].Y.RawRowView(g))
		}
	}
}

// scaled scales A in place by f and returns it.
func scaled(A *mat.Dense, f float64) *mat.Dense {
	A.Scale(f, A)
	return A
}

// mapSupport writes into dst the α-weighted barycentric images of the
// support: dst_i = Σ_k α_k Σ_l π^(k)_li v^(k)_l / Σ_l π^(k)_li, where v is
// the features (or, with labels, the labels) of measure k.
func mapSupport(dst *mat.Dense, plans []ot.Plan, measures []Measure, alpha []float64, labels bool) {
	dst.Zero()
	nb, dim := dst.Dims()
	mass := make([]float64, nb)
	acc := make([]float64, nb*dim)
	for k := range plans {
		p := &plans[k]
		V := measures[k].X
		if labels {
			V = measures[k].Y
		}
		clear(mass)
		clear(acc)
		for e, w := range p.Mass {
			l, i := p.Row[e], p.Col[e]
			mass[i] += w
			a := acc[i*dim : i*dim+dim]
			for q, v := range V.RawRowView(l) {
				a[q] += w * v
			}
		}
		for i := 0; i < nb; i++ {
			if mass[i] == 0 {
				continue
			}
			f := alpha[k] / mass[i]
			row := dst.RawRowView(i)
			for q, v := range acc[i*dim : i*dim+dim] {
				row[q] += f * v
			}
		}
	}
}

// check validates the inputs and returns the feature dimension and the
// number of classes (0 when unlabeled).
func check(measures []Measure, alpha []float64, s *Settings, labeled bool) (d, c int, err error) {
	K := len(measures)
	if K == 0 {
		return 0, 0, fmt.Errorf("barycenter: no measures")
	}
	if err := checkAlpha(alpha, K); err != nil {
		return 0, 0, err
	}
	if d, c, err = checkMeasures(measures, labeled); err != nil {
		return 0, 0, err
	}
	if s.Beta < 0 || math.IsNaN(s.Beta) || math.IsInf(s.Beta, 0) {
		return 0, 0, fmt.Errorf("barycenter: β = %g must be a non-negative number", s.Beta)
	}
	if s.Support < 0 || s.MaxIter < 0 || !(s.Tol >= 0) || s.Workers < 0 {
		return 0, 0, fmt.Errorf("barycenter: negative or NaN setting (Support %d, MaxIter %d, Tol %g, Workers %d)", s.Support, s.MaxIter, s.Tol, s.Workers)
	}
	if s.Init != nil {
		if err := checkInit(s, d, c, labeled); err != nil {
			return 0, 0, err
		}
	}
	return d, c, nil
}

// checkMeasures validates the measures and returns their feature
// dimension and number of classes (0 when unlabeled).
func checkMeasures(measures []Measure, labeled bool) (d, c int, err error) {
	for k := range measures {
		m := &measures[k]
		if m.X == nil || m.X.IsEmpty() {
			return 0, 0, fmt.Errorf("barycenter: measure %d has no support points", k)
		}
		n, dk := m.X.Dims()
		if k == 0 {
			d = dk
		} else if dk != d {
			return 0, 0, fmt.Errorf("barycenter: measure %d has dimension %d, measure 0 has %d", k, dk, d)
		}
		if err := finite(m.X); err != nil {
			return 0, 0, fmt.Errorf("barycenter: measure %d: features %v", k, err)
		}
		if m.W != nil && len(m.W) != n {
			return 0, 0, fmt.Errorf("barycenter: measure %d has %d points but %d weights", k, n, len(m.W))
		}
		if !labeled {
			continue
		}
		if c, err = checkLabels(m, k, n, c); err != nil {
			return 0, 0, err
		}
	}
	return d, c, nil
}

// checkLabels validates the labels of measure k, of n points, against the
// number of classes c of measure 0, and returns their number of classes.
func checkLabels(m *Measure, k, n, c int) (int, error) {
	if m.Y == nil {
		return 0, fmt.Errorf("barycenter: measure %d is unlabeled", k)
	}
	ny, ck := m.Y.Dims()
	if ny != n {
		return 0, fmt.Errorf("barycenter: measure %d has %d points but %d label rows", k, n, ny)
	}
	if k == 0 {
		c = ck
	} else if ck != c {
		return 0, fmt.Errorf("barycenter: measure %d has %d classes, measure 0 has %d", k, ck, c)
	}
	if err := finite(m.Y); err != nil {
		return 0, fmt.Errorf("barycenter: measure %d: labels %v", k, err)
	}
	if err := probabilityRows(m.Y); err != nil {
		return 0, fmt.Errorf("barycenter: measure %d: labels %v", k, err)
	}
	return c, nil
}

// checkInit validates the initial support s.Init against the measures'
// dimension d and number of classes c.
func checkInit(s *Settings, d, c int, labeled bool) error {
	if s.Init.X == nil || s.Init.X.IsEmpty() {
		return fmt.Errorf("barycenter: initial support is empty")
	}
	ni, di := s.Init.X.Dims()
	if di != d {
		return fmt.Errorf("barycenter: initial support has dimension %d, the measures %d", di, d)
	}
	if s.Support != 0 && s.Support != ni {
		return fmt.Errorf("barycenter: Support = %d but the initial support has %d points", s.Support, ni)
	}
	if err := finite(s.Init.X); err != nil {
		return fmt.Errorf("barycenter: initial support: %v", err)
	}
	if !labeled {
		return nil
	}
	if s.Init.Y == nil {
		return fmt.Errorf("barycenter: initial support has no labels")
	}
	if r, ci := s.Init.Y.Dims(); r != ni || ci != c {
		return fmt.Errorf("barycenter: initial labels are %d×%d, want %d×%d", r, ci, ni, c)
	}
	if err := finite(s.Init.Y); err != nil {
		return fmt.Errorf("barycenter: initial labels: %v", err)
	}
	return nil
}

// checkAlpha reports whether alpha is a point of the simplex Δ_K.
func checkAlpha(alpha []float64, K int) error {
	if len(alpha) != K {
		return fmt.Errorf("barycenter: %d weights α for %d measures", len(alpha), K)
	}
	if ok, k, sum := linalg.OnSimplex(alpha, linalg.SimplexTol); k >= 0 {
		return fmt.Errorf("barycenter: α[%d] = %g is not a non-negative number", k, alpha[k])
	} else if !ok {
		return fmt.Errorf("barycenter: α must lie on the simplex, but Σα = %.17g", sum)
	}
	return nil
}

// labelTol is how far from 1 the sum of a row of labels may be: the
// labels a barycenter receives are softmax outputs or convex combinations
// of probability vectors, exact up to rounding.
const labelTol = 1e-6

// probabilityRows reports the first row of Y (finite) that is not a
// probability vector: a negative entry, or a sum farther than labelTol
// from 1.
func probabilityRows(Y *mat.Dense) error {
	r, _ := Y.Dims()
	for i := 0; i < r; i++ {
		row := Y.RawRowView(i)
		if ok, j, sum := linalg.OnSimplex(row, labelTol); j >= 0 {
			return fmt.Errorf("entry (%d, %d) is %g: each row must be a probability vector", i, j, row[j])
		} else if !ok {
			return fmt.Errorf("row %d sums to %g: each row must be a probability vector", i, sum)
		}
	}
	return nil
}

// finite reports the first NaN or infinite entry of A.
func finite(A *mat.Dense) error {
	if i, j, ok := linalg.FirstNonFiniteEntry(A); !ok {
		return fmt.Errorf("entry (%d, %d) is %g", i, j, A.At(i, j))
	}
	return nil
}
