package adapt

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/ot"
	"github.com/dadil/dadil/synth"
)

// jwTargetShiftProblem returns three balanced sources and a target whose
// class proportions are props: the classes are overlapping blobs on a
// circle (radius 3, spread 1.3), the domains differ by small shifts and
// rotations (a mild covariate shift on top of the target shift), and the
// target is sub-sampled from a balanced draw, keeping the first
// props[c]·perClass rows of class c.
func jwTargetShiftProblem(seed uint64, props []float64, perClass int) ([]dataset.Domain, *mat.Dense, []int) {
	l := synth.Layout{
		Classes:     len(props),
		Radius:      3,
		Spread:      1.3,
		Shifts:      [][2]float64{{0, 0}, {0.4, -0.2}, {-0.3, 0.3}},
		Angles:      []float64{0, 8, -8},
		TargetShift: [2]float64{0.2, 0.3},
		TargetAngle: 4,
		PerClass:    perClass,
	}
	p := synth.Generate(l, seed)
	var src []dataset.Domain
	for _, s := range p.Sources {
		src = append(src, dataset.Domain{Name: s.Name, X: s.X, Y: s.Y})
	}
	_, d := p.Target.X.Dims()
	var rows []float64
	var y []int
	for c, q := range props {
		keep := int(math.Round(q * float64(perClass)))
		for i := 0; i < keep; i++ {
			rows = append(rows, p.Target.X.RawRowView(c*perClass+i)...)
			y = append(y, c)
		}
	}
	return src, mat.NewDense(len(y), d, rows), y
}

// jwSimplex checks that p has n non-negative entries summing to 1.
func jwSimplex(t *testing.T, name string, p []float64, n int) {
	t.Helper()
	if len(p) != n {
		t.Fatalf("%s has %d entries, want %d", name, len(p), n)
	}
	var s float64
	for _, v := range p {
		if !(v >= 0) || v > 1 {
			t.Errorf("%s = %v: entry %g outside [0, 1]", name, p, v)
		}
		s += v
	}
	if math.Abs(s-1) > 1e-9 {
		t.Errorf("%s = %v sums to %.12g", name, p, s)
	}
}

// jwCheckPredictions checks the length and range of predictions.
func jwCheckPredictions(t *testing.T, pred []int, rows, classes int) {
	t.Helper()
	if len(pred) != rows {
		t.Fatalf("%d predictions for %d rows", len(pred), rows)
	}
	for i, p := range pred {
		if p < 0 || p >= classes {
			t.Fatalf("prediction %d of row %d outside [0, %d)", p, i, classes)
		}
	}
}

// jwSourceOnlyAccuracy returns the accuracy of the source-only baseline.
func jwSourceOnlyAccuracy(t *testing.T, src []dataset.Domain, tgt *mat.Dense, truth []int, classes int) float64 {
	t.Helper()
	so := &SourceOnly{}
	if err := fit(so, src, tgt, classes); err != nil {
		t.Fatal(err)
	}
	p, err := so.Predict(tgt)
	if err != nil {
		t.Fatal(err)
	}
	return accuracy(p, truth)
}

func TestJCPOTSynthetic(t *testing.T) {
	src, tgt, truth := synthProblem(1)
	rows, _ := tgt.Dims()
	for _, m := range []*JCPOT{{}, {Reweight: true}} {
		if _, err := m.Predict(tgt); err != ErrNotFitted {
			t.Fatalf("Predict before Fit: %v, want ErrNotFitted", err)
		}
		if m.Name() != "jcpot" {
			t.Errorf("Name() = %q", m.Name())
		}
		start := time.Now()
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		pred, err := m.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		jwCheckPredictions(t, pred, rows, 3)
		jwSimplex(t, "Proportions", m.Proportions, 3)
		t.Logf("default synthetic problem, Reweight %v: jcpot %.2f%% (source-only %.2f%%), proportions %.3f (truth 1/3 each), %d iterations (converged %v), fit %v",
			m.Reweight, 100*accuracy(pred, truth), 100*jwSourceOnlyAccuracy(t, src, tgt, truth, 3), m.Proportions, m.Iterations, m.Converged, elapsed)
	}
}

