package adapt

import (
	"errors"
	"fmt"
	"math"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/internal/linalg"
)

// Default values of TCA for zero fields.
const (
	DefaultTCAComponents = 30
	DefaultTCAMu         = 1.0
)

// TCA is Transfer Component Analysis (Pan, Tsang, Kwok & Yang, "Domain
// Adaptation via Transfer Component Analysis", IEEE Transactions on Neural
// Networks 22(2), 2011) with the linear kernel, applied to the pooled
// sources as in the baselines of the DaDiL paper (Montesuma, Ngolè Mboula &
// Souloumiac, ECAI 2023, Table 2).
//
// For the n = n_S + n_T stacked rows X = [X_S; X_T] (n×D) and the kernel
// K = XXᵀ, TCA looks for W ∈ R^{n×m} solving
//
//	min_W tr(Wᵀ K L K W) + μ tr(WᵀW)  subject to  Wᵀ K H K W = I_m,
//
// where L = e eᵀ, e_i = 1/n_S for source rows and −1/n_T for target rows,
// so that tr(WᵀKLKW) is the squared distance between the embedded domain
// means (the MMD with a linear kernel), and H = I − 11ᵀ/n centres. The
// solution is formed by the m leading eigenvectors of (KLK + μI)⁻¹KHK and
// a row x is embedded as z = Wᵀ K(X, x) = Wᵀ X x.
//
// The n×n eigenproblem is not formed. Let XᵀX = V S Vᵀ (D×D, or through
// the n×n XXᵀ when n < D), keeping the r eigenvalues above 1e-10 times the
// largest. The range of K is spanned by U = X V S^(−1/2), and components
// of W outside it only increase μ tr(WᵀW), so W = U C with C ∈ R^{r×m}.
// Substituting, with ã = S^(1/2) Vᵀ (x̄_S − x̄_T) and b̃ = S^(1/2) Vᵀ x̄ (x̄ the
// mean of all rows),
//
//	Wᵀ K L K W = Cᵀ ã ãᵀ C,   Wᵀ K H K W = Cᵀ (S² − n b̃ b̃ᵀ) C,   WᵀW = CᵀC,
//
// so C solves the r×r generalised symmetric-definite eigenproblem
// (S² − n b̃ b̃ᵀ) c = λ (ã ãᵀ + μI) c, largest λ. With R = (ããᵀ + μI)^(−1/2)
// = μ^(−1/2) (I + κ ûûᵀ), û = ã/‖ã‖, κ = (μ/(μ + ‖ã‖²))^(1/2) − 1, it
// reduces to the ordinary eigenproblem of R (S² − n b̃ b̃ᵀ) R = Y Λ Yᵀ, and
// C = R Y Λ^(−1/2) satisfies the constraint. The embedding is linear,
//
//	z = Pᵀ x,   P = V S^(1/2) C   (D×m),
//
// exactly the kernel TCA embedding with the linear kernel: the cost is one
// eigendecomposition of a min(n, D)-square Gram matrix and one of an
// r×r matrix, instead of an n×n non-symmetric one. (The d×d "primal"
// eigenproblem of (Xᵀ L X + μI)⁻¹ XᵀHX sometimes used instead regularises
// μ‖P‖²_F rather than μ tr(WᵀW) = μ tr(Pᵀ (XᵀX)⁺ P), and is not used here.)
//
// Only F = V S^(1/2) enters, through F Fᵀ = XᵀX and FᵀF = S: any F of full
// column rank with F Fᵀ = XᵀX gives the same P, the reduced problem being
// the same up to an orthogonal change of basis (S² becomes (FᵀF)², ã = Fᵀδ,
// b̃ = Fᵀx̄, P = F C). When the Gram matrix is well conditioned (estimated
// condition number below 10⁸, so that the eigendecomposition would drop no
// direction), TCA takes the Cholesky factor of XᵀX (or F = Xᵀ when n < D)
// and needs no eigendecomposition but the last, of which only the m leading
// eigenvectors are formed. When it is not (constant or repeated features,
// or repeated rows when n < D) and the Gram matrix is larger than 512×512,
// the Cholesky factorisation with complete pivoting stands in for the
// eigendecomposition (see pivotedFactor): it drops the null directions as
// well, in a fraction of the time (1024 features: 0.9 s against 10 s,
// BenchmarkTCARankDeficient).
//
// Scale: the constraint WᵀKHKW = I fixes the embedded scatter; since any
// common factor gives the same subspace, TCA uses Wᵀ K H K W = n I, so
// that every component has unit variance over the training rows and the
// classifier's L2 penalty has the same meaning whatever the scale of the
// features. μ is in the units of K² (it competes with ‖ã‖², which grows
// like the fourth power of the features); with the linear kernel on
// features of order one it is a weak regulariser.
//
// Hyper-parameters. Pan et al. study the sensitivity of TCA to μ and to the
// number of components; the DaDiL paper does not report the values of its
// TCA baseline. TCA uses μ = 1 (DefaultTCAMu) and m = 30 components
// (DefaultTCAComponents), capped by r and by the number of positive
// eigenvalues λ.
type TCA struct {
	// Components is the number m of transfer components; zero means
	// DefaultTCAComponents. It must not be negative.
	Components int
	// Mu is the trade-off μ > 0; zero means DefaultTCAMu. It must not be
	// negative, NaN or infinite.
	Mu float64
	// Classifier configures the classifier; nil means the defaults of
	// package classify.
	Classifier classify.Trainer

	// Projection is set by Fit: the D×m matrix P of the embedding
	// z = Pᵀ x.
	Projection *mat.Dense

	model classify.Classifier
}

