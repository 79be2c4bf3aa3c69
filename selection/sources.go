package selection

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/linalg"
)

// HeldOutSources scores a method by leave-one-domain-out validation
// (adapt.ValidatePredictors): each of the K sources S_k in turn is held
// out, a new method is fitted on the other sources with S_k's features as
// its unlabeled target, and the score is the mean of its accuracies on the
// held-out labels,
//
//	score = (1/K) Σ_k acc_k ∈ [0, 1].
//
// With Balanced ("held-out-balanced"), acc_k is the balanced accuracy on
// S_k, the mean over its classes of the fraction of their rows classified
// right (classify.BalancedAccuracy): where a class is rare, as mines in
// minefields, plain accuracy rewards the methods that never predict it.
//
// Cost: K fits, whatever the number of predictors (one fit serves DaDiL-R
// and DaDiL-E), shared by the two forms on the same Candidate. It reads
// neither the candidate's fit nor the target rows. It needs K ≥ 2 and
// assumes that the shifts between sources resemble the shift to the
// target; a method whose settings follow the number of sources (DaDiL's
// K) is validated with one source fewer than it has.
type HeldOutSources struct {
	Balanced bool
}

// Name returns "held-out", or "held-out-balanced" with Balanced.
func (s HeldOutSources) Name() string {
	if s.Balanced {
		return "held-out-balanced"
	}
	return "held-out"
}

// Refits returns the number of sources.
func (HeldOutSources) Refits(p *dataset.Problem, _ int) int { return len(p.Sources) }

// Score returns the mean held-out accuracy (with Balanced, balanced
// accuracy) of every scored predictor.
func (s HeldOutSources) Score(p *dataset.Problem, c *Candidate) ([]float64, error) {
	scores, err := c.HeldOut(p)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(scores))
	for i, h := range scores {
		if s.Balanced {
			out[i] = adapt.MeanBalanced(h.HeldOut)
		} else {
			out[i] = adapt.MeanAccuracy(h.HeldOut)
		}
	}
	return out, nil
}

// HeldOut returns the held-out-source scores of the candidate's scored
// predictors on p, per source (HeldOutSources), fitting the K methods on
// the first call and keeping them for the next ones and for the scorer.
func (c *Candidate) HeldOut(p *dataset.Problem) ([]adapt.Scores, error) {
	if c.Build == nil {
		return nil, fmt.Errorf("selection: held-out refits the method and needs Candidate.Build")
	}
	m := c.cache()
	if m.heldOut == nil {
		s, err := adapt.ValidatePredictors(p, c.Build, nil)
		if err != nil {
			return nil, fmt.Errorf("selection: held-out: %w", err)
		}
		m.heldOut = s
	}
	n := c.Predictors
	if n <= 0 || n > len(m.heldOut) {
		n = len(m.heldOut)
	}
	return m.heldOut[:n], nil
}

// DefaultFolds is the default of IWV.Folds and DEV.Folds: a third of
// every source is held out, as skada's DEV holds out a third of the
// sources.
const DefaultFolds = 3

// IWV is importance-weighted validation (Sugiyama, Krauledat & Müller,
// "Covariate Shift Adaptation by Importance Weighted Cross Validation",
// JMLR 2007). A stratified 1/Folds of every source's rows is held out
// (classify.StratifiedFolds, seeded by Seed and the source's index), a
// new method is fitted on the rest with the same target, and its
// accuracy on the held-out rows (x_i, y_i), i = 1…n, is weighted by the
// importance w_i ≈ p_T(x_i)/p_S(x_i) (ImportanceWeights):
//
//	score = Σ_i w_i 1[ŷ(x_i) = y_i] / Σ_i w_i ∈ [0, 1],
//
// the self-normalised form, which equals the plain held-out accuracy when
// the weights are equal.
//
// Cost: one fit (shared with DEV on the same Candidate, Folds and Seed),
// whatever the number of predictors, plus a logistic regression between
// the domains. It assumes covariate shift, p_T(y|x) = p_S(y|x), with the
// target inside the support of the sources, and that the method fitted on
// (Folds−1)/Folds of the sources behaves like the one scored.
type IWV struct {
	// Folds: 1/Folds of every source is held out; 0 means DefaultFolds.
	// It must not be 1 or negative.
	Folds int
	Seed  uint64
}

// Name returns "iwv".
func (*IWV) Name() string { return "iwv" }

// Refits returns 1.
func (*IWV) Refits(*dataset.Problem, int) int { return 1 }

// Score returns every scored predictor's importance-weighted accuracy on
// the held-out source rows.
func (s *IWV) Score(p *dataset.Problem, c *Candidate) ([]float64, error) {
	sp, ps, err := c.refitted(p, s.Folds, s.Seed, s.Name())
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(ps))
	for i, pr := range ps {
		pred, err := pr.Predict(sp.held.X)
		if err != nil {
			return nil, fmt.Errorf("selection: iwv: %w", err)
		}
		out[i] = classify.WeightedAccuracy(pred, sp.held.Y, sp.weights)
	}
	return out, nil
}

