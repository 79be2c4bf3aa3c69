package federate

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/floats"

	"github.com/dadil/dadil/dictionary"
)

// Shared second moments (Config.ShareMoments).
//
// Adam divides every coordinate of a gradient g by √v, v the running mean
// of g² (dictionary's adam). In the centralised fit (paper Algorithm 2)
// one Adam steps the atoms on the sum over the domains of their gradients,
// so it stops where Σ_ℓ g_ℓ = 0: the domains balance their pulls on an
// atom by their gradients' sizes. A site's own Adam divides its gradient
// g_ℓ by its own √v_ℓ: every site then pulls as hard as any other, whatever
// the size of its gradient, and the mean of the sites' moves stops where
// Σ_ℓ g_ℓ/√v_ℓ = 0, another point. Dividing every site's gradient by the
// same v restores the centralised fit's balance: the mean of the moves
// m_ℓ/√v̄ is (Σ_ℓ m_ℓ)/(m√v̄), zero where Σ_ℓ g_ℓ is. Every site sends,
// after the atoms, its atoms' second moments v_ℓ, laid out as the atoms
// (LocalState.SecondMoments); the coordinator sends the mean
// v̄ = (1/m) Σ_ℓ v_ℓ of the sites that answered the last round, summed in
// site-id order, after the next round's atoms. A message then carries 2K
// atoms in the frame format: the K atoms, then their K moments, each
// atom's n×d values where its features are and n×c where its logits are
// (Shape.withMoments). The gradients keep the factor α_ℓk of the
// barycenter (WeighMoves) without weighing.

// withMoments returns the shape of a message carrying atoms of shape s and
// their second moments: 2K atoms.
func (s Shape) withMoments() Shape {
	s.K *= 2
	return s
}

// checkMoments reports an error if a second moment is negative (values
// are finite once assembled).
func checkMoments(v []float64) error {
	for i, x := range v {
		if x < 0 {
			return fmt.Errorf("second moment %d is %g (want ≥ 0)", i, x)
		}
	}
	return nil
}

// meanMoments returns the element-wise mean of the sites' second moments,
// summed in order (site-id order), into dst (allocated if nil).
func meanMoments(dst []float64, vs [][]float64) ([]float64, error) {
	if len(vs) == 0 {
		return nil, errors.New("federate: no second moments to average")
	}
	if dst == nil {
		dst = make([]float64, len(vs[0]))
	}
	clear(dst)
	for _, v := range vs {
		if len(v) != len(dst) {
			return nil, fmt.Errorf("federate: second moments of %d values for %d", len(v), len(dst))
		}
		floats.Add(dst, v)
	}
	floats.Scale(1/float64(len(vs)), dst)
	return dst, nil
}

// shareMoments writes the coordinator's mean second moments mean (laid out
// as atoms, Pack's order) into the site's optimiser state st where they
// are positive; it does nothing to an empty state or one of other shapes
// (a site that has not trained yet starts its own moments).
func shareMoments(st *dictionary.LocalState, mean []dictionary.Atom) {
	X, Z := st.SecondMoments()
	if len(X) != len(mean) {
		return
	}
	var pairs [][2][]float64 // the site's moments, the mean's
	for k, a := range mean {
		pairs = append(pairs, [2][]float64{X[k], a.X.RawMatrix().Data}, [2][]float64{Z[k], a.Logits.RawMatrix().Data})
	}
	for _, p := range pairs {
		if len(p[0]) != len(p[1]) {
			return
		}
	}
	for _, p := range pairs {
		for i, v := range p[1] {
			if v > 0 {
				p[0][i] = v
			}
		}
	}
}

// appendMoments appends the site's second moments, laid out as atoms
// (Pack's order), to dst.
func appendMoments(dst []float64, st *dictionary.LocalState) []float64 {
	X, Z := st.SecondMoments()
	for k := range X {
		dst = append(dst, X[k]...)
		dst = append(dst, Z[k]...)
	}
	return dst
}
