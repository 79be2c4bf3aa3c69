package ot

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// sumTol is the largest relative difference allowed between Σa and Σb.
const sumTol = 1e-9

// checkWeights reports an error when w is empty or holds a negative, NaN or
// infinite entry, or sums to zero. name identifies w in the message.
func checkWeights(name string, w []float64) (sum float64, err error) {
	if len(w) == 0 {
		return 0, fmt.Errorf("ot: weights %s are empty", name)
	}
	for i, v := range w {
		switch {
		case math.IsNaN(v):
			return 0, fmt.Errorf("ot: weights %s: entry %d is NaN", name, i)
		case math.IsInf(v, 0):
			return 0, fmt.Errorf("ot: weights %s: entry %d is infinite", name, i)
		case v < 0:
			return 0, fmt.Errorf("ot: weights %s: entry %d is negative (%g)", name, i, v)
		}
		sum += v
	}
	if sum == 0 {
		return 0, fmt.Errorf("ot: weights %s sum to zero", name)
	}
	if math.IsInf(sum, 0) {
		return 0, fmt.Errorf("ot: weights %s: sum overflows", name)
	}
	return sum, nil
}

// checkMarginals validates a (n entries) and b (m entries) and their sums.
// A nil slice stands for uniform weights and is returned as such.
func checkMarginals(a, b []float64, n, m int) (aa, bb []float64, err error) {
	if n == 0 || m == 0 {
		return nil, nil, fmt.Errorf("ot: empty problem: cost matrix is %d×%d", n, m)
	}
	if a == nil {
		a = Uniform(n)
	}
	if b == nil {
		b = Uniform(m)
	}
	if len(a) != n {
		return nil, nil, fmt.Errorf("ot: shape mismatch: len(a) = %d but the cost matrix has %d rows", len(a), n)
	}
	if len(b) != m {
		return nil, nil, fmt.Errorf("ot: shape mismatch: len(b) = %d but the cost matrix has %d columns", len(b), m)
	}
	sa, err := checkWeights("a", a)
	if err != nil {
		return nil, nil, err
	}
	sb, err := checkWeights("b", b)
	if err != nil {
		return nil, nil, err
	}
	if d := math.Abs(sa-sb) / math.Max(sa, sb); d > sumTol {
		return nil, nil, fmt.Errorf("ot: weight sums differ: Σa = %.17g, Σb = %.17g (relative difference %.3g > %g)", sa, sb, d, sumTol)
	}
	return a, b, nil
}

// costData returns C as a dense row-major slice (stride = columns), copying
// only when C is not a contiguous *mat.Dense. It fails on NaN, infinite or
// negative-infinite entries; negative finite costs are allowed.
func costData(C mat.Matrix) (data []float64, n, m int, err error) {
	return costDataBounded(C, "")
}

// MaxCost is the largest |C_ij| that EMD and Assignment accept for n×m
// cost matrices, MaxFloat64 / (64(n + m + 1)): above 10³⁰⁰ up to a million
// points on each side. Their dual potentials are sums of costs along paths
// of up to n + m arcs, and closer to MaxFloat64 their arithmetic could
// overflow to ±Inf and NaN. Divide larger costs by a constant: the optimal
// plans are the same.
func MaxCost(n, m int) float64 { return math.MaxFloat64 / (64 * float64(n+m+1)) }

// costDataBounded is costData that also refuses entries above MaxCost in
// absolute value when solver, the name of the problem for the error, is
// not empty.
func costDataBounded(C mat.Matrix, solver string) (data []float64, n, m int, err error) {
	if isNil(C) {
		return nil, 0, 0, fmt.Errorf("ot: cost matrix is nil")
	}
	n, m = C.Dims()
	if n == 0 || m == 0 {
		return nil, n, m, fmt.Errorf("ot: empty problem: cost matrix is %d×%d", n, m)
	}
	if d, ok := C.(*mat.Dense); ok && d.RawMatrix().Stride == m {
		data = d.RawMatrix().Data[:n*m]
	} else {
		data = make([]float64, n*m)
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				data[i*m+j] = C.At(i, j)
			}
		}
	}
	bound := math.MaxFloat64
	if solver != "" {
		bound = MaxCost(n, m)
	}
	if k := linalg.FirstAbove(data, bound); k >= 0 {
		x := data[k]
		switch {
		case math.IsNaN(x):
			return nil, n, m, fmt.Errorf("ot: cost matrix entry (%d, %d) is NaN", k/m, k%m)
		case math.IsInf(x, 0):
			return nil, n, m, fmt.Errorf("ot: cost matrix entry (%d, %d) is infinite", k/m, k%m)
		}
		return nil, n, m, fmt.Errorf("ot: cost matrix entry (%d, %d) is %.4g: %s of a %d×%d cost matrix needs |C| ≤ %.4g (divide the costs by a constant)", k/m, k%m, x, solver, n, m, bound)
	}
	return data, n, m, nil
}

// Uniform returns n weights equal to 1/n. It panics when n is negative,
// as make does.
func Uniform(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 / float64(n)
	}
	return w
}

// isNil reports whether A is nil, as an interface or as a nil *mat.Dense
// inside one (whose methods would dereference it).
func isNil(A mat.Matrix) bool {
	if A == nil {
		return true
	}
	d, ok := A.(*mat.Dense)
	return ok && d == nil
}
