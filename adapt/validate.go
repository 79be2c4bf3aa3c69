package adapt

import (
	"errors"
	"fmt"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
)

// HeldOut is the score of a method on one source domain held out as its
// target.
type HeldOut struct {
	Source   string  // the held-out domain's Name, or "source k" (0-based) when it has none
	Accuracy float64 // fraction of its rows classified right, in [0, 1]
	// Balanced is the mean over its classes of the fraction of their rows
	// classified right (classify.BalancedAccuracy), in [0, 1].
	Balanced float64
}

// ValidateOnSources scores a method without using any target data, labels
// or features: each source domain in turn is held out, a new method from
// build is fitted on the other sources with the held-out domain's features
// as the unlabeled target, and its predictions on those rows are scored
// against the held-out labels. It is leave-one-domain-out validation
// (Gulrajani & Lopez-Paz 2021 call it "leave-one-domain-out
// cross-validation"; it is common model-selection practice in domain
// adaptation): a label-free way, as far as the target is concerned, to
// choose between methods or settings, on the assumption that the shift
// between sources resembles the shift to the target.
//
// It needs at least two sources. A method that sets its settings from the
// number of sources (DaDiL's default K) is validated with one source fewer
// than it will have on the real target. Fits run one after the other, in
// the order of the sources; with a deterministic build the scores are
// deterministic.
func ValidateOnSources(p *dataset.Problem, build func() Method) ([]HeldOut, error) {
	s, err := validate(p, build, func(m Method) []Predictor {
		return []Predictor{predictor(m)}
	}, nil)
	if err != nil {
		return nil, err
	}
	return s[0].HeldOut, nil
}

// Scores are one predictor's scores in held-out-source validation, in the
// order of the sources.
type Scores struct {
	Predictor string
	HeldOut   []HeldOut
}

// ValidatePredictors is ValidateOnSources for all the predictors of the
// method (Predictors) at once: each held-out source costs one fit, scored
// by every predictor, so DaDiL-R and DaDiL-E are validated together. The
// scores come in the order of Predictors. done, if not nil, is called
// after each held-out source k, with the scores so far.
func ValidatePredictors(p *dataset.Problem, build func() Method, done func(k int, s []Scores)) ([]Scores, error) {
	return validate(p, build, Predictors, done)
}

// validate holds out each source of p in turn (dataset.Problem.HoldOut),
// fits a method from build on the others with the held-out features as the
// target, and scores the predictors preds returns for it.
func validate(p *dataset.Problem, build func() Method, preds func(Method) []Predictor, done func(int, []Scores)) ([]Scores, error) {
	if build == nil {
		return nil, errors.New("adapt: validate: no method")
	}
	if p == nil || len(p.Sources) < 2 {
		n := 0
		if p != nil {
			n = len(p.Sources)
		}
		return nil, fmt.Errorf("adapt: validate: holding a source out needs at least 2 source domains, got %d", n)
	}
	// Every held-out problem must be valid before the first fit; p's own
	// target is not used and may be empty.
	for k := range p.Sources {
		if err := p.HoldOut(k).Check(); err != nil {
			return nil, fmt.Errorf("adapt: validate: %w", err)
		}
	}
	var out []Scores
	for k := range p.Sources {
		q := p.HoldOut(k)
		m := build()
		if m == nil {
			return nil, errors.New("adapt: validate: build returned no method")
		}
		if err := m.Fit(q); err != nil {
			return nil, fmt.Errorf("adapt: validate: %s: %w", q.Name, err)
		}
		ps := preds(m)
		if out == nil {
			out = make([]Scores, len(ps))
			for i, pr := range ps {
				out[i] = Scores{Predictor: pr.Name, HeldOut: make([]HeldOut, 0, len(p.Sources))}
			}
		}
		for i, pr := range ps {
			h, err := scoreHeldOut(pr.Predict, q.Test)
			if err != nil {
				return nil, fmt.Errorf("adapt: validate: %s: %s: %w", q.Name, pr.Name, err)
			}
			out[i].HeldOut = append(out[i].HeldOut, h)
		}
		if done != nil {
			done(k, out)
		}
	}
	return out, nil
}

// Score returns the accuracy of predict on the labeled rows test, in
// [0, 1]; a label of −1 (a class unknown to the sources) counts as an
// error.
func Score(predict func(*mat.Dense) ([]int, error), test *dataset.Domain) (float64, error) {
	pred, err := predictTest(predict, test)
	if err != nil {
		return 0, err
	}
	return classify.Accuracy(pred, test.Y)
}

// scoreHeldOut returns the accuracy and balanced accuracy of predict on
// the labeled rows test, named after test.
func scoreHeldOut(predict func(*mat.Dense) ([]int, error), test *dataset.Domain) (HeldOut, error) {
	pred, err := predictTest(predict, test)
	if err != nil {
		return HeldOut{}, err
	}
	h := HeldOut{Source: test.Name}
	if h.Accuracy, err = classify.Accuracy(pred, test.Y); err != nil {
		return HeldOut{}, err
	}
	if h.Balanced, err = classify.BalancedAccuracy(pred, test.Y); err != nil {
		return HeldOut{}, err
	}
	return h, nil
}

// predictTest returns predict's classes of the labeled rows test, or an
// error when there are none.
func predictTest(predict func(*mat.Dense) ([]int, error), test *dataset.Domain) ([]int, error) {
	if test == nil {
		return nil, errors.New("adapt: no labeled rows to score")
	}
	return predict(test.X)
}

// MeanBalanced is the mean balanced accuracy of held-out scores (NaN for
// none).
func MeanBalanced(h []HeldOut) float64 {
	return meanOf(h, func(x HeldOut) float64 { return x.Balanced })
}

// MeanAccuracy is the mean accuracy of held-out scores (NaN for none).
func MeanAccuracy(h []HeldOut) float64 {
	return meanOf(h, func(x HeldOut) float64 { return x.Accuracy })
}

// meanOf is the mean of score over h (NaN for none), summed in order.
func meanOf(h []HeldOut, score func(HeldOut) float64) float64 {
	var s float64
	for _, x := range h {
		s += score(x)
	}
	return s / float64(len(h))
}
