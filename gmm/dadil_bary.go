package gmm

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/ot"
)

// stacked holds the components of one or more mixtures as rows
// z = [m, σ] (2d entries) with their squared norms and labels, so that all
// feature costs between two sets of components are one matrix product:
//
//	‖m − m'‖² + ‖σ − σ'‖² = ‖z‖² + ‖z'‖² − 2⟨z, z'⟩.
//
// Z has n rows of components and zero rows up to a multiple of 8
// (padComponents), so that as the second factor of a product every
// column goes through the kernels of internal/linalg rather than single
// dot products (which give the same bits, more slowly).
type stacked struct {
	n      int // components
	Z      *mat.Dense
	norms  []float64
	labels *mat.Dense // nil for unlabeled mixtures
}

// stack returns the components of the mixtures, in order, stacked.
func stack(ms ...*Mixture) stacked {
	var s stacked
	stackInto(&s, ms...)
	return s
}

// stackInto sets dst to the components of the mixtures, in order,
// stacked, reusing dst's storage when its shape fits.
func stackInto(dst *stacked, ms ...*Mixture) {
	var n int
	for _, m := range ms {
		n += m.Components()
	}
	d, c := ms[0].Dim(), ms[0].Classes()
	if r, cz := dimsOf(dst.Z); dst.n != n || r != padComponents(n) || cz != 2*d || (c > 0) != (dst.labels != nil) {
		*dst = stacked{n: n, Z: mat.NewDense(padComponents(n), 2*d, nil), norms: make([]float64, n)}
		if c > 0 {
			dst.labels = mat.NewDense(n, c, nil)
		}
	}
	r := 0
	for _, m := range ms {
		for k := range m.Components() {
			z := dst.Z.RawRowView(r)
			copy(z[:d], m.Means.RawRowView(k))
			copy(z[d:], m.Std.RawRowView(k))
			dst.norms[r] = dot(z, z)
			if c > 0 {
				copy(dst.labels.RawRowView(r), m.Labels.RawRowView(k))
			}
			r++
		}
	}
}

// dimsOf returns the dimensions of m, 0×0 when m is nil.
func dimsOf(m *mat.Dense) (r, c int) {
	if m == nil {
		return 0, 0
	}
	return m.Dims()
}

// reuse returns dst when it is r×c and a new r×c matrix otherwise; dst's
// entries are left as they are.
func reuse(dst *mat.Dense, r, c int) *mat.Dense {
	if dr, dc := dimsOf(dst); dr == r && dc == c {
		return dst
	}
	return mat.NewDense(r, c, nil)
}

// featureCosts returns F with F_ij = ‖z_i − z'_j‖² for the rows of a and
// b (clamped at 0 against rounding), and its largest entry. F lives in
// *buf (reused when it fits, replaced otherwise).
func featureCosts(buf **mat.Dense, a, b stacked) (F *mat.Dense, largest float64) {
	na, nb := a.n, b.n
	nbp, _ := b.Z.Dims()
	_, d2 := a.Z.Dims()
	*buf = reuse(*buf, na, nbp)
	linalg.MulABT(*buf, a.Z.Slice(0, na, 0, d2).(*mat.Dense), b.Z)
	F = (*buf).Slice(0, na, 0, nb).(*mat.Dense)
	for i := range na {
		row := F.RawRowView(i)
		for j, g := range row {
			row[j] = math.Max(a.norms[i]+b.norms[j]-2*g, 0)
			largest = math.Max(largest, row[j])
		}
	}
	return F, largest
}

// labeledCost returns C_ij = F_{i,j0+j} + β‖y_i − y'_{j0+j}‖² for the
// columns j0 … j0+m−1 of F and of b's labels (β = 0: F's columns alone),
// in *buf (reused when it fits, replaced otherwise).
func labeledCost(buf **mat.Dense, F *mat.Dense, a, b stacked, j0, m int, beta float64) *mat.Dense {
	na, _ := F.Dims()
	*buf = reuse(*buf, na, m)
	C := *buf
	for i := range na {
		row := C.RawRowView(i)
		copy(row, F.RawRowView(i)[j0:j0+m])
		if beta > 0 {
			for j := range row {
				row[j] += beta * sqDist(a.labels.RawRowView(i), b.labels.RawRowView(j0+j))
			}
		}
	}
	return C
}

// scratch holds the buffers of the barycenter and the plans of one
// domain, reused from one learning step to the next: the barycenter and
// its stacked form, the feature and labeled costs, the gradient with
// respect to the barycenter and a transport solver. The zero value is
// ready to use; a scratch must not be used by several goroutines at once,
// and what it returns is overwritten by its next use.
type scratch struct {
	B      *Mixture
	b      stacked
	F, Fq  *mat.Dense // feature costs to the atoms, to the domain
	C      *mat.Dense // labeled costs
	gB     *Gradient
	rows   []float64
	w      []float64 // the target's barycenter's weights (classWeights)
	solver ot.EMDSolver
}

// barycenter returns s's barycenter buffer, of m's shape with weights
// 1/K, made on first need.
func (s *scratch) barycenter(m *Mixture) *Mixture {
	if s.B == nil {
		s.B = templateOf(m)
	}
	return s.B
}

