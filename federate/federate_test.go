package federate

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/synth"
)

// startServer starts an embedded server for the test.
func startServer(t *testing.T, token string) string {
	t.Helper()
	s, err := StartServer(ServerConfig{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// testConfig is a small federation of the synthetic problem's domains.
func testConfig(rounds int) Config {
	return Config{
		Subject: "test.fed", Rounds: rounds, LocalEpochs: 5, Fraction: 1,
		RoundTimeout: 20 * time.Second, JoinTimeout: 10 * time.Second, Seed: 5,
		Settings: dictionary.Settings{Samples: 90, Batch: 30}, Scaling: dataset.ScaleMinMax,
	}
}

func TestRunProblem(t *testing.T) {
	url := startServer(t, "secret")
	p := synth.Generate(synth.Default(), 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func() (*Result, []*SiteResult) {
		res, sites, err := RunProblem(ctx, url, "secret", p, testConfig(15), SiteConfig{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res, sites
	}
	res, sites := run()
	if len(res.Rounds) != 15 || res.Acknowledged != 4 || len(res.Targets) != 1 || res.Targets[0] != 3 {
		t.Fatalf("%d rounds, %d acknowledgements, targets %v", len(res.Rounds), res.Acknowledged, res.Targets)
	}
	for _, st := range res.Rounds {
		if len(st.Answered) != 4 || st.BytesOut <= 0 || st.BytesIn != st.BytesOut {
			t.Errorf("round %d: answered %v, %d bytes out, %d in", st.Round, st.Answered, st.BytesOut, st.BytesIn)
		}
	}
	tg := sites[3]
	t.Logf("loss %v; target α %v; accuracy R %.3f E %.3f", lossCurve(res), tg.Alpha, tg.AccuracyR, tg.AccuracyE)
	if tg.Model == nil || !(tg.AccuracyR > 0.9) {
		t.Errorf("target accuracy R %.3f", tg.AccuracyR)
	}
	for i, s := range sites {
		if len(s.Trained) != 15 || !atomsEqual(s.Atoms, res.Atoms) {
			t.Errorf("site %d trained in rounds %v; final atoms equal: %v", i, s.Trained, atomsEqual(s.Atoms, res.Atoms))
		}
	}
	var files []*dataset.File
	for _, d := range p.Domains() {
		files = append(files, &dataset.File{Name: d.Name, X: d.X})
	}
	pooled, _ := dataset.FitScaler(dataset.ScaleMinMax, files...)
	if len(res.Summarized) != 4 || res.Scaler == nil || !slices.Equal(res.Scaler.Offset, pooled.Offset) || !slices.Equal(res.Scaler.Scale, pooled.Scale) {
		t.Errorf("summaries from %v; scaling %+v, pooled rows give %+v", res.Summarized, res.Scaler, pooled)
	}
	// The first round's atoms: drawn from the sources' summaries, within
	// their scaled ranges, then moved by the rounds.
	if len(res.Start) != len(res.Atoms) || atomsEqual(res.Start, res.Atoms) {
		t.Fatalf("%d starting atoms for %d final ones, equal: %v", len(res.Start), len(res.Atoms), atomsEqual(res.Start, res.Atoms))
	}
	for k, a := range res.Start {
		if r, c := a.X.Dims(); r != res.Atoms[k].X.RawMatrix().Rows || c != res.Atoms[k].X.RawMatrix().Cols || mat.Min(a.X) < 0 || mat.Max(a.X) > 1 {
			t.Errorf("starting atom %d: %d×%d points in [%g, %g]", k, r, c, mat.Min(a.X), mat.Max(a.X))
		}
	}
	res2, _ := run()
	if !atomsEqual(res.Atoms, res2.Atoms) || !atomsEqual(res.Start, res2.Start) {
		t.Error("two runs with the same seed and the same sites gave different atoms")
	}
}

func lossCurve(r *Result) []float64 {
	var l []float64
	for _, st := range r.Rounds {
		l = append(l, st.Loss)
	}
	return l
}

func atomsEqual(a, b []dictionary.Atom) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !mat.Equal(a[k].X, b[k].X) || !mat.Equal(a[k].Logits, b[k].Logits) {
			return false
		}
	}
	return true
}

// runWithExtra runs RunProblem's sites with cfg.Sites counting extra sites
// started by the test.
func runWithExtra(t *testing.T, url string, p *dataset.Problem, cfg Config, extra int) (*Result, []*SiteResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return runProblemSites(ctx, url, tokenConns("secret"), p, cfg, SiteConfig{Workers: 1}, cfg.Sites)
}

var sprintf = fmt.Sprintf

type natsMsg = nats.Msg

// TestRunProblemTestRows holds out the target's odd rows as a test fold:
// the target trains on its even rows and scores the held-out rows, scaled
// by the federation's scaling, which pools the training rows only.
func TestRunProblemTestRows(t *testing.T) {
	url := startServer(t, "secret")
	p := synth.Generate(synth.Default(), 2)
	r, d := p.Target.X.Dims()
	h := (r + 1) / 2
	q := *p
	q.Target.X, q.Test = mat.NewDense(h, d, nil), &dataset.Domain{Name: "test", X: mat.NewDense(r-h, d, nil)}
	for i := range r {
		if i%2 == 0 {
			q.Target.X.SetRow(i/2, p.Target.X.RawRowView(i))
		} else {
			q.Test.X.SetRow(i/2, p.Target.X.RawRowView(i))
			q.Test.Y = append(q.Test.Y, p.Test.Y[i])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, sites, err := RunProblem(ctx, url, "secret", &q, testConfig(3), SiteConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	tg := sites[3]
	if len(tg.PredictR) != r-h || len(tg.PredictE) != r-h {
		t.Fatalf("%d and %d predictions, want the %d test rows", len(tg.PredictR), len(tg.PredictE), r-h)
	}
	var files []*dataset.File
	for _, dm := range q.Domains() {
		files = append(files, &dataset.File{Name: dm.Name, X: dm.X})
	}
	pooled, _ := dataset.FitScaler(dataset.ScaleMinMax, files...)
	if !slices.Equal(res.Scaler.Offset, pooled.Offset) || !slices.Equal(res.Scaler.Scale, pooled.Scale) {
		t.Errorf("scaling %+v, the training rows give %+v", res.Scaler, pooled)
	}
	var T mat.Dense
	if err := pooled.Transform(&T, q.Test.X); err != nil {
		t.Fatal(err)
	}
	idx, err := tg.Model.PredictR(&T)
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for i, k := range idx {
		if tg.Labels[k] != tg.PredictR[i] {
			t.Fatalf("row %d: predicted %d, the model on the scaled test rows gives %d", i, tg.PredictR[i], tg.Labels[k])
		}
		if tg.PredictR[i] == q.Test.Y[i] {
			ok++
		}
	}
	if acc := float64(ok) / float64(len(idx)); acc != tg.AccuracyR || !(acc > 0.8) {
		t.Errorf("accuracy R %.3f, counted %.3f on the test rows", tg.AccuracyR, acc)
	}
}

func TestTestRowsErrors(t *testing.T) {
	X := mat.NewDense(4, 2, nil)
	for _, tc := range []struct {
		name string
		cfg  SiteConfig
	}{
		{"source", SiteConfig{Name: "s", X: X, Labels: []int{0, 1, 0, 1}, TestX: X, TestLabels: []int{0, 1, 0, 1}}},
		{"features", SiteConfig{Name: "t", X: X, Target: true, TestX: mat.NewDense(3, 3, nil), TestLabels: []int{0, 1, 0}}},
		{"labels", SiteConfig{Name: "t", X: X, Target: true, TestX: mat.NewDense(3, 2, nil), TestLabels: []int{0, 1, 0, 1}}},
	} {
		if _, err := newSite(nil, tc.cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
	if _, err := newSite(nil, SiteConfig{Name: "t", X: X, Target: true, TestX: mat.NewDense(3, 2, nil), TestLabels: []int{0, 1, 0}}); err != nil {
		t.Errorf("3 test rows for a target of 4 rows: %v", err)
	}
}

// TestRunProblemSourceLogits: in one round from the same start, the
// target's update leaves the label logits as they were, so the sources'
// mean (Config.SourceLogits) moves them 4/3 as far as the mean of the four
// sites, and the features alike.
func TestRunProblemSourceLogits(t *testing.T) {
	url := startServer(t, "secret")
	p := synth.Generate(synth.Default(), 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(src bool) *Result {
		cfg := testConfig(1)
		cfg.SourceLogits, cfg.WeighMoves = src, true
		res, _, err := RunProblem(ctx, url, "secret", p, cfg, SiteConfig{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	all, src := run(false), run(true)
	if !atomsEqual(all.Start, src.Start) {
		t.Fatal("the two runs started from different atoms")
	}
	var moved float64
	for k, a := range src.Atoms {
		if !mat.EqualApprox(a.X, all.Atoms[k].X, 1e-12) {
			t.Errorf("atom %d: the features differ", k)
		}
		var dSrc, dAll mat.Dense
		dSrc.Sub(a.Logits, src.Start[k].Logits)
		dAll.Sub(all.Atoms[k].Logits, all.Start[k].Logits)
		dAll.Scale(4.0/3, &dAll)
		if !mat.EqualApprox(&dSrc, &dAll, 1e-9) {
			t.Errorf("atom %d: the logits' move is not 4/3 of the four sites' mean move", k)
		}
		moved += mat.Norm(&dSrc, 1)
	}
	if moved == 0 {
		t.Error("the logits did not move")
	}
}
