//go:build !amd64 || purego

package linalg

const useAVX2 = false

// dot3x4acc advances the lane accumulators of a 3×4 block (see the amd64
// version).
func dot3x4acc(a []float64, lda int, b []float64, ldb int, k4 int, acc *[48]float64, init bool) {
	dot3x4accGo(a, lda, b, ldb, k4, acc, init)
}

func addScaledRows(dst, w []float64, xs [][]float64) { addScaledRowsGo(dst, w, xs, 0) }

func setAVX2(bool) {}

func sqDists(dst, norms, dots []float64, norm float64) float64 {
	return sqDistsGo(dst, norms, dots, norm, 0, 0)
}

func addClamped(dst []float64, c float64) { addClampedGo(dst, c, 0) }

func firstAbove(x []float64, bound float64) int { return firstAboveGo(x, bound, 0) }
