package ot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// skRand returns a deterministic generator for the Sinkhorn tests.
func skRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// skPoints returns an n×d matrix of standard Gaussian points shifted by off.
func skPoints(rng *rand.Rand, n, d int, off float64) *mat.Dense {
	X := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			X.Set(i, k, rng.NormFloat64()+off)
		}
	}
	return X
}

// skCost returns a squared Euclidean cost between random point clouds,
// normalised so that its maximum is 1.
func skCost(rng *rand.Rand, n, m, d int) *mat.Dense {
	var C mat.Dense
	if err := SqEuclidean(&C, skPoints(rng, n, d, 0), skPoints(rng, m, d, 0.5)); err != nil {
		panic(err)
	}
	C.Scale(1/mat.Max(&C), &C)
	return &C
}

// skWeights returns n positive random weights summing to 1, with the
// entries listed in zero set to 0.
func skWeights(rng *rand.Rand, n int, zero ...int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 0.2 + rng.Float64()
	}
	for _, i := range zero {
		w[i] = 0
	}
	var s float64
	for _, v := range w {
		s += v
	}
	for i := range w {
		w[i] /= s
	}
	return w
}

// marginalViolation returns ‖π1−a‖₁ + ‖πᵀ1−b‖₁ (nil a or b meaning uniform).
func marginalViolation(P *mat.Dense, a, b []float64) float64 {
	n, m := P.Dims()
	if a == nil {
		a = Uniform(n)
	}
	if b == nil {
		b = Uniform(m)
	}
	var e float64
	for i := 0; i < n; i++ {
		e += math.Abs(mat.Sum(P.RowView(i)) - a[i])
	}
	for j := 0; j < m; j++ {
		e += math.Abs(mat.Sum(P.ColView(j)) - b[j])
	}
	return e
}

func TestSinkhornMarginalsAndStructure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n, m  int
		reg   float64
		zeroA []int
		zeroB []int
		unifA bool
		unifB bool
		shift float64 // added to C
	}{
		{name: "uniform square", n: 20, m: 20, reg: 0.05, unifA: true, unifB: true},
		{name: "uniform n<m", n: 13, m: 31, reg: 0.05, unifA: true, unifB: true},
		{name: "weighted n>m", n: 40, m: 17, reg: 0.02},
		{name: "weighted zero a", n: 25, m: 30, reg: 0.05, zeroA: []int{3}},
		{name: "weighted zero b", n: 25, m: 30, reg: 0.05, zeroB: []int{0, 29}},
		{name: "weighted zeros both", n: 30, m: 22, reg: 0.03, zeroA: []int{0, 7}, zeroB: []int{21}},
		{name: "single row", n: 1, m: 9, reg: 0.1},
		{name: "single column", n: 9, m: 1, reg: 0.1},
		{name: "negative costs", n: 12, m: 15, reg: 0.05, shift: -3},
		{name: "large reg", n: 10, m: 8, reg: 100},
		{name: "large parallel", n: 300, m: 260, reg: 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := skRand(uint64(tc.n*1000 + tc.m))
			C := skCost(rng, tc.n, tc.m, 3)
			C.Apply(func(_, _ int, v float64) float64 { return v + tc.shift }, C)
			var a, b []float64
			if !tc.unifA {
				a = skWeights(rng, tc.n, tc.zeroA...)
			}
			if !tc.unifB {
				b = skWeights(rng, tc.m, tc.zeroB...)
			}
			const tol = 1e-9
			res, err := Sinkhorn(a, b, C, tc.reg, &SinkhornSettings{Tol: tol, MaxIter: 100000})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Converged {
				t.Fatalf("not converged after %d iterations, error %g", res.Iterations, res.MarginalError)
			}
			if r, c := res.Plan.Dims(); r != tc.n || c != tc.m {
				t.Fatalf("plan is %d×%d", r, c)
			}
			if e := marginalViolation(res.Plan, a, b); e >= tol {
				t.Errorf("marginal violation %g ≥ Tol", e)
			} else if math.Abs(e-res.MarginalError) > 1e-14 {
				t.Errorf("MarginalError = %g, recomputed %g", res.MarginalError, e)
			}
			var cost float64
			for i := 0; i < tc.n; i++ {
				for j := 0; j < tc.m; j++ {
					p := res.Plan.At(i, j)
					if !(p >= 0) || math.IsInf(p, 0) {
						t.Fatalf("plan[%d,%d] = %g", i, j, p)
					}
					cost += p * C.At(i, j)
					want := math.Exp((res.F[i] + res.G[j] - C.At(i, j)) / tc.reg)
					if math.Abs(p-want) > 1e-12*want {
						t.Fatalf("plan[%d,%d] = %g, exp((F+G−C)/reg) = %g", i, j, p, want)
					}
				}
			}
			if math.Abs(cost-res.Cost) > 1e-13*(1+math.Abs(tc.shift)) {
				t.Errorf("Cost = %.17g, ⟨C,π⟩ = %.17g", res.Cost, cost)
			}
			for i, f := range res.F {
				if zero := a != nil && a[i] == 0; zero != math.IsInf(f, -1) || math.IsNaN(f) || math.IsInf(f, 1) {
					t.Errorf("F[%d] = %g with a weight zero = %t", i, f, zero)
				}
				if a != nil && a[i] == 0 && mat.Sum(res.Plan.RowView(i)) != 0 {
					t.Errorf("row %d of zero weight is not zero", i)
				}
			}
			for j, g := range res.G {
				if zero := b != nil && b[j] == 0; zero != math.IsInf(g, -1) || math.IsNaN(g) || math.IsInf(g, 1) {
					t.Errorf("G[%d] = %g with b weight zero = %t", j, g, zero)
				}
				if b != nil && b[j] == 0 && mat.Sum(res.Plan.ColView(j)) != 0 {
					t.Errorf("column %d of zero weight is not zero", j)
				}
			}
		})
	}
}

