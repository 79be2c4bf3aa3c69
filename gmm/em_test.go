package gmm

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestFitRecoversSeparatedComponents(t *testing.T) {
	truth := separated(3, 4)
	X, _ := draw(t, truth, 3000, 7)
	r, err := Fit(X, &Settings{Components: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Mixture
	match := matchComponents(truth, got)
	for k, l := range match {
		if !near(truth.Weights[k], got.Weights[l], 0.05) {
			t.Errorf("component %d: weight %.3f, want %.3f", k, got.Weights[l], truth.Weights[k])
		}
		for j := range truth.Dim() {
			if math.Abs(got.Means.At(l, j)-truth.Means.At(k, j)) > 0.15 {
				t.Errorf("component %d: mean[%d] %.3f, want %.3f", k, j, got.Means.At(l, j), truth.Means.At(k, j))
			}
			if math.Abs(got.Std.At(l, j)-truth.Std.At(k, j)) > 0.1 {
				t.Errorf("component %d: std[%d] %.3f, want %.3f", k, j, got.Std.At(l, j), truth.Std.At(k, j))
			}
		}
	}
	if r.Status != Converged {
		t.Errorf("status %v after %d iterations", r.Status, r.Iterations)
	}
}

func TestFitLogLikelihoodMonotone(t *testing.T) {
	for _, tc := range []struct {
		name      string
		K, d, c   int
		spread    float64
		n, fitK   int
		seed      uint64
		offset    float64
		scaleFeat bool
	}{
		{name: "overlapping", K: 4, d: 3, spread: 1.5, n: 2000, fitK: 4, seed: 1},
		{name: "too many components", K: 2, d: 2, spread: 3, n: 1500, fitK: 7, seed: 2},
		{name: "one component", K: 1, d: 5, spread: 0, n: 500, fitK: 1, seed: 3},
		{name: "far from the origin", K: 3, d: 4, spread: 2, n: 3000, fitK: 3, seed: 4, offset: 1e4},
		{name: "several blocks", K: 5, d: 6, spread: 2, n: 3*blockRows + 17, fitK: 5, seed: 5},
		{name: "mixed feature scales", K: 3, d: 4, spread: 2, n: 2000, fitK: 3, seed: 6, scaleFeat: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			truth := randMixture(rand.New(rand.NewPCG(tc.seed, 9)), tc.K, tc.d, 0, tc.spread, false)
			X, _ := draw(t, truth, tc.n, tc.seed)
			for i := range tc.n {
				row := X.RawRowView(i)
				for j := range row {
					row[j] += tc.offset
					if tc.scaleFeat {
						row[j] *= math.Pow(100, float64(j))
					}
				}
			}
			r, err := Fit(X, &Settings{Components: tc.fitK, Seed: tc.seed, MaxIter: 60, Tol: 1e-300})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.LogLikelihood) != r.Iterations+1 {
				t.Fatalf("%d log-likelihoods for %d iterations", len(r.LogLikelihood), r.Iterations)
			}
			for it := 1; it < len(r.LogLikelihood); it++ {
				prev, cur := r.LogLikelihood[it-1], r.LogLikelihood[it]
				if cur < prev-1e-12*math.Max(1, math.Abs(prev)) {
					t.Errorf("iteration %d: log-likelihood fell from %.17g to %.17g", it, prev, cur)
				}
			}
			ll, err := r.Mixture.LogLikelihood(X)
			if err != nil {
				t.Fatal(err)
			}
			last := r.LogLikelihood[len(r.LogLikelihood)-1]
			if !near(ll, last, 1e-9) {
				t.Errorf("LogLikelihood of the fit %.15g, trace ends at %.15g", ll, last)
			}
		})
	}
}

