package gmm

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
)

// Defaults of Settings.
const (
	DefaultMaxIter       = 100
	DefaultTol           = 1e-6
	DefaultVarFloor      = 1e-6
	DefaultMaxComponents = 10
)

// Settings control Fit and FitLabeled. The zero value, like a nil
// *Settings, selects the defaults.
type Settings struct {
	// Components is K, the number of components. Zero chooses it by BIC
	// among 1 … MaxComponents (see Fit).
	Components int
	// MaxComponents is the largest K tried by BIC; default 10. Never more
	// than the number of rows is tried.
	MaxComponents int
	// MaxIter caps the EM iterations; default 100.
	MaxIter int
	// Tol stops EM when an iteration raises the mean log-likelihood per
	// row by less than Tol; default 1e-6.
	Tol float64
	// VarFloor is the variance floor, relative to the data: every
	// component's variance of feature j is at least VarFloor·v_j, v_j the
	// variance of feature j over all rows (the mean variance of the
	// features when feature j is constant, all its values equal, however
	// its mean rounds; 1 when every feature is constant). Default 1e-6.
	VarFloor float64
	// Seed seeds the k-means++ start (math/rand/v2 PCG).
	Seed uint64
	// Workers caps the goroutines; 0 means GOMAXPROCS. Results do not
	// depend on it.
	Workers int
}

// Status says why EM stopped.
type Status int

const (
	// Converged: an iteration raised the mean log-likelihood by less than
	// Settings.Tol.
	Converged Status = iota + 1
	// IterationLimit: Settings.MaxIter iterations ran first.
	IterationLimit
)

func (s Status) String() string {
	switch s {
	case Converged:
		return "converged"
	case IterationLimit:
		return "iteration limit"
	}
	return "unknown"
}

// Result is the outcome of Fit.
type Result struct {
	// Mixture is the fitted mixture (unlabeled).
	Mixture *Mixture
	// LogLikelihood holds the mean log-likelihood per row, (1/n) Σ_i log
	// p(x_i), of the k-means++ start and after every iteration
	// (Iterations+1 entries, non-decreasing up to rounding).
	LogLikelihood []float64
	// Iterations is the number of EM iterations run.
	Iterations int
	// Status says why EM stopped.
	Status Status
	// BIC is −2·n·ℓ + p·ln n for the returned mixture, ℓ its mean
	// log-likelihood and p = (K−1) + 2Kd its number of free parameters.
	BIC float64
	// Candidates holds, when K was chosen by BIC, every K tried with its
	// BIC, in increasing K; nil otherwise.
	Candidates []Candidate
}

// Candidate is a component count tried by BIC and its score.
type Candidate struct {
	Components int
	BIC        float64
}

// withDefaults returns s with its defaults filled in, or an error naming a
// bad field.
func (s *Settings) withDefaults() (Settings, error) {
	var t Settings
	if s != nil {
		t = *s
	}
	switch {
	case t.Components < 0:
		return t, errf("Settings.Components = %d is negative", t.Components)
	case t.MaxComponents < 0:
		return t, errf("Settings.MaxComponents = %d is negative", t.MaxComponents)
	case t.MaxIter < 0:
		return t, errf("Settings.MaxIter = %d is negative", t.MaxIter)
	case !(t.Tol >= 0) || math.IsInf(t.Tol, 1):
		return t, errf("Settings.Tol = %v must be finite and non-negative", t.Tol)
	case !(t.VarFloor >= 0) || math.IsInf(t.VarFloor, 1):
		return t, errf("Settings.VarFloor = %v must be finite and non-negative", t.VarFloor)
	case t.Workers < 0:
		return t, errf("Settings.Workers = %d is negative", t.Workers)
	}
	if t.MaxComponents == 0 {
		t.MaxComponents = DefaultMaxComponents
	}
	if t.MaxIter == 0 {
		t.MaxIter = DefaultMaxIter
	}
	if t.Tol == 0 {
		t.Tol = DefaultTol
	}
	if t.VarFloor == 0 {
		t.VarFloor = DefaultVarFloor
	}
	return t, nil
}

