package adapt_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
)

// Choosing a method without target labels: each source is held out in turn
// and plays the unlabeled target. Here every domain moves the same two
// classes a step further right, so a classifier of the pooled sources fails
// on the held-out domains at the ends, while exact OTDA, which transports
// the held-out domain onto the others, does not. No target data is used.
func ExampleValidateOnSources() {
	domain := func(name string, dx float64) dataset.Domain {
		X := mat.NewDense(40, 2, nil)
		y := make([]int, 40)
		for i := range 40 {
			y[i] = i % 2
			a := 2 * math.Pi * float64(i/2) / 20
			X.Set(i, 0, dx+3*float64(y[i])+0.4*math.Cos(a))
			X.Set(i, 1, 0.4*math.Sin(a))
		}
		return dataset.Domain{Name: name, X: X, Y: y}
	}
	sources := []dataset.Domain{domain("a", 0), domain("b", 2.5), domain("c", 5)}
	for _, build := range []func() adapt.Method{
		func() adapt.Method { return &adapt.SourceOnly{} },
		func() adapt.Method { return adapt.NewOTDAEMD() },
	} {
		scores, err := adapt.ValidateOnSources(&dataset.Problem{Classes: 2, Sources: sources}, build)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-12s", build().Name())
		for _, s := range scores {
			fmt.Printf("  %s %.2f", s.Source, s.Accuracy)
		}
		fmt.Printf("  mean %.2f\n", adapt.MeanAccuracy(scores))
	}
	// Output:
	// source-only   a 0.50  b 1.00  c 0.50  mean 0.67
	// otda-emd      a 1.00  b 1.00  c 1.00  mean 1.00
}