// Name returns "tca".
func (m *TCA) Name() string { return "tca" }

// Fit computes the transfer components of the pooled sources and the
// target and trains the classifier on the embedded sources.
func (m *TCA) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	target, classes := p.Target.X, p.Classes
	if m.Components < 0 {
		return fmt.Errorf("adapt: tca: Components = %d is negative", m.Components)
	}
	if math.IsNaN(m.Mu) || math.IsInf(m.Mu, 0) || m.Mu < 0 {
		return fmt.Errorf("adapt: tca: Mu = %g is not a non-negative number", m.Mu)
	}
	k, mu := m.Components, m.Mu
	if k == 0 {
		k = DefaultTCAComponents
	}
	if mu == 0 {
		mu = DefaultTCAMu
	}
	Xs, ys := p.PoolSources()
	P, err := tcaProjection(Xs, target, k, mu)
	if err != nil {
		return fmt.Errorf("adapt: tca: %w", err)
	}
	var Zs mat.Dense
	Zs.Mul(Xs, P)
	model, err := trainLabels(m.Classifier, &Zs, ys, classes, nil)
	if err != nil {
		return fmt.Errorf("adapt: tca: %w", err)
	}
	m.Projection = P
	m.model = model
	return nil
}

// Predict embeds the rows of X and classifies them.
func (m *TCA) Predict(X *mat.Dense) ([]int, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	Z, err := projectRows(X, nil, m.Projection)
	if err != nil {
		return nil, fmt.Errorf("adapt: tca: %w", err)
	}
	return named(m.Name())(m.model.Predict(Z))
}

// Proba embeds the rows of X and returns their class probabilities.
func (m *TCA) Proba(X *mat.Dense) (*mat.Dense, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	Z, err := projectRows(X, nil, m.Projection)
	if err != nil {
		return nil, fmt.Errorf("adapt: tca: %w", err)
	}
	return probaOf(m.Name(), m.model, Z)
}

// tcaProjection returns the D×m' projection P of linear-kernel TCA (see
// the TCA documentation) for the source rows Xs and target rows Xt.
func tcaProjection(Xs, Xt *mat.Dense, k int, mu float64) (*mat.Dense, error) {
	X, delta, mean := tcaStack(Xs, Xt)
	n, D := X.Dims()
	red, err := tcaReduce(X, delta, mean)
	if err != nil {
		return nil, err
	}
	T, u, kappa := tcaRescale(red.B, red.at, mu)
	vals, vec, err := leadingEigen(T, k)
	if err != nil {
		return nil, err
	}
	if !(vals[0] > 0) {
		return nil, errors.New("the data have no variance")
	}
	m := 0
	for m < len(vals) && vals[m] > gramRankTol*vals[0] {
		m++
	}
	// Columns of P: F c, c = R y √(n/λ).
	P := mat.NewDense(D, m, nil)
	y := make([]float64, len(red.at))
	for col := range m {
		vec(col, y)
		f := kappa * floats.Dot(u, y)
		floats.AddScaled(y, f, u) // (I + κûûᵀ) y
		P.SetCol(col, red.embed(y, math.Sqrt(float64(n)/vals[col])/math.Sqrt(mu)))
	}
	return P, nil
}

