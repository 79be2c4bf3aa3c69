//go:build !amd64 || purego

package linalg

const useAVX2 = false

// dot3x4 computes the 3×4 block of dot products of three rows of a (at
// a[0], a[lda], a[2·lda]) with four rows of b over their first k4 entries
// (k4 a multiple of 4), exactly as dot4 would.
func dot3x4(a []float64, lda int, b []float64, ldb int, k4 int, out *[12]float64) {
	for r := 0; r < 3; r++ {
		for s := 0; s < 4; s++ {
			out[4*r+s] = dot4(a[r*lda:r*lda+k4], b[s*ldb:s*ldb+k4])
		}
	}
}

func setAVX2(bool) {}
