package linalg

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

// TopEigenSym returns the k largest eigenvalues of the symmetric matrix A
// (n×n, 1 ≤ k ≤ n), in decreasing order, and unit eigenvectors as the
// columns of an n×k matrix, mutually orthogonal. It reports false if the
// eigenvalue iteration did not converge.
//
// Only k eigenvectors are formed, so for k ≪ n it is several times faster
// than mat.EigenSym, whose QR iteration rotates all n of them:
//
//  1. A = Q T Qᵀ with T symmetric tridiagonal (Householder reflections,
//     LAPACK's Dsytrd);
//  2. all eigenvalues of T by the QR iteration without vectors (Dsterf);
//  3. the k eigenvectors z of T by inverse iteration, as LAPACK's Dstein:
//     solve (T − λI) z_{t+1} = z_t from a random start, with the LU
//     factorisation of T − λI with partial pivoting (pivots below ε‖T‖
//     replaced by ε‖T‖); eigenvalues closer than 10⁻³‖T‖ form a cluster
//     whose vectors are orthogonalised against each other at every step,
//     and equal eigenvalues are separated by 10ε‖T‖ first;
//  4. v = Q z.
//
// The random starts are seeded, so the result is deterministic.
func TopEigenSym(A *mat.SymDense, k int) ([]float64, *mat.Dense, bool) {
	n := A.SymmetricDim()
	if k < 1 || k > n {
		panic("linalg: TopEigenSym: k outside [1, n]")
	}
	impl := gonum.Implementation{}
	a := make([]float64, n*n)
	raw := A.RawSymmetric()
	for i := range n {
		for j := i; j < n; j++ {
			a[i*n+j] = raw.Data[i*raw.Stride+j]
		}
	}
	if raw.Uplo == blas.Lower {
		for i := range n {
			for j := i; j < n; j++ {
				a[i*n+j] = raw.Data[j*raw.Stride+i]
			}
		}
	}
	d := make([]float64, n)
	e := make([]float64, max(n-1, 1))
	tau := make([]float64, max(n-1, 1))
	work := []float64{0}
	impl.Dsytrd(blas.Upper, n, a, n, d, e, tau, work, -1)
	work = make([]float64, int(work[0]))
	impl.Dsytrd(blas.Upper, n, a, n, d, e, tau, work, len(work))

	vals := slices.Clone(d)
	if !impl.Dsterf(n, vals, slices.Clone(e)) {
		return nil, nil, false
	}
	slices.Reverse(vals)
	vals = vals[:k]

	Z := tridiagVectors(d, e[:n-1], vals)

	work = []float64{0}
	impl.Dorgtr(blas.Upper, n, a, n, tau, work, -1)
	work = make([]float64, int(work[0]))
	impl.Dorgtr(blas.Upper, n, a, n, tau, work, len(work))
	V := mat.NewDense(n, k, nil)
	MulABT(V, mat.NewDense(n, n, a), Z)
	return vals, V, true
}

// tridiagVectors returns, as the rows of a len(vals)×n matrix, unit
// eigenvectors of the symmetric tridiagonal matrix with diagonal d and
// off-diagonal e for its eigenvalues vals, given in decreasing order, by
// inverse iteration (step 3 of TopEigenSym).
func tridiagVectors(d, e, vals []float64) *mat.Dense {
	n, k := len(d), len(vals)
	tnorm := 0.0
	for i := range n {
		r := math.Abs(d[i])
		if i > 0 {
			r += math.Abs(e[i-1])
		}
		if i < n-1 {
			r += math.Abs(e[i])
		}
		tnorm = max(tnorm, r)
	}
	Z := mat.NewDense(k, n, nil)
	if n == 1 {
		Z.Set(0, 0, 1)
		return Z
	}
	const eps = 0x1p-52
	ortol := 1e-3 * tnorm
	pert := 10 * eps * tnorm
	tiny := eps * tnorm
	if tiny == 0 {
		tiny = math.SmallestNonzeroFloat64
	}
	var lu tridiagLU
	rng := rand.New(rand.NewPCG(0x7e1, 0x57e))
	cluster := 0 // first row of the current cluster
	shift := 0.0 // the shift used for the previous eigenvalue
	for j, lam := range vals {
		if j > 0 {
			if vals[j-1]-lam > ortol {
				cluster = j
			}
			// Equal (to rounding) eigenvalues get distinct shifts.
			if shift-lam < pert {
				lam = shift - pert
			}
		}
		shift = lam
		lu.factor(d, e, lam, tiny)
		z := Z.RawRowView(j)
		for i := range z {
			z[i] = 2*rng.Float64() - 1
		}
		for range 5 {
			normalize(z)
			lu.solve(z)
			for c := cluster; c < j; c++ {
				// Twice is enough (Kahan's "twice is enough").
				for range 2 {
					y := Z.RawRowView(c)
					s := Dot(z, y)
					for i := range z {
						z[i] -= s * y[i]
					}
				}
			}
		}
		normalize(z)
	}
	return Z
}

