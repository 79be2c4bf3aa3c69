package gmm

import (
	"slices"

	"gonum.org/v1/gonum/mat"
)

// LabeledResult is the outcome of FitLabeled.
type LabeledResult struct {
	// Mixture is the labeled mixture of all classes.
	Mixture *Mixture
	// Class holds the fit of every class (nil for a class without rows);
	// Class[c].Mixture has the within-class weights.
	Class []*Result
	// First holds, for every class, the index of its first component in
	// Mixture (its components are consecutive); −1 for a class without
	// rows.
	First []int
}

// FitLabeled fits a labeled mixture to a labeled domain: one mixture per
// class c, fitted by Fit (with Settings.Components components per class,
// or a count chosen by BIC for each class) on the rows with y_i = c. The
// components of class c get the one-hot label e_c, and the classes are
// balanced: with c' classes present, the components of class c get
// weights w_k^(c)/c', w^(c) the weights of its own fit, so every class
// has mass 1/c'. A class without rows gets no component (c' counts the
// classes with rows; Predict never returns such a class). Labels must lie
// in [0, classes).
//
// The fit of class c uses its own PCG stream of Settings.Seed, so it does
// not depend on the other classes.
func FitLabeled(X *mat.Dense, y []int, classes int, s *Settings) (*LabeledResult, error) {
	n, d, err := checkData(X, "X")
	if err != nil {
		return nil, err
	}
	if len(y) != n {
		return nil, errf("X has %d rows but y has %d labels", n, len(y))
	}
	if classes < 1 {
		return nil, errf("classes = %d must be positive", classes)
	}
	count := make([]int, classes)
	for i, c := range y {
		if c < 0 || c >= classes {
			return nil, errf("label y[%d] = %d is not in [0, %d)", i, c, classes)
		}
		count[c]++
	}
	set, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	// One buffer, as large as the largest class, takes each class's rows
	// in turn: a class is fitted on contiguous rows (EM reads them many
	// times) without a copy of the whole domain.
	buf := make([]float64, slices.Max(count)*d)
	res := &LabeledResult{Class: make([]*Result, classes), First: make([]int, classes)}
	present, K := 0, 0
	for c, m := range count {
		res.First[c] = -1
		if m == 0 {
			continue
		}
		Xc := classRows(mat.NewDense(m, d, buf[:m*d]), X, y, c)
		r, err := fit(Xc, set, uint64(c)+1)
		if err != nil {
			return nil, errf("class %d: %s", c, trimPrefix(err))
		}
		res.Class[c], res.First[c] = r, K
		present++
		K += r.Mixture.Components()
	}
	res.Mixture = res.assemble(K, d, classes, present)
	return res, nil
}

// classRows copies the rows of X with y_i = c, in order, to dst (as many
// rows as class c has) and returns it.
func classRows(dst, X *mat.Dense, y []int, c int) *mat.Dense {
	r := 0
	for i, v := range y {
		if v == c {
			copy(dst.RawRowView(r), X.RawRowView(i))
			r++
		}
	}
	return dst
}

// assemble returns the labeled mixture of the K components of the
// classes' fits, each class of mass 1/present.
func (res *LabeledResult) assemble(K, d, classes, present int) *Mixture {
	m := &Mixture{Weights: make([]float64, 0, K), Means: mat.NewDense(K, d, nil), Std: mat.NewDense(K, d, nil),
		Labels: mat.NewDense(K, classes, nil)}
	for c, r := range res.Class {
		if r == nil {
			continue
		}
		for k, w := range r.Mixture.Weights {
			row := res.First[c] + k
			m.Weights = append(m.Weights, w/float64(present))
			copy(m.Means.RawRowView(row), r.Mixture.Means.RawRowView(k))
			copy(m.Std.RawRowView(row), r.Mixture.Std.RawRowView(k))
			m.Labels.Set(row, c, 1)
		}
	}
	return m
}