// plainSinkhorn is an independent reference: the classical scaling
// iteration u = a/(Kv), v = b/(Kᵀu) with K = exp(−C/reg), run for iters
// iterations. It returns diag(u) K diag(v).
func plainSinkhorn(a, b []float64, C *mat.Dense, reg float64, iters int) *mat.Dense {
	n, m := C.Dims()
	K := mat.NewDense(n, m, nil)
	K.Apply(func(_, _ int, c float64) float64 { return math.Exp(-c / reg) }, C)
	u, v := make([]float64, n), make([]float64, m)
	for j := range v {
		v[j] = 1
	}
	for it := 0; it < iters; it++ {
		for i := range u {
			var s float64
			for j := range v {
				s += K.At(i, j) * v[j]
			}
			u[i] = a[i] / s
		}
		for j := range v {
			var s float64
			for i := range u {
				s += K.At(i, j) * u[i]
			}
			v[j] = b[j] / s
		}
	}
	P := mat.NewDense(n, m, nil)
	P.Apply(func(i, j int, k float64) float64 { return u[i] * k * v[j] }, K)
	return P
}

func TestSinkhornMatchesPlainSinkhorn(t *testing.T) {
	for _, tc := range []struct {
		n, m int
		reg  float64
	}{{8, 8, 0.1}, {12, 7, 0.2}, {5, 16, 0.05}} {
		rng := skRand(uint64(7*tc.n + tc.m))
		C := skCost(rng, tc.n, tc.m, 2)
		a, b := skWeights(rng, tc.n), skWeights(rng, tc.m)
		res, err := Sinkhorn(a, b, C, tc.reg, &SinkhornSettings{Tol: 1e-14, MaxIter: 100000})
		if err != nil {
			t.Fatal(err)
		}
		ref := plainSinkhorn(a, b, C, tc.reg, 20000)
		var d mat.Dense
		d.Sub(res.Plan, ref)
		if e := mat.Norm(&d, math.Inf(1)); e > 1e-12 {
			t.Errorf("%d×%d reg %g: max |π − π_ref| = %g", tc.n, tc.m, tc.reg, e)
		}
		var prod mat.Dense
		prod.MulElem(ref, C)
		refCost := mat.Sum(&prod)
		if math.Abs(res.Cost-refCost) > 1e-12*refCost {
			t.Errorf("%d×%d reg %g: cost %.15g, reference %.15g", tc.n, tc.m, tc.reg, res.Cost, refCost)
		}
	}
}

