package adapt

import (
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/synth"
)

// synthProblem returns the demo problem as adapt inputs.
func synthProblem(seed uint64) ([]dataset.Domain, *mat.Dense, []int) {
	p := synth.Generate(synth.Default(), seed)
	var src []dataset.Domain
	for _, s := range p.Sources {
		src = append(src, dataset.Domain{Name: s.Name, X: s.X, Y: s.Y})
	}
	return src, p.Target.X, p.Test.Y
}

func accuracy(pred, truth []int) float64 {
	ok := 0
	for i := range pred {
		if pred[i] == truth[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(pred))
}

// TestMethodsOnSynthetic runs the methods of this file on the demo problem:
// the dictionary methods must beat source-only by a wide margin.
func TestMethodsOnSynthetic(t *testing.T) {
	src, tgt, truth := synthProblem(1)
	acc := map[string]float64{}
	for _, m := range []Method{&SourceOnly{}, &WBR{}, &WBR{Ensemble: true}, NewDaDiLR(nil), NewDaDiLE(nil)} {
		if _, err := m.Predict(tgt); err != ErrNotFitted {
			t.Errorf("%s: Predict before Fit: %v", m.Name(), err)
		}
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		p, err := m.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		acc[m.Name()] = accuracy(p, truth)
		// Features of the wrong width are an error naming the method.
		if _, err := m.Predict(mat.NewDense(2, 5, nil)); err == nil || !strings.HasPrefix(err.Error(), "adapt: "+m.Name()+": ") {
			t.Errorf("%s: Predict on 5 features: error %v", m.Name(), err)
		}
	}
	t.Logf("accuracies %v", acc)
	if acc["dadil-r"] < 0.95 || acc["dadil-e"] < 0.95 || acc["source-only"] > 0.6 || acc["wbr-r"] < 0.9 {
		t.Errorf("accuracies %v", acc)
	}
}

func TestCheck(t *testing.T) {
	src, tgt, _ := synthProblem(2)
	bad := mat.NewDense(3, 5, nil)
	cases := []struct {
		name string
		src  []dataset.Domain
		tgt  *mat.Dense
		c    int
		want string
	}{
		{"no sources", nil, tgt, 3, "no source"},
		{"classes", src, tgt, 1, "1 classes"},
		{"empty target", src, &mat.Dense{}, 3, "target has no rows"},
		{"dims", []dataset.Domain{{Name: "s", X: bad, Y: []int{0, 1, 2}}}, tgt, 3, "5 features"},
		{"labels", []dataset.Domain{{Name: "s", X: src[0].X, Y: src[0].Y[:4]}}, tgt, 3, "4 labels"},
		{"range", []dataset.Domain{{Name: "s", X: src[0].X, Y: append([]int{7}, src[0].Y[1:]...)}}, tgt, 3, "label 7"},
	}
	for _, c := range cases {
		if err := problem(c.src, c.tgt, c.c).Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// problem returns the problem of the sources src and the unlabeled target
// rows tgt with classes classes.
func problem(src []dataset.Domain, tgt *mat.Dense, classes int) *dataset.Problem {
	return &dataset.Problem{Classes: classes, Sources: src, Target: dataset.Domain{Name: "target", X: tgt}}
}

// fit fits m on problem(src, tgt, classes).
func fit(m Method, src []dataset.Domain, tgt *mat.Dense, classes int) error {
	return m.Fit(problem(src, tgt, classes))
}
