package ot

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// checkTree verifies the tree invariants of the workspace: parents, depths,
// a cyclic preorder thread with its reverse, strong feasibility, zero
// reduced costs on tree arcs and the arc membership flags.
func checkTree(t *testing.T, ns *netSimplex) {
	t.Helper()
	n, m := ns.n, ns.m
	nodes := n + m
	if ns.parent[0] != -1 || ns.depth[0] != 0 {
		t.Fatalf("root: parent %d depth %d", ns.parent[0], ns.depth[0])
	}
	seen := make([]bool, nodes)
	v := 0
	order := make([]int, 0, nodes)
	for k := 0; k < nodes; k++ {
		if seen[v] {
			t.Fatalf("thread revisits node %d", v)
		}
		seen[v] = true
		order = append(order, v)
		nx := int(ns.thread[v])
		if int(ns.rev[nx]) != v {
			t.Fatalf("rev[thread[%d]] = %d", v, ns.rev[nx])
		}
		v = nx
	}
	if v != 0 {
		t.Fatalf("thread does not return to the root after %d nodes", nodes)
	}
	pos := make([]int, nodes)
	for k, v := range order {
		pos[v] = k
	}
	treeArcs := 0
	scale := 1.0
	for _, c := range ns.cost {
		scale = math.Max(scale, math.Abs(c))
	}
	for v := 1; v < nodes; v++ {
		p := int(ns.parent[v])
		if (v < n) == (p < n) {
			t.Fatalf("node %d and its parent %d are on the same side", v, p)
		}
		if ns.depth[v] != ns.depth[p]+1 {
			t.Fatalf("depth[%d] = %d, parent depth %d", v, ns.depth[v], ns.depth[p])
		}
		if pos[p] >= pos[v] {
			t.Fatalf("parent %d after child %d in the thread", p, v)
		}
		if ns.flow[v] < 0 {
			t.Fatalf("negative flow %g on node %d", ns.flow[v], v)
		}
		if v >= n && ns.flow[v] == 0 {
			t.Fatalf("demand node %d has a zero-flow arc: tree not strongly feasible", v)
		}
		e := ns.arc(v, p)
		if !ns.inTree[e] {
			t.Fatalf("tree arc %d (%d-%d) not flagged", e, v, p)
		}
		i, j := e/m, n+e%m
		if rc := ns.cost[e] + ns.pi[i] - ns.pi[j]; math.Abs(rc) > 1e-9*scale {
			t.Fatalf("tree arc %d has reduced cost %g", e, rc)
		}
		treeArcs++
	}
	// Preorder: the subtree of v is the contiguous run after v of nodes
	// deeper than v.
	for k, v := range order {
		for l := k + 1; l < nodes && ns.depth[order[l]] > ns.depth[v]; l++ {
			w := order[l]
			for ns.depth[w] > ns.depth[v] {
				w = int(ns.parent[w])
			}
			if w != v {
				t.Fatalf("node %d follows %d in the thread without being its descendant", order[l], v)
			}
		}
	}
	flagged := 0
	for _, b := range ns.inTree {
		if b {
			flagged++
		}
	}
	if flagged != treeArcs {
		t.Fatalf("%d arcs flagged, tree has %d", flagged, treeArcs)
	}
}

