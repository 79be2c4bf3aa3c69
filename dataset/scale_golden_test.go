package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/golden"
)

// TestFitScalerGolden pins FitScaler's offsets and scales for every kind
// (random domains, constant and tiny-range features, sums that overflow)
// and its error messages to testdata/scaler.golden.
func TestFitScalerGolden(t *testing.T) {
	var b strings.Builder
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(name string, r, c int, shift float64) *File {
		x := make([]float64, r*c)
		for k := range x {
			x[k] = shift + rng.NormFloat64()*float64(1+k%c)
		}
		return &File{Name: name, X: newDense(r, c, x...)}
	}
	a, c := random("a", 13, 4, 0), random("c", 7, 4, 2.5)
	sets := [][]*File{
		{a, c},
		{{Name: "mixed", X: newDense(3, 3, 1, 5, 0, 3, 5, 5e-324, 2, 5, -7)}},
		{{Name: "one", X: newDense(1, 2, 4, -2)}},
		{{Name: "big", X: newDense(3, 2, 1e307, -1, 1e308, 2, 1.7e308, 3)}},
		{{Name: "huge", X: newDense(2, 1, -1e308, 1e308)}},
		{{Name: "spread", X: newDense(3, 1, -1.7e308, 1.7e308, 1.7e308)}},
		{{Name: "one", X: newDense(1, 2, 4, -2)}, {Name: "bad", X: newDense(1, 2, 1, math.NaN())}},
		{{Name: "one", X: newDense(1, 2, 4, -2)}, {Name: "thin", X: newDense(1, 1, 4)}},
		nil,
	}
	for _, kind := range []Scaling{ScaleNone, ScaleMinMax, ScaleStandard, Scaling(9), Scaling(-1)} {
		for _, set := range sets {
			var names []string
			for _, f := range set {
				names = append(names, f.Name)
			}
			s, err := FitScaler(kind, set...)
			if err != nil {
				fmt.Fprintf(&b, "%v of %v: error: %v\n", kind, names, err)
				continue
			}
			fmt.Fprintf(&b, "%v of %v: kind %v, offset %v, scale %v\n", kind, names, s.Kind, s.Offset, s.Scale)
		}
	}
	golden.Check(t, "scaler.golden", b.String())
}
