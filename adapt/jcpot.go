package adapt

import (
	"errors"
	"fmt"
	"math"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/ot"
)

// Default values used by JCPOT for zero fields.
const (
	// DefaultJCPOTReg is the entropic regularisation ε, relative to the
	// largest cost of each source (costs are divided by their maximum).
	DefaultJCPOTReg = 1e-3

	// DefaultJCPOTMaxIter caps the number of Bregman iterations.
	DefaultJCPOTMaxIter = 1000

	// DefaultJCPOTTol is the stopping tolerance on the L1 change of the
	// estimated class proportions between two iterations.
	DefaultJCPOTTol = 1e-7
)

// jcpotBound is the largest |log| of a scaling factor before it is absorbed
// into the potentials and the Gibbs kernel is rebuilt.
const jcpotBound = 100

// JCPOT is Joint Class Proportion and Optimal Transport (Redko, Courty,
// Flamary & Tuia, "Optimal transport for multi-source domain adaptation
// under target shift", AISTATS 2019), a multi-source method for target
// shift: the sources and the target share the class-conditional
// distributions up to a small covariate shift, but their class proportions
// differ.
//
// # Estimating the target's class proportions
//
// Write x_i^(k), y_i^(k), i = 1 … n_k, for the rows of source k, n_k^c for
// its number of rows of class c, and x_j, j = 1 … m, for the target rows,
// each of mass b_j = 1/m. For class proportions h ∈ Δ_C, let source k
// carry the weights D₂^(k) h: row i of class c has mass h_c / n_k^c, so
// that the classes of source k weigh h while the rows of a class stay
// uniform. JCPOT estimates the target's class proportions as
//
//	ĥ = argmin_{h ∈ Δ_C} Σ_k λ_k W_ε,k(D₂^(k) h, b),
//
// where W_ε,k is the entropic optimal-transport cost between source k and
// the target, min_γ ⟨C^(k), γ⟩ + ε Σ_ij γ_ij (log γ_ij − 1) over the
// couplings γ with those marginals. The cost is the squared Euclidean
// distance divided by its maximum, C^(k)_ij = ‖x_i^(k) − x_j‖² / max_ij ‖·‖²
// (1 where all costs are zero), so that ε is relative to the costs' scale,
// and λ_k are the source weights (Weights; uniform by default).
//
// The problem is a Wasserstein-barycenter-like problem and is solved, as
// in the paper's Algorithm 1, by iterative Bregman (Kullback–Leibler)
// projections of the Gibbs kernels K^(k) = exp(−C^(k)/ε) onto two sets of
// constraints, starting from γ^(k) = K^(k):
//
//	C₁: γ^(k)ᵀ 1 = b for every k (target marginal):
//	    γ^(k) ← γ^(k) diag(b / γ^(k)ᵀ1);
//	C₂: γ^(k) 1 = D₂^(k) h for every k, for a common h:
//	    h_c ← Π_k (Σ_{i: y_i^(k) = c} (γ^(k) 1)_i)^λ_k,
//	    γ^(k) ← diag(D₂^(k) h / γ^(k) 1) γ^(k).
//
// The class masses Σ_{i: y_i = c} (γ^(k)1)_i are those of D₁^(k) γ^(k) 1 in
// the paper's notation, and h is their λ-weighted geometric mean. When a
// class is absent from some sources, the mean runs over the sources that
// have it (their weights renormalised); a class absent from every source
// gets proportion 0. The iteration stops when the L1 change of h/Σh falls
// below Tol or after MaxIter iterations; Proportions is the last h scaled
// to sum to 1 (before convergence its sum is at most 1).
//
// The couplings are kept as γ_ij = u_i exp(f_i + g_j − C_ij/ε) v_j, the
// potentials f, g split between absorbed values and scaling factors u, v
// (the stabilised scaling algorithm of Schmitzer, SIAM J. Sci. Comput.
// 2019): an iteration costs two matrix-vector products per source, row
// and class masses are carried as logarithms, a factor leaving
// [e^−100, e^100] is absorbed into its potential (and its row or column
// of the kernel rebuilt), and sums that underflow are recomputed in the
// log domain, so that small ε neither overflows nor underflows. The first
// projection onto C₁ is computed in the log domain.
//
// # Classifying the target
//
// The paper labels the target by propagating the source labels through
// the couplings: L = Σ_k λ_k D₁^(k) γ^(k), the mass each target point
// receives from each class, and ŷ_j = argmax_c L_cj. Predict applies this
// rule after a last projection onto C₁ (each target point then receives
// mass b_j from every source) and extends it to any row x through the
// entropic potentials of the source rows: the score of class c is
//
//	s_c(x) = Σ_k λ_k Σ_{i: y_i^(k) = c} exp(f_i − c_k(x_i, x)/ε) / Σ_i exp(f_i − c_k(x_i, x)/ε),
//
// where c_k is the normalised cost of source k and f the final row
// potentials; for the rows given to Fit, s_c(x_j) = L_cj / b_j, the
// paper's rule. Ties go to the lowest class index. With Reweight, Predict
// instead uses the classical correction for target shift: a softmax
// classifier trained on the sources re-weighted by ĥ.
//
// # Hyper-parameters
//
// The authors select ε by leave-one-source-out validation and normalise
// their costs by the median; the JCPOT of the Python Optimal Transport
// library defaults to ε = 1 on raw costs and 10 Bregman iterations; other
// implementations use ε = 0.1 on costs divided by their maximum. Here the
// costs are divided by their maximum and the defaults, our choices, are
// ε = 1e-3, MaxIter 1000 and Tol 1e-7. A small ε matters: a large one
// blurs the couplings, which pulls the estimated proportions ĥ towards
// uniform and mixes the classes in label propagation. When the classes'
// conditional distributions differ between domains, against the method's
// assumption, ĥ can be far from uniform even for nearly balanced domains;
// the re-weighted classifier (Reweight) then does better with a large ε,
// whose ĥ stays near uniform. On real features the iteration may need
// hundreds of iterations to settle, hence the generous cap. See
// docs/defaults.md for measurements. Source weights λ_k are uniform, as in
// the authors' code.
//
// JCPOT is deterministic: it makes no random choice. An iteration costs
// O(Σ_k n_k m) operations, and Fit holds two n_k×m matrices per source;
// Predict holds the sources and one row potential per source row.
type JCPOT struct {
	// Reg is the entropic regularisation ε, relative to the largest cost
	// of each source. Zero means DefaultJCPOTReg; it must be positive and
	// finite.
	Reg float64

	// MaxIter caps the number of Bregman iterations. Zero means
	// DefaultJCPOTMaxIter; it must not be negative.
	MaxIter int

	// Tol stops the iteration once the L1 change of the class proportions
	// between two iterations is below it. Zero means DefaultJCPOTTol; it
	// must not be negative or NaN.
	Tol float64

	// Weights holds the source weights λ_k, one per source, non-negative
	// with a positive sum (they are normalised); nil means uniform. A
	// source of weight zero takes no part.
	Weights []float64

	// Reweight selects the other classification rule of the paper:
	// Predict uses a softmax classifier (package classify, settings
	// Classifier) trained on all the sources, row i of source k of
	// class c weighted by λ_k ĥ_c / n_k^c, instead of label propagation.
	Reweight bool
	// Map selects the transport rule: every source row is mapped onto the
	// target by the barycentric projection of its final coupling,
	// T(x_i) = Σ_j γ_ij x_j / Σ_j γ_ij (the step of Courty et al.'s OTDA,
	// with JCPOT's couplings), and the classifier is trained on the mapped
	// rows of all sources with their labels, weighted by λ_k and by the
	// mass each row carries. Map takes precedence over Reweight.
	Map        bool
	Classifier classify.Trainer

	// Proportions is the estimated class proportions of the target, ĥ,
	// on the simplex; set by Fit.
	Proportions []float64

	// Iterations is the number of Bregman iterations made by Fit, and
	// Converged reports whether the tolerance was met.
	Iterations int
	Converged  bool

	model      *jcpotModel
	classifier classify.Classifier
}

