package ot

import (
	"math"
	"math/rand/v2"
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
}

func BenchmarkAssignment(b *testing.B) {
	for _, n := range []int{200, 1000} {
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
