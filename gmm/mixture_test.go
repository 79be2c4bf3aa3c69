package gmm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// directLogProb is log p(x) summed term by term, without the expansion.
func directLogProb(m *Mixture, x []float64) float64 {
	terms := make([]float64, m.Components())
	for k, w := range m.Weights {
		l := math.Log(w)
		for j, v := range x {
			s := m.Std.At(k, j)
			u := (v - m.Means.At(k, j)) / s
			l -= 0.5*u*u + math.Log(s) + 0.5*math.Log(2*math.Pi)
		}
		terms[k] = l
	}
	return logSumExp(terms)
}

func TestLogProbAndPosterior(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name      string
		K, d, n   int
		offset    float64
		zeroFirst bool
	}{
		{name: "small", K: 3, d: 2, n: 50},
		{name: "partial chunks and blocks", K: 5, d: 7, n: blockRows + chunkSize(5, 7) + 3},
		{name: "far from the origin", K: 2, d: 3, n: 40, offset: 1e3},
		{name: "a zero weight", K: 4, d: 3, n: 30, zeroFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := randMixture(rng, tc.K, tc.d, 0, 3, false)
			if tc.zeroFirst {
				m.Weights[1] += m.Weights[0]
				m.Weights[0] = 0
			}
			X, _ := draw(t, m, tc.n, 4)
			for i := range tc.n {
				for j := range tc.d {
					X.Set(i, j, X.At(i, j)+tc.offset)
					m.Means.Set(i%tc.K, j, m.Means.At(i%tc.K, j)+tc.offset/float64(tc.n)*float64(tc.K))
				}
			}
			lp := make([]float64, tc.n)
			if err := m.LogProb(lp, X); err != nil {
				t.Fatal(err)
			}
			var G mat.Dense
			if err := m.Posterior(&G, X); err != nil {
				t.Fatal(err)
			}
			for i := range tc.n {
				want := directLogProb(m, X.RawRowView(i))
				if !near(lp[i], want, 1e-9) {
					t.Fatalf("row %d: log p = %.15g, want %.15g", i, lp[i], want)
				}
				var s float64
				for k, g := range G.RawRowView(i) {
					s += g
					if tc.zeroFirst && k == 0 && g != 0 {
						t.Fatalf("row %d: responsibility %v of a zero-weight component", i, g)
					}
				}
				if !near(s, 1, 1e-12) {
					t.Fatalf("row %d: responsibilities sum to %v", i, s)
				}
			}
		})
	}
}

func TestPosteriorFarRow(t *testing.T) {
	// A row thousands of deviations from every component: the densities
	// underflow, the log-domain posterior does not.
	m := separated(2, 1)
	X := mat.NewDense(1, 1, []float64{1e4})
	var G mat.Dense
	if err := m.Posterior(&G, X); err != nil {
		t.Fatal(err)
	}
	if G.At(0, 1) != 1 || G.At(0, 0) != 0 {
		t.Errorf("posterior %v, want [0 1]", G.RawRowView(0))
	}
}

func TestPredictLabeled(t *testing.T) {
	m := separated(3, 2)
	m.Labels = mat.NewDense(3, 2, []float64{1, 0, 0, 1, 0.2, 0.8})
	X, comp := draw(t, m, 300, 3)
	pred, err := m.Predict(X)
	if err != nil {
		t.Fatal(err)
	}
	var P mat.Dense
	if err := m.Proba(&P, X); err != nil {
		t.Fatal(err)
	}
	for i, k := range comp {
		want := argmax(m.Labels.RawRowView(k))
		if pred[i] != want {
			t.Fatalf("row %d from component %d: class %d, want %d", i, k, pred[i], want)
		}
		if s := P.At(i, 0) + P.At(i, 1); !near(s, 1, 1e-12) {
			t.Fatalf("row %d: class probabilities sum to %v", i, s)
		}
	}
	if _, err := separated(2, 2).Predict(X); err == nil {
		t.Error("Predict of an unlabeled mixture: no error")
	}
}

