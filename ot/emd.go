package ot

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// maxFilterArcs bounds the problem size (n·m) for which a float32 copy of
// the costs is kept to speed up pricing (4 bytes per arc).
const maxFilterArcs = 1 << 29

// ErrPivotLimit is returned (wrapped) by EMD when EMDSolver.MaxPivots pivots
// were made before the plan was proven optimal. No plan is returned then:
// EMD never hands out a sub-optimal plan.
var ErrPivotLimit = errors.New("ot: emd: pivot limit reached before optimality")

// EMDResult is the solution of an exact optimal-transport problem.
type EMDResult struct {
	// Plan is the optimal plan π*, with at most n+m−1 non-zero entries.
	Plan Plan
	// Cost is ⟨C, π*⟩_F.
	Cost float64
	// U and V are optimal dual potentials: U_i + V_j ≤ C_ij for every
	// (i, j), with equality wherever π*_ij > 0, and
	// Σ_i a_i U_i + Σ_j b_j V_j = Cost. They are determined up to an
	// additive constant (U + t, V − t).
	U, V []float64
	// Pivots is the number of simplex pivots made.
	Pivots int
}

// EMD returns an exact optimal transport plan between weights a and b for the
// cost matrix C (n×m): the solution of
//
//	min_π ⟨C, π⟩_F  s.t.  π 1_m = a,  πᵀ 1_n = b,  π ≥ 0
//
// (paper eq. 3, the earth mover's distance when C is a distance). A nil a or
// b stands for uniform weights 1/n or 1/m. Weights may be zero and need not
// be normalised, but Σa and Σb must agree to a relative 1e-9; b is rescaled to
// sum exactly to Σa. Costs may be any finite numbers up to MaxCost(n, m) in
// absolute value.
//
// EMD is a convenience wrapper around EMDSolver with default settings; use an
// EMDSolver to reuse memory across many solves.
func EMD(a, b []float64, C mat.Matrix) (*EMDResult, error) {
	var s EMDSolver
	var r EMDResult
	if err := s.Solve(&r, a, b, C); err != nil {
		return nil, err
	}
	return &r, nil
}

// EMDSolver solves exact optimal-transport problems with a primal network
// simplex specialised to the complete bipartite transport graph.
//
// Algorithm. Supplies are the n rows, demands the m columns, and every pair
// (i, j) is an uncapacitated arc of cost C_ij. A basic solution is a spanning
// tree of n+m−1 arcs; the potentials π satisfy C_ij + π_i − π_{n+j} = 0 on
// tree arcs, so that U_i = −π_i and V_j = π_{n+j} are the dual variables.
// Each pivot
//
//  1. prices arcs in blocks of about √(nm) (block search, Grigoriadis 1986,
//     as used by LEMON and by Bonneel et al. 2011): the arc of most
//     negative reduced cost C_ij + π_i − π_{n+j} among the blocks scanned
//     since the last pivot enters, as soon as a block ends with a negative
//     candidate;
//  2. pushes flow around the cycle the entering arc closes in the tree; the
//     leaving arc is the last blocking arc met when walking the cycle from
//     its apex, which keeps the tree strongly feasible (Cunningham 1976) and
//     rules out cycling;
//  3. re-hangs the subtree cut off by the leaving arc under the entering
//     arc, updating the preorder thread, depths and potentials in one pass
//     over that subtree.
//
// The initial tree is built from a greedy feasible flow whose components are
// linked by zero-flow arcs so that the tree is strongly feasible (see
// initGreedy); no artificial arcs, and no big-M costs that would cost
// floating-point accuracy, are needed. Potentials are periodically rebuilt
// from the tree to stop rounding drift, and optimality is confirmed by a full
// pricing pass with freshly rebuilt potentials before returning: a returned
// plan satisfies C_ij + π_i − π_{n+j} ≥ −tol for every arc, where tol is
// 1e-12 times the largest absolute cost.
//
// Rows and columns of zero weight are removed before solving; their dual
// potentials are then set to the largest values keeping U_i + V_j ≤ C_ij.
//
// Memory: besides C, the solver keeps one byte per arc and O(n+m) words, all
// reused from one Solve to the next. The zero value is ready to use; an
// EMDSolver must not be used by several goroutines at once.
type EMDSolver struct {
	// MaxPivots bounds the number of pivots; 0 means no limit, and it must
	// not be negative. When the limit is reached, Solve returns an error
	// wrapping ErrPivotLimit.
	MaxPivots int

	ns netSimplex
}

