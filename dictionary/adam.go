package dictionary

import "math"

// adam is the state of the Adam optimiser (Kingma & Ba 2015) for one
// parameter vector, with the usual constants β₁ = 0.9, β₂ = 0.999, ε = 1e-8
// and bias correction:
//
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,
//	p ← p − η (m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε).
//
// Entries whose gradient is zero in a step (atom rows outside the batch)
// are still moved by their decaying momentum, as in PyTorch.
type adam struct {
	m, v []float64
	t    int
}

func (a *adam) init(n int) {
	a.m = make([]float64, n)
	a.v = make([]float64, n)
	a.t = 0
}

func (a *adam) step(p, g []float64, lr float64) {
	a.stepRows(p, g, len(p), nil, lr)
}

// stepRows performs one Adam step on p, seen as rows of the given width,
// and returns ‖p_new − p_old‖². Rows i with live[i] false have a zero
// gradient, and g is not read there (it need not be cleared); nil live
// means every row is live. A zero gradient gives exactly the values of a
// full step with g = 0: m ← β₁m and v ← β₂v are exact.
func (a *adam) stepRows(p, g []float64, width int, live []bool, lr float64) float64 {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := math.Sqrt(1 - math.Pow(b2, float64(a.t)))
	step := lr / c1
	var sq float64
	for r0 := 0; r0 < len(p); r0 += width {
		r1 := min(r0+width, len(p))
		m, v, pr := a.m[r0:r1], a.v[r0:r1], p[r0:r1]
		if live == nil || live[r0/width] {
			gr := g[r0:r1]
			for i, gi := range gr {
				mi := b1*m[i] + (1-b1)*gi
				vi := b2*v[i] + (1-b2)*gi*gi
				m[i], v[i] = mi, vi
				old := pr[i]
				pr[i] = old - step*mi/(math.Sqrt(vi)/c2+eps)
				e := pr[i] - old
				sq += e * e
			}
			continue
		}
		for i := range pr {
			mi := b1 * m[i]
			vi := b2 * v[i]
			m[i], v[i] = mi, vi
			old := pr[i]
			pr[i] = old - step*mi/(math.Sqrt(vi)/c2+eps)
			e := pr[i] - old
			sq += e * e
		}
	}
	return sq
}
