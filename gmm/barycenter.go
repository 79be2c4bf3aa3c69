package gmm

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/ot"
)

// Defaults of BarycenterSettings.
const (
	DefaultBarycenterMaxIter = 100
	DefaultBarycenterTol     = 1e-9
)

// BarycenterSettings control Barycenter. The zero value, like a nil
// *BarycenterSettings, selects the defaults.
type BarycenterSettings struct {
	// Components is K, the barycenter's number of components. It defaults
	// to the number of components of Init, else to the largest number of
	// components among the mixtures of positive weight.
	Components int
	// MaxIter caps the iterations; default 100.
	MaxIter int
	// Tol stops the iterations when one lowers the cost J by less than
	// Tol·J; default 1e-9.
	Tol float64
	// Beta is the label weight β of the cost (see Cost); 0 ignores the
	// labels in the plans, which are still averaged.
	Beta float64
	// Init, when not nil, is the starting mixture (its weights are
	// ignored). Otherwise the start is K components drawn without
	// replacement from those of the mixtures of positive weight (each
	// drawn ⌊K/size⌋ or ⌈K/size⌉ times when K exceeds their number), with
	// Seed (math/rand/v2 PCG).
	Init *Mixture
	Seed uint64
	// Workers caps the goroutines solving the transport problems of an
	// iteration; 0 means GOMAXPROCS. Results do not depend on it.
	Workers int
}

// BarycenterResult is the outcome of Barycenter.
type BarycenterResult struct {
	// Mixture is the barycenter B: K components of weight 1/K, labeled
	// when the inputs are.
	Mixture *Mixture
	// Plans holds the optimal plan from the components of B to those of
	// every input mixture.
	Plans []ot.Plan
	// Cost holds J = Σ_p λ_p MW₂²(B, P_p) (with β) at the start and after
	// every iteration, non-increasing.
	Cost []float64
	// Iterations is the number of iterations run.
	Iterations int
	// Status says why the iterations stopped.
	Status Status
}

// Barycenter returns the barycenter of the mixtures P_1 … P_P with weights
// λ on the simplex,
//
//	B = argmin_B Σ_p λ_p MW₂²(B, P_p),
//
// over mixtures of K components of equal weight 1/K (labeled with β > 0:
// the supervised MW₂), by the fixed-point iteration of GMM-DaDiL
// (ECML-PKDD 2024, the mixture barycenter behind GMM-WBT and GMM-DaDiL).
// Each iteration solves the P transport problems ω^(p) between B and P_p
// (ot.EMD, in parallel), then moves every component of B to the
// λ-weighted barycentric projection of its images,
//
//	m_k = Σ_p λ_p Σ_l (ω^(p)_kl / r^(p)_k) m^(p)_l,
//	σ_k = Σ_p λ_p Σ_l (ω^(p)_kl / r^(p)_k) σ^(p)_l,
//	y_k = Σ_p λ_p Σ_l (ω^(p)_kl / r^(p)_k) y^(p)_l,
//
// r^(p)_k = Σ_l ω^(p)_kl = 1/K. With the plans fixed this minimises J
// exactly (the cost is quadratic in m, σ and y, and for diagonal
// covariances the Gaussian barycenter's deviations are the averaged
// deviations), and new plans can only lower it: J never increases. The
// barycenter of a single mixture with K components of equal weight is
// that mixture.
func Barycenter(mixtures []*Mixture, lambda []float64, s *BarycenterSettings) (*BarycenterResult, error) {
	set, err := checkBarycenter(mixtures, lambda, s)
	if err != nil {
		return nil, err
	}
	B := set.Init
	if B == nil {
		B = drawComponents(mixtures, lambda, set.Components, set.Seed)
	}
	res := &BarycenterResult{Status: IterationLimit}
	plans := make([]ot.Plan, len(mixtures))
	J, err := barycenterPlans(plans, B, mixtures, lambda, set)
	if err != nil {
		return nil, err
	}
	res.Cost = append(res.Cost, J)
	for it := 1; it <= set.MaxIter; it++ {
		B = project(B, plans, mixtures, lambda)
		if J, err = barycenterPlans(plans, B, mixtures, lambda, set); err != nil {
			return nil, err
		}
		res.Cost = append(res.Cost, J)
		res.Iterations = it
		if prev := res.Cost[it-1]; prev-J <= set.Tol*prev {
			res.Status = Converged
			break
		}
	}
	res.Mixture, res.Plans = B, plans
	return res, nil
}

