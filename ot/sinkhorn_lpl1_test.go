package ot

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// lpl1Objective returns the objective of SinkhornLpl1,
// ⟨C, π⟩ + regE·Σ π(log π − 1) + regCl·Σ_j Σ_c (Σ_{i∈I_c} π_ij + ε)^p,
// for a dense plan π and an absolute ε.
func lpl1Objective(C, P *mat.Dense, labels []int, regE, regCl, p, eps float64) float64 {
	n, m := P.Dims()
	mass := make(map[[2]int]float64)
	var obj float64
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			v := P.At(i, j)
			obj += v * C.At(i, j)
			if v > 0 {
				obj += regE * v * (math.Log(v) - 1)
			}
			mass[[2]int{labels[i], j}] += v
		}
	}
	for _, s := range mass {
		obj += regCl * math.Pow(s+eps, p)
	}
	return obj
}

// lpl1Problem returns a labeled source of three Gaussian classes in the
// plane (perClass points each, standard deviation 0.4, centres sep apart
// on a line), a target drawn from the same classes translated by
// (shift, shift) with m points (classes in turn), and their squared
// Euclidean cost normalised to a maximum of 1.
func lpl1Problem(seed uint64, perClass, m int, sep, shift float64) (*mat.Dense, []int) {
	rng := skRand(seed)
	n := 3 * perClass
	X := mat.NewDense(n, 2, nil)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		c := i / perClass
		labels[i] = 10 + c // any non-negative values
		X.Set(i, 0, sep*float64(c)+0.4*rng.NormFloat64())
		X.Set(i, 1, 0.4*rng.NormFloat64())
	}
	Y := mat.NewDense(m, 2, nil)
	for j := 0; j < m; j++ {
		c := j % 3
		Y.Set(j, 0, sep*float64(c)+shift+0.4*rng.NormFloat64())
		Y.Set(j, 1, shift+0.4*rng.NormFloat64())
	}
	var C mat.Dense
	if err := SqEuclidean(&C, X, Y); err != nil {
		panic(err)
	}
	C.Scale(1/mat.Max(&C), &C)
	return &C, labels
}

// purity returns the mean over target columns of the largest fraction of
// the column's mass that one class provides.
func purity(P *mat.Dense, labels []int) float64 {
	n, m := P.Dims()
	var tot float64
	for j := 0; j < m; j++ {
		mass := map[int]float64{}
		var s float64
		for i := 0; i < n; i++ {
			mass[labels[i]] += P.At(i, j)
			s += P.At(i, j)
		}
		var best float64
		for _, v := range mass {
			best = math.Max(best, v)
		}
		tot += best / s
	}
	return tot / float64(m)
}

// TestSinkhornLpl1Marginals checks the marginals, MarginalError and Cost
// of converged solves, with uniform and random weights (some zero).
func TestSinkhornLpl1Marginals(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sep         float64
		regE, regCl float64
		weighted    bool
	}{
		{"uniform weights", 1.5, 0.05, 0.01, false},
		{"random weights", 1.5, 0.05, 0.01, true},
		{"strong class term", 3, 0.05, 0.5, false},
		{"no class term", 1.5, 0.05, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Balanced classes (60 = 3·20 target points): with a strong
			// class term the majorised problems are then well posed (see
			// TestSinkhornLpl1Unbalanced).
			C, labels := lpl1Problem(4, 25, 60, tc.sep, 0.5)
			n, m := C.Dims()
			var a, b []float64
			if tc.weighted {
				a = skWeights(skRand(2), n)
				b = skWeights(skRand(3), m, 4, 9)
			}
			res, err := SinkhornLpl1(a, b, C, labels, tc.regE, tc.regCl, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Converged {
				t.Errorf("last inner solve did not converge (%d iterations)", res.Iterations)
			}
			e := marginalViolation(res.Plan, a, b)
			if e > 1e-8 {
				t.Errorf("marginal violation %g", e)
			}
			if math.Abs(res.MarginalError-e) > 1e-12 {
				t.Errorf("MarginalError %g, recomputed %g", res.MarginalError, e)
			}
			if want := mat.Sum(elemMul(C, res.Plan)); math.Abs(res.Cost-want) > 1e-12 {
				t.Errorf("Cost %g, want ⟨C, π⟩ = %g", res.Cost, want)
			}
			for j := 0; j < m; j++ {
				if b != nil && b[j] == 0 && mat.Sum(res.Plan.ColView(j)) != 0 {
					t.Errorf("column %d of zero weight has mass", j)
				}
			}
		})
	}
}

func elemMul(A, B *mat.Dense) *mat.Dense {
	var D mat.Dense
	D.MulElem(A, B)
	return &D
}

