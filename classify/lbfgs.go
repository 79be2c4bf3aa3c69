package classify

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// L-BFGS and line-search constants.
const (
	lbfgsMemory = 10    // correction pairs kept
	wolfeC1     = 1e-4  // sufficient decrease (Armijo) constant
	wolfeC2     = 0.9   // curvature constant of the strong Wolfe conditions
	maxLineEval = 40    // evaluations per line search
	flatTol     = 1e-10 // relative change of L treated as rounding noise
	approxDelta = 0.1   // δ of the approximate Wolfe conditions
)

// function is a smooth function with a separate gradient. Grad(g, x) is
// always called right after Func(x) at the same x. norm(g) is the norm of
// the gradient g that is compared with the tolerance.
type function interface {
	Func(x []float64) float64
	Grad(g, x []float64)
	norm(g []float64) float64
}

// lbfgs minimises a smooth function with limited-memory BFGS (Nocedal &
// Wright, Numerical Optimization, 2nd ed., Algorithm 7.4 and 7.5) and a
// line search for the strong Wolfe conditions with safeguarded cubic and
// quadratic interpolation (ibid., Algorithms 3.5 and 3.6). Its arithmetic
// is deterministic.
type lbfgs struct {
	fn         function
	x, g       []float64 // current point and gradient
	xNew, gNew []float64 // trial point and gradient
	gLo        []float64 // gradient at the best trial point of a line search
	p          []float64 // search direction
	s, y       [][]float64
	rho        []float64
	alpha      []float64
	head, len  int // ring buffer of correction pairs
}

// minimize runs L-BFGS from x0, which it overwrites with the final point.
// It returns the final value and gradient, the number of iterations and the
// reason for stopping (see Result.Status): optimize.GradientThreshold when
// fn.norm of the gradient is below gradTol, optimize.IterationLimit after
// maxIter iterations, optimize.MethodConverge when no step lowers f.
func minimize(fn function, x0 []float64, maxIter int, gradTol float64) (f float64, g []float64, iter int, st optimize.Status) {
	n := len(x0)
	l := &lbfgs{
		fn:    fn,
		x:     append([]float64(nil), x0...),
		g:     make([]float64, n),
		xNew:  make([]float64, n),
		gNew:  make([]float64, n),
		gLo:   make([]float64, n),
		p:     make([]float64, n),
		s:     make([][]float64, lbfgsMemory),
		y:     make([][]float64, lbfgsMemory),
		rho:   make([]float64, lbfgsMemory),
		alpha: make([]float64, lbfgsMemory),
	}
	f, iter, st = l.run(maxIter, gradTol)
	copy(x0, l.x)
	return f, l.g, iter, st
}

// run iterates from l.x until convergence or maxIter iterations.
func (l *lbfgs) run(maxIter int, gradTol float64) (f float64, iter int, st optimize.Status) {
	f = l.fn.Func(l.x)
	l.fn.Grad(l.g, l.x)
	for ; ; iter++ {
		if l.fn.norm(l.g) < gradTol {
			return f, iter, optimize.GradientThreshold
		}
		if iter >= maxIter {
			return f, iter, optimize.IterationLimit
		}
		step := l.direction()
		d0 := floats.Dot(l.g, l.p)
		if !(d0 < 0) {
			// Not a descent direction: restart from steepest descent.
			l.len = 0
			step = l.direction()
			d0 = floats.Dot(l.g, l.p)
			if !(d0 < 0) {
				return f, iter, optimize.MethodConverge
			}
		}
		fNew, ok := l.lineSearch(f, d0, step)
		if !ok {
			return f, iter, optimize.MethodConverge
		}
		l.update()
		f = fNew
		l.x, l.xNew = l.xNew, l.x
		l.g, l.gNew = l.gNew, l.g
	}
}

// direction sets p = −H g by the two-loop recursion and returns the initial
// step length: 1, or 1/‖g‖₂ when there is no curvature information.
func (l *lbfgs) direction() float64 {
	copy(l.p, l.g)
	if l.len == 0 {
		floats.Scale(-1, l.p)
		return 1 / floats.Norm(l.g, 2)
	}
	m := len(l.s)
	for j := range l.len {
		i := (l.head - 1 - j + m) % m
		l.alpha[i] = l.rho[i] * floats.Dot(l.s[i], l.p)
		floats.AddScaled(l.p, -l.alpha[i], l.y[i])
	}
	newest := (l.head - 1 + m) % m
	yy := floats.Dot(l.y[newest], l.y[newest])
	floats.Scale(1/(l.rho[newest]*yy), l.p) // γ = sᵀy / yᵀy
	for j := l.len - 1; j >= 0; j-- {
		i := (l.head - 1 - j + m) % m
		beta := l.rho[i] * floats.Dot(l.y[i], l.p)
		floats.AddScaled(l.p, l.alpha[i]-beta, l.s[i])
	}
	floats.Scale(-1, l.p)
	return 1
}

