package gmm

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// maxAbs bounds the entries of data matrices, so that their squares and
// sums of squares stay finite.
const maxAbs = 1e150

// weightTol is the tolerance on Σ_k w_k − 1 of a mixture's weights.
const weightTol = 1e-9

// errf returns an error prefixed "gmm: ".
func errf(format string, args ...any) error {
	return fmt.Errorf("gmm: "+format, args...)
}

// checkData reports an error when X is nil or empty, or holds an entry
// that is not finite or exceeds maxAbs in magnitude; name names X.
func checkData(X *mat.Dense, name string) (n, d int, err error) {
	if X == nil || X.IsEmpty() {
		return 0, 0, errf("%s is empty", name)
	}
	n, d = X.Dims()
	if i, j, ok := linalg.FirstEntryAbove(X, maxAbs); !ok {
		v := X.At(i, j)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, errf("%s[%d][%d] is %v", name, i, j, v)
		}
		return 0, 0, errf("%s[%d][%d] = %g exceeds %g in magnitude", name, i, j, v, maxAbs)
	}
	return n, d, nil
}

// Validate reports whether m is a well-formed mixture: K ≥ 1 weights, each
// finite and non-negative, summing to 1 (to 1e-9); K×d means and standard
// deviations, all finite, the standard deviations positive; labels, when
// present, K×c and finite.
func (m *Mixture) Validate() error {
	if m == nil {
		return errf("mixture is nil")
	}
	K := len(m.Weights)
	if K == 0 {
		return errf("mixture has no components")
	}
	if ok, bad, sum := linalg.OnSimplex(m.Weights, weightTol); !ok {
		if bad >= 0 {
			return errf("mixture weight %d is %v (weights must be finite and non-negative)", bad, m.Weights[bad])
		}
		return errf("mixture weights sum to %v, not 1", sum)
	}
	if m.Means == nil || m.Std == nil {
		return errf("mixture has no means or standard deviations")
	}
	if r, d := m.Means.Dims(); r != K {
		return errf("mixture has %d weights but %d means", K, r)
	} else if rs, ds := m.Std.Dims(); rs != K || ds != d {
		return errf("mixture means are %d×%d but standard deviations %d×%d", r, d, rs, ds)
	}
	if i, j, ok := linalg.FirstEntryAbove(m.Means, maxAbs); !ok {
		return errf("mixture mean %d, feature %d is %v", i, j, m.Means.At(i, j))
	}
	for k := range K {
		for j, v := range m.Std.RawRowView(k) {
			if !(v > 0) || v > maxAbs {
				return errf("mixture standard deviation %d, feature %d is %v (must be positive and finite)", k, j, v)
			}
		}
	}
	if m.Labels != nil {
		if r, _ := m.Labels.Dims(); r != K {
			return errf("mixture has %d components but %d label rows", K, r)
		}
		if i, j, ok := linalg.FirstNonFiniteEntry(m.Labels); !ok {
			return errf("mixture label %d, class %d is %v", i, j, m.Labels.At(i, j))
		}
	}
	return nil
}

// checkRows validates m and the rows X to evaluate under it.
func (m *Mixture) checkRows(X *mat.Dense) (int, error) {
	if err := m.Validate(); err != nil {
		return 0, err
	}
	n, d, err := checkData(X, "X")
	if err != nil {
		return 0, err
	}
	if d != m.Dim() {
		return 0, errf("X has %d columns but the mixture has dimension %d", d, m.Dim())
	}
	return n, nil
}

// reuseAs makes dst r×c: an empty dst is resized, another must be r×c.
func reuseAs(dst *mat.Dense, r, c int, fn string) error {
	if dst == nil {
		return errf("%s: dst is nil", fn)
	}
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
		return nil
	}
	if rr, cc := dst.Dims(); rr != r || cc != c {
		return errf("%s: dst is %d×%d, want %d×%d", fn, rr, cc, r, c)
	}
	return nil
}

// trimPrefix returns the message of err without its "gmm: " prefix, for
// an error quoted inside another.
func trimPrefix(err error) string {
	return strings.TrimPrefix(err.Error(), "gmm: ")
}
