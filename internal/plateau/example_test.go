package plateau_test

import (
	"fmt"

	"github.com/dadil/dadil/internal/plateau"
)

func Example() {
	falling := []float64{10, 9, 8, 7}
	flat := []float64{5, 5, 5, 4.99}
	fmt.Println(plateau.Reached(falling, 2, 0.01), plateau.Reached(flat, 2, 0.01))
	// Output: false true
}
