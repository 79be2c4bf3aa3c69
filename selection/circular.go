package selection

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
)

// Circular is circular (reverse) validation (Bruzzone & Marconcini,
// "Domain Adaptation Problems: A DASVM Classification Technique and a
// Circular Validation Strategy", IEEE TPAMI 2010; Zhong et al., "Cross
// Validation Framework to Choose amongst Models and Datasets for Transfer
// Learning", ECML PKDD 2010). The fitted predictor labels the target rows,
// ŷ_T = f(X_T); a new method is fitted in the reverse direction, with the
// target so pseudo-labeled as its only source and the pooled sources' rows
// as its unlabeled target, and the same predictor of that fit, g, labels
// the sources:
//
//	score = (1/n_S) Σ_i 1[g(x_i) = y_i] over the pooled source rows ∈ [0, 1].
//
// A forward adaptation whose labels are right and a method that can adapt
// back give a high score. When f gives every target row one class, g is
// taken to predict that class everywhere, without a fit (skada does the
// same).
//
// Cost: one fit per scored predictor (DaDiL-R and DaDiL-E have different
// pseudo-labels), none for a constant one. It assumes that the shift is
// symmetric enough for the method to undo it, and that a method fits on a
// single source, which may lack some classes.
type Circular struct{}

// Name returns "circular".
func (Circular) Name() string { return "circular" }

// Refits returns the number of predictors.
func (Circular) Refits(_ *dataset.Problem, predictors int) int { return predictors }

// Score returns every scored predictor's reverse accuracy on the sources.
func (s Circular) Score(p *dataset.Problem, c *Candidate) ([]float64, error) {
	ps, err := c.predictors()
	if err != nil {
		return nil, err
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("selection: circular: %w", err)
	}
	Xs, ys := p.PoolSources()
	out := make([]float64, len(ps))
	for i, pr := range ps {
		yt, err := pr.Predict(p.Target.X)
		if err != nil {
			return nil, fmt.Errorf("selection: circular: %w", err)
		}
		back, err := s.reverse(p, c, i, yt, Xs)
		if err != nil {
			return nil, err
		}
		if out[i], err = classify.Accuracy(back, ys); err != nil {
			return nil, fmt.Errorf("selection: circular: %w", err)
		}
	}
	return out, nil
}

// reverse returns the classes that predictor i of a method fitted on the
// target pseudo-labeled yt gives the pooled source rows Xs.
func (Circular) reverse(p *dataset.Problem, c *Candidate, i int, yt []int, Xs *mat.Dense) ([]int, error) {
	ns, _ := Xs.Dims()
	if slices.Min(yt) == slices.Max(yt) {
		out := make([]int, ns)
		for r := range out {
			out[r] = yt[0]
		}
		return out, nil
	}
	m, err := c.build("circular")
	if err != nil {
		return nil, err
	}
	name := p.Target.Name
	if name == "" {
		name = "target"
	}
	q := &dataset.Problem{
		Name:    p.Name + " (reversed)",
		Classes: p.Classes,
		Sources: []dataset.Domain{{Name: name + ", pseudo-labeled", X: p.Target.X, Y: yt}},
		Target:  dataset.Domain{Name: "sources", X: Xs},
	}
	if err := m.Fit(q); err != nil {
		return nil, fmt.Errorf("selection: circular: reverse fit: %w", err)
	}
	back, err := adapt.Predictors(m)[i].Predict(Xs)
	if err != nil {
		return nil, fmt.Errorf("selection: circular: %w", err)
	}
	return back, nil
}
