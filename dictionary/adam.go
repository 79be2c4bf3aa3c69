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
	const b1, b2, eps = 0.9, 0.999, 1e-8
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := math.Sqrt(1 - math.Pow(b2, float64(a.t)))
	step := lr / c1
	m, v := a.m[:len(p)], a.v[:len(p)]
	g = g[:len(p)]
	for i, gi := range g {
		mi := b1*m[i] + (1-b1)*gi
		vi := b2*v[i] + (1-b2)*gi*gi
		m[i], v[i] = mi, vi
		p[i] -= step * mi / (math.Sqrt(vi)/c2 + eps)
	}
}
