package dataset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/linalg"
)

// LoadOptions control Load. A nil *LoadOptions selects the defaults.
type LoadOptions struct {
	// Read holds the readers' options for every file; the target is read
	// with LabelsOptional set.
	Read ReadOptions
	// Scaling is fitted over all rows of all the files together; the
	// zero value, ScaleNone, keeps the features as they are (dadil's
	// command line defaults to ScaleStandard).
	Scaling Scaling
	// Missing is the policy for missing feature values; the zero value,
	// MissingError, refuses them.
	Missing Missing
	// Note, if not nil, receives remarks for the user: a source without
	// some class, target labels that only score, target label values the
	// sources do not have, missing values imputed or dropped.
	Note func(msg string)
}

// Loaded is a problem read from files (Load), with what it takes to apply
// a model learned on it to new data: the label values of the classes, the
// fitted scaler and the features' names.
type Loaded struct {
	// Problem holds the scaled domains, named by their paths; its Name is
	// the target file's base name, and its Test, when the target file
	// carries labels, the target rows with their class indices (−1 for
	// label values the sources do not have).
	*Problem
	// Labels maps class indices to the user's label values.
	Labels *Classes
	// Imputer completes rows with missing values before scaling; nil when
	// no file misses a value (or under MissingError).
	Imputer *Imputer
	// Scaler is the scaling fitted on all the files (after the imputer).
	Scaler *Scaler
	// Features names the feature columns when a file does (CSV), else nil.
	Features []string
	// Unknown lists, in order of first appearance, the target's label
	// values that no source has; their rows count as errors.
	Unknown []int
}

// ErrArgument marks the errors of Load caused by its arguments rather than
// by the content of the files: a file given twice, or a scaling the
// features do not allow.
var ErrArgument = errors.New("dataset: bad argument")

// argError is an error of Load's arguments (errors.Is(err, ErrArgument)).
type argError struct{ msg string }

func (e argError) Error() string        { return e.msg }
func (e argError) Is(target error) bool { return target == ErrArgument }

// MaxUnscaled bounds the magnitude of features loaded with ScaleNone:
// squared distances between points of 10⁵ such features stay far below
// float64's largest value, 1.8·10³⁰⁸.
const MaxUnscaled = 1e100

// Load reads a user's problem: the labeled source files, in order, and the
// target file, whose labels, if any, only score (Problem.Test). It checks
// that no file is given twice, reads the files (Read, with the options'
// Read settings; the target with LabelsOptional) and prepares the problem
// with Prepare. Errors name the file at fault.
func Load(sources []string, target string, opt *LoadOptions) (*Loaded, error) {
	var o LoadOptions
	if opt != nil {
		o = *opt
	}
	if err := DistinctFiles(append(slices.Clone(sources), target), "domain"); err != nil {
		return nil, err
	}
	o.Read.AllowMissing = o.Missing != MissingError
	src, tgt, err := readFiles(sources, target, o.Read)
	if err != nil {
		return nil, err
	}
	return Prepare(src, tgt, &o)
}

// Prepare makes a problem of file contents: the labeled sources and the
// target, whose labels, if any, only score. It checks that the files are
// compatible (CheckCompatible), takes the classes from the sources' labels
// (NewClasses), applies the options' Missing policy, fits the scaler over
// all rows of all the files and scales every domain, and encodes the
// labels as class indices. The files' features are replaced when missing
// values are imputed or dropped; they are otherwise left as they are.
func Prepare(src []*File, tgt *File, opt *LoadOptions) (*Loaded, error) {
	var o LoadOptions
	if opt != nil {
		o = *opt
	}
	note := func(format string, a ...any) {
		if o.Note != nil {
			o.Note(fmt.Sprintf(format, a...))
		}
	}
	for _, f := range src {
		if f != nil && !f.Labeled() {
			return nil, fmt.Errorf("source %s has no labels (no label column or labels variable)", f.label(0))
		}
	}
	all := append(slices.Clone(src), tgt)
	if err := CheckCompatible(all...); err != nil {
		return nil, err
	}
	l := &Loaded{}
	var err error
	if l.Labels, err = NewClasses(src...); err != nil {
		return nil, err
	}
	noteMissingClasses(src, l.Labels, note)
	if err := l.impute(o.Missing, all, len(src), note); err != nil {
		return nil, err
	}
	for _, f := range all {
		if f.Features != nil {
			l.Features = f.Features
			break
		}
	}
	if l.Scaler, err = FitScaler(o.Scaling, all...); err != nil {
		return nil, err
	}
	if o.Scaling == ScaleNone {
		if err := checkUnscaled(all); err != nil {
			return nil, err
		}
	}
	if err := l.build(src, tgt, note); err != nil {
		return nil, err
	}
	return l, nil
}