func normalize(z []float64) {
	s := 0.0
	for _, v := range z {
		s = math.Max(s, math.Abs(v))
	}
	if s == 0 {
		z[0] = 1
		return
	}
	ss := 0.0
	for i := range z {
		z[i] /= s
		ss += z[i] * z[i]
	}
	ss = 1 / math.Sqrt(ss)
	for i := range z {
		z[i] *= ss
	}
}

// tridiagLU is the LU factorisation with partial pivoting of a tridiagonal
// matrix (LAPACK's Dgttrf): L has unit diagonal and multipliers dl, U has
// diagonal du0 and two superdiagonals du1, du2; swap[i] records the
// interchange of rows i and i+1.
type tridiagLU struct {
	dl, du0, du1, du2 []float64
	swap              []bool
}

// factor factorises T − λI for T with diagonal d and off-diagonal e,
// replacing pivots smaller than tiny in magnitude by ±tiny.
func (f *tridiagLU) factor(d, e []float64, lam, tiny float64) {
	n := len(d)
	f.dl = append(f.dl[:0], e...)
	f.du1 = append(f.du1[:0], e...)
	f.du2 = append(f.du2[:0], make([]float64, max(n-2, 0))...)
	f.swap = append(f.swap[:0], make([]bool, max(n-1, 0))...)
	f.du0 = f.du0[:0]
	for _, v := range d {
		f.du0 = append(f.du0, v-lam)
	}
	dd, dl, du, du2 := f.du0, f.dl, f.du1, f.du2
	for i := 0; i < n-1; i++ {
		if math.Abs(dd[i]) >= math.Abs(dl[i]) {
			// No interchange.
			if dd[i] != 0 {
				fact := dl[i] / dd[i]
				dl[i] = fact
				dd[i+1] -= fact * du[i]
			}
			continue
		}
		// Interchange rows i and i+1.
		fact := dd[i] / dl[i]
		dd[i] = dl[i]
		dl[i] = fact
		temp := du[i]
		du[i] = dd[i+1]
		dd[i+1] = temp - fact*dd[i+1]
		if i < n-2 {
			du2[i] = du[i+1]
			du[i+1] = -fact * du[i+1]
		}
		f.swap[i] = true
	}
	for i, v := range dd {
		if math.Abs(v) < tiny {
			dd[i] = math.Copysign(tiny, v)
		}
	}
}

// solve overwrites b with (T − λI)⁻¹ b.
func (f *tridiagLU) solve(b []float64) {
	n := len(b)
	for i := 0; i < n-1; i++ {
		if !f.swap[i] {
			b[i+1] -= f.dl[i] * b[i]
			continue
		}
		temp := b[i]
		b[i] = b[i+1]
		b[i+1] = temp - f.dl[i]*b[i]
	}
	b[n-1] /= f.du0[n-1]
	if n > 1 {
		b[n-2] = (b[n-2] - f.du1[n-2]*b[n-1]) / f.du0[n-2]
	}
	for i := n - 3; i >= 0; i-- {
		b[i] = (b[i] - f.du1[i]*b[i+1] - f.du2[i]*b[i+2]) / f.du0[i]
	}
}