// randomProblem returns weights and a cost matrix of the given kind.
func randomProblem(rng *rand.Rand, n, m int, kind string) (a, b []float64, C *mat.Dense) {
	a = make([]float64, n)
	b = make([]float64, m)
	switch kind {
	case "uniform":
		a, b = Uniform(n), Uniform(m)
	case "zeros":
		for i := range a {
			if rng.IntN(3) > 0 {
				a[i] = rng.Float64()
			}
		}
		for j := range b {
			if rng.IntN(3) > 0 {
				b[j] = rng.Float64()
			}
		}
		a[0], b[m-1] = 0.5, 0.5
		normalize(a)
		normalize(b)
	default:
		for i := range a {
			a[i] = rng.Float64() + 0.01
		}
		for j := range b {
			b[j] = rng.Float64() + 0.01
		}
		normalize(a)
		normalize(b)
	}
	C = mat.NewDense(n, m, nil)
	switch kind {
	case "integer":
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				C.Set(i, j, float64(rng.IntN(4)))
			}
		}
	case "duplicate":
		// Duplicated points: rows and columns repeat.
		pts := 3
		x := make([]float64, pts)
		for k := range x {
			x[k] = rng.NormFloat64()
		}
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				d := x[i%pts] - x[j%pts]
				C.Set(i, j, d*d)
			}
		}
	default:
		d := 3
		X := make([]float64, n*d)
		Y := make([]float64, m*d)
		for k := range X {
			X[k] = rng.NormFloat64()
		}
		for k := range Y {
			Y[k] = rng.NormFloat64() + 0.5
		}
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				var s float64
				for k := 0; k < d; k++ {
					t := X[i*d+k] - Y[j*d+k]
					s += t * t
				}
				C.Set(i, j, s)
			}
		}
	}
	return a, b, C
}

func normalize(w []float64) {
	var s float64
	for _, v := range w {
		s += v
	}
	for i := range w {
		w[i] /= s
	}
}

// checkOptimal asserts the marginals, the cost, dual feasibility and
// complementary slackness of r for the problem (a, b, C).
func checkOptimal(t *testing.T, r *EMDResult, a, b []float64, C mat.Matrix) {
	t.Helper()
	n, m := C.Dims()
	if a == nil {
		a = Uniform(n)
	}
	if b == nil {
		b = Uniform(m)
	}
	if r.Plan.Len() > n+m-1 {
		t.Errorf("plan has %d entries, more than n+m−1 = %d", r.Plan.Len(), n+m-1)
	}
	var sa, sb float64
	for _, v := range a {
		sa += v
	}
	for _, v := range b {
		sb += v
	}
	rs, cs := r.Plan.RowSums(), r.Plan.ColSums()
	for i := range a {
		if math.Abs(rs[i]-a[i]) > 1e-12*sa {
			t.Errorf("row %d: marginal %.17g, want %.17g", i, rs[i], a[i])
		}
	}
	for j := range b {
		if want := b[j] * sa / sb; math.Abs(cs[j]-want) > 1e-12*sa {
			t.Errorf("column %d: marginal %.17g, want %.17g", j, cs[j], want)
		}
	}
	var scale float64
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			scale = math.Max(scale, math.Abs(C.At(i, j)))
		}
	}
	if scale == 0 {
		scale = 1
	}
	if got := r.Plan.Cost(C); math.Abs(got-r.Cost) > 1e-12*scale*sa {
		t.Errorf("⟨C, π⟩ = %.17g but Cost = %.17g", got, r.Cost)
	}
	tol := 1e-9 * scale
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			if s := C.At(i, j) - r.U[i] - r.V[j]; s < -tol {
				t.Fatalf("dual infeasible at (%d, %d): C − U − V = %g", i, j, s)
			}
		}
	}
	for k, w := range r.Plan.Mass {
		i, j := r.Plan.Row[k], r.Plan.Col[k]
		if w <= 0 {
			t.Errorf("plan entry (%d, %d) has mass %g", i, j, w)
		}
		if s := C.At(i, j) - r.U[i] - r.V[j]; math.Abs(s) > tol {
			t.Errorf("complementary slackness fails at (%d, %d): mass %g, C − U − V = %g", i, j, w, s)
		}
	}
	var dual float64
	for i := range a {
		if a[i] > 0 {
			dual += a[i] * r.U[i]
		}
	}
	for j := range b {
		if b[j] > 0 {
			dual += b[j] * sa / sb * r.V[j]
		}
	}
	if math.Abs(dual-r.Cost) > 1e-9*scale*sa {
		t.Errorf("dual objective %.17g ≠ primal %.17g", dual, r.Cost)
	}
}

