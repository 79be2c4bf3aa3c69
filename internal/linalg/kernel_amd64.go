//go:build !purego

package linalg

import "golang.org/x/sys/cpu"

// hasAVX2 and hasAVX512 are what the CPU offers; useAVX2 and useAVX512
// what the kernels use (the tests switch them off).
var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL
	useAVX2   = hasAVX2
)

//go:noescape
func dot3x4accAVX2(a *float64, lda int, b *float64, ldb int, k int, acc *[48]float64, init int, c *float64, ldc int)

//go:noescape
func dot6x8accAVX512(a *float64, lda int, b *float64, ldb int, k int, acc *[192]float64, init int, c *float64, ldc int)

// useAVX512 selects the 6×8 kernel on 512-bit registers for the dot
// products; it needs AVX-512F and VL besides AVX2 and FMA.
var useAVX512 = hasAVX512

// dotKernel returns the widest dot-product kernel this CPU runs: 6×8 with
// AVX-512, 3×4 with AVX2 and FMA, the portable 3×4 otherwise. All three
// compute the same lanes, so the choice never changes a result.
func dotKernel() kernel {
	switch {
	case useAVX512:
		return kernel{name: "AVX-512", rows: 6, cols: 8, acc: dot6x8acc}
	case useAVX2:
		return kernel{name: "AVX2", rows: 3, cols: 4, acc: dot3x4acc}
	}
	return portableKernel
}

// dot3x4acc advances the lane accumulators acc of the 3×4 block of dot
// products of three rows of a with four rows of b over their first k4
// entries (k4 a multiple of 4) with AVX2, or reduces them in registers
// and writes the block to out when it is not nil: see kernel.
func dot3x4acc(a []float64, lda int, b []float64, ldb int, k4 int, acc []float64, init bool, out []float64, ldc int) {
	if k4 > 0 {
		_ = a[2*lda+k4-1]
		_ = b[3*ldb+k4-1]
	}
	dot3x4accAVX2(&a[0], lda, &b[0], ldb, k4, (*[48]float64)(acc), b2i(init), blockPtr(out, ldc, 3, 4), ldc)
}

// dot6x8acc is dot3x4acc for a 6×8 block, with AVX-512; it reduces the
// lanes into out in registers.
func dot6x8acc(a []float64, lda int, b []float64, ldb int, k4 int, acc []float64, init bool, out []float64, ldc int) {
	if k4 > 0 {
		_ = a[5*lda+k4-1]
		_ = b[7*ldb+k4-1]
	}
	dot6x8accAVX512(&a[0], lda, &b[0], ldb, k4, (*[192]float64)(acc), b2i(init), blockPtr(out, ldc, 6, 8), ldc)
}

// blockPtr returns nil for a nil out, otherwise &out[0] after checking
// that out holds a rows×cols block of row stride ldc.
func blockPtr(out []float64, ldc, rows, cols int) *float64 {
	if out == nil {
		return nil
	}
	_ = out[(rows-1)*ldc+cols-1]
	return &out[0]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

//go:noescape
func axpysAVX2(dst *float64, n int, w *float64, xs *[]float64, terms int)

// addScaledRows is addScaledRowsGo with the first len(dst)&^3 entries
// computed four at a time by AVX2, with the same operations.
func addScaledRows(dst, w []float64, xs [][]float64) {
	n4 := len(dst) &^ 3
	if !useAVX2 || n4 == 0 || len(xs) == 0 {
		addScaledRowsGo(dst, w, xs, 0)
		return
	}
	axpysAVX2(&dst[0], n4, &w[0], &xs[0], len(xs))
	addScaledRowsGo(dst, w, xs, n4)
}

//go:noescape
func axpys4AVX2(dst *[4]*float64, n int, w *float64, xs *[]float64, terms int)

// addScaledRows4 is addScaledRows4Go with the first len(dst[0])&^3
// entries of every dst[j] computed four at a time by AVX2, with the same
// operations.
func addScaledRows4(dst *[4][]float64, w []float64, xs [][]float64) {
	n4 := len(dst[0]) &^ 3
	if !useAVX2 || n4 == 0 || len(xs) == 0 {
		addScaledRows4Go(dst, w, xs, 0)
		return
	}
	ptrs := [4]*float64{&dst[0][0], &dst[1][0], &dst[2][0], &dst[3][0]}
	axpys4AVX2(&ptrs, n4, &w[0], &xs[0], len(xs))
	addScaledRows4Go(dst, w, xs, n4)
}

// setAVX2 switches the AVX2 kernels, and with them the AVX-512 one (tests).
func setAVX2(on bool) {
	useAVX2 = on && hasAVX2
	useAVX512 = on && hasAVX512
}

// setAVX512 switches the AVX-512 kernel alone (tests).
func setAVX512(on bool) { useAVX512 = on && useAVX2 && hasAVX512 }

//go:noescape
func sqDistsAVX2(dst, norms, dots *float64, n int, norm float64) float64

//go:noescape
func addClampedAVX2(dst *float64, n int, c float64)

// sqDists is sqDistsGo with the first len(dst)&^3 entries computed four
// at a time by AVX2, with the same operations.
func sqDists(dst, norms, dots []float64, norm float64) float64 {
	n4 := len(dst) &^ 3
	if !useAVX2 || n4 == 0 {
		return sqDistsGo(dst, norms, dots, norm, 0, 0)
	}
	_, _ = norms[n4-1], dots[n4-1]
	m := sqDistsAVX2(&dst[0], &norms[0], &dots[0], n4, norm)
	return sqDistsGo(dst, norms, dots, norm, n4, m)
}

// addClamped is addClampedGo with the first len(dst)&^3 entries computed
// four at a time by AVX2, with the same operations.
func addClamped(dst []float64, c float64) {
	n4 := len(dst) &^ 3
	if !useAVX2 || n4 == 0 {
		addClampedGo(dst, c, 0)
		return
	}
	addClampedAVX2(&dst[0], n4, c)
	addClampedGo(dst, c, n4)
}

//go:noescape
func aboveChunkAVX2(x *float64, n int, bound float64) int

// firstAbove is firstAboveGo, skipping with AVX2 the blocks of four
// entries that are all within the bound.
func firstAbove(x []float64, bound float64) int {
	n4 := len(x) &^ 3
	if !useAVX2 || n4 == 0 {
		return firstAboveGo(x, bound, 0)
	}
	return firstAboveGo(x, bound, aboveChunkAVX2(&x[0], n4, bound))
}
