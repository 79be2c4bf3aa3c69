package dictionary_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dictionary"
)

// blob returns n points around (cx, cy) labeled by their side of x = cx.
func blob(rng *rand.Rand, n int, cx, cy float64) (*mat.Dense, []int) {
	X := mat.NewDense(n, 2, nil)
	y := make([]int, n)
	for i := range n {
		y[i] = i % 2
		X.Set(i, 0, cx+4*float64(y[i])-2+0.5*rng.NormFloat64())
		X.Set(i, 1, cy+0.5*rng.NormFloat64())
	}
	return X, y
}

// Two labeled sources and an unlabeled target between them: DaDiL expresses
// every domain as a barycenter of learned atoms (Algorithm 2), and DaDiL-R
// and DaDiL-E classify the target.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	Xa, ya := blob(rng, 200, 0, 0)
	Xb, yb := blob(rng, 200, 0, 6)
	Xt, yt := blob(rng, 200, 0, 3)
	domains := []dataset.Domain{
		{Name: "a", X: Xa, Y: ya},
		{Name: "b", X: Xb, Y: yb},
		{Name: "target", X: Xt}, // no labels
	}
	d, err := dictionary.Fit(domains, 2, &dictionary.Settings{Seed: 1})
	if err != nil {
		panic(err)
	}
	m, err := dictionary.NewModel(d, 2, nil, 1)
	if err != nil {
		panic(err)
	}
	pr, _ := m.PredictR(Xt)
	pe, _ := m.PredictE(Xt)
	agree := func(p []int) float64 {
		ok := 0
		for i := range p {
			if p[i] == yt[i] {
				ok++
			}
		}
		return float64(ok) / float64(len(p))
	}
	fmt.Printf("K = %d atoms; α_T sums to %.2f\n", len(d.Atoms), mat.Sum(d.Alpha.RowView(2)))
	fmt.Printf("DaDiL-R above 95%%: %v, DaDiL-E above 95%%: %v\n", agree(pr) > 0.95, agree(pe) > 0.95)
	// Output:
	// K = 2 atoms; α_T sums to 1.00
	// DaDiL-R above 95%: true, DaDiL-E above 95%: true
}