// lpCost solves the transport LP with gonum's dense simplex.
func lpCost(t *testing.T, a, b []float64, C *mat.Dense) float64 {
	t.Helper()
	n, m := C.Dims()
	// Equality constraints: n row sums and m−1 column sums (the last is
	// implied), variables x_ij ≥ 0.
	rows := n + m - 1
	A := mat.NewDense(rows, n*m, nil)
	rhs := make([]float64, rows)
	c := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			c[i*m+j] = C.At(i, j)
			A.Set(i, i*m+j, 1)
			if j < m-1 {
				A.Set(n+j, i*m+j, 1)
			}
		}
		rhs[i] = a[i]
	}
	for j := 0; j < m-1; j++ {
		rhs[n+j] = b[j]
	}
	opt, _, err := lp.Simplex(c, A, rhs, 1e-12, nil)
	if err != nil {
		t.Fatalf("lp.Simplex: %v", err)
	}
	return opt
}

// bruteAssignment returns min over permutations of Σ C[i][σ(i)] / n.
func bruteAssignment(C *mat.Dense) float64 {
	n, _ := C.Dims()
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	// rest[k] = Σ_{i ≥ k} min_j C_ij bounds the rows still to assign from
	// below, whatever the signs of the costs.
	rest := make([]float64, n+1)
	for i := n - 1; i >= 0; i-- {
		m := math.Inf(1)
		for j := 0; j < n; j++ {
			m = math.Min(m, C.At(i, j))
		}
		rest[i] = rest[i+1] + m
	}
	best := math.Inf(1)
	var rec func(k int, acc float64)
	rec = func(k int, acc float64) {
		if acc+rest[k] >= best {
			return
		}
		if k == n {
			best = acc
			return
		}
		for l := k; l < n; l++ {
			perm[k], perm[l] = perm[l], perm[k]
			rec(k+1, acc+C.At(k, perm[k]))
			perm[k], perm[l] = perm[l], perm[k]
		}
	}
	rec(0, 0)
	return best / float64(n)
}

func TestEMDAgainstLP(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"random", "uniform", "zeros", "integer", "duplicate"}
	for trial := 0; trial < 200; trial++ {
		n, m := 1+rng.IntN(12), 1+rng.IntN(12)
		kind := kinds[trial%len(kinds)]
		a, b, C := randomProblem(rng, n, m, kind)
		r, err := EMD(a, b, C)
		if err != nil {
			t.Fatalf("trial %d (%s %d×%d): %v", trial, kind, n, m, err)
		}
		checkOptimal(t, r, a, b, C)
		want := lpCost(t, a, b, C)
		if math.Abs(r.Cost-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("trial %d (%s %d×%d): cost %.15g, LP %.15g", trial, kind, n, m, r.Cost, want)
		}
	}
}

func TestEMDAgainstBruteForceAssignment(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 8; n++ {
		for trial := 0; trial < 10; trial++ {
			_, _, C := randomProblem(rng, n, n, "random")
			if trial%2 == 1 {
				_, _, C = randomProblem(rng, n, n, "integer")
			}
			r, err := EMD(nil, nil, C)
			if err != nil {
				t.Fatal(err)
			}
			checkOptimal(t, r, nil, nil, C)
			if want := bruteAssignment(C); math.Abs(r.Cost-want) > 1e-12*math.Max(1, want) {
				t.Errorf("n=%d trial %d: cost %.17g, brute force %.17g", n, trial, r.Cost, want)
			}
		}
	}
}

