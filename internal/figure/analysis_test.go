package figure

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

func TestTernaryGrid(t *testing.T) {
	for _, m := range []int{1, 2, 3, 7, 20} {
		g := TernaryGrid(m)
		if want := (m + 1) * (m + 2) / 2; len(g) != want {
			t.Fatalf("m=%d: %d points, want %d", m, len(g), want)
		}
		seen := map[[3]float64]bool{}
		for k, a := range g {
			s := 0.0
			for _, v := range a {
				if v < 0 {
					t.Errorf("m=%d: point %d = %v has a negative coordinate", m, k, a)
				}
				s += v
			}
			if math.Abs(s-1) > 1e-12 {
				t.Errorf("m=%d: point %d = %v sums to %v", m, k, a, s)
			}
			if seen[a] {
				t.Errorf("m=%d: point %d = %v repeated", m, k, a)
			}
			seen[a] = true
		}
		// The documented index of (i, j).
		for i := 0; i <= m; i++ {
			for j := 0; i+j <= m; j++ {
				a := g[ternaryIndex(m, i, j)]
				if a[0] != float64(i)/float64(m) || a[1] != float64(j)/float64(m) {
					t.Errorf("m=%d: point (%d,%d) at index %d is %v", m, i, j, ternaryIndex(m, i, j), a)
				}
			}
		}
	}
	if g := TernaryGrid(0); g != nil {
		t.Errorf("TernaryGrid(0) = %v, want nil", g)
	}
}

func TestTernaryXY(t *testing.T) {
	h := math.Sqrt(3) / 2
	for _, c := range []struct {
		a    [3]float64
		x, y float64
	}{
		{[3]float64{1, 0, 0}, 0, 0},
		{[3]float64{0, 1, 0}, 1, 0},
		{[3]float64{0, 0, 1}, 0.5, h},
		{[3]float64{1. / 3, 1. / 3, 1. / 3}, 0.5, math.Sqrt(3) / 6},
		{[3]float64{0.5, 0.5, 0}, 0.5, 0},
	} {
		x, y := TernaryXY(c.a)
		if math.Abs(x-c.x) > 1e-12 || math.Abs(y-c.y) > 1e-12 {
			t.Errorf("TernaryXY(%v) = (%v, %v), want (%v, %v)", c.a, x, y, c.x, c.y)
		}
	}
}

// ternaryValues returns the squared distance of each grid point to a.
func ternaryValues(m int, a [3]float64) []float64 {
	g := TernaryGrid(m)
	v := make([]float64, len(g))
	for k, p := range g {
		for i := range p {
			v[k] += (p[i] - a[i]) * (p[i] - a[i])
		}
	}
	return v
}

// samplePlots returns one plot of each kind, named.
func samplePlots(t testing.TB) map[string]*plot.Plot {
	t.Helper()
	ps := map[string]*plot.Plot{}
	add := func(name string, p *plot.Plot, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ps[name] = p
	}
	mark := [3]float64{0.2, 0.5, 0.3}
	vals := ternaryValues(20, mark)
	vals[5] = math.NaN()
	p, err := Ternary(TernaryPlot{
		Title: "W₂ of the barycenter to the target", Corners: [3]string{"atom 1", "atom 2", "atom 3"},
		Steps: 20, Values: vals, ValueLabel: "W₂ to target", Reverse: true,
		Mark: &mark, MarkLabel: "learned α_T",
	})
	add("ternary", p, err)
	acc := ternaryValues(10, mark)
	for i := range acc {
		acc[i] = 100 - 60*acc[i]
	}
	p, err = Ternary(TernaryPlot{Title: "accuracy", Steps: 10, Values: acc, ValueLabel: "accuracy (%)"})
	add("ternary_acc", p, err)

	x := make([]float64, 50)
	var mean, lo, hi [][]float64
	for s := 0; s < 3; s++ {
		var m, l, h []float64
		for i := range x {
			x[i] = float64(i + 1)
			v := float64(s+1) * math.Exp(-float64(i)/10)
			m, l, h = append(m, v), append(l, v-0.3), append(h, v+0.3)
		}
		mean, lo, hi = append(mean, m), append(lo, l), append(hi, h)
	}
	p, err = Band("update magnitudes", "iteration", "Δ", []string{"Δ_X", "Δ_Y", "Δ_A"}, x, mean, lo, hi, true)
	add("band_log", p, err)
	p, err = Band("loss over 5 seeds", "iteration", "loss", []string{"DaDiL-E", "DaDiL-R"}, x, mean[:2], lo[:2], hi[:2], false)
	add("band", p, err)

	p, err = ScatterXY("reconstruction loss vs accuracy (ρ = −0.8)", "reconstruction loss", "accuracy (%)",
		[]string{"DaDiL-R", "DaDiL-E"},
		[][]float64{{0.1, 0.2, 0.3, 0.4}, {0.15, 0.25, 0.35}}, [][]float64{{90, 85, 80, 70}, {88, 82, 75}})
	add("scatter", p, err)

	var samples [][]float64
	for k := 0; k < 5; k++ {
		var s []float64
		for i := 0; i < 40; i++ {
			s = append(s, 70+float64(k)+10*math.Sin(float64(i*(k+3))))
		}
		samples = append(samples, s)
	}
	p, err = Boxes("accuracy of random α", "K", "accuracy (%)", []string{"2", "3", "4", "5", "6"}, samples,
		[]float64{85, 86, math.NaN(), 88, 84}, "learned α_T")
	add("boxes", p, err)
	return ps
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	for name, p := range samplePlots(t) {
		for _, ext := range []string{"png", "svg"} {
			path := filepath.Join(dir, name+"."+ext)
			if err := Save(path, p, 5*vg.Inch, 4*vg.Inch); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case len(b) == 0:
				t.Errorf("%s is empty", path)
			case ext == "png" && !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
				t.Errorf("%s is not a PNG", path)
			case ext == "svg" && !bytes.Contains(b, []byte("<svg")):
				t.Errorf("%s is not an SVG", path)
			}
		}
	}
}