// jcpotModel is what Predict needs: the active sources with their
// potentials.
type jcpotModel struct {
	classes, dim int
	reg          float64
	sources      []*jcpotSource
}

// jcpotSource is the state of one source's coupling,
//
//	γ_ij = u_i exp(f_i + g_j − c_ij) v_j,  c_ij = C_ij/ε,
//
// where f, g are absorbed potentials (units of ε) and u, v scaling
// factors. A row with u_i = 0 carries no mass.
type jcpotSource struct {
	x      *mat.Dense
	y      []int
	counts []int   // rows per class
	lambda float64 // normalised weight λ_k
	scale  float64 // max of the squared distances (or 1)
	n, m   int
	cost   []float64 // n×m, C/ε
	kern   []float64 // n×m, exp(f_i + g_j − c_ij)
	f, g   []float64
	u, v   []float64
	r      []float64 // log row masses of the current coupling
	colSum []float64
	mass   []float64 // log class masses, log Σ_{y_i = c} exp(r_i)
	clsum  []float64 // scratch, one per class
}

// Name returns "jcpot".
func (m *JCPOT) Name() string { return "jcpot" }

// settings validates the fields of m and returns them with the defaults
// filled in.
func (m *JCPOT) settings(sources int) (reg float64, maxIter int, tol float64, lambda []float64, err error) {
	reg, maxIter, tol = DefaultJCPOTReg, DefaultJCPOTMaxIter, DefaultJCPOTTol
	switch {
	case math.IsNaN(m.Reg) || math.IsInf(m.Reg, 0) || m.Reg < 0:
		return 0, 0, 0, nil, fmt.Errorf("adapt: jcpot: Reg = %g; need a positive, finite value", m.Reg)
	case m.MaxIter < 0:
		return 0, 0, 0, nil, fmt.Errorf("adapt: jcpot: MaxIter = %d is negative", m.MaxIter)
	case math.IsNaN(m.Tol) || m.Tol < 0:
		return 0, 0, 0, nil, fmt.Errorf("adapt: jcpot: Tol = %g; need a value ≥ 0", m.Tol)
	}
	if m.Reg > 0 {
		reg = m.Reg
	}
	if m.MaxIter > 0 {
		maxIter = m.MaxIter
	}
	if m.Tol > 0 {
		tol = m.Tol
	}
	lambda, err = jcpotSourceWeights("jcpot", m.Weights, sources)
	return reg, maxIter, tol, lambda, err
}

