package adapt

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/par"
)

// GMMDaDiL adapts with a Gaussian-mixture dictionary (GMM-DaDiL,
// Montesuma, Ngolè Mboula & Souloumiac, ECML-PKDD 2024, arXiv
// 2404.10261): every source is summarised by a labeled mixture
// (gmm.FitLabeled, one mixture per class), the target by an unlabeled one
// (gmm.Fit), and gmm.LearnDictionary learns labeled mixture atoms and the
// domains' barycentric coordinates from these mixtures alone.
//
// GMM-DaDiL-R (Ensemble false, the method "gmm-dadil") classifies target
// rows with the target's reconstruction B(α_T; P), a labeled mixture: by
// default it trains Classifier on rows drawn from it, each with the
// (soft) label of its component, and on the sources' rows moved along the
// dictionary (Transport), as DaDiL-R trains on its reconstruction and the
// sources' moved rows; with MAP it uses the mixture's own rule,
// p(y | x) = Σ_j γ_j(x) y_j, γ the posterior over its components
// (gmm.Mixture.Proba). GMM-DaDiL-E
// (Ensemble true, "gmm-dadil-e") weighs one classifier per atom by α_T,
// p(y | x) = Σ_k α_T,k h_k(x), as DaDiL-E: by default h_k is Classifier
// trained on rows drawn from atom k moved onto B(α_T; P), each with its
// component's label in the atom (EnsembleTransport); with MAP h_k is atom
// k's own MAP rule (gmm.Dictionary.EnsembleProba). One fit gives both
// (Predictors).
type GMMDaDiL struct {
	Ensemble bool
	// Settings are the dictionary's (nil: gmm's defaults). Their
	// ComponentsPerClass also sets the mixtures of the domains: that many
	// components per class for every source (fewer for a class of fewer
	// rows) and that many times the number of classes for the target (at
	// most its number of rows).
	Settings *gmm.DictionarySettings
	// BalancedTarget keeps the target's term of the dictionary's loss
	// class-balanced, as DaDiL's dictionary.Settings.BalancedTarget. By
	// default, when Settings give no TargetClasses, Fit sets them to the
	// class proportions the sources share
	// (dictionary.SharedProportions), nil (class-balanced) when they
	// share none.
	BalancedTarget bool
	// TargetComponents is the number of components of the target's
	// mixture; 0 selects ComponentsPerClass times the number of classes.
	// It is at most the target's number of rows.
	TargetComponents int
	// EM holds the settings of the domains' EM fits; its Components and
	// Seed are set per domain, and a zero VarFloor or Tol (or a nil EM)
	// selects DefaultGMMDaDiLVarFloor and DefaultGMMTol.
	EM *gmm.Settings
	// MAP makes GMM-DaDiL-R classify by the MAP rule of B(α_T; P)
	// instead of a classifier trained on its samples, and GMM-DaDiL-E by
	// the α_T-weighted MAP rules of the atoms instead of classifiers
	// trained on theirs.
	MAP bool
	// EnsembleTransport says what GMM-DaDiL-E's classifier of atom k
	// trains on: rows drawn from the atom moved onto B(α_T; P) through the
	// plan of the barycenter (gmm.Dictionary.AtomsOnto), its components
	// keeping their labels (dictionary.TransportBarycenter, or
	// TransportAuto, the default: as DaDiL-E's default), or from the atom
	// as it is (dictionary.TransportNone, the paper's DaDiL-E). Other
	// values are errors.
	EnsembleTransport dictionary.Transport
	// SamplesPerClass sets the rows drawn from B(α_T; P) to train
	// GMM-DaDiL-R's classifier, and from every atom to train its
	// GMM-DaDiL-E classifier: SamplesPerClass times the number of
	// classes. Default DefaultGMMSamplesPerClass.
	SamplesPerClass int
	// Transport says what GMM-DaDiL-R's classifier trains on besides the
	// rows drawn from B(α_T; P): the sources' rows moved along the
	// dictionary (dictionary.TransportSources, or TransportAuto, the
	// default; movedSources), half the weight each, as DaDiL-R's default,
	// or nothing (dictionary.TransportNone, the paper's GMM-DaDiL-R). MAP
	// ignores it; other values are errors.
	Transport dictionary.Transport
	// TransportRows bounds the rows of every source that Transport moves:
	// larger sources are subsampled (seeded by Seed). Zero selects as
	// many as are drawn from B(α_T; P), SamplesPerClass times the number
	// of classes; a negative value uses every row.
	TransportRows int
	// Dims, when positive, is the number q of principal directions the
	// mixtures live on: when the domains have more than q features, Fit
	// projects every domain's rows onto the q leading principal
	// directions of all the domains' rows pooled (FitProjection; sources
	// and target, no label), and everything after, mixtures, dictionary
	// and classifiers, works on the projections; rows to classify are
	// projected the same way. It makes fits of many features several
	// times faster, at some accuracy (docs/gmm.md). 0, the default, keeps
	// the features; a negative Dims is an error.
	Dims int
	// Classifier is the classifier of GMM-DaDiL-R and GMM-DaDiL-E (nil:
	// softmax regression).
	Classifier classify.Trainer
	// Seed seeds the EM fits, the draws of the samples and the projection.
	Seed uint64

	// Projection, Dict, Sources and Target are set by Fit: the projection
	// onto the principal directions (nil when the features are kept),
	// the dictionary and the domains' mixtures it was learned from, in
	// the projection's coordinates.
	Projection *Projection
	Dict       *gmm.Dictionary
	Sources    []*gmm.Mixture
	Target     *gmm.Mixture
	// R is GMM-DaDiL-R's classifier, trained by Fit on samples of
	// B(α_T; P) unless MAP; when nil, GMM-DaDiL-R classifies by the MAP
	// rule. A model loaded from a file (package modelfile) sets Dict, R
	// and E, not Sources and Target, which predicting does not need.
	R classify.Classifier
	// E holds GMM-DaDiL-E's classifiers, one per atom, trained by Fit
	// unless MAP; when nil, GMM-DaDiL-E weighs the atoms' MAP rules.
	E []classify.Classifier
	// TrainingR is the weighted labeled set R was trained on, set by Fit
	// (nil with MAP or from a model file), in the coordinates the
	// mixtures live in: the rows drawn from B(α_T; P) (Source −1), then
	// the sources' moved rows (Source ℓ) unless Transport is
	// TransportNone.
	TrainingR *dictionary.TrainingSet
}

