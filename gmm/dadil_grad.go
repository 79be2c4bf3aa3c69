package gmm

import (
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/ot"
)

// domainPlans are the transport plans of one domain's term of the loss,
// held fixed by the gradient (the envelope theorem).
type domainPlans struct {
	// B is the barycenter Φ(α_ℓ, P; bary) the plans were computed for.
	B *Mixture
	// bary[k] is the plan from the components of B(α_ℓ) to those of
	// atom k.
	bary []ot.Plan
	// fit is the plan from B(α_ℓ) to the domain's mixture Q_ℓ, with label
	// weight beta (0 for the target).
	fit  ot.Plan
	beta float64
}

// atomGrad holds the derivatives of a loss with respect to one atom's
// means, standard deviations and labels (not yet logits).
type atomGrad struct {
	means, std, labels *mat.Dense
}

// domainGrad holds one domain's term of the loss and its derivatives with
// respect to every atom and to the domain's coordinates α_ℓ.
type domainGrad struct {
	loss  float64
	atoms []atomGrad
	alpha []float64
}

// newDomainGrad returns a zero domainGrad for K atoms of na components in
// d dimensions with c classes.
func newDomainGrad(K, na, d, c int) *domainGrad {
	g := &domainGrad{atoms: make([]atomGrad, K), alpha: make([]float64, K)}
	for k := range g.atoms {
		g.atoms[k] = atomGrad{mat.NewDense(na, d, nil), mat.NewDense(na, d, nil), mat.NewDense(na, c, nil)}
	}
	return g
}

// zero clears g.
func (g *domainGrad) zero() {
	g.loss = 0
	clear(g.alpha)
	for _, a := range g.atoms {
		a.means.Zero()
		a.std.Zero()
		a.labels.Zero()
	}
}

// evalDomain sets g to one domain's term of the loss with the plans pl
// held fixed,
//
//	L_ℓ = Σ_jl ω_jl C_jl(B, Q),   B = Φ(α, atoms; ω^bary),
//
// C the cost of Cost with label weight pl.beta and Φ the barycentric
// projection (project; B must be Φ(α, atoms; pl.bary)), and to its
// derivatives with respect to the atoms' means, deviations and labels and
// to α (backProject), through those with respect to B (the envelope
// theorem, as Coupling.Gradient):
//
//	∂L/∂m_j = 2 Σ_l ω_jl (m_j − m'_l),  ∂L/∂σ_j = 2 Σ_l ω_jl (σ_j − σ'_l),
//	∂L/∂y_j = 2β Σ_l ω_jl (y_j − y'_l).
func evalDomain(g *domainGrad, B *Mixture, atoms []*Mixture, alpha []float64, Q *Mixture, pl *domainPlans, s *scratch) {
	g.zero()
	gB := s.gradient(B, pl.beta)
	for e, w := range pl.fit.Mass {
		j, l := pl.fit.Row[e], pl.fit.Col[e]
		cm, cs := pullTwo(gB.Means.RawRowView(j), B.Means.RawRowView(j), Q.Means.RawRowView(l),
			gB.Std.RawRowView(j), B.Std.RawRowView(j), Q.Std.RawRowView(l), 2*w)
		c := cm + cs
		if pl.beta > 0 {
			c += pl.beta * pullOne(gB.Labels.RawRowView(j), B.Labels.RawRowView(j), Q.Labels.RawRowView(l), 2*pl.beta*w)
		}
		g.loss += w * c
	}
	backProject(g, gB, pl.bary, atoms, alpha, &s.rows)
}

// gradient returns s's gradient buffer for B with label weight beta
// (labels only when beta > 0), zeroed; as newGradient, without the
// weights' derivatives.
func (s *scratch) gradient(B *Mixture, beta float64) *Gradient {
	g := s.gB
	if g == nil || (g.Labels != nil) != (beta > 0) {
		g = newGradient(B, beta)
		s.gB = g
		return g
	}
	g.Means.Zero()
	g.Std.Zero()
	if g.Labels != nil {
		g.Labels.Zero()
	}
	return g
}

