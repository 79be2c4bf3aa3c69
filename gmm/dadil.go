package gmm

import (
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/ot"
)

// Defaults of DictionarySettings.
const (
	DefaultDictionaryComponentsPerClass = 3
	DefaultDictionaryLearningRate       = 0.05
	DefaultDictionaryEpochs             = 200
	DefaultDictionaryPlateauTol         = 0.01
	DefaultDictionaryWindow             = 5
	DefaultDictionaryBarycenterIter     = 10
)

// DictionarySettings control LearnDictionary. The zero value, like a nil
// *DictionarySettings, selects the defaults.
type DictionarySettings struct {
	// Atoms is K, the number of atoms; default the number of sources
	// (as DaDiL's: every atom starts on a source, so that none serves
	// the unlabeled target alone).
	Atoms int
	// ComponentsPerClass is the number of components of every class in
	// every atom: an atom has ComponentsPerClass·c' components, c' the
	// number of classes some source has. Default 3.
	ComponentsPerClass int
	// LearningRate is η of Adam for the label logits, the log standard
	// deviations and the barycentric coordinates; the means take steps of
	// η·s, s the root-mean-square standard deviation of the features over
	// the domains' mixtures, so that η works at any feature scale.
	// Default 0.05.
	LearningRate float64
	// Epochs caps the number of full-batch steps; default 200.
	Epochs int
	// PlateauTol and Window define a plateau of the loss: the mean of its
	// last Window values is at most PlateauTol (relative) below the mean
	// of the Window before. The first plateau divides the learning rate
	// by 10, the second (at least 2·Window steps later) stops learning.
	// Defaults 0.01 and 5; a negative PlateauTol disables the rule.
	PlateauTol float64
	Window     int
	// Beta is the label weight β of the supervised MW₂ between a source's
	// reconstruction and its mixture, and of the plans of the
	// barycenters. Zero selects, for every pair of mixtures, the largest
	// feature cost ‖m − m'‖² + ‖σ − σ'‖² between their components (as the
	// authors' implementation), so that components of different classes
	// are never matched while others are closer.
	Beta float64
	// BarycenterIter caps the fixed-point iterations of every barycenter
	// in a step, each started from the projection through the domain's
	// plans of the step before; default 10.
	BarycenterIter int
	// TargetClasses, when not nil, are the class proportions (one per
	// class, on the simplex) the target's term weighs its reconstruction
	// in: the components of B(α_T; P), of equal weights, are reweighed so
	// that class c holds mass TargetClasses[c] (see classWeights) before
	// their plan to the target's mixture. Nil keeps the barycenter's own
	// weights, equal per class: the target's mixture is then matched by
	// class-balanced atoms, which move the mass of its rarer classes onto
	// its commoner ones when every domain shares an imbalance (the
	// proportions dictionary.SharedProportions returns).
	TargetClasses []float64 `json:",omitempty"`
	// Seed seeds the atoms' initial perturbation (math/rand/v2 PCG).
	Seed uint64
	// Workers caps the goroutines, one per domain; 0 means GOMAXPROCS.
	// Results do not depend on it.
	Workers int
}

// Dictionary is the outcome of LearnDictionary: K labeled mixture atoms
// and the barycentric coordinates of every domain.
type Dictionary struct {
	// Atoms are the K labeled mixtures P_k, each of equal component
	// weights, labels softmax(logits).
	Atoms []*Mixture
	// Alpha is the (S+1)×K matrix of barycentric coordinates: row ℓ < S
	// for source ℓ, row S for the target; every row is on the simplex.
	Alpha *mat.Dense
	// Reconstructions holds B(α_ℓ; P) for every domain, in the order of
	// Alpha's rows: labeled mixtures whose last one, the target's, is
	// GMM-DaDiL-R's classifier.
	Reconstructions []*Mixture
	// Loss holds the loss of every step, before the step (Epochs values).
	Loss []float64
	// Epochs is the number of steps taken.
	Epochs int
	// Status says why learning stopped: optimize.FunctionConvergence
	// (the plateau rule) or optimize.IterationLimit.
	Status optimize.Status
	// Settings are the settings used, defaults filled in.
	Settings DictionarySettings
}

