package adapt

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// spectrumRows returns n rows of D features whose covariance has the
// eigenvalues 2^(−j/2), j = 0 … D−1, along random orthonormal directions,
// around the mean (3, 3, …).
func spectrumRows(n, D int, seed uint64) *mat.Dense {
	r := rand.New(rand.NewPCG(seed, 7))
	G := mat.NewDense(D, D, nil)
	for i := range D {
		for j := range D {
			G.Set(i, j, r.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(G)
	var Q mat.Dense
	qr.QTo(&Q)
	Z := mat.NewDense(n, D, nil)
	for i := range n {
		for j := range D {
			Z.Set(i, j, r.NormFloat64()*math.Pow(2, -float64(j)/4))
		}
	}
	var X mat.Dense
	X.Mul(Z, Q.T())
	for i := range n {
		for j := range D {
			X.Set(i, j, X.At(i, j)+3)
		}
	}
	return &X
}

// TestFitProjection checks the randomised principal directions against
// the exact ones (gramEigen on the centred rows), in two matrices pooled
// and beyond projectionRows rows (drawn), and that the projection keeps
// the points of its subspace.
func TestFitProjection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n, D  int
		q     int
		tol   float64 // on 1 − |⟨v, v_exact⟩| of each direction
		drawn bool
	}{
		{"all rows", 600, 60, 8, 1e-6, false},
		{"rows drawn", 2600, 40, 5, 1e-6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			X := spectrumRows(tc.n, tc.D, 1)
			half := tc.n / 2
			parts := []*mat.Dense{X.Slice(0, half, 0, tc.D).(*mat.Dense), X.Slice(half, tc.n, 0, tc.D).(*mat.Dense)}
			if tc.drawn {
				parts = append(parts, X, X) // 2n rows > projectionRows
			}
			p, err := FitProjection(parts, tc.q, 3)
			if err != nil {
				t.Fatal(err)
			}
			if D, q := p.Dims(); D != tc.D || q != tc.q {
				t.Fatalf("Dims = %d, %d, want %d, %d", D, q, tc.D, tc.q)
			}
			S, _ := projectionSample(parts, tc.D, 3)
			V, _, err := gramEigen(S, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			for c := range tc.q {
				v := mat.Col(nil, c, V)
				if g := 1 - math.Abs(floats.Dot(v, p.Basis.RawRowView(c))); g > tc.tol {
					t.Errorf("direction %d: 1 − |⟨v, v_exact⟩| = %.3g", c, g)
				}
			}
			// a point of the subspace projects back onto itself
			Z := mat.NewDense(2, tc.q, nil)
			for j := range tc.q {
				Z.Set(0, j, float64(j))
				Z.Set(1, j, -1)
			}
			back, err := p.Apply(p.Inverse(Z))
			if err != nil {
				t.Fatal(err)
			}
			if !mat.EqualApprox(back, Z, 1e-10) {
				t.Errorf("Apply(Inverse(Z)) = %v, want %v", mat.Formatted(back), mat.Formatted(Z))
			}
		})
	}
}

// TestFitProjectionSameBits checks that a projection is a function of its
// rows and seed.
func TestFitProjectionSameBits(t *testing.T) {
	X := spectrumRows(300, 30, 2)
	a, err := FitProjection([]*mat.Dense{X}, 6, 9)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FitProjection([]*mat.Dense{X}, 6, 9)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a.Basis, b.Basis) || !floats.Same(a.Mean, b.Mean) {
		t.Error("two fits of the same rows and seed differ")
	}
}

