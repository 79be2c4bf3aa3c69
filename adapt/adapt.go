// Package adapt holds multi-source domain-adaptation methods behind one
// small interface, in the manner of scikit-learn and skada: a method is fit
// on labeled source domains and the unlabeled target data, then predicts
// classes for target-domain data.
//
//	m := adapt.NewDaDiLR(nil)
//	if err := m.Fit(sources, targetTrain, classes); err != nil { … }
//	pred, err := m.Predict(targetTest)
//
// Labels are class indices 0 … classes−1 (dataset.Classes maps users'
// label values to indices). Methods that train a classifier use the
// softmax regression of package classify with its default L2 penalty 1e-3
// unless their settings say otherwise. Methods with random choices take a
// seed in their settings and are deterministic for it.
//
// New builds a method by its command-line name (Names lists them, in the
// order of the paper's tables), with the settings New documents.
// Predictors gives every way a fitted method classifies, with its class
// probabilities (Predictor.Proba; every method is a Prober): DaDiL-R and
// DaDiL-E (and WBR-R and WBR-E) are two predictors of one fit. Package
// selection scores them without target labels.
//
// ValidateOnSources scores any method without target data by holding out
// each source in turn as the unlabeled target (leave-one-domain-out
// validation): a way to choose between methods or settings without target
// labels; ValidatePredictors scores all the predictors of a method from one
// fit per held-out source.
//
// Errors returned by this package are prefixed with "adapt: ".
package adapt

import (
	"errors"
	"fmt"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/linalg"
)

// Method is a multi-source domain-adaptation method.
type Method interface {
	// Name returns the method's name as used on the command line
	// ("source-only", "sa", "dadil-r", …).
	Name() string
	// Fit adapts to the problem's target, given its labeled sources and
	// its unlabeled target rows; it never reads p.Test. It starts with
	// p.Check.
	Fit(p *dataset.Problem) error
	// Predict returns the class index of every row of X, target-domain
	// data (the rows given to Fit or new ones).
	Predict(X *mat.Dense) ([]int, error)
}

// ErrNotFitted is returned by Predict before a successful Fit.
var ErrNotFitted = errors.New("adapt: method not fitted")

// checkProblem returns the error of p.Check, prefixed with "adapt: " and
// the method's name: the first step of every Fit.
func checkProblem(m Method, p *dataset.Problem) error {
	if err := p.Check(); err != nil {
		return fmt.Errorf("adapt: %s: %w", m.Name(), err)
	}
	return nil
}

// finite returns an error naming X and the first entry of X that is not
// finite, if any.
func finite(name string, X *mat.Dense) error {
	if i, j, ok := linalg.FirstNonFiniteEntry(X); !ok {
		return fmt.Errorf("adapt: %s: feature (%d, %d) is %g", name, i, j, X.At(i, j))
	}
	return nil
}

// SourceOnly trains the classifier on all sources pooled, without
// adaptation: the paper's "baseline" row.
type SourceOnly struct {
	Classifier classify.Trainer
	model      classify.Classifier
}

// Name returns "source-only".
func (m *SourceOnly) Name() string { return "source-only" }

// Fit trains the classifier on the pooled sources; the target is only
// checked.
func (m *SourceOnly) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	X, y := p.PoolSources()
	model, err := trainLabels(m.Classifier, X, y, p.Classes, nil)
	if err != nil {
		return fmt.Errorf("adapt: source-only: %w", err)
	}
	m.model = model
	return nil
}

// Predict classifies the rows of X.
func (m *SourceOnly) Predict(X *mat.Dense) ([]int, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	return named(m.Name())(m.model.Predict(X))
}

// Proba returns the class probabilities of the rows of X.
func (m *SourceOnly) Proba(X *mat.Dense) (*mat.Dense, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	return probaOf(m.Name(), m.model, X)
}

// named returns a function that passes on a method's predictions and
// prefixes its error, if any, with "adapt: " and the method's name.
func named(name string) func([]int, error) ([]int, error) {
	return func(pred []int, err error) ([]int, error) {
		if err != nil {
			return nil, fmt.Errorf("adapt: %s: %w", name, err)
		}
		return pred, nil
	}
}

