//go:build !amd64 || purego

package ot

func colMin(row, v []float64, argmin []int, i int) { colMinGo(row, v, argmin, i, 0) }

func rowMin2(row, v []float64) (u1 float64, j1 int, u2 float64, j2 int) {
	return rowMin2Go(row, v, 0, inf, -1, inf, -1)
}

func minDiff(row, v []float64) float64 { return minDiffGo(row, v, 0, inf) }

func relaxMin(ri, v, d []float64, pred []int, i int, u1 float64) (float64, int) {
	return firstMin(d, 0, relaxMinGo(ri, v, d, pred, i, u1, 0, inf))
}

func setAVX2(bool) {}
