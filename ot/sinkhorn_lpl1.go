package ot

import (
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/mat"
)

// Default values used by SinkhornLpl1 for zero fields of
// SinkhornLpl1Settings.
const (
	// DefaultLpl1P is the exponent p = 1/2 of the group penalty, the value
	// of Courty et al.
	DefaultLpl1P = 0.5
	// DefaultLpl1OuterIter is the number of majorisation-minimisation
	// iterations.
	DefaultLpl1OuterIter = 10
	// DefaultLpl1Eps is the smoothing ε of the group penalty, relative to
	// the total mass Σa.
	DefaultLpl1Eps = 1e-12
)

// SinkhornLpl1Settings configures SinkhornLpl1. The zero value, like a nil
// *SinkhornLpl1Settings, selects the defaults.
type SinkhornLpl1Settings struct {
	// P is the exponent p of the group penalty Σ_j Σ_c ‖π_{I_c,j}‖₁^p. It
	// must lie in (0, 1]; zero means DefaultLpl1P = 1/2. The penalty is
	// concave in π for p ≤ 1, which is what makes the majorisation of
	// SinkhornLpl1 valid; p = 1 adds the same constant to every cost and
	// leaves the plan of Sinkhorn unchanged.
	P float64

	// Eps is the smoothing ε > 0 of the penalty, (‖π_{I_c,j}‖₁ + ε)^p,
	// relative to the total mass Σa: the absolute smoothing is Eps·Σa. It
	// bounds the weights of the majoriser by regCl·p·(Eps·Σa)^(p−1). Zero
	// means DefaultLpl1Eps; it must not be negative, NaN or infinite.
	Eps float64

	// OuterIter is the number of majorisation-minimisation iterations,
	// each one entropic OT problem. Zero means DefaultLpl1OuterIter = 10;
	// it must not be negative. With regCl = 0 a single iteration is made.
	OuterIter int

	// Sinkhorn configures every inner entropic solve (tolerance, iteration
	// cap, goroutines), as for Sinkhorn; nil selects its defaults.
	Sinkhorn *SinkhornSettings
}

