package barycenter

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// Stack holds K measures of n uniformly weighted points in R^d, optionally
// labeled over c classes, stacked for UniformSolver: row t = k·n + l of A
// (and of YA) is point l of measure k, written a_t or a_kl below.
//
// Fill A and YA (directly or with SetMeasure), then call Prepare before
// solving; after any change of A, call Prepare again.
type Stack struct {
	// A holds the K·n stacked points, one per row ((K·n)×d).
	A *mat.Dense
	// YA holds their soft labels ((K·n)×c), or is nil for an unlabeled
	// stack (c = 0).
	YA *mat.Dense
	// NoGram makes Prepare compute the inner products directly whatever
	// the number of runs: for stacks whose (K·n)² Gram matrix would not fit
	// in memory.
	NoGram bool

	k, n, d, c int
	gram       *mat.Dense // A Aᵀ when Prepare chose it, else nil
	norm       []float64  // ‖a_t‖²
	prepared   bool
}

// NewStack returns a stack of k measures of n points in R^d with labels
// over c classes (c = 0 for unlabeled measures), all zero. It panics if k,
// n or d is less than 1 or c is negative.
func NewStack(k, n, d, c int) *Stack {
	if k < 1 || n < 1 || d < 1 || c < 0 {
		panic(fmt.Sprintf("barycenter: invalid stack shape k=%d n=%d d=%d c=%d", k, n, d, c))
	}
	s := &Stack{k: k, n: n, d: d, c: c, A: mat.NewDense(k*n, d, nil), norm: make([]float64, k*n)}
	if c > 0 {
		s.YA = mat.NewDense(k*n, c, nil)
	}
	return s
}

// Dims returns the number of measures k, their number of points n, the
// dimension d and the number of classes c (0 for an unlabeled stack).
func (s *Stack) Dims() (k, n, d, c int) { return s.k, s.n, s.d, s.c }

// SetMeasure copies the n×d points X of measure k, and its n×c labels Y,
// into the stack; Y must be nil exactly when the stack is unlabeled.
// SetMeasure panics with mat.ErrShape when a shape does not match.
func (s *Stack) SetMeasure(k int, X, Y mat.Matrix) {
	if r, d := X.Dims(); r != s.n || d != s.d || k < 0 || k >= s.k || (Y == nil) != (s.c == 0) {
		panic(mat.ErrShape)
	}
	if Y != nil {
		if r, c := Y.Dims(); r != s.n || c != s.c {
			panic(mat.ErrShape)
		}
		s.YA.Slice(k*s.n, (k+1)*s.n, 0, s.c).(*mat.Dense).Copy(Y)
	}
	s.A.Slice(k*s.n, (k+1)*s.n, 0, s.d).(*mat.Dense).Copy(X)
}

// usesGram reports whether Prepare computes the Gram matrix of a stack of
// k measures for runs barycenters.
func usesGram(k, runs int) bool { return 9*runs > 2*k }

// Prepare readies the stack, once A is filled, for runs barycenters: it
// computes the squared norms ‖a_t‖² and, when that is cheaper and NoGram
// is not set, the Gram matrix G = A Aᵀ (see UniformSolver). A barycenter
// costs about 2.25·n rows of K·n inner products computed directly, against
// K·n/2 such rows for the Gram matrix shared by all runs, so the Gram matrix
// is computed when 4.5·runs > K.
func (s *Stack) Prepare(runs int) {
	s.prepared = true
	if !s.NoGram && usesGram(s.k, runs) {
		m := s.k * s.n
		if s.gram == nil {
			s.gram = mat.NewDense(m, m, nil)
		}
		linalg.Gram(s.gram, s.A)
		for i := range s.norm {
			s.norm[i] = s.gram.At(i, i)
		}
		return
	}
	s.gram = nil
	// The same dot products as linalg.MulABT's: a support point equal
	// to a stacked point has cost exactly zero to it.
	for t := range s.norm {
		a := s.A.RawRowView(t)
		s.norm[t] = linalg.Dot(a, a)
	}
}
