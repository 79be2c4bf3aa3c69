package selection_test

import (
	"fmt"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/selection"
	"github.com/dadil/dadil/synth"
)

// Choose between methods without target labels: fit each, score it with
// every scorer, and take the method of the highest score. The target
// labels (p.Test), which no scorer reads, then judge the choices.
func Example() {
	p := synth.Generate(synth.Default(), 1)
	methods := []string{"source-only", "sa", "tca", "otda-emd", "wb", "jcpot"}
	var scorers []selection.Scorer
	for _, name := range []string{"held-out", "circular", "entropy"} {
		s, _ := selection.New(name, 1)
		scorers = append(scorers, s)
	}
	scores := make([][]float64, len(scorers)) // [scorer][method]
	accuracy := make([]float64, len(methods))
	for i, name := range methods {
		build := func() adapt.Method { m, _ := adapt.New(name, 1); return m }
		m := build()
		if err := m.Fit(p); err != nil {
			fmt.Println(err)
			return
		}
		c := &selection.Candidate{Method: m, Build: build}
		for j, v := range selection.Values(p, c, scorers)[0] {
			scores[j] = append(scores[j], v.Float())
		}
		accuracy[i], _ = adapt.Score(m.Predict, p.Test)
	}
	for j, s := range scorers {
		best := selection.Best(scores[j])
		fmt.Printf("%-8s (%d fits per method) chooses %-5s target accuracy %.2f\n", s.Name(), s.Refits(p, 1), methods[best]+",", accuracy[best])
	}
	// Output:
	// held-out (3 fits per method) chooses sa,   target accuracy 1.00
	// circular (1 fits per method) chooses sa,   target accuracy 1.00
	// entropy  (0 fits per method) chooses wb,   target accuracy 0.35
}

// Choose DaDiL's number of atoms without target labels: as many as the
// sources or one more, by held-out sources (dadil fit --atoms auto).
func ExampleExtraAtoms() {
	p := synth.Generate(synth.Default(), 1)
	ch, err := selection.ExtraAtoms(p, adapt.Config{Seed: 1}, []int{0, 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("held-out balanced accuracy %.2f with K = %d, %.2f with K = %d: K = %d\n",
		ch.Scores[0], len(p.Sources), ch.Scores[1], len(p.Sources)+1, len(p.Sources)+ch.Extra)
	// Output:
	// held-out balanced accuracy 0.84 with K = 3, 1.00 with K = 4: K = 4
}
