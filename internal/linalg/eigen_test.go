package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// symWithSpectrum returns Q diag(vals) Qᵀ for a random orthogonal Q.
func symWithSpectrum(rng *rand.Rand, vals []float64) *mat.SymDense {
	n := len(vals)
	G := mat.NewDense(n, n, nil)
	for i := range G.RawMatrix().Data {
		G.RawMatrix().Data[i] = rng.NormFloat64()
	}
	var qr mat.QR
	qr.Factorize(G)
	var Q mat.Dense
	qr.QTo(&Q)
	var QD mat.Dense
	QD.Scale(1, &Q)
	for j := range n {
		for i := range n {
			QD.Set(i, j, Q.At(i, j)*vals[j])
		}
	}
	var A mat.Dense
	A.Mul(&QD, Q.T())
	S := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			S.SetSym(i, j, (A.At(i, j)+A.At(j, i))/2)
		}
	}
	return S
}

func TestTopEigenSym(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gram := func(r, c int) *mat.SymDense {
		X := mat.NewDense(r, c, nil)
		for i := range X.RawMatrix().Data {
			X.RawMatrix().Data[i] = rng.NormFloat64()
		}
		var S mat.SymDense
		S.SymOuterK(1, X.T())
		return &S
	}
	spectrum := func(n int, f func(i int) float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		A    *mat.SymDense
		k    int
	}{
		{"gram", gram(300, 120), 20},
		{"rank-deficient gram", gram(40, 150), 60},
		{"all of a small one", gram(9, 7), 7},
		{"one by one", mat.NewSymDense(1, []float64{-2}), 1},
		{"repeated top", symWithSpectrum(rng, spectrum(100, func(i int) float64 { return map[bool]float64{true: 5, false: float64(i) / 100}[i < 6] })), 10},
		{"close and negative", symWithSpectrum(rng, spectrum(80, func(i int) float64 { return 1 + 1e-9*float64(i%4) - float64(i/4) })), 30},
		{"zero", mat.NewSymDense(12, nil), 4},
	} {
		n := tc.A.SymmetricDim()
		vals, V, ok := TopEigenSym(tc.A, tc.k)
		if !ok {
			t.Fatalf("%s: no convergence", tc.name)
		}
		var ref mat.EigenSym
		ref.Factorize(tc.A, false)
		all := ref.Values(nil)
		norm := math.Max(math.Abs(all[0]), math.Abs(all[n-1]))
		scale := math.Max(norm, 1)
		for j := range tc.k {
			if d := math.Abs(vals[j] - all[n-1-j]); d > 1e-12*scale*float64(n) {
				t.Errorf("%s: eigenvalue %d is %v, EigenSym %v", tc.name, j, vals[j], all[n-1-j])
			}
		}
		// Residuals ‖A v − λ v‖ and orthonormality.
		var AV mat.Dense
		AV.Mul(tc.A, V)
		for j := range tc.k {
			r := 0.0
			for i := range n {
				r = math.Max(r, math.Abs(AV.At(i, j)-vals[j]*V.At(i, j)))
			}
			if r > 1e-12*scale*float64(n) {
				t.Errorf("%s: residual of vector %d is %v", tc.name, j, r)
			}
		}
		var VtV mat.Dense
		VtV.Mul(V.T(), V)
		for i := range tc.k {
			for j := range tc.k {
				want := 0.0
				if i == j {
					want = 1
				}
				if d := math.Abs(VtV.At(i, j) - want); d > 1e-10 {
					t.Errorf("%s: VᵀV[%d,%d] = %v", tc.name, i, j, VtV.At(i, j))
				}
			}
		}
	}
}

func BenchmarkTopEigenSym2048k64(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	X := mat.NewDense(3000, 2048, nil)
	for i := range X.RawMatrix().Data {
		X.RawMatrix().Data[i] = rng.NormFloat64()
	}
	var S mat.SymDense
	S.SymOuterK(1, X.T())
	b.ResetTimer()
	for range b.N {
		TopEigenSym(&S, 64)
	}
}

func TestGramCols(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sz := range [][2]int{{1, 1}, {7, 3}, {1500, 40}, {2049, 5}, {30, 70}} {
		A := mat.NewDense(sz[0], sz[1], nil)
		for i := range A.RawMatrix().Data {
			A.RawMatrix().Data[i] = rng.NormFloat64()
		}
		G := mat.NewDense(sz[1], sz[1], nil)
		GramCols(G, A)
		var want mat.Dense
		want.Mul(A.T(), A)
		if !mat.EqualApprox(G, &want, 1e-10*float64(sz[0])) {
			t.Errorf("%v: GramCols differs from AᵀA", sz)
		}
		if !mat.Equal(G, G.T()) {
			t.Errorf("%v: not exactly symmetric", sz)
		}
	}
}
