package classify

import (
	"errors"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// fixedProba is a classifier whose class probabilities are P for any X,
// or err.
type fixedProba struct {
	P   *mat.Dense
	err error
}

func (f fixedProba) Proba(dst, X *mat.Dense) error {
	if f.err != nil {
		return f.err
	}
	dst.CloneFrom(f.P)
	return nil
}

func (f fixedProba) Predict(X *mat.Dense) ([]int, error) { return Argmax(f.P), f.err }

func TestEnsemble(t *testing.T) {
	a := fixedProba{P: mat.NewDense(2, 2, []float64{1, 0, 0.5, 0.5})}
	b := fixedProba{P: mat.NewDense(2, 2, []float64{0, 1, 0.25, 0.75})}
	broken := fixedProba{err: errors.New("broken")}
	X := mat.NewDense(2, 1, nil)
	got, err := Ensemble([]Classifier{a, broken, b}, []float64{0.75, 0, 0.25}, X)
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(2, 2, []float64{0.75, 0.25, 0.4375, 0.5625})
	if !mat.EqualApprox(got, want, 1e-15) {
		t.Errorf("Ensemble = %v, want %v", mat.Formatted(got), mat.Formatted(want))
	}
	for _, tc := range []struct {
		hs   []Classifier
		w    []float64
		want string
	}{
		{[]Classifier{a, b}, []float64{1}, "ensemble of 2 classifiers with 1 weights"},
		{[]Classifier{a}, []float64{0}, "no classifier of non-zero weight"},
		{[]Classifier{a, broken}, []float64{0.5, 0.5}, "broken"},
	} {
		if _, err := Ensemble(tc.hs, tc.w, X); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Ensemble(%v): %v, want %q", tc.w, err, tc.want)
		}
	}
}
