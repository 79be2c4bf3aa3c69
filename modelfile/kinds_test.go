package modelfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/mlp"
	"github.com/dadil/dadil/npy"
	"github.com/dadil/dadil/synth"
)

// trainers are the classifiers of dadil fit --classifier, by the kind of
// classifier they train (softmax-cv trains a *classify.Softmax).
var trainers = map[string]classify.Trainer{
	"softmax":    &classify.SoftmaxTrainer{},
	"softmax-cv": &classify.SoftmaxCV{Seed: 1},
	"knn":        &classify.KNN{},
	"mlp":        &mlp.Classifier{Hidden: 8, Epochs: 3, Seed: 1},
}

var (
	fittedMu sync.Mutex
	fitted   = map[string]*File{}
)

// fittedWith fits a model with the trainer of that name on a small
// synthetic problem, once per name.
func fittedWith(t testing.TB, name string) *File {
	t.Helper()
	fittedMu.Lock()
	defer fittedMu.Unlock()
	if f, ok := fitted[name]; ok {
		return f
	}
	l := synth.Default()
	l.PerClass = 20
	p := synth.Generate(l, 2)
	m, err := dictionary.FitModel(p, &dictionary.Settings{Atoms: 2, Samples: 30, Batch: 15, Epochs: 3, PlateauTol: -1, Seed: 1}, trainers[name])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	_, d := p.Target.X.Dims()
	sc := &dataset.Scaler{Kind: dataset.ScaleNone, Offset: make([]float64, d), Scale: slices.Repeat([]float64{1}, d)}
	f := &File{Model: m, Scaler: sc, Labels: []int{1, 2, 3}, Features: []string{"x", "y"}}
	fitted[name] = f
	return f
}

