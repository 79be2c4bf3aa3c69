package federate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
)

// MinSummaryRows is the fewest rows of a class whose statistics a site
// sends: a class of fewer rows is left out of its summary, so that no
// mean or deviation stands for a handful of rows.
const MinSummaryRows = 5

// Start selects how the coordinator starts the atoms.
type Start int

const (
	// StartSummary draws atom k's points, class-balanced, from the class
	// summaries of source k mod N_S (sources in site-id order): point i
	// of class y is mean_y + std_y ⊙ z with z ~ N(0, I), where mean_y
	// and std_y are the per-feature mean and standard deviation of the
	// source's rows of class y (scaled with the federation's scaling),
	// clipped to the range of that source's features when it sent its
	// ranges (with the min-max scaling): min(max(x, lo), hi), element-wise,
	// so that the points stay where rows can be; its label logits put 0.9
	// on y after the softmax, as dictionary.InitData does. A class a
	// source did not summarise is drawn (and clipped) from the first
	// source (by id) that did. Only these statistics leave the sites,
	// never a row.
	StartSummary Start = iota
	// StartGaussian draws every point from N(0, I) with one-hot logits
	// (paper Algorithm 2, line 1), with no statistic from the sites.
	StartGaussian
)

// ParseStart returns the start named "summary" or "gaussian".
func ParseStart(s string) (Start, error) {
	switch s {
	case "summary":
		return StartSummary, nil
	case "gaussian":
		return StartGaussian, nil
	}
	return 0, fmt.Errorf("federate: unknown start %q (want summary or gaussian)", s)
}

func (s Start) String() string {
	if s == StartGaussian {
		return "gaussian"
	}
	return "summary"
}

// SummaryShape returns the shape of the summary of a site of d features in
// a federation of c classes, sent as one atom of 2 + 2c points with one
// logit column that marks the points sent (1) or left out (0, all zeros):
//
//	point 0, 1        the minimum and the maximum of every feature over
//	                  the site's rows (sent when the federation scales
//	                  its features)
//	point 2+2y, 3+2y  the mean and the standard deviation of every
//	                  feature over the site's rows of class y (sent by a
//	                  source for the summary start, for the classes of at
//	                  least MinSummaryRows rows)
func SummaryShape(d, c int) Shape { return Shape{K: 1, N: 2 + 2*c, D: d, C: 1} }

// ScaleShape returns the shape of the federation's scaling of d features:
// one atom of two points, the offsets o and the factors f of the map
// x ↦ (x − o)·f applied to every feature (dataset.Scaler); its logits are
// zero.
func ScaleShape(d int) Shape { return Shape{K: 1, N: 2, D: d, C: 1} }

// summary is a site's summary (SummaryShape) in the frame format's order.
type summary struct {
	data []float64
	d, c int
}

func (s summary) point(i int) []float64 { return s.data[i*s.d : (i+1)*s.d] }
func (s summary) sent(i int) bool       { return s.data[(2+2*s.c)*s.d+i] == 1 }

// summarize returns the summary of the rows X whose class indices are y
// (nil for a target) among c classes: their ranges if ranges, their
// classes' means and deviations if classes and y is not nil.
func summarize(X *mat.Dense, y []int, c int, ranges, classes bool) []float64 {
	r, d := X.Dims()
	s := summary{data: make([]float64, (2+2*c)*(d+1)), d: d, c: c}
	mark := func(i int) { s.data[(2+2*c)*d+i] = 1 }
	if ranges {
		lo, hi := s.point(0), s.point(1)
		copy(lo, X.RawRowView(0))
		copy(hi, X.RawRowView(0))
		for i := 1; i < r; i++ {
			for j, v := range X.RawRowView(i) {
				lo[j], hi[j] = min(lo[j], v), max(hi[j], v)
			}
		}
		mark(0)
		mark(1)
	}
	if !classes || y == nil {
		return s.data
	}
	count := make([]int, c)
	for i, k := range y {
		count[k]++
		m := s.point(2 + 2*k)
		for j, v := range X.RawRowView(i) {
			m[j] += v
		}
	}
	for k := range c {
		m := s.point(2 + 2*k)
		for j := range m {
			m[j] /= float64(max(count[k], 1))
		}
	}
	for i, k := range y {
		m, sd := s.point(2+2*k), s.point(3+2*k)
		for j, v := range X.RawRowView(i) {
			sd[j] += (v - m[j]) * (v - m[j])
		}
	}
	for k := range c {
		m, sd := s.point(2+2*k), s.point(3+2*k)
		if count[k] < MinSummaryRows {
			clear(m)
			clear(sd)
			continue
		}
		for j := range sd {
			sd[j] = math.Sqrt(sd[j] / float64(count[k]))
		}
		mark(2 + 2*k)
		mark(3 + 2*k)
	}
	return s.data
}

