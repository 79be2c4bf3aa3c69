package classify

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Ensemble returns the weighted sum of the classifiers' class
// probabilities of the rows of X,
//
//	p(y | x) = Σ_k w_k h_k(x),
//
// DaDiL-E's rule (the paper's Section 4.2) with w = α_T: rows of probabilities when
// w lies on the simplex. A classifier of weight 0 is not evaluated; the
// terms are added in the order of hs. An error of a classifier is
// returned as it is, for the caller to prefix.
func Ensemble(hs []Classifier, w []float64, X *mat.Dense) (*mat.Dense, error) {
	if len(w) != len(hs) {
		return nil, fmt.Errorf("classify: ensemble of %d classifiers with %d weights", len(hs), len(w))
	}
	var out *mat.Dense
	var P mat.Dense
	for k, h := range hs {
		if w[k] == 0 {
			continue
		}
		P.Reset()
		if err := h.Proba(&P, X); err != nil {
			return nil, err
		}
		if out == nil {
			out = mat.NewDense(P.RawMatrix().Rows, P.RawMatrix().Cols, nil)
		}
		P.Scale(w[k], &P)
		out.Add(out, &P)
	}
	if out == nil {
		return nil, errors.New("classify: ensemble of no classifier of non-zero weight")
	}
	return out, nil
}