// TestSamples writes one sample of each figure to $FIGSAMPLES, if set, for
// visual inspection.
func TestSamples(t *testing.T) {
	dir := os.Getenv("FIGSAMPLES")
	if dir == "" {
		t.Skip("FIGSAMPLES not set")
	}
	ps := samplePlots(t)
	for name, p := range ps {
		if err := Save(filepath.Join(dir, name+".png"), p, 5*vg.Inch, 4*vg.Inch); err != nil {
			t.Fatal(err)
		}
	}
	grid := [][]*plot.Plot{{ps["ternary"], ps["ternary_acc"]}, {ps["boxes"], ps["scatter"]}}
	if err := SaveGrid(filepath.Join(dir, "grid.png"), grid, 4*vg.Inch, 4*vg.Inch); err != nil {
		t.Fatal(err)
	}
	row := [][]*plot.Plot{{ps["ternary"], ps["ternary_acc"], ps["ternary"]}}
	if err := SaveGrid(filepath.Join(dir, "row.png"), row, 3*vg.Inch, 3*vg.Inch); err != nil {
		t.Fatal(err)
	}
}

func TestAnalysisErrors(t *testing.T) {
	nan := math.NaN()
	good := make([]float64, 6) // Steps = 2
	x := []float64{1, 2, 3}
	s3 := [][]float64{{1, 2, 3}}
	for _, c := range []struct {
		name string
		f    func() (*plot.Plot, error)
	}{
		{"ternary steps 0", func() (*plot.Plot, error) { return Ternary(TernaryPlot{Steps: 0, Values: []float64{1}}) }},
		{"ternary values length", func() (*plot.Plot, error) { return Ternary(TernaryPlot{Steps: 2, Values: good[:5]}) }},
		{"ternary all NaN", func() (*plot.Plot, error) {
			return Ternary(TernaryPlot{Steps: 1, Values: []float64{nan, nan, nan}})
		}},
		{"ternary Inf", func() (*plot.Plot, error) {
			return Ternary(TernaryPlot{Steps: 1, Values: []float64{1, math.Inf(1), 0}})
		}},
		{"ternary mark NaN", func() (*plot.Plot, error) {
			return Ternary(TernaryPlot{Steps: 2, Values: good, Mark: &[3]float64{nan, 0.5, 0.5}})
		}},
		{"ternary mark off simplex", func() (*plot.Plot, error) {
			return Ternary(TernaryPlot{Steps: 2, Values: good, Mark: &[3]float64{0.5, 0.5, 0.5}})
		}},
		{"band no series", func() (*plot.Plot, error) { return Band("", "", "", nil, x, nil, nil, nil, false) }},
		{"band empty x", func() (*plot.Plot, error) { return Band("", "", "", []string{"a"}, nil, s3, nil, nil, false) }},
		{"band mean length", func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, x, [][]float64{{1, 2}}, nil, nil, false)
		}},
		{"band names", func() (*plot.Plot, error) { return Band("", "", "", []string{"a", "b"}, x, s3, nil, nil, false) }},
		{"band lo only", func() (*plot.Plot, error) { return Band("", "", "", []string{"a"}, x, s3, s3, nil, false) }},
		{"band hi length", func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, x, s3, s3, [][]float64{{1, 2, 3, 4}}, false)
		}},
		{"band NaN", func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, x, [][]float64{{1, nan, 3}}, nil, nil, false)
		}},
		{"band log non-positive", func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, x, [][]float64{{0, -1, 0}}, nil, nil, true)
		}},
		{"scatter no series", func() (*plot.Plot, error) { return ScatterXY("", "", "", nil, nil, nil) }},
		{"scatter series count", func() (*plot.Plot, error) { return ScatterXY("", "", "", []string{"a"}, s3, nil) }},
		{"scatter lengths", func() (*plot.Plot, error) {
			return ScatterXY("", "", "", []string{"a"}, s3, [][]float64{{1, 2}})
		}},
		{"scatter empty", func() (*plot.Plot, error) {
			return ScatterXY("", "", "", []string{"a"}, [][]float64{{}}, [][]float64{{}})
		}},
		{"scatter NaN", func() (*plot.Plot, error) {
			return ScatterXY("", "", "", []string{"a"}, s3, [][]float64{{1, nan, 3}})
		}},
		{"boxes no groups", func() (*plot.Plot, error) { return Boxes("", "", "", nil, nil, nil, "") }},
		{"boxes samples count", func() (*plot.Plot, error) { return Boxes("", "", "", []string{"a", "b"}, s3, nil, "") }},
		{"boxes empty group", func() (*plot.Plot, error) {
			return Boxes("", "", "", []string{"a"}, [][]float64{{}}, nil, "")
		}},
		{"boxes marks count", func() (*plot.Plot, error) {
			return Boxes("", "", "", []string{"a"}, s3, []float64{1, 2}, "")
		}},
		{"boxes NaN sample", func() (*plot.Plot, error) {
			return Boxes("", "", "", []string{"a"}, [][]float64{{1, nan}}, nil, "")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.f()
			if err == nil || !strings.Contains(err.Error(), "figure:") {
				t.Errorf("got (%v, %v), want an error containing \"figure:\"", p, err)
			}
		})
	}
}

