package bench

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// fakeOffice builds a benchmark with domains of the given sizes and fold
// lists (global indices), written to a temporary folds file.
func fakeOffice(t *testing.T, sizes [4]int, folds map[string]map[string][]int) (*OfficeCaltech, error) {
	t.Helper()
	o := &OfficeCaltech{Classes: &dataset.Classes{Values: []int{1, 2}}}
	for k, n := range sizes {
		o.X[k] = mat.NewDense(n, 2, nil)
		for i := 0; i < n; i++ {
			o.X[k].Set(i, 0, float64(100*k+i))
		}
		o.Y[k] = make([]int, n)
		for i := range o.Y[k] {
			o.Y[k][i] = i % 2
		}
	}
	path := filepath.Join(t.TempDir(), "folds.json")
	b, _ := json.Marshal(folds)
	os.WriteFile(path, b, 0o644)
	return o, o.readFolds(path)
}

// roundRobin splits every domain's rows into 5 folds by row mod 5.
func roundRobin(sizes [4]int) map[string]map[string][]int {
	out := map[string]map[string][]int{}
	off := 0
	for k, n := range sizes {
		d := map[string][]int{}
		for f := 0; f < 5; f++ {
			d["Fold "+string(rune('1'+f))] = nil
		}
		for i := 0; i < n; i++ {
			key := "Fold " + string(rune('1'+i%5))
			d[key] = append(d[key], off+i)
		}
		out["Domain "+string(rune('1'+k))] = d
		off += n
	}
	return out
}

func TestFoldsAndSplit(t *testing.T) {
	sizes := [4]int{10, 12, 7, 9}
	o, err := fakeOffice(t, sizes, roundRobin(sizes))
	if err != nil {
		t.Fatal(err)
	}
	s, err := o.Split("a", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Sources) != 3 || s.Sources[0].Name != "W" || s.Sources[1].Name != "D" || s.Sources[2].Name != "C" {
		t.Fatalf("sources %v", []string{s.Sources[0].Name, s.Sources[1].Name, s.Sources[2].Name})
	}
	tr, _ := s.Target.X.Dims()
	te, _ := s.Test.X.Dims()
	if tr+te != 12 || te != 3 || len(s.Test.Y) != te {
		t.Fatalf("train %d, test %d rows", tr, te)
	}
	// Test rows are Amazon's rows ≡ 1 mod 5 (fold 2): 1, 6 and 11.
	if s.Test.X.At(0, 0) != 101 || s.Test.X.At(1, 0) != 106 || s.Test.X.At(2, 0) != 111 {
		t.Errorf("test rows %v", mat.Col(nil, 0, s.Test.X))
	}
	for i := 0; i < tr; i++ {
		if v := int(s.Target.X.At(i, 0)) - 100; v%5 == 1 {
			t.Errorf("training row %d is in the test fold", v)
		}
	}
	if _, err := o.Split("X", 1); err == nil {
		t.Error("no error for an unknown domain")
	}
	if _, err := o.Split("W", 6); err == nil {
		t.Error("no error for fold 6")
	}
}