// scalerOf returns the min-max scaling of the ranges the summaries sent:
// the one dataset.FitScaler fits on all the sites' rows together, since
// it depends only on every feature's minimum and maximum over them.
func scalerOf(sums []summary) (*dataset.Scaler, error) {
	var rows []float64
	d := 0
	for _, s := range sums {
		if s.sent(0) {
			rows = append(append(rows, s.point(0)...), s.point(1)...)
			d = s.d
		}
	}
	if rows == nil {
		return nil, protocolErr("no site sent the ranges of its features")
	}
	return dataset.FitScaler(dataset.ScaleMinMax, &dataset.File{Name: "ranges", X: mat.NewDense(len(rows)/d, d, rows)})
}

// drawAtoms fills the atoms (data, of shape sh) from the class summaries
// of the sources (in site-id order; nil for a source that sent none),
// scaled by sc (nil: unscaled), as StartSummary describes. It returns the
// classes no source summarised, whose points are drawn from N(0, I).
func drawAtoms(data []float64, sh Shape, sources []*summary, sc *dataset.Scaler, rng *rand.Rand) []int {
	// mean and std of class y at source s, scaled; nil if not sent.
	stats := func(s *summary, y int) (m, sd []float64) {
		if s == nil || !s.sent(2+2*y) {
			return nil, nil
		}
		m, sd = append([]float64(nil), s.point(2+2*y)...), append([]float64(nil), s.point(3+2*y)...)
		if sc != nil {
			for j := range m {
				m[j] = (m[j] - sc.Offset[j]) * sc.Scale[j]
				sd[j] *= sc.Scale[j]
			}
		}
		return m, sd
	}
	// The summary each source's class y draws from: its own, or the
	// first source's that has it.
	from := make([][]*summary, len(sources))
	means, sds := make([][][]float64, len(sources)), make([][][]float64, len(sources))
	var missing []int
	for y := range sh.C {
		var fm, fsd []float64 // the first source's summary of class y
		var first *summary
		for i, s := range sources {
			m, sd := stats(s, y)
			means[i], sds[i], from[i] = append(means[i], m), append(sds[i], sd), append(from[i], s)
			if fm == nil && m != nil {
				fm, fsd, first = m, sd, s
			}
		}
		if fm == nil {
			missing = append(missing, y)
		}
		for i := range sources {
			if means[i][y] == nil {
				means[i][y], sds[i][y], from[i][y] = fm, fsd, first
			}
		}
	}
	// The scaled range of every source that sent one.
	ranges := map[*summary][2][]float64{}
	for _, s := range sources {
		if lo, hi := rangeOf(s, sc); lo != nil {
			ranges[s] = [2][]float64{lo, hi}
		}
	}
	logit := math.Log(9 * float64(sh.C-1))
	atoms, _ := Unpack(data, sh)
	for k, a := range atoms {
		src := k % len(sources)
		a.Logits.Zero()
		for i := range sh.N {
			y := i % sh.C
			x, m, sd := a.X.RawRowView(i), means[src][y], sds[src][y]
			r, clip := ranges[from[src][y]]
			for j := range x {
				x[j] = rng.NormFloat64()
				if m != nil {
					x[j] = m[j] + sd[j]*x[j]
				}
				if clip {
					x[j] = min(max(x[j], r[0][j]), r[1][j])
				}
			}
			a.Logits.Set(i, y, logit)
		}
	}
	return missing
}

// rangeOf returns the least and largest value of every feature at the
// source s, scaled by sc, or nil if s sent no ranges.
func rangeOf(s *summary, sc *dataset.Scaler) (lo, hi []float64) {
	if s == nil || !s.sent(0) || !s.sent(1) {
		return nil, nil
	}
	lo, hi = slices.Clone(s.point(0)), slices.Clone(s.point(1))
	if sc != nil {
		for j := range lo {
			lo[j] = (lo[j] - sc.Offset[j]) * sc.Scale[j]
			hi[j] = (hi[j] - sc.Offset[j]) * sc.Scale[j]
		}
	}
	return lo, hi
}

// check verifies a summary received from a site: every mark 0 or 1, a
// point not sent all zeros, the ranges ordered and the deviations not
// negative.
func (s summary) check() error {
	for i := range 2 + 2*s.c {
		f := s.data[(2+2*s.c)*s.d+i]
		if f != 0 && f != 1 {
			return protocolErr("summary point %d is marked %g (want 0 or 1)", i, f)
		}
	}
	for i := 0; i < 2+2*s.c; i += 2 {
		if s.sent(i) != s.sent(i+1) {
			return protocolErr("summary points %d and %d: one sent without the other", i, i+1)
		}
		for j := range s.d {
			a, b := s.point(i)[j], s.point(i + 1)[j]
			switch {
			case !s.sent(i) && (a != 0 || b != 0):
				return protocolErr("summary points %d and %d are not sent but hold values", i, i+1)
			case i == 0 && a > b:
				return protocolErr("feature %d ranges from %g to %g", j+1, a, b)
			case i > 0 && b < 0:
				return protocolErr("class %d: feature %d has deviation %g", i/2-1, j+1, b)
			}
		}
	}
	return nil
}
