package classify

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// EstimatePrior returns the class proportions of a set of rows from the
// class probabilities proba (rows × classes) that a classifier trained
// under equal class proportions gives them, by the expectation–
// maximisation of Saerens, Latinne & Decaestecker (2002): from uniform
// proportions h, it repeats
//
//	h_y ← (1/n) Σ_i p_iy h_y / Σ_c p_ic h_c
//
// (the mean over the rows of their posteriors under the prior h) until no
// proportion moves by more than 10⁻⁶, at most 1000 times. It returns nil
// for no rows.
func EstimatePrior(proba *mat.Dense) []float64 {
	if proba == nil || proba.IsEmpty() {
		return nil
	}
	n, c := proba.Dims()
	h := make([]float64, c)
	for y := range h {
		h[y] = 1 / float64(c)
	}
	next := make([]float64, c)
	post := make([]float64, c)
	for range 1000 {
		clear(next)
		for i := range n {
			var s float64
			for y, p := range proba.RawRowView(i) {
				post[y] = p * h[y]
				s += post[y]
			}
			if s == 0 {
				continue
			}
			for y := range post {
				next[y] += post[y] / s / float64(n)
			}
		}
		var moved float64
		for y := range h {
			moved = math.Max(moved, math.Abs(next[y]-h[y]))
		}
		h, next = next, h
		if moved <= 1e-6 {
			break
		}
	}
	return h
}
