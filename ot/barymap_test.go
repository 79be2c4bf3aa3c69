package ot

import (
	"math"
	"math/rand/v2"
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

func TestBarycentricMapErrors(t *testing.T) {
	p := Plan{N: 2, M: 3}
	if err := p.BarycentricMap(&mat.Dense{}, mat.NewDense(2, 1, nil)); err == nil {
		t.Error("no error for Y with the wrong number of rows")
	}
	if err := p.BarycentricMap(mat.NewDense(3, 1, nil), mat.NewDense(3, 1, nil)); err == nil {
		t.Error("no error for a destination of the wrong shape")
	}
	if err := BarycentricMap(&mat.Dense{}, mat.NewDense(2, 3, nil), mat.NewDense(2, 1, nil)); err == nil {
		t.Error("dense: no error for Y with the wrong number of rows")
	}
}
