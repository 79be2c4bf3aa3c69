package barycenter

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func gaussian(rng *rand.Rand, n, d int, shift float64) *mat.Dense {
	X := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			X.Set(i, k, rng.NormFloat64()+shift)
		}
	}
	return X
}

func oneHot(rng *rand.Rand, n, c int) *mat.Dense {
	Y := mat.NewDense(n, c, nil)
	for i := 0; i < n; i++ {
		Y.Set(i, i%c, 1)
	}
	_ = rng
	return Y
}

// rowsOf returns the rows of the horizontally stacked [X Y] as sorted
// slices, to compare supports up to a permutation.
func rowsOf(X, Y *mat.Dense) [][]float64 {
	n, _ := X.Dims()
	rows := make([][]float64, n)
	for i := 0; i < n; i++ {
		r := slices.Clone(X.RawRowView(i))
		if Y != nil {
			r = append(r, Y.RawRowView(i)...)
		}
		rows[i] = r
	}
	sort.Slice(rows, func(a, b int) bool { return slices.Compare(rows[a], rows[b]) < 0 })
	return rows
}

func sameUpToPermutation(t *testing.T, X, Y, X2, Y2 *mat.Dense, tol float64) {
	t.Helper()
	a, b := rowsOf(X, Y), rowsOf(X2, Y2)
	if len(a) != len(b) {
		t.Fatalf("%d rows vs %d", len(a), len(b))
	}
	for i := range a {
		for k := range a[i] {
			if math.Abs(a[i][k]-b[i][k]) > tol {
				t.Fatalf("row %d col %d: %g vs %g", i, k, a[i][k], b[i][k])
			}
		}
	}
}

func TestCopiesOfOneMeasure(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	X := gaussian(rng, 30, 4, 2)
	Y := oneHot(rng, 30, 3)
	for _, labeled := range []bool{false, true} {
		for _, K := range []int{1, 2, 5} {
			ms := make([]Measure, K)
			alpha := make([]float64, K)
			for k := range ms {
				ms[k] = Measure{X: X, Y: Y}
				alpha[k] = 1 / float64(K)
			}
			alpha[K-1] = 1 - float64(K-1)/float64(K)
			var r *Result
			var err error
			if labeled {
				r, err = Labeled(ms, alpha, nil)
			} else {
				r, err = FreeSupport(ms, alpha, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			var Yr *mat.Dense
			if labeled {
				Yr = Y
			}
			sameUpToPermutation(t, r.X, r.Y, X, Yr, 1e-12)
			if !r.Converged || r.Cost > 1e-12 {
				t.Errorf("labeled=%v K=%d: converged %v, final J %g (history %v)", labeled, K, r.Converged, r.Cost, r.History)
			}
		}
	}
}

func TestAlphaVertexReturnsAtom(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	K := 4
	ms := make([]Measure, K)
	for k := range ms {
		ms[k] = Measure{X: gaussian(rng, 25, 3, float64(3*k)), Y: oneHot(rng, 25, 5)}
	}
	for k := 0; k < K; k++ {
		alpha := make([]float64, K)
		alpha[k] = 1
		r, err := Labeled(ms, alpha, &Settings{Rand: rand.New(rand.NewPCG(uint64(k), 9))})
		if err != nil {
			t.Fatal(err)
		}
		sameUpToPermutation(t, r.X, r.Y, ms[k].X, ms[k].Y, 1e-12)
	}
}

// TestOneDimensionalQuantiles: in 1-D with squared cost, the barycenter of
// equal-size uniform measures averages their order statistics.
func TestOneDimensionalQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	n := 40
	ms := []Measure{{X: gaussian(rng, n, 1, -3)}, {X: gaussian(rng, n, 1, 1)}, {X: gaussian(rng, n, 1, 5)}}
	alpha := []float64{0.2, 0.5, 0.3}
	r, err := FreeSupport(ms, alpha, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, n)
	for k, m := range ms {
		v := slices.Clone(m.X.RawMatrix().Data)
		sort.Float64s(v)
		for i := range want {
			want[i] += alpha[k] * v[i]
		}
	}
	got := slices.Clone(r.X.RawMatrix().Data)
	sort.Float64s(got)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("quantile %d: %g, want %g", i, got[i], want[i])
		}
	}
}

