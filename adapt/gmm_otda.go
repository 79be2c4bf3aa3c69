package adapt

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/ot"
)

// Defaults of GMMComponents.
const (
	DefaultGMMPerClass    = 8
	DefaultGMMMaxPerClass = gmm.DefaultMaxComponents
	DefaultGMMVarFloor    = 1e-2
)

// GMMComponents sets the mixtures that GMM-OTDA and GMM-WBT fit by EM
// (gmm.Fit): a labeled mixture per labeled domain, made as gmm.FitLabeled
// makes it (a mixture per class, its components labeled with the class,
// every class of mass 1/c) but with at most one component per row of a
// class, and an unlabeled mixture for the target. The zero value selects
// the defaults, DefaultGMMPerClass components per class and a variance
// floor of DefaultGMMVarFloor, chosen on the development suite (see
// docs/gmm.md).
type GMMComponents struct {
	// PerClass is the number of components of every class of a labeled
	// mixture; the target mixture then has PerClass·c components (c the
	// number of classes; at most one per target row). Zero means
	// DefaultGMMPerClass. It must not be negative.
	PerClass int
	// BIC chooses instead the number of every class by BIC among 1 …
	// MaxPerClass (zero: DefaultGMMMaxPerClass), and gives the target
	// mixture as many components as the labeled mixture it is matched
	// with (at most one per target row).
	BIC         bool
	MaxPerClass int
	// VarFloor is the variance floor of gmm.Settings: every component's
	// variance of feature j is at least VarFloor times the variance of
	// feature j over the rows it is fitted on (a class, or the target).
	// Zero means DefaultGMMVarFloor.
	VarFloor float64
}

// settings validates c and returns the gmm settings of a labeled fit with
// the seed.
func (c GMMComponents) settings(seed uint64) (*gmm.Settings, error) {
	if c.PerClass < 0 || c.MaxPerClass < 0 {
		return nil, fmt.Errorf("negative number of components (PerClass %d, MaxPerClass %d)", c.PerClass, c.MaxPerClass)
	}
	if math.IsNaN(c.VarFloor) || math.IsInf(c.VarFloor, 0) || c.VarFloor < 0 {
		return nil, fmt.Errorf("VarFloor = %g is not a non-negative number", c.VarFloor)
	}
	s := &gmm.Settings{Components: c.perClass(), MaxComponents: c.MaxPerClass, VarFloor: c.VarFloor, Seed: seed}
	if c.BIC {
		s.Components = 0
	}
	if s.MaxComponents == 0 {
		s.MaxComponents = DefaultGMMMaxPerClass
	}
	if s.VarFloor == 0 {
		s.VarFloor = DefaultGMMVarFloor
	}
	return s, nil
}

// perClass returns PerClass or its default.
func (c GMMComponents) perClass() int {
	if c.PerClass == 0 {
		return DefaultGMMPerClass
	}
	return c.PerClass
}

// gmmSeed returns the seed of stream k of a method seeded by seed: k = 0
// the target's mixture, 1 … N the labeled domains', mapStream + k the
// random map of domain k.
func gmmSeed(seed uint64, k int) uint64 {
	return rand.New(rand.NewPCG(seed, 0x6a6d+uint64(k))).Uint64()
}

// mapStream offsets the streams of gmmSeed used by random maps.
const mapStream = 1 << 20

// problemError prefixes err with "adapt: ", the method's name and the
// problem's name, if any.
func problemError(m Method, p *dataset.Problem, err error) error {
	if p.Name == "" {
		return fmt.Errorf("adapt: %s: %w", m.Name(), err)
	}
	return fmt.Errorf("adapt: %s: %s: %w", m.Name(), p.Name, err)
}

