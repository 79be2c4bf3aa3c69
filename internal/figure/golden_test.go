package figure

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dadil/dadil/internal/golden"
)

// svgOf renders p as a 4×3 inch SVG.
func svgOf(t *testing.T, p *plot.Plot) string {
	t.Helper()
	c := vgsvg.New(4*vg.Inch, 3*vg.Inch)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestBandGolden pins the SVG of Band's plots (bands or not, linear or
// logarithmic, few or many points) and its errors to testdata/band.golden.
func TestBandGolden(t *testing.T) {
	var b strings.Builder
	x := []float64{1, 2, 4, 8}
	mean := [][]float64{{3, 2.5, 2, 1.8}, {4, 3, -0.5, 1}}
	lo := [][]float64{{2, 2, 1.5, 1}, {3, 2, -1, 0.5}}
	hi := [][]float64{{4, 3, 2.5, 2.5}, {5, 4, 0, 1.5}}
	long := make([]float64, 30)
	var lmean, llo, lhi []float64
	for i := range long {
		long[i] = float64(i)
		v := 1e-2 * math.Exp(-float64(i)/7)
		lmean, llo, lhi = append(lmean, v), append(llo, v/2), append(lhi, v*2)
	}
	for _, tc := range []struct {
		name         string
		names        []string
		x            []float64
		mean, lo, hi [][]float64
		logY         bool
	}{
		{"few points, bands", []string{"a", "b"}, x, mean, lo, hi, false},
		{"few points, log, clamped", []string{"a", ""}, x, mean, lo, hi, true},
		{"lines only", []string{"a", "b"}, x, mean, nil, nil, false},
		{"one decade, log", []string{"a"}, x, mean[:1], nil, nil, true},
		{"many points, log", []string{"loss"}, long, [][]float64{lmean}, [][]float64{llo}, [][]float64{lhi}, true},
		{"many points", []string{"loss", "other"}, long, [][]float64{lmean, lhi}, nil, nil, false},
		{"one point", []string{"a"}, []float64{3}, [][]float64{{2}}, [][]float64{{1}}, [][]float64{{3}}, false},
	} {
		p, err := Band(tc.name, "x", "y", tc.names, tc.x, tc.mean, tc.lo, tc.hi, tc.logY)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		fmt.Fprintf(&b, "%s:\n%s\n", tc.name, svgOf(t, p))
	}
	s3 := [][]float64{{1, 2, 3}}
	for _, f := range []func() (*plot.Plot, error){
		func() (*plot.Plot, error) { return Band("", "", "", nil, x, nil, nil, nil, false) },
		func() (*plot.Plot, error) { return Band("", "", "", []string{"a"}, nil, s3, nil, nil, false) },
		func() (*plot.Plot, error) { return Band("", "", "", []string{"a", "b"}, x[:3], s3, nil, nil, false) },
		func() (*plot.Plot, error) { return Band("", "", "", []string{"a"}, x[:3], s3, s3, nil, false) },
		func() (*plot.Plot, error) { return Band("", "", "", []string{"a"}, x[:3], s3, s3, s3[:0], false) },
		func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, []float64{1, math.NaN(), 3}, s3, nil, nil, false)
		},
		func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a\n"}, x[:3], s3, s3, [][]float64{{1, 2}}, false)
		},
		func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, x[:3], s3, [][]float64{{1, math.Inf(-1), 3}}, s3, false)
		},
		func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, x[:3], [][]float64{{0, -1, 0}}, nil, nil, true)
		},
	} {
		_, err := f()
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	golden.Check(t, "band.golden", b.String())
}

// TestTernaryGolden pins the SVG of Ternary's plots (marked or not,
// reversed, with missing values) to testdata/ternary.golden.
func TestTernaryGolden(t *testing.T) {
	var b strings.Builder
	mark := [3]float64{0.2, 0.5, 0.3}
	vals := ternaryValues(4, mark)
	vals[5] = math.NaN()
	for _, tp := range []TernaryPlot{
		{Title: "W₂", Corners: [3]string{"a", "b", "c"}, Steps: 4, Values: vals, ValueLabel: "W₂ to target",
			Reverse: true, Mark: &mark, MarkLabel: "learned α_T"},
		{Title: "plain", Steps: 3, Values: ternaryValues(3, mark)},
		{Title: "one step", Steps: 1, Values: []float64{1, 1, 1}, Mark: &[3]float64{1, 0, 0}},
	} {
		p, err := Ternary(tp)
		if err != nil {
			t.Fatalf("%s: %v", tp.Title, err)
		}
		fmt.Fprintf(&b, "%s:\n%s\n", tp.Title, svgOf(t, p))
	}
	golden.Check(t, "ternary.golden", b.String())
}

// TestTernaryEdgesGolden pins the SVG of Ternary's plots of constant values
// and of a mark off the simplex by rounding, and its errors, to
// testdata/ternary_edges.golden.
func TestTernaryEdgesGolden(t *testing.T) {
	var b strings.Builder
	nan := math.NaN()
	good := []float64{1, 2, 3, 4, 5, 6}
	for _, tp := range []TernaryPlot{
		{Title: "constant", Steps: 1, Values: []float64{2, 2, 2}},
		{Title: "zero", Steps: 1, Values: []float64{0, nan, 0}, Corners: [3]string{"", "b", ""}},
		{Title: "rounded mark", Steps: 2, Values: good, Mark: &[3]float64{-1e-10, 0.7002, 0.3}, MarkLabel: "α"},
		{Title: "steps 0", Steps: 0, Values: []float64{1}},
		{Title: "values length", Steps: 2, Values: good[:5]},
		{Title: "all NaN", Steps: 1, Values: []float64{nan, nan, nan}},
		{Title: "infinite", Steps: 1, Values: []float64{1, math.Inf(1), 0}},
		{Title: "mark NaN", Steps: 2, Values: good, Mark: &[3]float64{nan, 0.5, 0.5}},
		{Title: "mark negative", Steps: 2, Values: good, Mark: &[3]float64{-0.1, 0.6, 0.5}},
		{Title: "mark sum", Steps: 2, Values: good, Mark: &[3]float64{0.5, 0.5, 0.5}},
	} {
		p, err := Ternary(tp)
		if err != nil {
			fmt.Fprintf(&b, "%s: error: %v\n", tp.Title, err)
			continue
		}
		fmt.Fprintf(&b, "%s:\n%s\n", tp.Title, svgOf(t, p))
	}
	golden.Check(t, "ternary_edges.golden", b.String())
}
