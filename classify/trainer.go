package classify

import (
	"fmt"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// A Classifier gives the class probabilities of rows of features.
type Classifier interface {
	// Proba stores in dst the n×c class probabilities of the n rows of X
	// (dst empty, which Proba resizes, or of that shape).
	Proba(dst, X *mat.Dense) error
	// Predict returns the most probable class of every row of X.
	Predict(X *mat.Dense) ([]int, error)
}

// A Trainer trains classifiers on labeled points. Every method of package
// adapt, and DaDiL's classifiers, take one, so that a comparison of methods
// uses the same classifier for all.
type Trainer interface {
	// Train fits a classifier on the n×d features X and the n×c soft
	// targets T, each row a probability vector (one-hot for hard labels),
	// with sample weights w (nil: uniform; only their ratios matter). It
	// reads X, T and w and does not keep them.
	Train(X, T *mat.Dense, w []float64) (Classifier, error)
	// Name names the classifier as the command line does ("softmax",
	// "softmax-cv", …).
	Name() string
}

// SoftmaxTrainer trains a softmax regression with a fixed penalty
// (Settings.L2, default 1e-3, the paper's setting): Fit.
type SoftmaxTrainer struct {
	Settings *Settings
}

// Name returns "softmax", followed by the penalty when it is not
// DefaultL2 ("softmax, λ = 0.01").
func (t *SoftmaxTrainer) Name() string {
	if t.Settings == nil || t.Settings.L2 == 0 || t.Settings.L2 == DefaultL2 {
		if t.Settings == nil || !t.Settings.NoPenalty {
			return "softmax"
		}
		return "softmax, λ = 0"
	}
	return fmt.Sprintf("softmax, λ = %g", t.Settings.L2)
}

// Train fits a softmax regression (Fit).
func (t *SoftmaxTrainer) Train(X, T *mat.Dense, w []float64) (Classifier, error) {
	m, _, err := Fit(X, T, w, t.Settings)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// TrainFrom fits a softmax regression started from start, a *Softmax of
// T's classes and X's features (FitFrom): a warm start, for data close
// to those start was trained on.
func (t *SoftmaxTrainer) TrainFrom(X, T *mat.Dense, w []float64, start Classifier) (Classifier, error) {
	s, ok := start.(*Softmax)
	if !ok {
		return nil, fmt.Errorf("classify: softmax: a warm start from a %T, not a softmax regression", start)
	}
	m, _, err := FitFrom(X, T, w, t.Settings, s)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// A WarmTrainer is a Trainer that can also start from a classifier it
// trained (SoftmaxTrainer): TrainFrom(X, T, w, start) fits the same model
// as Train(X, T, w), up to where the optimiser stops, in fewer steps when
// start is close to it.
type WarmTrainer interface {
	Trainer
	TrainFrom(X, T *mat.Dense, w []float64, start Classifier) (Classifier, error)
}

// OneHot returns the n×c one-hot rows of the class indices y in [0, c).
func OneHot(y []int, c int) *mat.Dense {
	T := mat.NewDense(len(y), c, nil)
	for i, k := range y {
		T.Set(i, k, 1)
	}
	return T
}

// Argmax returns the index of the largest entry of every row of P (the
// lowest among ties).
func Argmax(P *mat.Dense) []int {
	r, _ := P.Dims()
	out := make([]int, r)
	for i := range out {
		out[i] = floats.MaxIdx(P.RawRowView(i))
	}
	return out
}