func TestJCPOTTargetShift(t *testing.T) {
	props := []float64{0.6, 0.3, 0.1}
	for _, seed := range []uint64{1, 2, 3} {
		src, tgt, truth := jwTargetShiftProblem(seed, props, 150)
		for _, m := range []*JCPOT{{}, {Reweight: true}} {
			start := time.Now()
			if err := fit(m, src, tgt, 3); err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(start)
			jwSimplex(t, "Proportions", m.Proportions, 3)
			for c, p := range m.Proportions {
				if math.Abs(p-props[c]) > 0.1 {
					t.Errorf("seed %d: proportions %.3f, want %v within 0.1", seed, m.Proportions, props)
					break
				}
			}
			pred, err := m.Predict(tgt)
			if err != nil {
				t.Fatal(err)
			}
			acc := accuracy(pred, truth)
			t.Logf("seed %d, Reweight %v: proportions %.3f (truth %v), %d iterations (converged %v), jcpot %.2f%%, source-only %.2f%%, fit %v",
				seed, m.Reweight, m.Proportions, props, m.Iterations, m.Converged, 100*acc, 100*jwSourceOnlyAccuracy(t, src, tgt, truth, 3), elapsed)
			if acc < 0.85 {
				t.Errorf("seed %d, Reweight %v: accuracy %.3f", seed, m.Reweight, acc)
			}
		}
	}
}

// jwNaiveJCPOT is a direct transcription of the paper's Algorithm 1 with
// dense Gibbs kernels, for moderate ε: iters iterations of the projections
// onto C₁ and C₂, then one onto C₁. It returns h/Σh and the propagated
// class scores L_cj/b_j (target rows × classes).
func jwNaiveJCPOT(src []dataset.Domain, tgt *mat.Dense, classes int, reg float64, iters int) ([]float64, *mat.Dense) {
	m, _ := tgt.Dims()
	var gammas []*mat.Dense
	for _, s := range src {
		var C mat.Dense
		if err := ot.SqEuclidean(&C, s.X, tgt); err != nil {
			panic(err)
		}
		C.Scale(1/mat.Max(&C), &C)
		C.Apply(func(_, _ int, v float64) float64 { return math.Exp(-v / reg) }, &C)
		gammas = append(gammas, &C)
	}
	cols := func() {
		for _, g := range gammas {
			n, _ := g.Dims()
			for j := 0; j < m; j++ {
				var s float64
				for i := 0; i < n; i++ {
					s += g.At(i, j)
				}
				for i := 0; i < n; i++ {
					g.Set(i, j, g.At(i, j)/(s*float64(m)))
				}
			}
		}
	}
	h := make([]float64, classes)
	for range iters {
		cols()
		for c := range h {
			h[c] = 1
		}
		for k, g := range gammas {
			mass := make([]float64, classes)
			n, _ := g.Dims()
			for i := 0; i < n; i++ {
				mass[src[k].Y[i]] += mat.Sum(g.RowView(i))
			}
			for c := range h {
				h[c] *= math.Pow(mass[c], 1/float64(len(src)))
			}
		}
		for k, g := range gammas {
			counts := make([]float64, classes)
			for _, y := range src[k].Y {
				counts[y]++
			}
			n, _ := g.Dims()
			for i := 0; i < n; i++ {
				r := mat.Sum(g.RowView(i))
				want := h[src[k].Y[i]] / counts[src[k].Y[i]]
				for j := 0; j < m; j++ {
					g.Set(i, j, g.At(i, j)*want/r)
				}
			}
		}
	}
	cols()
	var sum float64
	for _, v := range h {
		sum += v
	}
	for c := range h {
		h[c] /= sum
	}
	L := mat.NewDense(m, classes, nil)
	for k, g := range gammas {
		n, _ := g.Dims()
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				L.Set(j, src[k].Y[i], L.At(j, src[k].Y[i])+g.At(i, j)*float64(m)/float64(len(src)))
			}
		}
	}
	return h, L
}

