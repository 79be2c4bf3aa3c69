package barycenter_test

import (
	"fmt"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/barycenter"
)

// In one dimension the barycenter of equal-size point clouds averages their
// sorted values.
func ExampleFreeSupport() {
	p1 := barycenter.Measure{X: mat.NewDense(3, 1, []float64{0, 1, 2})}
	p2 := barycenter.Measure{X: mat.NewDense(3, 1, []float64{10, 14, 12})}
	r, err := barycenter.FreeSupport([]barycenter.Measure{p1, p2}, []float64{0.75, 0.25}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	x := mat.Col(nil, 0, r.X)
	sort.Float64s(x)
	fmt.Printf("support %.2f, converged %v\n", x, r.Converged)
	// Output:
	// support [2.50 3.75 5.00], converged true
}

// A labeled barycenter moves features and soft labels together.
func ExampleLabeled() {
	// Two classes at −1 and +1 in one measure, at 3 and 5 in the other.
	p1 := barycenter.Measure{
		X: mat.NewDense(2, 1, []float64{-1, 1}),
		Y: mat.NewDense(2, 2, []float64{1, 0, 0, 1}),
	}
	p2 := barycenter.Measure{
		X: mat.NewDense(2, 1, []float64{5, 3}),
		Y: mat.NewDense(2, 2, []float64{0, 1, 1, 0}),
	}
	r, err := barycenter.Labeled([]barycenter.Measure{p1, p2}, []float64{0.5, 0.5}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; i < 2; i++ {
		fmt.Printf("x = %.1f, y = %.1f\n", r.X.At(i, 0), r.Y.RawRowView(i))
	}
	// Unordered output:
	// x = 1.0, y = [1.0 0.0]
	// x = 3.0, y = [0.0 1.0]
}

// A UniformSolver computes the labeled barycenter of measures of equal
// size and uniform weights, held in a Stack, reusing its buffers from one
// Solve to the next.
func ExampleUniformSolver() {
	// The measures of ExampleLabeled: two classes at −1 and +1 in one
	// measure, at 3 and 5 in the other.
	s := barycenter.NewStack(2, 2, 1, 2)
	s.SetMeasure(0, mat.NewDense(2, 1, []float64{-1, 1}), mat.NewDense(2, 2, []float64{1, 0, 0, 1}))
	s.SetMeasure(1, mat.NewDense(2, 1, []float64{5, 3}), mat.NewDense(2, 2, []float64{0, 1, 1, 0}))
	s.Prepare(1)

	u := barycenter.UniformSolver{MaxIter: 10, Tol: 1e-9}
	var r barycenter.UniformResult
	// Start from the points of measure 0 (stacked rows 0 and 1).
	if err := u.Solve(&r, s, []float64{0.5, 0.5}, []int{0, 1}); err != nil {
		fmt.Println(err)
		return
	}
	for j := 0; j < 2; j++ {
		fmt.Printf("x = %.1f, y = %.1f, from points %d and %d\n", r.X.At(j, 0), r.Y.RawRowView(j), r.Match[0][j], r.Match[1][j])
	}
	fmt.Printf("cost %.2f after %d iterations\n", r.Cost, r.Iterations)
	// Output:
	// x = 1.0, y = [1.0 0.0], from points 0 and 1
	// x = 3.0, y = [0.0 1.0], from points 1 and 0
	// cost 4.00 after 3 iterations
}
