//go:build !purego

package dictionary

import "golang.org/x/sys/cpu"

var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func adamRowAVX2(p, m, v, grad *float64, n int, c *[6]float64, lanes *[4]float64)

// adamRow is adamRowGo four entries at a time with AVX2: the same
// operations, each correctly rounded, so the same values.
func adamRow(p, m, v, g []float64, sc, ce float64, lanes *[4]float64) {
	n4 := len(p) &^ 3
	if !useAVX2 || n4 == 0 {
		adamRowGo(p, m, v, g, sc, ce, lanes)
		return
	}
	m, v = m[:len(p)], v[:len(p)]
	c := adamConsts(sc, ce)
	var gp *float64
	if g != nil {
		g = g[:len(p)]
		gp = &g[0]
	}
	adamRowAVX2(&p[0], &m[0], &v[0], gp, n4, &c, lanes)
	if n4 < len(p) {
		var tg []float64
		if g != nil {
			tg = g[n4:]
		}
		adamRowGo(p[n4:], m[n4:], v[n4:], tg, sc, ce, lanes)
	}
}

// setAVX2 switches the kernel (tests).
func setAVX2(on bool) { useAVX2 = on && cpu.X86.HasAVX2 }
