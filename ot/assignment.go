package ot

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// AssignmentResult is the solution of a linear assignment problem.
type AssignmentResult struct {
	// Perm[i] is the column assigned to row i; Perm is a permutation.
	Perm []int
	// Cost is Σ_i C[i][Perm[i]]. The optimal transport cost between two
	// uniform measures of n points is Cost/n, and Perm/n the optimal plan.
	Cost float64
	// U and V are optimal dual potentials: U_i + V_j ≤ C_ij for all (i, j)
	// with equality on (i, Perm[i]), and Σ U + Σ V = Cost.
	U, V []float64
}

// Assignment solves the linear assignment problem
//
//	min_σ Σ_i C[i][σ(i)]   over permutations σ
//
// for a square cost matrix C, exactly. It is optimal transport between two
// uniform measures with the same number of points: by Birkhoff's theorem
// an optimal plan is a permutation matrix divided by n, so EMD(nil, nil, C)
// and Assignment(C) agree, and Assignment is usually several times faster.
//
// Assignment is a convenience wrapper around AssignmentSolver.
func Assignment(C mat.Matrix) (*AssignmentResult, error) {
	var s AssignmentSolver
	var r AssignmentResult
	if err := s.Solve(&r, C); err != nil {
		return nil, err
	}
	return &r, nil
}

// AssignmentSolver solves dense linear assignment problems with the
// shortest-augmenting-path method of Jonker & Volgenant (1987): column
// reduction, reduction transfer and two passes of augmenting row reduction
// find a partial assignment with feasible column prices V cheaply; every row
// left free is then assigned along a shortest augmenting path in the reduced
// costs C_ij − V_j (a Dijkstra search over the dense matrix), after which the
// prices of the scanned columns are updated to keep the duals feasible. The
// result is exact: it carries optimal dual potentials.
//
// When several assignments are optimal (tied costs, as duplicate points
// give), which one is returned depends on the order of the search, which
// is fixed for a given n: the same matrix always gives the same
// permutation. Up to n = 1024 the search keeps Jonker & Volgenant's lists
// of columns; from n = 1025 on it scans the columns in index order, which
// is about twice as fast (BenchmarkAssignment) but may pick another of the
// optimal assignments. (The lists are kept for the smaller sizes so that
// results computed with earlier versions, among them every setting of the
// DaDiL paper, are reproduced bit for bit.)
//
// The zero value is ready to use; buffers are reused from one Solve to the
// next. An AssignmentSolver must not be used by several goroutines at once.
type AssignmentSolver struct {
	rowOf, colOf []int // colOf[i]: column of row i; rowOf[j]: row of column j
	v, d         []float64
	pred, todo   []int
	free         []int
	final        []float64 // augmentScan: distances of the final columns
}

// scanFrom is the size from which augment's search scans the columns in
// index order (augmentScan); a variable for the tests.
var scanFrom = 1025

// Solve solves the assignment problem for the n×n cost matrix C and writes
// the solution into dst, reusing its storage. C must be square, non-empty
// and finite, with |C_ij| ≤ MaxCost(n, n).
func (s *AssignmentSolver) Solve(dst *AssignmentResult, C mat.Matrix) error {
	if dst == nil {
		return errors.New("ot: assignment: the result destination is nil")
	}
	c, n, m, err := costDataBounded(C, "an assignment")
	if err != nil {
		return err
	}
	if n != m {
		return fmt.Errorf("ot: assignment needs a square cost matrix, got %d×%d", n, m)
	}
	s.solve(c, n)
	dst.Perm = grow(dst.Perm, n)
	dst.U = grow(dst.U, n)
	dst.V = grow(dst.V, n)
	copy(dst.Perm, s.colOf)
	copy(dst.V, s.v)
	var total float64
	for i, j := range s.colOf {
		cij := c[i*n+j]
		total += cij
		dst.U[i] = cij - s.v[j]
	}
	dst.Cost = total
	return nil
}