// TestFitProjectionRank checks that directions of no variance are
// dropped: rows spanning 3 directions give at most 3, whatever q.
func TestFitProjectionRank(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	X := mat.NewDense(50, 12, nil)
	for i := range 50 {
		a, b, c := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		for j := range 12 {
			X.Set(i, j, a*float64(j)+b*float64(j%3)+c)
		}
	}
	p, err := FitProjection([]*mat.Dense{X}, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, q := p.Dims(); q != 3 {
		t.Errorf("%d directions, want 3", q)
	}
}

// TestProjectionErrors checks the errors of FitProjection and Apply.
func TestProjectionErrors(t *testing.T) {
	X := spectrumRows(40, 10, 3)
	for _, tc := range []struct {
		name string
		Xs   []*mat.Dense
		q    int
	}{
		{"no rows", nil, 3},
		{"no direction", []*mat.Dense{X}, 0},
		{"as many directions as features", []*mat.Dense{X}, 10},
		{"no variance", []*mat.Dense{mat.NewDense(5, 10, nil)}, 3},
	} {
		if _, err := FitProjection(tc.Xs, tc.q, 1); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	p, err := FitProjection([]*mat.Dense{X}, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply(mat.NewDense(2, 9, nil)); err == nil {
		t.Error("Apply of rows of 9 features by a projection of 10: no error")
	}
}

// TestProjectionInverseSpread checks the features' standard deviations
// against the diagonal of V diag(s²) Vᵀ formed in full.
func TestProjectionInverseSpread(t *testing.T) {
	p, err := FitProjection([]*mat.Dense{spectrumRows(200, 7, 5)}, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	S := mat.NewDense(2, 3, []float64{1, 2, 3, 0.5, 0, 0.25})
	got := p.InverseSpread(S)
	for i := range 2 {
		var C, tmp mat.Dense
		d := mat.NewDiagDense(3, []float64{S.At(i, 0) * S.At(i, 0), S.At(i, 1) * S.At(i, 1), S.At(i, 2) * S.At(i, 2)})
		tmp.Mul(p.Basis.T(), d)
		C.Mul(&tmp, p.Basis)
		for j := range 7 {
			if want := math.Sqrt(C.At(j, j)); math.Abs(got.At(i, j)-want) > 1e-12 {
				t.Errorf("Gaussian %d, feature %d: %g, want %g", i, j, got.At(i, j), want)
			}
		}
	}
}

// BenchmarkFitProjection times the projection onto 128 directions of
// 5400 rows of 1024 features (CWRU's sizes in the development suite),
// against the exact leading eigenvectors of the same covariance
// (gramEigen, as SA computes its bases), and projecting the rows:
//
//	go test ./adapt -run '^$' -bench FitProjection
func BenchmarkFitProjection(b *testing.B) {
	X := spectrumRows(5400, 1024, 1)
	b.Run("randomised", func(b *testing.B) {
		for b.Loop() {
			if _, err := FitProjection([]*mat.Dense{X}, 128, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("exact", func(b *testing.B) {
		for b.Loop() {
			S, _ := projectionSample([]*mat.Dense{X}, 1024, 1)
			if _, _, err := gramEigen(S, 128); err != nil {
				b.Fatal(err)
			}
		}
	})
	p, err := FitProjection([]*mat.Dense{X}, 128, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("apply", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.Apply(X); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestFitProjectionWide checks the projection of rows of many features,
// whose covariance is not formed (covarianceProduct), against the exact
// leading eigenvectors, as TestFitProjection.
func TestFitProjectionWide(t *testing.T) {
	const n, D, q = 300, projectionCovFeatures + 50, 4
	r := rand.New(rand.NewPCG(6, 6))
	X := mat.NewDense(n, D, nil)
	for i := range n { // 4 directions of decreasing variance, and noise
		a := []float64{8 * r.NormFloat64(), 4 * r.NormFloat64(), 2 * r.NormFloat64(), r.NormFloat64()}
		for j := range D {
			X.Set(i, j, a[j%4]+0.01*r.NormFloat64())
		}
	}
	p, err := FitProjection([]*mat.Dense{X}, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	S, _ := projectionSample([]*mat.Dense{X}, D, 1)
	V, _, err := gramEigen(S, q)
	if err != nil {
		t.Fatal(err)
	}
	for c := range q {
		if g := 1 - math.Abs(floats.Dot(mat.Col(nil, c, V), p.Basis.RawRowView(c))); g > 1e-6 {
			t.Errorf("direction %d: 1 − |⟨v, v_exact⟩| = %.3g", c, g)
		}
	}
}
