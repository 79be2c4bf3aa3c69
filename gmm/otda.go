package gmm

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/ot"
)

// Map is the GMM-OTDA map (TMLR 2024, after Delon & Desolneux 2020) from
// the mixture Source = Σ_k w_k N(m_k, σ_k²) to Target = Σ_l w'_l N(m'_l,
// σ'_l²) through a plan ω between their components. Between two
// components the optimal map of diagonal Gaussians is affine,
//
//	T_kl(x) = m'_l + (σ'_l / σ_k) ⊙ (x − m_k),
//
// and a point x is mapped by mixing, or drawing, these maps with the
// weights
//
//	w_kl(x) = γ_k(x) ω_kl / r_k,   r_k = Σ_l ω_kl,
//
// γ_k(x) the posterior of component k under Source (r_k = w_k for a plan
// of MW₂; Σ_kl w_kl(x) = 1).
type Map struct {
	Source, Target *Mixture
	Plan           ot.Plan
}

// NewMap returns the map from P to Q through the MW₂ plan between their
// components (label weight beta, see MW2).
func NewMap(P, Q *Mixture, beta float64) (*Map, error) {
	cp, err := MW2(P, Q, beta)
	if err != nil {
		return nil, err
	}
	return &Map{Source: P, Target: Q, Plan: cp.Plan}, nil
}

// Mean sets dst (n×d; an empty dst is resized, dst may be X) to the
// weighted map of the rows of X,
//
//	T(x) = Σ_kl w_kl(x) T_kl(x) = Σ_k γ_k(x) (a_k + s_k ⊙ x),
//	s_k = Σ_l (ω_kl / r_k) σ'_l / σ_k,   a_k = Σ_l (ω_kl / r_k) m'_l − s_k ⊙ m_k.
func (t *Map) Mean(dst, X *mat.Dense) error {
	if _, err := t.check(dst, X); err != nil {
		return err
	}
	AT, ST := t.affine()
	t.eachRow(X, 0, func(i int, x, g []float64, _ *rand.Rand) {
		out := dst.RawRowView(i)
		for j, v := range x {
			a, s := AT.RawRowView(j), ST.RawRowView(j)
			var acc float64
			for k, gk := range g {
				if gk != 0 {
					acc += gk * (a[k] + s[k]*v)
				}
			}
			out[j] = acc
		}
	})
	return nil
}

// affine returns the terms a_k and s_k of Mean as the columns of two d×K
// matrices (zero for a component without mass in the plan).
func (t *Map) affine() (AT, ST *mat.Dense) {
	K, d := t.Source.Components(), t.Source.Dim()
	AT, ST = mat.NewDense(d, K, nil), mat.NewDense(d, K, nil)
	for e, w := range t.Plan.Mass {
		k, l := t.Plan.Row[e], t.Plan.Col[e]
		for j := range d {
			AT.Set(j, k, AT.At(j, k)+w*t.Target.Means.At(l, j))
			ST.Set(j, k, ST.At(j, k)+w*t.Target.Std.At(l, j))
		}
	}
	for k, r := range t.Plan.RowSums() {
		if r == 0 {
			continue
		}
		for j := range d {
			s := ST.At(j, k) / (r * t.Source.Std.At(k, j))
			ST.Set(j, k, s)
			AT.Set(j, k, AT.At(j, k)/r-s*t.Source.Means.At(k, j))
		}
	}
	return AT, ST
}

