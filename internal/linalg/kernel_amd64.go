//go:build !purego

package linalg

import "golang.org/x/sys/cpu"

var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dot3x4AVX2(a *float64, lda int, b *float64, ldb int, k int, out *[12]float64)

// dot3x4 computes the 3×4 block of dot products of three rows of a (at
// a[0], a[lda], a[2·lda]) with four rows of b over their first k4 entries
// (k4 a multiple of 4), exactly as dot4 would.
func dot3x4(a []float64, lda int, b []float64, ldb int, k4 int, out *[12]float64) {
	if useAVX2 && k4 > 0 {
		_ = a[2*lda+k4-1]
		_ = b[3*ldb+k4-1]
		dot3x4AVX2(&a[0], lda, &b[0], ldb, k4, out)
		return
	}
	for r := 0; r < 3; r++ {
		for s := 0; s < 4; s++ {
			out[4*r+s] = dot4(a[r*lda:r*lda+k4], b[s*ldb:s*ldb+k4])
		}
	}
}

// setAVX2 switches the kernel (tests).
func setAVX2(on bool) { useAVX2 = on && cpu.X86.HasAVX2 && cpu.X86.HasFMA }
