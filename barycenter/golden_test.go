package barycenter

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/golden"
)

// TestSolveGolden pins FreeSupport's and Labeled's results under each
// initialisation (Gaussian, given, drawn from the samples) and transport
// (exact, assignment, permutation iterations), and their errors, to
// testdata/solve.golden.
func TestSolveGolden(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	equal := []Measure{
		{X: gaussian(rng, 6, 2, 0), Y: oneHot(rng, 6, 2)},
		{X: gaussian(rng, 6, 2, 2), Y: oneHot(rng, 6, 2)},
	}
	unequal := []Measure{
		{X: gaussian(rng, 5, 2, 0), Y: oneHot(rng, 5, 3)},
		{X: gaussian(rng, 7, 2, 1), Y: oneHot(rng, 7, 3), W: []float64{0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.1}},
		{X: gaussian(rng, 4, 2, -1), Y: oneHot(rng, 4, 3)},
	}
	init := Measure{X: gaussian(rng, 4, 2, 0.5), Y: oneHot(rng, 4, 3)}
	var b strings.Builder
	for _, tc := range []struct {
		name     string
		measures []Measure
		alpha    []float64
		labeled  bool
		s        *Settings
	}{
		{"equal, Gaussian", equal, []float64{0.3, 0.7}, false, nil},
		{"equal, labeled, Gaussian", equal, []float64{0.5, 0.5}, true, &Settings{MaxIter: 4, Workers: 1}},
		{"equal, labeled, samples", equal, []float64{0.6, 0.4}, true, &Settings{InitSamples: true, Rand: rand.New(rand.NewPCG(2, 3))}},
		{"unequal, Gaussian", unequal, []float64{0.2, 0.5, 0.3}, false, &Settings{Support: 5, MaxIter: 6}},
		{"unequal, labeled, β", unequal, []float64{0.2, 0.5, 0.3}, true, &Settings{Support: 6, Beta: 3, Tol: 1e-3}},
		{"unequal, labeled, init", unequal, []float64{0.4, 0.3, 0.3}, true, &Settings{Init: &init, MaxIter: 20, Workers: 2}},
		{"unequal, samples", unequal, []float64{1, 0, 0}, false, &Settings{InitSamples: true}},
		{"bad α", unequal, []float64{0.5, 0.5}, false, nil},
		{"bad MaxIter", equal, []float64{0.5, 0.5}, false, &Settings{MaxIter: -1}},
		{"unlabeled", []Measure{{X: equal[0].X}, equal[1]}, []float64{0.5, 0.5}, true, nil},
	} {
		solve := FreeSupport
		if tc.labeled {
			solve = Labeled
		}
		res, err := solve(tc.measures, tc.alpha, tc.s)
		fmt.Fprintf(&b, "%s: %v\n", tc.name, err)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "X %v\nW %v\n", res.X.RawMatrix().Data, res.W)
		if res.Y != nil {
			fmt.Fprintf(&b, "Y %v\n", res.Y.RawMatrix().Data)
		}
		fmt.Fprintf(&b, "costs %v, cost %v, history %v, %d iterations, converged %v\n",
			res.Costs, res.Cost, res.History, res.Iterations, res.Converged)
		for k, p := range res.Plans {
			fmt.Fprintf(&b, "plan %d: %d×%d rows %v cols %v mass %v\n", k, p.N, p.M, p.Row, p.Col, p.Mass)
		}
	}
	golden.Check(t, "solve.golden", b.String())
}
