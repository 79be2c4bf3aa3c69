package classify

import (
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// DefaultKGrid is the grid of neighbour counts KNN chooses from.
var DefaultKGrid = []int{1, 3, 5, 9, 15, 25}

// KNN trains k-nearest-neighbour classifiers: the class probabilities of a
// row are the weighted mean of the targets of its k nearest training points
// (squared Euclidean distance, ties to the lower index), with the sample
// weights. With K = 0, k is chosen from DefaultKGrid by leave-one-out on the
// training points (the weighted accuracy of every point's neighbours without
// itself, against the argmax of its target; ties to the smaller k).
type KNN struct {
	// K is the number of neighbours; 0 chooses it.
	K int
}

// Name returns "knn".
func (k *KNN) Name() string { return "knn" }

// maxKNNRows bounds the training rows of a k-nearest-neighbour classifier,
// whose leave-one-out and predictions hold blocks of distances to them.
const maxKNNRows = 1 << 20

// Train keeps the training points and chooses k.
func (k *KNN) Train(X, T *mat.Dense, w []float64) (Classifier, error) {
	xr, err := checkFeatures(X)
	if err != nil {
		return nil, err
	}
	if T == nil || T.IsEmpty() {
		return nil, errors.New("classify: targets T are empty")
	}
	if r, _ := T.Dims(); r != xr.Rows {
		return nil, fmt.Errorf("classify: shape mismatch: X has %d rows but T has %d", xr.Rows, r)
	}
	if xr.Rows > maxKNNRows {
		return nil, fmt.Errorf("classify: knn: %d training rows, more than %d", xr.Rows, maxKNNRows)
	}
	if _, err := checkWeights(w, xr.Rows); err != nil {
		return nil, err
	}
	if k.K < 0 {
		return nil, fmt.Errorf("classify: knn: K = %d is negative", k.K)
	}
	m := &Neighbours{X: mat.DenseCopyOf(X), T: mat.DenseCopyOf(T), W: slices.Clone(w), K: k.K}
	if m.K == 0 {
		m.K = m.leaveOneOut(DefaultKGrid)
	}
	m.K = min(m.K, xr.Rows)
	return m, nil
}

// Neighbours is a k-nearest-neighbour classifier: training points X with
// targets T and weights W (nil: uniform).
type Neighbours struct {
	X, T *mat.Dense
	W    []float64
	K    int
}

// neighbours returns, for every row of Q, the indices of its k nearest
// training points (closest first; skip is excluded when it is a row index
// of the training points, for leave-one-out: row i of Q skips point i).
func (m *Neighbours) neighbours(Q *mat.Dense, k int, skipSelf bool) [][]int {
	nq, _ := Q.Dims()
	n, _ := m.X.Dims()
	norms := rowNorms(m.X)
	qn := rowNorms(Q)
	out := make([][]int, nq)
	const block = 256
	D := mat.NewDense(min(block, nq), n, nil)
	for lo := 0; lo < nq; lo += block {
		hi := min(lo+block, nq)
		Db := D.Slice(0, hi-lo, 0, n).(*mat.Dense)
		linalg.MulABT(Db, Q.Slice(lo, hi, 0, Q.RawMatrix().Cols).(*mat.Dense), m.X)
		for i := lo; i < hi; i++ {
			row := Db.RawRowView(i - lo)
			for j := range row {
				row[j] = qn[i] + norms[j] - 2*row[j]
			}
			if skipSelf {
				row[i] = inf
			}
			out[i] = smallest(row, k)
		}
	}
	return out
}

const inf = 1e308

// smallest returns the indices of the k smallest values of d, smallest
// first, ties to the lower index.
func smallest(d []float64, k int) []int {
	idx := make([]int, 0, k+1)
	for j, v := range d {
		if len(idx) == k && v >= d[idx[k-1]] {
			continue
		}
		at, _ := slices.BinarySearchFunc(idx, v, func(i int, v float64) int {
			if d[i] <= v {
				return -1
			}
			return 1
		})
		idx = slices.Insert(idx, at, j)
		if len(idx) > k {
			idx = idx[:k]
		}
	}
	return idx
}

func rowNorms(X *mat.Dense) []float64 {
	r, _ := X.Dims()
	n := make([]float64, r)
	for i := range n {
		x := X.RawRowView(i)
		n[i] = linalg.Dot(x, x)
	}
	return n
}

// vote writes the weighted mean of the targets of the rows nb into dst.
func (m *Neighbours) vote(dst []float64, nb []int) {
	clear(dst)
	var sum float64
	for _, j := range nb {
		w := 1.0
		if m.W != nil {
			w = m.W[j]
		}
		sum += w
		for c, t := range m.T.RawRowView(j) {
			dst[c] += w * t
		}
	}
	if sum > 0 {
		for c := range dst {
			dst[c] /= sum
		}
	}
}

// leaveOneOut returns the k of grid whose neighbours best classify every
// training point without itself.
func (m *Neighbours) leaveOneOut(grid []int) int {
	n, c := m.T.Dims()
	if n < 2 {
		return 1
	}
	truth := Argmax(m.T)
	kmax := min(slices.Max(grid), n-1)
	nbs := m.neighbours(m.X, kmax, true)
	p := make([]float64, c)
	best, bestAcc := 1, -1.0
	for _, k := range grid {
		k = min(k, kmax)
		var acc, sum float64
		for i, nb := range nbs {
			m.vote(p, nb[:min(k, len(nb))])
			w := 1.0
			if m.W != nil {
				w = m.W[i]
			}
			sum += w
			if floats.MaxIdx(p) == truth[i] {
				acc += w
			}
		}
		if acc/sum > bestAcc {
			best, bestAcc = k, acc/sum
		}
	}
	return best
}

// Proba stores the neighbours' mean targets of the rows of X in dst.
func (m *Neighbours) Proba(dst, X *mat.Dense) error {
	xr, err := checkFeatures(X)
	if err != nil {
		return err
	}
	n, d := m.X.Dims()
	if xr.Cols != d {
		return fmt.Errorf("classify: shape mismatch: X has %d columns but the model has %d features", xr.Cols, d)
	}
	_, c := m.T.Dims()
	if dst.IsEmpty() {
		dst.ReuseAs(xr.Rows, c)
	}
	if r, cc := dst.Dims(); r != xr.Rows || cc != c {
		return fmt.Errorf("classify: destination is %d×%d, want %d×%d", r, cc, xr.Rows, c)
	}
	for i, nb := range m.neighbours(X, min(m.K, n), false) {
		m.vote(dst.RawRowView(i), nb)
	}
	return nil
}

// Predict returns the most probable class of every row of X.
func (m *Neighbours) Predict(X *mat.Dense) ([]int, error) {
	var P mat.Dense
	if err := m.Proba(&P, X); err != nil {
		return nil, err
	}
	return Argmax(&P), nil
}
