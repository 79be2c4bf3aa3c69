package testproblem_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/dadil/dadil/internal/testproblem"
)

// Two classes in three features, the second domain shifted by 1.
func Example() {
	rng := rand.New(rand.NewPCG(1, 1))
	means := testproblem.Means(rng, 2, 3, 3)
	for _, shift := range []float64{0, 1} {
		d := testproblem.Domain(rng, means, []int{3, 1}, 2, shift)
		fmt.Println(d.Name, d.X.RawMatrix().Rows, d.Y)
	}
	// Output:
	// shift 0 8 [0 0 0 0 0 0 1 1]
	// shift 1 8 [0 0 0 0 0 0 1 1]
}
