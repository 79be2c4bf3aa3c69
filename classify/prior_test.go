package classify

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestEstimatePrior: on rows drawn with class proportions h from two or
// three overlapping Gaussian classes, whose exact posteriors under equal
// proportions are known, the EM estimate recovers h; nil for no rows.
func TestEstimatePrior(t *testing.T) {
	for _, h := range [][]float64{{0.5, 0.5}, {0.8, 0.2}, {0.1, 0.3, 0.6}} {
		rng := rand.New(rand.NewPCG(3, uint64(len(h))))
		c, n := len(h), 20000
		proba := mat.NewDense(n, c, nil)
		for i := range n {
			// class y w.p. h_y; x ~ N(y, 1); p(y|x) ∝ exp(−(x−y)²/2).
			u, y := rng.Float64(), 0
			for acc := h[0]; u > acc && y < c-1; {
				y++
				acc += h[y]
			}
			x := float64(y) + rng.NormFloat64()
			row := proba.RawRowView(i)
			var s float64
			for k := range row {
				row[k] = math.Exp(-(x - float64(k)) * (x - float64(k)) / 2)
				s += row[k]
			}
			for k := range row {
				row[k] /= s
			}
		}
		got := EstimatePrior(proba)
		for k := range h {
			if math.Abs(got[k]-h[k]) > 0.03 {
				t.Errorf("h = %v: estimated %v", h, got)
				break
			}
		}
	}
	if EstimatePrior(nil) != nil || EstimatePrior(&mat.Dense{}) != nil {
		t.Error("no rows: want nil")
	}
}