// Solve solves the problem of EMD and writes the solution into dst, reusing
// its storage.
func (s *EMDSolver) Solve(dst *EMDResult, a, b []float64, C mat.Matrix) error {
	if dst == nil {
		return errors.New("ot: EMD: the result destination is nil")
	}
	if s.MaxPivots < 0 {
		return fmt.Errorf("ot: EMD: MaxPivots must not be negative, got %d", s.MaxPivots)
	}
	cost, n, m, err := costDataBounded(C, "EMD")
	if err != nil {
		return err
	}
	a, b, err = checkMarginals(a, b, n, m)
	if err != nil {
		return err
	}
	ns := &s.ns
	ns.activeLines(a, b)
	ns.activeWeights(a, b)
	c := ns.activeCost(cost, n, m)
	if err := ns.solve(c, ns.sup, ns.dem, s.MaxPivots); err != nil {
		return err
	}
	ns.result(dst, cost, a, b)
	return nil
}

// activeLines sets ns.rows and ns.cols to the rows of a and the columns of
// b of positive weight, in order: the lines of the problem actually solved.
func (ns *netSimplex) activeLines(a, b []float64) {
	rows := ns.rows[:0]
	for i, w := range a {
		if w > 0 {
			rows = append(rows, i)
		}
	}
	cols := ns.cols[:0]
	for j, w := range b {
		if w > 0 {
			cols = append(cols, j)
		}
	}
	ns.rows, ns.cols = rows, cols
}

// activeWeights sets ns.sup to the weights of the active rows and ns.dem to
// those of the active columns, b rescaled by Σa/Σb so that Σdem = Σsup up to
// rounding.
func (ns *netSimplex) activeWeights(a, b []float64) {
	var sa, sb float64
	for _, w := range a {
		sa += w
	}
	for _, w := range b {
		sb += w
	}
	sup := grow(ns.sup, len(ns.rows))
	for k, i := range ns.rows {
		sup[k] = a[i]
	}
	dem := grow(ns.dem, len(ns.cols))
	scale := sa / sb
	for k, j := range ns.cols {
		dem[k] = b[j] * scale
	}
	ns.sup, ns.dem = sup, dem
}

// activeCost returns the n×m cost restricted to the active rows and
// columns: cost itself when every line is active, else a copy in ns.sub.
func (ns *netSimplex) activeCost(cost []float64, n, m int) []float64 {
	rows, cols := ns.rows, ns.cols
	na, ma := len(rows), len(cols)
	if na == n && ma == m {
		return cost
	}
	c := grow(ns.sub, na*ma)
	for k, i := range rows {
		src := cost[i*m : i*m+m]
		d := c[k*ma : k*ma+ma]
		for l, j := range cols {
			d[l] = src[j]
		}
	}
	ns.sub = c
	return c
}

// result writes the solution of the active problem into dst on the full
// index range of the n×m cost (n = len(a), m = len(b)): the plan, the pivot
// count, the duals (see activeDuals) and the cost ⟨C, π*⟩_F, summed in plan
// order for reproducibility.
func (ns *netSimplex) result(dst *EMDResult, cost, a, b []float64) {
	m := len(b)
	p := &dst.Plan
	p.reset(len(a), m)
	ns.plan(p, ns.rows, ns.cols)
	dst.Pivots = ns.pivots
	ns.activeDuals(dst, cost, a, b)
	var total float64
	for k, w := range p.Mass {
		total += w * cost[p.Row[k]*m+p.Col[k]]
	}
	dst.Cost = total
}

// activeDuals sets dst.U and dst.V from the tree's potentials, U_i = −π_i
// and V_j = π_{n+j} on the active lines; the potentials of zero-weight
// lines are then filled in by fillInactiveDuals.
func (ns *netSimplex) activeDuals(dst *EMDResult, cost, a, b []float64) {
	n, m := len(a), len(b)
	rows, cols := ns.rows, ns.cols
	na := len(rows)
	dst.U = grow(dst.U, n)
	dst.V = grow(dst.V, m)
	for i := range dst.U {
		dst.U[i] = math.NaN()
	}
	for j := range dst.V {
		dst.V[j] = math.NaN()
	}
	for k, i := range rows {
		dst.U[i] = -ns.pi[k]
	}
	for l, j := range cols {
		dst.V[j] = ns.pi[na+l]
	}
	if na != n || len(cols) != m {
		fillInactiveDuals(dst.U, dst.V, cost, a, b, m)
	}
}