// DEV is deep embedded validation (You, Wang, Long & Jordan, "Towards
// Accurate Model Selection in Deep Unsupervised Domain Adaptation", ICML
// 2019) on the input features, which stand for the embedding of a deep
// model. Its split, refit and weights are IWV's; with the cross-entropy
// ℓ_i = −log max(p̂_{y_i}(x_i), 1e-15) of the refitted method's
// probabilities on the held-out rows and z_i = w_i ℓ_i, the weighted risk
// is corrected by the weights as a control variate (their expectation
// under the sources is 1):
//
//	η = −Cov(z, w) / Var(w)   (sample moments; η = 0 when Var(w) = 0),
//	risk = mean(z) + η (mean(w) − 1),     score = −risk ≤ 0 for η = 0.
//
// With equal weights it is minus the plain held-out cross-entropy. Unlike
// IWV it judges the probabilities, not only the decisions. Cost and
// assumptions are IWV's (the refit is shared with it). The weights are
// truncated as IWV's (ImportanceWeights), which the paper does not do:
// it keeps one row of a nearly separable pair of domains from deciding
// the risk, at the price of a bias of the control variate.
type DEV struct {
	// Folds and Seed are as IWV's; with the same values the two share one
	// refit.
	Folds int
	Seed  uint64
}

// Name returns "dev".
func (*DEV) Name() string { return "dev" }

// Refits returns 1.
func (*DEV) Refits(*dataset.Problem, int) int { return 1 }

// lossFloor bounds the probability of the true class from below in DEV's
// cross-entropy (skada's choice too), so that one row costs at most
// −log 1e-15 ≈ 34.5.
const lossFloor = 1e-15

// Score returns minus every scored predictor's DEV risk on the held-out
// source rows.
func (s *DEV) Score(p *dataset.Problem, c *Candidate) ([]float64, error) {
	sp, ps, err := c.refitted(p, s.Folds, s.Seed, s.Name())
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(ps))
	for i, pr := range ps {
		P, err := proba(pr, sp.held.X)
		if err != nil {
			return nil, fmt.Errorf("selection: dev: %w", err)
		}
		loss := make([]float64, len(sp.held.Y))
		for r, y := range sp.held.Y {
			loss[r] = -math.Log(max(P.At(r, y), lossFloor))
		}
		out[i] = -devRisk(loss, sp.weights)
	}
	return out, nil
}

// devRisk returns DEV's control-variate estimate of the risk from the
// losses and the importance weights (see DEV).
func devRisk(loss, w []float64) float64 {
	n := len(loss)
	z := make([]float64, n)
	for i := range z {
		z[i] = w[i] * loss[i]
	}
	mz, mw := mean(z), mean(w)
	if n < 2 {
		return mz
	}
	var cov, vw float64
	for i := range z {
		cov += (z[i] - mz) * (w[i] - mw)
		vw += (w[i] - mw) * (w[i] - mw)
	}
	if vw == 0 {
		return mz
	}
	eta := -cov / vw // the 1/(n−1) of both moments cancels
	return mz + eta*(mw-1)
}

// splitKey identifies a split of the sources.
type splitKey struct {
	folds int
	seed  uint64
}

// split is the shared work of IWV and DEV: the method refitted without
// the held-out rows, those rows pooled, and their importance weights.
type split struct {
	method  adapt.Method
	held    dataset.Domain
	weights []float64
	err     error
}

// refitted returns the candidate's split for folds and seed, computing it
// on the first call (a failure too is kept), and the scored predictors of
// its refit.
func (c *Candidate) refitted(p *dataset.Problem, folds int, seed uint64, scorer string) (*split, []adapt.Predictor, error) {
	if folds == 0 {
		folds = DefaultFolds
	}
	if folds < 2 {
		return nil, nil, fmt.Errorf("selection: %s: Folds = %d; need at least 2", scorer, folds)
	}
	if _, err := c.predictors(); err != nil {
		return nil, nil, err
	}
	memo := c.cache()
	key := splitKey{folds, seed}
	sp, ok := memo.splits[key]
	if !ok {
		sp = newSplit(p, c, folds, seed, scorer)
		memo.splits[key] = sp
	}
	if sp.err != nil {
		return nil, nil, sp.err
	}
	return sp, firstN(adapt.Predictors(sp.method), c.Predictors), nil
}

// newSplit holds a stratified part of every source out, refits the
// method on the rest and weighs the held-out rows.
func newSplit(p *dataset.Problem, c *Candidate, folds int, seed uint64, scorer string) *split {
	fail := func(err error) *split { return &split{err: fmt.Errorf("selection: %s: %w", scorer, err)} }
	if err := p.Check(); err != nil {
		return fail(err)
	}
	kept, held, err := SplitSources(p.Sources, folds, seed)
	if err != nil {
		return fail(err)
	}
	m, err := c.build(scorer)
	if err != nil {
		return &split{err: err}
	}
	q := &dataset.Problem{Name: p.Name + " (sources split)", Classes: p.Classes, Sources: kept, Target: p.Target}
	if err := m.Fit(q); err != nil {
		return fail(err)
	}
	Xk, _ := dataset.Pool(kept)
	w, err := ImportanceWeights(Xk, p.Target.X, held.X)
	if err != nil {
		return fail(err)
	}
	return &split{method: m, held: held, weights: w}
}

