package adapt

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/testproblem"
	"github.com/dadil/dadil/synth"
)

// TestGMMDaDiLOnSynthetic fits GMM-DaDiL on the demo problem: both of its
// predictors, with GMM-DaDiL-R's classifier trained on samples of the
// reconstruction or its MAP rule, classify the target well above chance
// (1/3), and far above the sources' classifier (source-only scores below
// 0.6 there, see TestMethodsOnSynthetic).
func TestGMMDaDiLOnSynthetic(t *testing.T) {
	src, tgt, truth := synthProblem(1)
	for _, m := range []*GMMDaDiL{
		{Settings: &gmm.DictionarySettings{Seed: 1}, Seed: 1},
		{Settings: &gmm.DictionarySettings{Seed: 1}, Seed: 1, MAP: true},
	} {
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		wantPredictorsAbove(t, m, tgt, truth, 0.85)
	}
}

// wantPredictorsAbove reports every predictor of m whose accuracy on X is
// below least.
func wantPredictorsAbove(t *testing.T, m *GMMDaDiL, X *mat.Dense, truth []int, least float64) {
	t.Helper()
	for _, pr := range Predictors(m) {
		pred, err := pr.Predict(X)
		if err != nil {
			t.Fatal(err)
		}
		a := accuracy(pred, truth)
		t.Logf("%s (MAP %v): accuracy %.3f", pr.Name, m.MAP, a)
		if a < least {
			t.Errorf("%s (MAP %v): accuracy %.3f, want at least %.2f", pr.Name, m.MAP, a, least)
		}
	}
}

// TestGMMDaDiLDeterministic checks that a fit gives the same bits, with
// GMM-DaDiL-R and GMM-DaDiL-E, for any GOMAXPROCS and number of workers,
// and that another seed gives another GMM-DaDiL-E.
func TestGMMDaDiLDeterministic(t *testing.T) {
	p := synth.Generate(synth.Default(), 2)
	var ref []*mat.Dense
	var refA *mat.Dense
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	probas := func(m *GMMDaDiL) []*mat.Dense {
		var out []*mat.Dense
		for _, pr := range Predictors(m) {
			P, err := pr.Proba(p.Target.X)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, P)
		}
		return out
	}
	for _, c := range []struct{ procs, workers int }{{1, 0}, {4, 0}, {4, 1}, {2, 3}} {
		runtime.GOMAXPROCS(c.procs)
		m := &GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: 4, Workers: c.workers}, Seed: 4}
		if err := m.Fit(p); err != nil {
			t.Fatal(err)
		}
		P := probas(m)
		if ref == nil {
			ref, refA = P, m.Dict.Alpha
			continue
		}
		for i, pr := range Predictors(m) {
			if !sameBits(ref[i], P[i]) {
				t.Errorf("GOMAXPROCS %d, workers %d: another %s", c.procs, c.workers, pr.Name)
			}
		}
		if !sameBits(refA, m.Dict.Alpha) {
			t.Errorf("GOMAXPROCS %d, workers %d: another fit", c.procs, c.workers)
		}
	}
	// The seed of the draws alone (the dictionary's kept) changes the
	// samples GMM-DaDiL-E's classifiers train on.
	m := &GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: 4}, Seed: 5}
	if err := m.Fit(p); err != nil {
		t.Fatal(err)
	}
	if P := probas(m); sameBits(ref[1], P[1]) {
		t.Error("GMM-DaDiL-E is the same for the seeds 4 and 5 of its draws")
	}
}