// tcaStack returns the n×D stacked rows X = [Xs; Xt], δ = x̄_S − x̄_T and the
// overall mean x̄.
func tcaStack(Xs, Xt *mat.Dense) (X *mat.Dense, delta, mean []float64) {
	ns, D := Xs.Dims()
	nt, _ := Xt.Dims()
	n := ns + nt
	X = mat.NewDense(n, D, nil)
	X.Slice(0, ns, 0, D).(*mat.Dense).Copy(Xs)
	X.Slice(ns, n, 0, D).(*mat.Dense).Copy(Xt)

	muS, muT, mean := make([]float64, D), make([]float64, D), make([]float64, D)
	for i := 0; i < ns; i++ {
		floats.Add(muS, Xs.RawRowView(i))
	}
	for i := 0; i < nt; i++ {
		floats.Add(muT, Xt.RawRowView(i))
	}
	floats.AddScaledTo(mean, muS, 1, muT)
	floats.Scale(1/float64(n), mean)
	floats.Scale(1/float64(ns), muS)
	floats.Scale(1/float64(nt), muT)
	delta = make([]float64, D)
	floats.SubTo(delta, muS, muT)
	return X, delta, mean
}

// tcaReduced is TCA's problem reduced to the r columns of a factor F
// (D×r, full column rank) with F Fᵀ = XᵀX: ã = Fᵀδ, b̃ = Fᵀx̄ and
// B = (FᵀF)² − n b̃ b̃ᵀ.
type tcaReduced struct {
	at, bt []float64
	B      *mat.SymDense
	// basis is F (D×r) for a Cholesky factor; V, with F = V S^(1/2) and
	// s the diagonal of S, for the eigendecomposition (s nil otherwise).
	basis *mat.Dense
	s     []float64
}

// embed returns the column F y·scale of P for the eigenvector y of T,
// with the sign convention of gramEigen (fixSign; y is overwritten).
func (red *tcaReduced) embed(y []float64, scale float64) []float64 {
	if red.s == nil {
		floats.Scale(scale, y)
	} else {
		for c := range y {
			y[c] *= scale * math.Sqrt(red.s[c])
		}
	}
	fixSign(y)
	D, r := red.basis.Dims()
	p := mat.NewVecDense(D, nil)
	p.MulVec(red.basis, mat.NewVecDense(r, y))
	return p.RawVector().Data
}

// tcaReduce reduces TCA's problem on the stacked rows X with δ and x̄ to
// a factor F (D×r, full column rank) with F Fᵀ = XᵀX: the columns of F
// span the range of K's feature map, and the reduced problem is the same
// for every such F up to an orthogonal change of basis. F is a Cholesky
// factor of the Gram matrix when it is well conditioned (pivoted for a
// large singular one), else F = V S^(1/2) from the eigendecomposition,
// FᵀF = S.
func tcaReduce(X *mat.Dense, delta, mean []float64) (*tcaReduced, error) {
	n, D := X.Dims()
	G := smallGram(X)
	F, FtF, ok := gramFactor(X, G)
	if !ok && min(n, D) > pivotedMinDim {
		F, FtF, ok = pivotedFactor(X, G)
	}
	if ok {
		return tcaReduceCholesky(F, FtF, delta, mean, n), nil
	}
	V, s, err := gramEigenOf(X, G, D)
	if err != nil {
		return nil, err
	}
	return tcaReduceEigen(V, s, delta, mean, n), nil
}

