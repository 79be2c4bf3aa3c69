package dataset

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/clip"
)

// Missing is a policy for missing feature values (ReadOptions.AllowMissing):
// what Load does with them.
type Missing int

const (
	// MissingError refuses them: the readers' errors name the file, the
	// line or row and the column.
	MissingError Missing = iota
	// MissingImpute replaces a missing value by the mean of the feature's
	// observed values in the source domains, in every domain; a feature
	// that no source observes is dropped.
	MissingImpute
	// MissingDrop drops every feature that misses a value in any domain.
	MissingDrop
)

var missingNames = [...]string{MissingError: "error", MissingImpute: "impute", MissingDrop: "drop"}

// String returns "error", "impute" or "drop".
func (m Missing) String() string {
	if m >= 0 && int(m) < len(missingNames) {
		return missingNames[m]
	}
	return fmt.Sprintf("Missing(%d)", int(m))
}

// ParseMissing parses "error", "impute" or "drop".
func ParseMissing(s string) (Missing, error) {
	if i := slices.Index(missingNames[:], s); i >= 0 {
		return Missing(i), nil
	}
	return 0, fmt.Errorf("dataset: unknown missing-value policy %s (want %s)", clip.Quote(s), strings.Join(missingNames[:], ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (m Missing) MarshalText() ([]byte, error) {
	if m < 0 || int(m) >= len(missingNames) {
		return nil, fmt.Errorf("dataset: invalid missing-value policy %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *Missing) UnmarshalText(b []byte) error {
	v, err := ParseMissing(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Imputer completes raw rows: it keeps the columns Keep of the raw
// features, in order, and replaces a missing (NaN) value of the kept column
// j by Fill[j]. Load fits one under MissingImpute and MissingDrop; a model
// applies it to new data before its scaler.
type Imputer struct {
	// Features is the number of raw feature columns.
	Features int
	// Keep lists the raw columns kept, in increasing order.
	Keep []int
	// Fill holds the value of a missing entry of every kept column: the
	// mean of its observed source values.
	Fill []float64
}

// fitImputer fits the policy m on the files (the first sources of them
// labeled sources) and returns the imputer, nil when no file misses a
// value, and a note per file on what was done.
func fitImputer(m Missing, files []*File, sources int) (*Imputer, []string) {
	_, d := files[0].X.Dims()
	missing := make([][]int, len(files)) // missing values per file and column
	has := false
	for i, f := range files {
		missing[i] = countMissing(f.X)
		for _, c := range missing[i] {
			has = has || c > 0
		}
	}
	if !has {
		return nil, nil
	}
	sum, seen := make([]float64, d), make([]int, d)
	for _, f := range files[:sources] {
		eachRow([]*File{f}, func(row []float64) {
			for j, v := range row {
				if !math.IsNaN(v) {
					sum[j] += v
					seen[j]++
				}
			}
		})
	}
	im := &Imputer{Features: d}
	for j := range d {
		drop := seen[j] == 0
		for i := range files {
			drop = drop || (m == MissingDrop && missing[i][j] > 0)
		}
		if !drop {
			im.Keep = append(im.Keep, j)
			im.Fill = append(im.Fill, sum[j]/float64(seen[j]))
		}
	}
	return im, missingNotes(m, files, missing, im)
}

// countMissing returns the number of NaN values of every column of X.
func countMissing(X *mat.Dense) []int {
	_, d := X.Dims()
	n := make([]int, d)
	eachRow([]*File{{X: X}}, func(row []float64) {
		for j, v := range row {
			if math.IsNaN(v) {
				n[j]++
			}
		}
	})
	return n
}

// missingNotes describes what the imputer does with every file's missing
// values.
func missingNotes(m Missing, files []*File, missing [][]int, im *Imputer) []string {
	var notes []string
	for i, f := range files {
		total := 0
		for _, c := range missing[i] {
			total += c
		}
		if total > 0 {
			what := "imputed with the sources' means"
			if m == MissingDrop {
				what = "their features dropped"
			}
			notes = append(notes, fmt.Sprintf("%s: %d missing values, %s", f.label(i), total, what))
		}
	}
	if dropped := im.Features - len(im.Keep); dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d features dropped (%s)", dropped, im.Features, droppedNames(files, im)))
	}
	return notes
}

// droppedNames names the columns the imputer drops, by their names when
// the files give them, else by their positions from 1.
func droppedNames(files []*File, im *Imputer) string {
	var names []string
	for j := range im.Features {
		if slices.Contains(im.Keep, j) {
			continue
		}
		name := fmt.Sprint(j + 1)
		for _, f := range files {
			if f.Features != nil {
				name = f.Features[j]
				break
			}
		}
		names = append(names, name)
	}
	return listNames(names)
}

// Apply returns a copy of the file's features with the imputer's columns
// kept and its missing values filled. It is an error if the file does not
// have Features columns.
func (im *Imputer) Apply(X *mat.Dense) (*mat.Dense, error) {
	if im == nil {
		return nil, errors.New("dataset: nil Imputer")
	}
	if len(im.Keep) != len(im.Fill) || len(im.Keep) == 0 {
		return nil, fmt.Errorf("dataset: invalid Imputer: %d kept columns, %d fill values", len(im.Keep), len(im.Fill))
	}
	r, c := X.Dims()
	if c != im.Features {
		return nil, fmt.Errorf("dataset: the imputer was fitted for %d features, the data have %d", im.Features, c)
	}
	out := mat.NewDense(r, len(im.Keep), nil)
	for i := range r {
		row, dst := X.RawRowView(i), out.RawRowView(i)
		for k, j := range im.Keep {
			if v := row[j]; math.IsNaN(v) {
				dst[k] = im.Fill[k]
			} else {
				dst[k] = v
			}
		}
	}
	return out, nil
}

// applyImputer replaces the features of every file by their completed
// copies and keeps the names of the kept columns.
func applyImputer(im *Imputer, files []*File) error {
	for _, f := range files {
		X, err := im.Apply(f.X)
		if err != nil {
			return fmt.Errorf("%w (%s)", err, f.label(0))
		}
		f.X = X
		if f.Features != nil {
			names := make([]string, len(im.Keep))
			for k, j := range im.Keep {
				names[k] = f.Features[j]
			}
			f.Features = names
		}
	}
	return nil
}