// Name returns "gmm-dadil" or "gmm-dadil-e".
func (m *GMMDaDiL) Name() string {
	if m.Ensemble {
		return "gmm-dadil-e"
	}
	return "gmm-dadil"
}

// Defaults of GMMDaDiL.
const (
	// DefaultGMMSamplesPerClass is the default SamplesPerClass: the
	// support of DaDiL's atoms per class (dictionary.Settings.Samples).
	DefaultGMMSamplesPerClass = 100
	// DefaultGMMDaDiLVarFloor is the default variance floor of the domains'
	// mixtures (gmm.Settings.VarFloor): every component's variance of a
	// feature is at least 0.1 times the feature's variance over the
	// domain (over the class for a source). Mixtures of tens of
	// components summarise domains of a few hundred rows in hundreds of
	// dimensions, where EM's own floor (10⁻⁶) leaves components of
	// vanishing variance along features that are constant within them;
	// their densities then decide every class by those features alone.
	DefaultGMMDaDiLVarFloor = 0.1
	// DefaultGMMTol is the default EM tolerance (gmm.Settings.Tol) on the
	// mean log-likelihood per row, scikit-learn's GaussianMixture's.
	DefaultGMMTol = 1e-3
)

// Fit fits the domains' mixtures, learns the dictionary and, unless MAP,
// the classifier of GMM-DaDiL-R.
func (m *GMMDaDiL) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	if err := m.fit(p); err != nil {
		return fmt.Errorf("adapt: %s: %w", m.Name(), err)
	}
	return nil
}

