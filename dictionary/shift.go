package dictionary

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/ot"
)

// TargetClasses records the class proportions an unlabeled domain's atom
// batches were drawn in, and where they came from (SharedProportions,
// estimatePriors).
type TargetClasses struct {
	// Shared are the class proportions the labeled domains share, nil
	// when they share none (or under Settings.BalancedTarget).
	Shared []float64 `json:",omitempty"`
	// Estimate is, under Settings.EstimateShift, the EM estimate ĥ of the
	// domain's proportions (classify.EstimatePrior), and Error its error
	// e: the larger of the estimator's error on the labeled domains held
	// out in turn and the spread of the estimates without each of them
	// (total variations).
	Estimate []float64 `json:",omitempty"`
	Error    float64   `json:",omitempty"`
	// Drawn are the proportions the batches were drawn in: Shared, or ĥ
	// shrunk towards Shared (towards equal proportions when Shared is
	// nil) by e; nil when class-balanced.
	Drawn []float64 `json:",omitempty"`
}

// targetClasses sets f.h.TargetClasses and f.priors, the class
// proportions of the unlabeled domains' atom batches, when the atoms
// learn from both labeled and unlabeled domains: the proportions the
// labeled domains share (SharedProportions, unless
// Settings.BalancedTarget), or, with Settings.EstimateShift, each
// domain's estimate (estimatePriors). Nothing is set where every batch
// stays class-balanced.
func (f *fitter) targetClasses() error {
	if f.fixed {
		return nil
	}
	var labeled, unlabeled bool
	for _, dm := range f.domains {
		labeled, unlabeled = labeled || dm.Labeled(), unlabeled || !dm.Labeled()
	}
	if !labeled || !unlabeled {
		return nil
	}
	var shared []float64
	if !f.set.BalancedTarget {
		shared = SharedProportions(f.domains, f.classes)
	}
	var tc []TargetClasses
	switch {
	case f.set.EstimateShift:
		var err error
		if tc, err = estimatePriors(f.domains, f.classes, shared, f.set.Workers); err != nil {
			return err
		}
	case shared != nil:
		tc = make([]TargetClasses, len(f.domains))
		for l, dm := range f.domains {
			if !dm.Labeled() {
				tc[l] = TargetClasses{Shared: shared, Drawn: shared}
			}
		}
	default:
		return nil
	}
	f.h.TargetClasses = tc
	f.priors = make([][]float64, len(tc))
	for l, t := range tc {
		f.priors[l] = t.Drawn
	}
	return nil
}

// SharedProportions returns the class proportions the labeled domains
// share, or nil (unlabeled domains are ignored). DaDiL draws an unlabeled
// domain's atom batches in them (Settings.BalancedTarget), GMM-DaDiL
// weighs the target's reconstruction by them
// (gmm.DictionarySettings.TargetClasses).
//
// Their pooled proportions p̄ (of all their rows) stand for an unlabeled
// domain's as far as the labeled domains agree on them: at
// total variation t from the equal proportions u, and the largest total
// variation of a labeled domain's own proportions from p̄ being s, the
// shared proportions are u + (1 − s/t)(p̄ − u) when t > s, at total
// variation t − s from u (the same soft threshold as estimatePriors'),
// and nil otherwise: domains whose classes are equally frequent share no
// imbalance, and domains whose proportions differ more than p̄ differs
// from u share none that carries over to another domain.
func SharedProportions(domains []dataset.Domain, classes int) []float64 {
	var ys []int
	for _, dm := range domains {
		ys = append(ys, dm.Y...)
	}
	pooled := proportions(ys, classes)
	u := ot.Uniform(classes)
	var s float64
	for _, dm := range domains {
		if dm.Labeled() {
			s = math.Max(s, totalVariation(proportions(dm.Y, classes), pooled))
		}
	}
	const tol = 1e-9 // rounding of equal class counts
	if t := totalVariation(pooled, u); t > s+tol {
		return shrink(pooled, u, 1-s/t)
	}
	return nil
}

// estimatePriors returns, for every unlabeled domain, its class
// proportions estimated by classify.EstimatePrior from the probabilities
// of a softmax regression (classify.DefaultL2) trained on the labeled
// domains pooled, every class weighed equally, with the estimate's error,
// and the estimate shrunk by that error towards the proportions the
// labeled domains share (shared; equal proportions when nil) as those to
// draw its batches in; the zero TargetClasses for the labeled domains.
//
// The error e of an unlabeled domain's estimate ĥ is the larger of two
// measures (total variations). The first is taken on the labeled
// domains, whose proportions are known: each held out in turn, the
// regression of the others estimates its proportions, and the largest
// error bounds the estimator's under the shifts between domains. The
// second is the estimate's own spread: the largest distance from ĥ of
// the estimates that those regressions, each without one labeled domain,
// give the unlabeled domain. An estimate at total variation t > e from
// the proportions h₀ it shrinks towards becomes h₀ + (1 − e/t)(ĥ − h₀),
// at total variation t − e from them: the part of the shift that the
// error cannot explain (a soft threshold); otherwise the batches are
// drawn in shared (class-balanced when nil). With a single labeled
// domain no error can be measured and the estimate is kept as it is.
//
// The features are standardised over all the domains first, so that the
// regression's fixed penalty, and with it the estimate, do not depend on
// how the caller scaled them.
func estimatePriors(domains []dataset.Domain, classes int, shared []float64, workers int) ([]TargetClasses, error) {
	var labeled []int
	for l, dm := range domains {
		if dm.Labeled() {
			labeled = append(labeled, l)
		}
	}
	domains, err := standardized(domains)
	if err != nil {
		return nil, err
	}
	pooled, err := balancedSoftmax(domains, labeled, -1, classes, workers)
	if err != nil {
		return nil, err
	}
	bound, held, err := heldOutError(domains, labeled, classes, workers)
	if err != nil {
		return nil, err
	}
	center := shared
	if center == nil {
		center = ot.Uniform(classes)
	}
	est := make([]TargetClasses, len(domains))
	for l, dm := range domains {
		if dm.Labeled() {
			continue
		}
		h, err := priorUnder(pooled, dm.X)
		if err != nil {
			return nil, err
		}
		e := bound
		for _, m := range held {
			hm, err := priorUnder(m, dm.X)
			if err != nil {
				return nil, err
			}
			e = math.Max(e, totalVariation(hm, h))
		}
		est[l] = TargetClasses{Shared: shared, Estimate: h, Error: e, Drawn: shared}
		if tv := totalVariation(h, center); tv > e {
			est[l].Drawn = shrink(slices.Clone(h), center, 1-e/tv)
		}
	}
	return est, nil
}