// TestEMDTreeInvariants runs pivots one at a time and checks the whole tree
// structure after each.
func TestEMDTreeInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 60; trial++ {
		n, m := 1+rng.IntN(25), 1+rng.IntN(25)
		kind := []string{"random", "uniform", "integer", "duplicate"}[trial%4]
		a, b, C := randomProblem(rng, n, m, kind)
		var ns netSimplex
		ns.setup(C.RawMatrix().Data, a, b)
		ns.block = 1 + rng.IntN(n*m)
		checkTree(t, &ns)
		for p := 0; ; p++ {
			if p > 100000 {
				t.Fatal("no convergence")
			}
			e := ns.findEntering()
			if e < 0 {
				break
			}
			ns.pivot(e)
			checkTree(t, &ns)
		}
	}
}

func TestEMDEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	big := mat.NewDense(4, 5, nil)
	for i := 0; i < 4; i++ {
		for j := 0; j < 5; j++ {
			big.Set(i, j, 1e12*rng.Float64())
		}
	}
	neg := mat.NewDense(3, 3, []float64{-1, 2, -3, 4, -5, 6, -7, 8, -9})
	cases := []struct {
		name string
		a, b []float64
		C    *mat.Dense
	}{
		{"1×1", nil, nil, mat.NewDense(1, 1, []float64{3})},
		{"1×m", []float64{2}, []float64{0.5, 1, 0.5}, mat.NewDense(1, 3, []float64{1, 2, 3})},
		{"n×1", []float64{0.2, 0.3, 0.5}, nil, mat.NewDense(3, 1, []float64{1, 2, 3})},
		{"all-zero cost", nil, nil, mat.NewDense(4, 6, nil)},
		{"zero weights", []float64{0, 0.5, 0, 0.5}, []float64{0.25, 0, 0.75}, mat.NewDense(4, 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3})},
		{"costs up to 1e12", nil, nil, big},
		{"negative costs", nil, nil, neg},
		{"unnormalised", []float64{2, 3}, []float64{1, 1, 3}, mat.NewDense(2, 3, []float64{1, 0, 2, 3, 1, 0})},
		{"sum mismatch within 1e-9", []float64{0.5, 0.5}, []float64{0.5, 0.5 + 4e-10}, mat.NewDense(2, 2, []float64{0, 1, 1, 0})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := EMD(tc.a, tc.b, tc.C)
			if err != nil {
				t.Fatal(err)
			}
			checkOptimal(t, r, tc.a, tc.b, tc.C)
			n, m := tc.C.Dims()
			a, b := tc.a, tc.b
			if a == nil {
				a = Uniform(n)
			}
			if b == nil {
				b = Uniform(m)
			}
			if n > 1 && m > 1 {
				if want := lpCost(t, a, b, tc.C); math.Abs(r.Cost-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Errorf("cost %.15g, LP %.15g", r.Cost, want)
				}
			}
		})
	}
}