// fillInactiveDuals sets the potentials of zero-weight rows and columns to
// U_i = min_j (C_ij − V_j) over columns already set, then V_j = min_i
// (C_ij − U_i) over all rows, which keeps the duals feasible.
func fillInactiveDuals(U, V, cost, a, b []float64, m int) {
	for i, w := range a {
		if w > 0 {
			continue
		}
		u := math.Inf(1)
		for j, v := range V {
			if b[j] > 0 {
				u = math.Min(u, cost[i*m+j]-v)
			}
		}
		U[i] = u
	}
	for j, w := range b {
		if w > 0 {
			continue
		}
		v := math.Inf(1)
		for i, u := range U {
			v = math.Min(v, cost[i*m+j]-u)
		}
		V[j] = v
	}
}

// netSimplex is the workspace of the transport network simplex.
//
// Nodes 0..n−1 are supplies (rows), n..n+m−1 demands (columns). The basis is
// a spanning tree rooted at node 0. Every tree arc joins a node v to its
// parent and is identified by that pair: since all arcs run from a supply to
// a demand, the arc points up (v → parent) exactly when v is a supply. flow[v]
// is the flow on v's tree arc.
type netSimplex struct {
	n, m   int
	cost   []float64 // n×m, row-major
	pi     []float64 // node potentials
	flow   []float64 // flow on the arc from a node to its parent
	parent []int32
	depth  []int32
	thread []int32 // preorder successor (cyclic)
	rev    []int32 // preorder predecessor
	inTree []bool  // per arc
	tol    float64 // reduced costs above −tol count as non-negative

	block int // block size of the pricing

	// Float32 pricing filter (nil when magnitudes or size rule it out).
	c32     []float32 // costs
	pd32    []float32 // demand potentials
	maxCost float64   // max |C|
	maxPi   float64   // upper bound on max |π|
	margin  float64   // filter slack, see scan32
	cand    []cand32  // arcs that passed the filter
	c32buf  []float32
	next    int // arc where the next pricing starts
	pivots  int

	path1, path2 []int32 // scratch: tree paths of a pivot
	ends         []int32 // scratch: ends of the stem segments

	rows, cols []int     // active rows and columns
	sup, dem   []float64 // their weights
	sub        []float64 // cost restricted to active rows/columns

	// scratch of initGreedy
	gRem                       []float64
	gCells                     []greedyCell
	gHead, gNext, gDem, gQueue []int32
	gSeen                      []bool
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// setup allocates the workspace for the n×m cost c with supplies sup and
// demands dem (equal sums, all positive) and builds the initial tree.
func (ns *netSimplex) setup(c, sup, dem []float64) {
	n, m := len(sup), len(dem)
	ns.n, ns.m, ns.cost = n, m, c
	nodes := n + m
	ns.pi = grow(ns.pi, nodes)
	ns.flow = grow(ns.flow, nodes)
	ns.parent = grow(ns.parent, nodes)
	ns.depth = grow(ns.depth, nodes)
	ns.thread = grow(ns.thread, nodes)
	ns.rev = grow(ns.rev, nodes)
	ns.inTree = grow(ns.inTree, n*m)
	clear(ns.inTree)
	ns.pivots = 0
	ns.next = 0

	var maxAbs float64
	for _, v := range c {
		if v > maxAbs {
			maxAbs = v
		} else if -v > maxAbs {
			maxAbs = -v
		}
	}
	ns.tol = 1e-12 * maxAbs
	ns.maxCost = maxAbs
	ns.c32 = nil
	if n*m <= maxFilterArcs && maxAbs >= 1e-30 && maxAbs <= 1e30 {
		ns.c32 = grow(ns.c32buf, n*m)
		ns.c32buf = ns.c32
		for k, v := range c {
			ns.c32[k] = float32(v)
		}
		ns.pd32 = grow(ns.pd32, m)
	}

	ns.block = int(math.Sqrt(float64(n * m)))
	if ns.block < 16 {
		ns.block = 16
	}
	if ns.block > n*m {
		ns.block = n * m
	}

	ns.initGreedy(sup, dem)
	ns.buildThread()
	ns.computePotentials()
}

// solve runs the network simplex on the n×m cost c with supplies sup and
// demands dem (equal sums, all positive).
func (ns *netSimplex) solve(c, sup, dem []float64, maxPivots int) error {
	ns.setup(c, sup, dem)
	n, m := ns.n, ns.m
	rebuild := max(n+m, 1000)
	sinceRebuild := 0
	for {
		e := ns.findEntering()
		if e < 0 {
			// Confirm with exact potentials before declaring optimality.
			if sinceRebuild == 0 {
				return nil
			}
			ns.computePotentials()
			sinceRebuild = 0
			continue
		}
		if maxPivots > 0 && ns.pivots >= maxPivots {
			return fmt.Errorf("%w (%d pivots, %d×%d problem)", ErrPivotLimit, ns.pivots, n, m)
		}
		ns.pivot(e)
		ns.pivots++
		sinceRebuild++
		if sinceRebuild >= rebuild {
			ns.computePotentials()
			sinceRebuild = 0
		}
	}
}

// initGreedy builds the initial basis from a greedy feasible flow and links
// its components into a strongly feasible tree.
//
//  1. Rows are taken in order; each repeatedly sends as much as it can to its
//     cheapest column with remaining demand (greedyFlow). Every allocation
//     exhausts its row or its column, so the allocated cells form a forest
//     (the first cell of a would-be cycle exhausted a line that the cycle
//     uses again later), and all of them carry positive flow.
//  2. The component of row 0 is rooted at row 0. Every other component is
//     rooted at its first row i and hung below the demand node j already in
//     the tree that minimises C_ij − π_j, through a zero-flow arc i → j
//     (linkRow). That choice makes every arc from i into the tree dual
//     feasible, and a zero-flow arc leading from a supply up to its demand
//     parent keeps the tree strongly feasible.
//
// Rounding differences between Σsup and Σdem leave at most tiny residuals: a
// column that ends with no cell is hung below row 0 with its residual demand
// (hangResiduals).
func (ns *netSimplex) initGreedy(sup, dem []float64) {
	ns.greedyFlow(sup, dem)
	ns.greedyAdjacency()
	seen := grow(ns.gSeen, ns.n+ns.m)
	ns.gSeen = seen
	clear(seen)
	ns.gDem = ns.gDem[:0]
	ns.parent[0] = -1
	ns.flow[0] = 0
	ns.pi[0] = 0
	ns.hang(0)
	for i := 1; i < ns.n; i++ {
		if !seen[i] {
			ns.linkRow(i)
			ns.hang(int32(i))
		}
	}
	ns.hangResiduals()
}

// greedyFlow allocates the greedy flow of initGreedy's step 1 into
// ns.gCells, leaving the demand no cell took in ns.gRem.
func (ns *netSimplex) greedyFlow(sup, dem []float64) {
	n, m := ns.n, ns.m
	rem := grow(ns.gRem, m)
	ns.gRem = rem
	copy(rem, dem)
	cells := ns.gCells[:0]
	for i := 0; i < n; i++ {
		r := sup[i]
		row := ns.cost[i*m : i*m+m]
		for r > 0 {
			bj := -1
			bc := math.Inf(1)
			for j, cj := range row {
				if cj < bc && rem[j] > 0 {
					bc, bj = cj, j
				}
			}
			if bj < 0 {
				break
			}
			x := math.Min(r, rem[bj])
			cells = append(cells, greedyCell{int32(i), int32(n + bj), x})
			r -= x
			rem[bj] -= x
		}
	}
	ns.gCells = cells
}

// greedyAdjacency builds the adjacency lists of the cells' forest: the
// entries of node v are h = ns.gHead[v], ns.gNext[h], … down to −1, where
// entry h stands for cell h/2 seen from its row (h even) or its column (h
// odd).
func (ns *netSimplex) greedyAdjacency() {
	cells := ns.gCells
	head := grow(ns.gHead, ns.n+ns.m)
	ns.gHead = head
	for v := range head {
		head[v] = -1
	}
	nextc := grow(ns.gNext, 2*len(cells))
	ns.gNext = nextc
	for k, c := range cells {
		nextc[2*k] = head[c.i]
		head[c.i] = int32(2 * k)
		nextc[2*k+1] = head[c.j]
		head[c.j] = int32(2*k + 1)
	}
}

// hang walks the forest's component of root r breadth first, making each
// node the child of the node it is reached from, with the flow of their
// cell, and setting its potential so that C_ij + π_i − π_j = 0 on the arc
// (π_r must be set). The demand nodes met are appended to ns.gDem.
func (ns *netSimplex) hang(r int32) {
	n, m := ns.n, ns.m
	cells, head, nextc, seen, pi := ns.gCells, ns.gHead, ns.gNext, ns.gSeen, ns.pi
	queue := append(ns.gQueue[:0], r)
	seen[r] = true
	for q := 0; q < len(queue); q++ {
		v := queue[q]
		if int(v) >= n {
			ns.gDem = append(ns.gDem, v)
		}
		for h := head[v]; h >= 0; h = nextc[h] {
			c := cells[h/2]
			w := c.j
			if h%2 == 1 {
				w = c.i
			}
			if seen[w] {
				continue
			}
			seen[w] = true
			ns.setTreeArc(int(w), int(v), c.x)
			e := int(c.i)*m + int(c.j) - n
			if int(w) < n {
				pi[w] = pi[v] - ns.cost[e] // arc w → v
			} else {
				pi[w] = pi[v] + ns.cost[e] // arc v → w
			}
			queue = append(queue, w)
		}
	}
	ns.gQueue = queue
}

// linkRow hangs row i, the root of a component not yet in the tree, below
// the demand node j of the tree minimising C_ij − π_j, through a zero-flow
// arc, and sets π_i so that C_ij + π_i − π_j = 0.
func (ns *netSimplex) linkRow(i int) {
	n, m := ns.n, ns.m
	row := ns.cost[i*m : i*m+m]
	bj := int32(-1)
	bv := math.Inf(1)
	for _, j := range ns.gDem {
		if v := row[int(j)-n] - ns.pi[j]; v < bv {
			bv, bj = v, j
		}
	}
	ns.setTreeArc(i, int(bj), 0)
	ns.pi[i] = -bv
}

// hangResiduals hangs every column still outside the tree below row 0,
// with the residual demand greedyFlow left it.
func (ns *netSimplex) hangResiduals() {
	n, seen, pi := ns.n, ns.gSeen, ns.pi
	for j := n; j < n+ns.m; j++ {
		if !seen[j] {
			seen[j] = true
			ns.setTreeArc(j, 0, ns.gRem[j-n])
			pi[j] = pi[0] + ns.cost[j-n]
		}
	}
}

type greedyCell struct {
	i, j int32
	x    float64
}

// setTreeArc makes p the parent of v with flow x on their arc.
func (ns *netSimplex) setTreeArc(v, p int, x float64) {
	ns.parent[v] = int32(p)
	ns.flow[v] = x
	ns.inTree[ns.arc(v, p)] = true
}

// arc returns the index i·m+j of the arc joining nodes u and v (one supply,
// one demand).
func (ns *netSimplex) arc(u, v int) int {
	if u < ns.n {
		return u*ns.m + v - ns.n
	}
	return v*ns.m + u - ns.n
}

// buildThread computes the preorder thread and the depths of the tree given by
// parent, rooted at node 0.
func (ns *netSimplex) buildThread() {
	nodes := ns.n + ns.m
	// Children lists in CSR form, in increasing node order.
	count := make([]int32, nodes+1)
	for v := 1; v < nodes; v++ {
		count[ns.parent[v]+1]++
	}
	for v := 1; v <= nodes; v++ {
		count[v] += count[v-1]
	}
	child := make([]int32, nodes)
	fill := make([]int32, nodes)
	copy(fill, count[:nodes])
	for v := 1; v < nodes; v++ {
		p := ns.parent[v]
		child[fill[p]] = int32(v)
		fill[p]++
	}
	// Iterative DFS.
	stack := make([]int32, 0, 64)
	stack = append(stack, 0)
	prev := int32(-1)
	ns.depth[0] = 0
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if prev >= 0 {
			ns.thread[prev] = v
			ns.rev[v] = prev
		}
		prev = v
		if v != 0 {
			ns.depth[v] = ns.depth[ns.parent[v]] + 1
		}
		for k := count[v+1] - 1; k >= count[v]; k-- {
			stack = append(stack, child[k])
		}
	}
	ns.thread[prev] = 0
	ns.rev[0] = prev
}

