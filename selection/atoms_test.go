package selection

import (
	"strings"
	"testing"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/synth"
)

// TestExtraAtoms: one score per candidate, each a balanced accuracy, the
// choice the candidate of the highest; the same choice again for the same
// seed; bad candidates and a single source are errors.
func TestExtraAtoms(t *testing.T) {
	p := synth.Generate(synth.Default(), 1)
	cfg := adapt.Config{Seed: 1, Dictionary: &dictionary.Settings{Epochs: 3, PlateauTol: -1}}
	ch, err := ExtraAtoms(p, cfg, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Scores) != 2 || ch.Extra != []int{0, 1}[Best(ch.Scores)] {
		t.Fatalf("choice %+v", ch)
	}
	for _, s := range ch.Scores {
		if !(s >= 0 && s <= 1) {
			t.Fatalf("score %g is not a balanced accuracy", s)
		}
	}
	if again, err := ExtraAtoms(p, cfg, []int{0, 1}); err != nil || again.Extra != ch.Extra || again.Scores[0] != ch.Scores[0] || again.Scores[1] != ch.Scores[1] {
		t.Fatalf("again %+v (%v), first %+v", again, err, ch)
	}
	one := *p
	one.Sources = []dataset.Domain{p.Sources[0]}
	for _, c := range []struct {
		name   string
		p      *dataset.Problem
		extras []int
		want   string
	}{
		{"no candidate", p, nil, "selection: ExtraAtoms: no candidate"},
		{"negative", p, []int{0, -1}, "selection: ExtraAtoms: -1 atoms beyond the sources"},
		{"one source", &one, []int{0, 1}, "selection: "},
	} {
		if _, err := ExtraAtoms(c.p, cfg, c.extras); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one starting %q", c.name, err, c.want)
		}
	}
}
