package modelfile

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
)

// imputed returns the test model with an imputer that reads 4 raw columns
// a, b, c, d and keeps b and d, the model's 2 features.
func imputed(t testing.TB) *File {
	f := *testFile(t)
	f.Imputer = &dataset.Imputer{Features: 4, Keep: []int{1, 3}, Fill: []float64{0.5, -2}}
	f.Features = []string{"b", "d"}
	return &f
}

func TestImputerRoundTrip(t *testing.T) {
	f := imputed(t)
	path := filepath.Join(t.TempDir(), "model.dadil")
	g := saveLoad(t, path, f)
	if im := g.Imputer; im == nil || im.Features != 4 || !slices.Equal(im.Keep, f.Imputer.Keep) || !slices.Equal(im.Fill, f.Imputer.Fill) {
		t.Fatalf("imputer %+v after a round trip, want %+v", im, f.Imputer)
	}
	if !slices.Equal(g.Features, f.Features) {
		t.Errorf("features %q", g.Features)
	}
	b, _ := os.ReadFile(path)
	if man := readManifest(t, b); man["raw_features"] != 4.0 || man["features"] != 2.0 {
		t.Errorf("manifest raw_features %v, features %v", man["raw_features"], man["features"])
	}
	// A model fitted on complete data has none, and its manifest says
	// nothing of raw features.
	if man := readManifest(t, encoded(t, testFile(t))); man["raw_features"] != nil {
		t.Errorf("raw_features %v without an imputer", man["raw_features"])
	}
	if g, err := Read(encoded(t, testFile(t))); err != nil || g.Imputer != nil {
		t.Errorf("imputer %+v, %v", g.Imputer, err)
	}
}

