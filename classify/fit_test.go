package classify

import (
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// gradAt returns L and ∇L at model m, recomputed from scratch.
func gradAt(t *testing.T, m *Softmax, X, T *mat.Dense, labels []int, w []float64, lambda float64) (float64, []float64) {
	t.Helper()
	o := testObjective(t, X, T, labels, m.Classes, w, lambda, 1)
	theta := append(append([]float64(nil), m.W.RawMatrix().Data...), m.B...)
	g := make([]float64, len(theta))
	f := o.Func(theta)
	o.Grad(g, theta)
	return f, g
}

func TestSeparableGaussians(t *testing.T) {
	for _, d := range []int{2, 10, 100} {
		rng := newRand(uint64(d))
		// Means on a triangle of side 5√3 ≈ 8.7 noise standard deviations
		// in the first two coordinates: the Bayes error is about 1e-5.
		means := mat.NewDense(3, d, nil)
		for k := range 3 {
			means.Set(k, 0, 5*math.Cos(2*math.Pi*float64(k)/3))
			means.Set(k, 1, 5*math.Sin(2*math.Pi*float64(k)/3))
		}
		X, labels := drawClusters(rng, means, 300, 1)
		m, r, err := FitLabels(X, labels, 3, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Converged || r.Status != optimize.GradientThreshold {
			t.Errorf("d=%d: not converged: %+v", d, r)
		}
		Xt, lt := drawClusters(rng, means, 3000, 1)
		pred, err := m.Predict(Xt)
		if err != nil {
			t.Fatal(err)
		}
		acc, err := Accuracy(pred, lt)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("d=%d: held-out accuracy %.4f, %d iterations, loss %.6g", d, acc, r.Iterations, r.Loss)
		if acc < 0.99 {
			t.Errorf("d=%d: held-out accuracy %.4f < 0.99", d, acc)
		}
	}
}

// TestOptimality checks the reported loss and gradient norm against a
// fresh evaluation at the returned model, for soft and hard targets,
// weights and several penalties.
func TestOptimality(t *testing.T) {
	for _, tc := range []struct {
		name     string
		soft     bool
		weighted bool
		s        *Settings
		lambda   float64
	}{
		{"labels default", false, false, nil, DefaultL2},
		{"soft weighted", true, true, &Settings{L2: 0.05}, 0.05},
		{"labels weighted tight", false, true, &Settings{L2: 1e-4, GradTol: 1e-9}, 1e-4},
		{"soft no penalty", true, false, &Settings{NoPenalty: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := newRand(11)
			_, X, labels := clusters(rng, 400, 20, 4, 1.5)
			var w []float64
			if tc.weighted {
				w = make([]float64, 400)
				for i := range w {
					w[i] = rng.Float64()
				}
			}
			var (
				m   *Softmax
				r   *Result
				err error
				T   *mat.Dense
			)
			if tc.soft {
				T = softTargets(rng, labels, 4)
				m, r, err = Fit(X, T, w, tc.s)
				labels = nil
			} else {
				m, r, err = FitLabels(X, labels, 4, w, tc.s)
			}
			if err != nil {
				t.Fatal(err)
			}
			tol := DefaultGradTol
			if tc.s != nil && tc.s.GradTol != 0 {
				tol = tc.s.GradTol
			}
			f, g := gradAt(t, m, X, T, labels, w, tc.lambda)
			gn := floats.Norm(g, math.Inf(1))
			t.Logf("%+v; recomputed loss %.17g, ‖∇L‖∞ %.3g", *r, f, gn)
			if !r.Converged || gn >= tol {
				t.Errorf("‖∇L‖∞ = %g (reported %g), want < %g", gn, r.GradNorm, tol)
			}
			if f != r.Loss || math.Abs(gn-r.GradNorm) > 1e-6*gn {
				t.Errorf("reported loss %.17g and ‖∇L‖∞ %g, recomputed %.17g and %g", r.Loss, r.GradNorm, f, gn)
			}
			// Moving away from the optimum must not lower the loss.
			theta := append(append([]float64(nil), m.W.RawMatrix().Data...), m.B...)
			o := testObjective(t, X, T, labels, 4, w, tc.lambda, 1)
			for trial := range 5 {
				p := make([]float64, len(theta))
				for i := range p {
					p[i] = theta[i] + 1e-3*rng.NormFloat64()
				}
				if fp := o.Func(p); fp < f-1e-12 {
					t.Errorf("trial %d: perturbed loss %.17g < optimum %.17g", trial, fp, f)
				}
			}
		})
	}
}

// TestFitLabelsMatchesOneHot checks that FitLabels and Fit with one-hot
// targets give the same model bit for bit.
func TestFitLabelsMatchesOneHot(t *testing.T) {
	rng := newRand(5)
	_, X, labels := clusters(rng, 600, 15, 5, 1)
	w := make([]float64, 600)
	for i := range w {
		w[i] = 0.5 + rng.Float64()
	}
	for _, weights := range [][]float64{nil, w} {
		m1, r1, err := FitLabels(X, labels, 5, weights, nil)
		if err != nil {
			t.Fatal(err)
		}
		m2, r2, err := Fit(X, oneHot(labels, 5), weights, nil)
		if err != nil {
			t.Fatal(err)
		}
		if *r1 != *r2 || !sameModel(m1, m2) {
			t.Errorf("weighted=%v: FitLabels %+v and Fit %+v differ", weights != nil, *r1, *r2)
		}
	}
}

// sameModel reports whether a and b are bit-identical.
func sameModel(a, b *Softmax) bool {
	return a.Classes == b.Classes && a.Dim == b.Dim &&
		equalBits(a.W.RawMatrix().Data, b.W.RawMatrix().Data) && equalBits(a.B, b.B)
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	rng := newRand(9)
	_, X, labels := clusters(rng, 1500, 40, 6, 1) // 6 blocks of 256 rows
	T := softTargets(rng, labels, 6)
	w := make([]float64, 1500)
	for i := range w {
		w[i] = rng.ExpFloat64()
	}
	ref, refRes, err := Fit(X, T, w, &Settings{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reference: %+v", *refRes)
	for _, workers := range []int{2, 3, 8, 64} {
		m, r, err := Fit(X, T, w, &Settings{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if *r != *refRes || !sameModel(m, ref) {
			t.Errorf("Workers=%d: %+v differs from Workers=1 %+v", workers, *r, *refRes)
		}
	}
	// Workers = 0 follows GOMAXPROCS.
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		m, r, err := Fit(X, T, w, nil)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		if *r != *refRes || !sameModel(m, ref) {
			t.Errorf("GOMAXPROCS=%d: %+v differs from Workers=1 %+v", procs, *r, *refRes)
		}
	}
}

// TestConvergenceRealisticFeatures trains on features like those of the
// DaDiL benchmarks: values in [0, 1] (d = 800 and 4096) and raw
// bag-of-words counts (SURF, d = 800, counts up to ~50 and beyond), with
// overlapping classes.
func TestConvergenceRealisticFeatures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, d, c int
		counts  bool
		l2      float64
	}{
		{"unit d=800", 1000, 800, 10, false, 0},
		{"unit d=800 λ=1e-5", 1000, 800, 10, false, 1e-5},
		{"unit d=4096", 300, 4096, 10, false, 0},
		{"counts d=800", 1000, 800, 10, true, 0},
		{"counts d=800 λ=1e-5", 1000, 800, 10, true, 1e-5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.n*tc.d > 1e6 {
				t.Skip("large problem skipped in -short mode")
			}
			var X *mat.Dense
			var labels []int
			if tc.counts {
				X, labels = overlappingCounts(tc.n, tc.d, tc.c, 3)
			} else {
				X, labels = overlappingUnit(tc.n, tc.d, tc.c, 3)
			}
			m, r, err := FitLabels(X, labels, tc.c, nil, &Settings{L2: tc.l2})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("max feature %g: %+v", mat.Max(X), *r)
			if !r.Converged {
				t.Errorf("not converged within %d iterations: %+v", DefaultMaxIter, *r)
			}
			pred, err := m.Predict(X)
			if err != nil {
				t.Fatal(err)
			}
			if acc, _ := Accuracy(pred, labels); acc < 0.9 {
				t.Errorf("training accuracy %.3f < 0.9", acc)
			}
		})
	}
}

func TestSingleClass(t *testing.T) {
	rng := newRand(1)
	_, X, _ := clusters(rng, 50, 3, 1, 1)
	labels := make([]int, 50)
	m, r, err := FitLabels(X, labels, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Converged || r.Iterations != 0 || r.Loss != 0 {
		t.Errorf("result %+v, want converged at iteration 0 with loss 0", *r)
	}
	pred, err := m.Predict(X)
	if err != nil {
		t.Fatal(err)
	}
	var P mat.Dense
	if err := m.Proba(&P, X); err != nil {
		t.Fatal(err)
	}
	for i, p := range pred {
		if p != 0 || P.At(i, 0) != 1 {
			t.Fatalf("row %d: class %d with probability %g, want 0 with 1", i, p, P.At(i, 0))
		}
	}
}

func TestAbsentClass(t *testing.T) {
	rng := newRand(3)
	means := mat.NewDense(2, 2, []float64{-3, 0, 3, 0})
	X, labels := drawClusters(rng, means, 200, 1)
	m, r, err := FitLabels(X, labels, 3, nil, nil) // class 2 never occurs
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v, biases %v", *r, m.B)
	if !r.Converged {
		t.Errorf("not converged: %+v", *r)
	}
	var P mat.Dense
	if err := m.Proba(&P, X); err != nil {
		t.Fatal(err)
	}
	if p := mat.Max(P.ColView(2)); p > 1e-4 {
		t.Errorf("largest probability of the absent class = %g", p)
	}
	pred, _ := m.Predict(X)
	for i, p := range pred {
		if p == 2 {
			t.Errorf("row %d predicted as the absent class", i)
		}
	}
}

func TestWeights(t *testing.T) {
	rng := newRand(21)
	_, X, labels := clusters(rng, 300, 8, 3, 1)
	T := softTargets(rng, labels, 3)
	w := make([]float64, 300)
	var keep []int
	for i := range w {
		if i%3 != 0 {
			w[i] = 1
			keep = append(keep, i)
		}
	}
	s := &Settings{GradTol: 1e-10}
	// Zero weights drop samples.
	full, _, err := Fit(X, T, w, s)
	if err != nil {
		t.Fatal(err)
	}
	Xs := mat.NewDense(len(keep), 8, nil)
	Ts := mat.NewDense(len(keep), 3, nil)
	for r, i := range keep {
		Xs.SetRow(r, X.RawRowView(i))
		Ts.SetRow(r, T.RawRowView(i))
	}
	sub, _, err := Fit(Xs, Ts, nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff(full, sub); d > 1e-7 {
		t.Errorf("zero weights: models differ from the subset fit by %g", d)
	}
	// Only the ratios of the weights matter.
	w7 := make([]float64, len(w))
	floats.ScaleTo(w7, 7, w)
	scaled, _, err := Fit(X, T, w7, s)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff(full, scaled); d > 1e-7 {
		t.Errorf("scaled weights: models differ by %g", d)
	}
	// Integer weights act as repeated samples.
	rep := make([]float64, 300)
	var Xr, Tr []float64
	for i := range rep {
		rep[i] = float64(1 + i%2)
		for range 1 + i%2 {
			Xr = append(Xr, X.RawRowView(i)...)
			Tr = append(Tr, T.RawRowView(i)...)
		}
	}
	weighted, _, err := Fit(X, T, rep, s)
	if err != nil {
		t.Fatal(err)
	}
	repeated, _, err := Fit(mat.NewDense(len(Xr)/8, 8, Xr), mat.NewDense(len(Tr)/3, 3, Tr), nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff(weighted, repeated); d > 1e-7 {
		t.Errorf("integer weights: models differ from repeated samples by %g", d)
	}
}

// maxDiff returns the largest absolute difference between the parameters
// of a and b.
func maxDiff(a, b *Softmax) float64 {
	var d float64
	for i, v := range a.W.RawMatrix().Data {
		d = math.Max(d, math.Abs(v-b.W.RawMatrix().Data[i]))
	}
	for i, v := range a.B {
		d = math.Max(d, math.Abs(v-b.B[i]))
	}
	return d
}

func TestSettings(t *testing.T) {
	rng := newRand(4)
	_, X, labels := clusters(rng, 200, 5, 3, 0.5)
	// The penalty shrinks the weights, and NoPenalty removes it.
	var prev float64
	for _, s := range []*Settings{{L2: 1}, {L2: 0.1}, nil, {L2: 1e-5}, {NoPenalty: true}} {
		m, r, err := FitLabels(X, labels, 3, nil, s)
		if err != nil {
			t.Fatal(err)
		}
		norm := mat.Norm(m.W, 2)
		t.Logf("%+v: ‖W‖_F = %.6g, %+v", s, norm, *r)
		if norm <= prev {
			t.Errorf("%+v: ‖W‖_F = %g did not grow as λ decreased (previous %g)", s, norm, prev)
		}
		prev = norm
	}
	// nil and the zero Settings are the defaults.
	a, ra, _ := FitLabels(X, labels, 3, nil, nil)
	b, rb, _ := FitLabels(X, labels, 3, nil, &Settings{})
	c, rc, _ := FitLabels(X, labels, 3, nil, &Settings{L2: DefaultL2, MaxIter: DefaultMaxIter, GradTol: DefaultGradTol})
	if !sameModel(a, b) || !sameModel(a, c) || *ra != *rb || *ra != *rc {
		t.Error("nil, zero and explicit default Settings differ")
	}
	// MaxIter stops early.
	_, r, err := FitLabels(X, labels, 3, nil, &Settings{MaxIter: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Iterations != 3 || r.Converged || r.Status != optimize.IterationLimit {
		t.Errorf("MaxIter 3: %+v", *r)
	}
	// A loose GradTol stops early too.
	_, r, err = FitLabels(X, labels, 3, nil, &Settings{GradTol: 1e-2})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Converged || r.GradNorm >= 1e-2 || r.Status != optimize.GradientThreshold {
		t.Errorf("GradTol 1e-2: %+v", *r)
	}
}

// TestStatusString: the stop statuses keep their names, and only the
// iteration cap counts as an early end (optimize.Status.Early).
func TestStatusString(t *testing.T) {
	for s, want := range map[optimize.Status]string{
		optimize.GradientThreshold: "GradientThreshold",
		optimize.IterationLimit:    "IterationLimit",
		optimize.MethodConverge:    "MethodConverge",
	} {
		if got := s.String(); got != want {
			t.Errorf("%d: %q, want %q", int(s), got, want)
		}
		if s.Early() != (s == optimize.IterationLimit) {
			t.Errorf("%v: Early() = %v", s, s.Early())
		}
	}
}

// TestHalfWeights: half the weight to the points, equally, half to the
// rows, each class of them weighing the same.
func TestHalfWeights(t *testing.T) {
	w := HalfWeights(2, []int{0, 0, 0, 1}, 3)
	want := []float64{0.25, 0.25, 0.25 / 3, 0.25 / 3, 0.25 / 3, 0.25}
	if len(w) != len(want) {
		t.Fatalf("%d weights, want %d", len(w), len(want))
	}
	for i := range w {
		if math.Abs(w[i]-want[i]) > 1e-15 {
			t.Errorf("weights %v, want %v", w, want)
			break
		}
	}
}
