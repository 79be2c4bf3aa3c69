package selection

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/synth"
)

func otda() adapt.Method { return adapt.NewOTDAEMD() }

// singleNames returns the scorers of Names that score one fit alone (not
// PooledScorers).
func singleNames() []string {
	var out []string
	for _, name := range Names() {
		if s, _ := New(name, 0); !Pooled([]Scorer{s}) {
			out = append(out, name)
		}
	}
	return out
}
func bad() adapt.Method   { return &fake{name: "noise", fill: noise} }
func fixed() adapt.Method { return &fake{name: "constant", fill: constant} }

// scoreWith fits a method of build on p and returns its scores under s.
func scoreWith(t *testing.T, p *dataset.Problem, s Scorer, build func() adapt.Method) []float64 {
	t.Helper()
	c, _, err := fitted(p, build)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Score(p, c)
	if err != nil {
		t.Fatalf("%s: %s: %v", s.Name(), c.Method.Name(), err)
	}
	return v
}

// TestScorersRankGoodAboveBad checks every scorer on the synthetic
// problem, where OTDA adapts well: its scores are finite, the same at
// every run, and rank OTDA above a method whose probabilities are noise.
func TestScorersRankGoodAboveBad(t *testing.T) {
	p := synth.Generate(synth.Default(), 1)
	for _, name := range singleNames() {
		s, err := New(name, 7)
		if err != nil {
			t.Fatal(err)
		}
		good := scoreWith(t, p, s, otda)
		again := scoreWith(t, p, s, otda)
		noisy := scoreWith(t, p, s, bad)
		t.Logf("%s: otda %.4f, noise %.4f", name, good[0], noisy[0])
		if len(good) != 1 || len(noisy) != 1 {
			t.Fatalf("%s: %d and %d scores for one predictor", name, len(good), len(noisy))
		}
		if math.IsNaN(good[0]) || math.IsInf(good[0], 0) || math.IsNaN(noisy[0]) || math.IsInf(noisy[0], 0) {
			t.Errorf("%s: scores %v and %v", name, good, noisy)
		}
		if good[0] != again[0] {
			t.Errorf("%s: %v then %v for the same seed", name, good, again)
		}
		if !(good[0] > noisy[0]) {
			t.Errorf("%s: OTDA %.4f is not above noise %.4f", name, good[0], noisy[0])
		}
	}
}

// TestSourceOnlyBelowOTDA checks the scorer that sees a shift of the
// classes: on the synthetic problem source-only gives most target rows
// the wrong class, with boundaries in the gaps between the target's
// clusters. Held-out sources ranks OTDA above it on every draw. The
// target-only scorers cannot, as they do not know which class is which,
// nor can IWV and DEV, since the classes move between domains (p(y|x) is
// not shared, against their covariate-shift assumption); circular
// validation goes either way. The test logs every scorer's two values
// (go test -run SourceOnly -v).
func TestSourceOnlyBelowOTDA(t *testing.T) {
	src := func() adapt.Method { return &adapt.SourceOnly{} }
	for seed := uint64(1); seed <= 4; seed++ {
		p := synth.Generate(synth.Default(), seed)
		for _, name := range singleNames() {
			s, _ := New(name, seed)
			good, poor := scoreWith(t, p, s, otda), scoreWith(t, p, s, src)
			t.Logf("draw %d, %s: otda %.4f, source-only %.4f", seed, name, good[0], poor[0])
			if name == "held-out" && !(good[0] > poor[0]) {
				t.Errorf("draw %d, %s: OTDA %.4f is not above source-only %.4f", seed, name, good[0], poor[0])
			}
		}
	}
}

// TestConstantPredictor checks what the target-only scorers and Circular
// make of a method that puts the whole target in one class with
// certainty: entropy and SND give it their best scores by design, MixVal
// half (no boundary), and Circular the share of that class in the sources
// without a fit.
func TestConstantPredictor(t *testing.T) {
	p := synth.Generate(synth.Default(), 3)
	n := p.Target.Rows()
	c, fits, err := fitted(p, fixed)
	if err != nil {
		t.Fatal(err)
	}
	_, ys := p.PoolSources()
	var zeros float64
	for _, y := range ys {
		if y == 0 {
			zeros++
		}
	}
	for _, tc := range []struct {
		s    Scorer
		want float64
	}{
		{Entropy{}, 0},
		{&SND{}, math.Log(float64(n - 1))},
		{&MixVal{Seed: 1}, 0.5},
		{Circular{}, zeros / float64(len(ys))},
	} {
		got, err := tc.s.Score(p, c)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got[0]-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.s.Name(), got[0], tc.want)
		}
	}
	if *fits != 0 {
		t.Errorf("%d fits for a constant predictor", *fits)
	}
}