// writeData writes a CSV file of a header and rows in dir.
func writeData(t *testing.T, dir, name, header string, rows ...string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(header+"\n"+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadDataImputer: new data is read with the raw columns, completed by
// the imputer and then scaled.
func TestReadDataImputer(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.dadil")
	f := saveLoad(t, path, imputed(t))
	// Column a and c are dropped: their missing values do not matter.
	data := writeData(t, dir, "new.csv", "a,b,c,d,label",
		"?,1,,2,10",
		"7,?,8,NA,30",
		"NaN,3,?,4,20")
	d, unknown, err := f.ReadData(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(3, 2, []float64{1, 2, 0.5, -2, 3, 4})
	if err := f.Scaler.Transform(want, want); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(d.X, want) || !slices.Equal(d.Y, []int{0, 2, 1}) || unknown != nil {
		t.Errorf("read\n%v, labels %v, unknown %v; want\n%v", mat.Formatted(d.X), d.Y, unknown, mat.Formatted(want))
	}
	// The names of the dropped columns are not checked; those of the kept
	// ones are, at their raw positions.
	if _, _, err := f.ReadData(writeData(t, dir, "renamed.csv", "z,b,y,d", "1,2,3,4"), nil); err != nil {
		t.Errorf("renamed dropped columns: %v", err)
	}
	for _, tc := range []struct {
		name, header, row, want string
	}{
		{"kept renamed", "a,b,c,x", "1,2,3,4", fmt.Sprintf(`column 4 is "x", but the model %s was fitted with "d" there`, path)},
		{"kept columns", "a,b,c", "1,2,3", fmt.Sprintf("has 3 features but the model %s was fitted on 4 (and keeps 2 of them: features that missed values in training were dropped)", path)},
		{"model's features", "b,d", "1,2", "has 2 features but the model"},
		{"infinite", "a,b,c,d", "1,inf,3,4", `column "b": "inf" is not a finite number`},
	} {
		_, _, err := f.ReadData(writeData(t, dir, tc.name+".csv", tc.header, tc.row), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	// A model without an imputer refuses missing values, whatever the
	// options say.
	plain := saveLoad(t, filepath.Join(dir, "plain.dadil"), testFile(t))
	holes := writeData(t, dir, "holes.csv", "x,y", "1,?", "2,3")
	if _, _, err := plain.ReadData(holes, &dataset.ReadOptions{AllowMissing: true}); err == nil {
		t.Error("a model without an imputer reads missing values")
	}
	if d, _, err := plain.ReadData(writeData(t, dir, "full.csv", "x,y", "1,2", "2,3"), nil); err != nil || d.X.RawMatrix().Rows != 2 {
		t.Errorf("complete data: %v", err)
	}
}

func TestCorruptedImputer(t *testing.T) {
	good := encoded(t, imputed(t))
	plain := encoded(t, testFile(t))
	vec := func(x ...float64) []byte { return npyOf(t, []int{len(x)}, x) }
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"raw below features", withManifest(t, good, func(v map[string]any) { v["raw_features"] = 1 }), "manifest: 1 raw features for 2 features"},
		{"no raw features", withManifest(t, good, func(v map[string]any) { delete(v, "raw_features") }), "member imputer_keep.npy, but the manifest has no raw_features"},
		{"no members", withManifest(t, plain, func(v map[string]any) { v["raw_features"] = 4 }), "member imputer_keep.npy is missing"},
		{"no fill", rewrite(t, good, "imputer_fill.npy", nil), "member imputer_fill.npy is missing"},
		{"keep length", rewrite(t, good, "imputer_keep.npy", vec(0, 1, 2)), "imputer_keep.npy has shape [3], want (2,)"},
		{"keep order", rewrite(t, good, "imputer_keep.npy", vec(3, 1)), "imputer_keep.npy: the kept columns do not increase: 1 after 3"},
		{"keep twice", rewrite(t, good, "imputer_keep.npy", vec(1, 1)), "the kept columns do not increase: 1 after 1"},
		{"keep range", rewrite(t, good, "imputer_keep.npy", vec(1, 4)), "imputer_keep.npy: entry 1 is 4, not an integer in [0, 3]"},
		{"keep negative", rewrite(t, good, "imputer_keep.npy", vec(-1, 2)), "entry 0 is -1, not an integer in [0, 3]"},
		{"keep fraction", rewrite(t, good, "imputer_keep.npy", vec(0.5, 2)), "entry 0 is 0.5, not an integer"},
		{"fill NaN", rewrite(t, good, "imputer_fill.npy", vec(math.NaN(), 1)), "imputer_fill.npy: entry 0 is NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Save refuses what Read would, and what it cannot write.
	dir := t.TempDir()
	for _, tc := range []struct {
		im   dataset.Imputer
		want string
	}{
		{dataset.Imputer{Features: 0, Keep: []int{0, 1}, Fill: []float64{0, 0}}, "the imputer reads 0 raw features"},
		{dataset.Imputer{Features: 3, Keep: []int{0}, Fill: []float64{0}}, "imputer_keep.npy has shape [1], want (2,)"},
		{dataset.Imputer{Features: 3, Keep: []int{0, 1}, Fill: []float64{0, math.Inf(1)}}, "imputer_fill.npy: entry 1 is +Inf"},
	} {
		f := imputed(t)
		f.Imputer = &tc.im
		if err := Save(filepath.Join(dir, "m.dadil"), f); err == nil || !strings.HasPrefix(err.Error(), "modelfile: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.im, err, tc.want)
		}
	}
	// A File made by hand with an inconsistent imputer is refused by
	// ReadData rather than applied.
	f := imputed(t)
	f.Imputer = &dataset.Imputer{Features: 4, Keep: []int{1, 9}, Fill: []float64{0, 0}}
	data := writeData(t, dir, "d.csv", "a,b,c,d", "1,2,3,4")
	if _, _, err := f.ReadData(data, nil); err == nil || !strings.Contains(err.Error(), "the imputer keeps column 9, outside [0, 4)") {
		t.Errorf("error %v", err)
	}
}
