package adapt

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dadil/dadil/dataset"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// tcaGaussRows returns n rows of dimension D: standard Gaussian noise plus
// the offset off.
func tcaGaussRows(rng *rand.Rand, n, D int, off []float64) *mat.Dense {
	X := mat.NewDense(n, D, nil)
	for i := range n {
		for j := range D {
			X.Set(i, j, rng.NormFloat64()+off[j])
		}
	}
	return X
}

// bruteTCA computes the TCA embedding of the stacked rows X = [Xs; Xt] the
// way Pan et al. state it: the n×n kernel K = XXᵀ, the MMD matrix L and
// the centring H, and the m leading solutions of the generalised problem
// KHK w = λ (KLK + μI) w, through a Cholesky factor of KLK + μI. It
// returns the embedding Z = KW, scaled so that ZᵀHZ = nI, and the λ.
func bruteTCA(t *testing.T, Xs, Xt *mat.Dense, m int, mu float64) (*mat.Dense, []float64) {
	ns, D := Xs.Dims()
	nt, _ := Xt.Dims()
	n := ns + nt
	X := mat.NewDense(n, D, nil)
	X.Slice(0, ns, 0, D).(*mat.Dense).Copy(Xs)
	X.Slice(ns, n, 0, D).(*mat.Dense).Copy(Xt)
	var K mat.Dense
	K.Mul(X, X.T())
	L := mat.NewDense(n, n, nil)
	H := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			ei, ej := 1/float64(ns), 1/float64(ns)
			if i >= ns {
				ei = -1 / float64(nt)
			}
			if j >= ns {
				ej = -1 / float64(nt)
			}
			L.Set(i, j, ei*ej)
			h := -1 / float64(n)
			if i == j {
				h++
			}
			H.Set(i, j, h)
		}
	}
	var A, B, tmp mat.Dense
	tmp.Mul(&K, L)
	A.Mul(&tmp, &K)
	for i := range n {
		A.Set(i, i, A.At(i, i)+mu)
	}
	tmp.Mul(&K, H)
	B.Mul(&tmp, &K)
	var chol mat.Cholesky
	if !chol.Factorize(symmetricPart(&A)) {
		t.Fatal("KLK + μI is not positive definite")
	}
	var R mat.TriDense
	chol.LTo(&R) // A = R Rᵀ
	// S = R⁻¹ B R⁻ᵀ.
	var RiB, S mat.Dense
	if err := RiB.Solve(&R, &B); err != nil {
		t.Fatal(err)
	}
	var RiBt mat.Dense
	RiBt.CloneFrom(RiB.T())
	if err := S.Solve(&R, &RiBt); err != nil {
		t.Fatal(err)
	}
	var eig mat.EigenSym
	if !eig.Factorize(symmetricPart(&S), true) {
		t.Fatal("eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var Y mat.Dense
	eig.VectorsTo(&Y)
	Z := mat.NewDense(n, m, nil)
	lam := make([]float64, m)
	for c := range m {
		j := n - 1 - c
		lam[c] = vals[j]
		// w = R⁻ᵀ y.
		y := mat.NewVecDense(n, mat.Col(nil, j, &Y))
		var w mat.VecDense
		if err := w.SolveVec(R.T(), y); err != nil {
			t.Fatal(err)
		}
		var z mat.VecDense
		z.MulVec(&K, &w)
		var hz mat.VecDense
		hz.MulVec(H, &z)
		z.ScaleVec(math.Sqrt(float64(n)/mat.Dot(&z, &hz)), &z)
		Z.SetCol(c, z.RawVector().Data)
	}
	return Z, lam
}

func symmetricPart(A *mat.Dense) *mat.SymDense {
	n, _ := A.Dims()
	S := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			S.SetSym(i, j, (A.At(i, j)+A.At(j, i))/2)
		}
	}
	return S
}

