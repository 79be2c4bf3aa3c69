package ot

import (
	"math"
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

// TestRelaxMinKernel: the AVX2 pass of the index-order search gives
// exactly the portable pass's distances, predecessors, minimum and its
// first index, with final (NaN) entries, ties and negative zeros, for
// lengths with and without a remainder mod 8 and 4.
func TestRelaxMinKernel(t *testing.T) {
	saved := useAVX2
	defer setAVX2(saved)
	rng := rand.New(rand.NewPCG(15, 16))
	for trial := range 2000 {
		n := 1 + trial%37
		ri := make([]float64, n)
		v := make([]float64, n)
		d0 := make([]float64, n)
		p0 := make([]int, n)
		for j := range n {
			ri[j] = float64(rng.IntN(6))
			v[j] = float64(rng.IntN(3))
			switch rng.IntN(6) {
			case 0:
				d0[j] = math.NaN() // final
			case 1:
				d0[j] = math.Inf(1)
			case 2:
				d0[j] = math.Copysign(0, -1)
			default:
				d0[j] = float64(rng.IntN(8) - 2)
			}
			p0[j] = -j
		}
		if trial%5 == 0 {
			for j := range d0 {
				d0[j] = math.NaN() // every column final: no minimum
			}
		}
		u1 := float64(rng.IntN(4) - 1)
		type res struct {
			d    []float64
			pred []int
			m    float64
			j    int
		}
		var got [2]res
		for k, avx := range []bool{true, false} {
			setAVX2(avx)
			r := &got[k]
			r.d, r.pred = slices.Clone(d0), slices.Clone(p0)
			r.m, r.j = relaxMin(ri, v, r.d, r.pred, 9, u1)
		}
		a, b := got[0], got[1]
		same := slices.EqualFunc(a.d, b.d, func(x, y float64) bool {
			return math.Float64bits(x) == math.Float64bits(y) || math.IsNaN(x) && math.IsNaN(y)
		})
		if !same || !slices.Equal(a.pred, b.pred) || math.Float64bits(a.m) != math.Float64bits(b.m) || a.j != b.j {
			t.Fatalf("n=%d ri %v v %v d %v u1 %g: AVX2 %+v, Go %+v", n, ri, v, d0, u1, a, b)
		}
		// The portable pass against its definition.
		want, wantJ := math.Inf(1), -1
		for j := range n {
			if h := ri[j] - v[j] - u1; h < d0[j] {
				if b.d[j] != h || b.pred[j] != 9 {
					t.Fatalf("n=%d: entry %d not lowered to %g", n, j, h)
				}
			} else if !(math.IsNaN(d0[j]) && math.IsNaN(b.d[j])) && (b.d[j] != d0[j] || b.pred[j] != p0[j]) {
				t.Fatalf("n=%d: entry %d changed", n, j)
			}
			if b.d[j] < want {
				want, wantJ = b.d[j], j
			}
		}
		if b.m != want || b.j != wantJ {
			t.Fatalf("n=%d: minimum %g at %d, want %g at %d", n, b.m, b.j, want, wantJ)
		}
	}
}

// TestAssignmentKernelsSolve: whole solves with and without the AVX2
// scans pick the same permutation, on problems with many tied costs, with
// both searches.
func TestAssignmentKernelsSolve(t *testing.T) {
	saved := useAVX2
	defer setAVX2(saved)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{2, 5, 8, 31, 64, 200} {
		for trial := range 10 {
			C := mat.NewDense(n, n, nil)
			for i := range n {
				for j := range n {
					C.Set(i, j, float64(rng.IntN(4+trial)))
				}
			}
			var perms [2][]int
			// Odd trials search in index order (augmentScan).
			withScanFrom([]int{math.MaxInt, 1}[trial%2], func() {
				for k, avx := range []bool{true, false} {
					setAVX2(avx)
					r, err := Assignment(C)
					if err != nil {
						t.Fatal(err)
					}
					perms[k] = r.Perm
				}
			})
			if !slices.Equal(perms[0], perms[1]) {
				t.Fatalf("n=%d trial %d: the permutations differ", n, trial)
			}
		}
	}
}
