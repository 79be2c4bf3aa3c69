package analyze_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/analyze"
)

// The scores of the paper's appendix: the sparsity of barycentric
// coordinates (Table 8), the density of an atom's support (Table 10), and
// the grid over Δ₃ on which Figure 4 evaluates the Wasserstein hull.
func Example() {
	fmt.Printf("sparsity of (0.7, 0.3, 0, 0): %.0f%%\n", analyze.Sparsity([]float64{0.7, 0.3, 0, 0}))

	atom := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	d, err := analyze.Density([]*mat.Dense{atom}, 2)
	if err != nil {
		panic(err)
	}
	fmt.Printf("density with 2 neighbours: %.2f\n", d)

	grid, _ := analyze.SimplexGrid(3, 10)
	fmt.Printf("grid of step 1/10 over Δ₃: %d points, the first %v\n", len(grid), grid[0])
	// Output:
	// sparsity of (0.7, 0.3, 0, 0): 50%
	// density with 2 neighbours: 1.75
	// grid of step 1/10 over Δ₃: 66 points, the first [0 0 1]
}
