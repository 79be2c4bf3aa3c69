package modelfile

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/bombtest"
	"github.com/dadil/dadil/internal/sysmem"
	"github.com/dadil/dadil/synth"
)

var (
	gmmMu     sync.Mutex
	gmmFitted = map[string]*File{}
)

// gmmWith fits a GMM-DaDiL model whose GMM-DaDiL-R classifier is trained
// by the trainer of that name, on a small synthetic problem, once per
// name.
func gmmWith(t testing.TB, name string) *File {
	t.Helper()
	gmmMu.Lock()
	defer gmmMu.Unlock()
	if f, ok := gmmFitted[name]; ok {
		return f
	}
	l := synth.Default()
	l.PerClass = 30
	p := synth.Generate(l, 3)
	m := &adapt.GMMDaDiL{Settings: &gmm.DictionarySettings{Epochs: 20, Seed: 2}, SamplesPerClass: 20,
		EM: &gmm.Settings{VarFloor: 0.1, Tol: 1e-3}, Classifier: trainers[name], Seed: 2}
	if err := m.Fit(p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	_, d := p.Target.X.Dims()
	sc := &dataset.Scaler{Kind: dataset.ScaleStandard, Offset: make([]float64, d), Scale: slices.Repeat([]float64{2}, d)}
	f := &File{GMM: m, Scaler: sc, Labels: []int{4, 5, 6}, Features: []string{"x", "y"}}
	gmmFitted[name] = f
	return f
}

// gmmProba returns the probabilities of GMM-DaDiL-R, GMM-DaDiL-E and the
// MAP rule of the reconstruction of m on X.
func gmmProba(t *testing.T, m *adapt.GMMDaDiL, X *mat.Dense) []*mat.Dense {
	t.Helper()
	var out []*mat.Dense
	for _, p := range m.Predictors() {
		P, err := p.Proba(X)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, P)
	}
	var P mat.Dense
	if err := m.Dict.Target().Proba(&P, X); err != nil {
		t.Fatal(err)
	}
	return append(out, &P)
}