// solve runs the algorithm on the row-major n×n cost c.
func (s *AssignmentSolver) solve(c []float64, n int) {
	colOf := grow(s.colOf, n)
	rowOf := grow(s.rowOf, n)
	v := grow(s.v, n)
	s.colOf, s.rowOf, s.v = colOf, rowOf, v
	for i := range colOf {
		colOf[i] = -1
	}
	if n == 1 {
		colOf[0], rowOf[0], v[0] = 0, 0, c[0]
		return
	}

	// Column reduction: V_j = min_i C_ij; column j goes to its minimising
	// row if that row is still free. Columns in reverse order, as in JV.
	matches := grow(s.pred, n) // reused as a counter
	s.pred = matches
	clear(matches)
	// Column minima by rows (cache friendly); ties go to the lowest row, as
	// a scan down each column would give.
	argmin := grow(s.todo, n)
	s.todo = argmin
	copy(v, c[:n])
	clear(argmin)
	for i := 1; i < n; i++ {
		colMin(c[i*n:i*n+n], v, argmin, i)
	}
	for j := n - 1; j >= 0; j-- {
		imin := argmin[j]
		matches[imin]++
		if matches[imin] == 1 {
			colOf[imin] = j
			rowOf[j] = imin
		} else {
			rowOf[j] = -1
		}
	}
	// Reduction transfer: a row matched exactly once passes the slack of
	// its second-best column to its own column's price. A row matched
	// several times keeps the first column it got; the others stay free.
	free := s.free[:0]
	for i := 0; i < n; i++ {
		switch {
		case matches[i] == 0:
			free = append(free, i)
		case matches[i] == 1:
			j1 := colOf[i]
			row := c[i*n : i*n+n]
			mu := min(minDiff(row[:j1], v[:j1]), minDiff(row[j1+1:], v[j1+1:]))
			v[j1] = row[j1] - mu
		}
	}

	// Augmenting row reduction, two passes.
	for pass := 0; pass < 2 && len(free) > 0; pass++ {
		free = s.rowReduction(c, n, free)
	}

	// Shortest augmenting paths for the rows still free.
	for _, i := range free {
		if n >= scanFrom {
			s.augmentScan(c, n, i)
		} else {
			s.augment(c, n, i)
		}
	}
	s.free = free
}

// rowReduction performs one pass of augmenting row reduction over the free
// rows and returns the rows still free. For a free row i with smallest and
// second-smallest reduced costs u1 ≤ u2 (columns j1, j2), column j1's price
// drops by u2 − u1 and i takes j1, evicting its row, which is processed next
// if the price dropped and queued otherwise.
func (s *AssignmentSolver) rowReduction(c []float64, n int, free []int) []int {
	colOf, rowOf, v := s.colOf, s.rowOf, s.v
	next := make([]int, 0, len(free))
	// An evicted row is processed right away only for the first n steps of
	// a pass: long eviction chains are auction-like bidding wars with small
	// price decrements, which the shortest-path phase resolves faster
	// (measured on Gaussian clouds: capping at n steps halves the time at
	// n = 200 and 1000 compared with running the chains to the end).
	steps := 0
	limit := n
	for k := 0; k < len(free); {
		i := free[k]
		k++
		for {
			steps++
			u1, j1, u2, j2 := rowMin2(c[i*n:i*n+n], v)
			i0 := rowOf[j1]
			if u1 < u2 {
				v[j1] -= u2 - u1
			} else if i0 >= 0 {
				// Tie: prefer the second column if the first is taken.
				j1 = j2
				i0 = rowOf[j1]
			}
			colOf[i] = j1
			rowOf[j1] = i
			if i0 < 0 {
				break
			}
			colOf[i0] = -1
			if u1 < u2 && steps < limit {
				i = i0 // process the evicted row right away
				continue
			}
			next = append(next, i0)
			break
		}
	}
	return next
}

// inf is +Inf, the start of the minimum searches.
var inf = math.Inf(1)

// colMinGo is colMin for the entries from index from on.
func colMinGo(row, v []float64, argmin []int, i, from int) {
	for j := from; j < len(row); j++ {
		if x := row[j]; x < v[j] {
			v[j], argmin[j] = x, i
		}
	}
}

// rowMin2Go continues the scan of rowMin2 from index from on, with the two
// smallest (u1, j1) and (u2, j2) of the entries before it.
func rowMin2Go(row, v []float64, from int, u1 float64, j1 int, u2 float64, j2 int) (float64, int, float64, int) {
	for j := from; j < len(row); j++ {
		h := row[j] - v[j]
		if h < u2 {
			if h >= u1 {
				u2, j2 = h, j
			} else {
				u2, j2 = u1, j1
				u1, j1 = h, j
			}
		}
	}
	return u1, j1, u2, j2
}

// minDiffGo continues minDiff from index from on, with the minimum m of
// the entries before it.
func minDiffGo(row, v []float64, from int, m float64) float64 {
	for j := from; j < len(row); j++ {
		if h := row[j] - v[j]; h < m {
			m = h
		}
	}
	return m
}

