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
// domains pooled, every class weighed equally; nil for the labeled
// domains (Settings.EstimateShift).
func estimatePriors(domains []dataset.Domain, classes, workers int) ([][]float64, error) {
	var Xs []*mat.Dense
	var ys []int
	for _, dm := range domains {
		if dm.Labeled() {
			Xs, ys = append(Xs, dm.X), append(ys, dm.Y...)
		}
	}
	X := stackRows(Xs)
	count := make([]float64, classes)
	for _, y := range ys {
		count[y]++
	}
	w := make([]float64, len(ys))
	for i, y := range ys {
		w[i] = float64(len(ys)) / (float64(classes) * count[y])
	}
	m, _, err := classify.Fit(X, classify.OneHot(ys, classes), w, &classify.Settings{Workers: workers})
	if err != nil {
		return nil, err
	}
	priors := make([][]float64, len(domains))
	for l, dm := range domains {
		if dm.Labeled() {
			continue
		}
		var p mat.Dense
		if err := m.Proba(&p, dm.X); err != nil {
			return nil, err
		}
		priors[l] = classify.EstimatePrior(&p)
	}
	return priors, nil
}

// stackRows returns the rows of the matrices one after the other.
func stackRows(Xs []*mat.Dense) *mat.Dense {
	var n, d int
	for _, X := range Xs {
		r, c := X.Dims()
		n, d = n+r, c
	}
	out := mat.NewDense(n, d, nil)
	i := 0
	for _, X := range Xs {
		r, _ := X.Dims()
		out.Slice(i, i+r, 0, d).(*mat.Dense).Copy(X)
		i += r
	}
	return out
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