// TestEqualWeights checks IWV's and DEV's defining property: when the
// target is the sources' kept rows themselves, the domain classifier
// cannot tell them apart, every importance weight is 1, IWV is the plain
// held-out accuracy and DEV minus the plain held-out cross-entropy.
func TestEqualWeights(t *testing.T) {
	p := synth.Generate(synth.Default(), 4)
	const folds, seed = 3, 11
	kept, held, err := SplitSources(p.Sources, folds, seed)
	if err != nil {
		t.Fatal(err)
	}
	Xk, _ := dataset.Pool(kept)
	q := &dataset.Problem{Classes: p.Classes, Sources: p.Sources, Target: dataset.Domain{X: Xk}}
	c, fits, err := fitted(q, otda)
	if err != nil {
		t.Fatal(err)
	}
	iwv, err := (&IWV{Folds: folds, Seed: seed}).Score(q, c)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := (&DEV{Folds: folds, Seed: seed}).Score(q, c)
	if err != nil {
		t.Fatal(err)
	}
	if *fits != 1 {
		t.Errorf("IWV and DEV made %d fits, want one shared", *fits)
	}
	sp := c.memo.splits[splitKey{folds, seed}]
	for i, w := range sp.weights {
		if w != 1 {
			t.Fatalf("weight %d is %v", i, w)
		}
	}
	// The same refit, by hand.
	m := otda()
	if err := m.Fit(&dataset.Problem{Classes: q.Classes, Sources: kept, Target: q.Target}); err != nil {
		t.Fatal(err)
	}
	pred, _ := m.Predict(held.X)
	acc, _ := classify.Accuracy(pred, held.Y)
	P, _ := m.(adapt.Prober).Proba(held.X)
	var ce float64
	for i, y := range held.Y {
		ce -= math.Log(max(P.At(i, y), lossFloor))
	}
	ce /= float64(len(held.Y))
	if iwv[0] != acc {
		t.Errorf("IWV %v, plain accuracy %v", iwv[0], acc)
	}
	if math.Abs(dev[0]+ce) > 1e-12 {
		t.Errorf("DEV %v, plain cross-entropy %v", dev[0], ce)
	}
}

// TestDEVConstantLoss checks the control variate: whatever the weights, a
// constant loss ℓ has DEV risk ℓ exactly (up to rounding), where the plain
// weighted mean gives ℓ·mean(w).
func TestDEVConstantLoss(t *testing.T) {
	w := []float64{0.1, 3, 0.5, 0.02, 1.7, 0.9}
	loss := slices.Repeat([]float64{2.5}, len(w))
	if r := devRisk(loss, w); math.Abs(r-2.5) > 1e-12 {
		t.Errorf("risk %v, want 2.5", r)
	}
	// Equal weights: the plain mean loss.
	if r := devRisk([]float64{1, 2, 6}, []float64{1, 1, 1}); r != 3 {
		t.Errorf("risk %v, want 3", r)
	}
}

// TestImportanceWeights checks the density ratio on a shift along one
// axis (it grows towards the target) and the truncation at √n times the
// mean.
func TestImportanceWeights(t *testing.T) {
	p := synth.Generate(synth.Default(), 5)
	Xs, _ := p.PoolSources()
	w, err := ImportanceWeights(Xs, p.Target.X, Xs)
	if err != nil {
		t.Fatal(err)
	}
	// The target sits 3.2 above the sources' lowest: weights rise with y.
	var above, below []float64
	for i, v := range w {
		if Xs.At(i, 1) > 4 {
			above = append(above, v)
		} else {
			below = append(below, v)
		}
	}
	if !(mean(above) > 2*mean(below)) {
		t.Errorf("mean weight %.3f above y = 4, %.3f below", mean(above), mean(below))
	}
	// Truncation: one huge log weight is brought down to √n w̄.
	logw := []float64{0, 0, 0, 800}
	tw := truncate(logw)
	if tw[0] != 1 || tw[3] > math.Exp(maxLogWeight) || math.IsInf(tw[3], 0) {
		t.Errorf("truncated %v", tw)
	}
	logw = []float64{0, 0, 0, math.Log(100)}
	tw = truncate(logw)
	if want := math.Sqrt(4) * 103.0 / 4; math.Abs(tw[3]-want) > 1e-9 {
		t.Errorf("truncated to %v, want %v", tw[3], want)
	}
}

