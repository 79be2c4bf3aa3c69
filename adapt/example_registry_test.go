package adapt_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
)

// Methods by name, as on the command line: each is fitted on three labeled
// sources and the unlabeled target, a copy of the same two classes moved
// further right, and scored on the target. DaDiL-R and DaDiL-E come from
// one fit through adapt.Predictors.
func ExampleNew() {
	domain := func(dx float64) (*mat.Dense, []int) {
		X := mat.NewDense(60, 2, nil)
		y := make([]int, 60)
		for i := range 60 {
			y[i] = i % 2
			a := 2 * math.Pi * float64(i/2) / 30
			X.Set(i, 0, dx+3*float64(y[i])+0.5*math.Cos(a))
			X.Set(i, 1, 0.5*math.Sin(a))
		}
		return X, y
	}
	p := &dataset.Problem{Classes: 2}
	for k, dx := range []float64{0, 0.4, 0.8} {
		X, y := domain(dx)
		p.Sources = append(p.Sources, dataset.Domain{Name: fmt.Sprint("source ", k), X: X, Y: y})
	}
	target, truth := domain(2)
	p.Target = dataset.Domain{Name: "target", X: target}
	for _, name := range []string{"source-only", "otda-emd", "dadil-r"} {
		m, err := adapt.New(name, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := m.Fit(p); err != nil {
			fmt.Println(err)
			return
		}
		for _, p := range adapt.Predictors(m) {
			pred, err := p.Predict(target)
			if err != nil {
				fmt.Println(err)
				return
			}
			right := 0
			for i := range pred {
				if pred[i] == truth[i] {
					right++
				}
			}
			fmt.Printf("%-12s %5.1f%%\n", p.Name, 100*float64(right)/float64(len(pred)))
		}
	}
	// Output:
	// source-only   71.7%
	// otda-emd     100.0%
	// dadil-r      100.0%
	// dadil-e      100.0%
}