func TestHeldOutSplit(t *testing.T) {
	sizes := [4]int{10, 12, 7, 9}
	o, err := fakeOffice(t, sizes, roundRobin(sizes))
	if err != nil {
		t.Fatal(err)
	}
	// Target A's sources are W, D, C; holding out the second, D (domain
	// index 2, rows 200 … 206), leaves W and C labeled.
	s, err := o.HeldOutSplit("A", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Sources) != 2 || s.Sources[0].Name != "W" || s.Sources[1].Name != "C" {
		t.Fatalf("sources %+v", s.Sources)
	}
	if r, _ := s.Test.X.Dims(); r != 7 || s.Target.X != s.Test.X || len(s.Test.Y) != 7 || s.Test.X.At(6, 0) != 206 {
		t.Errorf("held-out rows: %d, first column %v", r, mat.Col(nil, 0, s.Test.X))
	}
	if heldOutSource("A", 2) != "D" || heldOutSource("W", 1) != "A" {
		t.Error("heldOutSource names the wrong domain")
	}
	for _, bad := range []int{0, 4} {
		if _, err := o.HeldOutSplit("A", bad); err == nil || !strings.Contains(err.Error(), "held-out source") {
			t.Errorf("held-out %d: %v", bad, err)
		}
	}
	// A run never reads the target: with its rows replaced by NaN, every
	// source-only score is still that of the held-out sources.
	for i := 0; i < sizes[1]; i++ {
		o.X[1].Set(i, 0, math.NaN())
	}
	res, err := RunOfficeCaltech(o, Options{Methods: []string{"source-only"}, Targets: []string{"A"}, HeldOutSources: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[0].HeldOut != "W" || res[1].HeldOut != "D" || res[2].HeldOut != "C" || res[2].Fold != 3 {
		t.Errorf("results %+v", res)
	}
	if _, err := RunOfficeCaltech(o, Options{Methods: []string{"source-only"}, Folds: []int{1}, HeldOutSources: true}); err == nil || !strings.Contains(err.Error(), "no folds") {
		t.Errorf("folds with held-out sources: %v", err)
	}
}

func TestFoldErrors(t *testing.T) {
	sizes := [4]int{10, 12, 7, 9}
	cases := []struct {
		name string
		edit func(map[string]map[string][]int)
		want string
	}{
		{"missing domain", func(f map[string]map[string][]int) { delete(f, "Domain 3") }, `no "Domain 3"`},
		{"missing fold", func(f map[string]map[string][]int) { delete(f["Domain 2"], "Fold 4") }, `no "Fold 4"`},
		{"outside", func(f map[string]map[string][]int) { f["Domain 1"]["Fold 1"][0] = 10 }, "outside domain W"},
		{"twice", func(f map[string]map[string][]int) {
			f["Domain 1"]["Fold 2"] = append(f["Domain 1"]["Fold 2"], f["Domain 1"]["Fold 1"][0])
		}, "in two folds"},
		{"no fold", func(f map[string]map[string][]int) { f["Domain 2"]["Fold 5"] = f["Domain 2"]["Fold 5"][1:] }, "in no fold"},
		{"empty fold", func(f map[string]map[string][]int) {
			f["Domain 3"]["Fold 4"] = append(f["Domain 3"]["Fold 4"], f["Domain 3"]["Fold 2"]...)
			f["Domain 3"]["Fold 2"] = []int{}
		}, "Domain 3 Fold 2 is empty"},
	}
	for _, c := range cases {
		f := roundRobin(sizes)
		c.edit(f)
		if _, err := fakeOffice(t, sizes, f); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "folds.json") {
			t.Errorf("%s: error %v, want one naming folds.json and containing %q", c.name, err, c.want)
		}
	}
}

func TestSelectMethodsAndTable(t *testing.T) {
	if _, err := selectMethods([]string{"dadil-r", "nope"}, MethodNames()); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown method: %v", err)
	}
	if _, err := selectMethods([]string{"all", "sa"}, MethodNames()); err == nil || !strings.Contains(err.Error(), `"all" stands alone`) {
		t.Errorf("all among others: %v", err)
	}
	all, err := selectMethods([]string{"all"}, MethodNames())
	if err != nil || len(all) != len(MethodNames()) {
		t.Errorf("all: %v, %d methods", err, len(all))
	}
	res := []Result{
		{Method: "m", Target: "W", Fold: 1, Accuracy: 50}, {Method: "m", Target: "W", Fold: 2, Accuracy: 70},
		{Method: "m", Target: "A", Fold: 1, Accuracy: 40},
	}
	tab := Table(res, []string{"m", "absent"}, []string{"W", "A"})
	if !strings.Contains(tab, "| m | 60.00 ± 10.00 | 40.00 ± 0.00 | 50.00 |") || strings.Contains(tab, "absent") {
		t.Errorf("table:\n%s", tab)
	}
}

func TestLoadOfficeCaltechErrors(t *testing.T) {
	if _, err := LoadOfficeCaltech(t.TempDir(), "surf"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing files: %v", err)
	}
	if _, err := LoadOfficeCaltech(t.TempDir(), "hog"); err == nil || !strings.Contains(err.Error(), "unknown features") {
		t.Errorf("unknown features: %v", err)
	}
}