// pullOne adds s·(a − b) to ga and returns ‖a − b‖².
func pullOne(ga, a, b []float64, s float64) float64 {
	var sq float64
	for j, v := range a {
		u := v - b[j]
		ga[j] += s * u
		sq += u * u
	}
	return sq
}

// pullTwo is pullOne(ga, a, b, s) and pullOne(gx, x, y, s) for vectors
// of one length in one loop: the two sums are independent, each taken in
// the order of pullOne.
func pullTwo(ga, a, b, gx, x, y []float64, s float64) (sab, sxy float64) {
	n := len(a)
	ga, b, gx, x, y = ga[:n], b[:n], gx[:n], x[:n], y[:n]
	for j, v := range a {
		u, t := v-b[j], x[j]-y[j]
		ga[j] += s * u
		gx[j] += s * t
		sab += u * u
		sxy += t * t
	}
	return sab, sxy
}

// backProject adds to g the derivatives of a loss through the projection
// B = Φ(α, atoms; ω), given gB, those with respect to B. Component j of B
// is, for every parameter θ ∈ {m, σ, y},
//
//	θ^B_j = Σ_k α_k Σ_i (ω^(k)_ji / r^(k)_j) θ^(k)_i,   r^(k)_j = Σ_i ω^(k)_ji,
//
// so with the plans fixed
//
//	∂L/∂θ^(k)_i += α_k Σ_j (ω^(k)_ji / r^(k)_j) ∂L/∂θ^B_j,
//	∂L/∂α_k     += Σ_j Σ_i (ω^(k)_ji / r^(k)_j) ⟨∂L/∂θ^B_j, θ^(k)_i⟩,
//
// summed over θ (labels only when gB has them); buf holds a buffer of the
// atoms' components (replaced when shorter).
func backProject(g *domainGrad, gB *Gradient, plans []ot.Plan, atoms []*Mixture, alpha []float64, buf *[]float64) {
	if len(*buf) < atoms[0].Components() {
		*buf = make([]float64, atoms[0].Components())
	}
	rows := (*buf)[:atoms[0].Components()]
	for k, pl := range plans {
		clear(rows)
		for e, w := range pl.Mass {
			rows[pl.Row[e]] += w
		}
		a, ga := atoms[k], g.atoms[k]
		for e, w := range pl.Mass {
			j, i := pl.Row[e], pl.Col[e]
			f := w / rows[j]
			dm, ds := dot2(gB.Means.RawRowView(j), a.Means.RawRowView(i), gB.Std.RawRowView(j), a.Std.RawRowView(i))
			g.alpha[k] += f * (dm + ds)
			addScaled(ga.means.RawRowView(i), gB.Means.RawRowView(j), alpha[k]*f)
			addScaled(ga.std.RawRowView(i), gB.Std.RawRowView(j), alpha[k]*f)
			if gB.Labels != nil {
				g.alpha[k] += f * dot(gB.Labels.RawRowView(j), a.Labels.RawRowView(i))
				addScaled(ga.labels.RawRowView(i), gB.Labels.RawRowView(j), alpha[k]*f)
			}
		}
	}
}

// dot returns ⟨a, b⟩.
func dot(a, b []float64) float64 {
	var s float64
	for j, v := range a {
		s += v * b[j]
	}
	return s
}

// dot2 returns ⟨a, b⟩ and ⟨x, y⟩ for vectors of one length in one loop,
// each summed in the order of dot.
func dot2(a, b, x, y []float64) (ab, xy float64) {
	n := len(a)
	b, x, y = b[:n], x[:n], y[:n]
	for j, v := range a {
		ab += v * b[j]
		xy += x[j] * y[j]
	}
	return ab, xy
}

// uniform returns n weights 1/n.
func uniform(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 / float64(n)
	}
	return w
}