// Fit fits a diagonal-covariance Gaussian mixture to the rows of X (n×d)
// by expectation–maximisation.
//
// Start: k-means++ seeds (Arthur & Vassilvitskii 2007; seeded by
// Settings.Seed), every row assigned to its nearest seed, and the
// component parameters of that hard assignment. Each iteration then
// computes the responsibilities γ_ik in the log domain (log-sum-exp) and
// sets
//
//	N_k = Σ_i γ_ik,  w_k = N_k / n,  m_k = (1/N_k) Σ_i γ_ik x_i,
//	σ_kj² = max((1/N_k) Σ_i γ_ik x_ij² − m_kj², floor_j)
//
// (computed on x − x̄, x̄ the mean row). The floor is a constraint of the
// M-step, so the log-likelihood never decreases. A component with N_k = 0
// keeps its mean and deviations and gets weight 0.
//
// With Settings.Components = 0, K is chosen among 1 … MaxComponents (at
// most n) as the smallest BIC = −2·n·ℓ + ((K−1) + 2Kd)·ln n; ties go to
// the smaller K. The fit of each K uses the PCG stream K of the seed, so
// it equals Fit with Components = K.
//
// Rows are processed in fixed blocks whose sums are added in block order:
// results are bit-identical for any Settings.Workers and GOMAXPROCS.
func Fit(X *mat.Dense, s *Settings) (*Result, error) {
	set, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, _, err := checkData(X, "X"); err != nil {
		return nil, err
	}
	return fit(X, set, 0)
}

// fit is Fit on checked data, with the PCG streams offset by stream (one
// per class in FitLabeled).
func fit(X *mat.Dense, set Settings, stream uint64) (*Result, error) {
	n, _ := X.Dims()
	if set.Components > n {
		return nil, errf("%d components for %d rows", set.Components, n)
	}
	p := prepare(X, set.Workers, set.VarFloor)
	if set.Components > 0 {
		return p.fitK(set, set.Components, stream), nil
	}
	var best *Result
	var cands []Candidate
	for K := 1; K <= min(set.MaxComponents, n); K++ {
		r := p.fitK(set, K, stream)
		cands = append(cands, Candidate{K, r.BIC})
		if best == nil || r.BIC < best.BIC {
			best = r
		}
	}
	best.Candidates = cands
	return best, nil
}

// problem is the data of a fit: X, its mean row, the variances of its
// features and the variance floor of each feature.
type problem struct {
	X        *mat.Dense
	n, d     int
	workers  int
	mean     []float64
	variance []float64
	floor    []float64
}

// prepare computes the mean row, the feature variances and the floors.
func prepare(X *mat.Dense, workers int, varFloor float64) *problem {
	n, d := X.Dims()
	p := &problem{X: X, n: n, d: d, workers: workers}
	p.mean = p.columnSums(make([]float64, d), false)
	for j := range p.mean {
		p.mean[j] /= float64(n)
	}
	p.variance = p.columnSums(p.mean, true)
	constant := constantFeatures(X)
	var avg float64
	for j := range p.variance {
		p.variance[j] /= float64(n)
		if constant[j] {
			// Rounding leaves the mean off the common value, and the
			// computed variance at rounding noise (~1e-32), not 0.
			p.variance[j] = 0
		}
		avg += p.variance[j] / float64(d)
	}
	p.floor = make([]float64, d)
	for j, v := range p.variance {
		switch {
		case v > 0:
			p.floor[j] = varFloor * v
		case avg > 0:
			p.floor[j] = varFloor * avg
		default:
			p.floor[j] = varFloor
		}
	}
	return p
}

// constantFeatures reports, for every feature, whether all the rows of X
// hold the same value. It stops reading as soon as no feature is left
// constant, usually after a few rows.
func constantFeatures(X *mat.Dense) []bool {
	n, d := X.Dims()
	constant := make([]bool, d)
	for j := range constant {
		constant[j] = true
	}
	left := d
	first := X.RawRowView(0)
	for i := 1; i < n && left > 0; i++ {
		for j, v := range X.RawRowView(i) {
			if constant[j] && v != first[j] {
				constant[j] = false
				left--
			}
		}
	}
	return constant
}

