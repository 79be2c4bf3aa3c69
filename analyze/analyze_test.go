package analyze

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/synth"
)

func TestSparsity(t *testing.T) {
	for _, tc := range []struct {
		alpha []float64
		want  float64
	}{
		{[]float64{1. / 3, 1. / 3, 1. / 3}, 0},
		{[]float64{1, 0, 0, 0}, 75},
		{[]float64{0.5, 0, 0.5, 0}, 50},
		{[]float64{0.9999995, 5e-7}, 50}, // below SparsityTol counts as zero
		{[]float64{1}, 0},
	} {
		if got := Sparsity(tc.alpha); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Sparsity(%v) = %v, want %v", tc.alpha, got, tc.want)
		}
	}
	if !math.IsNaN(Sparsity(nil)) {
		t.Error("Sparsity(nil) is not NaN")
	}
}

func TestDensity(t *testing.T) {
	// Points 0, 1, 2, 3 on a line, k = 2: nearest squared distances are
	// 0: {1, 4}, 1: {1, 1}, 2: {1, 1}, 3: {1, 4} → mean 14/8.
	line := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	got, err := Density([]*mat.Dense{line}, 2)
	if err != nil || math.Abs(got-14.0/8) > 1e-12 {
		t.Fatalf("Density = %v, %v; want 1.75", got, err)
	}
	// Scaling the points by s scales the score by s²; the score of several
	// atoms is the mean of theirs.
	scaled := mat.NewDense(4, 1, []float64{0, 3, 6, 9})
	got, err = Density([]*mat.Dense{line, scaled}, 2)
	if err != nil || math.Abs(got-(1.75+9*1.75)/2) > 1e-12 {
		t.Fatalf("two atoms: %v, %v", got, err)
	}
	// Against a brute-force computation on random points.
	rng := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(30, 3, nil)
	for i := range 30 {
		for j := range 3 {
			X.Set(i, j, rng.NormFloat64())
		}
	}
	var want float64
	for i := range 30 {
		var d []float64
		for j := range 30 {
			if j != i {
				var s float64
				for q := range 3 {
					s += (X.At(i, q) - X.At(j, q)) * (X.At(i, q) - X.At(j, q))
				}
				d = append(d, s)
			}
		}
		slices.Sort(d)
		for _, v := range d[:5] {
			want += v / (5 * 30)
		}
	}
	if got, err := Density([]*mat.Dense{X}, 5); err != nil || math.Abs(got-want) > 1e-9 {
		t.Errorf("Density = %v, %v; brute force %v", got, err, want)
	}
	for _, tc := range []struct {
		atoms []*mat.Dense
		k     int
		want  string
	}{
		{nil, 5, "no atoms"},
		{[]*mat.Dense{line}, 0, "0 neighbours"},
		{[]*mat.Dense{line}, 4, "atom 1 has 4 points"},
		{[]*mat.Dense{line, nil}, 2, "atom 2: no points"},
		{[]*mat.Dense{mat.NewDense(3, 1, []float64{math.NaN(), 0, 1})}, 1, "atom 1: entry (0, 0) is NaN"},
	} {
		if _, err := Density(tc.atoms, tc.k); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Density error %v, want %q", err, tc.want)
		}
	}
}

