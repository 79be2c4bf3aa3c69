package ot

import (
	"math"
	"slices"
)

// ProjectSimplex writes into dst the Euclidean projection of v onto the
// probability simplex Δ = {x ∈ Rⁿ : x ≥ 0, Σ_i x_i = 1},
//
//	dst = argmin_{x ∈ Δ} ‖x − v‖₂,
//
// which is x_i = max(v_i − θ, 0) for the unique θ with Σ_i max(v_i − θ, 0) = 1.
// θ is found by the sort-based method (Held, Wolfe & Crowder 1974; see
// Condat 2016): with u the entries of v in decreasing order and
// ρ = max{k : u_k > (Σ_{l≤k} u_l − 1)/k}, θ = (Σ_{l≤ρ} u_l − 1)/ρ. The work
// is O(n log n). To avoid cancellation for large entries, v is first shifted
// by its maximum, which leaves the projection unchanged. A vector already in
// Δ (non-negative, summing to 1 within n·ε) is copied unchanged, so that
// projecting twice gives the same result as projecting once.
//
// dst and v may be the same slice but must not otherwise overlap. When they
// are different, dst serves as the sort buffer and ProjectSimplex does not
// allocate; when they are the same and len(v) > 64, it allocates a buffer of
// len(v) elements.
//
// If v contains a NaN or +Inf, or if all its entries are −Inf, the
// projection is undefined and every element of dst is set to NaN. Otherwise
// −Inf entries project to 0. An empty v leaves dst untouched.
//
// ProjectSimplex panics if len(dst) != len(v).
func ProjectSimplex(dst, v []float64) {
	if len(dst) != len(v) {
		panic("ot: slice length mismatch")
	}
	n := len(v)
	if n == 0 {
		return
	}
	vmax := math.Inf(-1)
	var sum float64
	inSimplex := true
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 1) {
			fillNaN(dst)
			return
		}
		if x < 0 {
			inSimplex = false
		}
		vmax = math.Max(vmax, x)
		sum += x
	}
	if math.IsInf(vmax, -1) {
		fillNaN(dst)
		return
	}
	if inSimplex && math.Abs(sum-1) <= float64(n)*0x1p-52 {
		copy(dst, v)
		return
	}

	// Sort w = v − vmax (all w ≤ 0, max 0) in a buffer.
	var buf []float64
	var stack [64]float64
	switch {
	case &dst[0] != &v[0]:
		buf = dst
	case n <= len(stack):
		buf = stack[:n]
	default:
		buf = make([]float64, n)
	}
	for i, x := range v {
		buf[i] = x - vmax
	}
	slices.Sort(buf)

	// Scan the shifted values in decreasing order. The first one is 0, so
	// k = 1 always qualifies and θ ≥ −1.
	var s, theta float64
	for k := 1; k <= n; k++ {
		u := buf[n-k]
		s += u
		t := (s - 1) / float64(k)
		if !(u > t) {
			break
		}
		theta = t
	}
	for i, x := range v {
		dst[i] = math.Max(x-vmax-theta, 0)
	}
}

func fillNaN(dst []float64) {
	for i := range dst {
		dst[i] = math.NaN()
	}
}