// TestGMMDaDiLEnsemble: GMM-DaDiL-E weighs its atoms' classifiers by α_T
// (a vertex of the simplex gives that atom's classifier, bit for bit, and
// the probabilities change with α_T); its classifiers train on the atoms
// moved onto the reconstruction by default, on the atoms as they are with
// TransportNone (another ensemble), and with MAP it is the atoms' MAP
// rules weighed by α_T.
func TestGMMDaDiLEnsemble(t *testing.T) {
	p := synth.Generate(synth.Default(), 2)
	m := &GMMDaDiL{Ensemble: true, Settings: &gmm.DictionarySettings{Seed: 3}, Seed: 3}
	if err := m.Fit(p); err != nil {
		t.Fatal(err)
	}
	K := len(m.Dict.Atoms)
	if len(m.E) != K {
		t.Fatalf("%d GMM-DaDiL-E classifiers for %d atoms", len(m.E), K)
	}
	X := p.Target.X
	def, err := m.Proba(X)
	if err != nil {
		t.Fatal(err)
	}
	N, _ := m.Dict.Alpha.Dims()
	for k := range K {
		v := *m
		d := *m.Dict
		d.Alpha = mat.DenseCopyOf(m.Dict.Alpha)
		row := d.Alpha.RawRowView(N - 1)
		clear(row)
		row[k] = 1
		v.Dict = &d
		got, err := v.Proba(X)
		if err != nil {
			t.Fatal(err)
		}
		var want mat.Dense
		if err := m.E[k].Proba(&want, X); err != nil {
			t.Fatal(err)
		}
		if !sameBits(got, &want) {
			t.Errorf("α_T = e_%d: GMM-DaDiL-E is not atom %d's classifier", k, k)
		}
		if sameBits(got, def) {
			t.Errorf("α_T = e_%d gives the probabilities of α_T = %v", k, mat.Row(nil, N-1, m.Dict.Alpha))
		}
	}
	// Every atom's softmax regression starts from GMM-DaDiL-R's: the
	// model FitFrom gives on the atom's rows, not Fit's.
	moved, err := m.Dict.AtomsOnto(m.Dict.Alpha.RawRowView(N - 1))
	if err != nil {
		t.Fatal(err)
	}
	for k, a := range moved {
		Xk, Tk, _, err := m.drawSamples(a, p.Classes, eStream+uint64(k))
		if err != nil {
			t.Fatal(err)
		}
		warm, _, err := classify.FitFrom(Xk, Tk, nil, nil, m.R.(*classify.Softmax))
		if err != nil {
			t.Fatal(err)
		}
		cold, _, err := classify.Fit(Xk, Tk, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := m.E[k].(*classify.Softmax)
		if !sameBits(got.W, warm.W) || sameBits(got.W, cold.W) {
			t.Errorf("atom %d: GMM-DaDiL-E's classifier is not the one started from GMM-DaDiL-R's", k)
		}
	}
	none := &GMMDaDiL{Ensemble: true, EnsembleTransport: dictionary.TransportNone, Settings: &gmm.DictionarySettings{Seed: 3}, Seed: 3}
	if err := none.Fit(p); err != nil {
		t.Fatal(err)
	}
	if P, err := none.Proba(X); err != nil || sameBits(P, def) {
		t.Errorf("EnsembleTransport none: the default ensemble (error %v)", err)
	}
	mp := &GMMDaDiL{Ensemble: true, MAP: true, Settings: &gmm.DictionarySettings{Seed: 3}, Seed: 3}
	if err := mp.Fit(p); err != nil {
		t.Fatal(err)
	}
	if mp.E != nil || mp.R != nil {
		t.Fatal("MAP trained classifiers")
	}
	var want mat.Dense
	if err := mp.Dict.EnsembleProba(&want, X, mp.Dict.Alpha.RawRowView(N-1)); err != nil {
		t.Fatal(err)
	}
	if P, err := mp.Proba(X); err != nil || !sameBits(P, &want) {
		t.Errorf("MAP: not the atoms' MAP ensemble (error %v)", err)
	}
}

// sameBits reports whether two matrices hold the same float64 bits.
func sameBits(a, b *mat.Dense) bool {
	ra, ca := a.Dims()
	rb, cb := b.Dims()
	if ra != rb || ca != cb {
		return false
	}
	for i := range ra {
		for j := range ca {
			if math.Float64bits(a.At(i, j)) != math.Float64bits(b.At(i, j)) {
				return false
			}
		}
	}
	return true
}

func TestGMMDaDiLErrors(t *testing.T) {
	src, tgt, _ := synthProblem(3)
	m, _ := New("gmm-dadil", 1)
	if _, err := m.Predict(tgt); !errors.Is(err, ErrNotFitted) {
		t.Errorf("Predict before Fit: %v", err)
	}
	nan := mat.DenseCopyOf(tgt)
	nan.Set(4, 1, math.NaN())
	bad := []dataset.Domain{src[0], {Name: "tiny", X: mat.NewDense(1, 2, []float64{0, 0}), Y: []int{5}}}
	for _, tc := range []struct {
		what string
		m    *GMMDaDiL
		src  []dataset.Domain
		tgt  *mat.Dense
		want string
	}{
		{"NaN target", &GMMDaDiL{}, src, nan, "NaN"},
		{"label out of range", &GMMDaDiL{}, bad, tgt, "label 5"},
		{"negative samples", &GMMDaDiL{SamplesPerClass: -1}, src, tgt, "SamplesPerClass = -1"},
		{"negative dims", &GMMDaDiL{Dims: -2}, src, tgt, "Dims = -2 is negative"},
		{"negative atoms", &GMMDaDiL{Settings: &gmm.DictionarySettings{Atoms: -2}}, src, tgt, "Atoms = -2"},
		{"bad EM", &GMMDaDiL{EM: &gmm.Settings{Tol: -1}}, src, tgt, "Tol"},
		{"ensemble transport", &GMMDaDiL{EnsembleTransport: dictionary.TransportMap}, src, tgt, "EnsembleTransport map"},
		{"transport", &GMMDaDiL{Transport: dictionary.TransportBarycenter}, src, tgt, "Transport barycenter"},
	} {
		err := fit(tc.m, tc.src, tc.tgt, 3)
		if err == nil || !strings.HasPrefix(err.Error(), "adapt: gmm-dadil: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.what, err, tc.want)
		}
	}
	// Fitted, it names itself in the errors of bad rows.
	g := &GMMDaDiL{Ensemble: true}
	if err := fit(g, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	for _, pr := range Predictors(g) {
		if _, err := pr.Predict(mat.NewDense(2, 5, nil)); err == nil || !strings.HasPrefix(err.Error(), "adapt: "+pr.Name+": ") {
			t.Errorf("%s on 5 features: error %v", pr.Name, err)
		}
	}
	if names := []string{Predictors(g)[0].Name, Predictors(g)[1].Name}; !slices.Equal(names, []string{"gmm-dadil-e", "gmm-dadil"}) {
		t.Errorf("predictors %v", names)
	}
}

// TestConfigGMM: Config.GMM's settings reach gmm-dadil and gmm-dadil-e as
// copies, with Config's seed and classifier.
func TestConfigGMM(t *testing.T) {
	tmpl := &GMMDaDiL{Settings: &gmm.DictionarySettings{ComponentsPerClass: 2, Epochs: 9, Seed: 77}, EM: &gmm.Settings{VarFloor: 0.3},
		TargetComponents: 5, SamplesPerClass: 7, MAP: true, EnsembleTransport: dictionary.TransportNone, Seed: 77,
		Transport: dictionary.TransportSources, TransportRows: 9}
	knn := &classify.KNN{}
	cfg := &Config{Seed: 4, GMM: tmpl, Classifier: knn}
	for _, name := range []string{"gmm-dadil", "gmm-dadil-e"} {
		m, err := cfg.New(name)
		if err != nil {
			t.Fatal(err)
		}
		g := m.(*GMMDaDiL)
		if g.Settings == tmpl.Settings || g.EM == tmpl.EM {
			t.Fatalf("%s shares the template's settings", name)
		}
		if g.Ensemble != (name == "gmm-dadil-e") || g.Settings.ComponentsPerClass != 2 || g.Settings.Epochs != 9 || g.Settings.Seed != 4 || g.Seed != 4 ||
			g.EM.VarFloor != 0.3 || g.TargetComponents != 5 || g.SamplesPerClass != 7 || !g.MAP || g.EnsembleTransport != dictionary.TransportNone || g.Classifier != knn ||
			g.Transport != dictionary.TransportSources || g.TransportRows != 9 {
			t.Errorf("%s: %+v, settings %+v", name, g, g.Settings)
		}
	}
	// BalancedTarget follows the DaDiL settings', with a template or not.
	for _, tmpl := range []*GMMDaDiL{nil, tmpl} {
		m, _ := (&Config{Seed: 4, GMM: tmpl, Dictionary: &dictionary.Settings{BalancedTarget: true}}).New("gmm-dadil")
		if !m.(*GMMDaDiL).BalancedTarget {
			t.Errorf("template %v: BalancedTarget of the DaDiL settings not followed", tmpl != nil)
		}
	}
	// Without a template, New's settings.
	g, _ := (&Config{Seed: 4}).New("gmm-dadil")
	if s := g.(*GMMDaDiL).Settings; s.Seed != 4 || s.Epochs != 0 || g.(*GMMDaDiL).EM != nil {
		t.Errorf("settings %+v", s)
	}
}

// TestGMMDaDiLReconstructionSamples: the samples of GMM-DaDiL-R's training
// set are SamplesPerClass per class, each labeled with its component's
// label, the same at every call, and asking for them before Fit is an
// error.
func TestGMMDaDiLReconstructionSamples(t *testing.T) {
	m := &GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: 1}, Seed: 1, SamplesPerClass: 20}
	if _, _, _, err := m.ReconstructionSamples(); err == nil || !strings.Contains(err.Error(), "before Fit") {
		t.Fatalf("before Fit: %v", err)
	}
	p := synth.Generate(synth.Default(), 1)
	if err := m.Fit(p); err != nil {
		t.Fatal(err)
	}
	X, T, comp, err := m.ReconstructionSamples()
	if err != nil {
		t.Fatal(err)
	}
	B := m.Dict.Target()
	if r, c := X.Dims(); r != 60 || c != B.Dim() || len(comp) != 60 {
		t.Fatalf("X %d×%d, %d components", r, c, len(comp))
	}
	for i, k := range comp {
		if !slices.Equal(T.RawRowView(i), B.Labels.RawRowView(k)) {
			t.Fatalf("row %d: labels %v, component %d's %v", i, T.RawRowView(i), k, B.Labels.RawRowView(k))
		}
	}
	X2, _, _, _ := m.ReconstructionSamples()
	if !sameBits(X, X2) {
		t.Error("two calls drew different samples")
	}
}