// SplitSources holds a stratified 1/folds of every source out: the rows of
// the first fold of classify.StratifiedFolds of its labels, seeded by
// seed + k for source k. It returns the sources without those rows and
// the held-out rows of all sources pooled (with their labels), each in
// the order of the rows. Every source must keep a row and give one:
// sources of fewer than two rows are an error.
func SplitSources(sources []dataset.Domain, folds int, seed uint64) ([]dataset.Domain, dataset.Domain, error) {
	kept := make([]dataset.Domain, len(sources))
	held := make([]dataset.Domain, len(sources))
	for k, s := range sources {
		n := s.Rows()
		out := classify.StratifiedFolds(s.Y, folds, seed+uint64(k))[0]
		in := classify.Complement(out, n)
		if len(out) == 0 || len(in) == 0 {
			return nil, dataset.Domain{}, fmt.Errorf("source %s has %d rows, too few to hold 1/%d of them out", clip.Quote(s.Name), n, folds)
		}
		kept[k] = subDomain(s, in)
		held[k] = subDomain(s, out)
	}
	X, y := dataset.Pool(held)
	return kept, dataset.Domain{Name: "held-out source rows", X: X, Y: y}, nil
}

// subDomain returns the rows idx of the labeled domain d.
func subDomain(d dataset.Domain, idx []int) dataset.Domain {
	y := make([]int, len(idx))
	for i, r := range idx {
		y[i] = d.Y[r]
	}
	return dataset.Domain{Name: d.Name, X: linalg.Rows(d.X, idx), Y: y}
}

// ImportanceWeights estimates the importance w(x) = p_T(x)/p_S(x) of the
// rows of X, the source density p_S being that of the rows of source and
// the target density p_T that of target, by a probabilistic classifier
// between the domains (Bickel, Brückner & Scheffer, "Discriminative
// Learning Under Covariate Shift", JMLR 2009): a logistic regression
// (classify.FitLabels, default L2 penalty) of the domain, source 0 and
// target 1, each domain's rows weighted so that both domains weigh the
// same. With equal priors its log-odds estimate the log density ratio,
//
//	log w(x) = (W_1 − W_0)·x + (b_1 − b_0).
//
// The weights are then truncated at √n times their mean over the n rows
// of X, w_i ← min(w_i, √n w̄) (Ionides, "Truncated Importance Sampling",
// JCGS 2008), which bounds the share of any one row while keeping the
// estimate consistent; they are not normalised (IWV normalises by their
// sum, DEV keeps their scale for its control variate).
func ImportanceWeights(source, target, X *mat.Dense) ([]float64, error) {
	logw, err := logDensityRatio(source, target, X)
	if err != nil {
		return nil, err
	}
	return truncate(logw), nil
}

// logDensityRatio returns the log-odds of the balanced domain classifier
// of ImportanceWeights at the rows of X.
func logDensityRatio(source, target, X *mat.Dense) ([]float64, error) {
	ns, _ := source.Dims()
	nt, _ := target.Dims()
	Z, _ := dataset.Pool([]dataset.Domain{{X: source}, {X: target}})
	labels := make([]int, ns+nt)
	w := make([]float64, ns+nt)
	for i := range labels {
		w[i] = 1 / float64(ns)
		if i >= ns {
			labels[i], w[i] = 1, 1/float64(nt)
		}
	}
	model, _, err := classify.FitLabels(Z, labels, 2, w, nil)
	if err != nil {
		return nil, fmt.Errorf("domain classifier: %w", err)
	}
	n, d := X.Dims()
	if d != model.Dim {
		return nil, fmt.Errorf("domain classifier: X has %d features, the domains %d", d, model.Dim)
	}
	diff := make([]float64, d)
	for j := range diff {
		diff[j] = model.W.At(1, j) - model.W.At(0, j)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = model.B[1] - model.B[0]
		for j, v := range X.RawRowView(i) {
			out[i] += diff[j] * v
		}
	}
	return out, nil
}

// maxLogWeight bounds the truncation level of the weights, so that they
// stay finite however separable the domains (e^700 ≈ 1e304).
const maxLogWeight = 700

// truncate returns the weights exp(logw) truncated at √n times their mean
// (ImportanceWeights), computed in the log domain so that large log-odds
// do not overflow.
func truncate(logw []float64) []float64 {
	n := float64(len(logw))
	top := math.Inf(-1)
	for _, v := range logw {
		top = max(top, v)
	}
	var s float64
	for _, v := range logw {
		s += math.Exp(v - top)
	}
	// log(√n w̄) = log Σ e^{l_i} − log n + ½ log n.
	level := min(top+math.Log(s)-0.5*math.Log(n), maxLogWeight)
	w := make([]float64, len(logw))
	for i, v := range logw {
		w[i] = math.Exp(min(v, level))
	}
	return w
}
