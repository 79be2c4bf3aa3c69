package ot_test

import (
	"fmt"

	"github.com/dadil/dadil/ot"
)

func ExampleProjectSimplex() {
	v := []float64{0.8, 0.6, -0.2}
	x := make([]float64, len(v))
	ot.ProjectSimplex(x, v)
	fmt.Printf("%.4f\n", x)

	// In place, as in a projected-gradient step on barycentric weights.
	w := []float64{2, 2, 2, 2}
	ot.ProjectSimplex(w, w)
	fmt.Printf("%.4f\n", w)
	// Output:
	// [0.6000 0.4000 0.0000]
	// [0.2500 0.2500 0.2500 0.2500]
}
