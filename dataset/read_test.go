package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dadil/dadil/npy"
)

func TestReadCSV(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		opt    *ReadOptions
		x      []float64 // row-major
		r, c   int
		labels []int
	}{
		{"labeled", "f1,f2,label\n1,2,0\n3.5,-4e-2,1\n", nil, []float64{1, 2, 3.5, -0.04}, 2, 2, []int{0, 1}},
		{"label first", "label,a,b\n7,1,2\n-3,3,4\n", nil, []float64{1, 2, 3, 4}, 2, 2, []int{7, -3}},
		{"no label column", "a,b\n1,2\n3,4\n", nil, []float64{1, 2, 3, 4}, 2, 2, nil},
		{"custom label column", "a,y,b\n1,5,2\n3,6,4\n", &ReadOptions{LabelColumn: "y"}, []float64{1, 2, 3, 4}, 2, 2, []int{5, 6}},
		{"unlabeled drops the column", "a,label,b\n1,x,2\n3,,4\n", &ReadOptions{Unlabeled: true}, []float64{1, 2, 3, 4}, 2, 2, nil},
		{"unlabeled explicit missing", "a,b\n1,2\n", &ReadOptions{LabelColumn: "y", Unlabeled: true}, []float64{1, 2}, 1, 2, nil},
		{"spaces and quotes", " a ,  \"b\",label\n 1 ,\" 2\", 3 \n", nil, []float64{1, 2}, 1, 2, []int{3}},
		{"CRLF and trailing blank lines", "a,label\r\n1,2\r\n\r\n\r\n", nil, []float64{1}, 1, 1, []int{2}},
		{"blank lines between rows", "a,b\n1,2\n\n3,4\n   \n", nil, []float64{1, 2, 3, 4}, 2, 2, nil},
		{"no final newline", "a,label\n1,2", nil, []float64{1}, 1, 1, []int{2}},
		{"BOM", "\xef\xbb\xbfa,label\n1,2\n", nil, []float64{1}, 1, 1, []int{2}},
		{"integral float labels", "a,label\n1,3.0\n2,-1e1\n", nil, []float64{1, 2}, 2, 1, []int{3, -10}},
		{"big integer label", "a,label\n1,9007199254740993\n", nil, []float64{1}, 1, 1, []int{9007199254740993}},
		{"underflow to zero", "a\n1e-400\n", nil, []float64{0}, 1, 1, nil},
		{"one column", "x\n1\n2\n3\n", nil, []float64{1, 2, 3}, 3, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "src.csv", []byte(tc.text))
			d, err := ReadCSV(path, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if r, c := d.X.Dims(); r != tc.r || c != tc.c {
				t.Fatalf("dims %d×%d, want %d×%d", r, c, tc.r, tc.c)
			}
			if got := dense(d.X); !slices.Equal(got, tc.x) {
				t.Fatalf("features %v, want %v", got, tc.x)
			}
			if !slices.Equal(d.Labels, tc.labels) || (d.Labels == nil) != (tc.labels == nil) {
				t.Fatalf("labels %v, want %v", d.Labels, tc.labels)
			}
			if d.Name != "src" || d.Path != path || d.Labeled() != (tc.labels != nil) {
				t.Fatalf("name %q path %q", d.Name, d.Path)
			}
		})
	}
}

func TestReadCSVErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		opt  *ReadOptions
		want string
	}{
		{"empty file", "", nil, "src.csv: empty file: want a header row naming the columns"},
		{"only blank lines", "\n\n\n", nil, "src.csv: empty file"},
		{"header only", "a,b,label\n", nil, "src.csv: no data rows: the file has only the header"},
		{"header and blank lines", "a,b\n\n\n", nil, "no data rows"},
		{"not a number", "f1,f2,f3\n1,2,3\n4,5,abc\n", nil, `src.csv: line 3, column "f3": "abc" is not a number`},
		{"not a number at line 17", "f1,f2,f3\n" + strings.Repeat("1,2,3\n", 15) + "4,5,abc\n", nil, `src.csv: line 17, column "f3": "abc" is not a number`},
		{"NaN", "a,b\n1,NaN\n", nil, `src.csv: line 2, column "b": "NaN" is a missing value: choose a missing-value policy`},
		{"infinite", "a,b\n1,-Inf\n", nil, `src.csv: line 2, column "b": "-Inf" is not a finite number`},
		{"Inf", "a,b\n1,2\n-inf,1\n", nil, `line 3, column "a": "-inf" is not a finite number`},
		{"overflow", "a,b\n1,1e999\n", nil, `line 2, column "b": "1e999" is outside the float64 range`},
		{"empty value", "a,b\n1,\n", nil, `line 2, column "b": empty value`},
		{"ragged short", "a,b,c\n1,2,3\n1,2\n", nil, "src.csv: line 3: 2 fields, the header has 3 columns"},
		{"ragged long", "a,b\n1,2,3\n", nil, "line 2: 3 fields, the header has 2 columns"},
		{"duplicate columns", "a,b,a\n1,2,3\n", nil, `src.csv: line 1: columns 1 and 3 are both named "a"`},
		{"duplicate after trim", "a, a\n1,2\n", nil, `columns 1 and 2 are both named "a"`},
		{"numbers as header", "0,1,0\n1,0,1\n", nil, `columns 1 and 3 are both named "0" (the first row holds only numbers: if it is data, the file has no header row`},
		{"pandas index", ",a,b\n0,1,2\n", nil, "line 1: column 1 has an empty name"},
		{"fractional label", "a,label\n1,2.5\n", nil, `src.csv: line 2, column "label": label "2.5" is not an integer`},
		{"huge cell", "f1,f2\n1," + strings.Repeat("x", 5000) + "\n", nil, `"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"… (5000 bytes) is not a number`},
		{"text label", "a,label\n1,cat\n", nil, `line 2, column "label": label "cat" is not an integer`},
		{"NaN label", "a,label\n1,nan\n", nil, `label "nan" is not an integer`},
		{"empty label", "a,label\n1,\n", nil, `line 2, column "label": empty label`},
		{"huge label", "a,label\n1,1e300\n", nil, `label "1e300" is too large`},
		{"explicit label column missing", "a,b\n1,2\n", &ReadOptions{LabelColumn: "y"}, `src.csv: no label column "y" (columns: a, b)`},
		{"only the label column", "label\n1\n", nil, `no feature columns: the only column is the label column "label"`},
		{"bad quotes", "a,b\n1,\"2\n", nil, "src.csv: line 2, column"},
		{"bare quote", "a,b\n1,2\"3\n", nil, "malformed CSV"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "src.csv", []byte(tc.text))
			d, err := ReadCSV(path, tc.opt)
			errContains(t, err, tc.want)
			if !strings.HasPrefix(err.Error(), "dataset: "+path) {
				t.Fatalf("error %q does not start with the path", err)
			}
			if d != nil {
				t.Fatal("non-nil domain with error")
			}
		})
	}
	_, err := ReadCSV(filepath.Join(t.TempDir(), "missing.csv"), nil)
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "dataset: open ") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestReadNPY(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, shape []int, data []float64) string {
		path := filepath.Join(dir, name)
		if err := npy.WriteFile(path, shape, data); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.npy", []int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	d, err := ReadNPY(good, &ReadOptions{LabelsVar: []string{"ignored"}})
	if err != nil {
		t.Fatal(err)
	}
	if r, c := d.X.Dims(); r != 2 || c != 3 || d.Labels != nil || d.Name != "good" {
		t.Fatalf("got %d×%d, labels %v, name %q", r, c, d.Labels, d.Name)
	}
	if got := dense(d.X); !slices.Equal(got, []float64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("got %v", got)
	}

	tests := []struct {
		name string
		path string
		want string
	}{
		{"1-D", write("v.npy", []int{3}, []float64{1, 2, 3}), "v.npy: features must be a 2-D array (samples × features), got shape [3]"},
		{"3-D", write("t.npy", []int{1, 2, 1}, []float64{1, 2}), "got shape [1 2 1]"},
		{"no rows", write("e.npy", []int{0, 3}, nil), "e.npy: features: no data (shape [0 3])"},
		{"no columns", write("f.npy", []int{3, 0}, nil), "features: no data (shape [3 0])"},
		{"NaN", write("n.npy", []int{2, 2}, []float64{1, 2, 3, math.NaN()}), "n.npy: features: row 2, column 2 is NaN (rows and columns count from 1)"},
		{"Inf", write("i.npy", []int{2, 2}, []float64{math.Inf(-1), 2, 3, 4}), "features: row 1, column 1 is -Inf"},
		{"not npy", writeFile(t, dir, "bad.npy", []byte("hello")), "dataset: npy: "},
		{"missing", filepath.Join(dir, "missing.npy"), "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadNPY(tc.path, nil)
			errContains(t, err, tc.want)
			if !strings.HasPrefix(err.Error(), "dataset: ") {
				t.Fatalf("error %q lacks the prefix", err)
			}
		})
	}
}