// TestDegenerate checks that edge cases draw without error or panic.
func TestDegenerate(t *testing.T) {
	dir := t.TempDir()
	nan := math.NaN()
	for _, c := range []struct {
		name string
		f    func() (*plot.Plot, error)
	}{
		{"ternary constant", func() (*plot.Plot, error) { return Ternary(TernaryPlot{Steps: 1, Values: []float64{2, 2, 2}}) }},
		{"ternary zero", func() (*plot.Plot, error) { return Ternary(TernaryPlot{Steps: 1, Values: []float64{0, nan, 0}}) }},
		{"ternary corner mark", func() (*plot.Plot, error) {
			return Ternary(TernaryPlot{Steps: 1, Values: []float64{0, 1, 2}, Mark: &[3]float64{0, 0, 1}, MarkLabel: "α"})
		}},
		{"band one point", func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, []float64{1}, [][]float64{{1}}, nil, nil, false)
		}},
		{"band log constant", func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, []float64{1, 2}, [][]float64{{0.5, 0.5}}, nil, nil, true)
		}},
		{"band log power of ten", func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, []float64{1, 2}, [][]float64{{1, 1}}, nil, nil, true)
		}},
		{"band log clamp", func() (*plot.Plot, error) {
			return Band("", "", "", []string{"a"}, []float64{1, 2}, [][]float64{{0.5, 0}},
				[][]float64{{-1, -2}}, [][]float64{{1, 0.1}}, true)
		}},
		{"boxes one sample all marks NaN", func() (*plot.Plot, error) {
			return Boxes("", "", "", []string{"a"}, [][]float64{{1}}, []float64{nan}, "m")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.f()
			if err != nil {
				t.Fatal(err)
			}
			if err := Save(filepath.Join(dir, "f.png"), p, 3*vg.Inch, 3*vg.Inch); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func ExampleTernary() {
	const m = 10
	grid := TernaryGrid(m)
	values := make([]float64, len(grid))
	for k, a := range grid {
		values[k] = a[0]*a[0] + a[1]*a[1] + a[2]*a[2] // lowest at the centroid
	}
	p, err := Ternary(TernaryPlot{
		Title:      "example",
		Corners:    [3]string{"atom 1", "atom 2", "atom 3"},
		Steps:      m,
		Values:     values,
		ValueLabel: "‖α‖²",
		Mark:       &[3]float64{1. / 3, 1. / 3, 1. / 3},
		MarkLabel:  "centroid",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "figure-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := Save(filepath.Join(dir, "ternary.svg"), p, 4*vg.Inch, 4*vg.Inch); err != nil {
		fmt.Println(err)
		return
	}
	x, y := TernaryXY([3]float64{1. / 3, 1. / 3, 1. / 3})
	fmt.Printf("%d grid points, centroid at (%.4f, %.4f)\n", len(grid), x, y)
	// Output: 66 grid points, centroid at (0.5000, 0.2887)
}
