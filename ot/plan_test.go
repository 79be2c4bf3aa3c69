package ot

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestPlanT(t *testing.T) {
	p := &Plan{N: 2, M: 3, Row: []int{0, 0, 1}, Col: []int{0, 2, 1}, Mass: []float64{0.1, 0.2, 0.7}}
	q := p.T()
	if q.N != 3 || q.M != 2 {
		t.Fatalf("%d×%d", q.N, q.M)
	}
	if !mat.Equal(q.Dense(), p.Dense().T()) {
		t.Errorf("πᵀ %v, want %v", mat.Formatted(q.Dense()), mat.Formatted(p.Dense().T()))
	}
	for k := 1; k < q.Len(); k++ {
		if q.Row[k] < q.Row[k-1] || (q.Row[k] == q.Row[k-1] && q.Col[k] <= q.Col[k-1]) {
			t.Errorf("entries not sorted: rows %v, cols %v", q.Row, q.Col)
		}
	}
}