// withDefaults returns s with its defaults filled in for S sources, or an
// error naming a bad field.
func (s *DictionarySettings) withDefaults(S int) (DictionarySettings, error) {
	var t DictionarySettings
	if s != nil {
		t = *s
	}
	bad := func(field string, v any, want string) error {
		return errf("LearnDictionary: DictionarySettings.%s = %v %s", field, v, want)
	}
	switch {
	case t.Atoms < 0:
		return t, bad("Atoms", t.Atoms, "is negative")
	case t.ComponentsPerClass < 0:
		return t, bad("ComponentsPerClass", t.ComponentsPerClass, "is negative")
	case !(t.LearningRate >= 0) || math.IsInf(t.LearningRate, 1):
		return t, bad("LearningRate", t.LearningRate, "must be finite and non-negative")
	case t.Epochs < 0:
		return t, bad("Epochs", t.Epochs, "is negative")
	case math.IsNaN(t.PlateauTol) || math.IsInf(t.PlateauTol, 0):
		return t, bad("PlateauTol", t.PlateauTol, "must be finite")
	case t.Window < 0:
		return t, bad("Window", t.Window, "is negative")
	case !(t.Beta >= 0) || math.IsInf(t.Beta, 1):
		return t, bad("Beta", t.Beta, "must be finite and non-negative")
	case t.BarycenterIter < 0:
		return t, bad("BarycenterIter", t.BarycenterIter, "is negative")
	case t.Workers < 0:
		return t, bad("Workers", t.Workers, "is negative")
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&t.Atoms, S)
	def(&t.ComponentsPerClass, DefaultDictionaryComponentsPerClass)
	def(&t.Epochs, DefaultDictionaryEpochs)
	def(&t.Window, DefaultDictionaryWindow)
	def(&t.BarycenterIter, DefaultDictionaryBarycenterIter)
	if t.LearningRate == 0 {
		t.LearningRate = DefaultDictionaryLearningRate
	}
	if t.PlateauTol == 0 {
		t.PlateauTol = DefaultDictionaryPlateauTol
	}
	return t, nil
}

// LearnDictionary learns a GMM-DaDiL dictionary (Montesuma, Ngolè Mboula
// & Souloumiac, "Lighter, Better, Faster Multi-Source Domain Adaptation
// with Gaussian Mixture Models and Optimal Transport", ECML-PKDD 2024,
// arXiv 2404.10261, section 3.4) from the labeled mixtures of S source
// domains (FitLabeled) and the unlabeled mixture of the target (Fit; its
// labels, if any, are ignored).
//
// The dictionary has K labeled mixture atoms P_k = (1/n) Σ_i N(m_ki,
// diag(σ_ki²)) with labels y_ki = softmax(z_ki), and barycentric
// coordinates α_ℓ ∈ Δ_K for every domain. With B(α; P) the labeled
// barycenter of the atoms (the fixed point of Barycenter's iteration), it
// minimises
//
//	L(P, α) = Σ_ℓ<S SMW₂²(B(α_ℓ; P), Q_ℓ) + MW₂²(B(α_T; P), Q_T),
//
// SMW₂ the supervised MW₂ (label weight β, see Cost) to the source
// mixtures Q_ℓ and MW₂ without labels to the target mixture Q_T (its
// reconstruction's components weighed by DictionarySettings.TargetClasses
// when given), by
// full-batch Adam on (m, log σ, z) and on α, one step per epoch:
//
//   - α_ℓ moves by an Adam step on the component of ∂L/∂α_ℓ tangent to
//     the simplex, then is projected back onto it (ot.ProjectSimplex);
//   - σ = exp(s) is parameterised by its logarithm s, so it stays
//     positive, and Adam steps on ∂L/∂s = σ ⊙ ∂L/∂σ;
//   - the logits receive ∂L/∂z = y ⊙ (∂L/∂y − ⟨∂L/∂y, y⟩).
//
// The gradients are those of the paper's implementation, every transport
// plan held fixed (the envelope theorem): each barycenter is B_ℓ = Φ(α_ℓ,
// P; ω), the α-weighted barycentric projection of the atoms' components
// through its fixed-point plans ω^(k) (see fixedPoint and backProject),
// an explicit function of the atoms and of α_ℓ, and MW₂² is differentiated
// with its plan fixed (as Coupling.Gradient). The change of the plans with
// the parameters is ignored; where the plans are unique they are locally
// constant, and these are then the exact derivatives. Every step's
// barycenter starts from the projection through the plans of the step
// before and stops when an iteration leaves its plans unchanged (at most
// BarycenterIter iterations).
//
// Learning stops at the second plateau of the loss (see
// DictionarySettings.PlateauTol) or after Epochs steps. The atoms start
// on the sources' components (see initAtoms). Results are bit-identical
// for any Workers and GOMAXPROCS.
func LearnDictionary(sources []*Mixture, target *Mixture, s *DictionarySettings) (*Dictionary, error) {
	classes, err := checkDictionaryInputs(sources, target)
	if err != nil {
		return nil, err
	}
	set, err := s.withDefaults(len(sources))
	if err != nil {
		return nil, err
	}
	if err := checkTargetClasses(set.TargetClasses, classes); err != nil {
		return nil, err
	}
	l := newLearner(sources, target, classes, set)
	if err := l.run(); err != nil {
		return nil, err
	}
	return l.finish()
}