// jcpotSourceWeights validates user weights of the sources and returns them
// normalised to sum to 1; nil gives uniform weights.
func jcpotSourceWeights(method string, w []float64, sources int) ([]float64, error) {
	out := make([]float64, sources)
	if w == nil {
		for k := range out {
			out[k] = 1 / float64(sources)
		}
		return out, nil
	}
	if len(w) != sources {
		return nil, fmt.Errorf("adapt: %s: %d weights for %d sources", method, len(w), sources)
	}
	var sum float64
	for k, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("adapt: %s: weight %d is %g; need a finite value ≥ 0", method, k, v)
		}
		sum += v
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("adapt: %s: the source weights sum to %g", method, sum)
	}
	for k, v := range w {
		out[k] = v / sum
	}
	return out, nil
}

// Fit estimates the target's class proportions and the couplings.
func (m *JCPOT) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	sources, target, classes := p.Sources, p.Target.X, p.Classes
	reg, maxIter, tol, lambda, err := m.settings(len(sources))
	if err != nil {
		return err
	}
	m.model, m.classifier, m.Proportions, m.Iterations, m.Converged = nil, nil, nil, 0, false
	nt, d := target.Dims()
	b := 1 / float64(nt)

	var srcs []*jcpotSource
	for k, s := range sources {
		if lambda[k] == 0 {
			continue
		}
		js, err := newJCPOTSource(s, target, classes, lambda[k], reg)
		if err != nil {
			return err
		}
		srcs = append(srcs, js)
	}
	prop, iter, converged, err := jcpotBregman(srcs, jcpotClassWeights(srcs, classes), b, maxIter, tol, reg)
	if err != nil {
		return err
	}
	mapped, mapW, err := jcpotFinish(srcs, target, b, m.Map)
	if err != nil {
		return err
	}
	if err := m.train(p, srcs, mapped, mapW, lambda, prop); err != nil {
		return err
	}
	m.Proportions = append([]float64(nil), prop...)
	m.Iterations, m.Converged = iter, converged
	m.model = &jcpotModel{classes: classes, dim: d, reg: reg, sources: srcs}
	return nil
}

