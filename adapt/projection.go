package adapt

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// Projection maps rows of D features onto q principal directions of the
// rows it was fitted on,
//
//	z = Vᵀ (x − μ),
//
// μ their mean and V (D×q, orthonormal columns) the leading eigenvectors
// of their covariance, in decreasing order of variance. It keeps
// Euclidean distances within the subspace, so that a method using it
// sees the same geometry, without the directions of least variance.
type Projection struct {
	// Mean is μ (D values).
	Mean []float64
	// Basis is Vᵀ (q×D): one principal direction per row, each with its
	// entry of largest magnitude positive.
	Basis *mat.Dense
}

// Dims returns the number of features D and of principal directions q.
func (p *Projection) Dims() (features, directions int) {
	q, d := p.Basis.Dims()
	return d, q
}

// Apply returns the n×q projections of the rows of X (n×D).
func (p *Projection) Apply(X *mat.Dense) (*mat.Dense, error) {
	if X == nil || X.IsEmpty() {
		return nil, errors.New("no rows to project")
	}
	n, d := X.Dims()
	D, q := p.Dims()
	if d != D {
		return nil, fmt.Errorf("the rows have %d features, the projection %d", d, D)
	}
	Z := mat.NewDense(n, q, nil)
	linalg.MulABT(Z, X, p.Basis)
	c := make([]float64, q) // Vᵀμ
	for j := range q {
		c[j] = floats.Dot(p.Basis.RawRowView(j), p.Mean)
	}
	for i := range n {
		floats.Sub(Z.RawRowView(i), c)
	}
	return Z, nil
}

// Inverse returns the D-feature rows μ + V z of the projections z, the
// rows of Z (n×q): the points of the subspace that project on them.
func (p *Projection) Inverse(Z *mat.Dense) *mat.Dense {
	n, _ := Z.Dims()
	D, _ := p.Dims()
	X := mat.NewDense(n, D, nil)
	X.Mul(Z, p.Basis)
	for i := range n {
		floats.Add(X.RawRowView(i), p.Mean)
	}
	return X
}

// InverseSpread returns, for the standard deviations S (n×q) of n
// Gaussians with diagonal covariances on the principal directions, the
// standard deviations of each of their D features: the square roots of
// the diagonal of V diag(s²) Vᵀ, √(Σ_c V_jc² s_c²). (Their covariances
// over the features are not diagonal.)
func (p *Projection) InverseSpread(S *mat.Dense) *mat.Dense {
	n, q := S.Dims()
	D, _ := p.Dims()
	out := mat.NewDense(n, D, nil)
	for i := range n {
		o := out.RawRowView(i)
		for c := range q {
			s := S.At(i, c)
			for j, v := range p.Basis.RawRowView(c) {
				o[j] += v * v * s * s
			}
		}
		for j := range o {
			o[j] = math.Sqrt(o[j])
		}
	}
	return out
}

// Settings of FitProjection.
const (
	// projectionRows is the largest number of rows whose covariance
	// FitProjection decomposes; beyond it, that many are drawn.
	projectionRows = 8000
	// projectionSampleSize bounds the entries of the rows drawn (512 MiB
	// of them): with more features, fewer rows than projectionRows.
	projectionSampleSize = 1 << 26
	// projectionCovFeatures is the most features whose covariance
	// FitProjection forms (128 MiB at 4096).
	projectionCovFeatures = 4096
	// projectionOversample and projectionPasses are the extra directions
	// and the passes of the subspace iteration.
	projectionOversample = 10
	projectionPasses     = 4
)

// FitProjection fits the Projection onto the q leading principal
// directions of the rows of every matrix of Xs pooled (all with D > q
// columns). μ is the mean of all the rows; the covariance is that of all
// of them, or of projectionRows of them (fewer beyond 8192 features, so
// that the draw holds at most 2²⁶ numbers) drawn with seed when there are
// more. Directions of variance below gramRankTol times the largest are
// dropped, so that Basis may have fewer than q rows.
//
// The directions come from a randomised subspace iteration (Halko,
// Martinsson & Tropp, SIAM Review 2011, Algorithms 4.4 and 5.3) on the
// D×D covariance C: q + 10 Gaussian directions Ω (seeded) are replaced
// four times by C Ω, orthonormalised, and the eigenvectors of the small
// matrix QᵀCQ give V = QU. Its cost is that of the covariance and of a
// few products of C with q + 10 vectors, not of C's eigendecomposition,
// and the result does not depend on the number of threads. Beyond 4096
// features C is not formed (covarianceProduct).
func FitProjection(Xs []*mat.Dense, q int, seed uint64) (*Projection, error) {
	if len(Xs) == 0 || q < 1 {
		return nil, fmt.Errorf("adapt: projection: %d matrices, %d directions", len(Xs), q)
	}
	_, D := Xs[0].Dims()
	if q >= D {
		return nil, fmt.Errorf("adapt: projection: %d directions of %d features", q, D)
	}
	S, mu := projectionSample(Xs, D, seed)
	mulC := covarianceProduct(S)
	k := min(q+projectionOversample, D)
	Q := mat.NewDense(k, D, nil) // rows: Ωᵀ, then the iterates' bases
	r := rand.New(rand.NewPCG(seed, 0x9ca))
	for i := range k {
		for j := range D {
			Q.Set(i, j, r.NormFloat64())
		}
	}
	Y := mat.NewDense(k, D, nil)
	orthonormaliseRows(Q)
	for range projectionPasses {
		mulC(Y, Q)
		Q, Y = Y, Q
		orthonormaliseRows(Q)
	}
	mulC(Y, Q)
	B := mat.NewDense(k, k, nil)
	linalg.MulABT(B, Y, Q) // QCQᵀ
	basis, err := ritzBasis(B, Q, q)
	if err != nil {
		return nil, fmt.Errorf("adapt: projection: %w", err)
	}
	return &Projection{Mean: mu, Basis: basis}, nil
}