// TestTCAKernelForm checks the reduced computation of TCA against the n×n
// kernel formulation, through both Gram paths (n > D and n < D), with a
// weak and a strong regulariser.
func TestTCAKernelForm(t *testing.T) {
	cases := []struct {
		name   string
		ns, nt int
		D      int
		mu     float64
		// dup copies feature 0 into feature 1: for n > D, XᵀX is then
		// singular, and TCA decomposes it instead of factoring it
		// (gramFactor).
		dup bool
	}{
		{"n > D", 30, 20, 6, 1, false},
		{"n > D, strong μ", 30, 20, 6, 1e4, false},
		{"n < D", 25, 15, 60, 1, false},
		{"n < D, strong μ", 25, 15, 60, 1e5, false},
		{"n > D, rank-deficient", 30, 20, 6, 1, true},
		{"n < D, rank-deficient", 25, 15, 60, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(c.D)))
			offS, offT := make([]float64, c.D), make([]float64, c.D)
			for j := range c.D {
				offS[j] = 0.3 * float64(j%3)
				offT[j] = offS[j] + 0.8*float64(j%2)
			}
			Xs := tcaGaussRows(rng, c.ns, c.D, offS)
			Xt := tcaGaussRows(rng, c.nt, c.D, offT)
			if c.dup {
				Xs.SetCol(1, mat.Col(nil, 0, Xs))
				Xt.SetCol(1, mat.Col(nil, 0, Xt))
			}
			const m = 3
			P, err := tcaProjection(Xs, Xt, m, c.mu)
			if err != nil {
				t.Fatal(err)
			}
			want, lam := bruteTCA(t, Xs, Xt, m, c.mu)
			t.Logf("λ = %.6g", lam)
			n := c.ns + c.nt
			X := mat.NewDense(n, c.D, nil)
			X.Slice(0, c.ns, 0, c.D).(*mat.Dense).Copy(Xs)
			X.Slice(c.ns, n, 0, c.D).(*mat.Dense).Copy(Xt)
			var Z mat.Dense
			Z.Mul(X, P)
			for k := range m {
				z, w := Z.ColView(k), want.ColView(k)
				sign := 1.0
				if mat.Dot(z, w) < 0 {
					sign = -1
				}
				var diff, norm float64
				for i := range n {
					diff = math.Max(diff, math.Abs(sign*z.AtVec(i)-w.AtVec(i)))
					norm = math.Max(norm, math.Abs(w.AtVec(i)))
				}
				if diff > 1e-6*norm {
					t.Errorf("component %d: max |Δ| = %g (scale %g)", k, diff, norm)
				}
			}
		})
	}
}

// normalisedMMD returns ‖x̄_S − x̄_T‖² divided by the total variance of
// the pooled rows: the squared distance between the domain means in units
// of the spread of the data, a scale-free measure of the linear-kernel MMD.
func normalisedMMD(Zs, Zt *mat.Dense) float64 {
	ns, D := Zs.Dims()
	nt, _ := Zt.Dims()
	ms, mt, mean := make([]float64, D), make([]float64, D), make([]float64, D)
	for j := range D {
		ms[j] = mat.Sum(Zs.ColView(j)) / float64(ns)
		mt[j] = mat.Sum(Zt.ColView(j)) / float64(nt)
		mean[j] = (ms[j]*float64(ns) + mt[j]*float64(nt)) / float64(ns+nt)
	}
	var mmd, v float64
	for j := range D {
		mmd += (ms[j] - mt[j]) * (ms[j] - mt[j])
		for i := range ns {
			d := Zs.At(i, j) - mean[j]
			v += d * d
		}
		for i := range nt {
			d := Zt.At(i, j) - mean[j]
			v += d * d
		}
	}
	return mmd / (v / float64(ns+nt))
}

