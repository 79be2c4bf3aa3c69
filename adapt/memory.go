package adapt

import (
	"fmt"
	"math"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// cellNumbers are the float64 numbers the transport-based methods hold
// per cell of their source × target plans (Σ_s n_s·n_T cells), measured on
// Gaussian problems of 500 to 1000 rows per domain and rounded up: a cost
// matrix and the solver's arrays (exact OTDA, JCPOT, WJDOT's batches),
// with the kernel and the plan's iterates (Sinkhorn), or the plans of a
// free-support barycenter of the sources (WB, WBT, WBR).
var cellNumbers = map[string]float64{
	"otda-emd": 2, "otda-sinkhorn": 5, "jcpot": 3, "wjdot": 3,
	"wb": 6, "wbt-reg": 6, "wbr-r": 6, "wbr-e": 6,
}

// EstimateMemory estimates the peak memory, in bytes, that fitting the
// method called name (one of Names) under the configuration c adds to the
// problem p's data. With R rows in all (at most MaxRows per domain for
// the DenseTransport methods, which Config.New subsamples), d features
// and c classes, it counts float64 numbers:
//
//	every method      R·(3d + 3c)          copies of the rows for the
//	                                       classifier and the labels
//	transport methods + f·Σ_s n_s·n_T      f per cell of the plans
//	                                       (cellNumbers: 2 to 6)
//	sa, tca           + 3·min(R, d)² (tca) or 3·d² (sa)
//	dadil-r, dadil-e  dictionary.EstimateMemory's Peak − Data, with the
//	                  settings of c.Dictionary
//
// Held-out-source validation and the scorers of package selection refit
// the method on smaller problems, within the same estimate.
func EstimateMemory(name string, c *Config, p *dataset.Problem) (int64, error) {
	if c == nil {
		c = &Config{}
	}
	if p == nil || p.Target.X == nil || len(p.Sources) == 0 {
		return 0, fmt.Errorf("adapt: EstimateMemory: no problem")
	}
	if _, err := New(name, 0); err != nil {
		return 0, err
	}
	_, dd := p.Target.X.Dims()
	d, cl := float64(dd), float64(p.Classes)
	capped := func(r int) float64 {
		if c.MaxRows > 0 && DenseTransport(name) {
			r = min(r, c.MaxRows)
		}
		return float64(r)
	}
	nT := capped(p.Target.Rows())
	R, cells := nT, 0.0
	for _, s := range p.Sources {
		R += capped(s.Rows())
		cells += capped(s.Rows()) * nT
	}
	switch name {
	case "dadil-r", "dadil-e":
		z := dictionary.SizesOf(p.Domains(), p.Classes)
		est := dictionary.EstimateMemory(z, c.Dictionary)
		return est.Peak() - est.Data, nil
	}
	n := R*(3*d+3*cl) + cellNumbers[name]*cells
	switch name {
	case "tca":
		n += 3 * math.Pow(min(R, d), 2)
	case "sa":
		n += 3 * d * d
	}
	b := 8 * n
	if !(b < math.MaxInt64) {
		return math.MaxInt64, nil
	}
	return int64(b), nil
}