// emd returns an optimal plan for the marginals a and b (nil: uniform)
// and the costs C, as ot.EMD does, reusing the solver's memory.
func (s *scratch) emd(a, b []float64, C *mat.Dense) (ot.Plan, error) {
	var r ot.EMDResult
	if err := s.solver.Solve(&r, a, b, C); err != nil {
		return ot.Plan{}, err
	}
	return r.Plan, nil
}

// fixedPoint returns the labeled barycenter B(α; atoms), K components of
// weight 1/na, and its plans ω^(k) to every atom k, by the fixed-point
// iteration of Barycenter: plans between B and every atom (ot.EMD, cost
// of Cost with label weight β), then B moved to the α-weighted
// barycentric projection of the atoms' components through them,
// B = Φ(α, atoms; ω) (see project). It starts from the projection
// through plans (nil: from the atom of the largest α_k), and stops when
// an iteration leaves the plans unchanged, B then being an exact fixed
// point, or after maxIter iterations; either way B = Φ(α, atoms; ω) for
// the plans returned. all holds the atoms stacked. β = 0 selects the
// largest feature cost between the start and the atoms' components. It
// returns B stacked too; B and its stacked form live in s (nil: a new
// scratch).
func fixedPoint(atoms []*Mixture, all stacked, alpha []float64, plans []ot.Plan, beta float64, maxIter int, s *scratch) (*Mixture, []ot.Plan, stacked, error) {
	if s == nil {
		s = &scratch{}
	}
	na := atoms[0].Components()
	B := atoms[argmax(alpha)]
	if plans != nil {
		B = projectInto(s.barycenter(atoms[0]), plans, atoms, alpha, &s.rows)
	}
	stackInto(&s.b, B)
	for it := 0; it < maxIter; it++ {
		F, largest := featureCosts(&s.F, s.b, all)
		if beta == 0 {
			beta = largest
			if beta == 0 {
				beta = 1
			}
		}
		next := make([]ot.Plan, len(atoms))
		for k := range atoms {
			pl, err := s.emd(nil, nil, labeledCost(&s.C, F, s.b, all, k*na, na, beta))
			if err != nil {
				return nil, nil, stacked{}, errf("barycenter: atom %d: %v", k, err)
			}
			next[k] = pl
		}
		if plans != nil && samePlans(plans, next) {
			return B, plans, s.b, nil
		}
		plans = next
		B = projectInto(s.barycenter(atoms[0]), plans, atoms, alpha, &s.rows)
		stackInto(&s.b, B)
	}
	return B, plans, s.b, nil
}

// templateOf returns a mixture of m's shape with weights 1/K and zero
// parameters, the first argument of project.
func templateOf(m *Mixture) *Mixture {
	K, d := m.Components(), m.Dim()
	t := &Mixture{Weights: uniform(K), Means: mat.NewDense(K, d, nil), Std: mat.NewDense(K, d, nil)}
	if m.Labels != nil {
		t.Labels = mat.NewDense(K, m.Classes(), nil)
	}
	return t
}

// samePlans reports whether two lists of plans are equal entry by entry.
func samePlans(a, b []ot.Plan) bool {
	for k := range a {
		if !slices.Equal(a[k].Row, b[k].Row) || !slices.Equal(a[k].Col, b[k].Col) || !slices.Equal(a[k].Mass, b[k].Mass) {
			return false
		}
	}
	return true
}

// fitPlan returns an optimal plan from B, its components weighed w, to Q
// for the cost of Cost with label weight beta (beta < 0: the largest
// feature cost between their components; the weight used is returned), b
// and q being B and Q stacked; its costs live in s.
func fitPlan(B, Q *Mixture, w []float64, b, q stacked, beta float64, s *scratch) (ot.Plan, float64, error) {
	F, largest := featureCosts(&s.Fq, b, q)
	if beta < 0 {
		beta = largest
		if beta == 0 {
			beta = 1
		}
	}
	pl, err := s.emd(w, rescaled(Q.Weights, w), labeledCost(&s.C, F, b, q, 0, Q.Components(), beta))
	if err != nil {
		return ot.Plan{}, 0, errf("%v", err)
	}
	return pl, beta, nil
}

// classWeights returns the weights of B's components that give class c
// the mass p[c]: component j of weight w_j and labels y_j gets
//
//	w'_j = w_j Σ_c y_jc p_c / m_c,   m_c = Σ_j w_j y_jc,
//
// m_c being B's mass of class c (classes of no mass contribute nothing):
// every component of class c is scaled by p_c/m_c when the labels are
// one-hot, and then class c has mass p_c exactly; soft labels mix their
// classes' scalings. Σ_j w'_j = 1 (renormalised when p gives mass to a
// class B lacks; B's own weights when p gives mass to none it has).
func classWeights(dst []float64, B *Mixture, p []float64) []float64 {
	dst = slices.Grow(dst[:0], len(B.Weights))[:len(B.Weights)]
	m := make([]float64, len(p))
	for j, w := range B.Weights {
		floats.AddScaled(m, w, B.Labels.RawRowView(j))
	}
	var sum float64
	for j, w := range B.Weights {
		var v float64
		for c, y := range B.Labels.RawRowView(j) {
			if m[c] > 0 {
				v += y * p[c] / m[c]
			}
		}
		dst[j] = w * v
		sum += dst[j]
	}
	if !(sum > 0) { // p holds only classes B lacks: B's own weights
		return append(dst[:0], B.Weights...)
	}
	floats.Scale(1/sum, dst) // 1 up to rounding, or less when a class of p has no mass in B
	return dst
}
