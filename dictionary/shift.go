package dictionary

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
)

// estimateShift sets f.priors when Settings.EstimateShift asks for them
// and the atoms learn from both labeled and unlabeled domains.
func (f *fitter) estimateShift() error {
	if !f.set.EstimateShift || f.fixed {
		return nil
	}
	var labeled, unlabeled bool
	for _, dm := range f.domains {
		labeled, unlabeled = labeled || dm.Labeled(), unlabeled || !dm.Labeled()
	}
	if !labeled || !unlabeled {
		return nil
	}
	var err error
	f.priors, err = estimatePriors(f.domains, f.classes, f.set.Workers)
	return err
}

// estimatePriors returns, for every unlabeled domain, its class
// proportions estimated by classify.EstimatePrior from the probabilities
// of a softmax regression (classify.DefaultL2) trained on the labeled
// domains pooled, every class weighed equally, when the shift they show
// exceeds the estimator's own error; nil for the labeled domains and
// where it does not (Settings.EstimateShift). The error is measured on
// the labeled domains, whose proportions are known: each held out in
// turn, the regression of the others estimates its proportions, and the
// largest total variation from the truth bounds the estimator's error
// under the shifts between domains. An unlabeled domain's estimate is
// kept if its total variation from equal proportions exceeds that bound.
// With a single labeled domain no error can be measured and the
// estimate is kept.
func estimatePriors(domains []dataset.Domain, classes, workers int) ([][]float64, error) {
	var labeled []int
	for l, dm := range domains {
		if dm.Labeled() {
			labeled = append(labeled, l)
		}
	}
	pooled, err := balancedSoftmax(domains, labeled, -1, classes, workers)
	if err != nil {
		return nil, err
	}
	var bound float64 // the estimator's largest error on a held-out source
	for _, held := range labeled {
		if len(labeled) < 2 {
			break
		}
		m, err := balancedSoftmax(domains, labeled, held, classes, workers)
		if err != nil {
			return nil, err
		}
		h, err := priorUnder(m, domains[held].X)
		if err != nil {
			return nil, err
		}
		bound = math.Max(bound, totalVariation(h, proportions(domains[held].Y, classes)))
	}
	uniform := make([]float64, classes)
	for y := range uniform {
		uniform[y] = 1 / float64(classes)
	}
	priors := make([][]float64, len(domains))
	for l, dm := range domains {
		if dm.Labeled() {
			continue
		}
		h, err := priorUnder(pooled, dm.X)
		if err != nil {
			return nil, err
		}
		if totalVariation(h, uniform) > bound {
			priors[l] = h
		}
	}
	return priors, nil
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