// heldOutError returns the largest total variation between a labeled
// domain's class proportions and their estimate under the balanced
// softmax regression of the other labeled domains, and those
// regressions, one per labeled domain held out (none with fewer than
// two labeled domains).
func heldOutError(domains []dataset.Domain, labeled []int, classes, workers int) (float64, []*classify.Softmax, error) {
	if len(labeled) < 2 {
		return 0, nil, nil
	}
	var bound float64
	models := make([]*classify.Softmax, len(labeled))
	for i, held := range labeled {
		m, err := balancedSoftmax(domains, labeled, held, classes, workers)
		if err != nil {
			return 0, nil, err
		}
		h, err := priorUnder(m, domains[held].X)
		if err != nil {
			return 0, nil, err
		}
		bound = math.Max(bound, totalVariation(h, proportions(domains[held].Y, classes)))
		models[i] = m
	}
	return bound, models, nil
}

// shrink returns u + keep·(h − u), in h.
func shrink(h, u []float64, keep float64) []float64 {
	for y := range h {
		h[y] = u[y] + keep*(h[y]-u[y])
	}
	return h
}

// standardized returns copies of the domains whose features are
// standardised over all their rows together (dataset.ScaleStandard).
func standardized(domains []dataset.Domain) ([]dataset.Domain, error) {
	files := make([]*dataset.File, len(domains))
	for l, dm := range domains {
		files[l] = &dataset.File{Name: dm.Name, X: dm.X}
	}
	sc, err := dataset.FitScaler(dataset.ScaleStandard, files...)
	if err != nil {
		return nil, fmt.Errorf("dictionary: class proportions: %w", err)
	}
	out := make([]dataset.Domain, len(domains))
	for l, dm := range domains {
		out[l] = dm
		out[l].X = new(mat.Dense)
		if err := sc.Transform(out[l].X, dm.X); err != nil {
			return nil, fmt.Errorf("dictionary: class proportions: %w", err)
		}
	}
	return out, nil
}

// proportions returns the share of every class among the labels y.
func proportions(y []int, classes int) []float64 {
	h := make([]float64, classes)
	for _, k := range y {
		h[k] += 1 / float64(len(y))
	}
	return h
}

// balancedSoftmax trains a softmax regression (classify.DefaultL2) on the
// rows of the labeled domains but held (-1: none) pooled, every class
// present weighed equally.
func balancedSoftmax(domains []dataset.Domain, labeled []int, held, classes, workers int) (*classify.Softmax, error) {
	var train []dataset.Domain
	for _, l := range labeled {
		if l != held {
			train = append(train, domains[l])
		}
	}
	X, y := dataset.Pool(train)
	m, _, err := classify.Fit(X, classify.OneHot(y, classes), classify.BalancedWeights(y, classes), &classify.Settings{Workers: workers})
	return m, err
}

// priorUnder returns classify.EstimatePrior of the probabilities m gives
// the rows X.
func priorUnder(m *classify.Softmax, X *mat.Dense) ([]float64, error) {
	var p mat.Dense
	if err := m.Proba(&p, X); err != nil {
		return nil, err
	}
	return classify.EstimatePrior(&p), nil
}

// totalVariation returns ½ Σ |p − q|.
func totalVariation(p, q []float64) float64 {
	var s float64
	for i := range p {
		s += math.Abs(p[i] - q[i])
	}
	return s / 2
}

// quotas returns how many of nb rows each class gets in proportion to h
// among the classes marked in present (largest remainders), or nil when h
// gives none of them any weight.
func quotas(h []float64, present []bool, nb int) []int {
	var total float64
	for y, p := range present {
		if p {
			total += h[y]
		}
	}
	if !(total > 0) {
		return nil
	}
	q := make([]int, len(h))
	rem := make([]float64, len(h))
	left := nb
	for y, p := range present {
		if p {
			exact := float64(nb) * h[y] / total
			q[y] = int(math.Floor(exact))
			rem[y] = exact - float64(q[y])
			left -= q[y]
		}
	}
	order := make([]int, 0, len(h))
	for y, p := range present {
		if p {
			order = append(order, y)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { // largest remainder first, then class order
		switch {
		case rem[a] > rem[b]:
			return -1
		case rem[a] < rem[b]:
			return 1
		}
		return 0
	})
	for i := 0; left > 0; i = (i + 1) % len(order) {
		q[order[i]]++
		left--
	}
	return q
}
