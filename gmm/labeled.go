package gmm

import (
	"runtime"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/par"
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
	res := &LabeledResult{Class: make([]*Result, classes), First: make([]int, classes)}
	if err := fitClasses(res.Class, X, y, count, set); err != nil {
		return nil, err
	}
	present, K := 0, 0
	for c, r := range res.Class {
		res.First[c] = -1
		if r == nil {
			continue
		}
		res.First[c] = K
		present++
		K += r.Mixture.Components()
	}
	res.Mixture = res.assemble(K, d, classes, present)
	return res, nil
}

// fitClasses sets dst[c] to the fit of the rows of class c, for every
// class with rows (count[c] > 0), each with its own PCG stream. A class
// is fitted on contiguous rows (EM reads them many times) in a buffer as
// large as the largest class, without a copy of the whole domain. When
// every class fits in one block of rows (so that its EM has little to
// share out) and more than one goroutine is allowed, classes run in
// parallel, one goroutine each with its own buffer; otherwise one at a
// time, each on all the goroutines. A fit does not depend on the
// goroutines it runs on, so neither do the results; the error is that of
// the lowest class that fails.
func fitClasses(dst []*Result, X *mat.Dense, y, count []int, set Settings) error {
	_, d := X.Dims()
	var cs []int
	for c, m := range count {
		if m > 0 {
			cs = append(cs, c)
		}
	}
	workers := set.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	largest := slices.Max(count)
	g := 1
	if largest <= blockRows {
		g = min(workers, len(cs))
	}
	one := set
	if g > 1 {
		one.Workers = 1
	}
	bufs := make(chan []float64, g)
	for range g {
		bufs <- make([]float64, largest*d)
	}
	return par.Run(len(cs), g, func(i int) error {
		c := cs[i]
		buf := <-bufs
		defer func() { bufs <- buf }()
		r, err := fit(classRows(mat.NewDense(count[c], d, buf[:count[c]*d]), X, y, c), one, uint64(c)+1)
		if err != nil {
			return errf("class %d: %s", c, trimPrefix(err))
		}
		dst[c] = r
		return nil
	}, nil)
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