// TestGMMRoundTrip: a GMM-DaDiL model of every kind of classifier saves,
// loads with its dictionary, settings and classifier, and gives the same
// probabilities bit for bit with GMM-DaDiL-R, -E and the MAP rule.
func TestGMMRoundTrip(t *testing.T) {
	X := synth.Generate(synth.Default(), 9).Target.X
	for _, name := range []string{"softmax", "knn", "mlp"} {
		t.Run(name, func(t *testing.T) {
			f := gmmWith(t, name)
			g := saveLoad(t, filepath.Join(t.TempDir(), "m.dadil"), f)
			if g.Model != nil || g.GMM == nil {
				t.Fatalf("loaded a DaDiL model %v, GMM %v", g.Model != nil, g.GMM != nil)
			}
			if fmt.Sprintf("%T", g.GMM.R) != fmt.Sprintf("%T", f.GMM.R) {
				t.Errorf("classifier %T loaded as %T", f.GMM.R, g.GMM.R)
			}
			if len(g.GMM.E) != len(f.GMM.Dict.Atoms) || len(f.GMM.E) != len(g.GMM.E) {
				t.Fatalf("%d GMM-DaDiL-E classifiers loaded, %d saved, for %d atoms", len(g.GMM.E), len(f.GMM.E), len(f.GMM.Dict.Atoms))
			}
			for k, e := range g.GMM.E {
				if fmt.Sprintf("%T", e) != fmt.Sprintf("%T", f.GMM.E[k]) {
					t.Errorf("GMM-DaDiL-E classifier %d: %T loaded as %T", k, f.GMM.E[k], e)
				}
			}
			a, b := gmmProba(t, f.GMM, X), gmmProba(t, g.GMM, X)
			for i, which := range []string{"R", "E", "MAP"} {
				if !mat.Equal(a[i], b[i]) {
					t.Errorf("%s probabilities differ after a round trip", which)
				}
			}
			d, e := f.GMM.Dict, g.GMM.Dict
			if !mat.Equal(d.Alpha, e.Alpha) || len(e.Atoms) != len(d.Atoms) || len(e.Reconstructions) != len(d.Reconstructions) {
				t.Fatal("coordinates, atoms or reconstructions differ")
			}
			for k, at := range d.Atoms {
				if !mat.Equal(at.Means, e.Atoms[k].Means) || !mat.Equal(at.Std, e.Atoms[k].Std) || !mat.Equal(at.Labels, e.Atoms[k].Labels) || !slices.Equal(at.Weights, e.Atoms[k].Weights) {
					t.Errorf("atom %d differs", k)
				}
			}
			if !reflect.DeepEqual(GMMSettingsOf(g.GMM), GMMSettingsOf(f.GMM)) || e.Settings.Epochs != 20 || g.GMM.EM.VarFloor != 0.1 {
				t.Errorf("settings %+v, want %+v", GMMSettingsOf(g.GMM), GMMSettingsOf(f.GMM))
			}
			if !slices.Equal(g.Labels, f.Labels) || !slices.Equal(g.Features, f.Features) || !slices.Equal(g.Scaler.Scale, f.Scaler.Scale) {
				t.Error("labels, feature names or scaler differ")
			}
			man := readManifest(t, encoded(t, f))
			if man["version"] != 3.0 || man["model"] != "gmm-dadil" || man["target"] != 3.0 {
				t.Errorf("manifest version %v, model %v, target %v", man["version"], man["model"], man["target"])
			}
		})
	}
	// A DaDiL model is still written as version 1, without a model kind.
	if man := readManifest(t, encoded(t, testFile(t))); man["version"] != 1.0 || man["model"] != nil || man["components"] != nil {
		t.Errorf("DaDiL manifest: version %v, model %v, components %v", man["version"], man["model"], man["components"])
	}
}