// jcpotClassWeights returns the renormalised weights of the sources per
// class, wc[c][k] = λ_k / Σ_{k' has c} λ_k' for the sources k that have
// class c and 0 for the others: the geometric mean of class c runs over
// the sources that have it.
func jcpotClassWeights(srcs []*jcpotSource, classes int) [][]float64 {
	wc := make([][]float64, classes)
	for c := range wc {
		wc[c] = make([]float64, len(srcs))
		var sum float64
		for _, s := range srcs {
			if s.counts[c] > 0 {
				sum += s.lambda
			}
		}
		for k, s := range srcs {
			if s.counts[c] > 0 {
				wc[c][k] = s.lambda / sum
			}
		}
	}
	return wc
}

// jcpotBregman runs the iterative Bregman projections of the paper's
// Algorithm 1 (see the JCPOT documentation) from γ^(k) = K^(k): onto C₁
// (target marginal b), then onto C₂ (source marginals D₂^(k) h for the
// common h), until the L1 change of h/Σh falls below tol or after maxIter
// iterations. It returns h/Σh, the number of iterations and whether tol
// was met.
func jcpotBregman(srcs []*jcpotSource, wc [][]float64, b float64, maxIter int, tol, reg float64) (prop []float64, iter int, converged bool, err error) {
	classes := len(wc)
	logh := make([]float64, classes)
	prev := make([]float64, classes)
	cur := make([]float64, classes)
	for k := range prev {
		prev[k] = math.NaN()
	}
	for iter < maxIter {
		// Projection onto C₁, then class masses.
		for _, s := range srcs {
			if iter == 0 {
				s.logColumns(b)
			} else if err := s.columns(b); err != nil {
				return nil, iter, false, err
			}
			s.rowMasses()
		}
		// Projection onto C₂: the common h (in logs), then the rows.
		jcpotCommonH(logh, srcs, wc)
		for _, s := range srcs {
			s.rows(logh)
		}
		iter++
		if !jcpotNormalise(cur, logh) {
			return nil, iter, false, fmt.Errorf("adapt: jcpot: class proportions vanished at iteration %d (Reg = %g too small?)", iter, reg)
		}
		delta := floats.Distance(cur, prev, 1)
		copy(prev, cur)
		if delta < tol {
			converged = true
			break
		}
	}
	return prev, iter, converged, nil
}

// jcpotCommonH writes into logh the logarithm of the common class
// proportions of the projection onto C₂, the wc-weighted geometric mean of
// the sources' class masses, log h_c = Σ_k wc[c][k] log m_c^(k); −Inf for
// a class no source has (or whose mean is NaN).
func jcpotCommonH(logh []float64, srcs []*jcpotSource, wc [][]float64) {
	for c := range logh {
		logh[c] = math.Inf(-1)
		any := false
		var lh float64
		for k, s := range srcs {
			if wc[c][k] > 0 {
				lh += wc[c][k] * s.mass[c]
				any = true
			}
		}
		if any && !math.IsNaN(lh) {
			logh[c] = lh
		}
	}
}