// fitLabeledMixtures fits a labeled mixture on the pooled sources (pool)
// or one on every source.
func fitLabeledMixtures(p *dataset.Problem, pool bool, c GMMComponents, seed uint64) ([]*gmm.Mixture, error) {
	domains := p.Sources
	if pool {
		X, y := p.PoolSources()
		domains = []dataset.Domain{{Name: "pooled sources", X: X, Y: y}}
	}
	out := make([]*gmm.Mixture, len(domains))
	for k, d := range domains {
		s, err := c.settings(gmmSeed(seed, k+1))
		if err != nil {
			return nil, err
		}
		if out[k], err = fitLabeled(d.X, d.Y, p.Classes, s); err != nil {
			return nil, fmt.Errorf("%s: %w", domainName(d, k), err)
		}
	}
	return out, nil
}

// fitLabeled fits a labeled mixture to the rows of X labeled y as
// gmm.FitLabeled does: a mixture per class c (gmm.Fit on its rows,
// seeded by the PCG stream c of s.Seed), whose components get the one-hot
// label e_c and the weights of that fit divided by c', the number of
// classes with rows, so that every class has mass 1/c'. Unlike
// gmm.FitLabeled, a class of fewer rows than s.Components gets one
// component per row instead of an error.
func fitLabeled(X *mat.Dense, y []int, classes int, s *gmm.Settings) (*gmm.Mixture, error) {
	rows := make([][]int, classes)
	for i, c := range y {
		rows[c] = append(rows[c], i)
	}
	var fits []*gmm.Mixture
	var labels []int
	for c, idx := range rows {
		if len(idx) == 0 {
			continue
		}
		cs := *s
		cs.Components = min(cs.Components, len(idx))
		cs.Seed = rand.New(rand.NewPCG(s.Seed, uint64(c))).Uint64()
		r, err := gmm.Fit(linalg.Rows(X, idx), &cs)
		if err != nil {
			return nil, fmt.Errorf("class %d: %w", c, err)
		}
		fits, labels = append(fits, r.Mixture), append(labels, c)
	}
	return stackClasses(fits, labels, classes), nil
}

// stackClasses returns the labeled mixture of the classes' mixtures: the
// components of fits[i] labeled e_labels[i], of weights divided by
// len(fits).
func stackClasses(fits []*gmm.Mixture, labels []int, classes int) *gmm.Mixture {
	K := 0
	for _, f := range fits {
		K += f.Components()
	}
	d := fits[0].Dim()
	m := &gmm.Mixture{Means: mat.NewDense(K, d, nil), Std: mat.NewDense(K, d, nil), Labels: mat.NewDense(K, classes, nil)}
	row := 0
	for i, f := range fits {
		for k, w := range f.Weights {
			m.Weights = append(m.Weights, w/float64(len(fits)))
			m.Means.SetRow(row, f.Means.RawRowView(k))
			m.Std.SetRow(row, f.Std.RawRowView(k))
			m.Labels.Set(row, labels[i], 1)
			row++
		}
	}
	return m
}

// domainName returns the domain's name, or "source k" (1-based).
func domainName(d dataset.Domain, k int) string {
	if d.Name != "" {
		return d.Name
	}
	return fmt.Sprintf("source %d", k+1)
}

// fitTargetMixture fits the unlabeled mixture of the target rows X with
// PerClass·classes components, or, with BIC, K (at most one per row).
func fitTargetMixture(X *mat.Dense, classes, K int, c GMMComponents, seed uint64) (*gmm.Mixture, error) {
	s, err := c.settings(gmmSeed(seed, 0))
	if err != nil {
		return nil, err
	}
	if !c.BIC {
		K = c.perClass() * classes
	}
	n, _ := X.Dims()
	s.Components = max(1, min(K, n))
	r, err := gmm.Fit(X, s)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	return r.Mixture, nil
}