// TestFitBitIdenticalAcrossGOMAXPROCS fits data of several blocks (run in
// parallel over blocks) and of one block (run in parallel within it, with
// and without the cache of Z), and checks that the fits and their
// log-likelihood traces have the same bits for any GOMAXPROCS and Workers,
// and with or without the cache.
func TestFitBitIdenticalAcrossGOMAXPROCS(t *testing.T) {
	defer func(b int) { zCacheBytes = b }(zCacheBytes)
	var cached *Result
	for _, tc := range []struct {
		name    string
		n, d, K int
		cache   bool
	}{
		{"three blocks", 2*blockRows + 999, 5, 4, true},
		{"one block", 1500, 300, 9, true},
		{"one block, Z not cached", 1500, 300, 9, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zCacheBytes = 0
			if tc.cache {
				zCacheBytes = 64 << 20
			}
			truth := randMixture(rand.New(rand.NewPCG(3, 3)), tc.K, tc.d, 0, 2, false)
			X, _ := draw(t, truth, tc.n, 3)
			run := func(procs, workers int) *Result {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				r, err := Fit(X, &Settings{Components: tc.K, Seed: 11, MaxIter: 15, Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			ref := run(1, 0)
			switch {
			case tc.n < blockRows && tc.cache:
				cached = ref
			case tc.n < blockRows && !slices.Equal(ref.LogLikelihood, cached.LogLikelihood):
				t.Error("the fit differs from the fit with Z cached")
			}
			for _, c := range []struct{ procs, workers int }{{2, 0}, {2, 3}, {4, 1}, {4, 0}, {3, 2}} {
				r := run(c.procs, c.workers)
				if !sameBits(r.Mixture.Means, ref.Mixture.Means) || !sameBits(r.Mixture.Std, ref.Mixture.Std) ||
					!slices.Equal(r.Mixture.Weights, ref.Mixture.Weights) {
					t.Errorf("GOMAXPROCS %d, Workers %d: mixture differs from GOMAXPROCS 1", c.procs, c.workers)
				}
				for i, v := range r.LogLikelihood {
					if math.Float64bits(v) != math.Float64bits(ref.LogLikelihood[i]) {
						t.Errorf("GOMAXPROCS %d, Workers %d: log-likelihood %d is %v, want %v", c.procs, c.workers, i, v, ref.LogLikelihood[i])
						break
					}
				}
			}
		})
	}
}

func TestFitBICPicksTrueCount(t *testing.T) {
	for _, tc := range []struct{ K, d int }{{1, 2}, {2, 2}, {3, 2}, {4, 3}, {5, 2}} {
		truth := separated(tc.K, tc.d)
		X, _ := draw(t, truth, 400*tc.K, uint64(tc.K))
		r, err := Fit(X, &Settings{MaxComponents: 8, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Mixture.Components(); got != tc.K {
			t.Errorf("true K = %d, d = %d: BIC chose %d (%v)", tc.K, tc.d, got, r.Candidates)
		}
		if len(r.Candidates) != 8 {
			t.Errorf("true K = %d: %d candidates, want 8", tc.K, len(r.Candidates))
		}
	}
}

func TestFitBICCandidateEqualsFixedFit(t *testing.T) {
	X, _ := draw(t, separated(3, 2), 900, 2)
	auto, err := Fit(X, &Settings{MaxComponents: 4, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := Fit(X, &Settings{Components: auto.Mixture.Components(), Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(auto.Mixture.Means, fixed.Mixture.Means) || auto.BIC != fixed.BIC {
		t.Error("the BIC choice differs from Fit with its component count")
	}
}

func TestFitErrors(t *testing.T) {
	good := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 7})
	with := func(i, j int, v float64) *mat.Dense {
		X := mat.DenseCopyOf(good)
		X.Set(i, j, v)
		return X
	}
	for _, tc := range []struct {
		name string
		X    *mat.Dense
		s    *Settings
		want []string
	}{
		{"nil", nil, nil, []string{"X is empty"}},
		{"empty", &mat.Dense{}, nil, []string{"X is empty"}},
		{"NaN", with(1, 0, math.NaN()), nil, []string{"X[1][0]", "NaN"}},
		{"Inf", with(2, 1, math.Inf(-1)), nil, []string{"X[2][1]", "-Inf"}},
		{"huge", with(0, 1, 1e200), nil, []string{"X[0][1]", "exceeds"}},
		{"too many components", good, &Settings{Components: 4}, []string{"4 components for 3 rows"}},
		{"negative components", good, &Settings{Components: -1}, []string{"Components", "negative"}},
		{"negative max components", good, &Settings{MaxComponents: -2}, []string{"MaxComponents"}},
		{"negative iterations", good, &Settings{MaxIter: -1}, []string{"MaxIter"}},
		{"NaN tol", good, &Settings{Tol: math.NaN()}, []string{"Tol"}},
		{"negative floor", good, &Settings{VarFloor: -1}, []string{"VarFloor"}},
		{"negative workers", good, &Settings{Workers: -1}, []string{"Workers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fit(tc.X, tc.s)
			wantErr(t, err, tc.want...)
		})
	}
}

func TestFitDegenerateData(t *testing.T) {
	// Constant features, duplicated rows and more components than distinct
	// rows: finite parameters, weights on the simplex.
	X := mat.NewDense(6, 3, []float64{1, 5, 0, 1, 5, 0, 1, 5, 0, 2, 5, 0, 2, 5, 0, 2, 5, 0})
	r, err := Fit(X, &Settings{Components: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Mixture.Validate(); err != nil {
		t.Fatalf("fitted mixture invalid: %v", err)
	}
	ll, err := r.Mixture.LogLikelihood(X)
	if err != nil || math.IsNaN(ll) || math.IsInf(ll, 0) {
		t.Fatalf("log-likelihood %v, %v", ll, err)
	}
}

func TestEMStepMatchesDirectFormulas(t *testing.T) {
	// One E-step and M-step through the chunked products against the
	// textbook formulas, row by row, from the same mixture.
	rng := rand.New(rand.NewPCG(20, 20))
	truth := randMixture(rng, 3, 4, 0, 2, false)
	X, _ := draw(t, truth, blockRows+500, 20)
	start := randMixture(rng, 3, 4, 0, 2, false)
	p := prepare(X, 0, DefaultVarFloor)
	e := newEngine(X, p.mean, 0, 3)
	st := newStats(e.blocks, 3, 4)
	ll := e.pass(st, newScorer(start, p.mean), false)
	got := p.mstep(st, start, nil)

	n, K, d := X.RawMatrix().Rows, 3, 4
	G := mat.NewDense(n, K, nil)
	var wantLL float64
	for i := range n {
		x := X.RawRowView(i)
		lp := directLogProb(start, x)
		wantLL += lp / float64(n)
		for k := range K {
			one := &Mixture{Weights: []float64{1}, Means: mat.NewDense(1, d, start.Means.RawRowView(k)), Std: mat.NewDense(1, d, start.Std.RawRowView(k))}
			G.Set(i, k, math.Exp(math.Log(start.Weights[k])+directLogProb(one, x)-lp))
		}
	}
	if !near(ll, wantLL, 1e-11) {
		t.Errorf("log-likelihood %.15g, direct %.15g", ll, wantLL)
	}
	for k := range K {
		var Nk float64
		for i := range n {
			Nk += G.At(i, k)
		}
		if !near(got.Weights[k], Nk/float64(n), 1e-11) {
			t.Errorf("weight %d: %.15g, direct %.15g", k, got.Weights[k], Nk/float64(n))
		}
		for j := range d {
			var m, v float64
			for i := range n {
				m += G.At(i, k) * X.At(i, j) / Nk
			}
			for i := range n {
				u := X.At(i, j) - m
				v += G.At(i, k) * u * u / Nk
			}
			v = math.Max(v, p.floor[j])
			if !near(got.Means.At(k, j), m, 1e-10) || !near(got.Std.At(k, j), math.Sqrt(v), 1e-9) {
				t.Errorf("component %d, feature %d: N(%.12g, %.12g²), direct N(%.12g, %.12g²)",
					k, j, got.Means.At(k, j), got.Std.At(k, j), m, math.Sqrt(v))
			}
		}
	}
}

// TestFitFloorOfConstantFeature checks that a feature whose rows are all
// equal gets the floor of a constant feature, VarFloor times the mean
// variance of the features, even when its value is not exactly
// representable, so that its computed mean differs from it by rounding and
// its computed variance is rounding noise rather than 0 (as a pixel
// constant within a class after standard scaling).
func TestFitFloorOfConstantFeature(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, c = 101, -0.7071067811865476
	X := mat.NewDense(n, 2, nil)
	for i := range n {
		X.Set(i, 0, rng.NormFloat64())
		X.Set(i, 1, c)
	}
	var sum float64
	for i := range n {
		sum += X.At(i, 1)
	}
	if sum/n == c {
		t.Fatalf("the test needs a mean that rounds away from %v", c)
	}
	p := prepare(X, 0, 0.1)
	if p.variance[1] != 0 {
		t.Errorf("variance of the constant feature %v, want 0", p.variance[1])
	}
	want := 0.1 * p.variance[0] / 2
	if !near(p.floor[1], want, 1e-12*want) {
		t.Errorf("floor of the constant feature %v, want %v (VarFloor times the mean variance)", p.floor[1], want)
	}
	r, err := Fit(X, &Settings{Components: 2, VarFloor: 0.1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		if sd := r.Mixture.Std.At(k, 1); sd*sd < want*(1-1e-9) {
			t.Errorf("component %d: σ of the constant feature %v, below the floor's %v", k, sd, math.Sqrt(want))
		}
	}
}
