package adapt

import (
	"math"
	"strings"
	"testing"

	"github.com/dadil/dadil/dataset"
	"gonum.org/v1/gonum/mat"
)

// recorder is a test method that records what Fit received and predicts
// a fixed class.
type recorder struct {
	class   int
	sources []dataset.Domain
	target  *mat.Dense
}

func (r *recorder) Name() string { return "recorder" }
func (r *recorder) Fit(p *dataset.Problem) error {
	r.sources, r.target = p.Sources, p.Target.X
	return p.Check()
}
func (r *recorder) Predict(X *mat.Dense) ([]int, error) {
	n, _ := X.Dims()
	p := make([]int, n)
	for i := range p {
		p[i] = r.class
	}
	return p, nil
}

// line returns a named domain of n rows on a line, with labels y.
func line(name string, y ...int) dataset.Domain {
	X := mat.NewDense(len(y), 2, nil)
	for i := range y {
		X.Set(i, 0, float64(i))
		X.Set(i, 1, float64(len(name)))
	}
	return dataset.Domain{Name: name, X: X, Y: y}
}

func TestValidateOnSourcesHoldsEachOut(t *testing.T) {
	sources := []dataset.Domain{line("a", 0, 0, 1, 1), line("bb", 0, 1, 1), line("", 0, 0, 0, 0, 1)}
	var fits []*recorder
	got, err := ValidateOnSources(problem(sources, sources[0].X, 2), func() Method {
		r := &recorder{class: 0}
		fits = append(fits, r)
		return r
	})
	if err != nil {
		t.Fatal(err)
	}
	// Predicting class 0 everywhere scores the share of class 0 in each
	// held-out domain, and the balanced accuracy 1/2 of two classes.
	want := []HeldOut{{"a", 0.5, 0.5}, {"bb", 1. / 3, 0.5}, {"source 2", 0.8, 0.5}}
	if len(got) != len(want) {
		t.Fatalf("got %d scores, want %d", len(got), len(want))
	}
	for k := range want {
		if got[k].Source != want[k].Source || math.Abs(got[k].Accuracy-want[k].Accuracy) > 1e-15 || got[k].Balanced != want[k].Balanced {
			t.Errorf("score %d = %+v, want %+v", k, got[k], want[k])
		}
	}
	if m := MeanAccuracy(got); math.Abs(m-(0.5+1./3+0.8)/3) > 1e-15 {
		t.Errorf("MeanAccuracy = %v", m)
	}
	if m := MeanBalanced(got); m != 0.5 {
		t.Errorf("MeanBalanced = %v, want 0.5", m)
	}
	// Each fit saw the other sources, in order, and the held-out features
	// as its target, never the held-out domain as a labeled source.
	for k, r := range fits {
		if r.target != sources[k].X {
			t.Errorf("fit %d: target is not source %d's features", k, k)
		}
		if len(r.sources) != 2 {
			t.Fatalf("fit %d: %d sources", k, len(r.sources))
		}
		j := 0
		for i := range sources {
			if i == k {
				continue
			}
			if r.sources[j].X != sources[i].X {
				t.Errorf("fit %d: source %d is not source %d", k, j, i)
			}
			j++
		}
	}
	// HoldOut does not alias the caller's slice.
	rest := problem(sources, sources[0].X, 2).HoldOut(0).Sources
	rest[0] = dataset.Domain{Name: "changed"}
	if sources[1].Name != "bb" {
		t.Error("HoldOut's result aliases the sources")
	}
}

func TestValidateOnSourcesLearns(t *testing.T) {
	// Three sources with the same two classes, slightly shifted: a
	// classifier trained on two of them carries to the third.
	src := func(name string, dx float64) dataset.Domain {
		X := mat.NewDense(40, 2, nil)
		y := make([]int, 40)
		for i := range y {
			y[i] = i % 2
			a := float64(i) * 0.7
			X.Set(i, 0, 4*float64(y[i])+dx+0.5*math.Cos(a))
			X.Set(i, 1, 0.5*math.Sin(a))
		}
		return dataset.Domain{Name: name, X: X, Y: y}
	}
	sources := []dataset.Domain{src("a", 0), src("b", 0.3), src("c", -0.3)}
	got, err := ValidateOnSources(problem(sources, sources[0].X, 2), func() Method { return &SourceOnly{} })
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range got {
		if h.Accuracy < 0.95 {
			t.Errorf("%s held out: accuracy %v, want ≥ 0.95", h.Source, h.Accuracy)
		}
	}
	// The same sources with the labels of one domain swapped: holding it
	// out scores almost nothing.
	flipped := src("flipped", 0)
	for i := range flipped.Y {
		flipped.Y[i] = 1 - flipped.Y[i]
	}
	got, err = ValidateOnSources(problem([]dataset.Domain{sources[0], sources[1], flipped}, sources[0].X, 2), func() Method { return &SourceOnly{} })
	if err != nil {
		t.Fatal(err)
	}
	if got[2].Accuracy > 0.05 {
		t.Errorf("flipped domain held out: accuracy %v, want ≤ 0.05", got[2].Accuracy)
	}
}

func TestValidateOnSourcesBadInput(t *testing.T) {
	ok := func() Method { return &SourceOnly{} }
	a, b := line("a", 0, 1), line("b", 1, 0)
	short := line("short", 0, 1)
	short.X = mat.NewDense(2, 3, nil)
	nan := line("nan", 0, 1)
	nan.X.Set(1, 1, math.NaN())
	for _, tc := range []struct {
		name    string
		sources []dataset.Domain
		classes int
		build   func() Method
		want    string
	}{
		{"no build", []dataset.Domain{a, b}, 2, nil, "no method"},
		{"one source", []dataset.Domain{a}, 2, ok, "at least 2 source domains, got 1"},
		{"nil method", []dataset.Domain{a, b}, 2, func() Method { return nil }, "build returned no method"},
		{"dimensions", []dataset.Domain{a, short}, 2, ok, "short has 3 features"},
		{"label", []dataset.Domain{a, line("c", 0, 2)}, 2, ok, "c: label 2"},
		{"nan", []dataset.Domain{a, nan}, 2, ok, "nan: feature (1, 1) is NaN"},
		{"classes", []dataset.Domain{a, b}, 1, ok, "1 classes"},
	} {
		_, err := ValidateOnSources(problem(tc.sources, tc.sources[0].X, tc.classes), tc.build)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "adapt: ") {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
