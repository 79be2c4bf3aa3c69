package adapt

import (
	"fmt"
	"math/rand/v2"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/ot"
)

// GMMWBT is GMM-WBT, Wasserstein barycenter transport between Gaussian
// mixtures (Montesuma, Ngolè Mboula & Souloumiac, "Lighter, Better,
// Faster Multi-Source Domain Adaptation with Gaussian Mixture Models and
// Optimal Transport", ECML-PKDD 2024, arXiv 2404.10261): the mixture
// counterpart of WBT.
//
// Every source s is summarised by a labeled mixture P_s (a mixture per
// class, one-hot labels, every class of mass 1/c; see GMMComponents), and
// their labeled barycenter with equal weights,
//
//	B = argmin_B Σ_s (1/N) MW₂²(B, P_s),
//	MW₂²(B, P) = min_ω Σ_kl ω_kl (‖m_k − m'_l‖² + ‖σ_k − σ'_l‖² + β‖y_k − y'_l‖²),
//
// is computed by the fixed-point iteration of gmm.Barycenter (as many
// components as the largest source mixture, each of weight 1/K). β is the
// largest feature cost ‖m_k − m'_l‖² + ‖σ_k − σ'_l‖² between components
// of the sources, so that a change of class costs at least as much as any
// move in feature space. B, whose components carry soft labels y_k, is then
// transported onto the unlabeled target mixture Q (gmm.Fit) by the plan ω
// of MW₂ without labels, and the target is classified as by GMMOTDA:
//
//   - mapping (the default): as many points as the sources have rows on
//     average are drawn from B, moved by the weighted map of gmm.Map (the
//     random map when Random), and the classifier is trained on them with
//     the soft labels of the components they were drawn from;
//   - label propagation (Labels): ŷ_l = Σ_k ω_kl y_k / w'_l and
//     p(y | x) = Σ_l γ_l(x) ŷ_l, γ_l(x) the posterior over Q's components.
//
// The zero value, which New returns, is the default: the weighted map,
// DefaultGMMPerClass components per class. docs/gmm.md gives the
// measurements behind these choices.
type GMMWBT struct {
	// Labels classifies with the labeled target mixture instead of a
	// classifier trained on points of the barycenter mapped onto the
	// target; Random draws the map.
	Labels, Random bool
	// Components sets the mixtures.
	Components GMMComponents
	// Seed seeds the mixtures' k-means++ starts, the barycenter's start and
	// the draws of the mapping rule.
	Seed uint64
	// Classifier configures the classifier of the mapping rule; nil
	// means the defaults of package classify.
	Classifier classify.Trainer

	// Set by Fit: the source mixtures, their barycenter, the target
	// mixture labeled through the plan from the barycenter, that plan,
	// and, without Labels, the mapped points.
	Sources    []*gmm.Mixture
	Barycenter *gmm.BarycenterResult
	Target     *gmm.Mixture
	Plan       ot.Plan
	Mapped     *mat.Dense

	model classify.Classifier
}

// Name returns "gmm-wbt".
func (m *GMMWBT) Name() string { return "gmm-wbt" }

func (m *GMMWBT) setClassifier(t classify.Trainer) { m.Classifier = t }

// Fit fits the mixtures, their barycenter, its plan to the target and the
// classifying rule.
func (m *GMMWBT) Fit(p *dataset.Problem) error {
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
func (m *GMMWBT) fit(p *dataset.Problem) error {
	src, err := fitLabeledMixtures(p, false, m.Components, m.Seed)
	if err != nil {
		return err
	}
	lambda := make([]float64, len(src))
	for k := range lambda {
		lambda[k] = 1 / float64(len(src))
	}
	beta, err := largestFeatureCost(src)
	if err != nil {
		return err
	}
	bary, err := gmm.Barycenter(src, lambda, &gmm.BarycenterSettings{Beta: beta, Seed: gmmSeed(m.Seed, len(src)+1)})
	if err != nil {
		return fmt.Errorf("barycenter: %w", err)
	}
	B := bary.Mixture
	for k := range B.Components() {
		row := B.Labels.RawRowView(k)
		floats.Scale(1/floats.Sum(row), row)
	}
	tgt, err := fitTargetMixture(p.Target.X, p.Classes, B.Components(), m.Components, m.Seed)
	if err != nil {
		return err
	}
	c, err := gmm.MW2(B, tgt, 0)
	if err != nil {
		return err
	}
	m.Sources, m.Barycenter, m.Plan = src, bary, c.Plan
	m.Target = propagateLabels(tgt, []*gmm.Mixture{B}, []ot.Plan{c.Plan}, p.Classes)
	if m.Labels {
		return nil
	}
	return m.fitMap(p)
}

// largestFeatureCost returns the largest ‖m_k − m'_l‖² + ‖σ_k − σ'_l‖²
// between components of the mixtures (1 when all are equal).
func largestFeatureCost(mix []*gmm.Mixture) (float64, error) {
	beta := 0.0
	var C mat.Dense
	for a := range mix {
		for b := a; b < len(mix); b++ {
			C.Reset()
			if err := gmm.Cost(&C, mix[a], mix[b], 0); err != nil {
				return 0, err
			}
			beta = max(beta, mat.Max(&C))
		}
	}
	if beta == 0 {
		beta = 1
	}
	return beta, nil
}

// fitMap draws points from the barycenter, maps them onto the target and
// trains the classifier on them.
func (m *GMMWBT) fitMap(p *dataset.Problem) error {
	total := 0
	for _, s := range p.Sources {
		total += s.Rows()
	}
	n := max(1, (total+len(p.Sources)/2)/len(p.Sources))
	B := m.Barycenter.Mixture
	X := mat.NewDense(n, B.Dim(), nil)
	comp, err := B.Sample(X, rand.New(rand.NewPCG(gmmSeed(m.Seed, mapStream), 1)))
	if err != nil {
		return err
	}
	Y := mat.NewDense(n, p.Classes, nil)
	for i, k := range comp {
		Y.SetRow(i, B.Labels.RawRowView(k))
	}
	mapped, err := mapRows(B, m.Target, m.Plan, X, m.Random, gmmSeed(m.Seed, mapStream+1))
	if err != nil {
		return err
	}
	model, err := trainer(m.Classifier).Train(mapped, Y, nil)
	if err != nil {
		return err
	}
	m.Mapped, m.model = mapped, model
	return nil
}

// Predict classifies the rows of X.
func (m *GMMWBT) Predict(X *mat.Dense) ([]int, error) { return predictFrom(m.Proba, X) }

// Proba returns the class probabilities of the rows of X: those of the
// classifier, or with Labels those of the labeled target mixture.
func (m *GMMWBT) Proba(X *mat.Dense) (*mat.Dense, error) {
	return mappedProba(m.Name(), m.Target, m.Labels, m.model, X)
}