// TestGMMCorrupted: the manifest and members of a GMM-DaDiL model are
// checked against one another and for values a mixture cannot have.
func TestGMMCorrupted(t *testing.T) {
	f := gmmWith(t, "softmax")
	good := encoded(t, f)
	n := f.GMM.Dict.Atoms[0].Components()
	knn := encoded(t, gmmWith(t, "knn"))
	kn, _ := gmmWith(t, "knn").GMM.R.(*classify.Neighbours).X.Dims()
	mlpFile := encoded(t, gmmWith(t, "mlp"))
	ones := func(n int, v float64) []float64 { return slices.Repeat([]float64{v}, n) }
	labels := ones(3*n, 1.0/3)
	labels[4] = -0.1
	offSimplex := ones(3*n, 0.5)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"version 1", withManifest(t, good, func(v map[string]any) { v["version"] = 1 }), "a gmm-dadil model in a version 1 file (it needs version 2)"},
		{"newer version", withManifest(t, good, func(v map[string]any) { v["version"] = 5 }), "version 5 was written by a newer dadil"},
		{"unknown model", withManifest(t, good, func(v map[string]any) { v["model"] = "vae" }), `unknown model "vae"`},
		{"read as DaDiL", withManifest(t, good, func(v map[string]any) { delete(v, "model") }), fmt.Sprintf("components %d in a DaDiL model", n)},
		{"no components", withManifest(t, good, func(v map[string]any) { delete(v, "components") }), "0 components per mixture"},
		{"huge components", withManifest(t, good, func(v map[string]any) { v["components"] = 1 << 30 }), "1073741824 components per mixture"},
		{"target", withManifest(t, good, func(v map[string]any) { v["target"] = 0 }), "target 0 of a gmm-dadil model of 4 domains"},
		{"no settings", withManifest(t, good, func(v map[string]any) { delete(v, "settings") }), "manifest: no settings"},
		{"bad settings", withManifest(t, good, func(v map[string]any) { v["settings"] = []int{1} }), "manifest: settings: json"},
		{"negative samples", withManifest(t, good, func(v map[string]any) { v["settings"].(map[string]any)["samples_per_class"] = -4 }), "negative target_components 0 or samples_per_class -4"},
		{"missing reconstruction", rewrite(t, good, "rec3_std.npy", nil), "member rec3_std.npy is missing"},
		{"missing atom", rewrite(t, good, "atom2_labels.npy", nil), "member atom2_labels.npy is missing"},
		{"means shape", rewrite(t, good, "atom1_means.npy", npyOf(t, []int{n + 1, 2}, make([]float64, 2*n+2))), fmt.Sprintf("atom1_means.npy has shape [%d 2], want (%d, 2)", n+1, n)},
		{"labels shape", rewrite(t, good, "rec0_labels.npy", npyOf(t, []int{n, 2}, make([]float64, 2*n))), fmt.Sprintf("rec0_labels.npy has shape [%d 2], want (%d, 3)", n, n)},
		{"NaN mean", rewrite(t, good, "rec2_means.npy", npyOf(t, []int{n, 2}, append([]float64{math.NaN()}, make([]float64, 2*n-1)...))), "rec2_means.npy: entry 0 is NaN"},
		{"zero std", rewrite(t, good, "atom0_std.npy", npyOf(t, []int{n, 2}, append([]float64{0}, ones(2*n-1, 1)...))), "mixture atom0: gmm: mixture standard deviation 0, feature 0 is 0 (must be positive and finite)"},
		{"weights", rewrite(t, good, "rec1_weights.npy", npyOf(t, []int{n}, ones(n, 1))), fmt.Sprintf("mixture rec1: gmm: mixture weights sum to %d, not 1", n)},
		{"negative label", rewrite(t, good, "atom1_labels.npy", npyOf(t, []int{n, 3}, labels)), "atom1_labels.npy: row 1 has a negative label -0.1"},
		{"labels off simplex", rewrite(t, good, "rec3_labels.npy", npyOf(t, []int{n, 3}, offSimplex)), "rec3_labels.npy: row 0 sums to 1.5, not 1"},
		{"alpha", rewrite(t, good, "alpha.npy", npyOf(t, []int{4, 3}, ones(12, 0.5))), "alpha.npy: row 0 sums to 1.5, not 1"},
		{"softmax shape", rewrite(t, good, "r_W.npy", npyOf(t, []int{2, 2}, make([]float64, 4))), "r_W.npy has shape [2 2], want (3, 2)"},
		{"missing e classifier", rewrite(t, good, "e1_b.npy", nil), "member e1_b.npy is missing"},
		{"e shape", rewrite(t, good, "e2_W.npy", npyOf(t, []int{3, 3}, make([]float64, 9))), "e2_W.npy has shape [3 3], want (3, 2)"},
		{"knn e points", rewrite(t, knn, "e0_X.npy", npyOf(t, []int{61, 2}, make([]float64, 122))), "e0_X.npy declares 61 points, more than the 60 a classifier of this model trains on"},
		// GMM-DaDiL-R trains on 60 drawn rows and 60 of each of the 3 sources.
		{"knn points", rewrite(t, knn, "r_X.npy", npyOf(t, []int{241, 2}, make([]float64, 482))), "r_X.npy declares 241 points, more than the 240 a classifier of this model trains on"},
		{"knn points without sources", rewrite(t, withManifest(t, knn, func(v map[string]any) { v["settings"].(map[string]any)["transport"] = "none" }), "r_X.npy", npyOf(t, []int{61, 2}, make([]float64, 122))), "r_X.npy declares 61 points, more than the 60 a classifier of this model trains on"},
		{"knn k", rewrite(t, knn, "r_k.npy", npyOf(t, []int{}, []float64{float64(kn + 1)})), fmt.Sprintf("r_k.npy: entry 0 is %d, not an integer in [1, %d]", kn+1, kn)},
		{"hidden of version 2", withManifest(t, mlpFile, func(v map[string]any) { v["version"] = 2 }), "hidden_layers for 4 networks, want 1 (r)"},
		{"hidden missing", withManifest(t, mlpFile, func(v map[string]any) { delete(v["hidden_layers"].(map[string]any), "e2") }), "hidden_layers for 3 networks, want 4 (r, e0, …)"},
		// A version 2 model has no GMM-DaDiL-E classifiers: members of
		// them are ignored.
		{"version 2 ignores e", withManifest(t, good, func(v map[string]any) { v["version"] = 2 }), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(c.data)
			if c.want == "" {
				// Members a GMM-DaDiL model does not have are ignored.
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestGMMBomb: the members of a GMM-DaDiL model have the shapes the
// manifest fixes, read from their headers before any data is
// decompressed; a consistent manifest declaring mixtures beyond the memory
// limit is refused on the headers.
func TestGMMBomb(t *testing.T) {
	const mib = 2300 // 2.4 GB of zeros, about 2.3 MB compressed
	f := gmmWith(t, "softmax")
	good := encoded(t, f)
	n := f.GMM.Dict.Atoms[0].Components()
	rows := mib << 17 / 2
	bomb := withBomb(t, good, "atom0_means.npy", bombtest.NPYHeader(rows, 2), mib)
	knn := withBomb(t, encoded(t, gmmWith(t, "knn")), "r_X.npy", bombtest.NPYHeader(rows, 2), mib)
	// A consistent manifest and members of mixtures of big components,
	// beyond a memory limit of 1 MiB.
	const big = 1 << 14
	huge := withManifest(t, good, func(v map[string]any) { v["components"] = big })
	for _, p := range gmmMixtures(3, 4) {
		huge = rewrite(t, huge, p+"_weights.npy", npyOf(t, []int{big}, make([]float64, big)))
		for _, m := range []string{"_means", "_std"} {
			huge = rewrite(t, huge, p+m+".npy", npyOf(t, []int{big, 2}, make([]float64, 2*big)))
		}
		huge = rewrite(t, huge, p+"_labels.npy", npyOf(t, []int{big, 3}, make([]float64, 3*big)))
	}
	defer func(m func() sysmem.Limit) { memoryLimit = m }(memoryLimit)
	memoryLimit = func() sysmem.Limit { return sysmem.Limit{Bytes: 1 << 20, Source: "test"} }
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"means", bomb, fmt.Sprintf("atom0_means.npy has shape [%d 2], want (%d, 2)", rows, n)},
		{"knn points", knn, fmt.Sprintf("r_X.npy declares %d points, more than the 240 a classifier of this model trains on", rows)},
		{"declared beyond memory", huge, "the arrays of the model file declare 7.0 MiB in all, more than the limit of 1.0 MiB (test)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			a := bombtest.Allocated(func() { _, err = Read(tc.file) })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if a > 16<<20 {
				t.Fatalf("allocated %d bytes", a)
			}
		})
	}
}

