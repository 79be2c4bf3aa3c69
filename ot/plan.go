package ot

import (
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Plan is a transport plan π ∈ R^{N×M} stored sparsely: Mass[k] is the
// amount moved from source point Row[k] to target point Col[k]. Entries are
// sorted by (Row, Col) and every Mass[k] is positive. An exact plan from EMD
// has at most N+M−1 entries.
type Plan struct {
	N, M int
	Row  []int
	Col  []int
	Mass []float64
}

// Len returns the number of non-zero entries of the plan.
func (p *Plan) Len() int { return len(p.Mass) }

// Dense returns the plan as a dense N×M matrix.
func (p *Plan) Dense() *mat.Dense {
	d := mat.NewDense(p.N, p.M, nil)
	p.DenseTo(d)
	return d
}

// DenseTo writes the plan into dst, which must be N×M (DenseTo panics with
// mat.ErrShape otherwise, as gonum's methods do). Entries not in the plan
// are set to zero.
func (p *Plan) DenseTo(dst *mat.Dense) {
	r, c := dst.Dims()
	if r != p.N || c != p.M {
		panic(mat.ErrShape)
	}
	dst.Zero()
	for k, w := range p.Mass {
		dst.Set(p.Row[k], p.Col[k], w)
	}
}

// Cost returns ⟨C, π⟩_F for a cost matrix C of the plan's shape (N×M; an
// entry outside C panics, as mat.Matrix.At does).
func (p *Plan) Cost(C mat.Matrix) float64 {
	var s float64
	for k, w := range p.Mass {
		s += w * C.At(p.Row[k], p.Col[k])
	}
	return s
}

// RowSums returns π 1_M, the plan's source marginal.
func (p *Plan) RowSums() []float64 {
	s := make([]float64, p.N)
	for k, w := range p.Mass {
		s[p.Row[k]] += w
	}
	return s
}

// ColSums returns πᵀ 1_N, the plan's target marginal.
func (p *Plan) ColSums() []float64 {
	s := make([]float64, p.M)
	for k, w := range p.Mass {
		s[p.Col[k]] += w
	}
	return s
}

// reset empties p for an n×m problem, keeping its storage.
func (p *Plan) reset(n, m int) {
	p.N, p.M = n, m
	p.Row = p.Row[:0]
	p.Col = p.Col[:0]
	p.Mass = p.Mass[:0]
}

// T returns the transposed plan πᵀ (M×N), its entries sorted by (Row,
// Col): the plan that moves the target points back onto the sources.
func (p *Plan) T() *Plan {
	t := &Plan{N: p.M, M: p.N, Row: make([]int, len(p.Mass)), Col: make([]int, len(p.Mass)), Mass: make([]float64, len(p.Mass))}
	idx := make([]int, len(p.Mass))
	for k := range idx {
		idx[k] = k
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := idx[a], idx[b]
		if p.Col[ka] != p.Col[kb] {
			return p.Col[ka] < p.Col[kb]
		}
		return p.Row[ka] < p.Row[kb]
	})
	for k, e := range idx {
		t.Row[k], t.Col[k], t.Mass[k] = p.Col[e], p.Row[e], p.Mass[e]
	}
	return t
}
