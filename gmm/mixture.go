package gmm

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Mixture is a Gaussian mixture with diagonal covariances,
//
//	P = Σ_k w_k N(m_k, diag(σ_k²)),   k = 1 … K,
//
// optionally labeled: component k then carries a soft label y_k ∈ R^c
// (one-hot for a component fitted on one class).
type Mixture struct {
	// Weights holds w (K entries), on the probability simplex.
	Weights []float64
	// Means holds the means m_k, one per row (K×d).
	Means *mat.Dense
	// Std holds the standard deviations σ_k, one per row (K×d), all
	// positive: component k has covariance diag(σ_k²).
	Std *mat.Dense
	// Labels holds the components' labels y_k, one per row (K×c; rows are
	// usually probability vectors), or is nil for an unlabeled mixture.
	Labels *mat.Dense
}

// Components returns K, the number of components.
func (m *Mixture) Components() int { return len(m.Weights) }

// Dim returns d, the dimension of the space.
func (m *Mixture) Dim() int {
	_, d := m.Means.Dims()
	return d
}

// Classes returns c, the number of label columns (0 when unlabeled).
func (m *Mixture) Classes() int {
	if m.Labels == nil {
		return 0
	}
	_, c := m.Labels.Dims()
	return c
}

// Clone returns a deep copy of m.
func (m *Mixture) Clone() *Mixture {
	c := &Mixture{
		Weights: append([]float64(nil), m.Weights...),
		Means:   mat.DenseCopyOf(m.Means),
		Std:     mat.DenseCopyOf(m.Std),
	}
	if m.Labels != nil {
		c.Labels = mat.DenseCopyOf(m.Labels)
	}
	return c
}

// Mean returns the mixture's mean Σ_k w_k m_k.
func (m *Mixture) Mean() []float64 {
	mu := make([]float64, m.Dim())
	for k, w := range m.Weights {
		for j, v := range m.Means.RawRowView(k) {
			mu[j] += w * v
		}
	}
	return mu
}

// ClassMeans sets dst (c×d; an empty dst is resized) to the mean of
// every class under a labeled mixture, the components weighed by their
// mass in the class,
//
//	μ_c = Σ_k w_k y_kc m_k / Σ_k w_k y_kc,
//
// and returns the class masses Σ_k w_k y_kc; a class of mass 0 has a
// zero row.
func (m *Mixture) ClassMeans(dst *mat.Dense) ([]float64, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if m.Labels == nil {
		return nil, errf("ClassMeans: the mixture has no labels")
	}
	c := m.Classes()
	if err := reuseAs(dst, c, m.Dim(), "ClassMeans"); err != nil {
		return nil, err
	}
	dst.Zero()
	mass := make([]float64, c)
	for k, w := range m.Weights {
		for j, y := range m.Labels.RawRowView(k) {
			if a := w * y; a != 0 {
				mass[j] += a
				floats.AddScaled(dst.RawRowView(j), a, m.Means.RawRowView(k))
			}
		}
	}
	for j, a := range mass {
		if a > 0 {
			floats.Scale(1/a, dst.RawRowView(j))
		}
	}
	return mass, nil
}

// LogProb sets dst[i] = log p(x_i) = log Σ_k w_k N(x_i; m_k, σ_k²) for the
// rows x_i of X (n×d); dst must have n entries. It runs on GOMAXPROCS
// goroutines; the values do not depend on their number.
func (m *Mixture) LogProb(dst []float64, X *mat.Dense) error {
	n, err := m.checkRows(X)
	if err != nil {
		return err
	}
	if len(dst) != n {
		return errf("LogProb: len(dst) = %d but X has %d rows", len(dst), n)
	}
	m.eval(X, func(r0 int, L *mat.Dense) {
		rows, _ := L.Dims()
		for i := range rows {
			dst[r0+i] = logSumExp(L.RawRowView(i)[:len(m.Weights)])
		}
	})
	return nil
}

// LogLikelihood returns the mean log-likelihood (1/n) Σ_i log p(x_i) of
// the rows of X.
func (m *Mixture) LogLikelihood(X *mat.Dense) (float64, error) {
	n, err := m.checkRows(X)
	if err != nil {
		return 0, err
	}
	lp := make([]float64, n)
	if err := m.LogProb(lp, X); err != nil {
		return 0, err
	}
	var s float64
	for _, v := range lp {
		s += v
	}
	return s / float64(n), nil
}