// TestSND checks SND's defining property on probabilities given by hand:
// tight clusters score above the same number of rows scattered, and n
// identical rows score log(n−1).
func TestSND(t *testing.T) {
	tight := mat.NewDense(6, 2, []float64{1, 0, 1, 0, 0.99, 0.01, 0, 1, 0, 1, 0.01, 0.99})
	loose := mat.NewDense(6, 2, []float64{1, 0, 0.8, 0.2, 0.6, 0.4, 0.4, 0.6, 0.2, 0.8, 0, 1})
	a, _ := snd(tight, DefaultTemperature)
	b, _ := snd(loose, DefaultTemperature)
	if !(a > b) {
		t.Errorf("SND tight %v, loose %v", a, b)
	}
	same := mat.NewDense(5, 3, slices.Repeat([]float64{0.2, 0.3, 0.5}, 5))
	if v, _ := snd(same, 0.1); math.Abs(v-math.Log(4)) > 1e-12 {
		t.Errorf("SND of identical rows %v, want log 4", v)
	}
	// Blocks change nothing: a problem larger than a block.
	big := mat.NewDense(sndBlock+7, 2, nil)
	for i := range sndBlock + 7 {
		big.Set(i, i%2, 1)
	}
	want := math.Log(float64((sndBlock+7)/2 - 1))
	if v, _ := snd(big, DefaultTemperature); math.Abs(v-want) > 0.01 {
		t.Errorf("SND of two clusters %v, want about %v", v, want)
	}
	if _, err := snd(mat.NewDense(1, 2, []float64{1, 0}), 1); err == nil {
		t.Error("SND of one row: no error")
	}
}

// TestHeldOutShared checks that HeldOutSources scores as
// adapt.ValidatePredictors does and that Candidate.HeldOut reuses its fits.
func TestHeldOutShared(t *testing.T) {
	p := synth.Generate(synth.Default(), 6)
	c, fits, err := fitted(p, otda)
	if err != nil {
		t.Fatal(err)
	}
	got, err := HeldOutSources{}.Score(p, c)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := adapt.ValidatePredictors(p, otda, nil)
	if got[0] != adapt.MeanAccuracy(want[0].HeldOut) {
		t.Errorf("held-out %v, ValidatePredictors %v", got[0], want[0].HeldOut)
	}
	if _, err := c.HeldOut(p); err != nil || *fits != len(p.Sources) {
		t.Errorf("%d fits for held-out scored twice (%v), want %d", *fits, err, len(p.Sources))
	}
	if r := (HeldOutSources{}).Refits(p, 2); r != len(p.Sources) {
		t.Errorf("Refits %d", r)
	}
	bal, err := HeldOutSources{Balanced: true}.Score(p, c)
	if err != nil || bal[0] != adapt.MeanBalanced(want[0].HeldOut) || *fits != len(p.Sources) {
		t.Errorf("held-out-balanced %v (%v) after %d fits, ValidatePredictors %v", bal, err, *fits, want[0].HeldOut)
	}
}