func TestEMDErrors(t *testing.T) {
	c22 := mat.NewDense(2, 2, []float64{0, 1, 1, 0})
	cases := []struct {
		name string
		a, b []float64
		C    mat.Matrix
		want string
	}{
		{"nil cost", nil, nil, nil, "cost matrix is nil"},
		{"empty a", []float64{}, nil, c22, "shape mismatch"},
		{"len a", []float64{1}, nil, c22, "len(a) = 1"},
		{"len b", nil, []float64{0.2, 0.3, 0.5}, c22, "len(b) = 3"},
		{"negative a", []float64{1.5, -0.5}, nil, c22, "entry 1 is negative"},
		{"NaN b", nil, []float64{math.NaN(), 1}, c22, "entry 0 is NaN"},
		{"Inf a", []float64{math.Inf(1), 1}, nil, c22, "infinite"},
		{"zero sum", []float64{0, 0}, nil, c22, "sum to zero"},
		{"sum mismatch", []float64{0.5, 0.5}, []float64{0.5, 0.6}, c22, "weight sums differ"},
		{"NaN cost", nil, nil, mat.NewDense(2, 2, []float64{0, math.NaN(), 1, 0}), "entry (0, 1) is NaN"},
		{"Inf cost", nil, nil, mat.NewDense(2, 2, []float64{0, 1, math.Inf(-1), 0}), "entry (1, 0) is infinite"},
	}
	var typedNil *mat.Dense
	cases = append(cases, struct {
		name string
		a, b []float64
		C    mat.Matrix
		want string
	}{"typed nil cost", nil, nil, typedNil, "cost matrix is nil"})
	var s EMDSolver
	if err := s.Solve(nil, nil, nil, c22); err == nil || !strings.Contains(err.Error(), "destination is nil") {
		t.Errorf("nil destination: error %v", err)
	}
	s.MaxPivots = -1
	if err := s.Solve(&EMDResult{}, nil, nil, c22); err == nil || !strings.Contains(err.Error(), "MaxPivots") {
		t.Errorf("MaxPivots -1: error %v", err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EMD(tc.a, tc.b, tc.C)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "ot: ") {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestEMDPivotLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	_, _, C := randomProblem(rng, 40, 40, "random")
	s := EMDSolver{MaxPivots: 5}
	var r EMDResult
	err := s.Solve(&r, nil, nil, C)
	if !errors.Is(err, ErrPivotLimit) {
		t.Fatalf("got %v, want ErrPivotLimit", err)
	}
	// The same solver, unlimited, then solves it.
	s.MaxPivots = 0
	if err := s.Solve(&r, nil, nil, C); err != nil {
		t.Fatal(err)
	}
	checkOptimal(t, &r, nil, nil, C)
}

// TestEMDRandomLarger checks optimality certificates on larger random
// problems of several shapes, reusing one solver.
func TestEMDRandomLarger(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var s EMDSolver
	var r EMDResult
	for _, sz := range [][2]int{{50, 50}, {100, 37}, {13, 200}, {150, 150}, {300, 300}} {
		for _, kind := range []string{"random", "uniform", "zeros", "integer", "duplicate"} {
			t.Run(fmt.Sprintf("%dx%d-%s", sz[0], sz[1], kind), func(t *testing.T) {
				a, b, C := randomProblem(rng, sz[0], sz[1], kind)
				if err := s.Solve(&r, a, b, C); err != nil {
					t.Fatal(err)
				}
				checkOptimal(t, &r, a, b, C)
			})
		}
	}
}

// TestEMDExtremeCosts: costs up to MaxCost(n, m) in absolute value, of
// both signs, give optimal plans (marginals, dual feasibility and
// complementary slackness; square problems also against brute force)
// without overflow; a larger cost is an error naming the entry. Near
// MaxFloat64 the solver used to loop forever on NaN potentials.
func TestEMDExtremeCosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for trial := range 2000 {
		n, m := 2+trial%6, 2+trial%6
		if trial%3 == 2 {
			m = 2 + trial%5
		}
		bound := MaxCost(n, m)
		C := mat.NewDense(n, m, nil)
		for i := range n {
			for j := range m {
				x := bound * (2*rng.Float64() - 1)
				if trial%2 == 1 {
					x = bound * float64(rng.IntN(5)-2) / 2 // ties
				}
				C.Set(i, j, x)
			}
		}
		r, err := EMD(nil, nil, C)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		checkOptimal(t, r, nil, nil, C)
		if n == m {
			if want := bruteAssignment(C); math.Abs(r.Cost-want) > 1e-12*bound {
				t.Fatalf("trial %d: cost %g, optimum %g", trial, r.Cost, want)
			}
		}
	}
	C := mat.NewDense(2, 3, nil)
	C.Set(1, 0, 2*MaxCost(2, 3))
	if _, err := EMD(nil, nil, C); err == nil || !strings.Contains(err.Error(), "entry (1, 0)") || !strings.Contains(err.Error(), "2×3") {
		t.Errorf("error %v, want one naming entry (1, 0) and the size", err)
	}
}
