package adapt

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
)

// HeldOut is the score of a method on one source domain held out as its
// target.
type HeldOut struct {
	Source   string  // the held-out domain's Name, or "source k" (0-based) when it has none
	Accuracy float64 // fraction of its rows classified right, in [0, 1]
}

// HoldOut splits the sources for held-out-source validation: rest are the
// sources without source k, and X, y are source k's features and labels,
// which play the unlabeled target and its hidden truth. rest shares no
// slice with sources. k must index sources: HoldOut panics otherwise, as
// an index out of range does.
func HoldOut(sources []Domain, k int) (rest []Domain, X *mat.Dense, y []int) {
	rest = make([]Domain, 0, len(sources)-1)
	rest = append(rest, sources[:k]...)
	rest = append(rest, sources[k+1:]...)
	return rest, sources[k].X, sources[k].Y
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
func ValidateOnSources(sources []Domain, classes int, build func() Method) ([]HeldOut, error) {
	s, err := validate(sources, classes, build, func(m Method) []Predictor {
		return []Predictor{{m.Name(), m.Predict}}
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
func ValidatePredictors(sources []Domain, classes int, build func() Method, done func(k int, s []Scores)) ([]Scores, error) {
	return validate(sources, classes, build, Predictors, done)
}

// validate holds out each source in turn, fits a method from build on the
// others with the held-out features as the target, and scores the
// predictors preds returns for it.
func validate(sources []Domain, classes int, build func() Method, preds func(Method) []Predictor, done func(int, []Scores)) ([]Scores, error) {
	if build == nil {
		return nil, errors.New("adapt: validate: no method")
	}
	if len(sources) < 2 {
		return nil, fmt.Errorf("adapt: validate: holding a source out needs at least 2 source domains, got %d", len(sources))
	}
	// The whole set must be valid; a held-out domain is checked as a
	// source here, since Fit sees it only as a target.
	if err := Check(sources, sources[0].X, classes); err != nil {
		return nil, err
	}
	var out []Scores
	for k := range sources {
		name := sources[k].Name
		if name == "" {
			name = fmt.Sprintf("source %d", k)
		}
		rest, X, y := HoldOut(sources, k)
		m := build()
		if m == nil {
			return nil, errors.New("adapt: validate: build returned no method")
		}
		if err := m.Fit(rest, X, classes); err != nil {
			return nil, fmt.Errorf("adapt: validate: %s held out: %w", name, err)
		}
		ps := preds(m)
		if out == nil {
			out = make([]Scores, len(ps))
			for i, p := range ps {
				out[i] = Scores{Predictor: p.Name, HeldOut: make([]HeldOut, 0, len(sources))}
			}
		}
		for i, p := range ps {
			pred, err := p.Predict(X)
			if err != nil {
				return nil, fmt.Errorf("adapt: validate: %s held out: %s: %w", name, p.Name, err)
			}
			acc, err := classify.Accuracy(pred, y)
			if err != nil {
				return nil, fmt.Errorf("adapt: validate: %s held out: %s: %w", name, p.Name, err)
			}
			out[i].HeldOut = append(out[i].HeldOut, HeldOut{Source: name, Accuracy: acc})
		}
		if done != nil {
			done(k, out)
		}
	}
	return out, nil
}

// MeanAccuracy is the mean accuracy of held-out scores (NaN for none).
func MeanAccuracy(h []HeldOut) float64 {
	var s float64
	for _, x := range h {
		s += x.Accuracy
	}
	return s / float64(len(h))
}