// propagateLabels returns a copy of the target mixture T labeled through
// the plans ω^(p) from the labeled mixtures P_p, with equal weights,
//
//	ŷ_l = (1/N) Σ_p Σ_k ω^(p)_kl y^(p)_k / w'_l,
//
// every row renormalised to sum to 1 (uniform for a component that no
// plan reaches).
func propagateLabels(T *gmm.Mixture, from []*gmm.Mixture, plans []ot.Plan, classes int) *gmm.Mixture {
	out := T.Clone()
	Y := mat.NewDense(T.Components(), classes, nil)
	for p, plan := range plans {
		src := from[p].Labels
		for e, w := range plan.Mass {
			floats.AddScaled(Y.RawRowView(plan.Col[e]), w, src.RawRowView(plan.Row[e]))
		}
	}
	for l := range T.Components() {
		row := Y.RawRowView(l)
		if s := floats.Sum(row); s > 0 {
			floats.Scale(1/s, row)
		} else {
			for j := range row {
				row[j] = 1 / float64(classes)
			}
		}
	}
	out.Labels = Y
	return out
}

// mixtureProba returns the class probabilities Σ_l γ_l(x) ŷ_l of the
// labeled mixture T for the rows of X.
func mixtureProba(name string, T *gmm.Mixture, X *mat.Dense) (*mat.Dense, error) {
	var P mat.Dense
	if err := T.Proba(&P, X); err != nil {
		return nil, fmt.Errorf("adapt: %s: %w", name, err)
	}
	return &P, nil
}

// mappedProba is the Proba of GMM-OTDA and GMM-WBT, fitted when T is not
// nil: the probabilities of the classifier c, or with labels those of the
// labeled target mixture T.
func mappedProba(name string, T *gmm.Mixture, labels bool, c classify.Classifier, X *mat.Dense) (*mat.Dense, error) {
	switch {
	case T == nil, !labels && c == nil:
		return nil, ErrNotFitted
	case labels:
		return mixtureProba(name, T, X)
	}
	return probaOf(name, c, X)
}

// mapRows maps the rows of X by the map of the mixtures P to Q through the
// plan: the weighted map (gmm.Map.Mean), or the random map
// (gmm.Map.Random, seeded) when random.
func mapRows(P, Q *gmm.Mixture, plan ot.Plan, X *mat.Dense, random bool, seed uint64) (*mat.Dense, error) {
	t := &gmm.Map{Source: P, Target: Q, Plan: plan}
	out := new(mat.Dense)
	if random {
		_, err := t.Random(out, X, seed)
		return out, err
	}
	return out, t.Mean(out, X)
}

// GMMOTDA is GMM-OTDA, optimal transport for domain adaptation between
// Gaussian mixtures (Montesuma, Ngolè Mboula & Souloumiac, "Optimal
// Transport for Domain Adaptation through Gaussian Mixture Models", TMLR
// 2024, arXiv 2403.13847), after the mixture transport of Delon &
// Desolneux (SIAM J. Imaging Sci. 2020).
//
// The labeled sources are summarised by a labeled mixture P = Σ_k w_k
// N(m_k, σ_k²) with one-hot labels y_k (a mixture per class, every class of
// mass 1/c; see GMMComponents), the target rows by an unlabeled mixture
// Q = Σ_l w'_l N(m'_l, σ'_l²) (gmm.Fit), and the components are matched by
// the exact plan of the mixture-Wasserstein distance (gmm.MW2),
//
//	ω = argmin_{ω ∈ Π(w, w')} Σ_kl ω_kl (‖m_k − m'_l‖² + ‖σ_k − σ'_l‖²).
//
// The target is then classified in one of the paper's two ways:
//
//   - mapping (the default): every source row x is moved by the map of
//     gmm.Map, the weighted map
//     T(x) = Σ_kl (γ_k(x) ω_kl / w_k) (m'_l + (σ'_l/σ_k) ⊙ (x − m_k)),
//     or the random map when Random, and the classifier is trained on the
//     mapped rows with the source labels, weighted so that every class has
//     the same mass, as it has in the labeled mixture;
//   - label propagation (Labels): the target components get the labels the
//     plan carries, ŷ_l = Σ_k ω_kl y_k / w'_l, and a row x is classified by
//     the labeled target mixture, p(y | x) = Σ_l γ_l(x) ŷ_l with γ_l(x) its
//     posterior over Q's components (MAP).
//
// Several sources are pooled into one labeled mixture (the default), or
// each gets its own mixture and plan to Q (PerSource): the propagated
// labels are then the mean of the sources' (equal weights), and the mapped
// rows the union of every source mapped by its own plan.
//
// The zero value, which New returns, is the default: pooled sources, the
// weighted map, DefaultGMMPerClass components per class. docs/gmm.md gives
// the measurements behind these choices.
type GMMOTDA struct {
	// Labels classifies with the labeled target mixture instead of a
	// classifier trained on the mapped sources; Random draws the map.
	Labels, Random bool
	// PerSource fits a mixture per source instead of one on the pooled
	// sources.
	PerSource bool
	// Components sets the mixtures.
	Components GMMComponents
	// Seed seeds the mixtures' k-means++ starts and the random map.
	Seed uint64
	// Classifier configures the classifier of the mapping rule; nil
	// means the defaults of package classify.
	Classifier classify.Trainer

	// Set by Fit: the labeled source mixtures (one, or one per source),
	// the target mixture labeled through the plans, the plans from every
	// source mixture to it, and, without Labels, the mapped source rows.
	Sources []*gmm.Mixture
	Target  *gmm.Mixture
	Plans   []ot.Plan
	Mapped  *mat.Dense

	model classify.Classifier
}

