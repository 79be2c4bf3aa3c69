package classify_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
)

func ExampleFitLabels() {
	// Three classes in the plane, around (0, 0), (4, 0) and (0, 4).
	X := mat.NewDense(9, 2, []float64{
		0, 0, 0.5, -0.5, -0.5, 0.5,
		4, 0, 4.5, 0.5, 3.5, -0.5,
		0, 4, 0.5, 4.5, -0.5, 3.5,
	})
	labels := []int{0, 0, 0, 1, 1, 1, 2, 2, 2}
	m, r, err := classify.FitLabels(X, labels, 3, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("converged:", r.Converged)

	test := mat.NewDense(3, 2, []float64{1, 0.5, 3, 1, 0.5, 3})
	pred, err := m.Predict(test)
	if err != nil {
		fmt.Println(err)
		return
	}
	var P mat.Dense
	if err := m.Proba(&P, test); err != nil {
		fmt.Println(err)
		return
	}
	for i, k := range pred {
		fmt.Printf("%v → class %d, p = %.2f\n", test.RawRowView(i), k, P.RawRowView(i))
	}
	// Output:
	// converged: true
	// [1 0.5] → class 0, p = [0.87 0.10 0.03]
	// [3 1] → class 1, p = [0.01 0.98 0.02]
	// [0.5 3] → class 2, p = [0.01 0.01 0.98]
}

func ExampleFit() {
	// Soft targets: the middle sample is labeled 50/50, and the last one
	// weighs twice as much as the others.
	X := mat.NewDense(5, 1, []float64{-2, -1, 0, 1, 2})
	T := mat.NewDense(5, 2, []float64{
		1, 0,
		1, 0,
		0.5, 0.5,
		0, 1,
		0, 1,
	})
	weights := []float64{1, 1, 1, 1, 2}
	m, r, err := classify.Fit(X, T, weights, &classify.Settings{L2: 0.01})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("converged: %v, loss %.4f\n", r.Converged, r.Loss)
	fmt.Printf("W = %.3f, b = %.3f\n", m.W.RawMatrix().Data, m.B)
	// Output:
	// converged: true, loss 0.1759
	// W = [-1.331 1.331], b = [-0.006 0.006]
}
