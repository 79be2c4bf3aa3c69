package ot_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/ot"
)

func ExampleSinkhorn() {
	// Two point clouds on the line, with uniform weights (nil).
	X := mat.NewDense(3, 1, []float64{0, 1, 2})
	Y := mat.NewDense(2, 1, []float64{0.5, 2.5})
	var C mat.Dense
	if err := ot.SqEuclidean(&C, X, Y); err != nil {
		log.Fatal(err)
	}

	res, err := ot.Sinkhorn(nil, nil, &C, 0.05, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("converged: %t\n", res.Converged)
	fmt.Printf("cost: %.4f\n", res.Cost)
	fmt.Printf("plan:\n%.4f\n", mat.Formatted(res.Plan, mat.Squeeze()))
	// Output:
	// converged: true
	// cost: 0.5833
	// plan:
	// ⎡0.3333  0.0000⎤
	// ⎢0.1667  0.1667⎥
	// ⎣0.0000  0.3333⎦
}