// TestSinkhornLpl1Monotone checks the majorisation-minimisation property:
// the objective of the k-th iterate never exceeds that of the previous one.
// Running with OuterIter = k returns the k-th iterate, since the iterations
// are deterministic. The problems are chosen so that every inner solve
// converges to the default tolerance.
func TestSinkhornLpl1Monotone(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sep         float64
		regE, regCl float64
		p           float64
	}{
		{"weak class term", 1.5, 0.1, 0.01, 0},
		{"small regE", 1.5, 0.05, 0.01, 0},
		{"strong class term", 3, 0.05, 0.5, 0},
		{"p=0.3", 1.5, 0.1, 0.005, 0.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			C, labels := lpl1Problem(4, 25, 60, tc.sep, 0.5)
			p := tc.p
			if p == 0 {
				p = DefaultLpl1P
			}
			var objs []float64
			for k := 1; k <= DefaultLpl1OuterIter; k++ {
				res, err := SinkhornLpl1(nil, nil, C, labels, tc.regE, tc.regCl, &SinkhornLpl1Settings{P: tc.p, OuterIter: k})
				if err != nil {
					t.Fatal(err)
				}
				if !res.Converged {
					t.Fatalf("iteration %d: inner solve did not converge", k)
				}
				objs = append(objs, lpl1Objective(C, res.Plan, labels, tc.regE, tc.regCl, p, DefaultLpl1Eps))
			}
			t.Logf("objectives %.8g", objs)
			for k := 1; k < len(objs); k++ {
				if objs[k] > objs[k-1]+1e-9 {
					t.Errorf("iteration %d: objective %.15g > previous %.15g", k+1, objs[k], objs[k-1])
				}
			}
			if !(objs[len(objs)-1] < objs[0]-1e-4) {
				t.Errorf("objective did not decrease: %.15g → %.15g", objs[0], objs[len(objs)-1])
			}
		})
	}
}

