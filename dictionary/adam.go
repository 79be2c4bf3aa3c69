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

// lazyAdam is Adam on a matrix most of whose rows have a zero gradient in
// any one step (the atoms' rows outside the mini-batch). Such a row is
// still moved by its momentum every step, but nothing reads it until it is
// next drawn into a batch, so its zero-gradient steps are applied then, all
// at once (catchUp): the same operations in the same order as eager steps,
// hence bit-for-bit the same values, with one pass over the row's memory
// instead of one per step.
type lazyAdam struct {
	m, v  []float64
	width int
	// last[r] is the number of steps applied to row r; t the number taken.
	last []int
	t    int
	// size[u] and c2[u] are step u+1's η/(1−β₁ᵘ⁺¹) and √(1−β₂ᵘ⁺¹); sq[u]
	// accumulates Σ (Δp)² of step u+1 over the rows it has been applied to.
	size, c2, sq []float64
}

func (a *lazyAdam) init(rows, width int) {
	a.m = make([]float64, rows*width)
	a.v = make([]float64, rows*width)
	a.width = width
	a.last = make([]int, rows)
	a.t = 0
	a.size, a.c2, a.sq = a.size[:0], a.c2[:0], a.sq[:0]
}

// advance starts step t+1 with learning rate lr.
func (a *lazyAdam) advance(lr float64) {
	const b1, b2 = 0.9, 0.999
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	a.size = append(a.size, lr/c1)
	a.c2 = append(a.c2, math.Sqrt(1-math.Pow(b2, float64(a.t))))
	a.sq = append(a.sq, 0)
}

// catchUp applies to row r of p the zero-gradient steps it has missed, up
// to step upto.
func (a *lazyAdam) catchUp(p []float64, r, upto int) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	if a.last[r] >= upto {
		return
	}
	w := a.width
	m, v, pr := a.m[r*w:(r+1)*w], a.v[r*w:(r+1)*w], p[r*w:(r+1)*w]
	for u := a.last[r]; u < upto; u++ {
		step, c2 := a.size[u], a.c2[u]
		var sq float64
		for i := range pr {
			mi := b1 * m[i]
			vi := b2 * v[i]
			m[i], v[i] = mi, vi
			old := pr[i]
			pr[i] = old - step*mi/(math.Sqrt(vi)/c2+eps)
			e := pr[i] - old
			sq += e * e
		}
		a.sq[u] += sq
	}
	a.last[r] = upto
}

// stepRow brings row r of p up to date and applies the current step with
// the row's gradient g. A row already at the current step is left alone,
// so a row drawn twice into a batch takes one step with its summed
// gradient.
func (a *lazyAdam) stepRow(p, g []float64, r int) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	if a.last[r] >= a.t {
		return
	}
	a.catchUp(p, r, a.t-1)
	w := a.width
	m, v, pr := a.m[r*w:(r+1)*w], a.v[r*w:(r+1)*w], p[r*w:(r+1)*w]
	step, c2 := a.size[a.t-1], a.c2[a.t-1]
	g = g[:w]
	var sq float64
	for i, gi := range g {
		mi := b1*m[i] + (1-b1)*gi
		vi := b2*v[i] + (1-b2)*gi*gi
		m[i], v[i] = mi, vi
		old := pr[i]
		pr[i] = old - step*mi/(math.Sqrt(vi)/c2+eps)
		e := pr[i] - old
		sq += e * e
	}
	a.sq[a.t-1] += sq
	a.last[r] = a.t
}

// sync brings every row of p up to the current step.
func (a *lazyAdam) sync(p []float64) {
	for r := range a.last {
		a.catchUp(p, r, a.t)
	}
}