// jcpotFinish makes a last projection onto C₁ for the label propagation
// and folds the row scalings into the row potentials, f_i += log u_i,
// before releasing each source's matrices. With mapRule it also returns
// the barycentric maps of the sources' rows onto target and the mass
// each carries.
func jcpotFinish(srcs []*jcpotSource, target *mat.Dense, b float64, mapRule bool) (mapped []*mat.Dense, mapW []float64, err error) {
	for _, s := range srcs {
		if err := s.columns(b); err != nil {
			return nil, nil, err
		}
		if mapRule {
			Xm, w := s.barycentricMap(target)
			mapped = append(mapped, Xm)
			mapW = append(mapW, w...)
		}
		for i, u := range s.u {
			s.f[i] += math.Log(u) // −Inf for a dead row
		}
		s.release()
	}
	return mapped, mapW, nil
}

// train sets the classifier of the transport rule (Map: trained on the
// mapped rows of srcs with weights mapW) or of the re-weighting rule
// (Reweight: trained on all the sources, row i of source k of class c
// weighted by λ_k ĥ_c / n_k^c); label propagation needs none.
func (m *JCPOT) train(p *dataset.Problem, srcs []*jcpotSource, mapped []*mat.Dense, mapW, lambda, prop []float64) error {
	classes := p.Classes
	switch {
	case m.Map:
		var ys []int
		doms := make([]dataset.Domain, len(srcs))
		for k, s := range srcs {
			doms[k] = dataset.Domain{X: mapped[k], Y: s.y}
			ys = append(ys, s.y...)
		}
		X, _ := dataset.Pool(doms)
		clf, err := trainLabels(m.Classifier, X, ys, classes, mapW)
		if err != nil {
			return fmt.Errorf("adapt: jcpot: %w", err)
		}
		m.classifier = clf
	case m.Reweight:
		X, y := p.PoolSources()
		w := make([]float64, 0, len(y))
		for k, s := range p.Sources {
			counts := make([]int, classes)
			for _, c := range s.Y {
				counts[c]++
			}
			for _, c := range s.Y {
				w = append(w, lambda[k]*prop[c]/float64(counts[c]))
			}
		}
		clf, err := trainLabels(m.Classifier, X, y, classes, w)
		if err != nil {
			return fmt.Errorf("adapt: jcpot: %w", err)
		}
		m.classifier = clf
	}
	return nil
}

// jcpotNormalise writes exp(logh) / Σ exp(logh) into dst and reports
// whether the sum is positive and finite.
func jcpotNormalise(dst, logh []float64) bool {
	mx := floats.Max(logh)
	if math.IsInf(mx, 0) || math.IsNaN(mx) {
		return false
	}
	var sum float64
	for c, v := range logh {
		dst[c] = math.Exp(v - mx)
		sum += dst[c]
	}
	floats.Scale(1/sum, dst)
	return true
}

// newJCPOTSource builds the normalised cost of one source and its
// counters.
func newJCPOTSource(s dataset.Domain, target *mat.Dense, classes int, lambda, reg float64) (*jcpotSource, error) {
	n, _ := s.X.Dims()
	nt, _ := target.Dims()
	var C mat.Dense
	if err := ot.SqEuclidean(&C, s.X, target); err != nil {
		return nil, fmt.Errorf("adapt: jcpot: %w", err)
	}
	cost := C.RawMatrix().Data
	if !jcpotFinite(cost) {
		return nil, errors.New("adapt: jcpot: squared distances overflow; rescale the features")
	}
	scale := floats.Max(cost)
	if !(scale > 0) {
		scale = 1
	}
	inv := 1 / (scale * reg)
	if math.IsInf(inv, 0) || math.IsInf(1/reg, 0) {
		return nil, fmt.Errorf("adapt: jcpot: Reg = %g is too small", reg)
	}
	for i := range cost {
		cost[i] *= inv
	}
	js := &jcpotSource{
		x: s.X, y: s.Y, counts: make([]int, classes), lambda: lambda, scale: scale,
		n: n, m: nt, cost: cost, kern: make([]float64, n*nt),
		f: make([]float64, n), g: make([]float64, nt),
		u: make([]float64, n), v: make([]float64, nt),
		r: make([]float64, n), colSum: make([]float64, nt),
		mass: make([]float64, classes), clsum: make([]float64, classes),
	}
	for _, y := range s.Y {
		js.counts[y]++
	}
	for i := range js.u {
		js.u[i] = 1
	}
	for j := range js.v {
		js.v[j] = 1
	}
	return js, nil
}

