package figure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot/vg"

	"github.com/dadil/dadil/gmm"
)

// TestMixture draws a labeled and an unlabeled mixture over points, into
// PNG and SVG files holding an ellipse per component and standard
// deviation; the axes hold the 2-σ ellipses.
func TestMixture(t *testing.T) {
	X := mat.NewDense(4, 2, []float64{0, 0, 1, 1, 2, 0, 3, 1})
	p, err := Scatter("points and mixtures", X, []int{0, 0, 1, 1}, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	labeled := &gmm.Mixture{Weights: []float64{0.25, 0.75}, Means: mat.NewDense(2, 2, []float64{0, 0, 3, 1}),
		Std: mat.NewDense(2, 2, []float64{0.5, 0.2, 1, 4}), Labels: mat.NewDense(2, 2, []float64{0.9, 0.1, 0.2, 0.8})}
	unlabeled := &gmm.Mixture{Weights: []float64{1}, Means: mat.NewDense(1, 3, []float64{1, 1, 7}), Std: mat.NewDense(1, 3, []float64{0.1, 0.1, 0.1})}
	for _, m := range []*gmm.Mixture{labeled, unlabeled} {
		if err := Mixture(p, m); err != nil {
			t.Fatal(err)
		}
	}
	// Component 1's 2-σ ellipse spans y in [1 − 8, 1 + 8] and x up to 5.
	if p.Y.Min > -7+1e-9 || p.Y.Max < 9-1e-9 || p.X.Max < 5-1e-9 {
		t.Errorf("axes x ≤ %g, y in [%g, %g] do not hold the 2-σ ellipses", p.X.Max, p.Y.Min, p.Y.Max)
	}
	dir := t.TempDir()
	for _, name := range []string{"m.png", "m.svg"} {
		path := filepath.Join(dir, name)
		if err := Save(path, p, 10*vg.Centimeter, 10*vg.Centimeter); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) < 5000 {
			t.Fatalf("%s: %d bytes, %v", name, len(b), err)
		}
		// Three components, each a solid and a dashed ellipse of 73 points.
		if name == "m.svg" && strings.Count(string(b), "stroke-dasharray") < 3 {
			t.Errorf("the SVG has %d dashed paths, want at least 3", strings.Count(string(b), "stroke-dasharray"))
		}
	}
	bad := []struct {
		m    *gmm.Mixture
		want string
	}{
		{&gmm.Mixture{Weights: []float64{1}, Means: mat.NewDense(1, 1, []float64{0}), Std: mat.NewDense(1, 1, []float64{1})}, "a mixture of 1 features has no plane"},
		{&gmm.Mixture{Weights: []float64{1}, Means: mat.NewDense(1, 2, nil), Std: mat.NewDense(1, 2, []float64{1, 0})}, "figure: gmm: mixture standard deviation 0, feature 1 is 0"},
	}
	for _, c := range bad {
		if err := Mixture(p, c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
