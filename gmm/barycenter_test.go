package gmm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// sameMixture fails unless B equals P up to the order of the components,
// to tol.
func sameMixture(t *testing.T, B, P *Mixture, tol float64) {
	t.Helper()
	if B.Components() != P.Components() {
		t.Fatalf("%d components, want %d", B.Components(), P.Components())
	}
	match := matchComponents(B, P)
	seen := map[int]bool{}
	for k, l := range match {
		seen[l] = true
		for _, pair := range []struct {
			what string
			a, b *mat.Dense
		}{{"mean", B.Means, P.Means}, {"std", B.Std, P.Std}, {"label", B.Labels, P.Labels}} {
			if pair.a == nil && pair.b == nil {
				continue
			}
			for j, v := range pair.a.RawRowView(k) {
				if w := pair.b.At(l, j); math.Abs(v-w) > tol {
					t.Errorf("component %d (%d): %s[%d] = %.17g, want %.17g", k, l, pair.what, j, v, w)
				}
			}
		}
		if !near(B.Weights[k], P.Weights[l], tol) {
			t.Errorf("component %d: weight %v, want %v", k, B.Weights[k], P.Weights[l])
		}
	}
	if len(seen) != P.Components() {
		t.Errorf("components matched %v, not a permutation", match)
	}
}

func TestBarycenterOfOneMixtureIsThatMixture(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	for _, tc := range []struct {
		name    string
		K, d, c int
		beta    float64
		copies  int
		init    bool
	}{
		{name: "unlabeled", K: 5, d: 3, copies: 1},
		{name: "labeled", K: 4, d: 2, c: 3, beta: 1, copies: 1},
		{name: "labels averaged, not transported", K: 6, d: 2, c: 2, copies: 1},
		{name: "from another start", K: 5, d: 4, c: 2, beta: 0.5, copies: 1, init: true},
		{name: "three copies", K: 4, d: 3, copies: 3},
		{name: "one component", K: 1, d: 5, copies: 2, init: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			P := randMixture(rng, tc.K, tc.d, tc.c, 4, true)
			mixtures := make([]*Mixture, tc.copies)
			lambda := make([]float64, tc.copies)
			for p := range mixtures {
				mixtures[p], lambda[p] = P, 1/float64(tc.copies)
			}
			if tc.copies == 3 {
				lambda = []float64{0.25, 0.5, 0.25}
			}
			s := &BarycenterSettings{Beta: tc.beta, Seed: 3}
			if tc.init {
				s.Init = randMixture(rng, tc.K, tc.d, tc.c, 4, false)
			}
			r, err := Barycenter(mixtures, lambda, s)
			if err != nil {
				t.Fatal(err)
			}
			sameMixture(t, r.Mixture, P, 1e-12)
			if last := r.Cost[len(r.Cost)-1]; last > 1e-20 {
				t.Errorf("final cost %g", last)
			}
			if r.Status != Converged {
				t.Errorf("status %v", r.Status)
			}
		})
	}
}