// update stores the correction pair of the accepted step, unless it has
// no positive curvature.
func (l *lbfgs) update() {
	i := l.head
	if l.s[i] == nil {
		l.s[i] = make([]float64, len(l.x))
		l.y[i] = make([]float64, len(l.x))
	}
	floats.SubTo(l.s[i], l.xNew, l.x)
	floats.SubTo(l.y[i], l.gNew, l.g)
	sy := floats.Dot(l.s[i], l.y[i])
	if !(sy > 0) || math.IsInf(sy, 0) {
		// Slot i held the oldest pair when the memory was full.
		l.len = min(l.len, len(l.s)-1)
		return
	}
	l.rho[i] = 1 / sy
	l.head = (l.head + 1) % len(l.s)
	l.len = min(l.len+1, len(l.s))
}

// lineSearch looks along p from x, where the value is f0 and the slope
// d0 < 0, for a step satisfying the strong Wolfe conditions, starting with
// step a. On success it leaves the new point in xNew and its gradient in
// gNew and returns its value. If no step satisfies both conditions within
// maxLineEval evaluations, it settles for the best point with sufficient
// decrease and a value below f0; if there is none it fails.
//
// Near the optimum the decrease of L falls below the rounding error of its
// evaluation, while the gradient remains accurate. A step whose value is
// within flatTol·|f0| of f0 is therefore judged by its slope alone, with
// the approximate Wolfe conditions of Hager and Zhang (SIAM J. Optim. 16,
// 2005): c₂ φ'(0) ≤ φ'(a) ≤ (1 − 2δ) |φ'(0)|, which for a quadratic imply
// sufficient decrease with constant δ. This lets the gradient norm go well
// below √(ε |f|) on ill-conditioned problems.
func (l *lbfgs) lineSearch(f0, d0, a float64) (float64, bool) {
	// lo is the best step so far satisfying sufficient decrease (0 at the
	// start); hi, once bracketed, is the other end of an interval known to
	// contain acceptable steps. The slope at lo points towards hi.
	aLo, fLo, dLo := 0.0, f0, d0
	aHi, fHi, dHi := math.Inf(1), math.NaN(), math.NaN()
	hiSlope := false
	bracketed := false
	fFlat := f0 + flatTol*math.Abs(f0)
	for range maxLineEval {
		floats.AddScaledTo(l.xNew, l.x, a, l.p)
		if floats.Equal(l.xNew, l.x) {
			break // the step no longer moves x
		}
		fa := l.fn.Func(l.xNew)
		decrease := fa <= f0+wolfeC1*a*d0 && fa < fLo
		flat := !decrease && fa <= fFlat // false for NaN
		if !decrease && !flat {
			aHi, fHi, hiSlope = a, fa, false
			bracketed = true
		} else {
			l.fn.Grad(l.gNew, l.xNew)
			da := floats.Dot(l.gNew, l.p)
			switch {
			case decrease && math.Abs(da) <= -wolfeC2*d0:
				return fa, true
			case flat && wolfeC2*d0 <= da && da <= -(1-2*approxDelta)*d0:
				return fa, true
			}
			if da*(aHi-a) >= 0 {
				// The slope points back towards lo: acceptable steps lie
				// between lo and a.
				aHi, fHi, dHi, hiSlope = aLo, fLo, dLo, true
				bracketed = true
			}
			aLo, fLo, dLo = a, fa, da
			copy(l.gLo, l.gNew)
		}
		if !bracketed {
			a *= 4
			continue
		}
		if math.Abs(aHi-aLo) <= 1e-12*math.Max(aLo, aHi) {
			break
		}
		a = interpolate(aLo, fLo, dLo, aHi, fHi, dHi, hiSlope)
	}
	if aLo == 0 || !(fLo < f0) {
		return f0, false
	}
	floats.AddScaledTo(l.xNew, l.x, aLo, l.p)
	copy(l.gNew, l.gLo)
	return fLo, true
}

// interpolate returns a trial step between aLo and aHi: the minimiser of
// the cubic fitting both values and slopes when hiSlope, otherwise of the
// quadratic fitting both values and the slope at aLo; safeguarded to the
// middle 80% of the interval.
func interpolate(aLo, fLo, dLo, aHi, fHi, dHi float64, hiSlope bool) float64 {
	h := aHi - aLo
	var a float64
	if hiSlope {
		d1 := dLo + dHi - 3*(fLo-fHi)/(aLo-aHi)
		disc := d1*d1 - dLo*dHi
		if disc >= 0 {
			d2 := math.Copysign(math.Sqrt(disc), h)
			a = aHi - h*(dHi+d2-d1)/(dHi-dLo+2*d2)
		} else {
			a = math.NaN()
		}
	} else {
		curv := (fHi - fLo - dLo*h) / (h * h)
		a = aLo - dLo/(2*curv)
	}
	lo, hi := math.Min(aLo, aHi), math.Max(aLo, aHi)
	w := hi - lo
	switch {
	case math.IsNaN(a):
		return lo + w/2
	case a < lo+0.1*w:
		return lo + 0.1*w
	case a > hi-0.1*w:
		return hi - 0.1*w
	}
	return a
}