// columnSums returns Σ_i (x_ij − c_j) for every feature j, or Σ_i (x_ij −
// c_j)² when square, summed by blocks.
func (p *problem) columnSums(c []float64, square bool) []float64 {
	e := newEngine(p.X, c, p.workers, 1)
	part := make([]float64, e.blocks*p.d)
	e.eachBlock(func(b int) {
		r0, r1 := e.block(b)
		s := part[b*p.d : (b+1)*p.d]
		for i := r0; i < r1; i++ {
			for j, v := range p.X.RawRowView(i) {
				u := v - c[j]
				if square {
					u *= u
				}
				s[j] += u
			}
		}
	})
	out := make([]float64, p.d)
	for b := range e.blocks {
		for j, v := range part[b*p.d : (b+1)*p.d] {
			out[j] += v
		}
	}
	return out
}

// fitK runs k-means++ and EM with K components.
func (p *problem) fitK(set Settings, K int, stream uint64) *Result {
	rng := rand.New(rand.NewPCG(set.Seed, stream*0x9e3779b97f4a7c15+uint64(K)))
	e := newEngine(p.X, p.mean, p.workers, K)
	e.cacheZ()
	seeds := e.kmeansPP(K, rng)
	st := newStats(e.blocks, K, p.d)
	e.pass(st, nearestScorer(seeds, p.mean), true)
	mix := p.mstep(st, nil, seeds)
	trace := []float64{e.pass(st, newScorer(mix, p.mean), false)}
	res := &Result{Status: IterationLimit}
	for it := 1; it <= set.MaxIter; it++ {
		mix = p.mstep(st, mix, nil)
		ll := e.pass(st, newScorer(mix, p.mean), false)
		trace = append(trace, ll)
		res.Iterations = it
		if ll-trace[it-1] < set.Tol {
			res.Status = Converged
			break
		}
	}
	res.Mixture, res.LogLikelihood = mix, trace
	params := float64(K-1) + 2*float64(K*p.d)
	res.BIC = -2*float64(p.n)*trace[len(trace)-1] + params*math.Log(float64(p.n))
	return res
}

// stats are the sufficient statistics of every block: N_k, the sums
// [Σ γ z∘z, Σ γ z] of every component (z = x − x̄) and the summed
// log-likelihood.
type stats struct {
	K, d int
	n    []float64 // blocks×K
	s    []float64 // blocks×K×2d
	ll   []float64 // blocks
}

func newStats(blocks, K, d int) *stats {
	return &stats{K: K, d: d, n: make([]float64, blocks*K), s: make([]float64, blocks*K*2*d), ll: make([]float64, blocks)}
}

// pass computes the responsibilities of every row under sc (hard: one-hot
// at the largest score) and the blocks' statistics, and returns the mean
// log-likelihood (meaningless when hard). With at least as many blocks as
// goroutines, blocks run in parallel; otherwise each block's chunks do
// (passWithin). Either way every sum is taken in the same order.
func (e *engine) pass(st *stats, sc *scorer, hard bool) float64 {
	K, d2 := st.K, 2*st.d
	if e.within() {
		if len(e.g) < K*min(blockRows, e.n) {
			e.g = make([]float64, K*min(blockRows, e.n))
		}
		for b := range e.blocks {
			e.passWithin(st, sc, hard, b, e.g)
		}
	} else {
		e.forBlocks(func(b int, wk *work) {
			r0, r1 := e.block(b)
			nb, sb := st.n[b*K:(b+1)*K], st.s[b*K*d2:(b+1)*K*d2]
			clear(nb)
			clear(sb)
			var ll float64
			for c0 := r0; c0 < r1; c0 += wk.chunk {
				c1 := min(c0+wk.chunk, r1)
				L, z := e.score(wk, c0, c1, sc)
				ll += wk.responsibilities(L, c1-c0, hard, wk.rT, wk.chunk, 0)
				addMass(nb, wk.rT, wk.chunk, 0, c1-c0)
				wk.addSums(wk.rT, wk.chunk, 0, z, 0, e.d, sb)
			}
			st.ll[b] = ll
		})
	}
	var ll float64
	for _, v := range st.ll {
		ll += v
	}
	return ll / float64(e.n)
}

