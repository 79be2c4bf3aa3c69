package federate

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dadil/dadil/dataset"
)

// sitesData returns the rows and class indices (of 3 classes) of three
// sites of d features with different ranges; class 2 has only 3 rows at
// the first site.
func sitesData(d int) ([]*mat.Dense, [][]int) {
	rng := rand.New(rand.NewPCG(3, 4))
	var xs []*mat.Dense
	var ys [][]int
	for s, rows := range []int{23, 40, 31} {
		X := mat.NewDense(rows, d, nil)
		y := make([]int, rows)
		for i := range rows {
			y[i] = i % 3
			if s == 0 && i >= 9 {
				y[i] = i % 2
			}
			for j := range d {
				X.Set(i, j, float64(s*j)+float64(y[i])+rng.NormFloat64()*float64(1+s))
			}
		}
		xs, ys = append(xs, X), append(ys, y)
	}
	return xs, ys
}

func TestSummaryScaling(t *testing.T) {
	xs, ys := sitesData(4)
	var sums []summary
	var files []*dataset.File
	for i, X := range xs {
		sums = append(sums, summary{data: summarize(X, ys[i], 3, true, false), d: 4, c: 3})
		files = append(files, &dataset.File{Name: "site", X: X})
	}
	sums = append(sums, summary{data: summarize(xs[0], nil, 3, false, true), d: 4, c: 3}) // sends nothing
	got, err := scalerOf(sums)
	if err != nil {
		t.Fatal(err)
	}
	want, err := dataset.FitScaler(dataset.ScaleMinMax, files...)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 4 {
		if got.Offset[j] != want.Offset[j] || got.Scale[j] != want.Scale[j] {
			t.Errorf("feature %d: offset %g, scale %g; pooled rows give %g, %g", j, got.Offset[j], got.Scale[j], want.Offset[j], want.Scale[j])
		}
	}
	if _, err := scalerOf(sums[3:]); err == nil {
		t.Error("a scaling without ranges")
	}
}

func TestSummarizeClasses(t *testing.T) {
	xs, ys := sitesData(3)
	for s, X := range xs {
		sm := summary{data: summarize(X, ys[s], 3, false, true), d: 3, c: 3}
		if err := sm.check(); err != nil {
			t.Fatal(err)
		}
		if sm.sent(0) || sm.sent(1) {
			t.Error("ranges sent without being asked")
		}
		for y := range 3 {
			var rows []int
			for i, k := range ys[s] {
				if k == y {
					rows = append(rows, i)
				}
			}
			if sent := sm.sent(2 + 2*y); sent != (len(rows) >= MinSummaryRows) {
				t.Errorf("site %d, class %d of %d rows: sent %v", s, y, len(rows), sent)
				continue
			}
			if len(rows) < MinSummaryRows {
				continue
			}
			for j := range 3 {
				col := make([]float64, len(rows))
				for i, r := range rows {
					col[i] = X.At(r, j)
				}
				m, sd := stat.PopMeanStdDev(col, nil)
				if math.Abs(sm.point(2 + 2*y)[j]-m) > 1e-12 || math.Abs(sm.point(3 + 2*y)[j]-sd) > 1e-12 {
					t.Errorf("site %d, class %d, feature %d: %g ± %g, want %g ± %g", s, y, j, sm.point(2 + 2*y)[j], sm.point(3 + 2*y)[j], m, sd)
				}
			}
		}
	}
}

func TestDrawAtoms(t *testing.T) {
	xs, ys := sitesData(3)
	var srcs []*summary
	for s, X := range xs {
		srcs = append(srcs, &summary{data: summarize(X, ys[s], 3, true, true), d: 3, c: 3})
	}
	srcs[1] = nil // a source that sent nothing: its atom draws on the first one's summary
	sc := &dataset.Scaler{Kind: dataset.ScaleMinMax, Offset: []float64{1, 2, 3}, Scale: []float64{0.5, 2, 1}}
	sh := Shape{K: 3, N: 3000, D: 3, C: 3}
	v, _ := sh.Values()
	data := make([]float64, v)
	if missing := drawAtoms(data, sh, srcs, sc, rand.New(rand.NewPCG(1, 2))); missing != nil {
		t.Fatalf("classes %v missing", missing)
	}
	atoms, _ := Unpack(data, sh)
	for k, a := range atoms {
		src := []int{0, 0, 2}[k]
		for y := range 3 {
			from := srcs[src]
			if !from.sent(2 + 2*y) {
				from = srcs[2] // class 2 has 3 rows at site 0: drawn from the next source that has it
			}
			for j := range 3 {
				var col []float64
				for i := y; i < sh.N; i += 3 {
					col = append(col, a.X.At(i, j))
					if mat.Row(nil, i, a.Logits)[y] != math.Log(18) {
						t.Fatalf("atom %d, point %d: logits %v", k, i, mat.Row(nil, i, a.Logits))
					}
				}
				// The draws of N(μ, σ²) clipped to [lo, hi]: their mean
				// is lo·Φ(a) + hi·(1 − Φ(b)) + μ·(Φ(b) − Φ(a)) + σ·(φ(a) − φ(b)),
				// a = (lo − μ)/σ, b = (hi − μ)/σ.
				mu, sd := (from.point(2 + 2*y)[j]-sc.Offset[j])*sc.Scale[j], from.point(3 + 2*y)[j]*sc.Scale[j]
				lo, hi := (from.point(0)[j]-sc.Offset[j])*sc.Scale[j], (from.point(1)[j]-sc.Offset[j])*sc.Scale[j]
				n := distuv.UnitNormal
				a, b := (lo-mu)/sd, (hi-mu)/sd
				wm := lo*n.CDF(a) + hi*(1-n.CDF(b)) + mu*(n.CDF(b)-n.CDF(a)) + sd*(n.Prob(a)-n.Prob(b))
				if m := stat.Mean(col, nil); math.Abs(m-wm) > 4*sd/math.Sqrt(1000) {
					t.Errorf("atom %d, class %d, feature %d: mean %.3f, want %.3f (%.3f ± %.3f clipped to [%.3f, %.3f])", k, y, j, m, wm, mu, sd, lo, hi)
				}
				if lc, hc := slices.Min(col), slices.Max(col); lc < lo || hc > hi || lc == hc {
					t.Errorf("atom %d, class %d, feature %d: draws in [%g, %g], the range is [%g, %g]", k, y, j, lc, hc, lo, hi)
				}
			}
		}
	}
}

func TestSummaryCheck(t *testing.T) {
	xs, ys := sitesData(2)
	good := func() summary { return summary{data: summarize(xs[1], ys[1], 3, true, true), d: 2, c: 3} }
	mark := func(s summary, i int) *float64 { return &s.data[(2+2*s.c)*s.d+i] }
	for _, c := range []struct {
		name, want string
		edit       func(s summary)
	}{
		{"mark", "marked 0.5", func(s summary) { *mark(s, 3) = 0.5 }},
		{"half", "one sent without the other", func(s summary) { *mark(s, 3) = 0 }},
		{"unsent values", "not sent but hold values", func(s summary) { *mark(s, 4), *mark(s, 5) = 0, 0 }},
		{"range", "ranges from", func(s summary) { s.point(0)[1] = s.point(1)[1] + 1 }},
		{"deviation", "deviation -1", func(s summary) { s.point(5)[0] = -1 }},
	} {
		s := good()
		c.edit(s)
		if err := s.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	if err := good().check(); err != nil {
		t.Error(err)
	}
}
