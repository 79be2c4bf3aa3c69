package dataset

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/clip"
)

// File is the content of one data file as read: features and the user's
// label values, if any. Classes.Encode turns the label values into the
// class indices of a Domain.
type File struct {
	// Name identifies the file in messages, for example its base name
	// without its extension.
	Name string

	// Path is the file's path, or "" if the content was built in
	// memory.
	Path string

	// X holds the n×d features, one row per sample.
	X *mat.Dense

	// Labels holds the user's label values, any integers, one per row
	// of X; it is nil when the file has none.
	Labels []int

	// Features names the columns of X when the file does (a CSV header);
	// it is nil otherwise.
	Features []string
}

// Labeled reports whether the file has labels.
func (d *File) Labeled() bool {
	return d.Labels != nil
}

// label returns how messages name d: its path, else its name, else
// "domain i".
func (d *File) label(i int) string {
	switch {
	case d.Path != "":
		return d.Path
	case d.Name != "":
		return d.Name
	}
	return fmt.Sprintf("domain %d", i)
}

// ReadOptions controls how Read and the format readers interpret a file.
// A nil *ReadOptions, and zero fields, select the defaults.
type ReadOptions struct {
	// LabelColumn is the name of the CSV label column; default "label".
	LabelColumn string

	// FeaturesVar lists the names of the features variable of .mat and
	// .npz files, tried in order; default {"feas", "fts", "X"} for .mat
	// and {"X"} for .npz.
	FeaturesVar []string

	// LabelsVar lists the names of the labels variable, tried in order;
	// default {"labels", "y"} for .mat and {"y"} for .npz.
	LabelsVar []string

	// Unlabeled makes the readers ignore labels even if the file has
	// them, as for a target domain. The label column of a CSV file is
	// still excluded from the features.
	Unlabeled bool

	// LabelsOptional makes a missing label column or variable leave the
	// domain unlabeled even when its name was set explicitly, as for a
	// target domain whose labels, if present, are only used for scoring.
	LabelsOptional bool

	// NoHeader reads a CSV file whose first row is data: its columns are
	// named by their position, "1", "2", …, so the label column is chosen
	// by number (LabelColumn "14").
	NoHeader bool

	// AllowMissing makes the readers accept missing feature values and
	// store them as NaN: in CSV files the cells "", "?", "NA", "N/A",
	// "NaN" and "null" (in any case), in the other formats NaN values.
	// Load then applies its Missing policy. Without it they are errors.
	// Labels may never be missing.
	AllowMissing bool
}

// Default names of variables and columns.
var (
	defaultMATFeatures = []string{"feas", "fts", "X"}
	defaultMATLabels   = []string{"labels", "y"}
	defaultNPZFeatures = []string{"X"}
	defaultNPZLabels   = []string{"y"}
)

const defaultLabelColumn = "label"

// names returns the names to try for a variable: the option if set, else
// the defaults, and whether the option was set.
func names(opt, def []string) ([]string, bool) {
	if len(opt) > 0 {
		return opt, true
	}
	return def, false
}

// options returns opt, or the zero options if opt is nil.
func options(opt *ReadOptions) ReadOptions {
	if opt == nil {
		return ReadOptions{}
	}
	return *opt
}

// Read reads the file at path, choosing the reader by the extension of
// path (case-insensitive): ReadCSV for .csv (and comma-separated .txt and
// .data files), ReadNPY for .npy, ReadNPZ for .npz and ReadMAT for .mat.
// The file's Name is the base name of path without its extension.
func Read(path string, opt *ReadOptions) (*File, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".csv", ".txt", ".data":
		return ReadCSV(path, opt)
	case ".npy":
		return ReadNPY(path, opt)
	case ".npz":
		return ReadNPZ(path, opt)
	case ".mat":
		return ReadMAT(path, opt)
	default:
		if ext == "" {
			return nil, fmt.Errorf("dataset: %s: no file name extension (want .csv, .txt, .data, .npy, .npz or .mat)", path)
		}
		return nil, fmt.Errorf("dataset: %s: unknown file type %s (want .csv, .txt, .data, .npy, .npz or .mat)", path, clip.Quote(ext))
	}
}