// checkTargetClasses returns an error unless p is nil or c class
// proportions on the simplex.
func checkTargetClasses(p []float64, c int) error {
	if p == nil {
		return nil
	}
	if len(p) != c {
		return errf("LearnDictionary: DictionarySettings.TargetClasses has %d proportions for %d classes", len(p), c)
	}
	if ok, bad, sum := linalg.OnSimplex(p, weightTol); !ok {
		if bad >= 0 {
			return errf("LearnDictionary: DictionarySettings.TargetClasses[%d] = %v (proportions must be finite and non-negative)", bad, p[bad])
		}
		return errf("LearnDictionary: DictionarySettings.TargetClasses sum to %v, not 1", sum)
	}
	return nil
}

// checkDictionaryInputs validates the mixtures of LearnDictionary and
// returns their number of classes.
func checkDictionaryInputs(sources []*Mixture, target *Mixture) (int, error) {
	if len(sources) == 0 {
		return 0, errf("LearnDictionary: no source mixtures")
	}
	for i, m := range sources {
		if err := m.Validate(); err != nil {
			return 0, errf("LearnDictionary: source %d: %s", i, trimPrefix(err))
		}
		switch {
		case m.Labels == nil:
			return 0, errf("LearnDictionary: source %d is not labeled", i)
		case m.Classes() != sources[0].Classes():
			return 0, errf("LearnDictionary: source %d has %d classes, source 0 has %d", i, m.Classes(), sources[0].Classes())
		case m.Dim() != sources[0].Dim():
			return 0, errf("LearnDictionary: source %d has dimension %d, source 0 has %d", i, m.Dim(), sources[0].Dim())
		}
	}
	if err := target.Validate(); err != nil {
		return 0, errf("LearnDictionary: target: %s", trimPrefix(err))
	}
	if target.Dim() != sources[0].Dim() {
		return 0, errf("LearnDictionary: the target has dimension %d, the sources %d", target.Dim(), sources[0].Dim())
	}
	return sources[0].Classes(), nil
}

// Target returns the target's reconstruction B(α_T; P), the labeled
// mixture of GMM-DaDiL-R.
func (d *Dictionary) Target() *Mixture { return d.Reconstructions[len(d.Reconstructions)-1] }

// Reconstruct returns the labeled barycenter B(α; P) of the atoms with
// the coordinates α ∈ Δ_K: the fixed-point iteration of Barycenter with
// the dictionary's label weight, from the atom of the largest coordinate,
// until the plans stop changing (at most DefaultBarycenterMaxIter
// iterations).
func (d *Dictionary) Reconstruct(alpha []float64) (*Mixture, error) {
	B, _, err := d.reconstruct("Reconstruct", alpha)
	return B, err
}

