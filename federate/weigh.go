package federate

import (
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dictionary"
)

// WeighMoves scales a site's move of every atom by K·α_k: atom k of moved,
// the site's atoms after its local epochs from the round's atoms from,
// becomes from_k + K·α_k·(moved_k − from_k), features and label logits
// alike; α is the site's α_ℓ ∈ Δ_K after its local epochs. moved is
// modified in place; from is not.
//
// The site's loss reaches atom k only through the barycenter B(α_ℓ; P),
// whose points are Σ_k α_ℓk T_k(·): its gradient with respect to atom k's
// points carries the factor α_ℓk (the barycenter of paper eq. 11; dictionary's batch
// gradients). In the centralised fit (paper Algorithm 2) the domains'
// gradients are summed before one Adam step, so domain ℓ pulls atom k in
// proportion to α_ℓk. A site's own Adam normalises every coordinate of its
// gradient, which removes the factor: without weighing, a site moves an
// atom it hardly uses as far as the atom it is mostly made of, and the
// coordinator's mean pulls every atom towards every domain alike. K·α_ℓk
// puts the factor back, the factor K leaving the moves of a uniform α as
// they are (the weights of a site sum to K whatever its α). Only the
// atoms leave the site, as without weighing; their moves' sizes now
// reflect α_ℓ, as plain gradient steps at the sites would.
func WeighMoves(moved, from []dictionary.Atom, alpha []float64) {
	K := float64(len(alpha))
	for k := range moved {
		w := K * alpha[k]
		for _, p := range [][2]*mat.Dense{{moved[k].X, from[k].X}, {moved[k].Logits, from[k].Logits}} {
			dst, src := p[0].RawMatrix().Data, p[1].RawMatrix().Data
			for i, v := range dst {
				dst[i] = src[i] + w*(v-src[i])
			}
		}
	}
}
