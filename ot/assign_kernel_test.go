package ot

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestAssignmentKernels: the AVX2 scans of the assignment solver give
// exactly the portable scans' results, ties included (small integer
// costs), for lengths with and without a remainder mod 4.
func TestAssignmentKernels(t *testing.T) {
	saved := useAVX2
	defer setAVX2(saved)
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 400 {
		n := 1 + trial%23
		row := make([]float64, n)
		v := make([]float64, n)
		for j := range row {
			row[j] = float64(rng.IntN(6))
			v[j] = float64(rng.IntN(3))
		}
		type res struct {
			u1, u2 float64
			j1, j2 int
			m      float64
			v      []float64
			arg    []int
		}
		var got [2]res
		for k, avx := range []bool{true, false} {
			setAVX2(avx)
			r := &got[k]
			r.u1, r.j1, r.u2, r.j2 = rowMin2(row, v)
			r.m = minDiff(row, v)
			r.v = slices.Clone(v)
			r.arg = make([]int, n)
			colMin(row, r.v, r.arg, 7)
		}
		a, b := got[0], got[1]
		if a.u1 != b.u1 || a.j1 != b.j1 || a.u2 != b.u2 || a.j2 != b.j2 || a.m != b.m || !slices.Equal(a.v, b.v) || !slices.Equal(a.arg, b.arg) {
			t.Fatalf("n=%d row %v v %v: AVX2 %+v, Go %+v", n, row, v, a, b)
		}
	}
}

// TestAssignmentKernelsSolve: whole solves with and without the AVX2
// scans pick the same permutation, on problems with many tied costs.
func TestAssignmentKernelsSolve(t *testing.T) {
	saved := useAVX2
	defer setAVX2(saved)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{2, 5, 8, 31, 64, 200} {
		for trial := range 5 {
			C := mat.NewDense(n, n, nil)
			for i := range n {
				for j := range n {
					C.Set(i, j, float64(rng.IntN(4+trial)))
				}
			}
			var perms [2][]int
			for k, avx := range []bool{true, false} {
				setAVX2(avx)
				r, err := Assignment(C)
				if err != nil {
					t.Fatal(err)
				}
				perms[k] = r.Perm
			}
			if !slices.Equal(perms[0], perms[1]) {
				t.Fatalf("n=%d trial %d: the permutations differ", n, trial)
			}
		}
	}
}
