package adapt

import (
	"fmt"
	"math"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/ot"
)

// Default regularisation strengths of the entropic transports of OTDA and
// WBT, in units of the largest squared distance (the cost is normalised by
// its maximum).
const (
	DefaultOTDARegE  = 0.1
	DefaultOTDARegCl = 0.1
)

// OTDA is optimal transport for domain adaptation (Courty, Flamary, Tuia &
// Rakotomamonjy, "Optimal Transport for Domain Adaptation", IEEE TPAMI,
// 2016), the single-source OT baseline of the DaDiL paper (Montesuma,
// Ngolè Mboula & Souloumiac, ECAI 2023, Table 2), applied to the pooled
// sources.
//
// The pooled source rows x_i (uniform weights 1/n_S) are transported to
// the target rows y_j (uniform weights 1/n_T) with the squared Euclidean
// cost C_ij = ‖x_i − y_j‖², then mapped by the barycentric projection of
// the plan π (DaDiL paper eq. 5),
//
//	x̂_i = Σ_j π_ij y_j / Σ_j π_ij   ( = n_S Σ_j π_ij y_j ),
//
// the classifier (package classify) is trained on the mapped rows x̂_i with
// the source labels, and Predict classifies target-domain rows as they
// are.
//
// Two variants differ in the plan:
//
//   - "otda-emd" (Sinkhorn false): the exact plan, from ot.Assignment when
//     n_S = n_T (a permutation) and ot.EMD otherwise.
//   - "otda-sinkhorn" (Sinkhorn true): the entropic plan with the
//     class-based l_p-l_1 group-lasso regulariser (p = 1/2) of Courty et
//     al., solved by majorisation-minimisation with ot.SinkhornLpl1, the
//     source labels defining the groups. The cost is first divided by its
//     maximum, so that RegE and RegCl do not depend on the scale of the
//     features.
//
// Hyper-parameters. Courty et al. select the entropic and class
// regularisation strengths by cross-validation on each problem; the DaDiL
// paper does not report the values of its OTDA baseline. The defaults
// here are RegE = DefaultOTDARegE = 0.1 and RegCl = DefaultOTDARegCl =
// 0.1 for the cost normalised to a maximum of 1, with p = 1/2 and 10
// majorisation-minimisation iterations (the defaults of ot.SinkhornLpl1)
// and at most DefaultOTDAInnerIter Sinkhorn iterations per inner solve.
// See docs/defaults.md for the accuracy over a range of RegE and RegCl.
type OTDA struct {
	// Sinkhorn selects the class-regularised entropic variant.
	Sinkhorn bool
	// RegE and RegCl are the entropic and class regularisation strengths
	// of the Sinkhorn variant, for the cost normalised to a maximum of 1.
	// Zero means DefaultOTDARegE and DefaultOTDARegCl, so that the class
	// term cannot be switched off entirely (a tiny RegCl makes it
	// negligible). Both must be non-negative and finite.
	RegE, RegCl float64
	// Lpl1 configures ot.SinkhornLpl1; nil means its defaults, with inner
	// solves capped at DefaultOTDAInnerIter iterations.
	Lpl1 *ot.SinkhornLpl1Settings
	// Classifier configures the classifier; nil means the defaults of
	// package classify.
	Classifier classify.Trainer

	// Mapped is set by Fit: the pooled source rows mapped onto the target,
	// in the order of the sources.
	Mapped *mat.Dense

	model classify.Classifier
}

// DefaultOTDAInnerIter caps the Sinkhorn iterations of every inner solve
// of ot.SinkhornLpl1 made by OTDA and WBT when their Lpl1 settings are
// nil.
// Once the class term has taken effect the majorised problems are nearly
// degenerate and Sinkhorn converges slowly (see ot.SinkhornLpl1); every
// majorisation step continues from the potentials reached by the previous
// one, so a moderate cap loses little accuracy, while the cost of a Fit
// grows in proportion to it (see docs/defaults.md).
const DefaultOTDAInnerIter = 50

// NewOTDAEMD returns OTDA with exact transport ("otda-emd").
func NewOTDAEMD() *OTDA { return &OTDA{} }

// NewOTDASinkhorn returns OTDA with class-regularised entropic transport
// ("otda-sinkhorn") and the default strengths.
func NewOTDASinkhorn() *OTDA { return &OTDA{Sinkhorn: true} }