func TestSimplexGrid(t *testing.T) {
	binom := func(n, k int) int {
		r := 1
		for i := 1; i <= k; i++ {
			r = r * (n - k + i) / i
		}
		return r
	}
	for _, tc := range []struct{ K, m int }{{1, 3}, {2, 4}, {3, 1}, {3, 10}, {4, 6}, {8, 3}} {
		g, err := SimplexGrid(tc.K, tc.m)
		if err != nil {
			t.Fatal(err)
		}
		if want := binom(tc.m+tc.K-1, tc.K-1); len(g) != want {
			t.Errorf("K=%d m=%d: %d points, want %d", tc.K, tc.m, len(g), want)
		}
		seen := map[string]bool{}
		for _, a := range g {
			var s float64
			for _, v := range a {
				if v < 0 || v > 1 {
					t.Fatalf("coordinate %v outside [0, 1]", v)
				}
				if f := v * float64(tc.m); math.Abs(f-math.Round(f)) > 1e-9 {
					t.Fatalf("coordinate %v is not a multiple of 1/%d", v, tc.m)
				}
				s += v
			}
			if math.Abs(s-1) > 1e-12 {
				t.Fatalf("K=%d m=%d: %v sums to %v", tc.K, tc.m, a, s)
			}
			key, _ := json.Marshal(a)
			if seen[string(key)] {
				t.Fatalf("%v twice", a)
			}
			seen[string(key)] = true
		}
	}
	if _, err := SimplexGrid(40, 40); err == nil || !strings.Contains(err.Error(), "more than 10000000") {
		t.Errorf("a grid of 10²² points: error %v", err)
	}
	// K = 3 order: first coordinate outer, second inner.
	g, _ := SimplexGrid(3, 2)
	want := [][]float64{{0, 0, 1}, {0, 0.5, 0.5}, {0, 1, 0}, {0.5, 0, 0.5}, {0.5, 0.5, 0}, {1, 0, 0}}
	for i := range want {
		if !slices.Equal(g[i], want[i]) {
			t.Fatalf("grid %v, want %v", g, want)
		}
	}
	if _, err := SimplexGrid(0, 3); err == nil {
		t.Error("K = 0 accepted")
	}
	if _, err := SimplexGrid(3, 0); err == nil {
		t.Error("m = 0 accepted")
	}
}

func TestUniformSimplex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const draws, K = 20000, 4
	mean := make([]float64, K)
	var below float64
	for range draws {
		a := UniformSimplex(rng, K)
		var s float64
		for k, v := range a {
			if v < 0 {
				t.Fatalf("negative coordinate %v", v)
			}
			s += v
			mean[k] += v / draws
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("sum %v", s)
		}
		if a[0] < 0.1 {
			below++
		}
	}
	// Under the flat Dirichlet, E[α_k] = 1/K and P(α_1 < t) = 1 − (1−t)^(K−1).
	for k, m := range mean {
		if math.Abs(m-0.25) > 0.01 {
			t.Errorf("mean of α_%d = %v, want 0.25", k+1, m)
		}
	}
	if p, want := below/draws, 1-math.Pow(0.9, K-1); math.Abs(p-want) > 0.015 {
		t.Errorf("P(α_1 < 0.1) = %v, want %v", p, want)
	}
}

func TestW2AndCorrelation(t *testing.T) {
	X := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 0, 2})
	Y := mat.NewDense(3, 2, nil)
	Y.Apply(func(_, j int, v float64) float64 { return v + []float64{3, 4}[j] }, X)
	if w, err := W2(X, Y); err != nil || math.Abs(w-5) > 1e-9 {
		t.Errorf("W2 of a translation by (3, 4) = %v, %v; want 5", w, err)
	}
	if w, err := W2(X, X); err != nil || w > 1e-9 {
		t.Errorf("W2(X, X) = %v, %v", w, err)
	}
	if c := Correlation([]float64{1, 2, 3}, []float64{6, 4, 2}); math.Abs(c+1) > 1e-12 {
		t.Errorf("correlation %v, want −1", c)
	}
	if c := Correlation([]float64{1, 2, 3}, []float64{5, 5, 5}); !math.IsNaN(c) {
		t.Errorf("correlation with a constant = %v, want NaN", c)
	}
	for _, tc := range []struct {
		X, Y *mat.Dense
		want string
	}{
		{nil, Y, "X: no points"},
		{X, &mat.Dense{}, "Y: no points"},
		{X, mat.NewDense(1, 2, []float64{0, math.Inf(1)}), "Y: entry (0, 1) is +Inf"},
	} {
		if _, err := W2(tc.X, tc.Y); err == nil || !strings.HasPrefix(err.Error(), "analyze: W2: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("W2 error %v, want %q", err, tc.want)
		}
	}
}