// TestOfficeCaltechReal checks the real benchmark when present: sizes, the
// authors' fold sizes, scaling, and a small run.
func TestOfficeCaltechReal(t *testing.T) {
	o, err := LoadOfficeCaltech(filepath.Join(dataDir(t), "office-caltech10"), "surf")
	if err != nil {
		t.Fatal(err)
	}
	wantRows := [4]int{295, 958, 157, 1123}
	wantFold5 := [4]int{71, 210, 49, 239}
	for k := range o.X {
		if r, _ := o.X[k].Dims(); r != wantRows[k] || len(o.Folds[k][4]) != wantFold5[k] {
			t.Errorf("domain %s: %d rows, fold 5 has %d", OfficeCaltechDomains[k], r, len(o.Folds[k][4]))
		}
		if mat.Min(o.X[k]) < 0 || mat.Max(o.X[k]) > 1 {
			t.Errorf("domain %s not min-max scaled", OfficeCaltechDomains[k])
		}
	}
	if _, err := LoadOfficeCaltech(filepath.Join(dataDir(t), "office-caltech10"), "decaf"); err == nil || !strings.Contains(err.Error(), "amazon_decaf.mat") {
		t.Errorf("DeCAF error %v does not name the missing files", err)
	}
	if testing.Short() {
		t.Skip("-short: skipping the method run")
	}
	res, err := RunOfficeCaltech(o, Options{Methods: []string{"source-only", "wbr-r"}, Targets: []string{"D"}, Folds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.Accuracy < 30 || r.Accuracy > 100 {
			t.Errorf("%s: accuracy %.1f%%", r.Method, r.Accuracy)
		}
		t.Logf("%s on D fold 1: %.2f%% in %.1f s", r.Method, r.Accuracy, r.Seconds)
	}
}

// FuzzParseFolds checks that parseFolds never panics, that what it accepts
// partitions every domain's rows into five non-empty folds, and that every
// split of an accepted file can be built.
func FuzzParseFolds(f *testing.F) {
	sizes := [4]int{6, 5, 7, 5}
	good, _ := json.Marshal(roundRobin(sizes))
	f.Add(good)
	f.Add([]byte(`{"Domain 1": {"Fold 1": [0]}}`))
	f.Add([]byte(`{"Domain 1": {"Fold 1": [-1, 99]}, "Domain 2": null}`))
	f.Add([]byte(`[1, 2, 3]`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, b []byte) {
		folds, err := parseFolds("folds.json", b, sizes)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "bench: folds.json: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		o := &OfficeCaltech{Folds: folds}
		for k, n := range sizes {
			count := make([]int, n)
			for _, fold := range folds[k] {
				if len(fold) == 0 {
					t.Fatalf("domain %d: empty fold accepted", k)
				}
				for _, r := range fold {
					count[r]++
				}
			}
			for r, c := range count {
				if c != 1 {
					t.Fatalf("domain %d row %d is in %d folds", k, r, c)
				}
			}
			o.X[k] = mat.NewDense(n, 1, nil)
			o.Y[k] = make([]int, n)
		}
		for _, d := range OfficeCaltechDomains {
			for fold := 1; fold <= 5; fold++ {
				s, err := o.Split(d, fold)
				if err != nil {
					t.Fatal(err)
				}
				tr, _ := s.Target.X.Dims()
				te, _ := s.Test.X.Dims()
				if k, _ := domainIndex(d); tr+te != sizes[k] || te != len(s.Test.Y) {
					t.Fatalf("%s fold %d: %d training and %d test rows of %d", d, fold, tr, te, sizes[k])
				}
			}
		}
	})
}

// TestNotLoaded: benchmarks that were not loaded are errors, not panics
// (RunOfficeCaltech would otherwise fail inside its worker goroutines).
func TestNotLoaded(t *testing.T) {
	opt := Options{Methods: []string{"source-only"}, Targets: []string{"W"}, Folds: []int{1}}
	var cw *CWRU
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"run nil", func() error { _, err := RunOfficeCaltech(nil, opt); return err }, "not loaded"},
		{"run empty", func() error { _, err := RunOfficeCaltech(&OfficeCaltech{}, opt); return err }, "domain W has no features"},
		{"split empty", func() error { _, err := (&OfficeCaltech{}).Split("W", 1); return err }, "domain W has no features"},
		{"cwru nil", func() error { _, err := RunCWRU(cw, CWRUOptions{}); return err }, "not loaded"},
		{"cwru empty", func() error { _, err := RunCWRU(&CWRU{}, CWRUOptions{}); return err }, "not loaded"},
		{"encoders empty", func() error { _, err := ValidateCWRUEncoders(&CWRU{}, EncoderOptions{}); return err }, "not loaded"},
		{"export nil", func() error { return ExportSplit(filepath.Join(t.TempDir(), "s.npz"), nil) }, "split is empty"},
	} {
		if err := tc.err(); err == nil || !strings.HasPrefix(err.Error(), "bench: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// countingTrainer is a softmax trainer that counts its trainings.
type countingTrainer struct {
	classify.SoftmaxTrainer
	n atomic.Int64
}

func (c *countingTrainer) Train(X, T *mat.Dense, w []float64) (classify.Classifier, error) {
	c.n.Add(1)
	return c.SoftmaxTrainer.Train(X, T, w)
}

// TestOptionsClassifier: Options.Classifier trains the final classifiers
// of the default-setting methods, here source-only and DaDiL-R/E.
func TestOptionsClassifier(t *testing.T) {
	sizes := [4]int{30, 30, 30, 30}
	o, err := fakeOffice(t, sizes, roundRobin(sizes))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"source-only", "dadil-r"} {
		c := &countingTrainer{}
		set := &dictionary.Settings{Epochs: 2, PlateauTol: -1, Samples: 20, Batch: 10}
		if _, err := RunOfficeCaltech(o, Options{Methods: []string{m}, Targets: []string{"A"}, Folds: []int{1}, Dictionary: set, Classifier: c}); err != nil {
			t.Fatal(err)
		}
		if c.n.Load() == 0 {
			t.Errorf("%s: the classifier of Options was not trained", m)
		}
	}
	// Dictionary settings take the experiment's seed: DaDiL-R with the
	// default settings given explicitly scores as without them.
	run := func(set *dictionary.Settings) float64 {
		res, err := RunOfficeCaltech(o, Options{Methods: []string{"dadil-r"}, Targets: []string{"A"}, Folds: []int{2}, Seed: 7, Dictionary: set})
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Accuracy
	}
	if a, b := run(nil), run(&dictionary.Settings{Seed: 99}); a != b {
		t.Errorf("DaDiL-R: %g with the defaults, %g with them given", a, b)
	}
}

// TestStandardised: the standardised copy has features of zero mean and
// unit variance over the four domains, leaves o unchanged, and
// Options.Standard trains the default-setting methods on it.
func TestStandardised(t *testing.T) {
	sizes := [4]int{30, 25, 20, 35}
	o, err := fakeOffice(t, sizes, roundRobin(sizes))
	if err != nil {
		t.Fatal(err)
	}
	s, err := o.Standardised()
	if err != nil {
		t.Fatal(err)
	}
	var all []float64
	for k := range s.X {
		all = append(all, mat.Col(nil, 0, s.X[k])...)
		if s.X[k] == o.X[k] || o.X[k].At(1, 0) != float64(100*k+1) {
			t.Fatalf("domain %d: the copy shares or changed the original features", k)
		}
	}
	mean, std := stat.PopMeanStdDev(all, nil)
	if math.Abs(mean) > 1e-12 || math.Abs(std-1) > 1e-12 {
		t.Errorf("standardised feature: mean %g, std %g", mean, std)
	}
	// The constant feature stays 0.
	if v := s.X[2].At(3, 1); v != 0 {
		t.Errorf("constant feature: %g", v)
	}
	for _, standard := range []bool{false, true} {
		c := &largestTrainer{}
		if _, err := RunOfficeCaltech(o, Options{Methods: []string{"source-only"}, Targets: []string{"W"}, Folds: []int{1}, Classifier: c, Standard: standard}); err != nil {
			t.Fatal(err)
		}
		if big := c.largest > 10; big == standard {
			t.Errorf("Standard %v: the classifier trained on features up to %g", standard, c.largest)
		}
	}
}

// largestTrainer is a softmax regression that records the largest
// magnitude of the features it trains on.
type largestTrainer struct {
	classify.SoftmaxTrainer
	largest float64
}

func (c *largestTrainer) Train(X, T *mat.Dense, w []float64) (classify.Classifier, error) {
	c.largest = max(c.largest, mat.Norm(X, math.Inf(1)))
	return c.SoftmaxTrainer.Train(X, T, w)
}
