//go:build !amd64 || purego

package ot

const useAVX2 = false

// firstBelow returns the smallest multiple of 8, k < len(row), such that
// row[k+l] − pd[k+l] < thr for some l in [0, 8), or len(row) if there is
// none. len(row) must be a multiple of 8 and len(pd) ≥ len(row).
func firstBelow(row, pd []float32, thr float32) int {
	return firstBelowGo(row, pd, thr)
}