// TestGMMDaDiLConstantFeatures fits GMM-DaDiL on the demo problem with two
// features added that are the same in every row (as a background pixel
// after standard scaling), of values whose mean does not round back to
// them. Their components' deviations must be the floor of a constant
// feature, not rounding noise: then the atoms' MAP rules, and so
// GMM-DaDiL-E, still classify the target, as on the problem without them.
func TestGMMDaDiLConstantFeatures(t *testing.T) {
	src, tgt, truth := synthProblem(1)
	pad := func(X *mat.Dense) *mat.Dense {
		n, d := X.Dims()
		Y := mat.NewDense(n, d+2, nil)
		for i := range n {
			copy(Y.RawRowView(i), X.RawRowView(i))
			Y.Set(i, d, -0.7071067811865476)
			Y.Set(i, d+1, 0.1)
		}
		return Y
	}
	for i := range src {
		src[i].X = pad(src[i].X)
	}
	tgt = pad(tgt)
	m := &GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: 1}, Seed: 1}
	if err := fit(m, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	wantPredictorsAbove(t, m, tgt, truth, 0.85)
	_, d := tgt.Dims()
	for k, a := range m.Dict.Atoms {
		for i := range a.Components() {
			for j := d - 2; j < d; j++ {
				if sd := a.Std.At(i, j); sd < 1e-3 {
					t.Fatalf("atom %d, component %d: σ of constant feature %d is %v", k, i, j, sd)
				}
			}
		}
	}
}

