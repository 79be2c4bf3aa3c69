package adapt

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
)

func TestWJDOTSynthetic(t *testing.T) {
	src, tgt, truth := synthProblem(1)
	rows, _ := tgt.Dims()
	so := jwSourceOnlyAccuracy(t, src, tgt, truth, 3)
	for _, m := range []*WJDOT{{}, {Loss: WJDOTCrossEntropy}, {BatchSize: 100, Seed: 7}} {
		if _, err := m.Predict(tgt); err != ErrNotFitted {
			t.Fatalf("Predict before Fit: %v, want ErrNotFitted", err)
		}
		if m.Name() != "wjdot" {
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
		jwSimplex(t, "Alpha", m.Alpha, 3)
		if len(m.Losses) != DefaultWJDOTMaxIter {
			t.Errorf("%d losses, want %d", len(m.Losses), DefaultWJDOTMaxIter)
		}
		acc := accuracy(pred, truth)
		t.Logf("default synthetic problem, loss %v, batch %d: wjdot %.2f%% (source-only %.2f%%), α %.3f, W %.4f → %.4f, fit %v",
			m.Loss, m.BatchSize, 100*acc, 100*so, m.Alpha, m.Losses[0], m.Losses[len(m.Losses)-1], elapsed)
		// The target sits next to source 3: α must favour it, and the
		// adapted classifier must beat source-only by a wide margin.
		if m.Alpha[2] < 0.5 || acc < 0.9 || acc < so+0.3 {
			t.Errorf("loss %v, batch %d: accuracy %.3f (source-only %.3f), α %.3f", m.Loss, m.BatchSize, acc, so, m.Alpha)
		}
	}
}

// TestWJDOTTargetIsSource: when the target is an unlabeled copy of source
// 2, α concentrates on source 2 and the accuracy is high.
func TestWJDOTTargetIsSource(t *testing.T) {
	for _, tc := range []struct {
		name   string
		m      *WJDOT
		seed   uint64
		minAcc float64
	}{
		{"squared", &WJDOT{}, 1, 0.95},
		{"cross-entropy", &WJDOT{Loss: WJDOTCrossEntropy}, 2, 0.95},
		{"beta 1", &WJDOT{Beta: 1}, 3, 0.95},
		{"mini-batch", &WJDOT{BatchSize: 128, Seed: 3}, 4, 0.95},
		// Overlapping classes (spread 1.3): about 5% of the rows lie
		// on the wrong side of the best boundary.
		{"overlapping sources", &WJDOT{}, 0, 0.9},
	} {
		src, _, _ := synthProblem(tc.seed)
		if tc.seed == 0 {
			src, _, _ = jwTargetShiftProblem(9, []float64{0.6, 0.3, 0.1}, 100)
		}
		tgt := mat.DenseCopyOf(src[1].X)
		if err := fit(tc.m, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		jwSimplex(t, "Alpha", tc.m.Alpha, 3)
		pred, err := tc.m.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		acc := accuracy(pred, src[1].Y)
		t.Logf("%s: α %.3f, accuracy %.2f%%", tc.name, tc.m.Alpha, 100*acc)
		if tc.m.Alpha[1] < 0.6 || acc < tc.minAcc {
			t.Errorf("%s: α %.3f, accuracy %.3f; want α_2 ≥ 0.6 and accuracy ≥ %g", tc.name, tc.m.Alpha, acc, tc.minAcc)
		}
	}
}

func TestWJDOTDeterministic(t *testing.T) {
	src, tgt, _ := synthProblem(4)
	for _, tc := range []struct {
		name string
		mk   func() *WJDOT
	}{
		{"full batch", func() *WJDOT { return &WJDOT{MaxIter: 10} }},
		{"mini-batch", func() *WJDOT { return &WJDOT{MaxIter: 10, BatchSize: 64, Seed: 11} }},
	} {
		var runs []*WJDOT
		var preds [][]int
		for range 2 {
			m := tc.mk()
			if err := fit(m, src, tgt, 3); err != nil {
				t.Fatal(err)
			}
			p, err := m.Predict(tgt)
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, m)
			preds = append(preds, p)
		}
		a, b := runs[0], runs[1]
		if !slices.Equal(a.Alpha, b.Alpha) || !slices.Equal(a.Losses, b.Losses) ||
			!mat.Equal(a.Model.W, b.Model.W) || !slices.Equal(a.Model.B, b.Model.B) || !slices.Equal(preds[0], preds[1]) {
			t.Errorf("%s: two fits differ: α %v vs %v", tc.name, a.Alpha, b.Alpha)
		}
	}
	// Another seed draws other batches.
	m1, m2 := &WJDOT{MaxIter: 5, BatchSize: 64, Seed: 1}, &WJDOT{MaxIter: 5, BatchSize: 64, Seed: 2}
	if err := fit(m1, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	if err := fit(m2, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(m1.Losses, m2.Losses) {
		t.Error("seeds 1 and 2 give the same mini-batch losses")
	}
}

// TestWJDOTGradient checks the gradient of the classifier's loss
// Σ_ij π_ij L(y_i, f(x_j)) against central finite differences, for both
// losses, with random class masses q (rows summing to 1/m).
func TestWJDOTGradient(t *testing.T) {
	const classes, d, m = 4, 3, 7
	rng := rand.New(rand.NewPCG(5, 6))
	X := mat.NewDense(m, d, nil)
	for i := 0; i < m; i++ {
		for k := 0; k < d; k++ {
			X.Set(i, k, rng.NormFloat64())
		}
	}
	Q := mat.NewDense(m, classes, nil)
	for j := 0; j < m; j++ {
		row := Q.RawRowView(j)
		var s float64
		for c := range row {
			row[c] = rng.Float64()
			s += row[c]
		}
		for c := range row {
			row[c] /= s * m
		}
	}
	for _, loss := range []WJDOTLoss{WJDOTSquared, WJDOTCrossEntropy} {
		W := mat.NewDense(classes, d, nil)
		for c := 0; c < classes; c++ {
			for k := 0; k < d; k++ {
				W.Set(c, k, rng.NormFloat64())
			}
		}
		B := []float64{0.3, -0.2, 0.1, 0.5}
		model := &classify.Softmax{W: W, B: B, Classes: classes, Dim: d}
		src := []dataset.Domain{{X: X, Y: make([]int, m)}}
		w := newWJDOTState(src, X, classes, wjdotConfig{loss: loss}, model)
		w.q = Q
		w.delta = mat.NewDense(m, classes, nil)
		// value is Σ_ij π_ij L(y_i, p_j) with mass q_jy received from
		// class y.
		value := func() float64 {
			w.proba()
			var f float64
			for j := 0; j < m; j++ {
				p := w.p.RawRowView(j)
				for y, q := range Q.RawRowView(j) {
					switch loss {
					case WJDOTSquared:
						var l float64
						for k, v := range p {
							if k == y {
								v--
							}
							l += v * v
						}
						f += q * l
					default:
						f -= q * math.Log(p[y])
					}
				}
			}
			return f
		}
		w.gradient()
		gw := mat.DenseCopyOf(w.gw)
		gb := slices.Clone(w.gb)
		const h = 1e-6
		for c := 0; c < classes; c++ {
			for k := 0; k <= d; k++ {
				p := &B[c]
				an := gb[c]
				if k < d {
					p = &W.RawMatrix().Data[c*W.RawMatrix().Stride+k]
					an = gw.At(c, k)
				}
				old := *p
				*p = old + h
				fp := value()
				*p = old - h
				fm := value()
				*p = old
				num := (fp - fm) / (2 * h)
				if math.Abs(num-an) > 1e-7*math.Max(1, math.Abs(num)) {
					t.Errorf("loss %v: ∂/∂θ(%d, %d): analytic %.10g, numeric %.10g", loss, c, k, an, num)
				}
			}
		}
	}
}

func TestWJDOTErrors(t *testing.T) {
	src, tgt, _ := synthProblem(2)
	cases := []struct {
		name string
		m    *WJDOT
		src  []dataset.Domain
		tgt  *mat.Dense
		c    int
		want string
	}{
		{"no sources", &WJDOT{}, nil, tgt, 3, "no source"},
		{"classes", &WJDOT{}, src, tgt, 0, "0 classes"},
		{"empty target", &WJDOT{}, src, &mat.Dense{}, 3, "target has no rows"},
		{"dims", &WJDOT{}, src, mat.NewDense(3, 4, nil), 3, "features"},
		{"labels", &WJDOT{}, []dataset.Domain{{X: src[0].X, Y: src[0].Y[:3]}}, tgt, 3, "3 labels"},
		{"Inf feature", &WJDOT{}, []dataset.Domain{{X: mat.NewDense(1, 2, []float64{math.Inf(1), 0}), Y: []int{0}}}, tgt, 3, "Inf"},
		{"negative beta", &WJDOT{Beta: -1}, src, tgt, 3, "Beta"},
		{"NaN beta", &WJDOT{Beta: math.NaN()}, src, tgt, 3, "Beta"},
		{"infinite step", &WJDOT{StepAlpha: math.Inf(1)}, src, tgt, 3, "StepAlpha"},
		{"negative learning rate", &WJDOT{LearningRate: -0.1}, src, tgt, 3, "LearningRate"},
		{"negative MaxIter", &WJDOT{MaxIter: -2}, src, tgt, 3, "MaxIter"},
		{"negative steps", &WJDOT{ClassifierSteps: -1}, src, tgt, 3, "ClassifierSteps"},
		{"negative batch", &WJDOT{BatchSize: -5}, src, tgt, 3, "BatchSize"},
		{"loss", &WJDOT{Loss: 7}, src, tgt, 3, "unknown loss WJDOTLoss(7)"},
		{"classifier", &WJDOT{Classifier: &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: -1}}}, src, tgt, 3, "classify"},
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

	m := &WJDOT{MaxIter: 2}
	if err := fit(m, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	for _, X := range []*mat.Dense{nil, {}, mat.NewDense(2, 5, nil), mat.NewDense(1, 2, []float64{math.NaN(), 1})} {
		if _, err := m.Predict(X); err == nil || !strings.HasPrefix(err.Error(), "adapt: ") {
			t.Errorf("Predict(bad X): error %v", err)
		}
	}
	if WJDOTSquared.String() != "squared" || WJDOTCrossEntropy.String() != "cross-entropy" {
		t.Errorf("loss names %q, %q", WJDOTSquared, WJDOTCrossEntropy)
	}
}

// TestWJDOTOneSource: with one source, α stays (1) and Fit works.
func TestWJDOTOneSource(t *testing.T) {
	src, tgt, truth := synthProblem(5)
	m := &WJDOT{MaxIter: 10}
	if err := fit(m, src[2:], tgt, 3); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Alpha, []float64{1}) {
		t.Errorf("α = %v", m.Alpha)
	}
	pred, err := m.Predict(tgt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one source (source 3): accuracy %.2f%%", 100*accuracy(pred, truth))
}
