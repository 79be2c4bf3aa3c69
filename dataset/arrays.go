package dataset

import (
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/clip"
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
// set explicitly, in which case that is an error. Only the features and
// labels members are read (see npy.OpenNPZ): other members, whatever
// they hold or declare, are never decompressed.
func ReadNPZ(path string, opt *ReadOptions) (*File, error) {
	o := options(opt)
	z, err := npy.OpenNPZ(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer z.Close()
	keys := z.Names()
	slices.Sort(keys)
	available := "the archive is empty"
	if len(keys) > 0 {
		available = "arrays: " + listNames(keys)
	}
	// array reads the first of names that the archive holds, and only
	// that member: the others are never decompressed.
	array := func(names []string) (string, *npy.Array, error) {
		for _, name := range names {
			if _, ok := slices.BinarySearch(keys, name); ok {
				a, err := z.Array(name)
				if err != nil {
					return "", nil, fmt.Errorf("dataset: %w", err)
				}
				return name, a, nil
			}
		}
		return "", nil, nil
	}

	featNames, _ := names(o.FeaturesVar, defaultNPZFeatures)
	name, a, err := array(featNames)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, fmt.Errorf("dataset: %s: no features array (tried %s; %s)", path, listNames(featNames), available)
	}
	x, err := npyMatrix(a)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: array %s: %w", path, clip.Quote(name), err)
	}
	if o.Unlabeled {
		return newFile(path, x, nil)
	}

	labelNames, explicit := names(o.LabelsVar, defaultNPZLabels)
	name, a, err = array(labelNames)
	if err != nil {
		return nil, err
	}
	var labels []int
	if a != nil {
		if labels, err = npyLabels(a); err != nil {
			return nil, fmt.Errorf("dataset: %s: array %s: %w", path, clip.Quote(name), err)
		}
	} else if explicit && !o.LabelsOptional {
		return nil, fmt.Errorf("dataset: %s: no labels array (tried %s; %s)", path, listNames(labelNames), available)
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
//
// A name may select one cell of a cell array with MATLAB's notation and a
// linear index from 1, "feature{3}" (see matfile.File.Lookup), to read one
// domain of a file that stores a domain per cell; ReadMATCells reads them
// all. Only the variables used are decompressed.
func ReadMAT(path string, opt *ReadOptions) (*File, error) {
	o := options(opt)
	f, err := matfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	var numeric, cells []string
	for _, v := range f.Vars {
		switch {
		case v.Numeric():
			numeric = append(numeric, v.Name)
		case v.Class == "cell":
			cells = append(cells, v.Name)
		}
	}
	available := "the file has no numeric variables"
	if len(numeric) > 0 {
		available = "numeric variables: " + listNames(numeric)
	}
	hint := ""
	if len(cells) > 0 {
		hint = fmt.Sprintf("; it has cell arrays %s: name one cell, such as %s{1}", listNames(cells), clip.Name(cells[0]))
	}
	// lookup returns the first of names that the file holds, or nil.
	lookup := func(names []string) (*matfile.Var, error) {
		for _, name := range names {
			v, err := f.Lookup(name)
			if errors.Is(err, matfile.ErrNotFound) {
				continue
			}
			if err != nil {
				// A cell index past the end, or of a variable that
				// is not a cell array.
				return nil, fmt.Errorf("dataset: %w", err)
			}
			return v, nil
		}
		return nil, nil
	}

	featNames, _ := names(o.FeaturesVar, defaultMATFeatures)
	v, err := lookup(featNames)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("dataset: %s: no features variable (tried %s; %s)%s", path, listNames(featNames), available, hint)
	}
	x, err := v.Matrix()
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	if o.Unlabeled {
		return newFile(path, x, nil)
	}

	labelNames, explicit := names(o.LabelsVar, defaultMATLabels)
	if v, err = lookup(labelNames); err != nil {
		return nil, err
	}
	var labels []int
	if v != nil {
		if labels, err = v.Ints(); err != nil {
			return nil, fmt.Errorf("dataset: %s: labels: %w", path, err)
		}
	} else if explicit && !o.LabelsOptional {
		return nil, fmt.Errorf("dataset: %s: no labels variable (tried %s; %s)%s", path, listNames(labelNames), available, hint)
	}
	return newFile(path, x, labels)
}

// ReadMATCells reads the domains of the MAT-file at path that stores one
// domain per cell: featuresVar names a cell array whose cells are 2-D
// numeric features, one row per sample, and labelsVar, unless empty, a
// cell array of as many label vectors (n×1 or 1×n integers, one per row of
// the features of the same cell). It returns one File per cell, in cell
// order (column-major, MATLAB's linear indexing), named after the file's
// base name and the cell's index from 1, "LandmineData{3}", with Path set
// to path. Each domain is checked as ReadMAT checks one, and errors name
// the cell. A file whose featuresVar is a numeric array, not a cell array,
// is an error: read it with ReadMAT.
func ReadMATCells(path, featuresVar, labelsVar string) ([]*File, error) {
	f, err := matfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	cells := func(name string) ([]*matfile.Var, error) {
		v, err := f.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("dataset: %w", err)
		}
		c, err := v.Cells()
		if err != nil {
			return nil, fmt.Errorf("dataset: %s: %w", path, err)
		}
		return c, nil
	}
	xs, err := cells(featuresVar)
	if err != nil {
		return nil, err
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("dataset: %s: cell array %s has no cells", path, clip.Name(featuresVar))
	}
	var ys []*matfile.Var
	if labelsVar != "" {
		if ys, err = cells(labelsVar); err != nil {
			return nil, err
		}
		if len(ys) != len(xs) {
			return nil, fmt.Errorf("dataset: %s: cell array %s has %d cells, %s has %d", path, clip.Name(featuresVar), len(xs), clip.Name(labelsVar), len(ys))
		}
	}
	files := make([]*File, len(xs))
	for k, xv := range xs {
		x, err := xv.Matrix()
		if err != nil {
			return nil, fmt.Errorf("dataset: %s: %w", path, err)
		}
		var labels []int
		if ys != nil {
			if labels, err = ys[k].Ints(); err != nil {
				return nil, fmt.Errorf("dataset: %s: labels: %w", path, err)
			}
		}
		// newFile names the file in its messages: name the cell too.
		d, err := newFile(path+": "+xv.Name, x, labels)
		if err != nil {
			return nil, err
		}
		d.Name, d.Path = fmt.Sprintf("%s{%d}", baseName(path), k+1), path
		files[k] = d
	}
	return files, nil
}