// TestHeldOutBalancedRareClass: on sources where one class in ten is
// rare, a method that never predicts it scores the common class's share
// (0.9) in plain held-out accuracy, close to a source-only classifier,
// but 1/2 in balanced accuracy, far below it.
func TestHeldOutBalancedRareClass(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	domain := func(shift float64) dataset.Domain {
		X := mat.NewDense(100, 2, nil)
		y := make([]int, 100)
		for i := range 100 {
			if i%10 == 9 {
				y[i] = 1
			}
			X.Set(i, 0, 3*float64(y[i])+shift+rng.NormFloat64())
			X.Set(i, 1, shift+rng.NormFloat64())
		}
		return dataset.Domain{Name: fmt.Sprint("shift ", shift), X: X, Y: y}
	}
	p := &dataset.Problem{Classes: 2, Sources: []dataset.Domain{domain(0), domain(0.2), domain(0.4)}}
	p.Target = domain(0.6)
	p.Target.Y = nil
	score := func(s Scorer, build func() adapt.Method) float64 {
		c, _, err := fitted(p, build)
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.Score(p, c)
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	never := func() adapt.Method { return &fake{name: "never", fill: constant} }
	src := func() adapt.Method { return &adapt.SourceOnly{} }
	plain, bal := HeldOutSources{}, HeldOutSources{Balanced: true}
	if v := score(plain, never); math.Abs(v-0.9) > 1e-15 {
		t.Errorf("held-out of the common class alone %v, want 0.9", v)
	}
	if v := score(bal, never); v != 0.5 {
		t.Errorf("held-out-balanced of the common class alone %v, want 0.5", v)
	}
	if v := score(bal, src); !(v > 0.8) {
		t.Errorf("held-out-balanced of source-only %v, want above 0.8", v)
	}
}

// TestPredictorsScored checks that a dictionary method's siblings are
// scored together, and that Candidate.Predictors limits them (and
// Circular's refits).
func TestPredictorsScored(t *testing.T) {
	l := synth.Default()
	l.PerClass = 30
	p := synth.Generate(l, 7)
	build := func() adapt.Method { m, _ := adapt.New("wbr-r", 1); return m }
	c, fits, err := fitted(p, build)
	if err != nil {
		t.Fatal(err)
	}
	v := Values(p, c, []Scorer{Circular{}, Entropy{}})
	if len(v) != 2 || *fits != 2 {
		t.Fatalf("%d predictors scored with %d fits, want 2 and 2", len(v), *fits)
	}
	c.Predictors, c.memo = 1, nil
	if v := Values(p, c, []Scorer{Circular{}}); len(v) != 1 || *fits != 3 {
		t.Errorf("%d predictors scored with %d fits in all, want 1 and 3", len(v), *fits)
	}
}

// TestValues checks that a failing scorer leaves its error and spares the
// others, and Best.
func TestValues(t *testing.T) {
	p := synth.Generate(synth.Default(), 8)
	q := *p
	q.Sources = p.Sources[:1] // held-out needs two sources
	c, _, err := fitted(&q, otda)
	if err != nil {
		t.Fatal(err)
	}
	v := Values(&q, c, []Scorer{HeldOutSources{}, Entropy{}})
	if len(v) != 1 || v[0][0].Score != nil || !strings.Contains(v[0][0].Error, "at least 2 source") || v[0][1].Score == nil {
		t.Errorf("values %+v", v)
	}
	if !math.IsNaN(v[0][0].Float()) || v[0][1].Float() != *v[0][1].Score {
		t.Errorf("Float %v, %v", v[0][0].Float(), v[0][1].Float())
	}
	// Without a builder, refitting scorers fail and the others do not.
	c.Build = nil
	for _, name := range singleNames() {
		s, _ := New(name, 0)
		_, err := s.Score(p, c)
		if refits := s.Refits(p, 1) > 0; refits != (err != nil) {
			t.Errorf("%s without Build: %v", name, err)
		}
	}
	for _, tc := range []struct {
		in   []float64
		want int
	}{
		{[]float64{1, 3, 3, 2}, 1},
		{[]float64{math.NaN(), -1, math.NaN()}, 1},
		{[]float64{math.NaN()}, -1},
		{nil, -1},
	} {
		if got := Best(tc.in); got != tc.want {
			t.Errorf("Best(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestNew(t *testing.T) {
	for _, name := range Names() {
		s, err := New(name, 1)
		if err != nil || s.Name() != name {
			t.Errorf("New(%q): %v, %v", name, s, err)
		}
	}
	if _, err := New("oracle", 1); err == nil || !strings.HasPrefix(err.Error(), "selection: ") {
		t.Errorf("New(oracle): %v", err)
	}
	p := synth.Generate(synth.Default(), 9)
	c, _, _ := fitted(p, otda)
	for _, s := range []Scorer{&SND{Temperature: -1}, &MixVal{Ratio: 0.4}, &IWV{Folds: 1}, &DEV{Folds: -2}} {
		if _, err := s.Score(p, c); err == nil {
			t.Errorf("%s %+v: no error", s.Name(), s)
		}
	}
}