// TestConfigDictionary: Config.Dictionary's settings reach dadil-r and
// dadil-e as copies, seeded by Config.Seed.
func TestConfigDictionary(t *testing.T) {
	tmpl := &dictionary.Settings{Epochs: 3, Samples: 60, Seed: 77}
	cfg := &Config{Seed: 4, Dictionary: tmpl}
	for _, name := range []string{"dadil-r", "dadil-e"} {
		m, err := cfg.New(name)
		if err != nil {
			t.Fatal(err)
		}
		d := m.(*DaDiL)
		if d.Settings == tmpl || d.Settings.Epochs != 3 || d.Settings.Samples != 60 || d.Settings.Seed != 4 || d.Ensemble != (name == "dadil-e") {
			t.Errorf("%s: settings %+v", name, d.Settings)
		}
	}
	if tmpl.Seed != 77 {
		t.Errorf("the template's seed changed to %d", tmpl.Seed)
	}
}

// TestGMMDaDiLSharedImbalance: every domain has the classes in the
// proportions 10:5:2:1:1:1, the target shifted beyond the sources. By
// default the target's reconstruction is weighed in the proportions the
// sources share, which the dictionary's settings record, and GMM-DaDiL
// classifies the target better than with BalancedTarget, whose
// class-balanced reconstruction moves the mass of the rare classes onto
// the common ones.
func TestGMMDaDiLSharedImbalance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	means := testproblem.Means(rng, 6, 10, 3)
	domain := func(scale int, shift float64) dataset.Domain {
		return testproblem.Domain(rng, means, []int{10, 5, 2, 1, 1, 1}, scale, shift)
	}
	p := &dataset.Problem{Classes: 6}
	for _, shift := range []float64{0, 0.5, 1} {
		p.Sources = append(p.Sources, domain(12, shift))
	}
	p.Target = domain(6, 2)
	truth := p.Target.Y
	p.Target.Y = nil
	score := func(balanced bool) float64 {
		m := &GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: 1}, Seed: 1, BalancedTarget: balanced}
		if err := m.Fit(p); err != nil {
			t.Fatal(err)
		}
		tc := m.Dict.Settings.TargetClasses
		if balanced != (tc == nil) || !balanced && !slices.Equal(tc, dictionary.SharedProportions(p.Sources, 6)) {
			t.Fatalf("BalancedTarget %v: TargetClasses %v", balanced, tc)
		}
		pred, err := Predictors(m)[0].Predict(p.Target.X)
		if err != nil {
			t.Fatal(err)
		}
		return accuracy(pred, truth)
	}
	shared, balanced := score(false), score(true)
	t.Logf("GMM-DaDiL %.1f%% with the shared proportions, %.1f%% with BalancedTarget", 100*shared, 100*balanced)
	if shared < 0.95 || shared <= balanced {
		t.Errorf("GMM-DaDiL %.1f%% with the shared proportions, want ≥ 95%% and above %.1f%% with BalancedTarget", 100*shared, 100*balanced)
	}
}