// SinkhornLpl1 solves entropic optimal transport with the class-based
// group-lasso regulariser of Courty, Flamary & Tuia (ECML PKDD 2014) and
// Courty, Flamary, Tuia & Rakotomamonjy ("Optimal Transport for Domain
// Adaptation", IEEE TPAMI, 2016; the l_p-l_1 class-based regulariser with
// q = 1 and p = 1/2):
//
//	min_π ⟨C, π⟩_F + regE·Σ_ij π_ij (log π_ij − 1) + regCl·Ω(π)
//	subject to  π 1_m = a,  πᵀ 1_n = b̃,  π ≥ 0,
//	Ω(π) = Σ_j Σ_c (Σ_{i ∈ I_c} π_ij + ε)^p,
//
// for source weights a (length n), target weights b (length m; nil means
// uniform, and b is rescaled to b̃ = b·Σa/Σb as in Sinkhorn), an n×m cost
// C and source labels (one per row of C, any non-negative integers) whose
// distinct values define the groups I_c of rows. The penalty makes a
// target point j receive its mass from few classes: the sum of a concave
// function of the per-class masses Σ_{i∈I_c} π_ij is smallest when one
// class provides all of it. The units of regE and regCl are those of C;
// callers usually normalise C, for example by its maximum. The smoothing
// ε = s.Eps·Σa keeps the gradient of Ω finite at empty groups.
//
// Ω is concave for 0 < p ≤ 1, so it lies below its tangent at any plan
// π^k. Majorisation-minimisation (Hunter & Lange 2004) replaces it by that
// tangent, which is linear in π, so that each outer iteration is one
// entropic problem with a modified cost:
//
//	W^k_ij = regCl·p·(Σ_{l ∈ I_c(i)} π^k_lj + ε)^(p−1),
//	π^(k+1) = argmin_π ⟨C + W^k, π⟩_F + regE·Σ_ij π_ij (log π_ij − 1),
//
// the second line solved by the log-domain Sinkhorn iteration of Sinkhorn
// (the same code, so regCl = 0 gives Sinkhorn's plan bit for bit). The
// first iteration uses W⁰ = 0, that is π¹ is the plan of Sinkhorn(a, b, C,
// regE), and every further iteration starts from the potentials of the
// previous one (a warm start: only the weights changed). Since the
// majoriser equals the objective at π^k and lies above it everywhere, the
// objective does not increase from one iterate to the next, up to the
// tolerance of the inner solves. s.OuterIter iterations are made.
//
// The majorised problems can be nearly degenerate. Once the weights favour
// one class per target point, a class whose favoured target points do not
// have the class's source mass must move the difference at a cost of the
// order of the largest weights, and Sinkhorn, whose convergence rate
// degrades with the range of the costs over regE, then needs many
// iterations. Capping them (s.Sinkhorn.MaxIter; the default is
// DefaultSinkhornMaxIter per inner solve) is the usual remedy: a capped
// plan has exact column sums, row sums off by up to a few percent of the
// mass, and Converged false; it is not an error.
//
// The result is that of the last inner solve, except that Cost is
// ⟨C, Plan⟩_F for the original C (no penalty, no entropy), F and G are the
// potentials of the last inner problem, Plan_ij = exp((F_i + G_j − C_ij −
// W_ij)/regE), Iterations is the total number of Sinkhorn iterations over
// all outer iterations, and Converged reports the convergence of the last
// inner solve.
//
// SinkhornLpl1 returns an error, prefixed "ot: ", for the invalid inputs
// of Sinkhorn (weights summing to less than 1e-100 or more than 1e100
// included); when labels does not have one entry per row of C or has a
// negative entry; when regE is not positive and finite, regCl is negative
// or not finite, (C + W)/regE may overflow or max|C_ij|/regE exceeds 10¹²
// (float64 exponents of that size are rounded to more than 10⁻⁴); and when
// a field of s is invalid.
func SinkhornLpl1(a, b []float64, C mat.Matrix, labels []int, regE, regCl float64, s *SinkhornLpl1Settings) (*SinkhornResult, error) {
	if !(regE > 0) || math.IsInf(regE, 1) {
		return nil, fmt.Errorf("ot: sinkhorn lpl1: regE must be positive and finite, got %g", regE)
	}
	if !(regCl >= 0) || math.IsInf(regCl, 1) {
		return nil, fmt.Errorf("ot: sinkhorn lpl1: regCl must be non-negative and finite, got %g", regCl)
	}
	p, eps, outer, inner, err := lpl1Config(s)
	if err != nil {
		return nil, err
	}
	tol, maxIter, workers, err := sinkhornConfig(inner)
	if err != nil {
		return nil, err
	}
	c, n, m, err := costData(C)
	if err != nil {
		return nil, err
	}
	a, b, err = checkMarginals(a, b, n, m)
	if err != nil {
		return nil, err
	}
	group, ng, err := lpl1Groups(labels, n)
	if err != nil {
		return nil, err
	}
	sa, err := checkMass("sinkhorn lpl1", a)
	if err != nil {
		return nil, err
	}
	eps *= sa
	if err := lpl1CheckRange(c, regE, regCl, p, eps); err != nil {
		return nil, err
	}
	if regCl == 0 {
		outer = 1
	}

	if n*m < parallelMin {
		workers = 1
	}
	workers = min(workers, max(n, m))
	pl := newPool(workers)
	defer pl.close()

	// cw holds C + W, the cost of the current inner problem.
	cw := make([]float64, n*m)
	copy(cw, c)
	sk := newSinkhornSolver(a, b, cw, n, m, 1/regE)
	mass := make([]float64, ng*m) // per-group masses Σ_{i∈I_c} π_ij, group-major
	total := 0
	var converged bool
	for it := 0; it < outer; it++ {
		if it > 0 {
			groupMass(pl, mass, sk, group, ng)
			lpl1Majorise(cw, c, mass, group, m, regCl, p, eps)
		}
		pl.run(m, sk.transpose)
		var iter int
		iter, converged = sk.iterate(pl, tol, maxIter)
		total += iter
	}
	return lpl1Result(pl, sk, c, regE, total, converged), nil
}

