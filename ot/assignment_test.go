package ot

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// checkAssignment verifies that r is a permutation with the stated cost and
// that its duals certify optimality.
func checkAssignment(t *testing.T, r *AssignmentResult, C *mat.Dense) {
	t.Helper()
	n, _ := C.Dims()
	seen := make([]bool, n)
	var cost, dual, scale float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			scale = math.Max(scale, math.Abs(C.At(i, j)))
		}
	}
	tol := 1e-9 * math.Max(scale, 1)
	for i, j := range r.Perm {
		if j < 0 || j >= n || seen[j] {
			t.Fatalf("Perm %v is not a permutation", r.Perm)
		}
		seen[j] = true
		cost += C.At(i, j)
		if s := C.At(i, j) - r.U[i] - r.V[j]; math.Abs(s) > tol {
			t.Fatalf("assigned (%d, %d) has reduced cost %g", i, j, s)
		}
	}
	for i := 0; i < n; i++ {
		dual += r.U[i] + r.V[i]
		for j := 0; j < n; j++ {
			if s := C.At(i, j) - r.U[i] - r.V[j]; s < -tol {
				t.Fatalf("dual infeasible at (%d, %d): %g", i, j, s)
			}
		}
	}
	if math.Abs(cost-r.Cost) > tol*float64(n) || math.Abs(dual-r.Cost) > tol*float64(n) {
		t.Fatalf("cost %g, reported %g, dual %g", cost, r.Cost, dual)
	}
}

func TestAssignmentBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var s AssignmentSolver
	var r AssignmentResult
	for n := 1; n <= 8; n++ {
		for trial := 0; trial < 20; trial++ {
			kind := []string{"random", "integer", "duplicate"}[trial%3]
			_, _, C := randomProblem(rng, n, n, kind)
			if err := s.Solve(&r, C); err != nil {
				t.Fatal(err)
			}
			checkAssignment(t, &r, C)
			if want := bruteAssignment(C) * float64(n); math.Abs(r.Cost-want) > 1e-12*math.Max(1, want) {
				t.Fatalf("n=%d %s: cost %.17g, brute force %.17g", n, kind, r.Cost, want)
			}
		}
	}
}

func TestAssignmentAgreesWithEMD(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	var s AssignmentSolver
	var r AssignmentResult
	for _, n := range []int{10, 50, 120, 300} {
		for _, kind := range []string{"random", "integer", "duplicate"} {
			_, _, C := randomProblem(rng, n, n, kind)
			if err := s.Solve(&r, C); err != nil {
				t.Fatal(err)
			}
			checkAssignment(t, &r, C)
			e, err := EMD(nil, nil, C)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Cost / float64(n); math.Abs(got-e.Cost) > 1e-12*math.Max(1, e.Cost) {
				t.Errorf("n=%d %s: assignment %.17g, EMD %.17g", n, kind, got, e.Cost)
			}
		}
	}
	// Gaussian clouds as in the EMD benchmark.
	C := gaussianCost(400, 16, 3)
	if err := s.Solve(&r, C); err != nil {
		t.Fatal(err)
	}
	checkAssignment(t, &r, C)
	e, _ := EMD(nil, nil, C)
	if got := r.Cost / 400; math.Abs(got-e.Cost) > 1e-12*e.Cost {
		t.Errorf("Gaussian: assignment %.17g, EMD %.17g", got, e.Cost)
	}
}

// withScanFrom runs f with the index-order search taking over from size
// from (1: every size; a huge value: none).
func withScanFrom(from int, f func()) {
	saved := scanFrom
	defer func() { scanFrom = saved }()
	scanFrom = from
	f()
}

