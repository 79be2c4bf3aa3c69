package selection

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
)

// fake is a deliberately bad method: fill gives the class probabilities
// of every row from its features alone, whatever the data it was fitted
// on.
type fake struct {
	name    string
	fill    func(p, x []float64)
	classes int
}

func (m *fake) Name() string { return m.name }

func (m *fake) Fit(p *dataset.Problem) error {
	if err := p.Check(); err != nil {
		return err
	}
	m.classes = p.Classes
	return nil
}

func (m *fake) Proba(X *mat.Dense) (*mat.Dense, error) {
	if m.classes == 0 {
		return nil, adapt.ErrNotFitted
	}
	n, _ := X.Dims()
	P := mat.NewDense(n, m.classes, nil)
	for i := range n {
		m.fill(P.RawRowView(i), X.RawRowView(i))
	}
	return P, nil
}

func (m *fake) Predict(X *mat.Dense) ([]int, error) { return argmaxOf(m.Proba(X)) }

// noise draws every row's class probabilities uniformly on the simplex
// (Dirichlet(1, …, 1)) by a stream seeded by the bits of its features, so
// that the same row always gets the same ones.
func noise(p, x []float64) {
	h := uint64(14695981039346656037)
	for _, v := range x {
		h = (h ^ math.Float64bits(v)) * 1099511628211
	}
	rng := rand.New(rand.NewPCG(h, 1))
	for k := range p {
		p[k] = rng.ExpFloat64()
	}
	floats.Scale(1/floats.Sum(p), p)
}

// constant gives every row class 0 with certainty.
func constant(p, _ []float64) { p[0] = 1 }

func argmaxOf(P *mat.Dense, err error) ([]int, error) {
	if err != nil {
		return nil, err
	}
	return classify.Argmax(P), nil
}

// counted returns a builder of methods from build and a counter of its
// calls.
func counted(build func() adapt.Method) (func() adapt.Method, *int) {
	n := new(int)
	return func() adapt.Method {
		*n++
		return build()
	}, n
}

// fitted returns a candidate of a method of build fitted on p, with the
// counter of the builder's later calls.
func fitted(p *dataset.Problem, build func() adapt.Method) (*Candidate, *int, error) {
	m := build()
	if err := m.Fit(p); err != nil {
		return nil, nil, err
	}
	b, n := counted(build)
	return &Candidate{Method: m, Build: b}, n, nil
}
