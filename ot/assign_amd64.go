//go:build !purego

package ot

import "golang.org/x/sys/cpu"

//go:noescape
func colMinAVX2(row, v *float64, argmin *int, n int, i int)

//go:noescape
func rowMin2AVX2(row, v *float64, n int, u *[8]float64, j *[8]int)

//go:noescape
func minDiffAVX2(row, v *float64, n int) float64

//go:noescape
func relaxMinAVX2(ri, v, d *float64, pred *int, n int, i int, u1 float64) float64

//go:noescape
func firstEqualAVX2(d *float64, n int, x float64) int

// colMin lowers v[j] to row[j] where row[j] < v[j], recording argmin[j] =
// i there (a strict comparison: ties keep the earlier row).
func colMin(row, v []float64, argmin []int, i int) {
	n4 := len(row) &^ 3
	if !useAVX2 || n4 == 0 {
		colMinGo(row, v, argmin, i, 0)
		return
	}
	_, _ = v[n4-1], argmin[n4-1]
	colMinAVX2(&row[0], &v[0], &argmin[0], n4, i)
	colMinGo(row, v, argmin, i, n4)
}

// rowMin2 returns the smallest reduced cost h = row[j] − v[j] at its first
// index j1, and the smallest of the others (ties: the first index) at j2:
// the two smallest (h, j) in lexicographic order.
func rowMin2(row, v []float64) (u1 float64, j1 int, u2 float64, j2 int) {
	n4 := len(row) &^ 3
	if !useAVX2 || n4 == 0 {
		return rowMin2Go(row, v, 0, inf, -1, inf, -1)
	}
	_ = v[n4-1]
	var u [8]float64
	var j [8]int
	rowMin2AVX2(&row[0], &v[0], n4, &u, &j)
	// The lanes' candidates, merged in lexicographic order: they are the
	// two smallest of the entries before n4 in the scan's own order.
	u1, j1, u2, j2 = inf, -1, inf, -1
	for l := range 8 {
		h, k := u[l], j[l]
		if k < 0 {
			continue
		}
		switch {
		case less(h, k, u1, j1):
			u2, j2 = u1, j1
			u1, j1 = h, k
		case less(h, k, u2, j2):
			u2, j2 = h, k
		}
	}
	return rowMin2Go(row, v, n4, u1, j1, u2, j2)
}

// less orders (h, k) before (u, j) lexicographically; j < 0 is after all.
func less(h float64, k int, u float64, j int) bool {
	return j < 0 || h < u || h == u && k < j
}

// minDiff returns the smallest row[j] − v[j], +Inf for an empty row.
func minDiff(row, v []float64) float64 {
	n4 := len(row) &^ 3
	m := inf
	if useAVX2 && n4 > 0 {
		_ = v[n4-1]
		m = minDiffAVX2(&row[0], &v[0], n4)
	} else {
		n4 = 0
	}
	return minDiffGo(row, v, n4, m)
}

// relaxMin relaxes the tentative distances d through row i, whose
// reduced costs are h_j = ri[j] − v[j] − u1: where h_j < d[j], d[j] = h_j
// and pred[j] = i. It returns the smallest d[j] afterwards (NaN entries
// are final columns and skipped) and its first index, −1 when every entry
// is NaN.
func relaxMin(ri, v, d []float64, pred []int, i int, u1 float64) (float64, int) {
	n4 := len(ri) &^ 3
	if !useAVX2 || n4 == 0 {
		return firstMin(d, 0, relaxMinGo(ri, v, d, pred, i, u1, 0, inf))
	}
	_, _, _ = v[n4-1], d[n4-1], pred[n4-1]
	m := relaxMinAVX2(&ri[0], &v[0], &d[0], &pred[0], n4, i, u1)
	m = relaxMinGo(ri, v, d, pred, i, u1, n4, m)
	if j := firstEqualAVX2(&d[0], n4, m); j >= 0 {
		return d[j], j
	}
	return firstMin(d, n4, m)
}

// setAVX2 switches the kernels (tests).
func setAVX2(on bool) { useAVX2 = on && cpu.X86.HasAVX2 }
