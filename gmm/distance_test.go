package gmm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestMW2OfAMixtureToItselfIsZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		name       string
		K, d, c    int
		beta       float64
		uniform    bool
		duplicated bool
	}{
		{name: "one component", K: 1, d: 3},
		{name: "unlabeled", K: 6, d: 4},
		{name: "uniform weights", K: 5, d: 2, uniform: true},
		{name: "labeled", K: 7, d: 3, c: 4, beta: 2.5},
		{name: "labels ignored", K: 4, d: 3, c: 2},
		{name: "duplicated components", K: 4, d: 2, duplicated: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			P := randMixture(rng, tc.K, tc.d, tc.c, 5, tc.uniform)
			if tc.duplicated {
				P.Means.SetRow(1, P.Means.RawRowView(0))
				P.Std.SetRow(1, P.Std.RawRowView(0))
			}
			cp, err := MW2(P, P.Clone(), tc.beta)
			if err != nil {
				t.Fatal(err)
			}
			if cp.Value != 0 {
				t.Errorf("MW₂²(P, P) = %g", cp.Value)
			}
		})
	}
}

// quantileW2 returns ∫₀¹ (F⁻¹(u) − G⁻¹(u))² du for 1-D normal laws, by
// the midpoint rule on n points: the squared W₂ distance of the real
// line, computed without the closed form.
func quantileW2(m1, s1, m2, s2 float64, n int) float64 {
	f, g := distuv.Normal{Mu: m1, Sigma: s1}, distuv.Normal{Mu: m2, Sigma: s2}
	var s float64
	for i := range n {
		u := (float64(i) + 0.5) / float64(n)
		v := f.Quantile(u) - g.Quantile(u)
		s += v * v
	}
	return s / float64(n)
}

