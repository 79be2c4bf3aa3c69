package adapt

import (
	"fmt"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// trainR trains GMM-DaDiL-R's classifier on rows drawn from the target's
// reconstruction B(α_T; P) and, with Transport TransportSources, on the
// sources' rows of p moved along the dictionary (movedSources): half the
// weight to the drawn rows, equally, half to the moved rows, every class
// of them weighing the same.
func (m *GMMDaDiL) trainR(p *dataset.Problem) (classify.Classifier, error) {
	if m.Transport != dictionary.TransportSources {
		return m.trainOnSamples(m.Dict.Target(), p.Classes, rStream, nil)
	}
	Xb, Tb, _, err := m.drawSamples(m.Dict.Target(), p.Classes, rStream)
	if err != nil {
		return nil, err
	}
	Xs, ys, err := m.movedSources(p)
	if err != nil {
		return nil, err
	}
	if Xs == nil {
		return trainer(m.Classifier).Train(Xb, Tb, nil)
	}
	n, _ := Xb.Dims()
	var X, T mat.Dense
	X.Stack(Xb, Xs)
	T.Stack(Tb, classify.OneHot(ys, p.Classes))
	return trainer(m.Classifier).Train(&X, &T, classify.HalfWeights(n, ys, p.Classes))
}

// movedSources returns the rows of p's sources (at most TransportRows of
// each, drawn with Seed) moved along the dictionary towards the target,
// and their classes; nil when no row has a class of the target's
// reconstruction. Source ℓ is reconstructed by B(α_ℓ; P) and the target
// by B(α_T; P), both labeled mixtures; a row of class c moves by the
// difference of the class's means in the two (gmm.Mixture.ClassMeans),
//
//	x ↦ x + μ_c(B(α_T; P)) − μ_c(B(α_ℓ; P)),
//
// the shift the dictionary puts between the source and the target for
// that class, keeping the row's own detail around its class. Rows of a
// class without mass in either reconstruction are left out.
func (m *GMMDaDiL) movedSources(p *dataset.Problem) (*mat.Dense, []int, error) {
	S := len(p.Sources)
	var MT mat.Dense
	massT, err := m.Dict.Reconstructions[S].ClassMeans(&MT)
	if err != nil {
		return nil, nil, err
	}
	limit := m.TransportRows
	if limit == 0 {
		limit = dictionary.DefaultTransportRows
	}
	if limit > 0 {
		p, _ = p.Subsample(limit, m.Seed)
	}
	var moved []dataset.Domain
	for l, src := range p.Sources {
		var shift mat.Dense // row c: μ_c(B(α_T; P)) − μ_c(B(α_ℓ; P))
		massL, err := m.Dict.Reconstructions[l].ClassMeans(&shift)
		if err != nil {
			return nil, nil, fmt.Errorf("source %d: %w", l, err)
		}
		shift.Sub(&MT, &shift)
		var rows []int
		for i, c := range src.Y {
			if massT[c] > 0 && massL[c] > 0 {
				rows = append(rows, i)
			}
		}
		if len(rows) == 0 {
			continue
		}
		_, d := src.X.Dims()
		X := mat.NewDense(len(rows), d, nil)
		y := make([]int, len(rows))
		for n, i := range rows {
			c := src.Y[i]
			floats.AddTo(X.RawRowView(n), src.X.RawRowView(i), shift.RawRowView(c))
			y[n] = c
		}
		moved = append(moved, dataset.Domain{X: X, Y: y})
	}
	if len(moved) == 0 {
		return nil, nil, nil
	}
	X, y := dataset.Pool(moved)
	return X, y, nil
}
