package classify

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestFitFrom: a warm start from the minimiser stops at once with the
// same model; from the model of other draws of the same classes it
// reaches Fit's minimiser (the loss is strictly convex) within the
// tolerance, in fewer iterations; and bad starts are errors.
func TestFitFrom(t *testing.T) {
	rng := newRand(7)
	means, X, labels := clusters(rng, 600, 40, 5, 3)
	T := OneHot(labels, 5)
	s := &Settings{L2: 0.01}
	m, _, err := Fit(X, T, nil, s)
	if err != nil {
		t.Fatal(err)
	}
	again, ra, err := FitFrom(X, T, nil, s, m)
	if err != nil {
		t.Fatal(err)
	}
	if ra.Iterations > 1 || !ra.Converged || maxDiff(again, m) > 1e-12 {
		t.Errorf("from its minimiser: %d iterations, converged %v, weights moved by %g", ra.Iterations, ra.Converged, maxDiff(again, m))
	}
	// Other draws of the same classes.
	X2, labels2 := drawClusters(rng, means, 600, 1)
	T2 := OneHot(labels2, 5)
	cold, rc, err := Fit(X2, T2, nil, s)
	if err != nil {
		t.Fatal(err)
	}
	warm, rw, err := FitFrom(X2, T2, nil, s, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cold %d iterations, warm %d; weights differ by %g", rc.Iterations, rw.Iterations, maxDiff(cold, warm))
	if !rw.Converged || rw.Iterations >= rc.Iterations {
		t.Errorf("warm start: %d iterations (cold %d), converged %v", rw.Iterations, rc.Iterations, rw.Converged)
	}
	// ‖∇L‖_∞ < 10⁻⁶ and a Hessian ⪰ 2λ I bound the distance to the
	// minimiser by √dim·10⁻⁶/(2λ) in the 2-norm; much less in practice.
	if d := maxDiff(cold, warm); d > 1e-3 || math.Abs(rw.Loss-rc.Loss) > 1e-9 {
		t.Errorf("warm and cold minimisers: weights differ by %g, losses %.15g and %.15g", d, rw.Loss, rc.Loss)
	}
	tr := &SoftmaxTrainer{Settings: s}
	if c, err := tr.TrainFrom(X2, T2, nil, m); err != nil || maxDiff(c.(*Softmax), warm) != 0 {
		t.Errorf("TrainFrom: %v", err)
	}
	small, _, err := Fit(X2.Slice(0, 600, 0, 10).(*mat.Dense), T2, nil, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"nil start", func() error { _, _, err := FitFrom(X2, T2, nil, s, nil); return err }, "without a start model"},
		{"features", func() error { _, _, err := FitFrom(X2, T2, nil, s, small); return err }, "weights are 5×10, the data have 5 classes and 40 features"},
		{"classes", func() error { _, _, err := FitFrom(X2, OneHot(labels2, 6), nil, s, m); return err }, "5 biases for 6 classes"},
		{"bad data", func() error { _, _, err := FitFrom(X2, T2, []float64{1}, s, m); return err }, "classify: "},
		{"not softmax", func() error { _, err := tr.TrainFrom(X2, T2, nil, &Neighbours{}); return err }, "a warm start from a *classify.Neighbours"},
	} {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
