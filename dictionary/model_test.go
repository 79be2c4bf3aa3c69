package dictionary

import (
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
)

// TestHardLabels: with Settings.HardLabels, NewModel trains DaDiL-R on the
// argmax of the reconstruction's labels and every DaDiL-E classifier on the
// argmax of its atom's labels; without it, on the soft labels, which gives
// other classifiers.
func TestHardLabels(t *testing.T) {
	ds, p := synthDomains(4)
	d, err := Fit(ds, p.Classes, &Settings{Atoms: 3, Epochs: 3, PlateauTol: -1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b *classify.Softmax) bool {
		return mat.Equal(a.W, b.W) && floats.Equal(a.B, b.B)
	}
	soft, err := NewModel(d, len(ds)-1, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	hd := *d
	hd.Settings.HardLabels = true
	hard, err := NewModel(&hd, len(ds)-1, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	// The reconstruction does not depend on the labels' use.
	if !mat.Equal(soft.Reconstruction.X, hard.Reconstruction.X) {
		t.Fatal("reconstructions differ")
	}
	wantR, _, err := classify.FitLabels(hard.Reconstruction.X, argmaxRows(hard.Reconstruction.Y), p.Classes, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !same(hard.R, wantR) {
		t.Error("hard DaDiL-R classifier is not the one trained on the argmax labels")
	}
	if same(soft.R, wantR) {
		t.Error("soft DaDiL-R classifier equals the hard one")
	}
	for k, a := range d.Atoms {
		want, _, err := classify.FitLabels(a.X, argmaxRows(a.Labels()), p.Classes, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !same(hard.E[k], want) {
			t.Errorf("atom %d: hard DaDiL-E classifier is not the one trained on the argmax labels", k)
		}
		if same(soft.E[k], want) {
			t.Errorf("atom %d: soft DaDiL-E classifier equals the hard one", k)
		}
	}
}
