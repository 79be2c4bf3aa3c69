package adapt

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dadil/dadil/dataset"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/internal/linalg"
)

// DefaultSAComponents is the default subspace dimension d of SA.
const DefaultSAComponents = 64

// SA is Subspace Alignment (Fernando, Habrard, Sebban & Tuytelaars,
// "Unsupervised Visual Domain Adaptation Using Subspace Alignment", ICCV
// 2013), applied to the pooled sources as in the baselines of the DaDiL
// paper (Montesuma, Ngolè Mboula & Souloumiac, ECAI 2023, Table 2).
//
// Each domain is centred on its own mean and described by the d leading
// principal directions of its rows: orthonormal bases P_S (pooled sources)
// and P_T (target), both D×d. The source basis is aligned on the target
// one by the minimiser of the Frobenius distance ‖P_S M − P_T‖_F, which
// for orthonormal P_S is
//
//	M = P_Sᵀ P_T   (d×d),
//
// and the domains are represented in the target subspace,
//
//	source rows  (x − μ_S)ᵀ P_S M,      target rows  (x − μ_T)ᵀ P_T.
//
// The classifier (package classify) is trained on the aligned source rows
// with their labels; Predict maps the rows it is given as target rows,
// with the target mean and basis of Fit. When the source and the target
// are the same data, M = I and SA amounts to source-only training on the
// d leading principal components.
//
// Hyper-parameters. Fernando et al. select d with a stability bound on
// the deviation of M, which makes d data dependent; the DaDiL paper does
// not report the d of its SA baseline. SA uses a fixed d = Components
// (default DefaultSAComponents = 64, a choice of this package), capped by
// the number of principal directions of positive variance of either
// domain (at most min(n−1, D) for n rows of dimension D); see
// docs/defaults.md for other values of d. Features are used as given
// (callers scale them) and centred per domain.
type SA struct {
	// Components is the subspace dimension d; zero means
	// DefaultSAComponents. It must not be negative.
	Components int
	// Classifier configures the classifier; nil means the defaults of
	// package classify.
	Classifier classify.Trainer

	// The fields below are set by Fit.

	// SourceMean and TargetMean are the domain means μ_S and μ_T.
	SourceMean, TargetMean []float64
	// SourceBasis and TargetBasis are P_S and P_T (D×d, orthonormal
	// columns in decreasing order of variance).
	SourceBasis, TargetBasis *mat.Dense
	// Alignment is M = P_Sᵀ P_T (d×d).
	Alignment *mat.Dense

	model classify.Classifier
}

// Name returns "sa".
func (m *SA) Name() string { return "sa" }

// Fit computes the two subspaces and the alignment and trains the
// classifier on the aligned pooled sources.
func (m *SA) Fit(p *dataset.Problem) error {
	if err := checkProblem(m, p); err != nil {
		return err
	}
	target, classes := p.Target.X, p.Classes
	if m.Components < 0 {
		return fmt.Errorf("adapt: sa: Components = %d is negative", m.Components)
	}
	d := m.Components
	if d == 0 {
		d = DefaultSAComponents
	}
	Xs, ys := p.PoolSources()
	muS, Xsc := centreRows(Xs)
	muT, Xtc := centreRows(target)
	Ps, err := principalBasis(Xsc, d)
	if err != nil {
		return fmt.Errorf("adapt: sa: sources: %w", err)
	}
	Pt, err := principalBasis(Xtc, d)
	if err != nil {
		return fmt.Errorf("adapt: sa: target: %w", err)
	}
	_, ks := Ps.Dims()
	_, kt := Pt.Dims()
	if k := min(ks, kt); k < ks || k < kt {
		Ps = Ps.Slice(0, Ps.RawMatrix().Rows, 0, k).(*mat.Dense)
		Pt = Pt.Slice(0, Pt.RawMatrix().Rows, 0, k).(*mat.Dense)
	}
	M := new(mat.Dense)
	M.Mul(Ps.T(), Pt)
	var PsM, Zs mat.Dense
	PsM.Mul(Ps, M)
	Zs.Mul(Xsc, &PsM)
	model, err := trainLabels(m.Classifier, &Zs, ys, classes, nil)
	if err != nil {
		return fmt.Errorf("adapt: sa: %w", err)
	}
	m.SourceMean, m.TargetMean = muS, muT
	m.SourceBasis, m.TargetBasis = mat.DenseCopyOf(Ps), mat.DenseCopyOf(Pt)
	m.Alignment = M
	m.model = model
	return nil
}

// Predict projects the rows of X on the target subspace and classifies
// them.
func (m *SA) Predict(X *mat.Dense) ([]int, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	Z, err := projectRows(X, m.TargetMean, m.TargetBasis)
	if err != nil {
		return nil, fmt.Errorf("adapt: sa: %w", err)
	}
	return named(m.Name())(m.model.Predict(Z))
}

// Proba projects the rows of X on the target subspace and returns their
// class probabilities.
func (m *SA) Proba(X *mat.Dense) (*mat.Dense, error) {
	if m.model == nil {
		return nil, ErrNotFitted
	}
	Z, err := projectRows(X, m.TargetMean, m.TargetBasis)
	if err != nil {
		return nil, fmt.Errorf("adapt: sa: %w", err)
	}
	return probaOf(m.Name(), m.model, Z)
}

