package gmm

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/ot"
)

// Cost sets C (K×K'; an empty C is resized) to the ground cost between
// the components of P and Q: the squared 2-Wasserstein distance between
// Gaussians with diagonal covariances, plus a label term,
//
//	C_kl = ‖m_k − m'_l‖² + ‖σ_k − σ'_l‖² + β‖y_k − y'_l‖².
//
// For diagonal (so commuting) covariances the Bures term
// tr(Σ + Σ' − 2(Σ^½ Σ' Σ^½)^½) reduces to ‖σ − σ'‖². β = 0 ignores
// labels; β > 0 needs both mixtures labeled with the same classes.
func Cost(C *mat.Dense, P, Q *Mixture, beta float64) error {
	if err := checkPair(P, Q, beta); err != nil {
		return err
	}
	K, L := P.Components(), Q.Components()
	if err := reuseAs(C, K, L, "Cost"); err != nil {
		return err
	}
	for k := range K {
		row := C.RawRowView(k)
		for l := range L {
			c := sqDist(P.Means.RawRowView(k), Q.Means.RawRowView(l)) +
				sqDist(P.Std.RawRowView(k), Q.Std.RawRowView(l))
			if beta > 0 {
				c += beta * sqDist(P.Labels.RawRowView(k), Q.Labels.RawRowView(l))
			}
			row[l] = c
		}
	}
	return nil
}

// checkPair validates two mixtures compared with label weight beta.
func checkPair(P, Q *Mixture, beta float64) error {
	if err := P.Validate(); err != nil {
		return err
	}
	if err := Q.Validate(); err != nil {
		return err
	}
	if P.Dim() != Q.Dim() {
		return errf("mixtures of dimensions %d and %d", P.Dim(), Q.Dim())
	}
	if !(beta >= 0) || math.IsInf(beta, 1) {
		return errf("label weight β = %v must be finite and non-negative", beta)
	}
	if beta > 0 {
		if P.Labels == nil || Q.Labels == nil {
			return errf("label weight β = %v needs two labeled mixtures", beta)
		}
		if P.Classes() != Q.Classes() {
			return errf("mixtures with %d and %d classes", P.Classes(), Q.Classes())
		}
	}
	return nil
}

// sqDist returns ‖a − b‖².
func sqDist(a, b []float64) float64 {
	var s float64
	for j, v := range a {
		u := v - b[j]
		s += u * u
	}
	return s
}

// Coupling is the optimal transport between the components of two
// mixtures.
type Coupling struct {
	// Beta is the label weight β of the cost.
	Beta float64
	// Cost is the K×K' ground cost C (see Cost).
	Cost *mat.Dense
	// Plan is an optimal plan ω between the weights of P and Q.
	Plan ot.Plan
	// Value is ⟨C, ω⟩ = MW₂²(P, Q), the squared mixture-Wasserstein
	// distance (labeled when β > 0).
	Value float64
	// U and V are optimal dual potentials of the plan (see ot.EMDResult).
	U, V []float64
}

// MW2 returns the optimal coupling of the components of P and Q and the
// squared mixture-Wasserstein distance
//
//	MW₂²(P, Q) = min_{ω ∈ Π(w, w')} Σ_kl ω_kl C_kl
//
// for the cost C of Cost: the Wasserstein distance restricted to couplings
// that are themselves Gaussian mixtures (Delon & Desolneux, SIAM J.
// Imaging Sci. 2020), the GMM-OT problem of GMM-OTDA (TMLR 2024), and with
// β > 0 the supervised MW₂ of GMM-DaDiL (ECML-PKDD 2024). It is an exact
// optimal-transport problem between K and K' weighted points, solved by
// ot.EMD.
func MW2(P, Q *Mixture, beta float64) (*Coupling, error) {
	C := new(mat.Dense)
	if err := Cost(C, P, Q, beta); err != nil {
		return nil, err
	}
	r, err := ot.EMD(P.Weights, rescaled(Q.Weights, P.Weights), C)
	if err != nil {
		return nil, errf("MW2: %v", err)
	}
	return &Coupling{Beta: beta, Cost: C, Plan: r.Plan, Value: r.Cost, U: r.U, V: r.V}, nil
}