// jcpotFinite reports whether every entry of v is finite.
func jcpotFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// logColumns performs the first projection onto C₁, of the kernel
// exp(−c_ij), in the log domain: g_j = log b − LSE_i(f_i − c_ij) with
// f = 0, and builds the kernel exp(g_j − c_ij).
func (s *jcpotSource) logColumns(b float64) {
	n, m := s.n, s.m
	mx := s.colSum // max over rows
	for j := range mx {
		mx[j] = math.Inf(-1)
	}
	for i := 0; i < n; i++ {
		for j, c := range s.cost[i*m : (i+1)*m] {
			mx[j] = math.Max(mx[j], s.f[i]-c)
		}
	}
	sum := s.kern[:m] // scratch; the kernel is built below
	for j := range sum {
		sum[j] = 0
	}
	for i := 0; i < n; i++ {
		for j, c := range s.cost[i*m : (i+1)*m] {
			sum[j] += math.Exp(s.f[i] - c - mx[j])
		}
	}
	lb := math.Log(b)
	for j := range s.g {
		s.g[j] = lb - mx[j] - math.Log(sum[j])
		s.v[j] = 1
	}
	for i := 0; i < n; i++ {
		k := s.kern[i*m : (i+1)*m]
		for j, c := range s.cost[i*m : (i+1)*m] {
			k[j] = math.Exp(s.f[i] + s.g[j] - c)
		}
	}
}

// jcpotTiny is the smallest sum trusted in the scaling domain; smaller
// ones are recomputed in the log domain.
const jcpotTiny = 1e-250

// columns performs the projection onto C₁ with the scaling factors,
// v_j = b / Σ_i u_i K_ij, absorbing v_j into g_j when it leaves
// [e^−jcpotBound, e^jcpotBound] and recomputing a column in the log domain
// when its sum underflows.
func (s *jcpotSource) columns(b float64) error {
	sum := s.colSum
	for j := range sum {
		sum[j] = 0
	}
	m := s.m
	for i, u := range s.u {
		if u != 0 {
			floats.AddScaled(sum, u, s.kern[i*m:(i+1)*m])
		}
	}
	for j, t := range sum {
		if t > jcpotTiny && !math.IsInf(t, 0) {
			s.v[j] = b / t
			if math.Abs(math.Log(s.v[j])) <= jcpotBound {
				continue
			}
		}
		if err := s.logColumn(j, b); err != nil {
			return err
		}
	}
	return nil
}

// logColumn sets g_j = log b − LSE_i(f_i + log u_i − c_ij), v_j = 1, and
// rebuilds column j of the kernel.
func (s *jcpotSource) logColumn(j int, b float64) error {
	m := s.m
	mx := math.Inf(-1)
	for i, u := range s.u {
		if u != 0 {
			mx = math.Max(mx, s.f[i]+math.Log(u)-s.cost[i*m+j])
		}
	}
	if math.IsInf(mx, 0) || math.IsNaN(mx) {
		return fmt.Errorf("adapt: jcpot: target row %d receives no mass (Reg too small?)", j)
	}
	var sum float64
	for i, u := range s.u {
		if u != 0 {
			sum += math.Exp(s.f[i] + math.Log(u) - s.cost[i*m+j] - mx)
		}
	}
	s.g[j] = math.Log(b) - mx - math.Log(sum)
	s.v[j] = 1
	for i := range s.u {
		s.kern[i*m+j] = math.Exp(s.f[i] + s.g[j] - s.cost[i*m+j])
	}
	return nil
}