// augment assigns the free row f along a shortest augmenting path in the
// reduced costs C_ij − V_j − U_i and updates the prices of the columns
// whose distance became final.
func (s *AssignmentSolver) augment(c []float64, n, f int) {
	rowOf, v := s.rowOf, s.v
	d := grow(s.d, n)
	pred := grow(s.pred, n)
	todo := grow(s.todo, n) // columns not yet final, todo[lo:]
	s.d, s.pred, s.todo = d, pred, todo
	row := c[f*n : f*n+n]
	for j := 0; j < n; j++ {
		d[j] = row[j] - v[j]
		pred[j] = f
		todo[j] = j
	}
	// Columns todo[:lo] are final (scanned); todo[lo:hi] have the current
	// minimal distance mind; todo[hi:] are the rest.
	lo, hi := 0, 0
	var mind float64
	endCol := -1
	for endCol < 0 {
		if lo == hi {
			// Collect the columns at minimal distance among todo[hi:].
			mind = math.Inf(1)
			for k := hi; k < n; k++ {
				j := todo[k]
				if dj := d[j]; dj <= mind {
					if dj < mind {
						hi = lo
						mind = dj
					}
					todo[k], todo[hi] = todo[hi], j
					hi++
				}
			}
			// A free column among them ends the search.
			for k := lo; k < hi; k++ {
				if rowOf[todo[k]] < 0 {
					endCol = todo[k]
					break
				}
			}
			if endCol >= 0 {
				break
			}
		}
		// Scan one column at minimal distance: relax through its row.
		j1 := todo[lo]
		lo++
		i := rowOf[j1]
		ri := c[i*n : i*n+n]
		u1 := ri[j1] - v[j1] - mind
		for k := hi; k < n; k++ {
			j := todo[k]
			h := ri[j] - v[j] - u1
			if h < d[j] {
				d[j] = h
				pred[j] = i
				if h == mind {
					if rowOf[j] < 0 {
						endCol = j
						break
					}
					todo[k], todo[hi] = todo[hi], j
					hi++
				}
			}
		}
	}
	// Price update of the final columns.
	for k := 0; k < lo; k++ {
		j := todo[k]
		v[j] += d[j] - mind
	}
	s.flip(endCol, f)
}

// flip augments along the predecessor path that ends at the free column
// j and starts at the free row f: every row on it takes the column it
// was reached through.
func (s *AssignmentSolver) flip(j, f int) {
	colOf, rowOf, pred := s.colOf, s.rowOf, s.pred
	for {
		i := pred[j]
		rowOf[j] = i
		j, colOf[i] = colOf[i], j
		if i == f {
			return
		}
	}
}

// augmentScan does what augment does, with another search order: every
// step of the Dijkstra search makes final the first column (lowest index)
// at the smallest tentative distance, and relaxes the distances of all
// columns through that column's row in one pass in index order, which
// also finds the next smallest distance (relaxMin). A final column's
// distance is set to NaN, which no comparison lowers or selects; the
// search ends at the first free column it would make final. The passes
// read memory in order and run on AVX2: from n ≈ 1000 on they take about
// half augment's time, which goes through a permuted list of columns.
func (s *AssignmentSolver) augmentScan(c []float64, n, f int) {
	rowOf, v := s.rowOf, s.v
	d := grow(s.d, n)
	pred := grow(s.pred, n)
	fin := s.todo[:0] // the final columns, in order
	dist := s.final[:0]
	s.d, s.pred = d, pred
	for j := range d {
		d[j] = inf
	}
	mind, j1 := relaxMin(c[f*n:f*n+n], v, d, pred, f, 0)
	for j1 >= 0 && rowOf[j1] >= 0 {
		fin = append(fin, j1)
		dist = append(dist, mind)
		d[j1] = math.NaN()
		i := rowOf[j1]
		ri := c[i*n : i*n+n]
		// Reduced costs of row i relative to its assigned column j1.
		u1 := ri[j1] - v[j1] - mind
		mind, j1 = relaxMin(ri, v, d, pred, i, u1)
	}
	s.todo, s.final = fin, dist
	if j1 < 0 {
		// Unreachable: within MaxCost the distances stay
		// finite, and a free column is never made final.
		panic("ot: assignment search found no free column")
	}
	// Price update of the final columns.
	for k, j := range fin {
		v[j] += dist[k] - mind
	}
	s.flip(j1, f)
}

// relaxMinGo is relaxMin's pass for the entries from index from on, with
// the smallest distance best of the entries before it.
func relaxMinGo(ri, v, d []float64, pred []int, i int, u1 float64, from int, best float64) float64 {
	for j := from; j < len(ri); j++ {
		dj := d[j]
		if h := ri[j] - v[j] - u1; h < dj {
			dj = h
			d[j] = h
			pred[j] = i
		}
		if dj < best {
			best = dj
		}
	}
	return best
}

// firstMin returns the entry of d equal to its minimum m (NaN entries
// skipped) at its first index from from on, or m and −1 when there is
// none. It returns the entry itself, not m: the minimum's sign of zero
// may differ when the AVX2 lanes met +0 and −0 in another order.
func firstMin(d []float64, from int, m float64) (float64, int) {
	if j := firstEqualGo(d, from, m); j >= 0 {
		return d[j], j
	}
	return m, -1
}

// firstEqualGo returns the first index j ≥ from with d[j] == x, or −1.
func firstEqualGo(d []float64, from int, x float64) int {
	for j := from; j < len(d); j++ {
		if d[j] == x {
			return j
		}
	}
	return -1
}