// tcaReduceCholesky reduces TCA's problem to the Cholesky factor F of
// n stacked rows, with FtF = FᵀF: no eigendecomposition.
func tcaReduceCholesky(F *mat.Dense, FtF *mat.SymDense, delta, mean []float64, n int) *tcaReduced {
	D, _ := F.Dims()
	r := FtF.SymmetricDim()
	red := &tcaReduced{at: make([]float64, r), bt: make([]float64, r), basis: F}
	mat.NewVecDense(r, red.at).MulVec(F.T(), mat.NewVecDense(D, delta))
	mat.NewVecDense(r, red.bt).MulVec(F.T(), mat.NewVecDense(D, mean))
	// B = (FᵀF)² − n b̃ b̃ᵀ.
	F2 := mat.NewDense(r, r, nil)
	linalg.Gram(F2, mat.DenseCopyOf(FtF)) // FtF FtFᵀ = (FᵀF)²
	red.B = mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			red.B.SetSym(i, j, F2.At(i, j)-float64(n)*red.bt[i]*red.bt[j])
		}
	}
	return red
}

// tcaReduceEigen reduces TCA's problem on n stacked rows to the factor
// F = V S^(1/2) of the eigendecomposition XᵀX = V S Vᵀ.
func tcaReduceEigen(V *mat.Dense, s, delta, mean []float64, n int) *tcaReduced {
	D, _ := V.Dims()
	r := len(s)
	// ã = S^(1/2) Vᵀ δ, b̃ = S^(1/2) Vᵀ x̄.
	red := &tcaReduced{at: make([]float64, r), bt: make([]float64, r), basis: V, s: s}
	at, bt := red.at, red.bt
	mat.NewVecDense(r, at).MulVec(V.T(), mat.NewVecDense(D, delta))
	mat.NewVecDense(r, bt).MulVec(V.T(), mat.NewVecDense(D, mean))
	for c := range s {
		h := math.Sqrt(s[c])
		at[c] *= h
		bt[c] *= h
	}
	// B = S² − n b̃ b̃ᵀ.
	red.B = mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			v := -float64(n) * bt[i] * bt[j]
			if i == j {
				v += s[i] * s[i]
			}
			red.B.SetSym(i, j, v)
		}
	}
	return red
}

// tcaRescale returns T = R B R with R = μ^(−1/2)(I + κûûᵀ), û = ã/‖ã‖ and
// κ = √(μ/(μ+‖ã‖²)) − 1 (û = 0, κ = 0 when ã = 0), computed as
// μ·T = B + κ(û wᵀ + w ûᵀ) + κ²(ûᵀw) ûûᵀ, w = B û; with û and κ.
func tcaRescale(B *mat.SymDense, at []float64, mu float64) (T *mat.SymDense, u []float64, kappa float64) {
	r := len(at)
	a2 := floats.Dot(at, at)
	u = make([]float64, r)
	if a2 > 0 {
		floats.ScaleTo(u, 1/math.Sqrt(a2), at)
		kappa = math.Sqrt(mu/(mu+a2)) - 1
	}
	w := make([]float64, r)
	mat.NewVecDense(r, w).MulVec(B, mat.NewVecDense(r, u))
	beta := floats.Dot(u, w)
	T = mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			v := B.At(i, j) + kappa*(u[i]*w[j]+w[i]*u[j]) + kappa*kappa*beta*u[i]*u[j]
			T.SetSym(i, j, v/mu)
		}
	}
	return T, u, kappa
}

// gramFactorCond is the largest estimated condition number (1-norm) of
// the Gram matrix for which gramFactor factors it: a hundred times below
// the 1/gramRankTol at which the eigendecomposition would drop directions
// (the 2-norm condition number, the ratio of the extreme eigenvalues, is
// at most the 1-norm one), so that both see the same subspace.
const gramFactorCond = 1e8

// pivotedMinDim is the order of the Gram matrix (XᵀX or XXᵀ) above which a
// singular or ill-conditioned one is factored by pivotedFactor rather than
// eigendecomposed: the eigendecomposition, with all its eigenvectors, takes
// about 10 s at 1024 and a minute at 2048 on one core, the pivoted
// Cholesky factorisation a fraction of that. Below it the
// eigendecomposition takes under a second and is kept. (A variable for the
// tests, which compare both paths.)
var pivotedMinDim = 512