// When the class proportions that a strong class term favours differ from
// those of the source, the majorised problems are nearly degenerate and
// Sinkhorn converges slowly. A capped inner solve is not an error: the
// plan is finite, its column sums are exact and Converged is false.
func TestSinkhornLpl1Unbalanced(t *testing.T) {
	C, labels := lpl1Problem(1, 30, 70, 3, 0.5) // 70 target points: 24, 23, 23 per class
	res, err := SinkhornLpl1(nil, nil, C, labels, 0.05, 0.5, &SinkhornLpl1Settings{Sinkhorn: &SinkhornSettings{MaxIter: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Converged {
		t.Error("converged; the test expects a capped inner solve")
	}
	n, m := res.Plan.Dims()
	for j := 0; j < m; j++ {
		if d := math.Abs(mat.Sum(res.Plan.ColView(j)) - 1/float64(m)); d > 1e-15 {
			t.Errorf("column %d: sum off by %g", j, d)
		}
	}
	for i := 0; i < n; i++ {
		for _, v := range res.Plan.RawRowView(i) {
			if !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("row %d: entry %g", i, v)
			}
		}
	}
	t.Logf("marginal error %.3g after %d iterations", res.MarginalError, res.Iterations)
}

// With regCl = 0 the problem is plain entropic OT: the plan is Sinkhorn's,
// bit for bit.
func TestSinkhornLpl1NoClassTerm(t *testing.T) {
	C, labels := lpl1Problem(5, 20, 50, 1.5, 0.5)
	n, m := C.Dims()
	a, b := skWeights(skRand(6), n), skWeights(skRand(7), m)
	want, err := Sinkhorn(a, b, C, 0.03, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SinkhornLpl1(a, b, C, labels, 0.03, 0, &SinkhornLpl1Settings{OuterIter: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got.Plan, want.Plan) {
		t.Errorf("plans differ: max |Δ| = %g", maxAbsDiff(got.Plan, want.Plan))
	}
	if got.Cost != want.Cost || got.Iterations != want.Iterations || got.Converged != want.Converged {
		t.Errorf("got cost %v, %d iterations, converged %v; want %v, %d, %v",
			got.Cost, got.Iterations, got.Converged, want.Cost, want.Iterations, want.Converged)
	}
}

func maxAbsDiff(A, B *mat.Dense) float64 {
	var D mat.Dense
	D.Sub(A, B)
	return math.Max(mat.Max(&D), -mat.Min(&D))
}

// A strong class term makes every target point receive its mass
// predominantly from one class, where plain entropic OT mixes them.
func TestSinkhornLpl1ClassPurity(t *testing.T) {
	C, labels := lpl1Problem(8, 40, 90, 1.5, 0.5)
	plain, err := SinkhornLpl1(nil, nil, C, labels, 0.05, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := SinkhornLpl1(nil, nil, C, labels, 0.05, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	p0, p1 := purity(plain.Plan, labels), purity(reg.Plan, labels)
	t.Logf("mean class purity of target columns: plain %.3f, regularised %.3f", p0, p1)
	if p1 < 0.95 || p1 <= p0 {
		t.Errorf("purity plain %.3f, regularised %.3f; want regularised ≥ 0.95 and above plain", p0, p1)
	}
	// Every single column too.
	n, m := reg.Plan.Dims()
	for j := 0; j < m; j++ {
		col := mat.NewDense(n, 1, mat.Col(nil, j, reg.Plan))
		if pj := purity(col, labels); pj < 0.8 {
			t.Errorf("column %d: purity %.3f", j, pj)
		}
	}
}

// Results do not depend on the number of goroutines, also on problems
// large enough to be split.
func TestSinkhornLpl1Workers(t *testing.T) {
	C, labels := lpl1Problem(9, 100, 300, 1.5, 0.5) // 300×300 ≥ 2¹⁶ entries
	var ref *SinkhornResult
	for _, w := range []int{1, 2, 5} {
		res, err := SinkhornLpl1(nil, nil, C, labels, 0.02, 0.5, &SinkhornLpl1Settings{OuterIter: 4, Sinkhorn: &SinkhornSettings{Workers: w}})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = res
			continue
		}
		if !mat.Equal(res.Plan, ref.Plan) || res.Cost != ref.Cost || res.Iterations != ref.Iterations {
			t.Errorf("workers %d: result differs (max |Δ| = %g)", w, maxAbsDiff(res.Plan, ref.Plan))
		}
	}
}

func TestSinkhornLpl1Errors(t *testing.T) {
	C, labels := lpl1Problem(10, 3, 5, 1.5, 0.5)
	n, m := C.Dims()
	bad := append([]int(nil), labels...)
	bad[2] = -1
	nanC := mat.DenseCopyOf(C)
	nanC.Set(1, 1, math.NaN())
	cases := []struct {
		name        string
		a, b        []float64
		C           mat.Matrix
		labels      []int
		regE, regCl float64
		s           *SinkhornLpl1Settings
		want        string
	}{
		{"regE zero", nil, nil, C, labels, 0, 1, nil, "regE must be positive"},
		{"regE NaN", nil, nil, C, labels, math.NaN(), 1, nil, "regE must be positive"},
		{"regE Inf", nil, nil, C, labels, math.Inf(1), 1, nil, "regE must be positive"},
		{"regCl negative", nil, nil, C, labels, 0.1, -1, nil, "regCl must be non-negative"},
		{"regCl NaN", nil, nil, C, labels, 0.1, math.NaN(), nil, "regCl must be non-negative"},
		{"regCl Inf", nil, nil, C, labels, 0.1, math.Inf(1), nil, "regCl must be non-negative"},
		{"P above 1", nil, nil, C, labels, 0.1, 1, &SinkhornLpl1Settings{P: 1.5}, "P must lie in (0, 1]"},
		{"P negative", nil, nil, C, labels, 0.1, 1, &SinkhornLpl1Settings{P: -0.5}, "P must lie in (0, 1]"},
		{"Eps negative", nil, nil, C, labels, 0.1, 1, &SinkhornLpl1Settings{Eps: -1}, "Eps must be non-negative"},
		{"OuterIter negative", nil, nil, C, labels, 0.1, 1, &SinkhornLpl1Settings{OuterIter: -1}, "OuterIter must be non-negative"},
		{"inner Tol", nil, nil, C, labels, 0.1, 1, &SinkhornLpl1Settings{Sinkhorn: &SinkhornSettings{Tol: -1}}, "Tol must be non-negative"},
		{"inner Workers", nil, nil, C, labels, 0.1, 1, &SinkhornLpl1Settings{Sinkhorn: &SinkhornSettings{Workers: -1}}, "Workers must be non-negative"},
		{"nil C", nil, nil, nil, labels, 0.1, 1, nil, "cost matrix is nil"},
		{"NaN C", nil, nil, nanC, labels, 0.1, 1, nil, "is NaN"},
		{"short labels", nil, nil, C, labels[1:], 0.1, 1, nil, "labels for a cost matrix"},
		{"negative label", nil, nil, C, bad, 0.1, 1, nil, "is negative"},
		{"a length", Uniform(n + 1), nil, C, labels, 0.1, 1, nil, "len(a)"},
		{"sums differ", nil, make([]float64, m), C, labels, 0.1, 1, nil, "sum to zero"},
		{"overflow", nil, nil, C, labels, 1e-320, 1, nil, "overflow"},
		{"regE below precision", nil, nil, C, labels, 1e-15, 1, nil, "exponents C/regE reach"},
		{"tiny mass", scaledUniform(n, 1e-300), scaledUniform(m, 1e-300), C, labels, 0.1, 1, nil, "weights sum to"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := SinkhornLpl1(tc.a, tc.b, tc.C, tc.labels, tc.regE, tc.regCl, tc.s)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "ot: ") {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if res != nil {
				t.Error("result returned with an error")
			}
		})
	}
}

// scaledUniform returns n weights summing to mass.
func scaledUniform(n int, mass float64) []float64 {
	w := Uniform(n)
	for i := range w {
		w[i] *= mass
	}
	return w
}