// encoded returns the model file of f, as Save writes it.
func encoded(t testing.TB, f *File) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf, f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// saveLoad saves f to path and loads it back.
func saveLoad(t *testing.T, path string, f *File) *File {
	t.Helper()
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	g, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// samePredictions fails unless a and b give the same classes and, bit for
// bit, the same probabilities with DaDiL-R and DaDiL-E on X.
func samePredictions(t *testing.T, a, b *dictionary.Model, X *mat.Dense) {
	t.Helper()
	for _, which := range []string{"R", "E"} {
		pa, ya := predictions(t, a, which, X)
		pb, yb := predictions(t, b, which, X)
		if !mat.Equal(pa, pb) {
			t.Errorf("DaDiL-%s probabilities differ after a round trip", which)
		}
		if !slices.Equal(ya, yb) {
			t.Errorf("DaDiL-%s classes differ after a round trip", which)
		}
	}
}

// predictions returns the class probabilities and the classes of the rows
// of X by DaDiL-R or DaDiL-E (which "R" or "E").
func predictions(t *testing.T, m *dictionary.Model, which string, X *mat.Dense) (*mat.Dense, []int) {
	t.Helper()
	proba, predict := m.ProbaR, m.PredictR
	if which == "E" {
		proba, predict = m.ProbaE, m.PredictE
	}
	P, err := proba(X)
	if err != nil {
		t.Fatal(err)
	}
	y, err := predict(X)
	if err != nil {
		t.Fatal(err)
	}
	return P, y
}

// TestRoundTripClassifiers: a model fitted with every trainer of dadil fit
// saves, loads as the same kind of classifier, and predicts the same
// classes and probabilities bit for bit.
func TestRoundTripClassifiers(t *testing.T) {
	X := synth.Generate(synth.Default(), 9).Target.X
	for _, tc := range []struct {
		trainer, kind string // the manifest's "classifier", "" when absent
		typ           string
	}{
		{"softmax", "", "*classify.Softmax"},
		{"softmax-cv", "", "*classify.Softmax"},
		{"knn", "knn", "*classify.Neighbours"},
		{"mlp", "mlp", "*mlp.Net"},
	} {
		t.Run(tc.trainer, func(t *testing.T) {
			f := fittedWith(t, tc.trainer)
			g := saveLoad(t, filepath.Join(t.TempDir(), "model.dadil"), f)
			for k, h := range append([]classify.Classifier{g.Model.R}, g.Model.E...) {
				if got := fmt.Sprintf("%T", h); got != tc.typ {
					t.Fatalf("classifier %d loads as %s, want %s", k, got, tc.typ)
				}
			}
			samePredictions(t, f.Model, g.Model, X)
			man := readManifest(t, encoded(t, f))
			if got, _ := man["classifier"].(string); got != tc.kind {
				t.Errorf("manifest classifier %q, want %q", got, tc.kind)
			}
			if _, ok := man["hidden_layers"]; ok != (tc.kind == "mlp") {
				t.Errorf("manifest hidden_layers %v", man["hidden_layers"])
			}
			if !slices.Equal(g.Features, f.Features) || !slices.Equal(g.Labels, f.Labels) {
				t.Errorf("features %q, labels %v", g.Features, g.Labels)
			}
		})
	}
	// A knn with point weights keeps them.
	f := weightedKNN(t)
	g, err := Read(encoded(t, f))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Model.R.(*classify.Neighbours)
	if got := g.Model.R.(*classify.Neighbours); !slices.Equal(got.W, r.W) || got.K != r.K {
		t.Fatalf("weights %v, k %d after a round trip", got.W, got.K)
	}
	samePredictions(t, f.Model, g.Model, X)
}

// weightedKNN returns the knn model with weights on the points of its
// DaDiL-R classifier, and k = 5.
func weightedKNN(t testing.TB) *File {
	f := fittedWith(t, "knn")
	m := *f.Model
	r := *f.Model.R.(*classify.Neighbours)
	n, _ := r.X.Dims()
	r.W = make([]float64, n)
	for i := range r.W {
		r.W[i] = float64(1 + i%7)
	}
	r.K = min(5, n)
	m.R = &r
	return &File{Model: &m, Scaler: f.Scaler, Labels: f.Labels}
}

// TestLegacyClassifier: a manifest without "classifier" (every file before
// knn and mlp could be saved) and one that names softmax both read as
// softmax regressions.
func TestLegacyClassifier(t *testing.T) {
	f := testFile(t)
	good := encoded(t, f)
	if _, ok := readManifest(t, good)["classifier"]; ok {
		t.Fatal("a softmax model's manifest names its classifier")
	}
	named := withManifest(t, good, func(v map[string]any) { v["classifier"] = "softmax" })
	for _, b := range [][]byte{good, named} {
		g, err := Read(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := g.Model.R.(*classify.Softmax); !ok {
			t.Fatalf("R is a %T", g.Model.R)
		}
	}
}

// withManifest returns the model file orig with its manifest edited.
func withManifest(t *testing.T, orig []byte, edit func(map[string]any)) []byte {
	t.Helper()
	man := readManifest(t, orig)
	edit(man)
	mb, err := json.Marshal(man)
	if err != nil {
		t.Fatal(err)
	}
	return rewrite(t, orig, "manifest.json", mb)
}

// npyOf returns the .npy file of an array.
func npyOf(t *testing.T, shape []int, data []float64) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := npy.Write(&b, shape, data); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCorruptedClassifiers: the members of knn and mlp classifiers are
// checked against the manifest, and their values.
func TestCorruptedClassifiers(t *testing.T) {
	knn, net := encoded(t, weightedKNN(t)), encoded(t, fittedWith(t, "mlp"))
	nn := fittedWith(t, "knn").Model.R.(*classify.Neighbours)
	n, _ := nn.X.Dims()
	largest := pointsLimit(fittedWith(t, "knn").Model.Dict)
	h := fittedWith(t, "mlp").Model.E[1].(*mlp.Net)
	hidden, _ := h.Layers[0].W.Dims()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"unknown classifier", withManifest(t, knn, func(v map[string]any) { v["classifier"] = "svm" }), `unknown classifier "svm"`},
		{"knn read as softmax", withManifest(t, knn, func(v map[string]any) { delete(v, "classifier") }), "member r_W.npy is missing"},
		{"k zero", rewrite(t, knn, "r_k.npy", npyOf(t, []int{}, []float64{0})), fmt.Sprintf("r_k.npy: entry 0 is 0, not an integer in [1, %d]", n)},
		{"k above rows", rewrite(t, knn, "e1_k.npy", npyOf(t, []int{}, []float64{1e6})), "e1_k.npy: entry 0 is 1e+06, not an integer in"},
		{"k fraction", rewrite(t, knn, "r_k.npy", npyOf(t, []int{}, []float64{2.5})), "r_k.npy: entry 0 is 2.5, not an integer"},
		{"k vector", rewrite(t, knn, "r_k.npy", npyOf(t, []int{1}, []float64{3})), "r_k.npy has shape [1], want ()"},
		{"k missing", rewrite(t, knn, "e0_k.npy", nil), "member e0_k.npy is missing"},
		{"targets", rewrite(t, knn, "r_T.npy", npyOf(t, []int{n, 2}, make([]float64, 2*n))), fmt.Sprintf("r_T.npy has shape [%d 2], want (%d, 3)", n, n)},
		{"points", rewrite(t, knn, "r_X.npy", npyOf(t, []int{largest + 1, 2}, make([]float64, 2*largest+2))), fmt.Sprintf("r_X.npy declares %d points, more than the %d a classifier of this model trains on", largest+1, largest)},
		{"weights length", rewrite(t, knn, "r_w.npy", npyOf(t, []int{n + 1}, make([]float64, n+1))), fmt.Sprintf("r_w.npy has shape [%d], want (%d,)", n+1, n)},
		{"weight negative", rewrite(t, knn, "r_w.npy", npyOf(t, []int{n}, append([]float64{-1}, make([]float64, n-1)...))), "r_w.npy: weight 0 is negative, -1"},
		{"weight NaN", rewrite(t, knn, "r_w.npy", npyOf(t, []int{n}, append([]float64{math.NaN()}, make([]float64, n-1)...))), "r_w.npy: entry 0 is NaN"},
		{"target Inf", rewrite(t, knn, "r_T.npy", npyOf(t, []int{n, 3}, append([]float64{math.Inf(1)}, make([]float64, 3*n-1)...))), "r_T.npy: entry 0 is +Inf"},
		{"hidden on knn", withManifest(t, knn, func(v map[string]any) { v["hidden_layers"] = map[string][]int{"r": {8}} }), "hidden_layers for knn classifiers"},
		{"no hidden", withManifest(t, net, func(v map[string]any) { delete(v, "hidden_layers") }), "hidden_layers for 0 networks, want 3 (r, e0, …)"},
		{"hidden entry", withManifest(t, net, func(v map[string]any) {
			v["hidden_layers"] = map[string][]int{"r": {hidden}, "e0": {hidden}, "e7": {hidden}}
		}), `hidden_layers has no entry "e1"`},
		{"hidden width", withManifest(t, net, func(v map[string]any) { v["hidden_layers"].(map[string]any)["e1"] = []int{0} }), `hidden_layers "e1": width 0 outside`},
		{"hidden mismatch", withManifest(t, net, func(v map[string]any) { v["hidden_layers"].(map[string]any)["e1"] = []int{hidden + 1} }), fmt.Sprintf("e1_W1.npy has shape [%d 2], want (%d, 2)", hidden, hidden+1)},
		{"layer missing", rewrite(t, net, "e0_b2.npy", nil), "member e0_b2.npy is missing"},
		{"output layer", rewrite(t, net, "r_W2.npy", npyOf(t, []int{2, hidden}, make([]float64, 2*hidden))), fmt.Sprintf("r_W2.npy has shape [2 %d], want (3, %d)", hidden, hidden)},
		{"mean", rewrite(t, net, "r_mean.npy", npyOf(t, []int{3}, make([]float64, 3))), "r_mean.npy has shape [3], want (2,)"},
		{"scale NaN", rewrite(t, net, "e1_scale.npy", npyOf(t, []int{2}, []float64{1, math.NaN()})), "e1_scale.npy: entry 1 is NaN"},
		{"one class", withManifest(t, net, func(v map[string]any) { v["classes"], v["labels"] = 1, []int{1} }), "mlp classifiers of 1 class"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// stranger is a classifier that model files cannot hold.
type stranger struct{ classify.Classifier }

func TestSaveClassifierErrors(t *testing.T) {
	soft, knn := fittedWith(t, "softmax"), fittedWith(t, "knn")
	with := func(f *File, edit func(m *dictionary.Model)) *File {
		m := *f.Model
		m.E = slices.Clone(m.E)
		edit(&m)
		return &File{Model: &m, Scaler: f.Scaler, Labels: f.Labels}
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		file *File
		want string
	}{
		{"mixed", with(knn, func(m *dictionary.Model) { m.E[1] = soft.Model.E[1] }), "classifier e1 is a softmax classifier and r a knn one: a model file holds classifiers of one kind"},
		{"unknown type", with(soft, func(m *dictionary.Model) { m.R = stranger{m.R} }), "classifier r: a modelfile.stranger classifier cannot be saved"},
		{"nil softmax", with(soft, func(m *dictionary.Model) { m.E[0] = (*classify.Softmax)(nil) }), "classifier e0: an incomplete *classify.Softmax"},
		{"nil network", with(soft, func(m *dictionary.Model) { m.R = &mlp.Net{} }), "classifier r: an mlp.Net without a network"},
		{"knn without targets", with(knn, func(m *dictionary.Model) { m.R = &classify.Neighbours{X: m.R.(*classify.Neighbours).X, K: 1} }), "classifier r: an incomplete *classify.Neighbours"},
		{"knn k", with(knn, func(m *dictionary.Model) {
			r := *m.R.(*classify.Neighbours)
			r.K = 0
			m.R = &r
		}), "r_k.npy: entry 0 is 0, not an integer"},
	} {
		err := Save(filepath.Join(dir, "m.dadil"), tc.file)
		if err == nil || !strings.HasPrefix(err.Error(), "modelfile: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// pointsLimit is the most points a k-nearest-neighbour classifier of a
// model of dictionary d may keep (checkHeaders): the largest atom's, the
// target rows a transport step labels, or the largest atom's and the
// sources' rows DaDiL-R trains beside it.
func pointsLimit(d *dictionary.Dictionary) int {
	largest := 0
	for _, a := range d.Atoms {
		r, _ := a.X.Dims()
		largest = max(largest, r)
	}
	N, _ := d.Alpha.Dims()
	return max(largest, labeledRows(d.Settings), largest+sourceRows(d.Settings, N-1))
}