// TestAssignmentSearches: both searches of the shortest augmenting paths
// (Jonker & Volgenant's column lists, and the index-order scan used from
// n = 1025 on) give optimal assignments with certified duals, the same
// cost, and the same permutation when the optimum is unique (continuous
// random costs), at sizes where both run on whole AVX2 blocks and with
// remainders.
func TestAssignmentSearches(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, n := range []int{1, 2, 3, 7, 8, 33, 130, 257} {
		for _, kind := range []string{"random", "integer", "duplicate"} {
			_, _, C := randomProblem(rng, n, n, kind)
			var res [2]*AssignmentResult
			for k, from := range []int{math.MaxInt, 1} {
				withScanFrom(from, func() {
					r, err := Assignment(C)
					if err != nil {
						t.Fatal(err)
					}
					checkAssignment(t, r, C)
					res[k] = r
				})
			}
			if a, b := res[0].Cost, res[1].Cost; math.Abs(a-b) > 1e-12*math.Max(1, math.Abs(a)) {
				t.Errorf("n=%d %s: cost %.17g with the lists, %.17g with the scan", n, kind, a, b)
			}
			if kind == "random" && !slices.Equal(res[0].Perm, res[1].Perm) {
				t.Errorf("n=%d: the searches found different permutations of a unique optimum", n)
			}
		}
	}
	// A problem large enough for the scan by default.
	C := gaussianCost(1100, 8, 5)
	r, err := Assignment(C)
	if err != nil {
		t.Fatal(err)
	}
	checkAssignment(t, r, C)
	withScanFrom(math.MaxInt, func() {
		r2, _ := Assignment(C)
		if !slices.Equal(r.Perm, r2.Perm) {
			t.Error("n=1100: the searches found different permutations of a unique optimum")
		}
	})
}

// TestAssignmentExtremeCosts: costs up to MaxCost(n, n) in absolute
// value, of both signs, are solved optimally by both searches (no
// overflow, no panic); a larger cost is an error naming the entry.
func TestAssignmentExtremeCosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	for _, from := range []int{math.MaxInt, 1} {
		withScanFrom(from, func() {
			for trial := range 3000 {
				n := 2 + trial%6
				bound := MaxCost(n, n)
				C := mat.NewDense(n, n, nil)
				for i := range n {
					for j := range n {
						x := bound * float64(rng.IntN(5)-2) / 2 // ties
						if trial%2 == 0 {
							x = bound * (2*rng.Float64() - 1)
						}
						C.Set(i, j, x)
					}
				}
				r, err := Assignment(C)
				if err != nil {
					t.Fatal(err)
				}
				want := bruteAssignment(C) * float64(n)
				if !slices.Equal(slices.Sorted(slices.Values(r.Perm)), identity(n)) || math.Abs(r.Cost-want) > 1e-12*bound*float64(n) {
					t.Fatalf("search from %d, trial %d: permutation %v, cost %g, optimum %g", from, trial, r.Perm, r.Cost, want)
				}
			}
		})
	}
	n := 3
	C := mat.NewDense(n, n, nil)
	C.Set(1, 2, -2*MaxCost(n, n))
	if _, err := Assignment(C); err == nil || !strings.Contains(err.Error(), "entry (1, 2)") || !strings.Contains(err.Error(), "3×3") {
		t.Errorf("error %v, want one naming entry (1, 2) and the size", err)
	}
}

// identity returns 0, 1, …, n−1.
func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func TestAssignmentErrors(t *testing.T) {
	for _, tc := range []struct {
		C    mat.Matrix
		want string
	}{
		{mat.NewDense(2, 3, nil), "square"},
		{mat.NewDense(2, 2, []float64{0, math.NaN(), 1, 1}), "NaN"},
		{nil, "nil"},
	} {
		if _, err := Assignment(tc.C); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	var s AssignmentSolver
	if err := s.Solve(nil, mat.NewDense(1, 1, nil)); err == nil || !strings.Contains(err.Error(), "destination is nil") {
		t.Errorf("nil destination: error %v", err)
	}
}

func BenchmarkAssignment(b *testing.B) {
	for _, n := range []int{200, 1000, 2000} {
		C := gaussianCost(n, 64, uint64(n))
		b.Run(fmtN(n), func(b *testing.B) {
			var s AssignmentSolver
			var r AssignmentResult
			for i := 0; i < b.N; i++ {
				if err := s.Solve(&r, C); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