// covarianceProduct returns mul(Y, Q), which sets the rows of Y (k×D) to
// (C Qᵀ)ᵀ = Q C for the rows of Q, C = SᵀS the covariance of the centred
// rows S. With at most projectionCovFeatures features it forms C once
// (D² numbers); beyond, it computes (S Qᵀ)ᵀ S at every call instead, so
// that memory stays linear in D.
func covarianceProduct(S *mat.Dense) func(Y, Q *mat.Dense) {
	n, D := S.Dims()
	if D <= projectionCovFeatures {
		C := mat.NewDense(D, D, nil)
		linalg.GramCols(C, S)
		return func(Y, Q *mat.Dense) { linalg.MulABT(Y, Q, C) } // C symmetric
	}
	return func(Y, Q *mat.Dense) {
		k, _ := Q.Dims()
		T := mat.NewDense(n, k, nil)
		linalg.MulABT(T, S, Q) // S Qᵀ
		Y.Mul(T.T(), S)
	}
}

// projectionSample returns the rows of Xs pooled, or projectionRows of
// them drawn with seed (in their order), centred on the mean μ of all the
// rows, and μ.
func projectionSample(Xs []*mat.Dense, D int, seed uint64) (*mat.Dense, []float64) {
	mu := make([]float64, D)
	n := 0
	for _, X := range Xs {
		r, _ := X.Dims()
		for i := range r {
			floats.Add(mu, X.RawRowView(i))
		}
		n += r
	}
	floats.Scale(1/float64(n), mu)
	most := max(1, min(projectionRows, projectionSampleSize/D))
	keep := make([]int, 0, min(n, most))
	if n <= most {
		for i := range n {
			keep = append(keep, i)
		}
	} else {
		keep = rand.New(rand.NewPCG(seed, 0x9cb)).Perm(n)[:most]
		slices.Sort(keep)
	}
	S := mat.NewDense(len(keep), D, nil)
	X, first := 0, 0 // the matrix of the next kept row, and its first pooled index
	for o, i := range keep {
		for r, _ := Xs[X].Dims(); i >= first+r; r, _ = Xs[X].Dims() {
			first += r
			X++
		}
		floats.SubTo(S.RawRowView(o), Xs[X].RawRowView(i-first), mu)
	}
	return S, mu
}

// orthonormaliseRows makes the rows of Q orthonormal by modified
// Gram–Schmidt, twice; a row that is (numerically) in the span of the
// rows before it becomes zero.
func orthonormaliseRows(Q *mat.Dense) {
	k, _ := Q.Dims()
	scale := 0.0
	for range 2 {
		for i := range k {
			qi := Q.RawRowView(i)
			for j := range i {
				qj := Q.RawRowView(j)
				floats.AddScaled(qi, -floats.Dot(qi, qj), qj)
			}
			nrm := floats.Norm(qi, 2)
			scale = max(scale, nrm)
			if nrm <= 1e-12*scale {
				clear(qi)
				continue
			}
			floats.Scale(1/nrm, qi)
		}
	}
}

// ritzBasis returns the q leading Ritz vectors Uᵀ Q of the k×k matrix
// B = QCQᵀ (Q with orthonormal or zero rows), as rows, in decreasing order
// of their Ritz values, without those below gramRankTol times the
// largest, each with its entry of largest magnitude positive.
func ritzBasis(B, Q *mat.Dense, q int) (*mat.Dense, error) {
	k, D := Q.Dims()
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(k, symmetrise(B)), true) {
		return nil, errors.New("eigendecomposition did not converge")
	}
	vals := eig.Values(nil) // ascending
	if !(vals[k-1] > 0) {
		return nil, errors.New("the rows have no variance")
	}
	var U mat.Dense
	eig.VectorsTo(&U)
	r := 0
	for r < q && vals[k-1-r] > gramRankTol*vals[k-1] {
		r++
	}
	basis := mat.NewDense(r, D, nil)
	u := make([]float64, k)
	for c := range r {
		mat.Col(u, k-1-c, &U)
		v := basis.RawRowView(c)
		for i, w := range u {
			floats.AddScaled(v, w, Q.RawRowView(i))
		}
		floats.Scale(1/floats.Norm(v, 2), v)
		fixSign(v)
	}
	return basis, nil
}

// symmetrise returns the entries of (B + Bᵀ)/2, row-major.
func symmetrise(B *mat.Dense) []float64 {
	k, _ := B.Dims()
	s := make([]float64, k*k)
	for i := range k {
		for j := range k {
			s[i*k+j] = (B.At(i, j) + B.At(j, i)) / 2
		}
	}
	return s
}
