package ot

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestBarycentricMap checks the sparse and dense forms against the
// definition T(x_i) = Σ_j π_ij y_j / Σ_j π_ij, and that a permutation plan
// maps points exactly onto their partners (eq. 5 with uniform weights).
func TestBarycentricMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 20; trial++ {
		n, m, d := 1+rng.IntN(15), 1+rng.IntN(15), 1+rng.IntN(4)
		a, b, C := randomProblem(rng, n, m, []string{"random", "zeros"}[trial%2])
		r, err := EMD(a, b, C)
		if err != nil {
			t.Fatal(err)
		}
		Y := mat.NewDense(m, d, nil)
		for k := range Y.RawMatrix().Data {
			Y.RawMatrix().Data[k] = rng.NormFloat64()
		}
		var sparse, dense mat.Dense
		if err := r.Plan.BarycentricMap(&sparse, Y); err != nil {
			t.Fatal(err)
		}
		if err := BarycentricMap(&dense, r.Plan.Dense(), Y); err != nil {
			t.Fatal(err)
		}
		P := r.Plan.Dense()
		for i := 0; i < n; i++ {
			var s float64
			want := make([]float64, d)
			for j := 0; j < m; j++ {
				s += P.At(i, j)
				for l := 0; l < d; l++ {
					want[l] += P.At(i, j) * Y.At(j, l)
				}
			}
			for l := 0; l < d; l++ {
				if s > 0 {
					want[l] /= s
				}
				if math.Abs(sparse.At(i, l)-want[l]) > 1e-12 || math.Abs(dense.At(i, l)-want[l]) > 1e-12 {
					t.Fatalf("row %d dim %d: sparse %g dense %g want %g", i, l, sparse.At(i, l), dense.At(i, l), want[l])
				}
			}
		}
	}
	// Uniform n×n: the plan is a permutation and T maps onto partners.
	n := 12
	_, _, C := randomProblem(rng, n, n, "random")
	r, err := EMD(nil, nil, C)
	if err != nil {
		t.Fatal(err)
	}
	Y := mat.NewDense(n, 2, nil)
	for j := 0; j < n; j++ {
		Y.Set(j, 0, float64(j))
		Y.Set(j, 1, -float64(j))
	}
	var T mat.Dense
	if err := r.Plan.BarycentricMap(&T, Y); err != nil {
		t.Fatal(err)
	}
	for k := range r.Plan.Mass {
		i, j := r.Plan.Row[k], r.Plan.Col[k]
		if T.At(i, 0) != float64(j) || T.At(i, 1) != -float64(j) {
			t.Errorf("row %d maps to %v, want partner %d", i, T.RawRowView(i), j)
		}
	}
}

// TestBarycentricMapErrors: shapes that disagree, nil arguments and
// malformed plans are errors prefixed "ot: ", never panics or zero rows.
func TestBarycentricMapErrors(t *testing.T) {
	p := Plan{N: 2, M: 3}
	Y3 := mat.NewDense(3, 1, nil)
	var nilDense *mat.Dense
	neg := mat.NewDense(2, 3, []float64{0.25, -0.25, 0, 0, 0, 0.5})
	nan := mat.NewDense(2, 3, []float64{0.25, math.NaN(), 0, 0, 0, 0.5})
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"Y rows", p.BarycentricMap(&mat.Dense{}, mat.NewDense(2, 1, nil)), "Y has 2 rows"},
		{"dst shape", p.BarycentricMap(mat.NewDense(3, 1, nil), Y3), "destination is 3×1"},
		{"nil dst", p.BarycentricMap(nil, Y3), "destination is nil"},
		{"nil Y", p.BarycentricMap(&mat.Dense{}, nil), "Y is nil"},
		{"typed nil Y", p.BarycentricMap(&mat.Dense{}, nilDense), "Y is nil"},
		{"row out of range", (&Plan{N: 2, M: 3, Row: []int{99}, Col: []int{0}, Mass: []float64{1}}).BarycentricMap(&mat.Dense{}, Y3), "outside its 2×3 shape"},
		{"short mass", (&Plan{N: 2, M: 3, Row: []int{0, 1}, Col: []int{0, 1}, Mass: []float64{1}}).BarycentricMap(&mat.Dense{}, Y3), "1 masses"},
		{"negative mass", (&Plan{N: 2, M: 3, Row: []int{0}, Col: []int{0}, Mass: []float64{-1}}).BarycentricMap(&mat.Dense{}, Y3), "mass -1"},
		{"nil plan", (*Plan)(nil).BarycentricMap(&mat.Dense{}, Y3), "plan is nil"},
		{"dense Y rows", BarycentricMap(&mat.Dense{}, mat.NewDense(2, 3, nil), mat.NewDense(2, 1, nil)), "Y has 2 rows"},
		{"dense nil plan", BarycentricMap(&mat.Dense{}, nil, Y3), "nil plan"},
		{"dense negative entry", BarycentricMap(&mat.Dense{}, neg, Y3), "entry (0, 1) is -0.25"},
		{"dense NaN entry", BarycentricMap(&mat.Dense{}, nan, Y3), "entry (0, 1) is NaN"},
	}
	for _, tc := range cases {
		if tc.err == nil || !strings.HasPrefix(tc.err.Error(), "ot: ") || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
}

// TestBarycentricMapAliasing: the dense map may write over its plan or its
// points and gives the same result as into a fresh matrix.
func TestBarycentricMapAliasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	n := 5
	P := mat.NewDense(n, n, nil)
	Y := mat.NewDense(n, n, nil)
	for k := range P.RawMatrix().Data {
		P.RawMatrix().Data[k] = rng.Float64()
		Y.RawMatrix().Data[k] = rng.NormFloat64()
	}
	var want mat.Dense
	if err := BarycentricMap(&want, P, Y); err != nil {
		t.Fatal(err)
	}
	for _, alias := range []string{"P", "Y"} {
		P2, Y2 := mat.DenseCopyOf(P), mat.DenseCopyOf(Y)
		dst := P2
		if alias == "Y" {
			dst = Y2
		}
		if err := BarycentricMap(dst, P2, Y2); err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(dst, &want) {
			t.Errorf("dst = %s: the map differs from the one written into a fresh matrix", alias)
		}
	}
}