// TestClassMeans: hand-computed class means and masses of a labeled
// mixture, a zero row for a class without mass, an error without labels.
func TestClassMeans(t *testing.T) {
	m := &Mixture{
		Weights: []float64{0.5, 0.3, 0.2},
		Means:   mat.NewDense(3, 2, []float64{0, 0, 10, 0, 0, 10}),
		Std:     mat.NewDense(3, 2, []float64{1, 1, 1, 1, 1, 1}),
		Labels:  mat.NewDense(3, 3, []float64{1, 0, 0, 0.5, 0.5, 0, 1, 0, 0}),
	}
	var M mat.Dense
	mass, err := m.ClassMeans(&M)
	if err != nil {
		t.Fatal(err)
	}
	// Class 0: 0.5·(0,0) + 0.15·(10,0) + 0.2·(0,10) over 0.85; class 1:
	// component 1 alone; class 2: no mass.
	want := mat.NewDense(3, 2, []float64{1.5 / 0.85, 2 / 0.85, 10, 0, 0, 0})
	if !mat.EqualApprox(&M, want, 1e-12) || !near(mass[0], 0.85, 1e-12) || !near(mass[1], 0.15, 1e-12) || mass[2] != 0 {
		t.Errorf("class means %v, masses %v", mat.Formatted(&M), mass)
	}
	if _, err := separated(2, 2).ClassMeans(&mat.Dense{}); err == nil {
		t.Error("ClassMeans of an unlabeled mixture: no error")
	}
}

func TestValidateErrors(t *testing.T) {
	base := func() *Mixture {
		m := separated(2, 2)
		m.Labels = mat.NewDense(2, 2, []float64{1, 0, 0, 1})
		return m
	}
	for _, tc := range []struct {
		name string
		edit func(m *Mixture) *Mixture
		want string
	}{
		{"nil", func(*Mixture) *Mixture { return nil }, "nil"},
		{"no components", func(m *Mixture) *Mixture { m.Weights = nil; return m }, "no components"},
		{"negative weight", func(m *Mixture) *Mixture { m.Weights = []float64{-0.5, 1.5}; return m }, "weight 0"},
		{"NaN weight", func(m *Mixture) *Mixture { m.Weights[1] = math.NaN(); return m }, "weight 1"},
		{"weights off the simplex", func(m *Mixture) *Mixture { m.Weights = []float64{0.5, 0.6}; return m }, "sum to"},
		{"mean rows", func(m *Mixture) *Mixture { m.Means = mat.NewDense(3, 2, nil); return m }, "3 means"},
		{"std shape", func(m *Mixture) *Mixture { m.Std = mat.NewDense(2, 3, nil); return m }, "standard deviations 2×3"},
		{"NaN mean", func(m *Mixture) *Mixture { m.Means.Set(1, 0, math.NaN()); return m }, "mean 1"},
		{"zero std", func(m *Mixture) *Mixture { m.Std.Set(0, 1, 0); return m }, "standard deviation 0, feature 1"},
		{"negative std", func(m *Mixture) *Mixture { m.Std.Set(1, 1, -1); return m }, "must be positive"},
		{"label rows", func(m *Mixture) *Mixture { m.Labels = mat.NewDense(3, 2, nil); return m }, "label rows"},
		{"Inf label", func(m *Mixture) *Mixture { m.Labels.Set(0, 1, math.Inf(1)); return m }, "label 0, class 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, tc.edit(base()).Validate(), tc.want)
		})
	}
}

func TestEvaluationErrors(t *testing.T) {
	m := separated(2, 2)
	X := mat.NewDense(2, 3, nil)
	wantErr(t, m.LogProb(make([]float64, 2), X), "3 columns", "dimension 2")
	X2 := mat.NewDense(2, 2, nil)
	wantErr(t, m.LogProb(make([]float64, 3), X2), "len(dst) = 3")
	wantErr(t, m.Posterior(mat.NewDense(2, 5, nil), X2), "dst is 2×5")
	_, err := m.Sample(&mat.Dense{}, nil)
	wantErr(t, err, "Sample: dst is empty")
	var nilMix *Mixture
	wantErr(t, nilMix.Proba(&mat.Dense{}, X2), "nil")
	X2.Set(1, 1, math.NaN())
	_, err = m.LogLikelihood(X2)
	wantErr(t, err, "X[1][1]")
}