// checkBarycenter validates the inputs of Barycenter and returns the
// settings with their defaults, Init replaced by a copy of weight 1/K.
func checkBarycenter(mixtures []*Mixture, lambda []float64, s *BarycenterSettings) (BarycenterSettings, error) {
	var set BarycenterSettings
	if s != nil {
		set = *s
	}
	if err := set.check(); err != nil {
		return set, err
	}
	largest, err := checkInputs(mixtures, lambda, set.Beta)
	if err != nil {
		return set, err
	}
	if set.Init == nil {
		if set.Components == 0 {
			set.Components = largest
		}
		return set, nil
	}
	if err := checkInit(set.Init, mixtures[0], set.Components); err != nil {
		return set, err
	}
	set.Init = set.Init.Clone()
	set.Components = set.Init.Components()
	for k := range set.Init.Weights {
		set.Init.Weights[k] = 1 / float64(set.Components)
	}
	return set, nil
}

// check reports a bad field of s and fills in the defaults.
func (s *BarycenterSettings) check() error {
	switch {
	case s.Components < 0:
		return errf("Barycenter: Components = %d is negative", s.Components)
	case s.MaxIter < 0:
		return errf("Barycenter: MaxIter = %d is negative", s.MaxIter)
	case !(s.Tol >= 0) || math.IsInf(s.Tol, 1):
		return errf("Barycenter: Tol = %v must be finite and non-negative", s.Tol)
	case s.Workers < 0:
		return errf("Barycenter: Workers = %d is negative", s.Workers)
	}
	if s.MaxIter == 0 {
		s.MaxIter = DefaultBarycenterMaxIter
	}
	if s.Tol == 0 {
		s.Tol = DefaultBarycenterTol
	}
	return nil
}

// checkInputs validates the mixtures and their weights λ and returns the
// largest number of components among the mixtures of positive weight.
func checkInputs(mixtures []*Mixture, lambda []float64, beta float64) (largest int, err error) {
	switch {
	case len(mixtures) == 0:
		return 0, errf("Barycenter: no mixtures")
	case len(lambda) != len(mixtures):
		return 0, errf("Barycenter: %d mixtures but %d weights λ", len(mixtures), len(lambda))
	}
	if ok, bad, sum := linalg.OnSimplex(lambda, linalg.SimplexTol); !ok {
		if bad >= 0 {
			return 0, errf("Barycenter: λ[%d] = %v (weights must be finite and non-negative)", bad, lambda[bad])
		}
		return 0, errf("Barycenter: weights λ sum to %v, not 1", sum)
	}
	for p, m := range mixtures {
		if err := checkPair(mixtures[0], m, beta); err != nil {
			return 0, errf("Barycenter: mixture %d: %s", p, trimPrefix(err))
		}
		if (m.Labels == nil) != (mixtures[0].Labels == nil) || m.Classes() != mixtures[0].Classes() {
			return 0, errf("Barycenter: mixture %d has %d classes, mixture 0 has %d", p, m.Classes(), mixtures[0].Classes())
		}
		if lambda[p] > 0 {
			largest = max(largest, m.Components())
		}
	}
	return largest, nil
}

// checkInit validates a starting mixture against the first input.
func checkInit(B, P *Mixture, K int) error {
	if err := B.Validate(); err != nil {
		return errf("Barycenter: Init: %s", trimPrefix(err))
	}
	switch {
	case B.Dim() != P.Dim():
		return errf("Barycenter: Init has dimension %d, the mixtures %d", B.Dim(), P.Dim())
	case B.Classes() != P.Classes():
		return errf("Barycenter: Init has %d classes, the mixtures %d", B.Classes(), P.Classes())
	case K > 0 && B.Components() != K:
		return errf("Barycenter: Init has %d components but Components = %d", B.Components(), K)
	}
	return nil
}

