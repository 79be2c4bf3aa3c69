package adapt_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
)

// Two labeled sources and a target that is the same two classes moved
// right by 4.5: a classifier trained on the sources fails on the target,
// the baselines that align or transport the domains do not.
func Example_baselines() {
	// Class 0 around (0, 0) and class 1 around (3, 0), 20 points each per
	// source, on small circles; the second source is slightly lower.
	source := func(dy float64) dataset.Domain {
		X := mat.NewDense(40, 2, nil)
		y := make([]int, 40)
		for i := range 40 {
			y[i] = i % 2
			a := 2 * math.Pi * float64(i/2) / 20
			X.Set(i, 0, 3*float64(y[i])+0.4*math.Cos(a))
			X.Set(i, 1, 0.4*math.Sin(a)+dy)
		}
		return dataset.Domain{X: X, Y: y}
	}
	target := mat.NewDense(30, 2, nil)
	truth := make([]int, 30)
	for i := range 30 {
		truth[i] = i % 2
		a := 2 * math.Pi * float64(i/2) / 15
		target.Set(i, 0, 4.5+3*float64(truth[i])+0.3*math.Cos(a))
		target.Set(i, 1, 0.3*math.Sin(a))
	}
	p := &dataset.Problem{Classes: 2, Sources: []dataset.Domain{source(0), source(-0.2)}, Target: dataset.Domain{X: target}}

	for _, m := range []adapt.Method{
		&adapt.SourceOnly{},
		&adapt.SA{},
		adapt.NewOTDAEMD(),
		adapt.NewOTDASinkhorn(),
		&adapt.WBT{},
	} {
		if err := m.Fit(p); err != nil {
			fmt.Println(err)
			return
		}
		pred, err := m.Predict(target)
		if err != nil {
			fmt.Println(err)
			return
		}
		ok := 0
		for i, c := range pred {
			if c == truth[i] {
				ok++
			}
		}
		fmt.Printf("%-14s %.2f\n", m.Name(), float64(ok)/float64(len(pred)))
	}
	// Output:
	// source-only    0.50
	// sa             1.00
	// otda-emd       1.00
	// otda-sinkhorn  1.00
	// wbt-reg        1.00
}