// Random sets dst (n×d; an empty dst is resized, dst may be X) to the
// random map of the rows of X: for each row a pair (k, l) is drawn with probability
// w_kl(x), k from the posterior γ(x) then l from row k of the plan, and
// x is mapped by T_kl. It returns the drawn target components l. The draws
// come from the PCG streams of seed, one per block of rows, so they do not
// depend on the number of goroutines.
func (t *Map) Random(dst, X *mat.Dense, seed uint64) ([]int, error) {
	n, err := t.check(dst, X)
	if err != nil {
		return nil, err
	}
	start := make([]int, t.Plan.N+1) // plan entries of row k: start[k] … start[k+1]−1
	for _, k := range t.Plan.Row {
		start[k+1]++
	}
	for k := range t.Plan.N {
		start[k+1] += start[k]
	}
	r := t.Plan.RowSums()
	comp := make([]int, n)
	t.eachRow(X, seed, func(i int, x, g []float64, rng *rand.Rand) {
		k := drawIndex(g, 1, rng)
		e := start[k] + drawIndex(t.Plan.Mass[start[k]:start[k+1]], r[k], rng)
		l := t.Plan.Col[e]
		comp[i] = l
		out, m, sd := dst.RawRowView(i), t.Source.Means.RawRowView(k), t.Source.Std.RawRowView(k)
		m2, sd2 := t.Target.Means.RawRowView(l), t.Target.Std.RawRowView(l)
		for j, v := range x {
			out[j] = m2[j] + sd2[j]/sd[j]*(v-m[j])
		}
	})
	return comp, nil
}

// drawIndex draws an index with probability p_i / total, never one of
// probability 0.
func drawIndex(p []float64, total float64, rng *rand.Rand) int {
	u := rng.Float64() * total
	last := 0
	var s float64
	for i, v := range p {
		if v > 0 {
			last = i
			s += v
			if s > u {
				return i
			}
		}
	}
	return last
}

// check validates the map and X and sizes dst.
func (t *Map) check(dst, X *mat.Dense) (int, error) {
	if err := checkPair(t.Source, t.Target, 0); err != nil {
		return 0, err
	}
	p := &t.Plan
	K, L := t.Source.Components(), t.Target.Components()
	if p.N != K || p.M != L || len(p.Row) != len(p.Mass) || len(p.Col) != len(p.Mass) {
		return 0, errf("Map: the plan is %d×%d with %d, %d and %d entries; the mixtures have %d and %d components",
			p.N, p.M, len(p.Row), len(p.Col), len(p.Mass), K, L)
	}
	for e, w := range p.Mass {
		if k, l := p.Row[e], p.Col[e]; k < 0 || k >= K || l < 0 || l >= L || !(w >= 0) || math.IsInf(w, 1) ||
			(e > 0 && k < p.Row[e-1]) {
			return 0, errf("Map: plan entry %d (%d, %d, %v) is out of range, negative or out of row order", e, k, l, w)
		}
	}
	r := p.RowSums()
	for k, w := range t.Source.Weights {
		if w > 0 && !(r[k] > 0) {
			return 0, errf("Map: source component %d has weight %v but no mass in the plan", k, w)
		}
	}
	n, err := t.Source.checkRows(X)
	if err != nil {
		return 0, err
	}
	return n, reuseAs(dst, n, t.Source.Dim(), "Map")
}

// eachRow calls fn(i, x_i, γ(x_i), rng) for every row of X, in parallel by
// blocks, rng being the PCG stream of seed for the row's block.
func (t *Map) eachRow(X *mat.Dense, seed uint64, fn func(i int, x, g []float64, rng *rand.Rand)) {
	P := t.Source
	sc := newScorer(P, P.Mean())
	eng := newEngine(X, sc.center, 0, sc.K)
	eng.forBlocks(func(b int, wk *work) {
		rng := rand.New(rand.NewPCG(seed, uint64(b)))
		r0, r1 := eng.block(b)
		for c0 := r0; c0 < r1; c0 += wk.chunk {
			c1 := min(c0+wk.chunk, r1)
			L, _ := eng.score(wk, c0, c1, sc)
			for i := range c1 - c0 {
				logSumExpTo(wk.prob, L.RawRowView(i)[:sc.K])
				fn(c0+i, X.RawRowView(c0+i), wk.prob, rng)
			}
		}
	})
}