// impute fits and applies the missing-value policy m to the files, the
// first sources of them the sources.
func (l *Loaded) impute(m Missing, all []*File, sources int, note func(string, ...any)) error {
	if m == MissingError {
		return nil
	}
	var notes []string
	if l.Imputer, notes = fitImputer(m, all, sources); l.Imputer == nil {
		return nil
	}
	if len(l.Imputer.Keep) == 0 {
		return fmt.Errorf("dataset: every feature misses values (policy %s): no feature is left", m)
	}
	for _, n := range notes {
		note("%s", n)
	}
	return applyImputer(l.Imputer, all)
}

// readFiles reads the sources, which must carry labels, and the target,
// whose labels are optional.
func readFiles(sources []string, target string, opt ReadOptions) ([]*File, *File, error) {
	var src []*File
	for _, p := range sources {
		f, err := Read(p, &opt)
		if err != nil {
			return nil, nil, err
		}
		if !f.Labeled() {
			return nil, nil, fmt.Errorf("source %s has no labels (no label column or labels variable)", p)
		}
		src = append(src, f)
	}
	opt.LabelsOptional = true
	tgt, err := Read(target, &opt)
	if err != nil {
		return nil, nil, err
	}
	return src, tgt, nil
}

// noteMissingClasses notes every source that lacks some class: legal (its
// coordinates then cannot draw on that class), but usually a mistake.
func noteMissingClasses(src []*File, c *Classes, note func(string, ...any)) {
	for _, f := range src {
		var missing []int
		for _, v := range c.Values {
			if !slices.Contains(f.Labels, v) {
				missing = append(missing, v)
			}
		}
		if len(missing) > 0 {
			note("source %s has no rows of class %s (of %s)", f.label(0), clip.Ints(missing, 20), clip.Ints(c.Values, 20))
		}
	}
}

// checkUnscaled refuses features beyond ±MaxUnscaled, whose squared
// distances overflow.
func checkUnscaled(files []*File) error {
	for _, f := range files {
		if i, j, ok := linalg.FirstEntryAbove(f.X, MaxUnscaled); !ok {
			return argError{fmt.Sprintf("%s: row %d, feature %d is %g: with --scale none, features beyond ±%g make squared distances overflow; use --scale minmax or standard", f.label(0), i+1, j+1, f.X.At(i, j), MaxUnscaled)}
		}
	}
	return nil
}

// build scales the files and encodes their labels into l.Problem.
func (l *Loaded) build(src []*File, tgt *File, note func(string, ...any)) error {
	p := &Problem{Name: filepath.Base(tgt.label(0)), Classes: l.Labels.Len()}
	for _, f := range src {
		sf, err := l.Scaler.TransformFile(f)
		if err != nil {
			return err
		}
		y, err := l.Labels.Encode(f.Labels)
		if err != nil {
			return fmt.Errorf("%s: %w", f.label(0), err)
		}
		p.Sources = append(p.Sources, Domain{Name: f.label(0), X: sf.X, Y: y})
	}
	st, err := l.Scaler.TransformFile(tgt)
	if err != nil {
		return err
	}
	p.Target = Domain{Name: tgt.label(0), X: st.X}
	if tgt.Labeled() {
		var truth []int
		truth, l.Unknown = l.Labels.Indices(tgt.Labels)
		p.Test = &Domain{Name: tgt.label(0), X: st.X, Y: truth}
		note("the target %s carries labels: they are used only to report accuracy, never to fit", tgt.label(0))
		if len(l.Unknown) > 0 {
			note("target labels %s do not occur in the sources; those rows count as errors", clip.Ints(l.Unknown, 20))
		}
	}
	l.Problem = p
	return nil
}

// DistinctFiles returns an error if two of the paths name the same file:
// a domain given twice would count twice (and a source given as the target
// would be its own target). what names the files in the message ("domain",
// "recording"). Paths that cannot be read are left to the readers.
func DistinctFiles(paths []string, what string) error {
	infos := make([]os.FileInfo, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue // the reader names the problem
		}
		for j := range i {
			if infos[j] != nil && os.SameFile(infos[j], fi) {
				return argError{fmt.Sprintf("%s and %s are the same file: give every %s once", paths[j], p, what)}
			}
		}
		infos[i] = fi
	}
	return nil
}
