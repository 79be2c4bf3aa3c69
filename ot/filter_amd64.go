//go:build !purego

package ot

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 pricing kernel.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func firstBelowAVX2(row, pd *float32, n int, thr float32) int

// firstBelow returns the smallest multiple of 8, k < len(row), such that
// row[k+l] − pd[k+l] < thr for some l in [0, 8), or len(row) if there is
// none. len(row) must be a multiple of 8 and len(pd) ≥ len(row).
func firstBelow(row, pd []float32, thr float32) int {
	if len(row) == 0 {
		return 0
	}
	if useAVX2 {
		_ = pd[len(row)-1]
		return firstBelowAVX2(&row[0], &pd[0], len(row), thr)
	}
	return firstBelowGo(row, pd, thr)
}