func TestBarycenterOfGaussians(t *testing.T) {
	// For single Gaussians with diagonal covariances the W₂ barycenter has
	// the averaged means and the averaged deviations.
	rng := rand.New(rand.NewPCG(11, 11))
	mixtures := []*Mixture{randMixture(rng, 1, 3, 0, 5, true), randMixture(rng, 1, 3, 0, 5, true), randMixture(rng, 1, 3, 0, 5, true)}
	lambda := []float64{0.2, 0.3, 0.5}
	r, err := Barycenter(mixtures, lambda, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 3 {
		var m, s float64
		for p, P := range mixtures {
			m += lambda[p] * P.Means.At(0, j)
			s += lambda[p] * P.Std.At(0, j)
		}
		if !near(r.Mixture.Means.At(0, j), m, 1e-14) || !near(r.Mixture.Std.At(0, j), s, 1e-14) {
			t.Errorf("feature %d: N(%v, %v²), want N(%v, %v²)", j, r.Mixture.Means.At(0, j), r.Mixture.Std.At(0, j), m, s)
		}
	}
}

func TestBarycenterCostNonIncreasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for _, tc := range []struct {
		name string
		Ks   []int
		K    int
		d, c int
		beta float64
	}{
		{name: "unlabeled", Ks: []int{4, 6, 5}, d: 3},
		{name: "labeled", Ks: []int{6, 6, 9, 3}, d: 2, c: 3, beta: 2},
		{name: "more components than inputs", Ks: []int{2, 3}, K: 8, d: 2, c: 2, beta: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mixtures := make([]*Mixture, len(tc.Ks))
			lambda := make([]float64, len(tc.Ks))
			var s float64
			for p, K := range tc.Ks {
				mixtures[p] = randMixture(rng, K, tc.d, tc.c, 3, p%2 == 0)
				lambda[p] = 0.1 + rng.Float64()
				s += lambda[p]
			}
			for p := range lambda {
				lambda[p] /= s
			}
			r, err := Barycenter(mixtures, lambda, &BarycenterSettings{Components: tc.K, Beta: tc.beta, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if tc.K > 0 && r.Mixture.Components() != tc.K {
				t.Errorf("%d components, want %d", r.Mixture.Components(), tc.K)
			}
			for it := 1; it < len(r.Cost); it++ {
				if r.Cost[it] > r.Cost[it-1]*(1+1e-12) {
					t.Errorf("iteration %d: cost rose from %.17g to %.17g", it, r.Cost[it-1], r.Cost[it])
				}
			}
			// Converged: the barycenter is a fixed point of the projection.
			if r.Status != Converged {
				t.Fatalf("status %v after %d iterations", r.Status, r.Iterations)
			}
			next := project(r.Mixture, r.Plans, mixtures, lambda)
			for _, pair := range [][2]*mat.Dense{{next.Means, r.Mixture.Means}, {next.Std, r.Mixture.Std}, {next.Labels, r.Mixture.Labels}} {
				if pair[0] != nil && !mat.EqualApprox(pair[0], pair[1], 1e-9) {
					t.Errorf("not a fixed point:\n%v\n%v", mat.Formatted(pair[0]), mat.Formatted(pair[1]))
				}
			}
		})
	}
}

func TestBarycenterBitIdenticalAcrossWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	mixtures := []*Mixture{randMixture(rng, 7, 3, 2, 3, false), randMixture(rng, 5, 3, 2, 3, true), randMixture(rng, 9, 3, 2, 3, false)}
	lambda := []float64{0.5, 0.25, 0.25}
	var ref *BarycenterResult
	for _, w := range []int{1, 2, 5} {
		r, err := Barycenter(mixtures, lambda, &BarycenterSettings{Beta: 1, Seed: 4, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = r
			continue
		}
		if !sameBits(r.Mixture.Means, ref.Mixture.Means) || !sameBits(r.Mixture.Std, ref.Mixture.Std) || !sameBits(r.Mixture.Labels, ref.Mixture.Labels) {
			t.Errorf("Workers %d: barycenter differs from Workers 1", w)
		}
	}
}

func TestBarycenterErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	P, Q := randMixture(rng, 3, 2, 0, 1, false), randMixture(rng, 2, 2, 0, 1, false)
	L := randMixture(rng, 2, 2, 2, 1, false)
	R := randMixture(rng, 2, 3, 0, 1, false)
	for _, tc := range []struct {
		name     string
		mixtures []*Mixture
		lambda   []float64
		s        *BarycenterSettings
		want     string
	}{
		{"none", nil, nil, nil, "no mixtures"},
		{"weights", []*Mixture{P, Q}, []float64{1}, nil, "2 mixtures but 1 weights"},
		{"negative weight", []*Mixture{P, Q}, []float64{1.5, -0.5}, nil, "λ[1] = -0.5"},
		{"weights off the simplex", []*Mixture{P, Q}, []float64{0.5, 0.6}, nil, "sum to"},
		{"dimensions", []*Mixture{P, R}, []float64{0.5, 0.5}, nil, "mixture 1: mixtures of dimensions 2 and 3"},
		{"labeled and unlabeled", []*Mixture{P, L}, []float64{0.5, 0.5}, nil, "mixture 1 has 2 classes"},
		{"beta without labels", []*Mixture{P, Q}, []float64{0.5, 0.5}, &BarycenterSettings{Beta: 1}, "needs two labeled"},
		{"invalid mixture", []*Mixture{P, {Weights: []float64{1}, Means: mat.NewDense(1, 2, nil), Std: mat.NewDense(1, 2, nil)}}, []float64{0.5, 0.5}, nil, "standard deviation 0"},
		{"negative components", []*Mixture{P}, []float64{1}, &BarycenterSettings{Components: -1}, "Components = -1"},
		{"NaN tol", []*Mixture{P}, []float64{1}, &BarycenterSettings{Tol: math.NaN()}, "Tol = NaN"},
		{"init dimension", []*Mixture{P}, []float64{1}, &BarycenterSettings{Init: R}, "Init has dimension 3"},
		{"init components", []*Mixture{P}, []float64{1}, &BarycenterSettings{Init: Q, Components: 3}, "Init has 2 components"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Barycenter(tc.mixtures, tc.lambda, tc.s)
			wantErr(t, err, tc.want)
		})
	}
}