// TestJCPOTMatchesNaive compares the stabilised iteration with a direct
// transcription of Algorithm 1, and Predict's scores on the fitted rows
// with the paper's label propagation.
func TestJCPOTMatchesNaive(t *testing.T) {
	src, tgt, _ := jwTargetShiftProblem(4, []float64{0.5, 0.2, 0.3}, 40)
	for _, tc := range []struct {
		reg   float64
		iters int
	}{{0.05, 1}, {0.05, 7}, {0.02, 30}, {0.2, 5}} {
		m := &JCPOT{Reg: tc.reg, MaxIter: tc.iters, Tol: 1e-300}
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		if m.Iterations != tc.iters || m.Converged {
			t.Errorf("reg %g: %d iterations (converged %v), want %d", tc.reg, m.Iterations, m.Converged, tc.iters)
		}
		h, L := jwNaiveJCPOT(src, tgt, 3, tc.reg, tc.iters)
		for c := range h {
			if math.Abs(h[c]-m.Proportions[c]) > 1e-9 {
				t.Errorf("reg %g, %d iterations: proportions %v, naive %v", tc.reg, tc.iters, m.Proportions, h)
				break
			}
		}
		S, err := m.model.scores(tgt)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(S, L, 1e-9) {
			t.Errorf("reg %g, %d iterations: scores differ from the naive label propagation by %g",
				tc.reg, tc.iters, jwMaxAbsDiff(S, L))
		}
	}
}

func jwMaxAbsDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return math.Max(mat.Max(&d), -mat.Min(&d))
}

// TestJCPOTSmallReg runs ε far below the scale where the plain Gibbs
// kernel underflows: the log-domain fallbacks must keep the results
// finite and meaningful.
func TestJCPOTSmallReg(t *testing.T) {
	props := []float64{0.6, 0.3, 0.1}
	src, tgt, truth := jwTargetShiftProblem(1, props, 60)
	for _, reg := range []float64{1e-4, 1e-5, 1e-7} {
		m := &JCPOT{Reg: reg, MaxIter: 300}
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatalf("reg %g: %v", reg, err)
		}
		jwSimplex(t, "Proportions", m.Proportions, 3)
		pred, err := m.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := tgt.Dims()
		jwCheckPredictions(t, pred, r, 3)
		acc := accuracy(pred, truth)
		t.Logf("reg %g: proportions %.3f, accuracy %.3f, %d iterations", reg, m.Proportions, acc, m.Iterations)
		if acc < 0.8 {
			t.Errorf("reg %g: accuracy %.3f", reg, acc)
		}
	}
}

func TestJCPOTDeterministic(t *testing.T) {
	src, tgt, _ := synthProblem(3)
	for _, reweight := range []bool{false, true} {
		var props [][]float64
		var preds [][]int
		for range 2 {
			m := &JCPOT{Reweight: reweight}
			if err := fit(m, src, tgt, 3); err != nil {
				t.Fatal(err)
			}
			p, err := m.Predict(tgt)
			if err != nil {
				t.Fatal(err)
			}
			props = append(props, m.Proportions)
			preds = append(preds, p)
		}
		if !slices.Equal(props[0], props[1]) || !slices.Equal(preds[0], preds[1]) {
			t.Errorf("Reweight %v: two fits differ: %v vs %v", reweight, props[0], props[1])
		}
	}
}

// TestJCPOTSourceWeights checks that a source of weight zero takes no part
// and that weights are normalised.
func TestJCPOTSourceWeights(t *testing.T) {
	src, tgt, _ := jwTargetShiftProblem(2, []float64{0.6, 0.3, 0.1}, 60)
	fit := func(m *JCPOT, s []dataset.Domain) ([]float64, []int) {
		t.Helper()
		if err := fit(m, s, tgt, 3); err != nil {
			t.Fatal(err)
		}
		p, err := m.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		return m.Proportions, p
	}
	h1, p1 := fit(&JCPOT{Weights: []float64{2, 0, 2}}, src)
	h2, p2 := fit(&JCPOT{}, []dataset.Domain{src[0], src[2]})
	if !slices.Equal(h1, h2) || !slices.Equal(p1, p2) {
		t.Errorf("weights (2, 0, 2): %v, sources 1 and 3 alone: %v", h1, h2)
	}
}

