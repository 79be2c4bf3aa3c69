//go:build !amd64 || purego

package dictionary

const useAVX2 = false

// adamRow performs one Adam step on a row (see adamRowGo).
func adamRow(p, m, v, g []float64, sc, ce float64, lanes *[4]float64) {
	adamRowGo(p, m, v, g, sc, ce, lanes)
}

func setAVX2(bool) {}