func TestScoreJSONAndBand(t *testing.T) {
	b, err := json.Marshal([]Score{1.5, Score(math.NaN()), Score(math.Inf(1))})
	if err != nil || string(b) != "[1.5,null,null]" {
		t.Fatalf("%s, %v", b, err)
	}
	var back []Score
	if err := json.Unmarshal(b, &back); err != nil || back[0] != 1.5 || !math.IsNaN(float64(back[1])) {
		t.Fatalf("%v, %v", back, err)
	}
	band := NewBand([][]float64{{1, 2, 3}, {3, 4}}, 2)
	sd := math.Sqrt(2)
	want := Band{Mean: []float64{2, 3, 3}, Lo: []float64{2 - 2*sd, 3 - 2*sd, 3}, Hi: []float64{2 + 2*sd, 3 + 2*sd, 3}, Count: []int{2, 2, 1}}
	for i := range want.Mean {
		if math.Abs(band.Mean[i]-want.Mean[i]) > 1e-12 || math.Abs(band.Lo[i]-want.Lo[i]) > 1e-12 ||
			math.Abs(band.Hi[i]-want.Hi[i]) > 1e-12 || band.Count[i] != want.Count[i] {
			t.Fatalf("band %+v, want %+v", band, want)
		}
	}
}

// synthProblem is the demo problem: three labeled sources, a target with
// its labels kept for scoring only.
func synthProblem() *dataset.Problem {
	p := synth.Generate(synth.Default(), 1)
	p.Name = "demo"
	return p
}

func quick(seed uint64) dictionary.Settings {
	return dictionary.Settings{Samples: 60, Batch: 30, Epochs: 30, Seed: seed}
}