// computePotentials sets π from scratch so that every tree arc has zero
// reduced cost, with π_root = 0, walking the thread (parents before children).
func (ns *netSimplex) computePotentials() {
	n, m := ns.n, ns.m
	pi, parent, cost := ns.pi, ns.parent, ns.cost
	pi[0] = 0
	for v := int(ns.thread[0]); v != 0; v = int(ns.thread[v]) {
		p := int(parent[v])
		if v < n {
			// arc v → p: C + π_v − π_p = 0
			pi[v] = pi[p] - cost[v*m+p-n]
		} else {
			// arc p → v: C + π_p − π_v = 0
			pi[v] = pi[p] + cost[p*m+v-n]
		}
	}
	ns.syncFilter()
}

// syncFilter refreshes the float32 demand potentials and the bound on |π|
// after the potentials were rebuilt.
func (ns *netSimplex) syncFilter() {
	var mx float64
	for _, p := range ns.pi {
		mx = math.Max(mx, math.Abs(p))
	}
	ns.maxPi = mx
	if ns.c32 == nil {
		return
	}
	for j, p := range ns.pi[ns.n:] {
		ns.pd32[j] = float32(p)
	}
	// If potentials left the range where the float32 error bound holds,
	// fall back to exact float64 pricing.
	if mx > 1e30 {
		ns.c32 = nil
	}
}