// fit does the work of Fit.
func (m *GMMDaDiL) fit(p *dataset.Problem) error {
	if m.SamplesPerClass < 0 {
		return fmt.Errorf("SamplesPerClass = %d is negative", m.SamplesPerClass)
	}
	if m.TargetComponents < 0 {
		return fmt.Errorf("TargetComponents = %d is negative", m.TargetComponents)
	}
	if m.Dims < 0 {
		return fmt.Errorf("Dims = %d is negative", m.Dims)
	}
	switch m.Transport {
	case dictionary.TransportAuto, dictionary.TransportNone, dictionary.TransportSources:
	default:
		return fmt.Errorf("Transport %v: GMM-DaDiL-R trains on the reconstruction's samples beside the sources' moved rows (auto, sources) or alone (none)", m.Transport)
	}
	switch m.EnsembleTransport {
	case dictionary.TransportAuto, dictionary.TransportBarycenter, dictionary.TransportNone:
	default:
		return fmt.Errorf("EnsembleTransport %v: GMM-DaDiL-E trains on the atoms moved onto the reconstruction (auto, barycenter) or as they are (none)", m.EnsembleTransport)
	}
	p, proj, err := m.project(p)
	if err != nil {
		return err
	}
	set := gmm.DictionarySettings{}
	if m.Settings != nil {
		set = *m.Settings
	}
	per := set.ComponentsPerClass
	if per == 0 {
		per = gmm.DefaultDictionaryComponentsPerClass
	}
	if !m.BalancedTarget && set.TargetClasses == nil {
		set.TargetClasses = dictionary.SharedProportions(p.Sources, p.Classes)
	}
	src, tgt, err := m.fitMixtures(p, per, set.Workers)
	if err != nil {
		return err
	}
	d, err := gmm.LearnDictionary(src, tgt, &set)
	if err != nil {
		return err
	}
	m.Projection, m.Sources, m.Target, m.Dict, m.R, m.E, m.TrainingR = proj, src, tgt, d, nil, nil, nil
	if m.MAP {
		return nil
	}
	if m.R, err = m.trainR(p); err != nil {
		return err
	}
	m.E, err = m.trainEnsemble(p.Classes, set.Workers)
	return err
}

// project returns, when Dims is positive and p's domains have more
// features, the projection onto their Dims principal directions and p
// with every domain's rows projected; p itself and a nil projection
// otherwise.
func (m *GMMDaDiL) project(p *dataset.Problem) (*dataset.Problem, *Projection, error) {
	q := m.Dims
	if _, d := p.Target.X.Dims(); q == 0 || q >= d {
		return p, nil, nil
	}
	Xs := []*mat.Dense{p.Target.X}
	for _, s := range p.Sources {
		Xs = append(Xs, s.X)
	}
	proj, err := FitProjection(Xs, q, m.Seed)
	if err != nil {
		return nil, nil, err
	}
	out := *p
	out.Sources = make([]dataset.Domain, len(p.Sources))
	for i, d := range append([]dataset.Domain{p.Target}, p.Sources...) {
		if d.X, err = proj.Apply(d.X); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		if i == 0 {
			out.Target = d
		} else {
			out.Sources[i-1] = d
		}
	}
	out.Test = nil // not read by the fit
	return &out, proj, nil
}

// projected returns the rows of X in the coordinates the mixtures live
// in: projected by m.Projection, or X itself when there is none.
func (m *GMMDaDiL) projected(X *mat.Dense) (*mat.Dense, error) {
	if m.Projection == nil {
		return X, nil
	}
	return m.Projection.Apply(X)
}

// The PCG streams of the draws of the classifiers' training rows, seeded
// by Seed: GMM-DaDiL-R's, and eStream+k for atom k's.
const (
	rStream = 0x5a3
	eStream = 0xe0000
)