// Posterior sets dst (n×K) to the responsibilities
//
//	γ_ik = w_k N(x_i; m_k, σ_k²) / Σ_l w_l N(x_i; m_l, σ_l²),
//
// computed in the log domain (log-sum-exp), so that rows far from every
// component still get a posterior. An empty dst is resized.
func (m *Mixture) Posterior(dst, X *mat.Dense) error {
	n, err := m.checkRows(X)
	if err != nil {
		return err
	}
	if err := reuseAs(dst, n, m.Components(), "Posterior"); err != nil {
		return err
	}
	m.eval(X, func(r0 int, L *mat.Dense) {
		rows, _ := L.Dims()
		for i := range rows {
			l := L.RawRowView(i)[:len(m.Weights)]
			logSumExpTo(dst.RawRowView(r0+i), l)
		}
	})
	return nil
}

// Proba sets dst (n×c) to the class probabilities of a labeled mixture,
// the posterior over components times the components' labels:
// p(y | x_i) = Σ_k γ_ik y_k. An empty dst is resized.
func (m *Mixture) Proba(dst, X *mat.Dense) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if m.Labels == nil {
		return errf("Proba: the mixture has no labels")
	}
	var G mat.Dense
	if err := m.Posterior(&G, X); err != nil {
		return err
	}
	n, _ := G.Dims()
	if err := reuseAs(dst, n, m.Classes(), "Proba"); err != nil {
		return err
	}
	dst.Mul(&G, m.Labels)
	return nil
}

// Predict returns the MAP class of every row of X for a labeled mixture:
// argmax_c Σ_k γ_ik y_kc (the smallest class on ties).
func (m *Mixture) Predict(X *mat.Dense) ([]int, error) {
	var P mat.Dense
	if err := m.Proba(&P, X); err != nil {
		return nil, err
	}
	n, _ := P.Dims()
	out := make([]int, n)
	for i := range out {
		out[i] = argmax(P.RawRowView(i))
	}
	return out, nil
}

// Sample fills the rows of dst (n×d) with draws from m using rng, and
// returns the component each row was drawn from.
func (m *Mixture) Sample(dst *mat.Dense, rng *rand.Rand) ([]int, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if dst == nil || dst.IsEmpty() {
		return nil, errf("Sample: dst is empty")
	}
	n, d := dst.Dims()
	if d != m.Dim() {
		return nil, errf("Sample: dst has %d columns but the mixture has dimension %d", d, m.Dim())
	}
	cum := make([]float64, len(m.Weights))
	var s float64
	for k, w := range m.Weights {
		s += w
		cum[k] = s
	}
	comp := make([]int, n)
	for i := range n {
		u := rng.Float64() * s
		k := 0
		for k < len(cum)-1 && cum[k] <= u {
			k++
		}
		comp[i] = k
		row, mu, sd := dst.RawRowView(i), m.Means.RawRowView(k), m.Std.RawRowView(k)
		for j := range row {
			row[j] = mu[j] + sd[j]*rng.NormFloat64()
		}
	}
	return comp, nil
}

// eval calls fn(r0, L) for consecutive chunks of rows of X, row i of L
// holding in its first K entries the log-joint log w_k + log N(x; m_k,
// σ_k²) of row r0+i; chunks run in parallel.
func (m *Mixture) eval(X *mat.Dense, fn func(r0 int, L *mat.Dense)) {
	sc := newScorer(m, m.Mean())
	eng := newEngine(X, sc.center, 0, sc.K)
	eng.forChunks(0, eng.n, func(c0, c1 int, wk *work) {
		L, _ := eng.score(wk, c0, c1, sc)
		fn(c0, L)
	})
}

// logSumExp returns log Σ_k exp(l_k), shifted by the largest term; −Inf
// terms (zero weights) contribute nothing.
func logSumExp(l []float64) float64 {
	mx := math.Inf(-1)
	for _, v := range l {
		if v > mx {
			mx = v
		}
	}
	if math.IsInf(mx, -1) {
		return mx
	}
	var s float64
	for _, v := range l {
		s += math.Exp(v - mx)
	}
	return mx + math.Log(s)
}

// logSumExpTo sets dst_k = exp(l_k − LSE(l)), the normalised
// probabilities, and returns LSE(l) = log Σ_k exp(l_k).
func logSumExpTo(dst, l []float64) float64 {
	mx := math.Inf(-1)
	for _, v := range l {
		if v > mx {
			mx = v
		}
	}
	var s float64
	for k, v := range l {
		e := math.Exp(v - mx)
		dst[k] = e
		s += e
	}
	inv := 1 / s
	for k := range dst[:len(l)] {
		dst[k] *= inv
	}
	return mx + math.Log(s)
}

// argmax returns the index of the largest entry of x (the first on ties).
func argmax(x []float64) int {
	best := 0
	for k, v := range x {
		if v > x[best] {
			best = k
		}
	}
	return best
}