// DaDiL adapts with a dataset dictionary (dictionary.Fit): DaDiL-R when
// Ensemble is false, DaDiL-E when true.
type DaDiL struct {
	Ensemble   bool
	Settings   *dictionary.Settings
	Classifier classify.Trainer
	// Dict and Model are set by Fit.
	Dict  *dictionary.Dictionary
	Model *dictionary.Model
}

// NewDaDiLR returns DaDiL-R with the given dictionary settings (nil:
// defaults).
func NewDaDiLR(s *dictionary.Settings) *DaDiL { return &DaDiL{Settings: s} }

// NewDaDiLE returns DaDiL-E with the given dictionary settings.
func NewDaDiLE(s *dictionary.Settings) *DaDiL { return &DaDiL{Ensemble: true, Settings: s} }

// Name returns "dadil-r" or "dadil-e".
func (m *DaDiL) Name() string {
	if m.Ensemble {
		return "dadil-e"
	}
	return "dadil-r"
}

// Fit learns the dictionary on the sources and the target, then the
// classifiers of the target's model.
func (m *DaDiL) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	model, err := dictionary.FitModel(p, m.Settings, m.Classifier)
	if err != nil {
		return fmt.Errorf("adapt: %s: %w", m.Name(), err)
	}
	m.Dict, m.Model = model.Dict, model
	return nil
}

// Predict classifies the rows of X.
func (m *DaDiL) Predict(X *mat.Dense) ([]int, error) {
	if m.Model == nil {
		return nil, ErrNotFitted
	}
	if m.Ensemble {
		return named(m.Name())(m.Model.PredictE(X))
	}
	return named(m.Name())(m.Model.PredictR(X))
}

// Proba returns the class probabilities of the rows of X
// (dictionary.Model.ProbaE or ProbaR).
func (m *DaDiL) Proba(X *mat.Dense) (*mat.Dense, error) {
	return dictionaryProba(m, m.Model, m.Ensemble, X)
}

// Predictors returns DaDiL's two predictors of one dictionary: the
// method's own (DaDiL-R or DaDiL-E), then its sibling.
func (m *DaDiL) Predictors() []Predictor { return dictionaryPredictors(m, m.Model, m.Ensemble) }

// WBR regresses the target's barycentric coordinates on the sources
// (dictionary.WBR, paper Algorithm 3) and classifies like DaDiL-R (WBR-R)
// or DaDiL-E (WBR-E) with the sources as atoms.
type WBR struct {
	Ensemble   bool
	Settings   *dictionary.Settings
	Classifier classify.Trainer
	Dict       *dictionary.Dictionary
	Model      *dictionary.Model
}

// Name returns "wbr-r" or "wbr-e".
func (m *WBR) Name() string {
	if m.Ensemble {
		return "wbr-e"
	}
	return "wbr-r"
}

// Fit regresses α_T and trains the classifiers.
func (m *WBR) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	d, err := dictionary.WBR(p, m.Settings)
	if err != nil {
		return fmt.Errorf("adapt: %s: %w", m.Name(), err)
	}
	model, err := dictionary.NewModel(d, 0, m.Classifier, d.Settings.Seed)
	if err != nil {
		return fmt.Errorf("adapt: %s: %w", m.Name(), err)
	}
	m.Dict, m.Model = d, model
	return nil
}

// Predict classifies the rows of X.
func (m *WBR) Predict(X *mat.Dense) ([]int, error) {
	if m.Model == nil {
		return nil, ErrNotFitted
	}
	if m.Ensemble {
		return named(m.Name())(m.Model.PredictE(X))
	}
	return named(m.Name())(m.Model.PredictR(X))
}

// Proba returns the class probabilities of the rows of X, as DaDiL's.
func (m *WBR) Proba(X *mat.Dense) (*mat.Dense, error) {
	return dictionaryProba(m, m.Model, m.Ensemble, X)
}

// Predictors returns WBR's two predictors of one regression: the method's
// own (WBR-R or WBR-E), then its sibling.
func (m *WBR) Predictors() []Predictor { return dictionaryPredictors(m, m.Model, m.Ensemble) }