// findEntering returns the entering arc chosen by block search, or −1 when
// no arc has a reduced cost below −tol.
func (ns *netSimplex) findEntering() int {
	n, m := ns.n, ns.m
	total := n * m
	block := ns.block
	best := -1
	minRC := -ns.tol
	filter := ns.c32 != nil
	if filter {
		ns.margin = 0x1p-21 * (ns.maxCost + ns.maxPi)
		ns.cand = ns.cand[:0]
	}
	i, j := ns.next/m, ns.next%m
	left := block
	for scanned := 0; scanned < total; {
		lim := m
		if j+left < m {
			lim = j + left
		}
		if filter {
			minRC = ns.scan32(i, j, lim, minRC)
		} else {
			best, minRC = ns.scan64(i, j, lim, best, minRC)
		}
		done := lim - j
		scanned += done
		left -= done
		if lim == m {
			j = 0
			i++
			if i == n {
				i = 0
			}
		} else {
			j = lim
		}
		if left == 0 {
			if filter {
				best = ns.resolve(minRC)
				minRC = -ns.tol
			}
			if best >= 0 {
				break
			}
			left = block
		}
	}
	if filter && best < 0 {
		best = ns.resolve(minRC)
	}
	ns.next = i*m + j
	return best
}

// cand32 is an arc that passed the float32 pricing filter, with its
// approximate reduced cost.
type cand32 struct {
	e      int
	i, j   int32 // supply node, demand column
	approx float64
}

