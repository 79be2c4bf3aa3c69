package adapt

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/barycenter"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/ot"
)

// BarycenterSettings configures the labeled Wasserstein barycenter of the
// sources computed by WB and WBT.
type BarycenterSettings struct {
	// Support is the number of barycenter points n_B; zero means the mean
	// number of rows of the sources, rounded. It must not be negative.
	Support int
	// MaxIter caps the barycenter iterations; zero means the default of
	// package barycenter (10). It must not be negative.
	MaxIter int
	// Beta weighs the label term of the ground cost ‖x − x'‖² + β‖y − y'‖²
	// (DaDiL paper eq. 9); zero selects, for every transport problem, the
	// largest feature cost (see barycenter.Settings). It must not be
	// negative.
	Beta float64
	// Seed seeds the draw of the initial support.
	Seed uint64
}

// labeledBarycenter returns the labeled barycenter of the sources with
// uniform weights α_k = 1/K: support initialised with n_B rows, and their
// one-hot labels, drawn without replacement from the pooled sources
// (barycenter.Settings.InitSamples) with a generator seeded by s.Seed.
// Rows of the returned soft labels are renormalised to sum to 1.
func labeledBarycenter(sources []dataset.Domain, classes int, s BarycenterSettings) (*barycenter.Result, error) {
	if s.Support < 0 || s.MaxIter < 0 {
		return nil, fmt.Errorf("negative barycenter setting (Support %d, MaxIter %d)", s.Support, s.MaxIter)
	}
	if math.IsNaN(s.Beta) || math.IsInf(s.Beta, 0) || s.Beta < 0 {
		return nil, fmt.Errorf("barycenter Beta = %g is not a non-negative number", s.Beta)
	}
	K := len(sources)
	measures := make([]barycenter.Measure, K)
	alpha := make([]float64, K)
	total := 0
	for k, src := range sources {
		n, _ := src.X.Dims()
		total += n
		Y := mat.NewDense(n, classes, nil)
		for i, y := range src.Y {
			Y.Set(i, y, 1)
		}
		measures[k] = barycenter.Measure{X: src.X, Y: Y}
		alpha[k] = 1 / float64(K)
	}
	nb := s.Support
	if nb == 0 {
		nb = int(math.Round(float64(total) / float64(K)))
	}
	res, err := barycenter.Labeled(measures, alpha, &barycenter.Settings{
		Support:     nb,
		MaxIter:     s.MaxIter,
		Beta:        s.Beta,
		InitSamples: true,
		Rand:        rand.New(rand.NewPCG(s.Seed, 0xba7)),
	})
	if err != nil {
		return nil, err
	}
	for i := 0; i < nb; i++ {
		row := res.Y.RawRowView(i)
		if t := floats.Sum(row); t > 0 {
			floats.Scale(1/t, row)
		}
	}
	return res, nil
}

// WB is the Wasserstein barycenter baseline of the ablation study of the
// DaDiL paper (Montesuma, Ngolè Mboula & Souloumiac, ECAI 2023, Table 3):
// the labeled Wasserstein barycenter B of the sources (paper Algorithm 1,
// package barycenter) with uniform weights α_k = 1/N_S, whose points carry
// soft labels, is taken as a proxy of the target; the classifier (package
// classify, soft-label cross-entropy) is trained on it and Predict
// classifies target-domain rows as they are. The target rows given to Fit
// are only checked.
//
// The DaDiL paper does not report the settings of WB. Here the barycenter
// has as many points as the sources on average, its support is
// initialised from source rows drawn at random (seeded by Bary.Seed), β is
// the scale-free default of package barycenter and at most 10 iterations
// are made (see BarycenterSettings).
type WB struct {
	// Bary configures the barycenter.
	Bary BarycenterSettings
	// Classifier configures the classifier; nil means the defaults of
	// package classify.
	Classifier classify.Trainer

	// Barycenter is set by Fit.
	Barycenter *barycenter.Result

	model classify.Classifier
}

// Name returns "wb".
func (m *WB) Name() string { return "wb" }

// Fit computes the barycenter of the sources and trains the classifier on
// it.
func (m *WB) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	sources, classes := p.Sources, p.Classes
	b, err := labeledBarycenter(sources, classes, m.Bary)
	if err != nil {
		return fmt.Errorf("adapt: wb: %w", err)
	}
	model, err := trainer(m.Classifier).Train(b.X, b.Y, nil)
	if err != nil {
		return fmt.Errorf("adapt: wb: %w", err)
	}
	m.Barycenter = b
	m.model = model
	return nil
}