// TestObjectiveNonIncreasing: each iteration minimises the objective for
// fixed plans, then re-optimises the plans, so J never increases (fixed β).
func TestObjectiveNonIncreasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := 0; trial < 5; trial++ {
		ms := []Measure{
			{X: gaussian(rng, 20, 3, 0), Y: oneHot(rng, 20, 2)},
			{X: gaussian(rng, 35, 3, 2), Y: oneHot(rng, 35, 2), W: randWeights(rng, 35)},
			{X: gaussian(rng, 12, 3, -1), Y: oneHot(rng, 12, 2)},
		}
		alpha := []float64{0.3, 0.3, 0.4}
		for _, labeled := range []bool{false, true} {
			s := &Settings{Support: 17, MaxIter: 30, Beta: 5, Rand: rand.New(rand.NewPCG(uint64(trial), 1))}
			var r *Result
			var err error
			if labeled {
				r, err = Labeled(ms, alpha, s)
			} else {
				r, err = FreeSupport(ms, alpha, s)
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(r.History); i++ {
				if r.History[i] > r.History[i-1]*(1+1e-12)+1e-12 {
					t.Errorf("labeled=%v: J increased at iteration %d: %v", labeled, i+1, r.History)
				}
			}
			// The plans have the right marginals.
			for k, p := range r.Plans {
				cs := p.ColSums()
				for i, v := range cs {
					if math.Abs(v-1.0/17) > 1e-12 {
						t.Fatalf("plan %d: column %d has mass %g", k, i, v)
					}
				}
			}
		}
	}
}

func randWeights(rng *rand.Rand, n int) []float64 {
	w := make([]float64, n)
	var s float64
	for i := range w {
		w[i] = rng.Float64() + 0.1
		s += w[i]
	}
	for i := range w {
		w[i] /= s
	}
	return w
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	ms := make([]Measure, 6)
	for k := range ms {
		ms[k] = Measure{X: gaussian(rng, 50, 5, float64(k)), Y: oneHot(rng, 50, 4)}
	}
	alpha := []float64{0.1, 0.2, 0.3, 0.1, 0.2, 0.1}
	var ref *Result
	for _, w := range []int{1, 2, 8} {
		r, err := Labeled(ms, alpha, &Settings{Workers: w, MaxIter: 5})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = r
			continue
		}
		if !mat.Equal(r.X, ref.X) || !mat.Equal(r.Y, ref.Y) || !slices.Equal(r.History, ref.History) {
			t.Fatalf("Workers=%d gives a different result", w)
		}
	}
}

func TestErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	X := gaussian(rng, 5, 2, 0)
	Y := oneHot(rng, 5, 2)
	nan := mat.DenseCopyOf(X)
	nan.Set(2, 1, math.NaN())
	big := mat.DenseCopyOf(Y)
	big.Set(0, 0, 5)
	neg := mat.DenseCopyOf(Y)
	neg.Set(3, 0, neg.At(3, 0)-1)
	neg.Set(3, 1, neg.At(3, 1)+1)
	cases := []struct {
		name    string
		ms      []Measure
		alpha   []float64
		s       *Settings
		labeled bool
		want    string
	}{
		{"no measures", nil, nil, nil, false, "no measures"},
		{"alpha length", []Measure{{X: X}}, []float64{0.5, 0.5}, nil, false, "2 weights α for 1 measures"},
		{"alpha sum", []Measure{{X: X}, {X: X}}, []float64{0.5, 0.6}, nil, false, "simplex"},
		{"alpha negative", []Measure{{X: X}, {X: X}}, []float64{1.5, -0.5}, nil, false, "α[1]"},
		{"dimension", []Measure{{X: X}, {X: gaussian(rng, 5, 3, 0)}}, []float64{0.5, 0.5}, nil, false, "dimension 3"},
		{"NaN features", []Measure{{X: nan}}, []float64{1}, nil, false, "entry (2, 1) is NaN"},
		{"weights length", []Measure{{X: X, W: []float64{1}}}, []float64{1}, nil, false, "1 weights"},
		{"unlabeled", []Measure{{X: X}}, []float64{1}, nil, true, "unlabeled"},
		{"classes", []Measure{{X: X, Y: Y}, {X: X, Y: oneHot(rng, 5, 3)}}, []float64{0.5, 0.5}, nil, true, "3 classes"},
		{"beta", []Measure{{X: X, Y: Y}}, []float64{1}, &Settings{Beta: -1}, true, "β"},
		{"label sum", []Measure{{X: X, Y: big}}, []float64{1}, nil, true, "row 0 sums to"},
		{"label negative", []Measure{{X: X, Y: neg}}, []float64{1}, nil, true, "entry (3, "},
		{"tol NaN", []Measure{{X: X}}, []float64{1}, &Settings{Tol: math.NaN()}, false, "Tol NaN"},
		{"workers", []Measure{{X: X}}, []float64{1}, &Settings{Workers: -1}, false, "Workers -1"},
		{"init NaN", []Measure{{X: X}}, []float64{1}, &Settings{Init: &Measure{X: nan}}, false, "initial support: entry (2, 1) is NaN"},
		{"init dim", []Measure{{X: X}}, []float64{1}, &Settings{Init: &Measure{X: gaussian(rng, 3, 4, 0)}}, false, "initial support has dimension 4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.labeled {
				_, err = Labeled(tc.ms, tc.alpha, tc.s)
			} else {
				_, err = FreeSupport(tc.ms, tc.alpha, tc.s)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "barycenter: ") {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestAssignmentPathAgreesWithEMD: uniform equal-size measures go through
// the assignment solver; explicit uniform weights force the network
// simplex. Both are exact, so on data without ties the iterations coincide.
func TestAssignmentPathAgreesWithEMD(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	n := 40
	var fast, slow []Measure
	for k := 0; k < 3; k++ {
		X := gaussian(rng, n, 4, float64(k))
		Y := oneHot(rng, n, 3)
		fast = append(fast, Measure{X: X, Y: Y})
		w := make([]float64, n)
		for i := range w {
			w[i] = 1 / float64(n)
		}
		slow = append(slow, Measure{X: X, Y: Y, W: w})
	}
	alpha := []float64{0.5, 0.3, 0.2}
	for _, init := range []bool{false, true} {
		s1 := &Settings{Support: n, InitSamples: init, Rand: rand.New(rand.NewPCG(1, 1))}
		s2 := &Settings{Support: n, InitSamples: init, Rand: rand.New(rand.NewPCG(1, 1))}
		a, err := Labeled(fast, alpha, s1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Labeled(slow, alpha, s2)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.History) != len(b.History) {
			t.Fatalf("InitSamples=%v: histories %v vs %v", init, a.History, b.History)
		}
		for i := range a.History {
			if math.Abs(a.History[i]-b.History[i]) > 1e-12*math.Max(1, b.History[i]) {
				t.Fatalf("InitSamples=%v: iteration %d: %g vs %g", init, i, a.History[i], b.History[i])
			}
		}
		if !mat.EqualApprox(a.X, b.X, 1e-12) {
			t.Errorf("InitSamples=%v: supports differ", init)
		}
	}
}

func TestInitSamplesDrawsFromSupports(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	ms := []Measure{{X: gaussian(rng, 10, 2, 0), Y: oneHot(rng, 10, 2)}, {X: gaussian(rng, 15, 2, 5), Y: oneHot(rng, 15, 2)}}
	r, err := Labeled(ms, []float64{1, 0}, &Settings{Support: 10, InitSamples: true, MaxIter: 1})
	if err != nil {
		t.Fatal(err)
	}
	// With α = e_1 one iteration maps the support onto measure 0 exactly.
	sameUpToPermutation(t, r.X, r.Y, ms[0].X, ms[0].Y, 1e-12)
}

// TestOverflowIsAnError: features whose squares overflow give an error, not
// a panic, on every path.
func TestOverflowIsAnError(t *testing.T) {
	X := mat.NewDense(4, 1, []float64{1e200, -1e200, 3e200, 0})
	ms := []Measure{{X: X, Y: oneHot(nil, 4, 2)}, {X: X, Y: oneHot(nil, 4, 2)}}
	for _, s := range []*Settings{{InitSamples: true}, {}} {
		if _, err := Labeled(ms, []float64{0.5, 0.5}, s); err == nil {
			t.Errorf("InitSamples=%v: no error", s.InitSamples)
		}
	}
}

// TestPermPathWithoutGram: when the stack's Gram matrix would exceed the
// memory bound, uniform equal-size measures still take the permutation
// path, computing inner products directly; the result equals the Gram
// path's, and the general path's, up to rounding.
func TestPermPathWithoutGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n, K = 30, 3 // Stack.Prepare prefers the Gram matrix for K = 3
	var ms []Measure
	for k := 0; k < K; k++ {
		ms = append(ms, Measure{X: gaussian(rng, n, 5, float64(k)), Y: oneHot(rng, n, 4)})
	}
	alpha := []float64{0.2, 0.5, 0.3}
	saved := maxPerm
	defer func() { maxPerm = saved }()
	var results []*Result
	for _, bound := range []int{saved, n * K * n, n*K*n - 1} { // Gram, direct, general path
		maxPerm = bound
		if want := bound >= K*n*K*n; permGram(K, n) != want {
			t.Fatalf("bound %d: permGram = %v, want %v", bound, !want, want)
		}
		if want := bound >= n*K*n; permFits(ms, n) != want {
			t.Fatalf("bound %d: permFits = %v, want %v", bound, !want, want)
		}
		r, err := Labeled(ms, alpha, &Settings{Support: n, InitSamples: true, Rand: rand.New(rand.NewPCG(1, 1))})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	for i, r := range results[1:] {
		a := results[0]
		if len(a.History) != len(r.History) {
			t.Fatalf("path %d: histories %v vs %v", i+1, r.History, a.History)
		}
		for j := range a.History {
			if math.Abs(a.History[j]-r.History[j]) > 1e-12*math.Max(1, a.History[j]) {
				t.Fatalf("path %d, iteration %d: %g vs %g", i+1, j, r.History[j], a.History[j])
			}
		}
		if !mat.EqualApprox(a.X, r.X, 1e-12) || !mat.EqualApprox(a.Y, r.Y, 1e-12) {
			t.Errorf("path %d: supports differ", i+1)
		}
	}
}