// TCA brings the embedded domain means closer than in the input space,
// and its embedding has unit variance per component over the training
// rows (ZᵀHZ = nI).
func TestTCAReducesMMD(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	const D = 10
	// Two sources and a target: classes apart along the first axis,
	// domains shifted along the second and third.
	var src []dataset.Domain
	for k, shift := range []float64{0, 1} {
		X := mat.NewDense(100, D, nil)
		y := make([]int, 100)
		for i := range 100 {
			y[i] = i % 2
			for j := range D {
				X.Set(i, j, rng.NormFloat64())
			}
			X.Set(i, 0, X.At(i, 0)+4*float64(y[i]))
			X.Set(i, 1, X.At(i, 1)+3*shift)
		}
		src = append(src, dataset.Domain{Name: string(rune('a' + k)), X: X, Y: y})
	}
	off := make([]float64, D)
	off[1], off[2] = -4, 3
	Xt := tcaGaussRows(rng, 80, D, off)
	for i := range 80 {
		Xt.Set(i, 0, Xt.At(i, 0)+4*float64(i%2))
	}
	Xs, _ := dataset.Pool(src)
	before := normalisedMMD(Xs, Xt)
	for _, m := range []int{1, 2, 5} {
		tca := &TCA{Components: m}
		if err := fit(tca, src, Xt, 2); err != nil {
			t.Fatal(err)
		}
		var Zs, Zt mat.Dense
		Zs.Mul(Xs, tca.Projection)
		Zt.Mul(Xt, tca.Projection)
		after := normalisedMMD(&Zs, &Zt)
		t.Logf("m = %d: normalised MMD %.4g → %.4g", m, before, after)
		if after > 0.05*before {
			t.Errorf("m = %d: normalised MMD %.4g → %.4g", m, before, after)
		}
		// Unit variance of every component over the pooled rows.
		n := float64(200 + 80)
		for k := range m {
			var s, s2 float64
			for _, Z := range []*mat.Dense{&Zs, &Zt} {
				r, _ := Z.Dims()
				for i := range r {
					v := Z.At(i, k)
					s += v
					s2 += v * v
				}
			}
			if v := s2/n - (s/n)*(s/n); math.Abs(v-1) > 1e-8 {
				t.Errorf("m = %d: component %d has variance %g", m, k, v)
			}
		}
		// The class structure survives: the target is classified well.
		pred, err := tca.Predict(Xt)
		if err != nil {
			t.Fatal(err)
		}
		truth := make([]int, 80)
		for i := range truth {
			truth[i] = i % 2
		}
		if a := accuracy(pred, truth); a < 0.9 {
			t.Errorf("m = %d: target accuracy %.4f", m, a)
		}
	}
}

// The number of components is capped by the rank of the data.
func TestTCAComponentsCap(t *testing.T) {
	src, tgt, _ := synthProblem(3)
	tca := &TCA{}
	if err := fit(tca, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	if r, c := tca.Projection.Dims(); r != 2 || c != 2 {
		t.Errorf("projection is %d×%d, want 2×2", r, c)
	}
}

func TestGramFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		n, D int
		dup  bool
		ok   bool
	}{
		{40, 6, false, true},
		{40, 6, true, false}, // a repeated feature: XᵀX singular
		{10, 30, false, true},
		{10, 30, true, true}, // XXᵀ stays regular
	} {
		X := tcaGaussRows(rng, c.n, c.D, make([]float64, c.D))
		if c.dup {
			X.SetCol(1, mat.Col(nil, 0, X))
		}
		F, FtF, ok := gramFactor(X, smallGram(X))
		if ok != c.ok {
			t.Errorf("%d×%d, dup %v: ok = %v", c.n, c.D, c.dup, ok)
			continue
		}
		if !ok {
			continue
		}
		// F Fᵀ = XᵀX and FtF = FᵀF.
		var FFt, XtX, want mat.Dense
		FFt.Mul(F, F.T())
		XtX.Mul(X.T(), X)
		if !mat.EqualApprox(&FFt, &XtX, 1e-9*mat.Norm(&XtX, math.Inf(1))) {
			t.Errorf("%d×%d: F Fᵀ differs from XᵀX", c.n, c.D)
		}
		want.Mul(F.T(), F)
		if !mat.EqualApprox(FtF, &want, 1e-9*mat.Norm(&want, math.Inf(1))) {
			t.Errorf("%d×%d: FtF differs from FᵀF", c.n, c.D)
		}
	}
}

