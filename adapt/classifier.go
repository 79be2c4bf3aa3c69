package adapt

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/mlp"
)

// classifierNames are the classifiers of NewClassifier.
var classifierNames = []string{"softmax", "softmax-cv", "knn", "mlp"}

// ClassifierNames returns the names NewClassifier knows.
func ClassifierNames() []string { return append([]string(nil), classifierNames...) }

// NewClassifier returns the classifier trainer called name, its random
// choices seeded by seed:
//
//   - softmax: softmax regression with the fixed penalty λ = 1e-3 (the
//     paper's classifier, classify.SoftmaxTrainer);
//   - softmax-cv: softmax regression whose λ is chosen by stratified 3-fold
//     cross-validation on the points it is trained on (classify.SoftmaxCV);
//   - knn: k nearest neighbours, k chosen by leave-one-out (classify.KNN);
//   - mlp: a network of one hidden layer of 128 ReLU units whose weight
//     decay is chosen by stratified 3-fold cross-validation (mlp.Classifier).
//
// Every method trains its final classifier with it on labeled points it
// built itself, so no choice uses a target label.
func NewClassifier(name string, seed uint64) (classify.Trainer, error) {
	switch name {
	case "softmax":
		return &classify.SoftmaxTrainer{}, nil
	case "softmax-cv":
		return &classify.SoftmaxCV{Seed: seed}, nil
	case "knn":
		return &classify.KNN{}, nil
	case "mlp":
		return &mlp.Classifier{Seed: seed}, nil
	}
	return nil, fmt.Errorf("adapt: unknown classifier %s (known: %s)", clip.Quote(name), strings.Join(classifierNames, ", "))
}

// StandardL2 is the penalty λ of the softmax classifier that dadil's
// commands use on standardised features (DefaultPenalty).
const StandardL2 = 1e-2

// DefaultPenalty returns the penalty λ of the softmax classifier that
// dadil's commands use on features scaled by kind: StandardL2 for
// standardised features (dataset.ScaleStandard, their default), the
// paper's classify.DefaultL2 for the others.
//
// The penalty λ‖W‖² acts on weights whose size follows the features':
// features of unit variance need smaller weights than features in [0, 1],
// so the same λ weighs more with min-max scaling. Each value gives
// DaDiL-R its best mean under its scaling over the development suite
// (docs/defaults.md#the-penalty); no target label chose them.
func DefaultPenalty(kind dataset.Scaling) float64 {
	if kind == dataset.ScaleStandard {
		return StandardL2
	}
	return classify.DefaultL2
}

// trainer returns t, or the default classifier when t is nil.
func trainer(t classify.Trainer) classify.Trainer {
	if t == nil {
		return &classify.SoftmaxTrainer{}
	}
	return t
}

// trainLabels trains t (nil: the default) on X with the class indices y in
// [0, classes) and the sample weights w.
func trainLabels(t classify.Trainer, X *mat.Dense, y []int, classes int, w []float64) (classify.Classifier, error) {
	return trainer(t).Train(X, classify.OneHot(y, classes), w)
}

// classified is a method whose final classifier can be chosen.
type classified interface {
	setClassifier(t classify.Trainer)
}

func (m *SourceOnly) setClassifier(t classify.Trainer) { m.Classifier = t }
func (m *SA) setClassifier(t classify.Trainer)         { m.Classifier = t }
func (m *TCA) setClassifier(t classify.Trainer)        { m.Classifier = t }
func (m *OTDA) setClassifier(t classify.Trainer)       { m.Classifier = t }
func (m *JCPOT) setClassifier(t classify.Trainer)      { m.Classifier = t }
func (m *WB) setClassifier(t classify.Trainer)         { m.Classifier = t }
func (m *WBT) setClassifier(t classify.Trainer)        { m.Classifier = t }
func (m *WJDOT) setClassifier(t classify.Trainer)      { m.Classifier = t }
func (m *WBR) setClassifier(t classify.Trainer)        { m.Classifier = t }
func (m *DaDiL) setClassifier(t classify.Trainer)      { m.Classifier = t }
func (s *Subsampled) setClassifier(t classify.Trainer) {
	if c, ok := s.Method.(classified); ok {
		c.setClassifier(t)
	}
}