// bruteForceOT returns the exact OT cost between uniform measures of n
// points each, minimising over all permutations (Birkhoff's theorem).
func bruteForceOT(C *mat.Dense) float64 {
	n, _ := C.Dims()
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	best := math.Inf(1)
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			var s float64
			for i, j := range perm {
				s += C.At(i, j)
			}
			best = math.Min(best, s/float64(n))
			return
		}
		for i := k; i < n; i++ {
			perm[k], perm[i] = perm[i], perm[k]
			rec(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	rec(0)
	return best
}

func TestSinkhornTendsToExactCost(t *testing.T) {
	for _, n := range []int{4, 6, 7} {
		rng := skRand(uint64(100 + n))
		var C mat.Dense
		if err := SqEuclidean(&C, skPoints(rng, n, 2, 0), skPoints(rng, n, 2, 1)); err != nil {
			t.Fatal(err)
		}
		maxC := mat.Max(&C)
		exact := bruteForceOT(&C)
		prev, prevErr := math.Inf(1), 0.0
		for _, rel := range []float64{1e-1, 1e-2, 1e-3} {
			reg := rel * maxC
			// At small reg the marginal error decays only like 1/k
			// (POT behaves alike), so convergence is not required: the
			// bounds below allow for the remaining violation.
			res, err := Sinkhorn(nil, nil, &C, reg, &SinkhornSettings{MaxIter: 100000})
			if err != nil {
				t.Fatal(err)
			}
			if res.MarginalError > 1e-4 {
				t.Fatalf("n=%d reg=%g: marginal error %g", n, reg, res.MarginalError)
			}
			// 0 ≤ ⟨C,π_reg⟩ − OT ≤ reg·log(n²), up to maxC times the
			// marginal violation.
			gap := res.Cost - exact
			slack := maxC*res.MarginalError + 1e-12*maxC
			if gap < -slack || gap > reg*math.Log(float64(n*n))+slack {
				t.Errorf("n=%d reg=%g·maxC: cost %.12g, exact %.12g", n, rel, res.Cost, exact)
			}
			if res.Cost > prev+slack+maxC*prevErr {
				t.Errorf("n=%d: cost increased to %.12g at reg=%g·maxC from %.12g", n, res.Cost, rel, prev)
			}
			prev, prevErr = res.Cost, res.MarginalError
			t.Logf("n=%d reg=%g·maxC: (cost − exact)/maxC = %.3g (%d iterations, marginal error %.2g)", n, rel, gap/maxC, res.Iterations, res.MarginalError)
		}
		if gap := prev - exact; gap > 1e-3*maxC+maxC*prevErr {
			t.Errorf("n=%d: cost at reg=1e-3·maxC is %.3g·maxC above the exact cost", n, gap/maxC)
		}
	}
}

func TestSinkhornNotConverged(t *testing.T) {
	rng := skRand(3)
	C := skCost(rng, 30, 20, 2)
	res, err := Sinkhorn(skWeights(rng, 30), nil, C, 1e-3, &SinkhornSettings{MaxIter: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Converged || res.Iterations != 1 {
		t.Errorf("Converged = %t after %d iterations, want false after 1", res.Converged, res.Iterations)
	}
	if !(res.MarginalError >= DefaultSinkhornTol) {
		t.Errorf("MarginalError = %g", res.MarginalError)
	}
	for _, v := range res.Plan.RawMatrix().Data {
		if !(v >= 0) || math.IsInf(v, 0) {
			t.Fatalf("plan entry %g", v)
		}
	}
}

func TestSinkhornSmallRegStable(t *testing.T) {
	for _, scale := range []float64{1, 1e-6, 1e6} {
		rng := skRand(11)
		C := skCost(rng, 60, 45, 4)
		C.Scale(scale, C)
		a, b := skWeights(rng, 60, 5), skWeights(rng, 45)
		reg := 1e-4 * scale
		res, err := Sinkhorn(a, b, C, reg, &SinkhornSettings{MaxIter: 5000})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range res.Plan.RawMatrix().Data {
			if !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("scale %g: plan entry %d = %g", scale, k, v)
			}
		}
		for _, v := range append(append([]float64{}, res.F...), res.G...) {
			if math.IsNaN(v) || math.IsInf(v, 1) {
				t.Fatalf("scale %g: potential %g", scale, v)
			}
		}
		if math.IsNaN(res.Cost) || math.IsNaN(res.MarginalError) {
			t.Fatalf("scale %g: cost %g, error %g", scale, res.Cost, res.MarginalError)
		}
		t.Logf("scale %g, reg=1e-4·maxC: converged %t after %d iterations, error %.3g", scale, res.Converged, res.Iterations, res.MarginalError)
	}
}

func TestSinkhornUnequalSums(t *testing.T) {
	rng := skRand(5)
	C := skCost(rng, 10, 12, 2)
	a := skWeights(rng, 10)
	b := skWeights(rng, 12)
	for j := range b {
		b[j] *= 1 + 5e-10
	}
	res, err := Sinkhorn(a, b, C, 0.05, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged {
		t.Fatal("not converged")
	}
	var sb float64
	for _, v := range b {
		sb += v
	}
	bt := make([]float64, len(b))
	for j := range b {
		bt[j] = b[j] / sb
	}
	if e := marginalViolation(res.Plan, a, bt); e >= DefaultSinkhornTol {
		t.Errorf("violation against rescaled b: %g", e)
	}
}

func TestSinkhornCostMatrixKinds(t *testing.T) {
	rng := skRand(9)
	C := skCost(rng, 15, 11, 2)
	want, err := Sinkhorn(nil, nil, C, 0.05, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A non-contiguous view and a transpose give the same result.
	big := mat.NewDense(20, 20, nil)
	view := big.Slice(2, 17, 3, 14).(*mat.Dense)
	view.Copy(C)
	var Ct mat.Dense
	Ct.CloneFrom(C.T())
	for name, M := range map[string]mat.Matrix{"view": view, "transpose": Ct.T()} {
		got, err := Sinkhorn(nil, nil, M, 0.05, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(got.Plan, want.Plan) || got.Cost != want.Cost {
			t.Errorf("%s: result differs from the dense matrix", name)
		}
	}
}

func TestSinkhornErrors(t *testing.T) {
	C := mat.NewDense(2, 3, []float64{0, 1, 2, 3, 4, 5})
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		a, b []float64
		C    mat.Matrix
		reg  float64
		s    *SinkhornSettings
		want string
	}{
		{"zero reg", nil, nil, C, 0, nil, "reg must be positive and finite, got 0"},
		{"negative reg", nil, nil, C, -1, nil, "reg must be positive and finite, got -1"},
		{"NaN reg", nil, nil, C, nan, nil, "reg must be positive and finite, got NaN"},
		{"Inf reg", nil, nil, C, math.Inf(1), nil, "reg must be positive and finite, got +Inf"},
		{"tiny reg", nil, nil, C, 1e-310, nil, "C/reg overflows"},
		{"reg below precision", nil, nil, mat.NewDense(2, 2, []float64{0, .3, .7, .1}), 1e-17, nil, "exponents (F+G−C)/reg reach"},
		{"spread below precision", nil, nil, mat.NewDense(2, 2, []float64{0, 1e13, 1e13, 0}), 1, nil, "spread over 1e+13"},
		{"tiny mass", []float64{1e-320, 1e-320}, []float64{1e-320, 1e-320, 0}, C, 0.1, nil, "weights sum to"},
		{"huge mass", []float64{1e200, 1e200}, []float64{1e200, 1e200, 0}, C, 0.1, nil, "weights sum to 2e+200"},
		{"a length", []float64{1}, nil, C, 1, nil, "shape mismatch: len(a) = 1"},
		{"b length", nil, []float64{0.5, 0.5}, C, 1, nil, "shape mismatch: len(b) = 2"},
		{"sum mismatch", []float64{0.5, 0.5}, []float64{0.2, 0.2, 0.2}, C, 1, nil, "weight sums differ"},
		{"negative weight", []float64{1.5, -0.5}, nil, C, 1, nil, "entry 1 is negative"},
		{"NaN weight", nil, []float64{nan, 0.5, 0.5}, C, 1, nil, "entry 0 is NaN"},
		{"NaN cost", nil, nil, mat.NewDense(1, 2, []float64{0, nan}), 1, nil, "entry (0, 1) is NaN"},
		{"Inf cost", nil, nil, mat.NewDense(1, 2, []float64{math.Inf(1), 0}), 1, nil, "entry (0, 0) is infinite"},
		{"nil cost", nil, nil, nil, 1, nil, "cost matrix is nil"},
		{"negative Tol", nil, nil, C, 1, &SinkhornSettings{Tol: -1}, "Tol must be non-negative"},
		{"NaN Tol", nil, nil, C, 1, &SinkhornSettings{Tol: nan}, "Tol must be non-negative"},
		{"infinite Tol", nil, nil, C, 1, &SinkhornSettings{Tol: math.Inf(1)}, "Tol must be non-negative and finite"},
		{"negative MaxIter", nil, nil, C, 1, &SinkhornSettings{MaxIter: -1}, "MaxIter must be non-negative"},
		{"negative Workers", nil, nil, C, 1, &SinkhornSettings{Workers: -2}, "Workers must be non-negative"},
	} {
		res, err := Sinkhorn(tc.a, tc.b, tc.C, tc.reg, tc.s)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if res != nil {
			t.Errorf("%s: non-nil result with error", tc.name)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "ot: ") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: error %q, want it to contain %q", tc.name, msg, tc.want)
		}
	}
}

// TestSinkhornLargeOffsets: row and column offsets far larger than the
// spread of the costs leave the plan unchanged, as they do mathematically.
// In the second case C/reg reaches 2⁵⁸/32: without the shifts of Sinkhorn
// the exponents would be rounded to multiples of about 2.
func TestSinkhornLargeOffsets(t *testing.T) {
	for _, tc := range []struct {
		name       string
		unit, reg  float64 // costs are unit·{0, …, 4}
		off        float64 // offsets are off·{−2, …, 2}
		potentials bool    // check Plan = exp((F + G − C)/reg)
	}{
		{"moderate", 0.75, 0.05, 1 << 20, true},
		// Multiples of 64, the spacing of float64 numbers below 2⁵⁸: C is
		// exact.
		{"huge", 64, 32, 1 << 55, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := skRand(23)
			n, m := 4, 5
			base := mat.NewDense(n, m, nil)
			for k := range base.RawMatrix().Data {
				base.RawMatrix().Data[k] = tc.unit * float64(rng.IntN(5))
			}
			rowOff := []float64{2 * tc.off, -tc.off, 0, tc.off}
			colOff := []float64{0, tc.off, -2 * tc.off, 0, tc.off / 2}
			C := mat.NewDense(n, m, nil)
			C.Apply(func(i, j int, v float64) float64 { return v + rowOff[i] + colOff[j] }, base)
			a := skWeights(rng, n)
			want, err := Sinkhorn(a, nil, base, tc.reg, &SinkhornSettings{Tol: 1e-13})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Sinkhorn(a, nil, C, tc.reg, &SinkhornSettings{Tol: 1e-13})
			if err != nil {
				t.Fatal(err)
			}
			if !got.Converged || got.MarginalError >= 1e-13 {
				t.Fatalf("converged %t, marginal error %g", got.Converged, got.MarginalError)
			}
			if !mat.EqualApprox(got.Plan, want.Plan, 1e-12) {
				t.Errorf("plan with offsets\n%v\nwithout\n%v", mat.Formatted(got.Plan), mat.Formatted(want.Plan))
			}
			var cost float64
			for i := 0; i < n; i++ {
				for j := 0; j < m; j++ {
					cost += got.Plan.At(i, j) * C.At(i, j)
					if !tc.potentials {
						continue
					}
					// The potentials are those of C as given.
					p := math.Exp((got.F[i] + got.G[j] - C.At(i, j)) / tc.reg)
					if math.Abs(p-got.Plan.At(i, j)) > 1e-8*p {
						t.Errorf("(%d, %d): plan %g, exp((F+G−C)/reg) = %g", i, j, got.Plan.At(i, j), p)
					}
				}
			}
			if got.Cost != cost {
				t.Errorf("Cost %g, ⟨C, π⟩ = %g", got.Cost, cost)
			}
		})
	}
}

func sameBits(x, y []float64) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}

func sameResult(r, s *SinkhornResult) bool {
	return sameBits(r.Plan.RawMatrix().Data, s.Plan.RawMatrix().Data) &&
		sameBits(r.F, s.F) && sameBits(r.G, s.G) &&
		sameBits([]float64{r.Cost, r.MarginalError}, []float64{s.Cost, s.MarginalError}) &&
		r.Iterations == s.Iterations && r.Converged == s.Converged
}

func TestSinkhornDeterministicAcrossWorkers(t *testing.T) {
	rng := skRand(17)
	const n, m = 300, 250 // n·m ≥ parallelMin
	C := skCost(rng, n, m, 5)
	a, b := skWeights(rng, n, 4), skWeights(rng, m, 100)
	solve := func(s *SinkhornSettings) *SinkhornResult {
		res, err := Sinkhorn(a, b, C, 0.01, s)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	ref := solve(nil)
	runtime.GOMAXPROCS(4)
	if got := solve(nil); !sameResult(ref, got) {
		t.Error("GOMAXPROCS 4 differs from GOMAXPROCS 1")
	}
	for _, w := range []int{2, 3, 7} {
		if got := solve(&SinkhornSettings{Workers: w}); !sameResult(ref, got) {
			t.Errorf("Workers = %d differs from 1", w)
		}
	}
}

func TestSinkhornNoPerIterationAllocation(t *testing.T) {
	rng := skRand(23)
	for _, sz := range [][2]int{{20, 30}, {300, 250}} {
		C := skCost(rng, sz[0], sz[1], 3)
		allocs := func(iters int) float64 {
			s := &SinkhornSettings{Tol: 1e-300, MaxIter: iters, Workers: 2}
			return testing.AllocsPerRun(3, func() {
				if _, err := Sinkhorn(nil, nil, C, 1e-3, s); err != nil {
					t.Fatal(err)
				}
			})
		}
		if a5, a50 := allocs(5), allocs(50); a50 > a5 {
			t.Errorf("%v: %v allocations for 5 iterations, %v for 50", sz, a5, a50)
		}
	}
}

func TestExpNeg(t *testing.T) {
	rng := skRand(29)
	ulp := func(x float64) float64 { return math.Nextafter(x, math.Inf(1)) - x }
	worst := 0.0
	for k := 0; k < 200000; k++ {
		var x float64
		switch k % 3 {
		case 0:
			x = -708 * rng.Float64()
		case 1:
			x = 300 * rng.Float64()
		default:
			x = 4 * (rng.Float64() - 0.5)
		}
		want := math.Exp(x)
		worst = math.Max(worst, math.Abs(expNeg(x)-want)/ulp(want))
	}
	if worst > 4 {
		t.Errorf("expNeg is %g ulp from math.Exp", worst)
	}
	for _, x := range []float64{0, -708, 1e-300, -1e-300, 700} {
		if got, want := expNeg(x), math.Exp(x); math.Abs(got-want) > 4*ulp(want) {
			t.Errorf("expNeg(%g) = %g, want %g", x, got, want)
		}
	}
	for _, x := range []float64{-708.5, -745, -1e300, math.Inf(-1)} {
		if got := expNeg(x); got != 0 {
			t.Errorf("expNeg(%g) = %g, want 0", x, got)
		}
	}
}

func TestLogSumExpShiftIndependent(t *testing.T) {
	rng := skRand(31)
	c := make([]float64, 50)
	pot := make([]float64, 50)
	for j := range c {
		c[j] = rng.Float64()
		pot[j] = 30 * rng.NormFloat64()
	}
	pot[7] = math.Inf(-1)
	const invReg = 1e3
	want := logSumExp(c, pot, invReg, 0)
	for _, shift := range []float64{want, want + 250, want - 250, 1e4, -1e4, 1e12} {
		if got := logSumExp(c, pot, invReg, shift); math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("shift %g: %.17g, want %.17g", shift, got, want)
		}
	}
}

// potSinkhorn runs POT's log-domain Sinkhorn with the system python3
// (Debian's python3-pot) and returns its plan, or skips the test.
func potSinkhorn(t *testing.T, a, b []float64, C *mat.Dense, reg float64) *mat.Dense {
	t.Helper()
	const script = `
import json, sys
import numpy as np
import ot
d = json.load(sys.stdin)
a, b, M = np.array(d["a"]), np.array(d["b"]), np.array(d["C"])
P = ot.sinkhorn(a, b, M, d["reg"], method="sinkhorn_log", numItermax=200000, stopThr=1e-13, warn=False)
json.dump({"plan": P.tolist(), "version": ot.__version__}, sys.stdout)
`
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import ot").Run(); err != nil {
		t.Skipf("POT not available (%s -c 'import ot': %v)", py, err)
	}
	n, m := C.Dims()
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = mat.Row(nil, i, C)
	}
	in, err := json.Marshal(map[string]any{"a": a, "b": b, "C": rows, "reg": reg})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("POT failed: %v\n%s", err, stderr.String())
	}
	var res struct {
		Plan    [][]float64
		Version string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	P := mat.NewDense(n, m, nil)
	for i, row := range res.Plan {
		P.SetRow(i, row)
	}
	t.Logf("POT %s", res.Version)
	return P
}

