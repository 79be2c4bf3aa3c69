package dataset

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// domainCells returns the cell arrays feature and label of three domains:
// domain k (from 1) has k+1 rows of 2 features, the row-major values
// 10k, 10k+1, …, and the labels k, k+1, ….
func domainCells() (feature, label matVar, x [][]float64, y [][]int) {
	feature = matVar{name: "feature", dims: []int{1, 3}, cell: true}
	label = matVar{name: "label", dims: []int{1, 3}, cell: true}
	for k := 1; k <= 3; k++ {
		n := k + 1
		xs := make([]float64, 2*n)
		for i := range xs {
			xs[i] = float64(10*k + i)
		}
		ys, yf := make([]int, n), make([]float64, n)
		for i := range ys {
			ys[i], yf[i] = k+i, float64(k+i)
		}
		feature.cells = append(feature.cells, matVar{dims: []int{n, 2}, vals: colMajor(n, 2, xs)})
		label.cells = append(label.cells, matVar{dims: []int{n, 1}, vals: yf, store: 2})
		x, y = append(x, xs), append(y, ys)
	}
	return feature, label, x, y
}

func TestReadMATCells(t *testing.T) {
	feature, label, x, y := domainCells()
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprint("compress=", compress), func(t *testing.T) {
			path := writeMAT(t, t.TempDir(), "fields.mat", compress, feature, label)
			files, err := ReadMATCells(path, "feature", "label")
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 3 {
				t.Fatalf("%d files", len(files))
			}
			for k, d := range files {
				if d.Name != fmt.Sprintf("fields{%d}", k+1) || d.Path != path {
					t.Errorf("name %q, path %q", d.Name, d.Path)
				}
				if got := dense(d.X); !slices.Equal(got, x[k]) || !slices.Equal(d.Labels, y[k]) {
					t.Errorf("domain %d: features %v labels %v, want %v %v", k+1, got, d.Labels, x[k], y[k])
				}
			}
			unlabeled, err := ReadMATCells(path, "feature", "")
			if err != nil || len(unlabeled) != 3 || unlabeled[2].Labels != nil {
				t.Fatalf("unlabeled: %v", err)
			}

			// One domain, by cell index, through ReadMAT and Read.
			d, err := Read(path, &ReadOptions{FeaturesVar: []string{"feature{2}"}, LabelsVar: []string{"label{2}"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := dense(d.X); !slices.Equal(got, x[1]) || !slices.Equal(d.Labels, y[1]) || d.Name != "fields" {
				t.Errorf("feature{2}: %v %v, name %q", got, d.Labels, d.Name)
			}
			// Default names: the error points at the cells.
			_, err = ReadMAT(path, nil)
			errContains(t, err, "no features variable (tried feas, fts, X; the file has no numeric variables); it has cell arrays feature, label: name one cell, such as feature{1}")
		})
	}
}

func TestReadMATCellErrors(t *testing.T) {
	dir := t.TempDir()
	feature, label, _, _ := domainCells()
	n := 0
	write := func(vars ...matVar) string {
		n++
		return writeMAT(t, dir, fmt.Sprintf("c%d.mat", n), n%2 == 0, vars...)
	}
	with := func(v matVar, k int, c matVar) matVar {
		v.cells = slices.Clone(v.cells)
		v.cells[k] = c
		return v
	}
	short := label
	short.dims, short.cells = []int{1, 2}, label.cells[:2]
	good := write(feature, label)
	numeric := matVar{name: "X", dims: []int{2, 2}, vals: []float64{1, 2, 3, 4}}

	cellTests := []struct {
		name, path, features, labels, want string
	}{
		{"labels count", write(feature, short), "feature", "label", "cell array feature has 3 cells, label has 2"},
		{"not a cell array", write(numeric, label), "X", "label", "matfile: variable X is a double array, not a cell array"},
		{"missing", good, "feas", "label", `matfile: ` + dir + `/c1.mat: no variable "feas"`},
		{"no cells", write(matVar{name: "feature", dims: []int{0, 0}, cell: true}), "feature", "", "cell array feature has no cells"},
		{"empty cell", write(with(feature, 1, matVar{dims: []int{0, 0}}), label), "feature", "label", "variable feature{2} is empty (0x0)"},
		{"NaN", write(with(feature, 2, matVar{dims: []int{1, 2}, vals: []float64{1, math.NaN()}}), label), "feature", "", "c6.mat: feature{3}: features: row 1, column 2 is NaN"},
		{"rows", write(feature, with(label, 0, matVar{dims: []int{1, 1}, vals: []float64{1}})), "feature", "label", "c7.mat: feature{1}: 1 labels for 2 rows of features"},
		{"fractional labels", write(feature, with(label, 0, matVar{dims: []int{2, 1}, vals: []float64{1, 1.5}})), "feature", "label", "labels: matfile: variable label{1}: element 2 is 1.5, not an integer"},
	}
	for _, tc := range cellTests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := ReadMATCells(tc.path, tc.features, tc.labels)
			errContains(t, err, tc.want)
			if !strings.HasPrefix(err.Error(), "dataset: ") || files != nil {
				t.Fatalf("error %q, files %v", err, files)
			}
		})
	}

	matTests := []struct {
		name, features, labels, want string
	}{
		{"past the last cell", "feature{4}", "label{1}", "dataset: matfile: " + good + ": variable feature has 3 cells; there is no feature{4}"},
		{"labels past the last cell", "feature{1}", "label{9}", "variable label has 3 cells; there is no label{9}"},
		{"not a cell array", "feature{1}", "label{1}{1}", "no labels variable (tried label{1}{1}; the file has no numeric variables)"},
		{"rows", "feature{1}", "label{2}", "3 labels for 2 rows of features"},
	}
	for _, tc := range matTests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadMAT(good, &ReadOptions{FeaturesVar: []string{tc.features}, LabelsVar: []string{tc.labels}})
			errContains(t, err, tc.want)
		})
	}
}
