package ot

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// BarycentricMap writes into dst the barycentric projection of the source
// points through the plan p onto the target points Y (m×d, one point per
// row):
//
//	T_π(x_i) = argmin_x Σ_j π_ij ‖x − y_j‖² = Σ_j π_ij y_j / Σ_j π_ij,
//
// which for uniform source weights 1/n is the paper's eq. 5,
// T_π(X) = n π Y. The same map propagates labels (eq. 10) when Y holds
// one-hot or soft labels. Since p is sparse the map is a gather over p's
// non-zeros: O(nnz·d), no matrix product; a point sent whole to one target
// point (as in the permutation plans of uniform n×n problems) is mapped
// onto it exactly.
//
// dst must be empty (it is then resized to p.N×d) or p.N×d. Rows of dst whose
// source point carries no mass are set to zero. BarycentricMap returns an
// error when Y is nil or does not have p.M rows, when dst is nil or has the
// wrong shape, or when p is malformed: fields of different lengths, an
// index outside the plan's shape, or a negative, NaN or infinite mass.
func (p *Plan) BarycentricMap(dst *mat.Dense, Y mat.Matrix) error {
	if isNil(Y) {
		return errors.New("ot: barycentric map: Y is nil")
	}
	if err := p.check(); err != nil {
		return fmt.Errorf("ot: barycentric map: %w", err)
	}
	m, d := Y.Dims()
	if m != p.M {
		return fmt.Errorf("ot: barycentric map: Y has %d rows, the plan has %d columns", m, p.M)
	}
	if err := reuseAs(dst, p.N, d); err != nil {
		return err
	}
	dst.Zero()
	yd, ok := Y.(*mat.Dense)
	yrow := func(j int, buf []float64) []float64 {
		if ok {
			return yd.RawRowView(j)
		}
		for l := range buf {
			buf[l] = Y.At(j, l)
		}
		return buf
	}
	buf := make([]float64, d)
	count := make([]int, p.N)
	mass := make([]float64, p.N)
	for k, i := range p.Row {
		count[i]++
		mass[i] += p.Mass[k]
	}
	for k, i := range p.Row {
		row := dst.RawRowView(i)
		y := yrow(p.Col[k], buf)
		if count[i] == 1 {
			// A point sent whole to one target point maps onto it exactly.
			copy(row, y)
			continue
		}
		w := p.Mass[k]
		for l, v := range y {
			row[l] += w * v
		}
	}
	for i, s := range mass {
		if count[i] > 1 {
			row := dst.RawRowView(i)
			for l := range row {
				row[l] /= s
			}
		}
	}
	return nil
}

// BarycentricMap is Plan.BarycentricMap for a dense plan P (n×m), such as
// the one Sinkhorn returns: dst = diag(1/P1) P Y, computed with one matrix
// product. dst may be P or Y. It returns an error when P or Y is nil, when
// an entry of P is negative, NaN or infinite, or when the shapes disagree.
func BarycentricMap(dst *mat.Dense, P, Y mat.Matrix) error {
	if isNil(P) || isNil(Y) {
		return errors.New("ot: barycentric map: nil plan or points")
	}
	n, m := P.Dims()
	my, d := Y.Dims()
	if my != m {
		return fmt.Errorf("ot: barycentric map: Y has %d rows, the plan has %d columns", my, m)
	}
	// The row sums come first, so that dst may overwrite P.
	sums := make([]float64, n)
	for i := range sums {
		var s float64
		for j := 0; j < m; j++ {
			v := P.At(i, j)
			if !(v >= 0) || math.IsInf(v, 1) {
				return fmt.Errorf("ot: barycentric map: plan entry (%d, %d) is %g", i, j, v)
			}
			s += v
		}
		sums[i] = s
	}
	if err := reuseAs(dst, n, d); err != nil {
		return err
	}
	dst.Mul(P, Y)
	for i, s := range sums {
		row := dst.RawRowView(i)
		for l := range row {
			if s > 0 {
				row[l] /= s
			} else {
				row[l] = 0
			}
		}
	}
	return nil
}

// check reports whether p is a well-formed plan: Row, Col and Mass of one
// length, indices within N×M and masses non-negative and finite.
func (p *Plan) check() error {
	if p == nil {
		return errors.New("the plan is nil")
	}
	if len(p.Row) != len(p.Mass) || len(p.Col) != len(p.Mass) {
		return fmt.Errorf("the plan has %d rows, %d columns and %d masses", len(p.Row), len(p.Col), len(p.Mass))
	}
	for k, w := range p.Mass {
		if i, j := p.Row[k], p.Col[k]; i < 0 || i >= p.N || j < 0 || j >= p.M {
			return fmt.Errorf("plan entry %d at (%d, %d) lies outside its %d×%d shape", k, i, j, p.N, p.M)
		}
		if !(w >= 0) || math.IsInf(w, 1) {
			return fmt.Errorf("plan entry %d has mass %g", k, w)
		}
	}
	return nil
}

// reuseAs sizes an empty dst to r×c, or checks that it is r×c.
func reuseAs(dst *mat.Dense, r, c int) error {
	if dst == nil {
		return errors.New("ot: the destination is nil")
	}
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
		return nil
	}
	if rr, cc := dst.Dims(); rr != r || cc != c {
		return fmt.Errorf("ot: destination is %d×%d, want %d×%d", rr, cc, r, c)
	}
	return nil
}