// Name returns "gmm-otda".
func (m *GMMOTDA) Name() string { return "gmm-otda" }

func (m *GMMOTDA) setClassifier(t classify.Trainer) { m.Classifier = t }

// Fit fits the mixtures, the plans and the classifying rule.
func (m *GMMOTDA) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	m.model, m.Target = nil, nil
	if err := m.fit(p); err != nil {
		m.Target = nil
		return problemError(m, p, err)
	}
	return nil
}

// fit does the work of Fit.
func (m *GMMOTDA) fit(p *dataset.Problem) error {
	src, err := fitLabeledMixtures(p, !m.PerSource, m.Components, m.Seed)
	if err != nil {
		return err
	}
	K := 0
	for _, s := range src {
		K = max(K, s.Components())
	}
	tgt, err := fitTargetMixture(p.Target.X, p.Classes, K, m.Components, m.Seed)
	if err != nil {
		return err
	}
	plans := make([]ot.Plan, len(src))
	for k, s := range src {
		c, err := gmm.MW2(s, tgt, 0)
		if err != nil {
			return err
		}
		plans[k] = c.Plan
	}
	m.Sources, m.Plans = src, plans
	m.Target = propagateLabels(tgt, src, plans, p.Classes)
	if m.Labels {
		return nil
	}
	return m.fitMap(p)
}

// fitMap maps the source rows onto the target and trains the classifier.
func (m *GMMOTDA) fitMap(p *dataset.Problem) error {
	var parts []dataset.Domain
	if m.PerSource {
		for k, s := range p.Sources {
			X, err := mapRows(m.Sources[k], m.Target, m.Plans[k], s.X, m.Random, gmmSeed(m.Seed, mapStream+k))
			if err != nil {
				return err
			}
			parts = append(parts, dataset.Domain{X: X, Y: s.Y})
		}
	} else {
		X, y := p.PoolSources()
		Xm, err := mapRows(m.Sources[0], m.Target, m.Plans[0], X, m.Random, gmmSeed(m.Seed, mapStream))
		if err != nil {
			return err
		}
		parts = []dataset.Domain{{X: Xm, Y: y}}
	}
	X, y := dataset.Pool(parts)
	model, err := trainLabels(m.Classifier, X, y, p.Classes, classify.BalancedWeights(y, p.Classes))
	if err != nil {
		return err
	}
	m.Mapped, m.model = X, model
	return nil
}

// Predict classifies the rows of X.
func (m *GMMOTDA) Predict(X *mat.Dense) ([]int, error) { return predictFrom(m.Proba, X) }

// Proba returns the class probabilities of the rows of X: those of the
// classifier, or with Labels those of the labeled target mixture.
func (m *GMMOTDA) Proba(X *mat.Dense) (*mat.Dense, error) {
	return mappedProba(m.Name(), m.Target, m.Labels, m.model, X)
}