// TestPivotedFactor checks the pivoted Cholesky factor of rank-deficient
// data, through XᵀX (n ≥ D: constant and repeated features) and through
// XXᵀ (n < D: repeated rows): F Fᵀ = XᵀX with as many columns as the rank,
// and TCA's projection from it equal to the one from the
// eigendecomposition.
func TestPivotedFactor(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ns, nt, D  int
		rank       int
		deficiency func(Xs, Xt *mat.Dense)
	}{
		{"n ≥ D, constant and repeated features", 300, 150, 24, 21, func(Xs, Xt *mat.Dense) {
			for _, X := range []*mat.Dense{Xs, Xt} {
				r, D := X.Dims()
				X.SetCol(5, mat.Col(nil, 2, X))
				X.SetCol(D-1, make([]float64, r))
				X.SetCol(D-2, make([]float64, r))
			}
		}},
		{"n < D, repeated rows", 20, 12, 60, 28, func(Xs, Xt *mat.Dense) {
			Xs.SetRow(7, Xs.RawRowView(3))
			Xs.SetRow(11, Xs.RawRowView(3))
			Xt.SetRow(4, Xs.RawRowView(0))
			Xt.SetRow(9, Xt.RawRowView(8))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(13, 14))
			shift := make([]float64, tc.D)
			shift[3] = 1.5
			Xs := tcaGaussRows(rng, tc.ns, tc.D, make([]float64, tc.D))
			Xt := tcaGaussRows(rng, tc.nt, tc.D, shift)
			tc.deficiency(Xs, Xt)
			X := mat.NewDense(tc.ns+tc.nt, tc.D, nil)
			X.Stack(Xs, Xt)
			G := smallGram(X)
			if _, _, ok := gramFactor(X, G); ok {
				t.Fatal("gramFactor factored a singular Gram matrix")
			}
			F, FtF, ok := pivotedFactor(X, G)
			if !ok {
				t.Fatal("pivotedFactor failed")
			}
			if d, r := F.Dims(); d != tc.D || r != tc.rank {
				t.Errorf("F is %d×%d, want %d×%d", d, r, tc.D, tc.rank)
			}
			var FFt, XtX, want mat.Dense
			FFt.Mul(F, F.T())
			XtX.Mul(X.T(), X)
			if !mat.EqualApprox(&FFt, &XtX, 1e-9*mat.Norm(&XtX, math.Inf(1))) {
				t.Error("F Fᵀ differs from XᵀX")
			}
			want.Mul(F.T(), F)
			if !mat.EqualApprox(FtF, &want, 1e-9*mat.Norm(&want, math.Inf(1))) {
				t.Error("FtF differs from FᵀF")
			}

			// The projection through either factor: the same columns, up to
			// rounding and sign (each path fixes signs in its own basis).
			saved := pivotedMinDim
			defer func() { pivotedMinDim = saved }()
			pivotedMinDim = tc.D + tc.ns + tc.nt
			Peig, err := tcaProjection(Xs, Xt, 10, 1)
			if err != nil {
				t.Fatal(err)
			}
			pivotedMinDim = 0
			Ppiv, err := tcaProjection(Xs, Xt, 10, 1)
			if err != nil {
				t.Fatal(err)
			}
			if r1, c1 := Peig.Dims(); r1 != tc.D || c1 != 10 {
				t.Fatalf("eigendecomposition path: projection %d×%d", r1, c1)
			}
			for c := 0; c < 10; c++ {
				pe, pp := mat.Col(nil, c, Peig), mat.Col(nil, c, Ppiv)
				if floats.Dot(pe, pp) < 0 {
					floats.Scale(-1, pp)
				}
				if d := floats.Distance(pe, pp, 2); d > 1e-7*floats.Norm(pe, 2) {
					t.Errorf("column %d: the projections differ by %g (norm %g)", c, d, floats.Norm(pe, 2))
				}
			}
		})
	}
}