// lpl1Config validates s and returns the exponent p, the relative
// smoothing ε, the number of outer iterations and the inner settings it
// selects, defaults for zero fields and a nil s.
func lpl1Config(s *SinkhornLpl1Settings) (p, eps float64, outer int, inner *SinkhornSettings, err error) {
	p, eps, outer = DefaultLpl1P, DefaultLpl1Eps, DefaultLpl1OuterIter
	if s == nil {
		return p, eps, outer, nil, nil
	}
	switch {
	case math.IsNaN(s.P) || s.P < 0 || s.P > 1:
		return 0, 0, 0, nil, fmt.Errorf("ot: sinkhorn lpl1: P must lie in (0, 1], got %g", s.P)
	case math.IsNaN(s.Eps) || math.IsInf(s.Eps, 0) || s.Eps < 0:
		return 0, 0, 0, nil, fmt.Errorf("ot: sinkhorn lpl1: Eps must be non-negative and finite, got %g", s.Eps)
	case s.OuterIter < 0:
		return 0, 0, 0, nil, fmt.Errorf("ot: sinkhorn lpl1: OuterIter must be non-negative, got %d", s.OuterIter)
	}
	if s.P > 0 {
		p = s.P
	}
	if s.Eps > 0 {
		eps = s.Eps
	}
	if s.OuterIter > 0 {
		outer = s.OuterIter
	}
	return p, eps, outer, s.Sinkhorn, nil
}

// lpl1Groups maps the label values of the n rows to group indices
// 0 … ng−1, in order of first appearance.
func lpl1Groups(labels []int, n int) (group []int, ng int, err error) {
	if len(labels) != n {
		return nil, 0, fmt.Errorf("ot: sinkhorn lpl1: %d labels for a cost matrix of %d rows", len(labels), n)
	}
	group = make([]int, n)
	index := make(map[int]int)
	for i, l := range labels {
		if l < 0 {
			return nil, 0, fmt.Errorf("ot: sinkhorn lpl1: label %d of row %d is negative", l, i)
		}
		g, ok := index[l]
		if !ok {
			g = len(index)
			index[l] = g
		}
		group[i] = g
	}
	return group, len(index), nil
}

// lpl1CheckRange reports an error when (C + W)/regE may overflow, W up to
// the largest weight of the majoriser regCl·p·ε^(p−1) (at an empty group,
// ε absolute), or when max|C_ij|/regE exceeds maxExponent.
func lpl1CheckRange(c []float64, regE, regCl, p, eps float64) error {
	invReg := 1 / regE
	maxAbs := maxAbsOf(c)
	wMax := regCl * p * math.Pow(eps, p-1)
	if !((maxAbs+wMax)*invReg <= math.MaxFloat64/16) {
		return fmt.Errorf("ot: sinkhorn lpl1: regE = %g is too small for costs of magnitude %g and penalty weights up to %g: the costs over regE overflow", regE, maxAbs, wMax)
	}
	if maxAbs*invReg > maxExponent {
		return fmt.Errorf("ot: sinkhorn lpl1: regE = %g is too small for costs of magnitude %g: the exponents C/regE reach %.3g, beyond the 1e12 that float64 represents to 1e-4; use a larger regE", regE, maxAbs, maxAbs*invReg)
	}
	return nil
}

