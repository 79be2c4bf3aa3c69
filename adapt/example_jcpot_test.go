package adapt_test

import (
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
)

// jcpotBlobs returns counts[c] points around the centre of each class c,
// (4c, 0) + shift, spread on a spiral of radius at most 1, with their
// labels.
func jcpotBlobs(counts []int, shift [2]float64) (*mat.Dense, []int) {
	var data []float64
	var y []int
	for c, n := range counts {
		for i := 0; i < n; i++ {
			r := math.Sqrt(float64(i+1) / float64(n))
			a := 2.4 * float64(i)
			data = append(data, 4*float64(c)+shift[0]+r*math.Cos(a), shift[1]+r*math.Sin(a))
			y = append(y, c)
		}
	}
	return mat.NewDense(len(y), 2, data), y
}

// JCPOT estimates the class proportions of an unlabeled target from two
// balanced sources, and labels it by propagating the sources' labels
// through the couplings.
func ExampleJCPOT() {
	x1, y1 := jcpotBlobs([]int{20, 20}, [2]float64{0, 0})
	x2, y2 := jcpotBlobs([]int{20, 20}, [2]float64{0.3, 0.2})
	target, truth := jcpotBlobs([]int{30, 10}, [2]float64{0.1, -0.2}) // 75% class 0

	m := &adapt.JCPOT{}
	p := &dataset.Problem{
		Classes: 2,
		Sources: []dataset.Domain{{Name: "s1", X: x1, Y: y1}, {Name: "s2", X: x2, Y: y2}},
		Target:  dataset.Domain{Name: "target", X: target},
	}
	if err := m.Fit(p); err != nil {
		log.Fatal(err)
	}
	pred, err := m.Predict(target)
	if err != nil {
		log.Fatal(err)
	}
	correct := 0
	for i, p := range pred {
		if p == truth[i] {
			correct++
		}
	}
	fmt.Printf("estimated proportions: %.2f\n", m.Proportions)
	fmt.Printf("accuracy: %d/%d\n", correct, len(truth))
	// Output:
	// estimated proportions: [0.75 0.25]
	// accuracy: 40/40
}
