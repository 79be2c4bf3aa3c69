package adapt

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// trainR trains GMM-DaDiL-R's classifier on its training set (trainingR)
// and keeps that set in TrainingR.
func (m *GMMDaDiL) trainR(p *dataset.Problem) (classify.Classifier, error) {
	ts, err := m.trainingR(p)
	if err != nil {
		return nil, err
	}
	m.TrainingR = ts
	return trainer(m.Classifier).Train(ts.X, ts.Y, ts.Weights)
}

// trainingR returns GMM-DaDiL-R's training set: rows drawn from the
// target's reconstruction B(α_T; P) and, unless Transport is
// TransportNone, the sources' rows of p moved along the dictionary
// (movedSources): half the weight to the drawn rows, equally, half to the
// moved rows, every class of them weighing the same.
func (m *GMMDaDiL) trainingR(p *dataset.Problem) (*dictionary.TrainingSet, error) {
	Xb, Tb, _, err := m.drawSamples(m.Dict.Target(), p.Classes, rStream)
	if err != nil {
		return nil, err
	}
	n, _ := Xb.Dims()
	drawn := &dictionary.TrainingSet{X: Xb, Y: Tb, Source: slices.Repeat([]int{-1}, n)}
	if m.Transport == dictionary.TransportNone {
		return drawn, nil
	}
	Xs, ys, from, err := m.movedSources(p)
	if err != nil {
		return nil, err
	}
	if Xs == nil {
		return drawn, nil
	}
	var X, T mat.Dense
	X.Stack(Xb, Xs)
	T.Stack(Tb, classify.OneHot(ys, p.Classes))
	return &dictionary.TrainingSet{X: &X, Y: &T, Weights: classify.HalfWeights(n, ys, p.Classes), Source: append(drawn.Source, from...)}, nil
}

// movedSources returns the rows of p's sources (at most TransportRows of
// each, by default as many as drawn from B(α_T; P), drawn with Seed)
// moved along the dictionary towards the target, their classes and the
// index of the source of each; nil when no row has a class of the
// target's reconstruction. Source ℓ is reconstructed by B(α_ℓ; P) and
// the target by B(α_T; P), both labeled mixtures; a row of class c moves
// by the difference of the class's means in the two
// (gmm.Mixture.ClassMeans),
//
//	x ↦ x + μ_c(B(α_T; P)) − μ_c(B(α_ℓ; P)),
//
// the shift the dictionary puts between the source and the target for
// that class, keeping the row's own detail around its class. Rows of a
// class without mass in either reconstruction are left out.
func (m *GMMDaDiL) movedSources(p *dataset.Problem) (X *mat.Dense, y, from []int, err error) {
	S := len(p.Sources)
	var MT mat.Dense
	massT, err := m.Dict.Reconstructions[S].ClassMeans(&MT)
	if err != nil {
		return nil, nil, nil, err
	}
	limit := m.TransportRows
	if limit == 0 {
		limit = m.samplesPerClass() * p.Classes
	}
	if limit > 0 {
		q := *p
		q.Target = dataset.Domain{} // draw the sources' rows alone
		p, _ = q.Subsample(limit, m.Seed)
	}
	var moved []dataset.Domain
	for l, src := range p.Sources {
		var shift mat.Dense // row c: μ_c(B(α_T; P)) − μ_c(B(α_ℓ; P))
		massL, err := m.Dict.Reconstructions[l].ClassMeans(&shift)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("source %d: %w", l, err)
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
		Xl := mat.NewDense(len(rows), d, nil)
		yl := make([]int, len(rows))
		for n, i := range rows {
			c := src.Y[i]
			floats.AddTo(Xl.RawRowView(n), src.X.RawRowView(i), shift.RawRowView(c))
			yl[n] = c
		}
		moved = append(moved, dataset.Domain{X: Xl, Y: yl})
		from = append(from, slices.Repeat([]int{l}, len(rows))...)
	}
	if len(moved) == 0 {
		return nil, nil, nil, nil
	}
	X, y = dataset.Pool(moved)
	return X, y, from, nil
}
