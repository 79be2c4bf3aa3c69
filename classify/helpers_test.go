package classify

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// newRand returns a deterministic generator for the tests.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// clusters draws n samples of c Gaussian classes in d dimensions: class
// means N(0, sep²/d · I) so that the expected distance between two means is
// about sep·√2, unit-variance isotropic noise, labels cycling over the
// classes.
func clusters(rng *rand.Rand, n, d, c int, sep float64) (means, X *mat.Dense, labels []int) {
	means = mat.NewDense(c, d, nil)
	scale := sep / math.Sqrt(float64(d))
	for k := range c {
		for j := range d {
			means.Set(k, j, scale*rng.NormFloat64())
		}
	}
	X, labels = drawClusters(rng, means, n, 1)
	return means, X, labels
}

// drawClusters draws n samples around the rows of means with isotropic
// noise of standard deviation sd.
func drawClusters(rng *rand.Rand, means *mat.Dense, n int, sd float64) (*mat.Dense, []int) {
	c, d := means.Dims()
	X := mat.NewDense(n, d, nil)
	labels := make([]int, n)
	for i := range n {
		k := i % c
		labels[i] = k
		for j := range d {
			X.Set(i, j, means.At(k, j)+sd*rng.NormFloat64())
		}
	}
	return X, labels
}

// overlappingUnit draws n samples of c overlapping classes in [0, 1]^d:
// class means uniform in [0.3, 0.7]^d, Gaussian noise of standard deviation
// 0.6, clipped to [0, 1].
func overlappingUnit(n, d, c int, seed uint64) (*mat.Dense, []int) {
	rng := newRand(seed)
	means := mat.NewDense(c, d, nil)
	for k := range c {
		for j := range d {
			means.Set(k, j, 0.3+0.4*rng.Float64())
		}
	}
	X, labels := drawClusters(rng, means, n, 0.6)
	raw := X.RawMatrix()
	for i, v := range raw.Data {
		raw.Data[i] = min(1, max(0, v))
	}
	return X, labels
}

// overlappingCounts draws n bag-of-words histograms of c classes in d
// bins, like SURF features: Poisson counts whose rates, 0.2 to ~50 across
// bins, vary by a factor e^{0.3 N(0,1)} between classes.
func overlappingCounts(n, d, c int, seed uint64) (*mat.Dense, []int) {
	rng := newRand(seed)
	base := make([]float64, d)
	for j := range base {
		u := rng.Float64()
		base[j] = 0.2 * math.Exp(5.5*u*u*u)
	}
	rates := make([]float64, c*d)
	for k := range c {
		for j := range d {
			rates[k*d+j] = base[j] * math.Exp(0.3*rng.NormFloat64())
		}
	}
	X := mat.NewDense(n, d, nil)
	labels := make([]int, n)
	for i := range n {
		k := rng.IntN(c)
		labels[i] = k
		for j := range d {
			X.Set(i, j, float64(poisson(rng, rates[k*d+j])))
		}
	}
	return X, labels
}

// poisson draws a Poisson variate by inversion (rates below ~700).
func poisson(rng *rand.Rand, rate float64) int {
	u := rng.Float64()
	p := math.Exp(-rate)
	cdf := p
	k := 0
	for u > cdf && k < 2000 {
		k++
		p *= rate / float64(k)
		cdf += p
	}
	return k
}

// softTargets draws n random rows on the simplex of c classes, sharpened
// towards labels.
func softTargets(rng *rand.Rand, labels []int, c int) *mat.Dense {
	T := mat.NewDense(len(labels), c, nil)
	for i, y := range labels {
		row := T.RawRowView(i)
		var sum float64
		for k := range row {
			row[k] = rng.ExpFloat64()
			if k == y {
				row[k] += 3
			}
			sum += row[k]
		}
		for k := range row {
			row[k] /= sum
		}
	}
	return T
}