// reconstruct returns B(α; P) and the plans of its fixed point from B's
// components to every atom's, errors prefixed by op.
func (d *Dictionary) reconstruct(op string, alpha []float64) (*Mixture, []ot.Plan, error) {
	if len(alpha) != len(d.Atoms) {
		return nil, nil, errf("%s: %d coordinates for %d atoms", op, len(alpha), len(d.Atoms))
	}
	if ok, bad, sum := linalg.OnSimplex(alpha, linalg.SimplexTol); !ok {
		if bad >= 0 {
			return nil, nil, errf("%s: α[%d] = %v (coordinates must be finite and non-negative)", op, bad, alpha[bad])
		}
		return nil, nil, errf("%s: coordinates sum to %v, not 1", op, sum)
	}
	B, plans, _, err := fixedPoint(d.Atoms, stack(d.Atoms...), alpha, nil, d.Settings.Beta, DefaultBarycenterMaxIter, nil)
	if err != nil {
		return nil, nil, errf("%s: %s", op, trimPrefix(err))
	}
	return B, plans, nil
}

// AtomsOnto returns the atoms moved onto the barycenter B(α; P) (see
// Reconstruct) through the plans ω^(k) of its fixed point: component i of
// atom k goes to the barycentric projection of B's components,
//
//	m'_ki = Σ_j ω^(k)_ji m^B_j / Σ_j ω^(k)_ji,   σ'_ki likewise,
//
// keeping its weight and its label y_ki. It is the analogue for mixtures
// of DaDiL-E's TransportBarycenter: each atom keeps its labels on
// components fitted to the target.
func (d *Dictionary) AtomsOnto(alpha []float64) ([]*Mixture, error) {
	B, plans, err := d.reconstruct("AtomsOnto", alpha)
	if err != nil {
		return nil, err
	}
	out := make([]*Mixture, len(d.Atoms))
	for k, a := range d.Atoms {
		m := a.Clone()
		m.Means.Zero()
		m.Std.Zero()
		mass := make([]float64, a.Components())
		pl := plans[k]
		for e, w := range pl.Mass {
			mass[pl.Col[e]] += w
		}
		for e, w := range pl.Mass {
			j, i := pl.Row[e], pl.Col[e]
			addScaled(m.Means.RawRowView(i), B.Means.RawRowView(j), w/mass[i])
			addScaled(m.Std.RawRowView(i), B.Std.RawRowView(j), w/mass[i])
		}
		out[k] = m
	}
	return out, nil
}

// EnsembleProba sets dst (n×c; an empty dst is resized) to the class
// probabilities of GMM-DaDiL-E: the atoms' MAP posteriors weighted by the
// coordinates α (α_T for the target),
//
//	p(y | x) = Σ_k α_k Σ_i γ^(k)_i(x) y_ki,
//
// γ^(k) the posterior over the components of atom k (Mixture.Proba).
func (d *Dictionary) EnsembleProba(dst, X *mat.Dense, alpha []float64) error {
	if len(alpha) != len(d.Atoms) {
		return errf("EnsembleProba: %d coordinates for %d atoms", len(alpha), len(d.Atoms))
	}
	var P mat.Dense
	var sum *mat.Dense
	for k, a := range d.Atoms {
		P.Reset()
		if err := a.Proba(&P, X); err != nil {
			return errf("EnsembleProba: atom %d: %s", k, trimPrefix(err))
		}
		if sum == nil {
			r, c := P.Dims()
			sum = mat.NewDense(r, c, nil)
		}
		if alpha[k] != 0 {
			sum.Apply(func(i, j int, v float64) float64 { return v + alpha[k]*P.At(i, j) }, sum)
		}
	}
	r, c := sum.Dims()
	if err := reuseAs(dst, r, c, "EnsembleProba"); err != nil {
		return err
	}
	dst.Copy(sum)
	return nil
}
