package dataset

import (
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/matfile"
	"github.com/dadil/dadil/npy"
)

// ReadNPY reads a domain from the .npy file at path, which must hold a
// 2-D array of features, one row per sample. The domain is unlabeled: a
// .npy file holds one array. opt is accepted for symmetry with the other
// readers and ignored.
func ReadNPY(path string, opt *ReadOptions) (*File, error) {
	a, err := npy.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	x, err := npyMatrix(a)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	return newFile(path, x, nil)
}

// npyMatrix returns the features held in a.
func npyMatrix(a *npy.Array) (*mat.Dense, error) {
	if len(a.Shape) != 2 {
		return nil, fmt.Errorf("features must be a 2-D array (samples × features), got shape %v", a.Shape)
	}
	if a.Shape[0] == 0 || a.Shape[1] == 0 {
		return nil, fmt.Errorf("features: no data (shape %v)", a.Shape)
	}
	x, err := a.Matrix()
	if err != nil {
		return nil, fmt.Errorf("features: %w", err)
	}
	return x, nil
}

// ReadNPZ reads a domain from the .npz archive at path. The features are
// the first array named in opt.FeaturesVar (default {"X"}) that the
// archive holds, a 2-D array with one row per sample; the labels are the
// first array named in opt.LabelsVar (default {"y"}), a vector of
// integers with one element per row: of shape (n,), (n, 1) or (1, n).
// Without a labels array the domain is unlabeled, unless opt.LabelsVar was
// set explicitly, in which case that is an error.
func ReadNPZ(path string, opt *ReadOptions) (*File, error) {
	o := options(opt)
	arrays, err := npy.ReadNPZ(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	keys := make([]string, 0, len(arrays))
	for k := range arrays {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	available := "the archive is empty"
	if len(keys) > 0 {
		available = "arrays: " + listNames(keys)
	}

	featNames, _ := names(o.FeaturesVar, defaultNPZFeatures)
	var x *mat.Dense
	for _, name := range featNames {
		if a, ok := arrays[name]; ok {
			if x, err = npyMatrix(a); err != nil {
				return nil, fmt.Errorf("dataset: %s: array %q: %w", path, name, err)
			}
			break
		}
	}
	if x == nil {
		return nil, fmt.Errorf("dataset: %s: no features array (tried %s; %s)", path, strings.Join(featNames, ", "), available)
	}
	if o.Unlabeled {
		return newFile(path, x, nil)
	}

	labelNames, explicit := names(o.LabelsVar, defaultNPZLabels)
	var labels []int
	for _, name := range labelNames {
		if a, ok := arrays[name]; ok {
			if labels, err = npyLabels(a); err != nil {
				return nil, fmt.Errorf("dataset: %s: array %q: %w", path, name, err)
			}
			break
		}
	}
	if labels == nil && explicit && !o.LabelsOptional {
		return nil, fmt.Errorf("dataset: %s: no labels array (tried %s; %s)", path, strings.Join(labelNames, ", "), available)
	}
	return newFile(path, x, labels)
}

// npyLabels returns the labels held in a.
func npyLabels(a *npy.Array) ([]int, error) {
	long := 0
	for _, d := range a.Shape {
		if d != 1 {
			long++
		}
	}
	if len(a.Shape) == 0 || len(a.Shape) > 2 || long > 1 {
		return nil, fmt.Errorf("labels must be a vector of shape (n,), (n, 1) or (1, n), got shape %v", a.Shape)
	}
	labels, err := a.Ints()
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	return labels, nil
}

// ReadMAT reads a domain from the MATLAB level-5 MAT-file at path (see
// package matfile). The features are the first variable named in
// opt.FeaturesVar (default {"feas", "fts", "X"}) that the file holds, a
// 2-D numeric array with one row per sample; the labels are the first
// variable named in opt.LabelsVar (default {"labels", "y"}), a numeric
// vector (n×1 or 1×n) of integers with one element per row. Without a
// labels variable the domain is unlabeled, unless opt.LabelsVar was set
// explicitly, in which case that is an error.
func ReadMAT(path string, opt *ReadOptions) (*File, error) {
	o := options(opt)
	f, err := matfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	var numeric []string
	for _, v := range f.Vars {
		if v.Numeric() {
			numeric = append(numeric, v.Name)
		}
	}
	available := "the file has no numeric variables"
	if len(numeric) > 0 {
		available = "numeric variables: " + listNames(numeric)
	}

	featNames, _ := names(o.FeaturesVar, defaultMATFeatures)
	var x *mat.Dense
	for _, name := range featNames {
		v, err := f.Lookup(name)
		if err != nil {
			continue
		}
		if x, err = v.Matrix(); err != nil {
			return nil, fmt.Errorf("dataset: %s: %w", path, err)
		}
		break
	}
	if x == nil {
		return nil, fmt.Errorf("dataset: %s: no features variable (tried %s; %s)", path, strings.Join(featNames, ", "), available)
	}
	if o.Unlabeled {
		return newFile(path, x, nil)
	}

	labelNames, explicit := names(o.LabelsVar, defaultMATLabels)
	var labels []int
	for _, name := range labelNames {
		v, err := f.Lookup(name)
		if err != nil {
			continue
		}
		if labels, err = v.Ints(); err != nil {
			return nil, fmt.Errorf("dataset: %s: labels: %w", path, err)
		}
		break
	}
	if labels == nil && explicit && !o.LabelsOptional {
		return nil, fmt.Errorf("dataset: %s: no labels variable (tried %s; %s)", path, strings.Join(labelNames, ", "), available)
	}
	return newFile(path, x, labels)
}