func TestSweep(t *testing.T) {
	p := synthProblem()
	s := &SweepSettings{Dictionary: quick(1), Atoms: []int{3, 4}, Samples: []int{30, 60}, Batches: []int{15}}
	var calls int
	s.Progress = func(done, total int, _ string) {
		calls++
		if done != calls || total != 5 {
			t.Errorf("progress %d/%d at call %d", done, total, calls)
		}
	}
	runs, err := Sweep([]*dataset.Problem{p}, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 5 || calls != 5 {
		t.Fatalf("%d runs, %d progress calls; want 5", len(runs), calls)
	}
	wantParam := []string{"K", "K", "n", "n", "n_b"}
	for i, r := range runs {
		if r.Param != wantParam[i] {
			t.Errorf("run %d: param %s, want %s", i, r.Param, wantParam[i])
		}
		switch r.Param {
		case "K":
			if r.Atoms != r.Value || len(r.Alpha[0]) != r.Value {
				t.Errorf("K = %d run has %d atoms", r.Value, r.Atoms)
			}
		case "n":
			if r.Samples != r.Value {
				t.Errorf("n = %d run has n = %d", r.Value, r.Samples)
			}
		case "n_b":
			if r.Batch != r.Value {
				t.Errorf("n_b = %d run has n_b = %d", r.Value, r.Batch)
			}
		}
		if len(r.Sparsity) != 4 || len(r.Domains) != 4 || r.Domains[3] != "target" {
			t.Errorf("run %d: domains %v, sparsity %v", i, r.Domains, r.Sparsity)
		}
		for l, a := range r.Alpha {
			if r.Sparsity[l] != Sparsity(a) {
				t.Errorf("sparsity %v of %v", r.Sparsity[l], a)
			}
		}
		if !(r.Density > 0) {
			t.Errorf("density %v", r.Density)
		}
		if r.AccuracyR < 90 || r.AccuracyE < 90 {
			t.Errorf("%s = %d: accuracies %.1f / %.1f on the demo problem", r.Param, r.Value, r.AccuracyR, r.AccuracyE)
		}
	}
	// Results do not depend on the number of workers.
	s.Workers, s.Progress = 1, nil
	again, err := Sweep([]*dataset.Problem{p}, s)
	if err != nil {
		t.Fatal(err)
	}
	for i := range runs {
		if runs[i].AccuracyR != again[i].AccuracyR || runs[i].Density != again[i].Density || !slices.Equal(runs[i].Alpha[3], again[i].Alpha[3]) {
			t.Errorf("run %d differs with one worker", i)
		}
	}
	if _, err := Sweep([]*dataset.Problem{p}, &SweepSettings{Dictionary: quick(1)}); err == nil {
		t.Error("empty sweep accepted")
	}
	if _, err := Sweep([]*dataset.Problem{p}, &SweepSettings{Dictionary: quick(1), Atoms: []int{0}}); err == nil || !strings.Contains(err.Error(), "K") {
		t.Errorf("K = 0: %v", err)
	}
}

func TestHull(t *testing.T) {
	p := synthProblem()
	res, err := Hull([]*dataset.Problem{p}, &HullSettings{Dictionary: quick(2), Steps: 4, Atoms: []int{3, 4}, Draws: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Grids) != 1 || len(res.Draws) != 2 {
		t.Fatalf("%d grids, %d draw sets", len(res.Grids), len(res.Draws))
	}
	g := res.Grids[0]
	grid, _ := SimplexGrid(3, 4)
	if len(g.Points) != len(grid) {
		t.Fatalf("%d grid points, want %d", len(g.Points), len(grid))
	}
	best := math.Inf(1)
	for i, q := range g.Points {
		if !slices.Equal(q.Alpha, grid[i]) {
			t.Fatalf("point %d at %v, want %v", i, q.Alpha, grid[i])
		}
		if q.W2 < 0 || q.AccuracyR < 0 || q.AccuracyR > 100 {
			t.Errorf("point %+v", q)
		}
		best = min(best, q.W2)
	}
	// α_T minimises the reconstruction loss over the simplex (up to the
	// grid's resolution and mini-batch noise).
	if g.Learned.W2 > 1.05*best {
		t.Errorf("W2 at α_T = %v, best grid point %v", g.Learned.W2, best)
	}
	if g.Learned.AccuracyR < 90 {
		t.Errorf("DaDiL-R at α_T: %.1f%%", g.Learned.AccuracyR)
	}
	// Worse reconstructions classify worse (paper Figure 5).
	if !(g.CorrelationR < 0) || !(g.CorrelationE < 0) {
		t.Errorf("correlations of W2 with accuracy: R %v, E %v; want negative", g.CorrelationR, g.CorrelationE)
	}
	for _, d := range res.Draws {
		if len(d.Draws) != 5 || len(d.Learned.Alpha) != d.Atoms {
			t.Errorf("K = %d: %d draws, α_T %v", d.Atoms, len(d.Draws), d.Learned.Alpha)
		}
		for _, q := range d.Draws {
			if len(q.Alpha) != d.Atoms {
				t.Errorf("draw %v for K = %d", q.Alpha, d.Atoms)
			}
		}
	}
	// No grid, no labels: W2 only, accuracies NaN.
	p.Test = nil
	res, err = Hull([]*dataset.Problem{p}, &HullSettings{Dictionary: quick(2), Steps: -1, Atoms: []int{3}, Draws: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Grids) != 0 || len(res.Draws) != 1 || !math.IsNaN(float64(res.Draws[0].Learned.AccuracyR)) || !(res.Draws[0].Learned.W2 > 0) {
		t.Errorf("unlabeled: %+v", res)
	}
}

func TestStability(t *testing.T) {
	p := synthProblem()
	set := quick(5)
	set.Epochs = 8
	set.PlateauTol = -1
	runs, err := Stability([]*dataset.Problem{p}, &StabilitySettings{Dictionary: set, Seeds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("%d runs", len(runs))
	}
	for i, r := range runs {
		if r.Seed != 5+uint64(i) || len(r.Loss) != 8 || len(r.DomainLoss) != 4 || len(r.DomainLoss[0]) != 8 {
			t.Errorf("run %d: seed %d, %d epochs, %d domains", i, r.Seed, len(r.Loss), len(r.DomainLoss))
		}
		if len(r.DeltaX) != len(r.DeltaA) || len(r.DeltaX) < 8 {
			t.Errorf("run %d: %d Δ_X, %d Δ_A", i, len(r.DeltaX), len(r.DeltaA))
		}
	}
	if slices.Equal(runs[0].Loss, runs[1].Loss) {
		t.Error("two seeds gave the same loss curve")
	}
	if _, err := Stability(nil, &StabilitySettings{Dictionary: set}); err == nil {
		t.Error("no problem accepted")
	}
	bad := *p
	bad.Test = &dataset.Domain{X: p.Test.X, Y: p.Test.Y[:5]}
	if _, err := Stability([]*dataset.Problem{&bad}, &StabilitySettings{Dictionary: set}); err == nil || !strings.Contains(err.Error(), "test labels") {
		t.Errorf("mismatched test labels: %v", err)
	}
}

func TestRangeBand(t *testing.T) {
	b := NewRangeBand([][]float64{{1, 5}, {3}, {2, 1}})
	if !slices.Equal(b.Mean, []float64{2, 3}) || !slices.Equal(b.Lo, []float64{1, 1}) || !slices.Equal(b.Hi, []float64{3, 5}) || !slices.Equal(b.Count, []int{3, 2}) {
		t.Errorf("band %+v", b)
	}
}

// TestStabilityBands: the bands of a problem gather its runs only, the
// loss as mean ± 2σ and the updates as mean and min–max.
func TestStabilityBands(t *testing.T) {
	runs := []StabilityRun{
		{Problem: "a", Loss: []float64{4, 2, 1}, DeltaX: []float64{1, 5}, DeltaY: []float64{2}, DeltaA: []float64{3, 3}},
		{Problem: "b", Loss: []float64{100}, DeltaX: []float64{100}, DeltaY: []float64{100}, DeltaA: []float64{100}},
		{Problem: "a", Loss: []float64{6, 4}, DeltaX: []float64{3}, DeltaY: []float64{4, 8}, DeltaA: []float64{1, 7}},
	}
	b := NewStabilityBands(runs, "a")
	sd := math.Sqrt(2) // sample standard deviation of {4, 6} and of {2, 4}
	want := Band{Mean: []float64{5, 3, 1}, Lo: []float64{5 - 2*sd, 3 - 2*sd, 1}, Hi: []float64{5 + 2*sd, 3 + 2*sd, 1}, Count: []int{2, 2, 1}}
	near := func(x, y []float64) bool {
		return slices.EqualFunc(x, y, func(u, v float64) bool { return math.Abs(u-v) < 1e-12 })
	}
	if !near(b.Loss.Mean, want.Mean) || !near(b.Loss.Lo, want.Lo) || !near(b.Loss.Hi, want.Hi) || !slices.Equal(b.Loss.Count, want.Count) {
		t.Errorf("loss band %+v, want %+v", b.Loss, want)
	}
	for _, tc := range []struct {
		name         string
		got          Band
		mean, lo, hi []float64
	}{
		{"Δ_X", b.DeltaX, []float64{2, 5}, []float64{1, 5}, []float64{3, 5}},
		{"Δ_Y", b.DeltaY, []float64{3, 8}, []float64{2, 8}, []float64{4, 8}},
		{"Δ_A", b.DeltaA, []float64{2, 5}, []float64{1, 3}, []float64{3, 7}},
	} {
		if !slices.Equal(tc.got.Mean, tc.mean) || !slices.Equal(tc.got.Lo, tc.lo) || !slices.Equal(tc.got.Hi, tc.hi) {
			t.Errorf("%s band %+v, want mean %v, min %v, max %v", tc.name, tc.got, tc.mean, tc.lo, tc.hi)
		}
	}
	if e := NewStabilityBands(runs, "c"); len(e.Loss.Mean) != 0 || len(e.DeltaA.Mean) != 0 {
		t.Errorf("bands of a problem without runs: %+v", e)
	}
}

// TestHullWorkers: the hull study does not depend on the number of
// goroutines.
func TestHullWorkers(t *testing.T) {
	p := synthProblem()
	var got [2]*HullResult
	for i, w := range []int{1, 3} {
		r, err := Hull([]*dataset.Problem{p}, &HullSettings{Dictionary: quick(4), Steps: 2, Atoms: []int{3}, Draws: 3, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		got[i] = r
	}
	a, _ := json.Marshal(got[0])
	b, _ := json.Marshal(got[1])
	if string(a) != string(b) {
		t.Errorf("1 and 3 workers differ:\n%s\n%s", a, b)
	}
}
