package adapt

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/synth"
)

// TestProba checks every predictor of every method (and of the other
// rules of JCPOT, another classifier, and Subsampled): Proba fails before
// Fit, and after it gives rows on the simplex whose largest entry is the
// class Predict returns.
func TestProba(t *testing.T) {
	l := synth.Default()
	l.PerClass = 30
	p := synth.Generate(l, 5)
	cases := map[string]Method{}
	for _, name := range Names() {
		m, err := New(name, 5)
		if err != nil {
			t.Fatal(err)
		}
		cases[name] = m
	}
	cases["jcpot propagation"] = &JCPOT{Reg: 0.1}
	cases["jcpot reweight"] = &JCPOT{Reg: 0.1, Reweight: true}
	cases["sa knn"] = &SA{Classifier: &classify.KNN{}}
	cfg := &Config{Seed: 5, MaxRows: 50}
	cases["subsampled wb"], _ = cfg.New("wb")
	cases["subsampled wbr-r"], _ = cfg.New("wbr-r")
	for what, m := range cases {
		for _, pr := range Predictors(m) {
			if pr.Proba == nil {
				t.Fatalf("%s: predictor %s has no Proba", what, pr.Name)
			}
			if _, err := pr.Proba(p.Target.X); !errors.Is(err, ErrNotFitted) {
				t.Errorf("%s: %s: Proba before Fit: %v", what, pr.Name, err)
			}
		}
		if err := m.Fit(p); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, pr := range Predictors(m) {
			P, err := pr.Proba(p.Target.X)
			if err != nil {
				t.Fatalf("%s: %s: %v", what, pr.Name, err)
			}
			pred, err := pr.Predict(p.Target.X)
			if err != nil {
				t.Fatal(err)
			}
			checkSimplex(t, what+": "+pr.Name, P, p.Classes)
			if got := classify.Argmax(P); !slices.Equal(got, pred) {
				t.Errorf("%s: %s: the argmax of Proba differs from Predict", what, pr.Name)
			}
		}
	}
}

// checkSimplex fails unless P has classes columns and every row is a
// probability vector.
func checkSimplex(t *testing.T, what string, P *mat.Dense, classes int) {
	t.Helper()
	r, c := P.Dims()
	if c != classes {
		t.Fatalf("%s: %d columns, want %d", what, c, classes)
	}
	for i := range r {
		var s float64
		for _, v := range P.RawRowView(i) {
			if !(v >= 0) {
				t.Fatalf("%s: row %d has entry %g", what, i, v)
			}
			s += v
		}
		if math.Abs(s-1) > 1e-9 {
			t.Fatalf("%s: row %d sums to %g", what, i, s)
		}
	}
}

// TestProbaWrongWidth checks that Proba names the method in its errors.
func TestProbaWrongWidth(t *testing.T) {
	p := synth.Generate(synth.Default(), 6)
	m := &SourceOnly{}
	if err := m.Fit(p); err != nil {
		t.Fatal(err)
	}
	_, err := m.Proba(mat.NewDense(2, 5, nil))
	if err == nil || !strings.HasPrefix(err.Error(), "adapt: source-only: ") {
		t.Errorf("Proba on 5 features: %v", err)
	}
	var s Subsampled
	if _, err := s.Proba(p.Target.X); !errors.Is(err, ErrNotFitted) {
		t.Errorf("empty Subsampled: %v", err)
	}
}
