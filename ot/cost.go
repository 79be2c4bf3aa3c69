package ot

import (
	"fmt"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// SqEuclidean writes into dst the n×m matrix of squared Euclidean distances
// between the rows x_i of X (n×d) and the rows y_j of Y (m×d),
//
//	C_ij = ‖x_i − y_j‖² = ‖x_i − μ‖² + ‖y_j − μ‖² − 2⟨x_i − μ, y_j − μ⟩,
//
// computed through the right-hand side, where μ is the mean of all n + m
// points: the inner products form the matrix (X − 1μᵀ)(Y − 1μᵀ)ᵀ, obtained
// with one matrix product (BLAS dgemm, via mat.Dense.Mul, so a faster
// implementation registered with blas64.Use is picked up). Centring on μ
// costs O((n+m)d) time and a centred copy of X and Y, and makes the
// absolute error of C_ij a few ulps of ‖x_i − μ‖² + ‖y_j − μ‖² instead of
// ‖x_i‖² + ‖y_j‖², which matters for data far from the origin. Rounding can
// still make the right-hand side slightly negative for nearly coincident
// points; such entries are clamped to 0, so C ≥ 0. When X and Y are the same
// *mat.Dense the diagonal is set to exactly zero.
//
// dst must be either empty (the zero value, or a matrix after Reset), in
// which case it is resized to n×m, or already n×m, in which case it is
// overwritten. dst must not share storage with X or Y.
//
// SqEuclidean returns an error, and leaves dst unchanged, when X and Y have
// different numbers of columns, when either is empty, when dst is X or Y or
// when dst has the wrong shape. Entries of X and Y are not checked: a NaN or
// infinite coordinate makes the costs NaN or +Inf (in general all of them,
// through μ; never a negative value), which Sinkhorn and EMD then reject.
func SqEuclidean(dst *mat.Dense, X, Y mat.Matrix) error {
	n, d, m, err := costShapes(dst, X, Y)
	if err != nil {
		return err
	}
	if dy := colsOf(Y); dy != d {
		return fmt.Errorf("ot: dimension mismatch: X has d=%d columns, Y has %d", d, dy)
	}
	xd, yd := asDense(X), asDense(Y)
	same := xd == yd

	mu := make([]float64, d)
	addRows := func(A *mat.Dense) {
		r, _ := A.Dims()
		for i := 0; i < r; i++ {
			for k, v := range A.RawRowView(i) {
				mu[k] += v
			}
		}
	}
	addRows(xd)
	if !same {
		addRows(yd)
	}
	cnt := float64(n + m)
	if same {
		cnt = float64(n)
	}
	for k := range mu {
		mu[k] /= cnt
	}
	xc := centred(xd, mu)
	yc := xc
	if !same {
		yc = centred(yd, mu)
	}

	if dst.IsEmpty() {
		dst.ReuseAs(n, m)
	}
	if same {
		linalg.Gram(dst, xc)
	} else {
		linalg.MulABT(dst, xc, yc)
	}

	xn := rowSqNorms(xc)
	yn := xn
	if !same {
		yn = rowSqNorms(yc)
	}
	for i := 0; i < n; i++ {
		row := dst.RawRowView(i)
		for j, v := range row {
			c := xn[i] + yn[j] - 2*v
			if c < 0 {
				c = 0
			}
			row[j] = c
		}
		if same {
			row[i] = 0
		}
	}
	return nil
}

// centred returns A − 1μᵀ as a new matrix.
func centred(A *mat.Dense, mu []float64) *mat.Dense {
	r, c := A.Dims()
	out := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		dst := out.RawRowView(i)
		for k, v := range A.RawRowView(i) {
			dst[k] = v - mu[k]
		}
	}
	return out
}

// Pairwise writes into dst the n×m matrix C_ij = cost(x_i, y_j) for the rows
// x_i of X (n×dx) and y_j of Y (m×dy), for any ground cost; dx and dy need
// not be equal. It is the general hook behind SqEuclidean, which is much
// faster for the squared Euclidean cost.
//
// The rows are processed in parallel on up to runtime.GOMAXPROCS(0)
// goroutines, so cost must be safe for concurrent use. The slices passed
// to cost may share storage with X and Y and must not be modified or
// retained. The values returned by cost are stored as they are, without
// any check.
//
// dst follows the convention of SqEuclidean: it must be empty, and is then
// resized to n×m, or already n×m, and must not be X or Y. Pairwise returns
// an error when cost is nil, X or Y is empty, dst is X or Y or dst has the
// wrong shape.
func Pairwise(dst *mat.Dense, X, Y mat.Matrix, cost func(x, y []float64) float64) error {
	if cost == nil {
		return fmt.Errorf("ot: pairwise: cost function is nil")
	}
	n, _, m, err := costShapes(dst, X, Y)
	if err != nil {
		return err
	}
	xd, yd := asDense(X), asDense(Y)
	if dst.IsEmpty() {
		dst.ReuseAs(n, m)
	}
	fill := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := xd.RawRowView(i)
			row := dst.RawRowView(i)
			for j := range row {
				row[j] = cost(x, yd.RawRowView(j))
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if n*m < 1<<12 || workers < 2 {
		fill(0, n)
		return nil
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { fill(w*n/workers, (w+1)*n/workers) })
	}
	wg.Wait()
	return nil
}

// costShapes validates the operands of SqEuclidean and Pairwise and returns
// n = rows of X, d = columns of X and m = rows of Y.
func costShapes(dst *mat.Dense, X, Y mat.Matrix) (n, d, m int, err error) {
	if dst == nil {
		return 0, 0, 0, fmt.Errorf("ot: destination matrix is nil")
	}
	if X == nil || Y == nil {
		return 0, 0, 0, fmt.Errorf("ot: point matrix is nil")
	}
	if isEmpty(X) || isEmpty(Y) {
		return 0, 0, 0, fmt.Errorf("ot: empty point matrix")
	}
	n, d = X.Dims()
	m, _ = Y.Dims()
	if xd, ok := X.(*mat.Dense); ok && xd == dst {
		return 0, 0, 0, fmt.Errorf("ot: destination matrix is X")
	}
	if yd, ok := Y.(*mat.Dense); ok && yd == dst {
		return 0, 0, 0, fmt.Errorf("ot: destination matrix is Y")
	}
	if !dst.IsEmpty() {
		if r, c := dst.Dims(); r != n || c != m {
			return 0, 0, 0, fmt.Errorf("ot: destination matrix is %d×%d, want %d×%d", r, c, n, m)
		}
	}
	return n, d, m, nil
}

// isEmpty reports whether X has no elements.
func isEmpty(X mat.Matrix) bool {
	r, c := X.Dims()
	return r == 0 || c == 0
}

func colsOf(X mat.Matrix) int {
	_, c := X.Dims()
	return c
}

// asDense returns X as a *mat.Dense, copying it unless it already is one.
func asDense(X mat.Matrix) *mat.Dense {
	if d, ok := X.(*mat.Dense); ok {
		return d
	}
	return mat.DenseCopyOf(X)
}

// rowSqNorms returns the squared Euclidean norms of the rows of X.
func rowSqNorms(X *mat.Dense) []float64 {
	n, _ := X.Dims()
	s := make([]float64, n)
	for i := range s {
		var v float64
		for _, x := range X.RawRowView(i) {
			v += x * x
		}
		s[i] = v
	}
	return s
}