// rowMasses computes the log row masses lr_i = log(u_i Σ_j K_ij v_j) of
// the current coupling and the log class masses, mass[c] =
// log Σ_{y_i = c} exp(lr_i).
func (s *jcpotSource) rowMasses() {
	m := s.m
	for i, u := range s.u {
		if u == 0 {
			s.r[i] = math.Inf(-1)
			continue
		}
		if d := floats.Dot(s.kern[i*m:(i+1)*m], s.v); d > jcpotTiny && !math.IsInf(d, 0) {
			s.r[i] = math.Log(u) + math.Log(d)
			continue
		}
		// Underflow: the log-sum-exp of f_i + g_j + log v_j − c_ij.
		row := s.cost[i*m : (i+1)*m]
		mx := math.Inf(-1)
		for j, c := range row {
			mx = math.Max(mx, s.g[j]+math.Log(s.v[j])-c)
		}
		var sum float64
		for j, c := range row {
			sum += math.Exp(s.g[j] + math.Log(s.v[j]) - c - mx)
		}
		s.r[i] = math.Log(u) + s.f[i] + mx + math.Log(sum)
	}
	for c := range s.mass {
		s.mass[c] = math.Inf(-1)
	}
	for i, lr := range s.r {
		c := s.y[i]
		s.mass[c] = math.Max(s.mass[c], lr)
	}
	sums := s.clsum
	for c := range sums {
		sums[c] = 0
	}
	for i, lr := range s.r {
		c := s.y[i]
		if !math.IsInf(s.mass[c], -1) {
			sums[c] += math.Exp(lr - s.mass[c])
		}
	}
	for c, t := range sums {
		if !math.IsInf(s.mass[c], -1) {
			s.mass[c] += math.Log(t)
		}
	}
}

// rows performs the row update of the projection onto C₂ for the common
// proportions h = exp(logh): u_i ← u_i (h_{y_i}/n^{y_i}) / r_i, absorbing
// u_i into f_i when it leaves [e^−jcpotBound, e^jcpotBound].
func (s *jcpotSource) rows(logh []float64) {
	m := s.m
	for i, u := range s.u {
		if u == 0 {
			continue
		}
		c := s.y[i]
		if math.IsInf(logh[c], -1) {
			s.u[i] = 0 // the class has vanished
			continue
		}
		lu := math.Log(u) + logh[c] - math.Log(float64(s.counts[c])) - s.r[i]
		if math.Abs(lu) <= jcpotBound {
			s.u[i] = math.Exp(lu)
			continue
		}
		s.f[i] += lu
		s.u[i] = 1
		k := s.kern[i*m : (i+1)*m]
		for j, c := range s.cost[i*m : (i+1)*m] {
			k[j] = math.Exp(s.f[i] + s.g[j] - c)
		}
	}
}

// barycentricMap returns the source rows mapped onto the target by the
// barycentric projection of the current coupling, and the weight λ_k·mass
// of every row (rows of zero mass keep their features and weight 0).
func (s *jcpotSource) barycentricMap(target *mat.Dense) (*mat.Dense, []float64) {
	m := s.m
	_, d := target.Dims()
	X := mat.NewDense(s.n, d, nil)
	w := make([]float64, s.n)
	row := make([]float64, m)
	var total float64
	for i := 0; i < s.n; i++ {
		var mass float64
		if s.u[i] != 0 {
			k := s.kern[i*m : (i+1)*m]
			for j := range row {
				row[j] = s.u[i] * k[j] * s.v[j]
				mass += row[j]
			}
		}
		if !(mass > 0) || math.IsInf(mass, 0) {
			copy(X.RawRowView(i), s.x.RawRowView(i))
			continue
		}
		dst := X.RawRowView(i)
		for j, g := range row {
			if g == 0 {
				continue
			}
			floats.AddScaled(dst, g/mass, target.RawRowView(j))
		}
		w[i] = mass
		total += mass
	}
	if total > 0 {
		for i := range w {
			w[i] *= s.lambda / total
		}
	}
	return X, w
}