// passWithin is pass over block b on all goroutines: the responsibilities
// of the block's chunks in parallel, kept in g (K×rows of the block),
// then the sums, the features split into ranges in parallel, each range
// reading the chunks in order. Every entry of the statistics is summed in
// the order of one goroutine going through the chunks, bit for bit.
func (e *engine) passWithin(st *stats, sc *scorer, hard bool, b int, g []float64) {
	K, d, d2 := st.K, st.d, 2*st.d
	r0, r1 := e.block(b)
	stride := r1 - r0
	llc := make([]float64, (stride+e.chunk-1)/e.chunk)
	e.forChunks(r0, r1, func(c0, c1 int, wk *work) {
		L, _ := e.score(wk, c0, c1, sc)
		llc[(c0-r0)/e.chunk] = wk.responsibilities(L, c1-c0, hard, g, stride, c0-r0)
	})
	nb, sb := st.n[b*K:(b+1)*K], st.s[b*K*d2:(b+1)*K*d2]
	clear(nb)
	clear(sb)
	for c0 := r0; c0 < r1; c0 += e.chunk {
		addMass(nb, g, stride, c0-r0, min(c0+e.chunk, r1)-c0)
	}
	parts := min(e.procs, (d+sumTile-1)/sumTile)
	par.ForEach(parts, parts, func(part int) {
		wk := e.take()
		f0, f1 := part*d/parts, (part+1)*d/parts
		for c0 := r0; c0 < r1; c0 += e.chunk {
			_, z := e.z(wk, c0, min(c0+e.chunk, r1), f0, f1)
			wk.addSums(g, stride, c0-r0, z, f0, f1, sb)
		}
		e.put(wk)
	}, nil)
	var ll float64
	for _, v := range llc {
		ll += v
	}
	st.ll[b] = ll
}

// responsibilities sets, for the rows i < rows of the scores L, g[k·stride
// + off + i] = γ_ik (hard: one-hot at the largest score) and returns their
// summed log-likelihood (0 when hard).
func (wk *work) responsibilities(L *mat.Dense, rows int, hard bool, g []float64, stride, off int) float64 {
	var ll float64
	for i := range rows {
		l := L.RawRowView(i)[:wk.K]
		if hard {
			clear(wk.prob)
			wk.prob[argmax(l)] = 1
		} else {
			ll += logSumExpTo(wk.prob, l)
		}
		for k, p := range wk.prob {
			g[k*stride+off+i] = p
		}
	}
	return ll
}

// addMass adds Σ_i γ_ik to nb[k] for every component k, over the rows i
// < rows whose responsibilities are g[k·stride + off + i].
func addMass(nb, g []float64, stride, off, rows int) {
	for k := range nb {
		var s float64
		for _, v := range g[k*stride+off : k*stride+off+rows] {
			s += v
		}
		nb[k] += s
	}
}

// sumTile is the number of features whose columns of Z addSums runs
// through all components before moving on, so that they stay in cache.
const sumTile = 64