// Name returns "otda-emd" or "otda-sinkhorn".
func (m *OTDA) Name() string {
	if m.Sinkhorn {
		return "otda-sinkhorn"
	}
	return "otda-emd"
}

// Fit transports the pooled sources onto the target and trains the
// classifier on the mapped sources.
func (m *OTDA) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	target, classes := p.Target.X, p.Classes
	regE, regCl, err := entropicStrengths(m.RegE, m.RegCl)
	if err != nil {
		return fmt.Errorf("adapt: %s: %w", m.Name(), err)
	}
	Xs, ys := p.PoolSources()
	var mapped *mat.Dense
	if m.Sinkhorn {
		mapped, err = mapLpl1(Xs, ys, target, regE, regCl, m.Lpl1)
	} else {
		mapped, err = mapExact(Xs, target)
	}
	if err != nil {
		return fmt.Errorf("adapt: %s: %w", m.Name(), err)
	}
	model, err := trainLabels(m.Classifier, mapped, ys, classes, nil)
	if err != nil {
		return fmt.Errorf("adapt: %s: %w", m.Name(), err)
	}
	m.Mapped = mapped
	m.model = model
	return nil
}

// Predict classifies the rows of X.
func (m *OTDA) Predict(X *mat.Dense) ([]int, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	return named(m.Name())(m.model.Predict(X))
}

// Proba returns the class probabilities of the rows of X.
func (m *OTDA) Proba(X *mat.Dense) (*mat.Dense, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	return probaOf(m.Name(), m.model, X)
}

// entropicStrengths validates the strengths and fills in the defaults.
func entropicStrengths(regE, regCl float64) (float64, float64, error) {
	if math.IsNaN(regE) || math.IsInf(regE, 0) || regE < 0 {
		return 0, 0, fmt.Errorf("RegE = %g is not a non-negative number", regE)
	}
	if math.IsNaN(regCl) || math.IsInf(regCl, 0) || regCl < 0 {
		return 0, 0, fmt.Errorf("RegCl = %g is not a non-negative number", regCl)
	}
	if regE == 0 {
		regE = DefaultOTDARegE
	}
	if regCl == 0 {
		regCl = DefaultOTDARegCl
	}
	return regE, regCl, nil
}

// mapExact maps the rows of Xs onto Xt by the barycentric projection of an
// exact optimal plan between uniform weights, squared Euclidean cost.
func mapExact(Xs, Xt *mat.Dense) (*mat.Dense, error) {
	var C mat.Dense
	if err := ot.SqEuclidean(&C, Xs, Xt); err != nil {
		return nil, err
	}
	ns, _ := Xs.Dims()
	nt, _ := Xt.Dims()
	var plan ot.Plan
	if ns == nt {
		res, err := ot.Assignment(&C)
		if err != nil {
			return nil, err
		}
		plan = ot.Plan{N: ns, M: nt}
		w := 1 / float64(ns)
		for i, j := range res.Perm {
			plan.Row = append(plan.Row, i)
			plan.Col = append(plan.Col, j)
			plan.Mass = append(plan.Mass, w)
		}
	} else {
		res, err := ot.EMD(nil, nil, &C)
		if err != nil {
			return nil, err
		}
		plan = res.Plan
	}
	mapped := new(mat.Dense)
	if err := plan.BarycentricMap(mapped, Xt); err != nil {
		return nil, err
	}
	return mapped, nil
}

// mapLpl1 maps the rows of Xs, labeled ys, onto Xt by the barycentric
// projection of the class-regularised entropic plan between uniform
// weights, for the squared Euclidean cost divided by its maximum.
func mapLpl1(Xs *mat.Dense, ys []int, Xt *mat.Dense, regE, regCl float64, s *ot.SinkhornLpl1Settings) (*mat.Dense, error) {
	var C mat.Dense
	if err := ot.SqEuclidean(&C, Xs, Xt); err != nil {
		return nil, err
	}
	if mx := mat.Max(&C); mx > 0 {
		C.Scale(1/mx, &C)
	}
	if s == nil {
		s = &ot.SinkhornLpl1Settings{Sinkhorn: &ot.SinkhornSettings{MaxIter: DefaultOTDAInnerIter}}
	}
	res, err := ot.SinkhornLpl1(nil, nil, &C, ys, regE, regCl, s)
	if err != nil {
		return nil, err
	}
	mapped := new(mat.Dense)
	if err := ot.BarycentricMap(mapped, res.Plan, Xt); err != nil {
		return nil, err
	}
	return mapped, nil
}
