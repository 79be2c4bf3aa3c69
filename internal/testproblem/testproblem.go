// Package testproblem generates the small labeled domains the tests of
// several packages share: Gaussian classes of unit variance around shared
// class means, every domain shifted by a constant along every feature.
// The draws follow a fixed order, so that a seed gives the same domains
// in every package.
package testproblem

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
)

// Means returns c class means in d features, row k class k's, every
// coordinate drawn from N(0, spread²) in row order.
func Means(rng *rand.Rand, c, d int, spread float64) *mat.Dense {
	means := mat.NewDense(c, d, nil)
	for k := range c {
		for j := range d {
			means.Set(k, j, spread*rng.NormFloat64())
		}
	}
	return means
}

// Domain returns counts[k]·scale rows of every class k, in class order,
// each row means_k + shift + N(0, I), labeled, and named "shift <shift>".
func Domain(rng *rand.Rand, means *mat.Dense, counts []int, scale int, shift float64) dataset.Domain {
	_, d := means.Dims()
	var data []float64
	var y []int
	for k, n := range counts {
		for range n * scale {
			for j := range d {
				data = append(data, means.At(k, j)+shift+rng.NormFloat64())
			}
			y = append(y, k)
		}
	}
	return dataset.Domain{Name: fmt.Sprint("shift ", shift), X: mat.NewDense(len(y), d, data), Y: y}
}
