package adapt

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// Subsampled fits Method on at most MaxRows rows of every source and of
// the target, drawn uniformly without replacement (Subsample, seeded by
// Seed), and predicts with it. It bounds the cost of the methods whose
// transport plans grow with the product of the domains' sizes (OTDA with
// Sinkhorn, JCPOT, WB, WBT_reg, WJDOT, WBR): the CWRU benchmark fits them
// on 2000 rows per domain. Domains of at most MaxRows rows are used whole,
// so on small problems Subsampled changes nothing. Predict classifies any
// rows, not only the ones drawn.
type Subsampled struct {
	Method  Method
	MaxRows int // must be positive
	Seed    uint64
}

// Name returns the name of the wrapped method ("subsampled" when there is
// none).
func (s *Subsampled) Name() string {
	if s.Method == nil {
		return "subsampled"
	}
	return s.Method.Name()
}

// Fit draws the rows and fits the wrapped method on them.
func (s *Subsampled) Fit(sources []Domain, target *mat.Dense, classes int) error {
	if s.Method == nil {
		return errors.New("adapt: Subsampled has no Method")
	}
	if s.MaxRows < 1 {
		return errors.New("adapt: Subsampled.MaxRows must be positive")
	}
	if err := Check(sources, target, classes); err != nil {
		return err
	}
	src, tgt := Subsample(sources, target, s.MaxRows, s.Seed)
	err := s.Method.Fit(src, tgt, classes)
	if err != nil && drewRows(sources, target, src, tgt) {
		// The draw, not the data, may be at fault (a class it missed).
		return fmt.Errorf("%w (in a random draw of at most %d rows of every domain)", err, s.MaxRows)
	}
	return err
}

// drewRows reports whether Subsample drew rows from any domain: it returns
// the domains it leaves whole as they are, and copies of the others.
func drewRows(sources []Domain, target *mat.Dense, src []Domain, tgt *mat.Dense) bool {
	if tgt != target {
		return true
	}
	for k := range sources {
		if src[k].X != sources[k].X {
			return true
		}
	}
	return false
}

// Predict classifies the rows of X with the wrapped method.
func (s *Subsampled) Predict(X *mat.Dense) ([]int, error) {
	if s.Method == nil {
		return nil, ErrNotFitted
	}
	return s.Method.Predict(X)
}

// Subsample returns the sources and the target reduced to at most n rows
// each, drawn uniformly without replacement and kept in their order, by a
// random stream seeded by seed (the sources first, in order, then the
// target). Domains of at most n rows are returned as they are; the others
// are copies. n must be positive and the domains valid (see Check):
// Subsample panics otherwise, as Subsampled.Fit checks both first.
func Subsample(sources []Domain, target *mat.Dense, n int, seed uint64) ([]Domain, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 0x636170))
	out := make([]Domain, len(sources))
	for k, s := range sources {
		idx := drawRows(rng, s.X.RawMatrix().Rows, n)
		if idx == nil {
			out[k] = s
			continue
		}
		d := Domain{Name: s.Name, X: linalg.Rows(s.X, idx), Y: make([]int, len(idx))}
		for i, r := range idx {
			d.Y[i] = s.Y[r]
		}
		out[k] = d
	}
	if idx := drawRows(rng, target.RawMatrix().Rows, n); idx != nil {
		target = linalg.Rows(target, idx)
	}
	return out, target
}

// drawRows returns n distinct indices below rows in increasing order, or
// nil when rows ≤ n (keep them all).
func drawRows(rng *rand.Rand, rows, n int) []int {
	if rows <= n {
		return nil
	}
	idx := rng.Perm(rows)[:n]
	slices.Sort(idx)
	return idx
}
