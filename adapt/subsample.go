package adapt

import (
	"errors"
	"fmt"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/mat"
)

// Subsampled fits Method on at most MaxRows rows of every source and of
// the target, drawn uniformly without replacement
// (dataset.Problem.Subsample, seeded by Seed), and predicts with it. It bounds the cost of the methods whose
// transport plans grow with the product of the domains' sizes (OTDA with
// Sinkhorn, JCPOT, WB, WBT_reg, WJDOT, WBR): the CWRU benchmark fits them
// on 2000 rows per domain. Domains of at most MaxRows rows are used whole,
// so on small problems Subsampled changes nothing. Predict classifies any
// rows, not only the ones drawn.
type Subsampled struct {
	Method  Method
	MaxRows int // must be positive
	Seed    uint64
}

// Name returns the name of the wrapped method ("subsampled" when there is
// none).
func (s *Subsampled) Name() string {
	if s.Method == nil {
		return "subsampled"
	}
	return s.Method.Name()
}

// Fit draws the rows (dataset.Problem.Subsample) and fits the wrapped
// method on them.
func (s *Subsampled) Fit(p *dataset.Problem) error {
	if s.Method == nil {
		return errors.New("adapt: Subsampled has no Method")
	}
	if s.MaxRows < 1 {
		return errors.New("adapt: Subsampled.MaxRows must be positive")
	}
	if err := checkProblem(s, p); err != nil {
		return err
	}
	q, drew := p.Subsample(s.MaxRows, s.Seed)
	err := s.Method.Fit(q)
	if err != nil && drew {
		// The draw, not the data, may be at fault (a class it missed).
		return fmt.Errorf("%w (in a random draw of at most %d rows of every domain)", err, s.MaxRows)
	}
	return err
}

// Predict classifies the rows of X with the wrapped method.
func (s *Subsampled) Predict(X *mat.Dense) ([]int, error) {
	if s.Method == nil {
		return nil, ErrNotFitted
	}
	return s.Method.Predict(X)
}

// Proba returns the class probabilities of the rows of X under the
// wrapped method (adapt.Prober), or an error when it gives none.
func (s *Subsampled) Proba(X *mat.Dense) (*mat.Dense, error) {
	if s.Method == nil {
		return nil, ErrNotFitted
	}
	p, ok := s.Method.(Prober)
	if !ok {
		return nil, fmt.Errorf("adapt: %s gives no class probabilities", s.Name())
	}
	return p.Proba(X)
}

// Predictors returns the predictors of the wrapped method.
func (s *Subsampled) Predictors() []Predictor {
	if s.Method == nil {
		return []Predictor{predictor(s)}
	}
	return Predictors(s.Method)
}
