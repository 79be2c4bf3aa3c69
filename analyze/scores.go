// Package analyze implements the analyses of the DaDiL paper that explain a
// learned dictionary rather than use it (Montesuma, Ngolè Mboula &
// Souloumiac, ECAI 2023, Section 5 and appendix):
//
//   - Sweep: accuracy of DaDiL-R and DaDiL-E as K, n and n_b vary (Tables 7,
//     9 and 11), the sparsity of the barycentric coordinates (Table 8) and the
//     density of the atoms' supports (Table 10);
//   - Hull: the quality of other points of the Wasserstein hull of the atoms
//     — reconstruction loss and accuracy over a grid of Δ₃ (Figures 4 and 5)
//     and for coordinates drawn uniformly from Δ_K (Figure 6);
//   - Stability: loss curves over independent seeds and the update
//     magnitudes of eq. 13 (Figures 7 and 8).
//
// Every analysis takes Problems — labeled sources, an unlabeled target, and
// optionally labeled rows to score on — and returns plain results that
// encode as JSON; the dadil command draws them.
package analyze

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/ot"
)

// SparsityTol is the value above which a barycentric coordinate counts as
// non-zero in Sparsity. The simplex projection after every step sets
// coordinates exactly to zero, so any small positive tolerance gives the
// same counts.
const SparsityTol = 1e-6

// Sparsity returns the sparsity score of barycentric coordinates α ∈ Δ_K
// (paper appendix, eq. of Table 8): 100 (1 − ‖α‖₀ / K), in percent, where
// ‖α‖₀ counts the coordinates above SparsityTol. Uniform coordinates score
// 0, a single atom 100 (1 − 1/K).
func Sparsity(alpha []float64) float64 {
	if len(alpha) == 0 {
		return math.NaN()
	}
	nz := 0
	for _, a := range alpha {
		if a > SparsityTol {
			nz++
		}
	}
	return 100 * (1 - float64(nz)/float64(len(alpha)))
}

// Density returns the support density score of atoms (paper appendix, eq.
// of Table 10): the mean squared Euclidean distance from every support point
// to its k nearest other points of the same atom,
//
//	(1 / (k n K)) Σ_k Σ_i Σ_{x_j ∈ N_k(x_i)} ‖x_i − x_j‖²,
//
// with k = 5 in the paper. Every atom needs more than k points; atoms may
// differ in size (n is then each atom's own).
func Density(atoms []*mat.Dense, k int) (float64, error) {
	if len(atoms) == 0 {
		return 0, fmt.Errorf("analyze: density of no atoms")
	}
	if k < 1 {
		return 0, fmt.Errorf("analyze: density with %d neighbours", k)
	}
	var sum float64
	for a, X := range atoms {
		if err := points(X); err != nil {
			return 0, fmt.Errorf("analyze: atom %d: %w", a+1, err)
		}
		n, _ := X.Dims()
		if n <= k {
			return 0, fmt.Errorf("analyze: atom %d has %d points, need more than %d for %d nearest neighbours", a+1, n, k, k)
		}
		D := mat.NewDense(n, n, nil)
		if err := ot.SqEuclidean(D, X, X); err != nil {
			return 0, fmt.Errorf("analyze: atom %d: %w", a+1, err)
		}
		row := make([]float64, 0, n-1)
		var atomSum float64
		for i := range n {
			row = row[:0]
			for j, v := range D.RawRowView(i) {
				if j != i {
					row = append(row, max(v, 0))
				}
			}
			slices.Sort(row)
			for _, v := range row[:k] {
				atomSum += v
			}
		}
		sum += atomSum / float64(k*n)
	}
	return sum / float64(len(atoms)), nil
}

// SimplexGrid returns the uniform grid of step 1/m over Δ_K: every
// α = (i_1, …, i_K)/m with non-negative integers summing to m, in
// lexicographic order of (i_1, …, i_{K−1}). It has C(m+K−1, K−1) points;
// for K = 3 the order is i_1 outer, i_2 inner, as internal/figure's
// TernaryGrid.
func SimplexGrid(K, m int) ([][]float64, error) {
	if K < 1 || m < 1 {
		return nil, fmt.Errorf("analyze: simplex grid with K = %d, m = %d (want both ≥ 1)", K, m)
	}
	// The grid has C(m+K−1, K−1) points.
	size := 1.0
	for q := 1; q < K; q++ {
		size = size * float64(m+q) / float64(q)
	}
	if size > maxGrid {
		return nil, fmt.Errorf("analyze: a simplex grid with K = %d, m = %d has %.3g points, more than %d", K, m, size, maxGrid)
	}
	var out [][]float64
	idx := make([]int, K)
	var rec func(k, left int)
	rec = func(k, left int) {
		if k == K-1 {
			idx[k] = left
			a := make([]float64, K)
			for q, v := range idx {
				a[q] = float64(v) / float64(m)
			}
			out = append(out, a)
			return
		}
		for v := 0; v <= left; v++ {
			idx[k] = v
			rec(k+1, left-v)
		}
	}
	rec(0, m)
	return out, nil
}

// UniformSimplex draws α uniformly from Δ_K (the flat Dirichlet
// distribution): K standard exponential variables, normalised.
func UniformSimplex(rng *rand.Rand, K int) []float64 {
	a := make([]float64, K)
	var s float64
	for k := range a {
		a[k] = rng.ExpFloat64()
		s += a[k]
	}
	for k := range a {
		a[k] /= s
	}
	return a
}

// maxGrid bounds the number of points of SimplexGrid.
const maxGrid = 10_000_000

// points reports why X cannot be a set of points: nil, empty or with a NaN
// or infinite entry.
func points(X *mat.Dense) error {
	if X == nil || X.IsEmpty() {
		return errors.New("no points")
	}
	if i, j, ok := linalg.FirstNonFiniteEntry(X); !ok {
		return fmt.Errorf("entry (%d, %d) is %g", i, j, X.At(i, j))
	}
	return nil
}

// W2 returns the 2-Wasserstein distance between the uniform empirical
// measures on the rows of X and Y: the square root of the exact optimal
// transport cost for the squared Euclidean ground cost.
func W2(X, Y *mat.Dense) (float64, error) {
	if err := points(X); err != nil {
		return 0, fmt.Errorf("analyze: W2: X: %w", err)
	}
	if err := points(Y); err != nil {
		return 0, fmt.Errorf("analyze: W2: Y: %w", err)
	}
	n, _ := X.Dims()
	m, _ := Y.Dims()
	C := mat.NewDense(n, m, nil)
	if err := ot.SqEuclidean(C, X, Y); err != nil {
		return 0, fmt.Errorf("analyze: %w", err)
	}
	r, err := ot.EMD(nil, nil, C)
	if err != nil {
		return 0, fmt.Errorf("analyze: %w", err)
	}
	return math.Sqrt(max(r.Cost, 0)), nil
}

// Correlation returns Pearson's correlation of x and y, or NaN when either
// is constant, there are fewer than two pairs or x and y differ in length.
func Correlation(x, y []float64) float64 {
	if len(x) < 2 || len(x) != len(y) {
		return math.NaN()
	}
	if stat.StdDev(x, nil) == 0 || stat.StdDev(y, nil) == 0 {
		return math.NaN()
	}
	return stat.Correlation(x, y, nil)
}