func TestReadNPZ(t *testing.T) {
	dir := t.TempDir()
	n := 0
	write := func(arrays map[string]*npy.Array) string {
		n++
		path := filepath.Join(dir, fmt.Sprintf("d%d.npz", n))
		if err := npy.WriteNPZ(path, arrays); err != nil {
			t.Fatal(err)
		}
		return path
	}
	X := &npy.Array{Shape: []int{3, 2}, Data: []float64{1, 2, 3, 4, 5, 6}}
	y := &npy.Array{Shape: []int{3}, Data: []float64{2, 0, 2}}
	tests := []struct {
		name   string
		path   string
		opt    *ReadOptions
		labels []int
		want   string // error
	}{
		{"X and y", write(map[string]*npy.Array{"X": X, "y": y}), nil, []int{2, 0, 2}, ""},
		{"column labels", write(map[string]*npy.Array{"X": X, "y": {Shape: []int{3, 1}, Data: []float64{1, 2, 3}}}), nil, []int{1, 2, 3}, ""},
		{"row labels", write(map[string]*npy.Array{"X": X, "y": {Shape: []int{1, 3}, Data: []float64{1, 2, 3}}}), nil, []int{1, 2, 3}, ""},
		{"unlabeled file", write(map[string]*npy.Array{"X": X}), nil, nil, ""},
		{"unlabeled option", write(map[string]*npy.Array{"X": X, "y": {Shape: []int{2}, Data: []float64{0.5, 1}}}), &ReadOptions{Unlabeled: true}, nil, ""},
		{"custom names", write(map[string]*npy.Array{"feats": X, "lab": y, "X": {Shape: []int{1, 1}, Data: []float64{0}}}), &ReadOptions{FeaturesVar: []string{"none", "feats"}, LabelsVar: []string{"lab"}}, []int{2, 0, 2}, ""},
		{"no features", write(map[string]*npy.Array{"a": X, "b": y}), nil, nil, "no features array (tried X; arrays: a, b)"},
		{"explicit labels missing", write(map[string]*npy.Array{"X": X}), &ReadOptions{LabelsVar: []string{"labels"}}, nil, "no labels array (tried labels; arrays: X)"},
		{"1-D features", write(map[string]*npy.Array{"X": y}), nil, nil, `array "X": features must be a 2-D array`},
		{"matrix labels", write(map[string]*npy.Array{"X": X, "y": {Shape: []int{3, 2}, Data: make([]float64, 6)}}), nil, nil, `array "y": labels must be a vector of shape (n,), (n, 1) or (1, n), got shape [3 2]`},
		{"scalar labels", write(map[string]*npy.Array{"X": X, "y": {Shape: []int{}, Data: []float64{1}}}), nil, nil, "labels must be a vector"},
		{"fractional labels", write(map[string]*npy.Array{"X": X, "y": {Shape: []int{3}, Data: []float64{1, 1.5, 2}}}), nil, nil, `array "y": labels: npy: value at index 1 is 1.5, not an integer`},
		{"label count", write(map[string]*npy.Array{"X": X, "y": {Shape: []int{2}, Data: []float64{1, 2}}}), nil, nil, "2 labels for 3 rows of features"},
		{"NaN features", write(map[string]*npy.Array{"X": {Shape: []int{1, 2}, Data: []float64{1, math.NaN()}}}), nil, nil, "features: row 1, column 2 is NaN"},
		{"not a zip", writeFile(t, dir, "bad.npz", []byte("not a zip")), nil, nil, "dataset: npy: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadNPZ(tc.path, tc.opt)
			if tc.want != "" {
				errContains(t, err, tc.want)
				if !strings.HasPrefix(err.Error(), "dataset: ") {
					t.Fatalf("error %q lacks the prefix", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.Labels, tc.labels) || (d.Labels == nil) != (tc.labels == nil) {
				t.Fatalf("labels %v, want %v", d.Labels, tc.labels)
			}
			if got := dense(d.X); !slices.Equal(got, X.Data) {
				t.Fatalf("features %v", got)
			}
		})
	}
}

func TestReadMAT(t *testing.T) {
	dir := t.TempDir()
	// Row-major 3×2 features and labels.
	x := []float64{1, 2, 3, 4, 5, 6}
	feas := matVar{name: "feas", dims: []int{3, 2}, vals: colMajor(3, 2, x)}
	fts := matVar{name: "fts", dims: []int{3, 2}, vals: colMajor(3, 2, x), store: 2}
	labels := matVar{name: "labels", dims: []int{3, 1}, vals: []float64{1, 2, 10}, store: 2}
	rowLabels := matVar{name: "labels", dims: []int{1, 3}, vals: []float64{1, 2, 10}}
	n := 0
	write := func(compress bool, vars ...matVar) string {
		n++
		return writeMAT(t, dir, fmt.Sprintf("m%d.mat", n), compress, vars...)
	}
	tests := []struct {
		name   string
		path   string
		opt    *ReadOptions
		labels []int
		want   string // error
	}{
		{"feas labels", write(false, feas, labels), nil, []int{1, 2, 10}, ""},
		{"compressed fts uint8 storage", write(true, fts, labels), nil, []int{1, 2, 10}, ""},
		{"row labels", write(true, fts, rowLabels), nil, []int{1, 2, 10}, ""},
		{"y labels", write(false, feas, matVar{name: "y", dims: []int{3, 1}, vals: []float64{0, 0, 1}}), nil, []int{0, 0, 1}, ""},
		{"feas before fts", write(false, matVar{name: "fts", dims: []int{1, 1}, vals: []float64{9}}, feas), nil, nil, ""},
		{"unlabeled file", write(false, fts), nil, nil, ""},
		{"unlabeled option", write(false, fts, matVar{name: "labels", dims: []int{3, 1}, vals: []float64{0.5, 1, 2}}), &ReadOptions{Unlabeled: true}, nil, ""},
		{"custom names", write(true, matVar{name: "fea", dims: []int{3, 2}, vals: colMajor(3, 2, x)}, matVar{name: "gnd", dims: []int{3, 1}, vals: []float64{4, 4, 4}}),
			&ReadOptions{FeaturesVar: []string{"fea"}, LabelsVar: []string{"gnd"}}, []int{4, 4, 4}, ""},
		{"no features", write(false, labels, matVar{name: "names", dims: []int{3, 1}, cell: true}), nil, nil, "no features variable (tried feas, fts, X; numeric variables: labels)"},
		{"cell features", write(false, matVar{name: "X", dims: []int{3, 1}, cell: true}), nil, nil, "matfile: variable X is a cell array, not a numeric array"},
		{"3-D features", write(false, matVar{name: "X", dims: []int{1, 2, 3}, vals: make([]float64, 6)}), nil, nil, "variable X has 3 dimensions (1x2x3)"},
		{"empty features", write(false, matVar{name: "X", dims: []int{0, 4}}), nil, nil, "variable X is empty (0x4)"},
		{"NaN features", write(false, matVar{name: "X", dims: []int{2, 2}, vals: []float64{1, 2, math.NaN(), 4}}), nil, nil, "features: row 1, column 2 is NaN"},
		{"matrix labels", write(false, feas, matVar{name: "labels", dims: []int{3, 2}, vals: make([]float64, 6)}), nil, nil, "labels: matfile: variable labels is a 3x2 array; want a vector"},
		{"fractional labels", write(false, feas, matVar{name: "labels", dims: []int{3, 1}, vals: []float64{1, 2.5, 3}}), nil, nil, "labels: matfile: variable labels: element 2 is 2.5, not an integer"},
		{"label count", write(false, feas, matVar{name: "labels", dims: []int{2, 1}, vals: []float64{1, 2}}), nil, nil, "2 labels for 3 rows of features"},
		{"explicit labels missing", write(false, feas), &ReadOptions{LabelsVar: []string{"gnd"}}, nil, "no labels variable (tried gnd; numeric variables: feas)"},
		{"v7.3", writeFile(t, dir, "v73.mat", append([]byte("MATLAB 7.3 MAT-file"), make([]byte, 600)...)), nil, nil, "MATLAB v7.3 (HDF5) file: save it with -v7"},
		{"missing", filepath.Join(dir, "missing.mat"), nil, nil, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadMAT(tc.path, tc.opt)
			if tc.want != "" {
				errContains(t, err, tc.want)
				if !strings.HasPrefix(err.Error(), "dataset: ") {
					t.Fatalf("error %q lacks the prefix", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.Labels, tc.labels) || (d.Labels == nil) != (tc.labels == nil) {
				t.Fatalf("labels %v, want %v", d.Labels, tc.labels)
			}
			if got := dense(d.X); !slices.Equal(got, x) {
				t.Fatalf("features %v, want %v", got, x)
			}
		})
	}
}

func TestReadDispatch(t *testing.T) {
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "a.CSV", []byte("x,label\n1,1\n"))
	npyPath := filepath.Join(dir, "b.npy")
	if err := npy.WriteFile(npyPath, []int{1, 1}, []float64{1}); err != nil {
		t.Fatal(err)
	}
	npzPath := filepath.Join(dir, "c.npz")
	if err := npy.WriteNPZ(npzPath, map[string]*npy.Array{"X": {Shape: []int{1, 1}, Data: []float64{1}}}); err != nil {
		t.Fatal(err)
	}
	matPath := writeMAT(t, dir, "d.mat", true, matVar{name: "X", dims: []int{1, 1}, vals: []float64{1}})
	for path, name := range map[string]string{csvPath: "a", npyPath: "b", npzPath: "c", matPath: "d"} {
		d, err := Read(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d.Name != name || d.Path != path || d.X.At(0, 0) != 1 {
			t.Fatalf("%s: name %q", path, d.Name)
		}
	}
	_, err := Read(filepath.Join(dir, "x.doc"), nil)
	errContains(t, err, `x.doc: unknown file type ".doc" (want .csv, .txt, .data, .npy, .npz or .mat)`)
	_, err = Read(filepath.Join(dir, "noext"), nil)
	errContains(t, err, "noext: no file name extension")
}