// projectRows returns (X − 1μᵀ) P, or an error when X is empty or has
// the wrong number of columns. A nil mu means no centring.
func projectRows(X *mat.Dense, mu []float64, P *mat.Dense) (*mat.Dense, error) {
	if X == nil || X.IsEmpty() {
		return nil, errors.New("no rows to classify")
	}
	D, _ := P.Dims()
	n, d := X.Dims()
	if d != D {
		return nil, fmt.Errorf("X has %d features, the training data %d", d, D)
	}
	src := X
	if mu != nil {
		src = mat.NewDense(n, d, nil)
		for i := 0; i < n; i++ {
			floats.SubTo(src.RawRowView(i), X.RawRowView(i), mu)
		}
	}
	Z := new(mat.Dense)
	Z.Mul(src, P)
	return Z, nil
}

// centreRows returns the mean of the rows of X and X − 1μᵀ.
func centreRows(X *mat.Dense) ([]float64, *mat.Dense) {
	n, d := X.Dims()
	mu := make([]float64, d)
	for i := 0; i < n; i++ {
		floats.Add(mu, X.RawRowView(i))
	}
	floats.Scale(1/float64(n), mu)
	Xc := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		floats.SubTo(Xc.RawRowView(i), X.RawRowView(i), mu)
	}
	return mu, Xc
}

// gramRankTol is the relative threshold below which eigenvalues of a Gram
// matrix count as zero: eigenvalues are computed with an absolute error of
// a modest multiple of ε·λ_max, so the directions of eigenvalues below
// gramRankTol·λ_max are dominated by rounding.
const gramRankTol = 1e-10

// principalBasis returns the k leading principal directions of the
// (centred) rows of X as the columns of a D×k' matrix, k' = min(k, number
// of eigenvalues above gramRankTol·λ_max).
func principalBasis(X *mat.Dense, k int) (*mat.Dense, error) {
	V, _, err := gramEigen(X, k)
	return V, err
}

// leadingEigen returns the min(k, n) largest eigenvalues of the symmetric
// n×n matrix G in decreasing order, and vec(c, dst), which copies the unit
// eigenvector of vals[c] into dst. When they are few (k < n/4) only those
// eigenvectors are formed (linalg.TopEigenSym, several times faster for
// large n); otherwise all are (mat.EigenSym).
func leadingEigen(G *mat.SymDense, k int) (vals []float64, vec func(c int, dst []float64), err error) {
	n := G.SymmetricDim()
	if k < n/4 {
		top, V, ok := linalg.TopEigenSym(G, k)
		if !ok {
			return nil, nil, errors.New("eigendecomposition did not converge")
		}
		return top, func(c int, dst []float64) { mat.Col(dst, c, V) }, nil
	}
	var eig mat.EigenSym
	if !eig.Factorize(G, true) {
		return nil, nil, errors.New("eigendecomposition did not converge")
	}
	vals = eig.Values(nil)
	slices.Reverse(vals)
	var V mat.Dense
	eig.VectorsTo(&V)
	return vals[:min(k, n)], func(c int, dst []float64) { mat.Col(dst, n-1-c, &V) }, nil
}

// gramEigen returns the at most k leading eigenpairs (λ_1 ≥ λ_2 ≥ …) of
// the D×D Gram matrix XᵀX of the n×D matrix X: eigenvectors as the
// columns of V (D×k') and eigenvalues s, keeping only those above
// gramRankTol·λ_1. When n < D it decomposes the smaller n×n matrix
// XXᵀ = U Λ Uᵀ instead and returns V = XᵀU Λ^(−1/2), which has the same
// non-zero eigenvalues. The Gram matrix is computed with the kernels of
// internal/linalg, and only the eigenvectors needed are formed when they
// are few (leadingEigen). The sign of every eigenvector is fixed so that
// its entry of largest magnitude is positive.
func gramEigen(X *mat.Dense, k int) (*mat.Dense, []float64, error) {
	return gramEigenOf(X, smallGram(X), k)
}

// smallGram returns the smaller Gram matrix of the n×D matrix X: XXᵀ when
// n < D, XᵀX otherwise, on the kernels of internal/linalg.
func smallGram(X *mat.Dense) *mat.SymDense {
	n, D := X.Dims()
	m := min(n, D)
	G := mat.NewDense(m, m, nil)
	if n < D {
		linalg.Gram(G, X)
	} else {
		linalg.GramCols(G, X)
	}
	return mat.NewSymDense(m, G.RawMatrix().Data)
}

// fixSign flips v, if needed, so that its entry of largest magnitude is
// positive: the package's sign convention for eigenvectors, which are
// defined up to sign, so that bases do not flip between computations.
func fixSign(v []float64) {
	if floats.Max(v) < -floats.Min(v) {
		floats.Scale(-1, v)
	}
}

// gramEigenOf is gramEigen given G = smallGram(X).
func gramEigenOf(X *mat.Dense, G *mat.SymDense, k int) (*mat.Dense, []float64, error) {
	n, D := X.Dims()
	byRows := n < D
	m := min(n, D)
	vals, vec, err := leadingEigen(G, k)
	if err != nil {
		return nil, nil, err
	}
	if !(vals[0] > 0) {
		return nil, nil, errors.New("the data have no variance")
	}
	r := 0
	for r < min(k, len(vals)) && vals[r] > gramRankTol*vals[0] {
		r++
	}
	V := mat.NewDense(D, r, nil)
	s := vals[:r]
	col := make([]float64, D)
	u := make([]float64, m)
	for c := range r {
		if byRows {
			vec(c, u)
			cv := mat.NewVecDense(D, col)
			cv.MulVec(X.T(), mat.NewVecDense(m, u))
			floats.Scale(1/math.Sqrt(vals[c]), col)
		} else {
			vec(c, col)
		}
		fixSign(col)
		V.SetCol(c, col)
	}
	return V, s, nil
}
