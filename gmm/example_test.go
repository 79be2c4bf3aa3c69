package gmm_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/gmm"
)

func Example() {
	// A labeled domain: two classes in the plane, each drawn from a
	// known Gaussian.
	truth := &gmm.Mixture{
		Weights: []float64{0.5, 0.5},
		Means:   mat.NewDense(2, 2, []float64{0, 0, 6, 3}),
		Std:     mat.NewDense(2, 2, []float64{1, 0.5, 0.5, 1}),
	}
	X := mat.NewDense(4000, 2, nil)
	y, err := truth.Sample(X, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		fmt.Println(err)
		return
	}

	// One mixture per class, its number of components chosen by BIC.
	r, err := gmm.FitLabeled(X, y, 2, &gmm.Settings{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	P := r.Mixture
	for k := range P.Components() {
		fmt.Printf("class %.0f: weight %.2f, mean (%.1f, %.1f), deviations (%.1f, %.1f)\n",
			P.Labels.At(k, 1), P.Weights[k], P.Means.At(k, 0), P.Means.At(k, 1), P.Std.At(k, 0), P.Std.At(k, 1))
	}

	// Its distance to the truth, an optimal transport between components.
	c, err := gmm.MW2(P, truth, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("MW₂² to the truth below 0.01: %v\n", c.Value < 0.01)

	// Classification by the posterior over components.
	pred, err := P.Predict(mat.NewDense(2, 2, []float64{0.5, 0, 5, 3}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("classes of (0.5, 0) and (5, 3):", pred)
	// Output:
	// class 0: weight 0.50, mean (0.0, 0.0), deviations (1.0, 0.5)
	// class 1: weight 0.50, mean (6.0, 3.0), deviations (0.5, 1.0)
	// MW₂² to the truth below 0.01: true
	// classes of (0.5, 0) and (5, 3): [0 1]
}

func ExampleBarycenter() {
	// Two one-component mixtures: their barycenter averages the means and
	// the deviations.
	P := &gmm.Mixture{Weights: []float64{1}, Means: mat.NewDense(1, 1, []float64{0}), Std: mat.NewDense(1, 1, []float64{1})}
	Q := &gmm.Mixture{Weights: []float64{1}, Means: mat.NewDense(1, 1, []float64{4}), Std: mat.NewDense(1, 1, []float64{3})}
	r, err := gmm.Barycenter([]*gmm.Mixture{P, Q}, []float64{0.75, 0.25}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	B := r.Mixture
	fmt.Printf("N(%.2f, %.2f²)\n", B.Means.At(0, 0), B.Std.At(0, 0))
	// Output:
	// N(1.00, 1.50²)
}

func ExampleMap() {
	// Two one-dimensional mixtures with two components each: every point
	// follows the affine map of its component onto the matched one.
	P := &gmm.Mixture{Weights: []float64{0.5, 0.5}, Means: mat.NewDense(2, 1, []float64{-10, 10}), Std: mat.NewDense(2, 1, []float64{1, 1})}
	Q := &gmm.Mixture{Weights: []float64{0.5, 0.5}, Means: mat.NewDense(2, 1, []float64{-8, 20}), Std: mat.NewDense(2, 1, []float64{2, 0.5})}
	m, err := gmm.NewMap(P, Q, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	var Y mat.Dense
	if err := m.Mean(&Y, mat.NewDense(2, 1, []float64{-9, 12})); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("-9 → %.1f, 12 → %.1f\n", Y.At(0, 0), Y.At(1, 0))
	// Output:
	// -9 → -6.0, 12 → 21.0
}