// trainEnsemble trains GMM-DaDiL-E's classifier of every atom, in
// parallel, on SamplesPerClass·classes rows drawn from the atom (moved
// onto B(α_T; P) unless EnsembleTransport is TransportNone) with stream
// eStream+k, each row labeled with its component's label. A classifier
// that can start from another (classify.WarmTrainer, the softmax
// regression) starts from GMM-DaDiL-R's: moved onto B(α_T; P), every atom
// has the reconstruction's components, so the two problems are close.
func (m *GMMDaDiL) trainEnsemble(classes, workers int) ([]classify.Classifier, error) {
	atoms := m.Dict.Atoms
	if m.EnsembleTransport != dictionary.TransportNone {
		N, _ := m.Dict.Alpha.Dims()
		var err error
		if atoms, err = m.Dict.AtomsOnto(m.Dict.Alpha.RawRowView(N - 1)); err != nil {
			return nil, err
		}
	}
	E := make([]classify.Classifier, len(atoms))
	err := par.Run(len(atoms), workers, func(k int) error {
		var err error
		if E[k], err = m.trainOnSamples(atoms[k], classes, eStream+uint64(k), m.R); err != nil {
			return fmt.Errorf("GMM-DaDiL-E classifier of atom %d: %w", k, err)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return E, nil
}

// fitMixtures fits, in parallel, a labeled mixture to every source
// (per components per class, fewer for a class of fewer rows) and an
// unlabeled one of TargetComponents (default per·classes) components, at
// most its rows, to the target, domain i with seed Seed+i.
func (m *GMMDaDiL) fitMixtures(p *dataset.Problem, per, workers int) ([]*gmm.Mixture, *gmm.Mixture, error) {
	S := len(p.Sources)
	out := make([]*gmm.Mixture, S+1)
	err := par.Run(S+1, workers, func(i int) error {
		set := gmm.Settings{}
		if m.EM != nil {
			set = *m.EM
		}
		if set.VarFloor == 0 {
			set.VarFloor = DefaultGMMDaDiLVarFloor
		}
		if set.Tol == 0 {
			set.Tol = DefaultGMMTol
		}
		set.Seed = m.Seed + uint64(i)
		if i == S {
			set.Components = m.TargetComponents
			if set.Components == 0 {
				set.Components = per * p.Classes
			}
			set.Components = min(set.Components, p.Target.Rows())
			r, err := gmm.Fit(p.Target.X, &set)
			if err != nil {
				return fmt.Errorf("target %s: %w", p.Target.Name, err)
			}
			out[i] = r.Mixture
			return nil
		}
		s := p.Sources[i]
		set.Components = min(per, smallestClass(s.Y, p.Classes))
		r, err := gmm.FitLabeled(s.X, s.Y, p.Classes, &set)
		if err != nil {
			return fmt.Errorf("source %s: %w", s.Name, err)
		}
		out[i] = r.Mixture
		return nil
	}, nil)
	if err != nil {
		return nil, nil, err
	}
	return out[:S], out[S], nil
}

// smallestClass returns the fewest rows of a class present in y.
func smallestClass(y []int, classes int) int {
	count := make([]int, classes)
	for _, c := range y {
		count[c]++
	}
	best := len(y)
	for _, n := range count {
		if n > 0 {
			best = min(best, n)
		}
	}
	return best
}

// trainOnSamples trains the classifier on SamplesPerClass·classes rows
// drawn from B with the PCG stream stream, each labeled with its
// component's (soft) label; from start when it is not nil and the
// classifier can start from another (classify.WarmTrainer).
func (m *GMMDaDiL) trainOnSamples(B *gmm.Mixture, classes int, stream uint64, start classify.Classifier) (classify.Classifier, error) {
	X, T, _, err := m.drawSamples(B, classes, stream)
	if err != nil {
		return nil, err
	}
	t := trainer(m.Classifier)
	if w, ok := t.(classify.WarmTrainer); ok && start != nil {
		return w.TrainFrom(X, T, nil, start)
	}
	return t.Train(X, T, nil)
}

// drawSamples returns SamplesPerClass·classes rows X drawn from B (seeded
// by Seed, PCG stream stream), their soft labels T (each row its
// component's label) and their components.
func (m *GMMDaDiL) drawSamples(B *gmm.Mixture, classes int, stream uint64) (X, T *mat.Dense, comp []int, err error) {
	n := m.samplesPerClass() * classes
	X = mat.NewDense(n, B.Dim(), nil)
	comp, err = B.Sample(X, rand.New(rand.NewPCG(m.Seed, stream)))
	if err != nil {
		return nil, nil, nil, err
	}
	T = mat.NewDense(n, B.Classes(), nil)
	for i, k := range comp {
		T.SetRow(i, B.Labels.RawRowView(k))
	}
	return X, T, comp, nil
}

// samplesPerClass returns SamplesPerClass, DefaultGMMSamplesPerClass when 0.
func (m *GMMDaDiL) samplesPerClass() int {
	if m.SamplesPerClass == 0 {
		return DefaultGMMSamplesPerClass
	}
	return m.SamplesPerClass
}

// ReconstructionSamples returns the training set of GMM-DaDiL-R's
// classifier: SamplesPerClass rows per class (DefaultGMMSamplesPerClass
// when 0) drawn from the target's reconstruction B(α_T; P) with Seed, in
// the features' scaled units, their soft labels (each row its component's
// label, one column per class) and the component each row was drawn
// from. The draw is the classifier's, row for row, with or without MAP
// (unless Transport is TransportNone the classifier also trains on the
// sources' moved rows).
func (m *GMMDaDiL) ReconstructionSamples() (X, T *mat.Dense, comp []int, err error) {
	if m.Dict == nil {
		return nil, nil, nil, fmt.Errorf("adapt: %s: ReconstructionSamples before Fit", m.Name())
	}
	B := m.Dict.Target()
	X, T, comp, err = m.drawSamples(B, B.Classes(), rStream)
	if err == nil && m.Projection != nil {
		X = m.Projection.Inverse(X)
	}
	return X, T, comp, err
}

// Predict classifies the rows of X.
func (m *GMMDaDiL) Predict(X *mat.Dense) ([]int, error) {
	return predictFrom(m.Proba, X)
}

// Proba returns the class probabilities of the rows of X: those of
// GMM-DaDiL-E or of GMM-DaDiL-R (see GMMDaDiL).
func (m *GMMDaDiL) Proba(X *mat.Dense) (*mat.Dense, error) {
	if m.Ensemble {
		return m.probaE(X)
	}
	return m.probaR(X)
}

// probaR returns GMM-DaDiL-R's class probabilities.
func (m *GMMDaDiL) probaR(X *mat.Dense) (*mat.Dense, error) {
	const name = "gmm-dadil"
	if m.Dict == nil {
		return nil, ErrNotFitted
	}
	X, err := m.projected(X)
	if err != nil {
		return nil, fmt.Errorf("adapt: %s: %w", name, err)
	}
	if m.R != nil {
		return probaOf(name, m.R, X)
	}
	var P mat.Dense
	if err := m.Dict.Target().Proba(&P, X); err != nil {
		return nil, fmt.Errorf("adapt: %s: %w", name, err)
	}
	return &P, nil
}

// probaE returns GMM-DaDiL-E's class probabilities.
func (m *GMMDaDiL) probaE(X *mat.Dense) (*mat.Dense, error) {
	const name = "gmm-dadil-e"
	if m.Dict == nil {
		return nil, ErrNotFitted
	}
	// α_T is the last row of α, after the sources'.
	N, K := m.Dict.Alpha.Dims()
	alpha := m.Dict.Alpha.RawRowView(N - 1)
	X, err := m.projected(X)
	if err != nil {
		return nil, fmt.Errorf("adapt: %s: %w", name, err)
	}
	if m.E == nil {
		var P mat.Dense
		if err := m.Dict.EnsembleProba(&P, X, alpha); err != nil {
			return nil, fmt.Errorf("adapt: %s: %w", name, err)
		}
		return &P, nil
	}
	if len(m.E) != K {
		return nil, fmt.Errorf("adapt: %s: %d classifiers for %d atoms", name, len(m.E), K)
	}
	P, err := classify.Ensemble(m.E, alpha, X)
	if err != nil {
		return nil, fmt.Errorf("adapt: %s: %w", name, err)
	}
	return P, nil
}

// predictFrom returns the argmax of every row of proba(X) (the lowest
// class on ties).
func predictFrom(proba func(*mat.Dense) (*mat.Dense, error), X *mat.Dense) ([]int, error) {
	P, err := proba(X)
	if err != nil {
		return nil, err
	}
	return classify.Argmax(P), nil
}

// Predictors returns GMM-DaDiL's two predictors of one dictionary: the
// method's own (GMM-DaDiL-R or -E), then its sibling.
func (m *GMMDaDiL) Predictors() []Predictor {
	r := Predictor{Name: "gmm-dadil", Proba: m.probaR}
	r.Predict = func(X *mat.Dense) ([]int, error) { return predictFrom(r.Proba, X) }
	e := Predictor{Name: "gmm-dadil-e", Proba: m.probaE}
	e.Predict = func(X *mat.Dense) ([]int, error) { return predictFrom(e.Proba, X) }
	if m.Ensemble {
		return []Predictor{e, r}
	}
	return []Predictor{r, e}
}

func (m *GMMDaDiL) setClassifier(t classify.Trainer) { m.Classifier = t }

// copySettings sets dst's settings (Settings, TargetComponents, EM, MAP,
// EnsembleTransport, SamplesPerClass, Dims) to copies of m's, keeping dst's seeds; a nil Settings
// or EM of m leaves dst's.
func (m *GMMDaDiL) copySettings(dst *GMMDaDiL) {
	if m.Settings != nil {
		s := *m.Settings
		s.Seed = dst.Seed
		if dst.Settings != nil {
			s.Seed = dst.Settings.Seed
		}
		s.TargetClasses = slices.Clone(s.TargetClasses)
		dst.Settings = &s
	}
	if m.EM != nil {
		e := *m.EM
		dst.EM = &e
	}
	dst.TargetComponents, dst.MAP, dst.EnsembleTransport, dst.SamplesPerClass = m.TargetComponents, m.MAP, m.EnsembleTransport, m.SamplesPerClass
	dst.Dims, dst.Transport, dst.TransportRows = m.Dims, m.Transport, m.TransportRows
	dst.BalancedTarget = m.BalancedTarget
}
