package dictionary

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/barycenter"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/ot"
)

// movedSources returns the rows of the labeled sources moved along the
// dictionary towards the target (TransportSources), with their own labels.
// rec is the target's reconstruction B(α_T; P) and alphaT its coordinates;
// source ℓ has the coordinates of row ℓ of d.Alpha. Sources of more rows
// than Settings.TransportRows are subsampled (seeded by seed).
//
// The fixed point of the barycenter (Algorithm 1, line 6) gives every point
// b_j of the reconstruction an image in every atom through the plan π^(k)
// between the atom and the reconstruction,
//
//	T_k(j) = Σ_i π^(k)_ij a^(k)_i / Σ_i π^(k)_ij,   b_j = Σ_k α_T,k T_k(j).
//
// The same images weighed by the coordinates α_ℓ of source ℓ give b_j's
// counterpart on the source's side of the atoms' hull, s_j = Σ_k α_ℓ,k
// T_k(j), and so the displacement δ_j = b_j − s_j = Σ_k (α_T,k − α_ℓ,k)
// T_k(j) that the dictionary puts between the source and the target there.
// The rows x_i of class c of source ℓ are matched with the counterparts of
// the reconstruction's points of class c (their labels' argmax) by an exact
// optimal plan γ between uniform weights, for the squared Euclidean cost.
// With s̄_i = Σ_j γ_ij s_j / Σ_j γ_ij and δ̄_i likewise, each row moves by
// its points' mean displacement, less the mean over its class of what
// the atoms do not represent of the rows, r_c = mean_i (x_i − s̄_i):
//
//	x_i ↦ x_i + δ̄_i − r_c = b̄_i + (x_i − s̄_i − r_c),
//
// b̄_i = s̄_i + δ̄_i being the row's matched points of the reconstruction.
// A row keeps its own detail around its class (x_i − s̄_i − r_c), which a
// reconstruction of n points averages away, and the moved class has the
// mean of its reconstruction's points: a shift of the source that the
// atoms do not reach is not carried over to the target. A class without
// rows in the source, or without points in the reconstruction, leaves
// those rows out; nil when no row is left. The third result gives the
// source of every moved row (ℓ for sources[ℓ]).
func (d *Dictionary) movedSources(rec *barycenter.Result, alphaT []float64, sources []classify.Labeled, seed uint64) (*mat.Dense, []int, []int, error) {
	K := len(d.Atoms)
	images := make([]*mat.Dense, K)
	err := par.Run(K, d.Settings.Workers, func(k int) error {
		var T mat.Dense
		if err := rec.Plans[k].T().BarycentricMap(&T, d.Atoms[k].X); err != nil {
			return fmt.Errorf("dictionary: sources along the dictionary: atom %d: %w", k, err)
		}
		images[k] = &T
		return nil
	}, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	byClass := make([][]int, d.Classes)
	for j, c := range classify.Argmax(rec.Y) {
		byClass[c] = append(byClass[c], j)
	}
	moved := make([]dataset.Domain, len(sources))
	err = par.Run(len(sources), d.Settings.Workers, func(l int) error {
		X, y := d.sourceRows(sources[l], seed+uint64(l))
		var err error
		moved[l], err = moveSource(X, y, images, mat.Row(nil, l, d.Alpha), alphaT, byClass)
		if err != nil {
			return fmt.Errorf("dictionary: sources along the dictionary: source %d: %w", l, err)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	var from []int
	for l, m := range moved {
		from = append(from, slices.Repeat([]int{l}, len(m.Y))...)
	}
	moved = slices.DeleteFunc(moved, func(m dataset.Domain) bool { return len(m.Y) == 0 })
	if len(moved) == 0 {
		return nil, nil, nil, nil
	}
	X, y := dataset.Pool(moved)
	return X, y, from, nil
}

// sourceRows returns a source's rows and labels, or a uniform draw without
// replacement of Settings.TransportRows of them (in their order).
func (d *Dictionary) sourceRows(s classify.Labeled, seed uint64) (*mat.Dense, []int) {
	n, _ := s.X.Dims()
	idx := d.drawnRows(n, seed, 0x50c5)
	if idx == nil {
		return s.X, s.Y
	}
	y := make([]int, len(idx))
	for i, r := range idx {
		y[i] = s.Y[r]
	}
	return linalg.Rows(s.X, idx), y
}

// moveSource moves the rows X (classes y) of one source with coordinates
// alpha along the images T_k of the reconstruction's points (see
// movedSources), class by class; byClass lists the reconstruction's points
// of every class.
func moveSource(X *mat.Dense, y []int, images []*mat.Dense, alpha, alphaT []float64, byClass [][]int) (dataset.Domain, error) {
	nB, dim := images[0].Dims()
	counter, delta := mat.NewDense(nB, dim, nil), mat.NewDense(nB, dim, nil)
	for k, T := range images {
		for j := range nB {
			floats.AddScaled(counter.RawRowView(j), alpha[k], T.RawRowView(j))
			floats.AddScaled(delta.RawRowView(j), alphaT[k]-alpha[k], T.RawRowView(j))
		}
	}
	rows := make([][]int, len(byClass))
	for i, c := range y {
		rows[c] = append(rows[c], i)
	}
	out := mat.DenseCopyOf(X)
	var C mat.Dense
	for c, ri := range rows {
		bj := byClass[c]
		if len(ri) == 0 || len(bj) == 0 {
			continue
		}
		C.Reset()
		Xc := linalg.Rows(X, ri)
		if err := ot.SqEuclidean(&C, Xc, linalg.Rows(counter, bj)); err != nil {
			return dataset.Domain{}, err
		}
		res, err := ot.EMD(nil, nil, &C)
		if err != nil {
			return dataset.Domain{}, err
		}
		var shift, match mat.Dense // δ̄_i and s̄_i
		if err := res.Plan.BarycentricMap(&shift, linalg.Rows(delta, bj)); err != nil {
			return dataset.Domain{}, err
		}
		if err := res.Plan.BarycentricMap(&match, linalg.Rows(counter, bj)); err != nil {
			return dataset.Domain{}, err
		}
		// r_c, the class's mean residual x_i − s̄_i.
		rc := make([]float64, dim)
		for q := range ri {
			floats.Add(rc, Xc.RawRowView(q))
			floats.Sub(rc, match.RawRowView(q))
		}
		floats.Scale(1/float64(len(ri)), rc)
		for q, i := range ri {
			row := out.RawRowView(i)
			floats.Add(row, shift.RawRowView(q))
			floats.Sub(row, rc)
		}
	}
	// The rows of classes the reconstruction lacks stay behind.
	var kept []int
	for i, c := range y {
		if len(byClass[c]) > 0 {
			kept = append(kept, i)
		}
	}
	switch len(kept) {
	case 0:
		return dataset.Domain{}, nil
	case len(y):
		return dataset.Domain{X: out, Y: y}, nil
	}
	ky := make([]int, len(kept))
	for q, i := range kept {
		ky[q] = y[i]
	}
	return dataset.Domain{X: linalg.Rows(out, kept), Y: ky}, nil
}