// addSums adds Σ_i γ_ik Z_ij to sb[k·2d + j] for every component k and
// the columns j of the features f0 ≤ f < f1 (j = f and j = d+f), over
// the rows Z_i of Z whose responsibilities are g[k·stride + off + i].
// Every entry is summed over the rows in order (linalg.AddScaledRows),
// skipping the rows whose γ_ik is exactly 0: in high dimension most
// responsibilities underflow to 0, and adding 0·Z_ij (finite) to a sum
// started at +0 leaves its bits unchanged.
func (wk *work) addSums(g []float64, stride, off int, Z [][]float64, f0, f1 int, sb []float64) {
	d, d2, rows := wk.d, 2*wk.d, len(Z)
	for k := range wk.K {
		wk.nz[k] = wk.compact(k, g[k*stride+off:k*stride+off+rows])
	}
	for t0 := f0; t0 < f1; t0 += sumTile {
		t1 := min(t0+sumTile, f1)
		cols := [][2]int{{t0, t1}, {d + t0, d + t1}}
		if t0 == 0 && t1 == d {
			cols = [][2]int{{0, d2}} // all of Z's columns at once
		}
		for _, c := range cols {
			j0, j1 := c[0], c[1]
			all := Z // the rows of Z cut to [j0, j1), made on first need
			if j0 != 0 || j1 != d2 {
				all = nil
			}
			for k, idx := range wk.nz {
				switch {
				case idx == nil: // every row
					if all == nil {
						all = wk.zall[:rows]
						for i, z := range Z {
							all[i] = z[j0:j1]
						}
					}
					linalg.AddScaledRows(sb[k*d2+j0:k*d2+j1], g[k*stride+off:k*stride+off+rows], all)
				case len(idx) > 0:
					z := wk.ztile[:len(idx)]
					for q, i := range idx {
						z[q] = Z[i][j0:j1]
					}
					linalg.AddScaledRows(sb[k*d2+j0:k*d2+j1], wk.wz[k], z)
				}
			}
		}
	}
}

// compact returns nil when no entry of r (component k's responsibilities
// of a chunk) is 0, and otherwise the indices of its non-zero entries,
// their values going to wk.wz[k].
func (wk *work) compact(k int, r []float64) []int {
	zeros := 0
	for _, v := range r {
		if v == 0 {
			zeros++
		}
	}
	if zeros == 0 {
		return nil
	}
	idx, w := wk.nzBuf[k*wk.chunk:][:len(r)], wk.wzBuf[k*wk.chunk:][:len(r)]
	m := 0
	for i, v := range r {
		idx[m], w[m] = i, v // kept when v ≠ 0, overwritten otherwise
		if v != 0 {
			m++
		}
	}
	wk.wz[k] = w[:m]
	return idx[:m]
}

// mstep returns the mixture of the summed statistics of st. A component
// with N_k = 0 keeps the mean and deviations of prev, or, when prev is nil,
// is centred on its seed (a row of seeds, centred) with the feature
// deviations of the data.
func (p *problem) mstep(st *stats, prev *Mixture, seeds *mat.Dense) *Mixture {
	K, d, d2 := st.K, p.d, 2*p.d
	N := make([]float64, K)
	S := make([]float64, K*d2)
	for b := range len(st.ll) {
		for k := range K {
			N[k] += st.n[b*K+k]
		}
		for t, v := range st.s[b*K*d2 : (b+1)*K*d2] {
			S[t] += v
		}
	}
	var total float64
	for _, v := range N {
		total += v
	}
	m := &Mixture{Weights: make([]float64, K), Means: mat.NewDense(K, d, nil), Std: mat.NewDense(K, d, nil)}
	for k := range K {
		mu, sd := m.Means.RawRowView(k), m.Std.RawRowView(k)
		if N[k] == 0 {
			if prev != nil {
				copy(mu, prev.Means.RawRowView(k))
				copy(sd, prev.Std.RawRowView(k))
				continue
			}
			for j, v := range seeds.RawRowView(k) {
				mu[j] = v + p.mean[j]
				sd[j] = math.Sqrt(max(p.variance[j], p.floor[j]))
			}
			continue
		}
		m.Weights[k] = N[k] / total
		sq, lin := S[k*d2:k*d2+d], S[k*d2+d:(k+1)*d2]
		for j := range d {
			u := lin[j] / N[k]
			mu[j] = u + p.mean[j]
			sd[j] = math.Sqrt(max(sq[j]/N[k]-u*u, p.floor[j]))
		}
	}
	return m
}