// resolve returns, among the candidates collected by scan32, the arc of
// least exact reduced cost below −tol that is not in the tree (the first in
// scan order on ties), or −1. Only candidates whose approximate reduced
// cost is within 2·margin of the least approximate one, minApprox, can be
// that arc, so only they are priced exactly.
func (ns *netSimplex) resolve(minApprox float64) int {
	lim := minApprox + 2*ns.margin
	best, bestRC := -1, -ns.tol
	for _, c := range ns.cand {
		if c.approx > lim {
			continue
		}
		x := ns.cost[c.e] - ns.pi[ns.n+int(c.j)]
		if rc := x + ns.pi[c.i]; rc < bestRC && !ns.inTree[c.e] {
			best, bestRC = c.e, rc
		}
	}
	ns.cand = ns.cand[:0]
	return best
}

// scan64 prices arcs (i, j0) … (i, lim−1) and returns the arc of least
// reduced cost below minRC (best if none) and that reduced cost.
//
// rc = C_ij + π_i − π_j < minRC is tested as C_ij − π_j < minRC − π_i.
func (ns *netSimplex) scan64(i, j0, lim, best int, minRC float64) (int, float64) {
	m := ns.m
	base := i*m + j0
	row := ns.cost[base : base+lim-j0]
	pd := ns.pi[ns.n+j0 : ns.n+lim]
	pd = pd[:len(row)]
	inTree := ns.inTree[base : base+len(row)]
	ui := ns.pi[i]
	thr := minRC - ui
	k := 0
	for ; k+4 <= len(row); k += 4 {
		r, q := row[k:k+4:k+4], pd[k:k+4:k+4]
		if r[0]-q[0] < thr || r[1]-q[1] < thr || r[2]-q[2] < thr || r[3]-q[3] < thr {
			for l := k; l < k+4; l++ {
				if x := row[l] - pd[l]; x < thr && !inTree[l] {
					minRC, thr, best = x+ui, x, base+l
				}
			}
		}
	}
	for ; k < len(row); k++ {
		if x := row[k] - pd[k]; x < thr && !inTree[k] {
			minRC, thr, best = x+ui, x, base+k
		}
	}
	return best, minRC
}