// Predict classifies the rows of X.
func (m *WB) Predict(X *mat.Dense) ([]int, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	return named(m.Name())(m.model.Predict(X))
}

// Proba returns the class probabilities of the rows of X.
func (m *WB) Proba(X *mat.Dense) (*mat.Dense, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	return probaOf(m.Name(), m.model, X)
}

// WBT is WBT_reg, Wasserstein Barycenter Transport with class-regularised
// transport (Montesuma & Mboula, "Wasserstein Barycenter for Multi-Source
// Domain Adaptation", CVPR 2021), a baseline of the DaDiL paper (Montesuma,
// Ngolè Mboula & Souloumiac, ECAI 2023, Tables 2 and 3).
//
// The labeled barycenter B of the sources is computed as by WB; each point
// b_i gets the class ŷ_i = argmax of its soft label. B is then transported
// to the target rows (uniform weights) with the class-based l_p-l_1
// regularised entropic OT of Courty et al. (ot.SinkhornLpl1, groups from
// ŷ, cost ‖b_i − x_j‖² divided by its maximum), its points are mapped by
// the barycentric projection of that plan (DaDiL paper eq. 5),
//
//	b̂_i = Σ_j π_ij x_j / Σ_j π_ij,
//
// and the classifier is trained on the mapped points b̂_i with the soft
// labels of B. Predict classifies target-domain rows as they are. The
// transport step compensates the residual shift between the barycenter
// and the target (DaDiL paper, ablation study).
//
// Montesuma & Mboula define the barycenter of labeled distributions by
// penalising transport plans that mix classes (as the DaDiL paper recalls
// in its background on Wasserstein barycenters); this implementation
// uses the labeled barycenter of package barycenter (DaDiL paper
// Algorithm 1, exact transport, labels in the ground cost) and class-
// regularised entropic transport for the final step only. The
// regularisation strengths of that step are not reported in the DaDiL
// paper; they default to those of OTDA (DefaultOTDARegE =
// DefaultOTDARegCl = 0.1 for the normalised cost, DefaultOTDAInnerIter
// inner iterations).
type WBT struct {
	// Bary configures the barycenter.
	Bary BarycenterSettings
	// RegE and RegCl are the regularisation strengths of the transport to
	// the target, as for OTDA; zero means DefaultOTDARegE and
	// DefaultOTDARegCl.
	RegE, RegCl float64
	// Lpl1 configures ot.SinkhornLpl1; nil means its defaults, with inner
	// solves capped at DefaultOTDAInnerIter iterations.
	Lpl1 *ot.SinkhornLpl1Settings
	// Classifier configures the classifier; nil means the defaults of
	// package classify.
	Classifier classify.Trainer

	// Barycenter and Mapped are set by Fit: the barycenter of the sources
	// and its support mapped onto the target.
	Barycenter *barycenter.Result
	Mapped     *mat.Dense

	model classify.Classifier
}

// Name returns "wbt-reg".
func (m *WBT) Name() string { return "wbt-reg" }

// Fit computes the barycenter of the sources, transports it to the target
// and trains the classifier on the transported barycenter.
func (m *WBT) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	sources, target, classes := p.Sources, p.Target.X, p.Classes
	regE, regCl, err := entropicStrengths(m.RegE, m.RegCl)
	if err != nil {
		return fmt.Errorf("adapt: wbt-reg: %w", err)
	}
	b, err := labeledBarycenter(sources, classes, m.Bary)
	if err != nil {
		return fmt.Errorf("adapt: wbt-reg: %w", err)
	}
	nb, _ := b.X.Dims()
	yhat := make([]int, nb)
	for i := range yhat {
		yhat[i] = floats.MaxIdx(b.Y.RawRowView(i))
	}
	mapped, err := mapLpl1(b.X, yhat, target, regE, regCl, m.Lpl1)
	if err != nil {
		return fmt.Errorf("adapt: wbt-reg: %w", err)
	}
	model, err := trainer(m.Classifier).Train(mapped, b.Y, nil)
	if err != nil {
		return fmt.Errorf("adapt: wbt-reg: %w", err)
	}
	m.Barycenter, m.Mapped = b, mapped
	m.model = model
	return nil
}

// Predict classifies the rows of X.
func (m *WBT) Predict(X *mat.Dense) ([]int, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	return named(m.Name())(m.model.Predict(X))
}

// Proba returns the class probabilities of the rows of X.
func (m *WBT) Proba(X *mat.Dense) (*mat.Dense, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	return probaOf(m.Name(), m.model, X)
}