// lpl1Majorise turns the per-group masses s_cj of the current plan
// (group-major, m columns, overwritten) into the weights of the
// majoriser, W_ij = regCl·p·(s_{c(i)j} + ε)^(p−1), and writes the cost of
// the next inner problem, cw = c + W.
func lpl1Majorise(cw, c, mass []float64, group []int, m int, regCl, p, eps float64) {
	for k, v := range mass {
		mass[k] = regCl * p * math.Pow(v+eps, p-1)
	}
	for i := range group {
		w := mass[group[i]*m : (group[i]+1)*m]
		row := cw[i*m : (i+1)*m]
		for j, cij := range c[i*m : (i+1)*m] {
			row[j] = cij + w[j]
		}
	}
}

// lpl1Result returns the result of the last inner solve of sk: potentials
// F, G in units of the costs, Plan_ij = exp((F_i + G_j − C_ij − W_ij)/regE),
// and Cost ⟨C, Plan⟩_F for the original costs c, summed as Sinkhorn does:
// by rows, then over rows.
func lpl1Result(pl *pool, sk *sinkhornSolver, c []float64, regE float64, total int, converged bool) *SinkhornResult {
	n, m := sk.n, sk.m
	res := &SinkhornResult{
		F:          make([]float64, n),
		G:          make([]float64, m),
		Iterations: total,
		Converged:  converged,
	}
	for i, v := range sk.f {
		res.F[i] = regE * v
	}
	for j, v := range sk.g {
		res.G[j] = regE * v
	}
	res.Plan, _, res.MarginalError = sk.plan(pl, res.F, res.G, regE)
	for i := 0; i < n; i++ {
		var rc float64
		for j, v := range res.Plan.RawRowView(i) {
			rc += v * c[i*m+j]
		}
		res.Cost += rc
	}
	return res
}

// groupMass writes into mass[g*m+j] the mass Σ_{i: group[i]=g} π_ij that
// the rows of group g send to column j under the solver's current plan
// π_ij = exp(f_i + g_j − cw_ij/reg). Every column is summed by one
// goroutine in row order, so the result does not depend on the pool.
func groupMass(pl *pool, mass []float64, sk *sinkhornSolver, group []int, ng int) {
	n, m := sk.n, sk.m
	clear(mass)
	pl.run(m, func(lo, hi int) {
		for i := 0; i < n; i++ {
			fi := sk.f[i]
			if math.IsInf(fi, -1) {
				continue
			}
			dst := mass[group[i]*m+lo : group[i]*m+hi]
			crow := sk.c[i*m+lo : i*m+hi]
			for k, cij := range crow {
				dst[k] += math.Exp(fi + sk.g[lo+k] - cij*sk.invReg)
			}
		}
	})
}

// sinkhornConfig validates s and returns the tolerance, iteration cap and
// number of workers it selects, as Sinkhorn does.
func sinkhornConfig(s *SinkhornSettings) (tol float64, maxIter, workers int, err error) {
	tol, maxIter, workers = DefaultSinkhornTol, DefaultSinkhornMaxIter, runtime.GOMAXPROCS(0)
	if s == nil {
		return tol, maxIter, workers, nil
	}
	switch {
	case math.IsNaN(s.Tol) || s.Tol < 0 || math.IsInf(s.Tol, 1):
		return 0, 0, 0, fmt.Errorf("ot: sinkhorn: Tol must be non-negative and finite, got %g", s.Tol)
	case s.MaxIter < 0:
		return 0, 0, 0, fmt.Errorf("ot: sinkhorn: MaxIter must be non-negative, got %d", s.MaxIter)
	case s.Workers < 0:
		return 0, 0, 0, fmt.Errorf("ot: sinkhorn: Workers must be non-negative, got %d", s.Workers)
	}
	if s.Tol > 0 {
		tol = s.Tol
	}
	if s.MaxIter > 0 {
		maxIter = s.MaxIter
	}
	if s.Workers > 0 {
		workers = s.Workers
	}
	return tol, maxIter, workers, nil
}