// baseName returns the base name of path without its extension.
func baseName(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// checkFeatures returns an error unless x is a non-empty matrix of finite
// values. Rows and columns in messages count from 1.
func checkFeatures(x *mat.Dense) error { return checkValues(x, false) }

// checkValues is checkFeatures that, with missing, accepts NaN (a missing
// value) but not infinities.
func checkValues(x *mat.Dense, missing bool) error {
	if x == nil || x.IsEmpty() {
		return errors.New("no data")
	}
	r, c := x.Dims()
	raw := x.RawMatrix()
	for i := range r {
		row := raw.Data[i*raw.Stride : i*raw.Stride+c]
		for j, v := range row {
			if (math.IsNaN(v) && !missing) || math.IsInf(v, 0) {
				return fmt.Errorf("row %d, column %d is %v (rows and columns count from 1)", i+1, j+1, v)
			}
		}
	}
	return nil
}

// newFile checks x (finite values) and labels and returns the content of
// the file at path.
func newFile(path string, x *mat.Dense, labels []int) (*File, error) {
	return newFileOpt(path, x, labels, ReadOptions{})
}

// newFileOpt is newFile under the options o (AllowMissing).
func newFileOpt(path string, x *mat.Dense, labels []int, o ReadOptions) (*File, error) {
	if err := checkValues(x, o.AllowMissing); err != nil {
		return nil, fmt.Errorf("dataset: %s: features: %w", path, err)
	}
	if r, _ := x.Dims(); labels != nil && len(labels) != r {
		return nil, fmt.Errorf("dataset: %s: %d labels for %d rows of features", path, len(labels), r)
	}
	return &File{Name: baseName(path), Path: path, X: x, Labels: labels}, nil
}

// CheckCompatible returns an error unless the domains can be used
// together: there is at least one, none is nil or empty, each has as many
// labels as rows or none, and all have the same number of features — and
// the same feature names in the same order, among the domains whose files
// name them (CSV), since features are matched by position. The error names
// the domains at fault by path, or by name for domains built in memory.
func CheckCompatible(domains ...*File) error {
	if len(domains) == 0 {
		return errors.New("dataset: no domains")
	}
	var first *File
	firstIdx := 0
	for i, d := range domains {
		if d == nil {
			return fmt.Errorf("dataset: domain %d is nil", i)
		}
		if d.X == nil || d.X.IsEmpty() {
			return fmt.Errorf("dataset: %s: no data", d.label(i))
		}
		r, c := d.X.Dims()
		if d.Labels != nil && len(d.Labels) != r {
			return fmt.Errorf("dataset: %s: %d labels for %d rows of features", d.label(i), len(d.Labels), r)
		}
		if first == nil {
			first, firstIdx = d, i
			continue
		}
		if _, c0 := first.X.Dims(); c != c0 {
			return fmt.Errorf("dataset: feature dimensions differ: %s has %d features, %s has %d",
				first.label(firstIdx), c0, d.label(i), c)
		}
	}
	var named *File
	namedIdx := 0
	for i, d := range domains {
		if d.Features == nil {
			continue
		}
		if named == nil {
			named, namedIdx = d, i
			continue
		}
		if j := FeatureMismatch(named.Features, d.Features); j >= 0 {
			return fmt.Errorf("dataset: feature columns differ: column %d is %s in %s but %s in %s (features are matched by position: put the columns in the same order)",
				j+1, clip.Quote(named.Features[j]), named.label(namedIdx), clip.Quote(d.Features[j]), d.label(i))
		}
	}
	return nil
}

// FeatureMismatch returns the index of the first column that want and got
// name differently, or −1 when they agree — or when either is nil (files
// that do not name their columns) or they differ in length (a mismatch of
// dimensions, reported as such).
func FeatureMismatch(want, got []string) int {
	if want == nil || got == nil || len(want) != len(got) {
		return -1
	}
	for j := range want {
		if want[j] != got[j] {
			return j
		}
	}
	return -1
}