func TestSinkhornAgainstPOT(t *testing.T) {
	for _, tc := range []struct {
		n, m  int
		reg   float64
		unifA bool
	}{{30, 30, 0.1, true}, {40, 25, 0.05, false}, {25, 35, 0.01, false}} {
		rng := skRand(uint64(41 + tc.n))
		C := skCost(rng, tc.n, tc.m, 3)
		a, b := Uniform(tc.n), skWeights(rng, tc.m)
		if !tc.unifA {
			a = skWeights(rng, tc.n)
		}
		res, err := Sinkhorn(a, b, C, tc.reg, &SinkhornSettings{Tol: 1e-13, MaxIter: 200000})
		if err != nil {
			t.Fatal(err)
		}
		P := potSinkhorn(t, a, b, C, tc.reg)
		var potCost float64
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.m; j++ {
				potCost += P.At(i, j) * C.At(i, j)
			}
		}
		var d mat.Dense
		d.Sub(P, res.Plan)
		rel := math.Abs(res.Cost-potCost) / potCost
		t.Logf("%d×%d reg=%g: cost %.15g, POT %.15g, relative difference %.2g, max plan difference %.2g",
			tc.n, tc.m, tc.reg, res.Cost, potCost, rel, mat.Norm(&d, math.Inf(1)))
		if rel > 1e-6 {
			t.Errorf("%d×%d reg=%g: cost %.15g, POT %.15g", tc.n, tc.m, tc.reg, res.Cost, potCost)
		}
	}
}

func BenchmarkSinkhorn(b *testing.B) {
	for _, bc := range []struct {
		n   int
		reg float64
	}{{1000, 0.05}, {1000, 0.01}, {200, 0.05}} {
		rng := skRand(1)
		C := skCost(rng, bc.n, bc.n, 64)
		b.Run(fmt.Sprintf("n=%d,reg=%g", bc.n, bc.reg), func(b *testing.B) {
			var iters int
			for b.Loop() {
				res, err := Sinkhorn(nil, nil, C, bc.reg, &SinkhornSettings{MaxIter: 100000})
				if err != nil {
					b.Fatal(err)
				}
				iters = res.Iterations
			}
			b.ReportMetric(float64(iters), "iters")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(iters)/1e3, "µs/iter")
		})
	}
}