// drawComponents returns K components of weight 1/K drawn without
// replacement from those of the mixtures of positive weight, cycling
// through one random permutation when K exceeds their number.
func drawComponents(mixtures []*Mixture, lambda []float64, K int, seed uint64) *Mixture {
	type ref struct{ p, k int }
	var pool []ref
	for p, m := range mixtures {
		if lambda[p] > 0 {
			for k := range m.Components() {
				pool = append(pool, ref{p, k})
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0xba7c))
	perm := rng.Perm(len(pool))
	d, c := mixtures[0].Dim(), mixtures[0].Classes()
	B := &Mixture{Weights: make([]float64, K), Means: mat.NewDense(K, d, nil), Std: mat.NewDense(K, d, nil)}
	if c > 0 {
		B.Labels = mat.NewDense(K, c, nil)
	}
	for k := range K {
		r := pool[perm[k%len(pool)]]
		src := mixtures[r.p]
		B.Weights[k] = 1 / float64(K)
		B.Means.SetRow(k, src.Means.RawRowView(r.k))
		B.Std.SetRow(k, src.Std.RawRowView(r.k))
		if c > 0 {
			B.Labels.SetRow(k, src.Labels.RawRowView(r.k))
		}
	}
	return B
}

// barycenterPlans solves the transport problems between B and every
// mixture into plans and returns J = Σ_p λ_p ⟨C^(p), ω^(p)⟩.
func barycenterPlans(plans []ot.Plan, B *Mixture, mixtures []*Mixture, lambda []float64, set BarycenterSettings) (float64, error) {
	costs := make([]float64, len(mixtures))
	err := par.Run(len(mixtures), set.Workers, func(p int) error {
		cp, err := MW2(B, mixtures[p], set.Beta)
		if err != nil {
			return errf("Barycenter: mixture %d: %s", p, trimPrefix(err))
		}
		plans[p], costs[p] = cp.Plan, cp.Value
		return nil
	}, nil)
	if err != nil {
		return 0, err
	}
	var J float64
	for p, c := range costs {
		J += lambda[p] * c
	}
	return J, nil
}

// project returns the mixture whose components are the λ-weighted
// barycentric projections of those of B through the plans.
func project(B *Mixture, plans []ot.Plan, mixtures []*Mixture, lambda []float64) *Mixture {
	K := B.Components()
	out := &Mixture{Weights: append([]float64(nil), B.Weights...), Means: mat.NewDense(K, B.Dim(), nil), Std: mat.NewDense(K, B.Dim(), nil)}
	if B.Labels != nil {
		out.Labels = mat.NewDense(K, B.Classes(), nil)
	}
	return projectInto(out, plans, mixtures, lambda, nil)
}

// projectInto sets out's means, deviations and labels (not its weights)
// to the λ-weighted barycentric projections of the components of the
// mixtures through the plans from out's components, and returns out;
// rows, when not nil, holds a buffer of at least out's components
// (replaced when shorter).
func projectInto(out *Mixture, plans []ot.Plan, mixtures []*Mixture, lambda []float64, rows *[]float64) *Mixture {
	K := out.Components()
	out.Means.Zero()
	out.Std.Zero()
	if out.Labels != nil {
		out.Labels.Zero()
	}
	if rows == nil {
		rows = new([]float64)
	}
	if len(*rows) < K {
		*rows = make([]float64, K)
	}
	r := (*rows)[:K]
	for p, pl := range plans {
		if lambda[p] == 0 {
			continue
		}
		clear(r)
		for e, w := range pl.Mass {
			r[pl.Row[e]] += w
		}
		src := mixtures[p]
		for e, w := range pl.Mass {
			k, l := pl.Row[e], pl.Col[e]
			f := lambda[p] * w / r[k]
			addScaled(out.Means.RawRowView(k), src.Means.RawRowView(l), f)
			addScaled(out.Std.RawRowView(k), src.Std.RawRowView(l), f)
			if out.Labels != nil {
				addScaled(out.Labels.RawRowView(k), src.Labels.RawRowView(l), f)
			}
		}
	}
	return out
}

// addScaled adds f·x to dst.
func addScaled(dst, x []float64, f float64) {
	for j, v := range x {
		dst[j] += f * v
	}
}