// TestGMMSaveErrors: incomplete GMM-DaDiL models are not written.
func TestGMMSaveErrors(t *testing.T) {
	f := gmmWith(t, "softmax")
	with := func(edit func(m *adapt.GMMDaDiL)) *File {
		m := *f.GMM
		d := *m.Dict
		m.Dict = &d
		edit(&m)
		return &File{GMM: &m, Scaler: f.Scaler, Labels: f.Labels}
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		file *File
		want string
	}{
		{"both", &File{GMM: f.GMM, Model: testFile(t).Model, Scaler: f.Scaler, Labels: f.Labels}, "both a DaDiL and a GMM-DaDiL model"},
		{"MAP", with(func(m *adapt.GMMDaDiL) { m.R = nil }), "no classifier of its reconstruction (fitted with MAP)"},
		{"E count", with(func(m *adapt.GMMDaDiL) { m.E = m.E[:1] }), "1 GMM-DaDiL-E classifiers for 3 atoms"},
		{"E missing", with(func(m *adapt.GMMDaDiL) { m.E = []classify.Classifier{m.E[0], nil, m.E[2]} }), "no GMM-DaDiL-E classifier for atom 1"},
		{"E kind", with(func(m *adapt.GMMDaDiL) { m.E = []classify.Classifier{m.E[0], gmmWith(t, "knn").GMM.E[1], m.E[2]} }), "classifier e1 is a knn classifier and r a softmax one"},
		{"no dictionary", with(func(m *adapt.GMMDaDiL) { m.Dict = nil }), "no dictionary"},
		{"reconstructions", with(func(m *adapt.GMMDaDiL) { m.Dict.Reconstructions = m.Dict.Reconstructions[:2] }), "2 reconstructions for 4 domains"},
		{"labels", &File{GMM: f.GMM, Scaler: f.Scaler, Labels: []int{1, 2}}, "2 label values for 3 classes"},
		{"unlabeled atom", with(func(m *adapt.GMMDaDiL) {
			a := *m.Dict.Atoms[1]
			a.Labels = nil
			m.Dict.Atoms = []*gmm.Mixture{m.Dict.Atoms[0], &a, m.Dict.Atoms[2]}
		}), "atom 1 has no means or no labels"},
		{"uneven atoms", with(func(m *adapt.GMMDaDiL) {
			a := m.Dict.Atoms[1].Clone()
			a.Weights, a.Means, a.Std, a.Labels = []float64{1}, mat.DenseCopyOf(a.Means.Slice(0, 1, 0, 2)), mat.DenseCopyOf(a.Std.Slice(0, 1, 0, 2)), mat.DenseCopyOf(a.Labels.Slice(0, 1, 0, 3))
			m.Dict.Atoms = []*gmm.Mixture{m.Dict.Atoms[0], a, m.Dict.Atoms[2]}
		}), "the model would not load back: atom1_weights.npy has shape [1]"},
	} {
		err := Save(filepath.Join(dir, "m.dadil"), tc.file)
		if err == nil || !strings.HasPrefix(err.Error(), "modelfile: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestGMMVersion2: a GMM-DaDiL model without GMM-DaDiL-E classifiers (as
// dadil wrote them before it trained them) is written and read as version
// 2, and its GMM-DaDiL-E weighs the atoms' MAP rules by α_T, as the dadil
// that wrote it did.
func TestGMMVersion2(t *testing.T) {
	f := gmmWith(t, "softmax")
	m := *f.GMM
	m.E = nil
	old := &File{GMM: &m, Scaler: f.Scaler, Labels: f.Labels}
	if man := readManifest(t, encoded(t, old)); man["version"] != 2.0 {
		t.Fatalf("manifest version %v, want 2", man["version"])
	}
	g := saveLoad(t, filepath.Join(t.TempDir(), "m.dadil"), old)
	if g.GMM.E != nil {
		t.Fatalf("%d GMM-DaDiL-E classifiers loaded from a version 2 file", len(g.GMM.E))
	}
	X := synth.Generate(synth.Default(), 9).Target.X
	P, err := g.GMM.Predictors()[1].Proba(X)
	if err != nil {
		t.Fatal(err)
	}
	var want mat.Dense
	if err := f.GMM.Dict.EnsembleProba(&want, X, f.GMM.Dict.Alpha.RawRowView(3)); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(P, &want) {
		t.Error("GMM-DaDiL-E of a version 2 model is not the atoms' MAP ensemble")
	}
}

// widened returns the rows of X (n×2) with four more features, linear
// combinations of the two and a small wave, so that a projection onto 3
// principal directions keeps almost all of them.
func widened(X *mat.Dense) *mat.Dense {
	n, _ := X.Dims()
	W := mat.NewDense(n, 6, nil)
	for i := range n {
		a, b := X.At(i, 0), X.At(i, 1)
		W.SetRow(i, []float64{a, b, a + b, a - 2*b, 0.5 * a, 0.1 * math.Sin(float64(i))})
	}
	return W
}

// widenedProblem returns the small synthetic problem of gmmWith with
// four more features (widened).
func widenedProblem() *dataset.Problem {
	l := synth.Default()
	l.PerClass = 30
	p := synth.Generate(l, 3)
	for i := range p.Sources {
		p.Sources[i].X = widened(p.Sources[i].X)
	}
	p.Target.X = widened(p.Target.X)
	p.Test.X = p.Target.X
	return p
}

// gmmProjected fits a GMM-DaDiL model on 3 principal directions of the
// 6 features of widenedProblem, with the trainer of that name.
func gmmProjected(t testing.TB, p *dataset.Problem, name string) *File {
	t.Helper()
	m := &adapt.GMMDaDiL{Settings: &gmm.DictionarySettings{Epochs: 20, Seed: 2}, SamplesPerClass: 20, Dims: 3, Seed: 2, Classifier: trainers[name]}
	if err := m.Fit(p); err != nil {
		t.Fatal(err)
	}
	if m.Projection == nil {
		t.Fatal("no projection for 6 features and Dims 3")
	}
	sc := &dataset.Scaler{Kind: dataset.ScaleStandard, Offset: make([]float64, 6), Scale: slices.Repeat([]float64{1}, 6)}
	return &File{GMM: m, Scaler: sc, Labels: []int{4, 5, 6}}
}

// TestGMMProjectionRoundTrip: a GMM-DaDiL model fitted on 3 principal
// directions of 6 features is written as version 4 with its projection,
// loads back with it and classifies raw rows as before, bit for bit, with
// every kind of classifier; a basis whose rows are not orthonormal, or of
// the wrong shape, is refused.
func TestGMMProjectionRoundTrip(t *testing.T) {
	p := widenedProblem()
	var f *File
	for _, name := range []string{"knn", "mlp", "softmax"} {
		f = gmmProjected(t, p, name)
		m := f.GMM
		g := saveLoad(t, filepath.Join(t.TempDir(), "m.dadil"), f)
		if g.GMM.Projection == nil || !mat.Equal(g.GMM.Projection.Basis, m.Projection.Basis) || !slices.Equal(g.GMM.Projection.Mean, m.Projection.Mean) {
			t.Fatalf("%s: the projection did not load back", name)
		}
		for k, pr := range m.Predictors() {
			a, err := pr.Proba(p.Target.X)
			if err != nil {
				t.Fatal(err)
			}
			b, err := g.GMM.Predictors()[k].Proba(p.Target.X)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(a, b) {
				t.Errorf("%s: %s probabilities differ after a round trip", name, pr.Name)
			}
		}
	}
	good := encoded(t, f) // the softmax model
	if man := readManifest(t, good); man["version"] != 4.0 || man["directions"] != 3.0 || man["features"] != 6.0 {
		t.Errorf("manifest version %v, directions %v, features %v", man["version"], man["directions"], man["features"])
	}
	skew := mat.DenseCopyOf(f.GMM.Projection.Basis)
	skew.Set(1, 0, skew.At(1, 0)+0.01)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"not orthonormal", rewrite(t, good, "projection_basis.npy", npyOf(t, []int{3, 6}, skew.RawMatrix().Data)), "the rows are not orthonormal"},
		{"basis shape", rewrite(t, good, "projection_basis.npy", npyOf(t, []int{2, 6}, make([]float64, 12))), "projection_basis.npy has shape [2 6], want (3, 6)"},
		{"no mean", rewrite(t, good, "projection_mean.npy", nil), "member projection_mean.npy is missing"},
		{"version 3", withManifest(t, good, func(v map[string]any) { v["version"] = 3 }), "directions 3 in a version 3 gmm-dadil model"},
	} {
		if _, err := Read(c.data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
