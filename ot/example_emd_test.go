package ot_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/ot"
)

func ExampleEMD() {
	// Two supplies and three demands.
	a := []float64{0.5, 0.5}
	b := []float64{0.25, 0.25, 0.5}
	C := mat.NewDense(2, 3, []float64{
		0, 1, 4,
		4, 1, 0,
	})
	r, err := ot.EMD(a, b, C)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("cost %.2f\n", r.Cost)
	for k := range r.Plan.Mass {
		fmt.Printf("%d → %d: %.2f\n", r.Plan.Row[k], r.Plan.Col[k], r.Plan.Mass[k])
	}
	// Output:
	// cost 0.25
	// 0 → 0: 0.25
	// 0 → 1: 0.25
	// 1 → 2: 0.50
}

func ExampleEMDSolver() {
	// An EMDSolver reuses its memory across problems and can bound the work.
	s := ot.EMDSolver{MaxPivots: 1000}
	var r ot.EMDResult
	for _, shift := range []float64{0, 1, 2} {
		C := mat.NewDense(2, 2, []float64{shift, 1, 1, shift})
		if err := s.Solve(&r, nil, nil, C); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("shift %.0f: cost %.2f\n", shift, r.Cost)
	}
	// Output:
	// shift 0: cost 0.00
	// shift 1: cost 1.00
	// shift 2: cost 1.00
}