// release drops what Predict does not need.
func (s *jcpotSource) release() {
	s.cost, s.kern, s.r, s.colSum, s.g, s.u, s.v = nil, nil, nil, nil, nil, nil, nil
}

// jcpotChunk is the number of rows Predict handles at once.
const jcpotChunk = 512

// Predict labels the rows of X by label propagation through the couplings
// (see JCPOT), extended to new rows by the entropic potentials.
func (m *JCPOT) Predict(X *mat.Dense) ([]int, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	if m.classifier != nil {
		pred, err := m.classifier.Predict(X)
		if err != nil {
			return nil, fmt.Errorf("adapt: jcpot: %w", err)
		}
		return pred, nil
	}
	scores, err := m.model.scores(X)
	if err != nil {
		return nil, err
	}
	r, c := scores.Dims()
	pred := make([]int, r)
	for i := range pred {
		pred[i] = floats.MaxIdx(scores.RawRowView(i)[:c])
	}
	return pred, nil
}

// Proba returns the class probabilities of the rows of X: the
// classifier's under the transport or reweighting rule, else the label
// propagation scores s_c(x) normalised to sum to one over the classes (a
// row that no source reaches, all of whose scores are zero, is uniform),
// whose largest is the class Predict returns.
func (m *JCPOT) Proba(X *mat.Dense) (*mat.Dense, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	if m.classifier != nil {
		return probaOf(m.Name(), m.classifier, X)
	}
	P, err := m.model.scores(X)
	if err != nil {
		return nil, err
	}
	r, c := P.Dims()
	for i := range r {
		row := P.RawRowView(i)
		s := floats.Sum(row)
		if s > 0 {
			floats.Scale(1/s, row)
			continue
		}
		for k := range c {
			row[k] = 1 / float64(c)
		}
	}
	return P, nil
}

// scores returns the n×C class scores s_c(x) of the rows of X.
func (md *jcpotModel) scores(X *mat.Dense) (*mat.Dense, error) {
	if X == nil || X.IsEmpty() {
		return nil, errors.New("adapt: jcpot: no rows to predict")
	}
	n, d := X.Dims()
	if d != md.dim {
		return nil, fmt.Errorf("adapt: jcpot: X has %d features, the model %d", d, md.dim)
	}
	if err := finite("X", X); err != nil {
		return nil, err
	}
	out := mat.NewDense(n, md.classes, nil)
	var D mat.Dense
	t := []float64(nil)
	for lo := 0; lo < n; lo += jcpotChunk {
		hi := min(lo+jcpotChunk, n)
		chunk := X.Slice(lo, hi, 0, d).(*mat.Dense)
		for _, s := range md.sources {
			D.Reset()
			if err := ot.SqEuclidean(&D, chunk, s.x); err != nil {
				return nil, fmt.Errorf("adapt: jcpot: %w", err)
			}
			inv := 1 / (s.scale * md.reg)
			if cap(t) < s.n {
				t = make([]float64, s.n)
			}
			t = t[:s.n]
			for q := 0; q < hi-lo; q++ {
				row := D.RawRowView(q)
				mx := math.Inf(-1)
				for i, dist := range row {
					t[i] = s.f[i] - dist*inv
					mx = math.Max(mx, t[i])
				}
				if math.IsInf(mx, -1) {
					continue
				}
				var sum float64
				for i, v := range t {
					e := math.Exp(v - mx)
					t[i] = e
					sum += e
				}
				o := out.RawRowView(lo + q)
				w := s.lambda / sum
				for i, e := range t {
					o[s.y[i]] += w * e
				}
			}
		}
	}
	return out, nil
}