// scan32 prices arcs (i, j0) … (i, lim−1) like scan64, through float32
// copies of the costs and of the demand potentials, which halve the memory
// traffic of pricing. It keeps no float64 state in its loop: every arc whose
// approximate reduced cost is within 3·margin of the least approximate one
// seen so far, minApprox, is recorded as a candidate, and resolve later
// prices the few that can be the minimum exactly. The returned value is the
// updated minApprox.
//
// Exactness. With u = 2⁻²⁴, the approximation fl32(fl32(C) − fl32(π_j)) + π_i
// of C + π_i − π_j errs by at most 2u(|C| + |π|)(1+u), and rounding the
// threshold to float32 moves it by at most u|thr| ≤ 3u(max|C| + max|π|);
// margin = 2⁻²¹(max|C| + max|π|) bounds both. So the arc of least exact
// reduced cost, a*, has approx(a*) ≤ rc(a*) + margin ≤ minApprox + 2·margin
// at any time, passes the filter and survives resolve's cut: the entering
// arc is the same as scan64's. The filter is only used while max|C| and
// max|π| lie in [1e-30, 1e30], where float32 neither overflows nor loses
// relative precision.
func (ns *netSimplex) scan32(i, j0, lim int, minApprox float64) float64 {
	m := ns.m
	base := i*m + j0
	row := ns.c32[base : base+lim-j0]
	pd := ns.pd32[j0:lim]
	pd = pd[:len(row)]
	ui := ns.pi[i]
	margin := ns.margin
	thr32 := float32(minApprox + 3*margin - ui)
	cand := ns.cand
	n8 := len(row) &^ 7
	k := 0
	for k < n8 {
		k += firstBelow(row[k:n8], pd[k:n8], thr32)
		if k >= n8 {
			break
		}
		for l := k; l < k+8; l++ {
			if x := row[l] - pd[l]; x < thr32 {
				a := float64(x) + ui
				cand = append(cand, cand32{base + l, int32(i), int32(j0 + l), a})
				if a < minApprox {
					minApprox = a
					thr32 = float32(minApprox + 3*margin - ui)
				}
			}
		}
		k += 8
	}
	for ; k < len(row); k++ {
		if x := row[k] - pd[k]; x < thr32 {
			a := float64(x) + ui
			cand = append(cand, cand32{base + k, int32(i), int32(j0 + k), a})
			if a < minApprox {
				minApprox = a
				thr32 = float32(minApprox + 3*margin - ui)
			}
		}
	}
	// Drop candidates that can no longer be the minimum; minApprox only
	// decreases, so resolve would drop them too.
	if len(cand) > 1024 {
		w := 0
		lim := minApprox + 2*margin
		for _, c := range cand {
			if c.approx <= lim {
				cand[w] = c
				w++
			}
		}
		cand = cand[:w]
	}
	ns.cand = cand
	return minApprox
}

// pivot brings arc e = (i, j) into the tree.
func (ns *netSimplex) pivot(e int) {
	n, m := ns.n, ns.m
	parent, depth, flow := ns.parent, ns.depth, ns.flow
	i := int32(e / m)
	j := int32(n + e%m)

	// Walk both endpoints up to the apex (join), recording the paths and the
	// blocking arcs. Flow is pushed i → j, then from j up to the join and
	// from the join down to i. On i's path the arc of a supply node loses
	// flow; on j's path the arc of a demand node does. Strong feasibility:
	// the leaving arc is the last blocking arc met from the apex along the
	// cycle, i.e. on j's path the one closest to the apex (≤), else on i's
	// path the one closest to i (<).
	p1, p2 := ns.path1[:0], ns.path2[:0]
	d1, d2 := math.Inf(1), math.Inf(1)
	out1, out2 := -1, -1
	u, v := i, j
	for u != v {
		if depth[u] >= depth[v] {
			if int(u) < n && flow[u] < d1 {
				d1, out1 = flow[u], len(p1)
			}
			p1 = append(p1, u)
			u = parent[u]
		} else {
			if int(v) >= n && flow[v] <= d2 {
				d2, out2 = flow[v], len(p2)
			}
			p2 = append(p2, v)
			v = parent[v]
		}
	}
	ns.path1, ns.path2 = p1, p2

	var delta float64
	var stem []int32
	var uIn, vIn int32
	if out2 >= 0 && d2 <= d1 {
		delta = d2
		stem = p2[:out2+1]
		uIn, vIn = j, i
	} else {
		delta = d1
		stem = p1[:out1+1]
		uIn, vIn = i, j
	}

	if delta > 0 {
		ns.augment(p1, p2, delta)
	}

	uOut := stem[len(stem)-1]
	ns.inTree[ns.arc(int(uOut), int(parent[uOut]))] = false
	ns.inTree[e] = true

	// Potential shift making the entering arc's reduced cost zero.
	rc := ns.cost[e] + ns.pi[i] - ns.pi[j]
	sigma := -rc
	if uIn == j {
		sigma = rc
	}

	// Flows move one step down the stem with their arcs: the arc joining
	// stem[t−1] and stem[t] becomes stem[t]'s arc.
	for t := len(stem) - 1; t > 0; t-- {
		flow[stem[t]] = flow[stem[t-1]]
	}
	flow[uIn] = delta

	ns.rehang(stem, vIn, sigma)
}

