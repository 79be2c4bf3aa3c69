package ot_test

import (
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/ot"
)

func ExampleSqEuclidean() {
	X := mat.NewDense(2, 2, []float64{
		0, 0,
		1, 1,
	})
	Y := mat.NewDense(3, 2, []float64{
		0, 1,
		2, 0,
		1, 1,
	})
	var C mat.Dense // the zero value is resized to 2×3
	if err := ot.SqEuclidean(&C, X, Y); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.4g\n", mat.Formatted(&C))
	// Output:
	// ⎡1  4  2⎤
	// ⎣1  2  0⎦
}

func ExamplePairwise() {
	X := mat.NewDense(2, 2, []float64{
		0, 0,
		1, 1,
	})
	Y := mat.NewDense(3, 2, []float64{
		0, 1,
		2, 0,
		1, 1,
	})
	// The Manhattan (L1) distance as ground cost.
	l1 := func(x, y []float64) float64 {
		var s float64
		for k := range x {
			s += math.Abs(x[k] - y[k])
		}
		return s
	}
	var C mat.Dense
	if err := ot.Pairwise(&C, X, Y, l1); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.4g\n", mat.Formatted(&C))
	// Output:
	// ⎡1  2  2⎤
	// ⎣1  2  0⎦
}