// TestJCPOTMissingClass: a class absent from one source is estimated from
// the others; a class absent from every source gets proportion zero and
// is never predicted.
func TestJCPOTMissingClass(t *testing.T) {
	src, tgt, _ := jwTargetShiftProblem(3, []float64{0.5, 0.3, 0.2}, 60)
	drop := func(s dataset.Domain, c int) dataset.Domain {
		_, d := s.X.Dims()
		var rows []float64
		var y []int
		for i, l := range s.Y {
			if l != c {
				rows = append(rows, s.X.RawRowView(i)...)
				y = append(y, l)
			}
		}
		return dataset.Domain{Name: s.Name, X: mat.NewDense(len(y), d, rows), Y: y}
	}
	one := []dataset.Domain{drop(src[0], 2), src[1], src[2]}
	m := &JCPOT{}
	if err := fit(m, one, tgt, 3); err != nil {
		t.Fatal(err)
	}
	jwSimplex(t, "Proportions", m.Proportions, 3)
	if math.Abs(m.Proportions[2]-0.2) > 0.1 {
		t.Errorf("class 2 missing from source 1: proportions %.3f", m.Proportions)
	}
	all := []dataset.Domain{drop(src[0], 2), drop(src[1], 2), drop(src[2], 2)}
	if err := fit(m, all, tgt, 3); err != nil {
		t.Fatal(err)
	}
	jwSimplex(t, "Proportions", m.Proportions, 3)
	if m.Proportions[2] != 0 {
		t.Errorf("class 2 missing from every source: proportions %v", m.Proportions)
	}
	pred, err := m.Predict(tgt)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(pred, 2) {
		t.Error("class 2, absent from every source, is predicted")
	}
}

// TestJCPOTNewRows predicts rows not given to Fit: a fresh draw of the
// target distribution.
func TestJCPOTNewRows(t *testing.T) {
	props := []float64{0.6, 0.3, 0.1}
	src, tgt, _ := jwTargetShiftProblem(5, props, 100)
	_, fresh, truth := jwTargetShiftProblem(6, props, 100)
	m := &JCPOT{}
	if err := fit(m, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	pred, err := m.Predict(fresh)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := fresh.Dims()
	jwCheckPredictions(t, pred, r, 3)
	if acc := accuracy(pred, truth); acc < 0.85 {
		t.Errorf("accuracy on new rows %.3f", acc)
	}
}

func TestJCPOTErrors(t *testing.T) {
	src, tgt, _ := synthProblem(2)
	cases := []struct {
		name string
		m    *JCPOT
		src  []dataset.Domain
		tgt  *mat.Dense
		c    int
		want string
	}{
		{"no sources", &JCPOT{}, nil, tgt, 3, "no source"},
		{"classes", &JCPOT{}, src, tgt, 1, "1 classes"},
		{"empty target", &JCPOT{}, src, &mat.Dense{}, 3, "target has no rows"},
		{"nil target", &JCPOT{}, src, nil, 3, "target has no rows"},
		{"label", &JCPOT{}, []dataset.Domain{{X: src[0].X, Y: append([]int{5}, src[0].Y[1:]...)}}, tgt, 3, "label 5"},
		{"NaN feature", &JCPOT{}, src, mat.NewDense(1, 2, []float64{0, math.NaN()}), 3, "NaN"},
		{"negative reg", &JCPOT{Reg: -1}, src, tgt, 3, "Reg"},
		{"NaN reg", &JCPOT{Reg: math.NaN()}, src, tgt, 3, "Reg"},
		{"infinite reg", &JCPOT{Reg: math.Inf(1)}, src, tgt, 3, "Reg"},
		{"tiny reg", &JCPOT{Reg: 1e-310}, src, tgt, 3, "too small"},
		{"overflow", &JCPOT{}, []dataset.Domain{{X: mat.NewDense(1, 2, []float64{1e300, 0}), Y: []int{0}}}, tgt, 3, "overflow"},
		{"negative MaxIter", &JCPOT{MaxIter: -1}, src, tgt, 3, "MaxIter"},
		{"NaN tol", &JCPOT{Tol: math.NaN()}, src, tgt, 3, "Tol"},
		{"negative tol", &JCPOT{Tol: -1}, src, tgt, 3, "Tol"},
		{"weights length", &JCPOT{Weights: []float64{1}}, src, tgt, 3, "1 weights for 3 sources"},
		{"negative weight", &JCPOT{Weights: []float64{1, -1, 1}}, src, tgt, 3, "weight 1"},
		{"NaN weight", &JCPOT{Weights: []float64{1, math.NaN(), 1}}, src, tgt, 3, "weight 1"},
		{"zero weights", &JCPOT{Weights: []float64{0, 0, 0}}, src, tgt, 3, "sum to 0"},
		{"classifier", &JCPOT{Reweight: true, Classifier: &classify.SoftmaxTrainer{Settings: &classify.Settings{MaxIter: -1}}}, src, tgt, 3, "classify"},
	}
	for _, c := range cases {
		err := fit(c.m, c.src, c.tgt, c.c)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "adapt: ") {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if _, err := c.m.Predict(tgt); err != ErrNotFitted {
			t.Errorf("%s: Predict after a failed Fit: %v, want ErrNotFitted", c.name, err)
		}
	}

	for _, reweight := range []bool{false, true} {
		m := &JCPOT{Reweight: reweight}
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []struct {
			name string
			X    *mat.Dense
			want string
		}{
			{"nil", nil, ""},
			{"empty", &mat.Dense{}, ""},
			{"dims", mat.NewDense(2, 3, nil), "features"},
			{"NaN", mat.NewDense(1, 2, []float64{math.NaN(), 0}), "NaN"},
			{"Inf", mat.NewDense(1, 2, []float64{0, math.Inf(-1)}), "Inf"},
		} {
			_, err := m.Predict(bad.X)
			if err == nil || !strings.HasPrefix(err.Error(), "adapt: ") || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("Reweight %v, Predict(%s): error %v", reweight, bad.name, err)
			}
		}
	}
}