// rescaled returns b scaled to the sum of a (b itself when the sums
// agree), so that weights each within 1e-9 of the simplex always make a
// balanced transport problem.
func rescaled(b, a []float64) []float64 {
	var sa, sb float64
	for _, v := range a {
		sa += v
	}
	for _, v := range b {
		sb += v
	}
	if sa == sb {
		return b
	}
	out := make([]float64, len(b))
	for i, v := range b {
		out[i] = v * (sa / sb)
	}
	return out
}

// Gradient holds the derivatives of a loss with respect to a mixture's
// parameters, in the mixture's shapes.
type Gradient struct {
	Weights []float64
	Means   *mat.Dense
	Std     *mat.Dense
	// Labels is nil when β = 0.
	Labels *mat.Dense
}

// Gradient returns the gradients of MW₂²(P, Q) with respect to the
// parameters of P and of Q. By the envelope theorem the optimal plan ω is
// held fixed (where it is unique, MW₂² is differentiable and these are its
// derivatives):
//
//	∂/∂m_k  = 2 Σ_l ω_kl (m_k − m'_l),   ∂/∂m'_l = 2 Σ_k ω_kl (m'_l − m_k),
//	∂/∂σ_k  = 2 Σ_l ω_kl (σ_k − σ'_l),   ∂/∂σ'_l = 2 Σ_k ω_kl (σ'_l − σ_k),
//	∂/∂y_k  = 2β Σ_l ω_kl (y_k − y'_l),  ∂/∂y'_l = 2β Σ_k ω_kl (y'_l − y_k),
//
// and with respect to the weights the dual potentials, ∂/∂w_k = U_k and
// ∂/∂w'_l = V_l (defined up to a constant, which changes no derivative
// along the simplex). P and Q must be the mixtures c was computed from.
func (c *Coupling) Gradient(P, Q *Mixture) (gP, gQ *Gradient, err error) {
	if err := checkPair(P, Q, c.Beta); err != nil {
		return nil, nil, err
	}
	if P.Components() != c.Plan.N || Q.Components() != c.Plan.M {
		return nil, nil, errf("Gradient: the plan is %d×%d but the mixtures have %d and %d components",
			c.Plan.N, c.Plan.M, P.Components(), Q.Components())
	}
	gP, gQ = newGradient(P, c.Beta), newGradient(Q, c.Beta)
	copy(gP.Weights, c.U)
	copy(gQ.Weights, c.V)
	for e, w := range c.Plan.Mass {
		k, l := c.Plan.Row[e], c.Plan.Col[e]
		pull(gP.Means.RawRowView(k), gQ.Means.RawRowView(l), P.Means.RawRowView(k), Q.Means.RawRowView(l), 2*w)
		pull(gP.Std.RawRowView(k), gQ.Std.RawRowView(l), P.Std.RawRowView(k), Q.Std.RawRowView(l), 2*w)
		if c.Beta > 0 {
			pull(gP.Labels.RawRowView(k), gQ.Labels.RawRowView(l), P.Labels.RawRowView(k), Q.Labels.RawRowView(l), 2*c.Beta*w)
		}
	}
	return gP, gQ, nil
}

// newGradient returns a zero gradient in the shapes of m.
func newGradient(m *Mixture, beta float64) *Gradient {
	K, d := m.Components(), m.Dim()
	g := &Gradient{Weights: make([]float64, K), Means: mat.NewDense(K, d, nil), Std: mat.NewDense(K, d, nil)}
	if beta > 0 {
		g.Labels = mat.NewDense(K, m.Classes(), nil)
	}
	return g
}

// pull adds s·(a − b) to ga and s·(b − a) to gb.
func pull(ga, gb, a, b []float64, s float64) {
	for j, v := range a {
		u := s * (v - b[j])
		ga[j] += u
		gb[j] -= u
	}
}
