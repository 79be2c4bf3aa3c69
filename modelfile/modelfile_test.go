package modelfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/synth"
)

var (
	fixtureOnce sync.Once
	fixture     *File
	fixtureErr  error
)

// testFile fits a small model on the synthetic problem once.
func testFile(t testing.TB) *File {
	t.Helper()
	fixtureOnce.Do(func() {
		l := synth.Default()
		l.PerClass = 30
		p := synth.Generate(l, 1)
		var ds []dataset.Domain
		var raw []*dataset.File
		for _, s := range p.Sources {
			ds = append(ds, dataset.Domain{Name: s.Name, X: s.X, Y: s.Y})
			raw = append(raw, &dataset.File{Name: s.Name, X: s.X, Labels: s.Y})
		}
		ds = append(ds, dataset.Domain{Name: "target", X: p.Target.X})
		raw = append(raw, &dataset.File{Name: "target", X: p.Target.X})
		sc, err := dataset.FitScaler(dataset.ScaleMinMax, raw...)
		if err != nil {
			fixtureErr = err
			return
		}
		d, err := dictionary.Fit(ds, 3, &dictionary.Settings{Atoms: 3, Epochs: 3, PlateauTol: -1, Seed: 1})
		if err != nil {
			fixtureErr = err
			return
		}
		m, err := dictionary.NewModel(d, 3, nil, 1)
		if err != nil {
			fixtureErr = err
			return
		}
		fixture = &File{Model: m, Scaler: sc, Labels: []int{10, 20, 30}}
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixture
}

func TestRoundTrip(t *testing.T) {
	f := testFile(t)
	path := filepath.Join(t.TempDir(), "model.dadil")
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	g, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	X := synth.Generate(synth.Default(), 9).Target.X
	for _, which := range []string{"R", "E"} {
		pred := func(m *dictionary.Model) *mat.Dense {
			var P *mat.Dense
			var err error
			if which == "R" {
				P, err = m.ProbaR(X)
			} else {
				P, err = m.ProbaE(X)
			}
			if err != nil {
				t.Fatal(err)
			}
			return P
		}
		if !mat.Equal(pred(f.Model), pred(g.Model)) {
			t.Errorf("DaDiL-%s predictions differ after a round trip", which)
		}
	}
	if !mat.Equal(f.Model.Dict.Alpha, g.Model.Dict.Alpha) || g.Model.Target != f.Model.Target {
		t.Error("coordinates differ")
	}
	for k := range f.Model.Dict.Atoms {
		if !mat.Equal(f.Model.Dict.Atoms[k].X, g.Model.Dict.Atoms[k].X) || !mat.Equal(f.Model.Dict.Atoms[k].Logits, g.Model.Dict.Atoms[k].Logits) {
			t.Errorf("atom %d differs", k)
		}
	}
	if g.Scaler.Kind != dataset.ScaleMinMax || !slicesEqual(g.Scaler.Offset, f.Scaler.Offset) || !slicesEqual(g.Scaler.Scale, f.Scaler.Scale) {
		t.Error("scaler differs")
	}
	if !slicesEqualInt(g.Labels, []int{10, 20, 30}) {
		t.Errorf("labels %v", g.Labels)
	}
	if g.Model.Dict.Settings.Atoms != 3 || g.Model.Dict.Settings.Seed != 1 {
		t.Errorf("settings %+v", g.Model.Dict.Settings)
	}
	if g.Features != nil {
		t.Errorf("feature names %q from a model fitted without", g.Features)
	}
	// Feature names, when the training files had them, come back.
	named := *f
	named.Features = []string{"x", "y"}
	if err := Save(path, &named); err != nil {
		t.Fatal(err)
	}
	if g, err := Load(path); err != nil || !slices.Equal(g.Features, named.Features) {
		t.Errorf("feature names %q, %v", g.Features, err)
	}
}

// TestLegacySettings: a manifest written before Settings.SharedAtomBatch
// existed describes a fit with one atom batch shared by all domains.
func TestLegacySettings(t *testing.T) {
	f := testFile(t)
	path := filepath.Join(t.TempDir(), "model.dadil")
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Read(orig)
	if err != nil {
		t.Fatal(err)
	}
	if g.Model.Dict.Settings.SharedAtomBatch {
		t.Fatal("a new file reads as a shared-batch fit")
	}
	man := readManifest(t, orig)
	delete(man["settings"].(map[string]any), "SharedAtomBatch")
	mb, _ := json.Marshal(man)
	g, err = Read(rewrite(t, orig, "manifest.json", mb))
	if err != nil {
		t.Fatal(err)
	}
	if !g.Model.Dict.Settings.SharedAtomBatch || g.Model.Dict.Settings.Atoms != 3 {
		t.Errorf("legacy settings read as %+v", g.Model.Dict.Settings)
	}
}

// readManifest returns the decoded manifest.json of a model file.
func readManifest(t *testing.T, b []byte) map[string]any {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.Open("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var man map[string]any
	if err := json.NewDecoder(rc).Decode(&man); err != nil {
		t.Fatal(err)
	}
	return man
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func slicesEqualInt(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rewrite returns the model file with member name replaced by data (or
// removed when data is nil).
func rewrite(t *testing.T, orig []byte, name string, data []byte) []byte {
	t.Helper()
	return replace(t, orig, name, func(zw *zip.Writer) {
		if data != nil {
			w, _ := zw.Create(name)
			w.Write(data)
		}
	})
}

// replace returns the model file orig with member name replaced by what
// add writes to the archive; the other members are copied as they are.
func replace(t *testing.T, orig []byte, name string, add func(*zip.Writer)) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(orig), int64(len(orig)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, m := range zr.File {
		if m.Name == name {
			add(zw)
			continue
		}
		if err := zw.Copy(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestCorrupted(t *testing.T) {
	f := testFile(t)
	var buf bytes.Buffer
	if err := write(&buf, f); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	nanAlpha := make([]float64, 4*3)
	nanAlpha[5] = math.NaN()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "or a truncated one (not a readable ZIP archive"},
		{"garbage", []byte("this is not a model"), "or a truncated one (not a readable ZIP archive"},
		{"truncated", good[:len(good)/2], "or a truncated one (not a readable ZIP archive"},
		{"no manifest", rewrite(t, good, "manifest.json", nil), "no manifest.json"},
		{"bad json", rewrite(t, good, "manifest.json", []byte("{")), "manifest.json"},
		{"other format", withManifest(t, good, func(v map[string]any) { v["format"] = "something" }), "format \"something\""},
		{"newer version", withManifest(t, good, func(v map[string]any) { v["version"] = 7 }), "newer dadil"},
		{"old version", withManifest(t, good, func(v map[string]any) { v["version"] = 0 }), "unknown model file version 0"},
		{"target", withManifest(t, good, func(v map[string]any) { v["target"] = 9 }), "target 9"},
		{"labels", withManifest(t, good, func(v map[string]any) { v["labels"] = []int{1} }), "1 label values"},
		{"missing atom", rewrite(t, good, "atom1_X.npy", nil), "atom1_X.npy is missing"},
		{"bad npy", rewrite(t, good, "r_W.npy", []byte("\x93NUMPY junk")), "r_W.npy"},
		{"shape", rewrite(t, good, "alpha.npy", npyOf(t, []int{2, 3}, make([]float64, 6))), "alpha.npy has shape [2 3]"},
		{"NaN", rewrite(t, good, "alpha.npy", npyOf(t, []int{4, 3}, nanAlpha)), "entry 5 is NaN"},
		{"bias length", rewrite(t, good, "e0_b.npy", npyOf(t, []int{2}, []float64{0, 0})), "e0_b.npy has shape"},
		{"duplicate labels", withManifest(t, good, func(v map[string]any) { v["labels"] = []int{1, 2, 1} }), "label value 1 appears twice"},
		{"feature names", withManifest(t, good, func(v map[string]any) { v["feature_names"] = []string{"x"} }), "1 feature names for 2 features"},
		{"alpha off simplex", rewrite(t, good, "alpha.npy", npyOf(t, []int{4, 3}, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1, 0.5, 0.25, 0.5})), "row 3 sums to 1.25"},
		{"alpha negative", rewrite(t, good, "alpha.npy", npyOf(t, []int{4, 3}, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1, 1.5, -0.5, 0})), "row 3 has a negative coordinate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	// Load names the file.
	path := filepath.Join(t.TempDir(), "bad.dadil")
	os.WriteFile(path, good[:100], 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "modelfile: "+path) {
		t.Errorf("Load error %v does not name the file", err)
	}
}

func TestSaveErrors(t *testing.T) {
	f := testFile(t)
	dir := t.TempDir()
	if err := Save(filepath.Join(dir, "missing", "m.dadil"), f); err == nil {
		t.Error("no error writing into a missing directory")
	}
	if err := Save(filepath.Join(dir, "m.dadil"), &File{Model: f.Model, Labels: f.Labels}); err == nil || !strings.Contains(err.Error(), "scaling") {
		t.Errorf("error %v for a file without scaler", err)
	}
	// Models that Read would refuse are not written.
	withModel := func(edit func(m *dictionary.Model)) *File {
		m := *f.Model
		r := f.Model.R.(*classify.Softmax)
		m.R = &classify.Softmax{W: mat.DenseCopyOf(r.W), B: r.B, Classes: r.Classes, Dim: r.Dim}
		edit(&m)
		return &File{Model: &m, Scaler: f.Scaler, Labels: f.Labels}
	}
	short := *f.Scaler
	short.Offset = short.Offset[:1]
	for _, tc := range []struct {
		name string
		file *File
		want string
	}{
		{"NaN weight", withModel(func(m *dictionary.Model) { m.R.(*classify.Softmax).W.Set(0, 0, math.NaN()) }), "r_W.npy: entry 0 is NaN"},
		{"target", withModel(func(m *dictionary.Model) { m.Target = 9 }), "target 9 outside the 4 domains"},
		{"edited alpha", withModel(func(m *dictionary.Model) { m.Alpha = []float64{0.123, 0.877, 0} }), "is not row 3 of the dictionary's α"},
		{"no classifier", withModel(func(m *dictionary.Model) { m.E = []classify.Classifier{m.E[0], nil, m.E[2]} }), "no classifier for atom 1"},
		{"scaler length", &File{Model: f.Model, Scaler: &short, Labels: f.Labels}, "scaler_offset.npy has shape [1]"},
		{"duplicate labels", &File{Model: f.Model, Scaler: f.Scaler, Labels: []int{1, 1, 2}}, "label value 1 appears twice"},
	} {
		err := Save(filepath.Join(dir, "m.dadil"), tc.file)
		if err == nil || !strings.HasPrefix(err.Error(), "modelfile: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("failed saves left files: %v", entries)
	}
}

func FuzzRead(f *testing.F) {
	file := testFile(f)
	var buf bytes.Buffer
	if err := write(&buf, file); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)-20])
	f.Add([]byte("PK\x03\x04"))
	// The other classifiers, and an imputer.
	f.Add(encoded(f, weightedKNN(f)))
	f.Add(encoded(f, fittedWith(f, "mlp")))
	f.Add(encoded(f, imputed(f)))
	// GMM-DaDiL models.
	f.Add(encoded(f, gmmWith(f, "softmax")))
	f.Add(encoded(f, gmmWith(f, "knn")))
	f.Add(encoded(f, gmmProjected(f, widenedProblem(), "softmax")))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Read(b)
		if err != nil {
			return
		}
		// A file that loads is usable.
		X := mat.NewDense(2, len(g.Scaler.Offset), nil)
		if g.GMM != nil {
			for _, p := range g.GMM.Predictors() {
				if _, err := p.Proba(X); err != nil {
					t.Fatalf("loaded GMM-DaDiL model cannot predict: %v", err)
				}
			}
			rule := *g.GMM // the MAP rule of the reconstruction, through the projection if any
			rule.R = nil
			if _, err := rule.Predictors()[0].Predict(X); err != nil {
				t.Fatalf("loaded GMM-DaDiL model cannot predict by the MAP rule: %v", err)
			}
			return
		}
		if _, err := g.Model.ProbaR(X); err != nil {
			t.Fatalf("loaded model cannot predict: %v", err)
		}
		if _, err := g.Model.ProbaE(X); err != nil {
			t.Fatalf("loaded model cannot predict: %v", err)
		}
		if im := g.Imputer; im != nil {
			missing := mat.NewDense(2, im.Features, nil)
			missing.Set(0, 0, math.NaN())
			if _, err := im.Apply(missing); err != nil {
				t.Fatalf("loaded imputer cannot complete rows: %v", err)
			}
		}
	})
}