func TestMW2OfSingleGaussiansIsTheirW2(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, d := range []int{1, 2, 5, 16} {
		P, Q := randMixture(rng, 1, d, 0, 3, true), randMixture(rng, 1, d, 0, 3, true)
		cp, err := MW2(P, Q, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Closed form for diagonal covariances.
		want := sqDist(P.Means.RawRowView(0), Q.Means.RawRowView(0)) + sqDist(P.Std.RawRowView(0), Q.Std.RawRowView(0))
		if !near(cp.Value, want, 1e-14) {
			t.Errorf("d = %d: MW₂² = %.17g, closed form %.17g", d, cp.Value, want)
		}
		// The product of 1-D monotone couplings, by quadrature of the
		// quantile functions.
		var quad float64
		for j := range d {
			quad += quantileW2(P.Means.At(0, j), P.Std.At(0, j), Q.Means.At(0, j), Q.Std.At(0, j), 200000)
		}
		if !near(cp.Value, quad, 1e-3) {
			t.Errorf("d = %d: MW₂² = %.6g, quantile quadrature %.6g", d, cp.Value, quad)
		}
	}
}

// permutations calls fn with every permutation of 0 … n−1.
func permutations(n int, fn func(p []int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var rec func(i int)
	rec = func(i int) {
		if i == n {
			fn(p)
			return
		}
		for j := i; j < n; j++ {
			p[i], p[j] = p[j], p[i]
			rec(i + 1)
			p[i], p[j] = p[j], p[i]
		}
	}
	rec(0)
}

func TestMW2AgainstPermutationBruteForce(t *testing.T) {
	// With K equal weights on both sides an optimal plan is a permutation
	// (Birkhoff), so MW₂² is the least mean cost over the K! matchings.
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		K, d, c int
		beta    float64
	}{{1, 2, 0, 0}, {2, 3, 0, 0}, {4, 2, 0, 0}, {5, 3, 3, 1.5}, {6, 2, 2, 10}, {7, 4, 0, 0}} {
		for trial := range 5 {
			P, Q := randMixture(rng, tc.K, tc.d, tc.c, 2, true), randMixture(rng, tc.K, tc.d, tc.c, 2, true)
			cp, err := MW2(P, Q, tc.beta)
			if err != nil {
				t.Fatal(err)
			}
			best := math.Inf(1)
			permutations(tc.K, func(p []int) {
				var s float64
				for k, l := range p {
					s += cp.Cost.At(k, l)
				}
				best = math.Min(best, s/float64(tc.K))
			})
			if !near(cp.Value, best, 1e-12) {
				t.Errorf("K = %d, β = %g, trial %d: MW₂² = %.17g, best permutation %.17g", tc.K, tc.beta, trial, cp.Value, best)
			}
			back, err := MW2(Q, P, tc.beta)
			if err != nil {
				t.Fatal(err)
			}
			if !near(back.Value, cp.Value, 1e-12) {
				t.Errorf("K = %d, trial %d: MW₂²(Q, P) = %.17g ≠ MW₂²(P, Q) = %.17g", tc.K, trial, back.Value, cp.Value)
			}
		}
	}
}

// mw2 returns MW₂²(P, Q) or fails the test.
func mw2(t *testing.T, P, Q *Mixture, beta float64) float64 {
	t.Helper()
	cp, err := MW2(P, Q, beta)
	if err != nil {
		t.Fatal(err)
	}
	return cp.Value
}

func TestMW2GradientMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, tc := range []struct {
		name    string
		K, L    int
		d, c    int
		beta    float64
		uniform bool
	}{
		{name: "unlabeled", K: 4, L: 5, d: 3},
		{name: "labeled", K: 5, L: 3, d: 2, c: 3, beta: 0.7},
		{name: "uniform weights", K: 4, L: 4, d: 2, c: 2, beta: 3, uniform: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			P, Q := randMixture(rng, tc.K, tc.d, tc.c, 2, tc.uniform), randMixture(rng, tc.L, tc.d, tc.c, 2, tc.uniform)
			cp, err := MW2(P, Q, tc.beta)
			if err != nil {
				t.Fatal(err)
			}
			gP, gQ, err := cp.Gradient(P, Q)
			if err != nil {
				t.Fatal(err)
			}
			const h = 1e-6
			check := func(what string, M, G *mat.Dense) {
				r, c := M.Dims()
				for i := range r {
					for j := range c {
						v := M.At(i, j)
						M.Set(i, j, v+h)
						up := mw2(t, P, Q, tc.beta)
						M.Set(i, j, v-h)
						down := mw2(t, P, Q, tc.beta)
						M.Set(i, j, v)
						fd := (up - down) / (2 * h)
						if math.Abs(fd-G.At(i, j)) > 1e-6*math.Max(1, math.Abs(fd)) {
							t.Errorf("%s[%d][%d]: gradient %.10g, finite difference %.10g", what, i, j, G.At(i, j), fd)
						}
					}
				}
			}
			check("P.Means", P.Means, gP.Means)
			check("P.Std", P.Std, gP.Std)
			check("Q.Means", Q.Means, gQ.Means)
			check("Q.Std", Q.Std, gQ.Std)
			if tc.beta > 0 {
				check("P.Labels", P.Labels, gP.Labels)
				check("Q.Labels", Q.Labels, gQ.Labels)
			} else if gP.Labels != nil || gQ.Labels != nil {
				t.Error("label gradients with β = 0")
			}
			// Weights, along the simplex: w ± h(e_i − e_j).
			checkWeights := func(what string, w, g []float64) {
				for i := 1; i < len(w); i++ {
					w[i] += h
					w[0] -= h
					up := mw2(t, P, Q, tc.beta)
					w[i] -= 2 * h
					w[0] += 2 * h
					down := mw2(t, P, Q, tc.beta)
					w[i] += h
					w[0] -= h
					fd := (up - down) / (2 * h)
					if want := g[i] - g[0]; math.Abs(fd-want) > 1e-6*math.Max(1, math.Abs(fd)) {
						t.Errorf("%s along e_%d − e_0: gradient %.10g, finite difference %.10g", what, i, want, fd)
					}
				}
			}
			if !tc.uniform {
				checkWeights("P.Weights", P.Weights, gP.Weights)
				checkWeights("Q.Weights", Q.Weights, gQ.Weights)
			}
		})
	}
}

func TestDistanceErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	P := randMixture(rng, 3, 2, 2, 1, false)
	Q := randMixture(rng, 2, 2, 0, 1, false)
	R := randMixture(rng, 2, 3, 0, 1, false)
	S := randMixture(rng, 2, 2, 3, 1, false)
	for _, tc := range []struct {
		name string
		P, Q *Mixture
		beta float64
		want string
	}{
		{"dimensions", P, R, 0, "dimensions 2 and 3"},
		{"negative beta", P, Q, -1, "β = -1"},
		{"NaN beta", P, Q, math.NaN(), "β = NaN"},
		{"unlabeled with beta", P, Q, 1, "needs two labeled mixtures"},
		{"classes", P, S, 1, "2 and 3 classes"},
		{"negative weight", P, &Mixture{Weights: []float64{-1, 2}, Means: Q.Means, Std: Q.Std}, 0, "weight 0"},
		{"nil", P, nil, 0, "nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MW2(tc.P, tc.Q, tc.beta)
			wantErr(t, err, tc.want)
		})
	}
	// Weights within the simplex tolerance on either side still balance.
	hi, lo := P.Clone(), Q.Clone()
	hi.Weights[0] += 0.9e-9
	lo.Weights[0] -= 0.9e-9
	if _, err := MW2(hi, lo, 0); err != nil {
		t.Errorf("weights summing to 1 ± 0.9e-9: %v", err)
	}
	cp, err := MW2(P, Q, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = cp.Gradient(Q, P)
	wantErr(t, err, "plan is 3×2")
}