// augment pushes delta units around the cycle of the paths p1 (from i) and
// p2 (from j) that pivot walks: a node's flow is that of its arc to its
// parent, oriented supply → demand, so it falls by delta at the supply
// nodes of p1 and the demand nodes of p2, and rises by delta at the others.
func (ns *netSimplex) augment(p1, p2 []int32, delta float64) {
	n, flow := ns.n, ns.flow
	for _, w := range p1 {
		if int(w) < n {
			flow[w] -= delta
		} else {
			flow[w] += delta
		}
	}
	for _, w := range p2 {
		if int(w) < n {
			flow[w] += delta
		} else {
			flow[w] -= delta
		}
	}
}

// rehang detaches the subtree S of stem[k] (k = len(stem)−1, the node whose
// arc leaves) and hangs it below vIn through stem[0], reversing the stem
// stem[0] → … → stem[k]. The new preorder of S is the old segment of stem[0],
// then for t = 1…k the old segment of stem[t] without that of stem[t−1]; it is
// spliced in right after vIn. Depths are recomputed and potentials shifted by
// sigma along the way.
func (ns *netSimplex) rehang(stem []int32, vIn int32, sigma float64) {
	parent, depth, thread, rev, pi := ns.parent, ns.depth, ns.thread, ns.rev, ns.pi
	n, pd32, maxPi := ns.n, ns.pd32, ns.maxPi
	if ns.c32 == nil {
		pd32 = nil
	}
	k := len(stem) - 1
	uOut := stem[k]
	before := rev[uOut]        // node preceding S in the old thread
	afterVIn := thread[vIn]    // node following vIn in the old thread
	ends := grow(ns.ends, k+1) // ends[t]: node after the old segment of stem[t]
	ns.ends = ends

	prev := vIn
	for t := 0; t <= k; t++ {
		s := stem[t]
		dOld := depth[s]
		np := vIn
		if t > 0 {
			np = stem[t-1]
		}
		parent[s] = np
		x := s
		for {
			thread[prev] = x
			rev[x] = prev
			depth[x] = depth[parent[x]] + 1
			px := pi[x] + sigma
			pi[x] = px
			if int(x) >= n {
				if pd32 != nil {
					pd32[int(x)-n] = float32(px)
				}
			}
			if a := math.Abs(px); a > maxPi {
				maxPi = a
			}
			prev = x
			nx := thread[x]
			if t > 0 && nx == stem[t-1] {
				nx = ends[t-1]
			}
			if depth[nx] <= dOld {
				ends[t] = nx
				break
			}
			x = nx
		}
	}
	ns.maxPi = maxPi
	last := prev
	after := ends[k]
	if before == vIn {
		thread[last] = after
		rev[after] = last
	} else {
		thread[before] = after
		rev[after] = before
		thread[last] = afterVIn
		rev[afterVIn] = last
	}
}

// plan writes the positive tree flows into p, mapping active indices back
// to the original rows and columns, sorted by (row, col).
func (ns *netSimplex) plan(p *Plan, rows, cols []int) {
	n := ns.n
	for v := 1; v < n+ns.m; v++ {
		f := ns.flow[v]
		if f <= 0 {
			continue
		}
		pa := int(ns.parent[v])
		var i, j int
		if v < n {
			i, j = v, pa-n
		} else {
			i, j = pa, v-n
		}
		p.Row = append(p.Row, rows[i])
		p.Col = append(p.Col, cols[j])
		p.Mass = append(p.Mass, f)
	}
	sort.Sort(planOrder{p})
}

type planOrder struct{ p *Plan }

func (o planOrder) Len() int { return len(o.p.Mass) }
func (o planOrder) Less(a, b int) bool {
	if o.p.Row[a] != o.p.Row[b] {
		return o.p.Row[a] < o.p.Row[b]
	}
	return o.p.Col[a] < o.p.Col[b]
}
func (o planOrder) Swap(a, b int) {
	p := o.p
	p.Row[a], p.Row[b] = p.Row[b], p.Row[a]
	p.Col[a], p.Col[b] = p.Col[b], p.Col[a]
	p.Mass[a], p.Mass[b] = p.Mass[b], p.Mass[a]
}
