package dictionary

import "math"

// Adam's constants (Kingma & Ba 2015), as in PyTorch.
const (
	adamB1  = 0.9
	adamB2  = 0.999
	adamEps = 1e-8
)

// adam is the state of the Adam optimiser for one parameter vector, with
// bias correction:
//
//	m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,
//	p ← p − η (m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε),
//
// computed as p ← p − (sc·m)/(√v + ce) with sc = c₂η/(1−β₁ᵗ), ce = c₂ε and
// c₂ = √(1−β₂ᵗ): one square root and one division per entry.
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

// adamScale returns sc and ce (see adam) of step t with learning rate lr.
func adamScale(t int, lr float64) (sc, ce float64) {
	c1 := 1 - math.Pow(adamB1, float64(t))
	c2 := math.Sqrt(1 - math.Pow(adamB2, float64(t)))
	return c2 * lr / c1, c2 * adamEps
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
	a.t++
	sc, ce := adamScale(a.t, lr)
	var lanes [4]float64
	for r0 := 0; r0 < len(p); r0 += width {
		r1 := min(r0+width, len(p))
		var gr []float64
		if live == nil || live[r0/width] {
			gr = g[r0:r1]
		}
		adamRow(p[r0:r1], a.m[r0:r1], a.v[r0:r1], gr, sc, ce, &lanes)
	}
	return reduceLanes(&lanes)
}

// reduceLanes returns (l0+l2)+(l1+l3).
func reduceLanes(l *[4]float64) float64 { return (l[0] + l[2]) + (l[1] + l[3]) }

// adamConsts packs the constants of one step for the kernels.
func adamConsts(sc, ce float64) [6]float64 {
	return [6]float64{adamB1, adamB2, 1 - adamB1, 1 - adamB2, sc, ce}
}

// adamRowGo performs one Adam step on the entries of p (g nil for a zero
// gradient) and adds (p_new − p_old)² of entry i to lanes[i mod 4]. The
// conversions keep every product rounded on its own (no fused
// multiply-add), as in the assembly kernel.
func adamRowGo(p, m, v, g []float64, sc, ce float64, lanes *[4]float64) {
	c := adamConsts(sc, ce)
	m, v = m[:len(p)], v[:len(p)]
	if g != nil {
		g = g[:len(p)]
	}
	for i := range p {
		mi := float64(c[0] * m[i])
		vi := float64(c[1] * v[i])
		if g != nil {
			gi := g[i]
			mi += float64(c[2] * gi)
			vi += float64(float64(c[3]*gi) * gi)
		}
		m[i], v[i] = mi, vi
		old := p[i]
		p[i] = old - float64(c[4]*mi)/(math.Sqrt(vi)+c[5])
		e := p[i] - old
		lanes[i&3] += float64(e * e)
	}
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
	// sc[u] and ce[u] are the constants of step u+1 (see adam); sq[u]
	// accumulates Σ (Δp)² of step u+1 over the rows it has been applied to.
	sc, ce, sq []float64
}

func (a *lazyAdam) init(rows, width int) {
	a.m = make([]float64, rows*width)
	a.v = make([]float64, rows*width)
	a.width = width
	a.last = make([]int, rows)
	a.t = 0
	a.sc, a.ce, a.sq = a.sc[:0], a.ce[:0], a.sq[:0]
}

// advance starts step t+1 with learning rate lr.
func (a *lazyAdam) advance(lr float64) {
	a.t++
	sc, ce := adamScale(a.t, lr)
	a.sc = append(a.sc, sc)
	a.ce = append(a.ce, ce)
	a.sq = append(a.sq, 0)
}

// row returns row r of p and of the moments.
func (a *lazyAdam) row(p []float64, r int) (pr, m, v []float64) {
	w := a.width
	return p[r*w : (r+1)*w], a.m[r*w : (r+1)*w], a.v[r*w : (r+1)*w]
}

// catchUp applies to row r of p the zero-gradient steps it has missed, up
// to step upto.
func (a *lazyAdam) catchUp(p []float64, r, upto int) {
	if a.last[r] >= upto {
		return
	}
	pr, m, v := a.row(p, r)
	for u := a.last[r]; u < upto; u++ {
		var lanes [4]float64
		adamRow(pr, m, v, nil, a.sc[u], a.ce[u], &lanes)
		a.sq[u] += reduceLanes(&lanes)
	}
	a.last[r] = upto
}

// stepRow brings row r of p up to date and applies the current step with
// the row's gradient g. A row already at the current step is left alone,
// so a row drawn twice into a batch takes one step with its summed
// gradient.
func (a *lazyAdam) stepRow(p, g []float64, r int) {
	if a.last[r] >= a.t {
		return
	}
	a.catchUp(p, r, a.t-1)
	pr, m, v := a.row(p, r)
	var lanes [4]float64
	adamRow(pr, m, v, g[:a.width], a.sc[a.t-1], a.ce[a.t-1], &lanes)
	a.sq[a.t-1] += reduceLanes(&lanes)
	a.last[r] = a.t
}

// sync brings every row of p up to the current step.
func (a *lazyAdam) sync(p []float64) {
	for r := range a.last {
		a.catchUp(p, r, a.t)
	}
}