// pivotedFactor returns F (D×r) with F Fᵀ = XᵀX up to the directions
// dropped, and FᵀF, from the Cholesky factorisation with complete pivoting
// of the Gram matrix G = smallGram(X), stopped once the largest remaining
// diagonal entry (the variance left in the best remaining direction) falls
// to gramRankTol times the largest diagonal entry of G. Like the
// eigendecomposition it drops the null directions of rank-deficient data
// (constant or repeated features, repeated rows), at the cost of a
// Cholesky factorisation. ok is false if G has no positive diagonal entry.
//
// With n ≥ D, Pᵀ XᵀX P = L Lᵀ and F = P L_r (the r columns computed).
// With n < D, Pᵀ XXᵀ P = L Lᵀ, so that XXᵀ = M Mᵀ with M = P L_r (n×r);
// then W = M R⁻ᵀ, R the Cholesky factor of MᵀM, makes W Wᵀ the projector
// onto the range of X, and F = Xᵀ W satisfies F Fᵀ = XᵀX, FᵀF = RᵀR.
func pivotedFactor(X *mat.Dense, G *mat.SymDense) (F *mat.Dense, FtF *mat.SymDense, ok bool) {
	n, D := X.Dims()
	m := G.SymmetricDim()
	maxDiag := 0.0
	for i := 0; i < m; i++ {
		maxDiag = math.Max(maxDiag, G.At(i, i))
	}
	if !(maxDiag > 0) {
		return nil, nil, false
	}
	A := mat.NewSymDense(m, nil)
	A.CopySym(G)
	piv := make([]int, m)
	// Pᵀ G P = Uᵀ U in the upper triangle, where SymDense keeps G.
	t, r, _ := lapack64.Pstrf(A.RawSymmetric(), piv, gramRankTol*maxDiag, make([]float64, 2*m))
	if r == 0 {
		return nil, nil, false
	}
	// M = P L_r with L = Uᵀ: row piv[i] of M holds U[c][i] for c < r.
	M := mat.NewDense(m, r, nil)
	for i := 0; i < m; i++ {
		row := M.RawRowView(piv[i])
		for c := 0; c <= min(i, r-1); c++ {
			row[c] = t.Data[c*t.Stride+i]
		}
	}
	if n >= D {
		return M, smallGram(M), true
	}
	var ch mat.Cholesky
	if !ch.Factorize(smallGram(M)) {
		return nil, nil, false
	}
	var R mat.TriDense
	ch.LTo(&R)
	// Wᵀ = R⁻¹ Mᵀ (r×n), then Fᵀ = Wᵀ X (r×D).
	Wt := mat.DenseCopyOf(M.T())
	blas64.Trsm(blas.Left, blas.NoTrans, 1, R.RawTriangular(), Wt.RawMatrix())
	Ft := mat.NewDense(r, D, nil)
	linalg.MulABT(Ft, Wt, mat.DenseCopyOf(X.T()))
	F = mat.DenseCopyOf(Ft.T())
	return F, smallGram(F), true
}

// gramFactor returns F (D×r, full column rank) with F Fᵀ = XᵀX, and FᵀF,
// when the Gram matrix S = smallGram(X) of X (n×D) is well conditioned: F = L from the
// Cholesky factorisation XᵀX = L Lᵀ when n ≥ D, F = Xᵀ when n < D (then
// FᵀF = XXᵀ). ok is false when the Gram matrix is singular or its
// estimated condition number exceeds gramFactorCond; TCA then uses the
// eigendecomposition (gramEigen), which drops the null directions.
func gramFactor(X *mat.Dense, S *mat.SymDense) (F *mat.Dense, FtF *mat.SymDense, ok bool) {
	n, D := X.Dims()
	var ch mat.Cholesky
	if !ch.Factorize(S) || !(ch.Cond() < gramFactorCond) {
		return nil, nil, false
	}
	if n < D {
		return mat.DenseCopyOf(X.T()), S, true
	}
	var L mat.TriDense
	ch.LTo(&L)
	F = mat.DenseCopyOf(&L)
	return F, smallGram(F), true
}