func TestJCPOTWJDOTOfficeCaltech(t *testing.T) {
	doms, _ := baselinesOfficeSURF(t)
	src := []dataset.Domain{doms["amazon"], doms["caltech"], doms["dslr"]}
	tgt, truth := doms["webcam"].X, doms["webcam"].Y
	t.Logf("source-only: %.2f%%", 100*jwSourceOnlyAccuracy(t, src, tgt, truth, 10))
	for _, m := range []Method{&JCPOT{}, &JCPOT{Reweight: true}, &WJDOT{}} {
		start := time.Now()
		if err := fit(m, src, tgt, 10); err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		pred, err := m.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		jwCheckPredictions(t, pred, len(truth), 10)
		var extra string
		switch m := m.(type) {
		case *JCPOT:
			jwSimplex(t, "Proportions", m.Proportions, 10)
			extra = "label propagation"
			if m.Reweight {
				extra = "re-weighted sources"
			}
		case *WJDOT:
			jwSimplex(t, "Alpha", m.Alpha, 3)
			extra = fmt.Sprintf("α (amazon, caltech, dslr) = %.3f", m.Alpha)
		}
		t.Logf("%s (%s): %.2f%% on webcam, fit %v", m.Name(), extra, 100*accuracy(pred, truth), elapsed.Round(time.Millisecond))
	}
}

// TestJCPOTWJDOTStridedInputs fits both methods on views whose row stride
// exceeds their number of columns, and on compact copies: the results must
// agree.
func TestJCPOTWJDOTStridedInputs(t *testing.T) {
	src, tgt, _ := synthProblem(6)
	view := func(X *mat.Dense) *mat.Dense {
		r, c := X.Dims()
		wide := mat.NewDense(r, c+3, nil)
		wide.Slice(0, r, 1, c+1).(*mat.Dense).Copy(X)
		return wide.Slice(0, r, 1, c+1).(*mat.Dense)
	}
	var vsrc []dataset.Domain
	for _, s := range src {
		vsrc = append(vsrc, dataset.Domain{Name: s.Name, X: view(s.X), Y: s.Y})
	}
	vtgt := view(tgt)
	for _, mk := range []func() Method{
		func() Method { return &JCPOT{} },
		func() Method { return &JCPOT{Reweight: true} },
		func() Method { return &WJDOT{MaxIter: 5} },
	} {
		a, b := mk(), mk()
		if err := fit(a, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		if err := fit(b, vsrc, vtgt, 3); err != nil {
			t.Fatal(err)
		}
		pa, err := a.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := b.Predict(vtgt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pa, pb) {
			t.Errorf("%s: predictions on strided views differ", a.Name())
		}
	}
}
