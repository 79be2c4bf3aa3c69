//go:build !amd64 || purego

package linalg

const useAVX2 = false

const useAVX512 = false

// dotKernel returns the portable 3×4 kernel.
func dotKernel() kernel { return portableKernel }

func addScaledRows(dst, w []float64, xs [][]float64) { addScaledRowsGo(dst, w, xs, 0) }

func addScaledRows4(dst *[4][]float64, w []float64, xs [][]float64) { addScaledRows4Go(dst, w, xs, 0) }

func setAVX2(bool) {}

func setAVX512(bool) {}

func sqDists(dst, norms, dots []float64, norm float64) float64 {
	return sqDistsGo(dst, norms, dots, norm, 0, 0)
}

func addClamped(dst []float64, c float64) { addClampedGo(dst, c, 0) }

func firstAbove(x []float64, bound float64) int { return firstAboveGo(x, bound, 0) }
