// Package bench runs the experimental protocols of the DaDiL paper on their
// benchmarks: Caltech-Office 10 with the authors' five folds (Tables 2 and
// 3) and, with its own readers, the CWRU bearing data (Table 5).
//
// Errors returned by this package are prefixed with "bench: ".
package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/linalg"
)

// OfficeCaltechDomains are the Caltech-Office 10 domains in the order of
// the folds file (and of the stacked matrix its indices refer to).
var OfficeCaltechDomains = []string{"W", "A", "D", "C"}

// officeCaltechFiles names each domain's file per feature set.
var officeCaltechFiles = map[string][4]string{
	"surf":  {"surf/webcam_SURF_L10.mat", "surf/amazon_SURF_L10.mat", "surf/dslr_SURF_L10.mat", "surf/Caltech10_SURF_L10.mat"},
	"decaf": {"decaf/webcam_decaf.mat", "decaf/amazon_decaf.mat", "decaf/dslr_decaf.mat", "decaf/caltech_decaf.mat"},
}

const officeCaltechFolds = "folds/Objects_crossval_index.json"

// OfficeCaltech is the Caltech-Office 10 benchmark prepared as in the
// authors' protocol: the four domains (Webcam, Amazon, DSLR, Caltech), every
// feature min-max scaled over all rows of all domains together, labels as
// class indices, and the five folds of every domain as local row indices.
type OfficeCaltech struct {
	Features string
	Dir      string
	X        [4]*mat.Dense
	Y        [4][]int
	Classes  *dataset.Classes
	// Folds[k][f] lists the rows of domain k in fold f+1.
	Folds [4][5][]int
}

// LoadOfficeCaltech reads the benchmark from dir (the folder holding surf/,
// decaf/ and folds/) for features "surf" or "decaf".
func LoadOfficeCaltech(dir, features string) (*OfficeCaltech, error) {
	files, ok := officeCaltechFiles[features]
	if !ok {
		return nil, fmt.Errorf("bench: unknown features %s (want surf or decaf)", clip.Quote(features))
	}
	var missing []string
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			missing = append(missing, filepath.Join(dir, f))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("bench: office-caltech10 %s features: missing %s", features, strings.Join(missing, ", "))
	}
	o := &OfficeCaltech{Features: features, Dir: dir}
	var doms []*dataset.File
	for _, f := range files {
		d, err := dataset.Read(filepath.Join(dir, f), nil)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		if !d.Labeled() {
			return nil, fmt.Errorf("bench: %s has no labels", d.Path)
		}
		doms = append(doms, d)
	}
	if err := dataset.CheckCompatible(doms...); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var err error
	if o.X, err = scaleDomains(dataset.ScaleMinMax, doms); err != nil {
		return nil, err
	}
	if o.Classes, err = dataset.NewClasses(doms...); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	for k, d := range doms {
		if o.Y[k], err = o.Classes.Encode(d.Labels); err != nil {
			return nil, fmt.Errorf("bench: %s: %w", d.Path, err)
		}
	}
	if err := o.readFolds(filepath.Join(dir, officeCaltechFolds)); err != nil {
		return nil, err
	}
	return o, nil
}

// Standardised returns a copy of o whose features are rescaled to zero
// mean and unit variance over all rows of the four domains (the folds and
// labels are shared). Standardisation is invariant to the per-feature
// affine map of the min-max scaling LoadOfficeCaltech applies, so the copy
// holds the standardised features of the files.
func (o *OfficeCaltech) Standardised() (*OfficeCaltech, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	doms := make([]*dataset.File, len(o.X))
	for k, X := range o.X {
		doms[k] = &dataset.File{Name: OfficeCaltechDomains[k], X: X}
	}
	s := *o
	var err error
	if s.X, err = scaleDomains(dataset.ScaleStandard, doms); err != nil {
		return nil, err
	}
	return &s, nil
}

// scaleDomains returns the features of the four domains scaled by a
// scaler of the given kind fitted over all their rows.
func scaleDomains(kind dataset.Scaling, doms []*dataset.File) ([4]*mat.Dense, error) {
	var X [4]*mat.Dense
	scaler, err := dataset.FitScaler(kind, doms...)
	if err != nil {
		return X, fmt.Errorf("bench: %w", err)
	}
	for k, d := range doms {
		sd, err := scaler.TransformFile(d)
		if err != nil {
			return X, fmt.Errorf("bench: %w", err)
		}
		X[k] = sd.X
	}
	return X, nil
}

// readFolds reads the folds file path into o.Folds (see parseFolds).
func (o *OfficeCaltech) readFolds(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	var sizes [4]int
	for k, X := range o.X {
		sizes[k], _ = X.Dims()
	}
	o.Folds, err = parseFolds(path, b, sizes)
	return err
}

// parseFolds parses the folds file name, holding b: a JSON object
// {"Domain k": {"Fold f": [rows…]}} for k = 1…4 and f = 1…5, whose row
// indices are global rows of the four domains (sizes[k] rows in domain k)
// stacked in the order W, A, D, C. It checks that the folds of every domain
// are non-empty and partition its rows, and returns folds[k][f] in rows
// local to domain k.
func parseFolds(name string, b []byte, sizes [4]int) ([4][5][]int, error) {
	var folds, none [4][5][]int
	var raw map[string]map[string][]int
	if err := json.Unmarshal(b, &raw); err != nil {
		return none, fmt.Errorf("bench: %s: %w", name, err)
	}
	offset := 0
	for k, n := range sizes {
		key := fmt.Sprintf("Domain %d", k+1)
		dom, ok := raw[key]
		if !ok {
			return none, fmt.Errorf("bench: %s: no %s", name, clip.Quote(key))
		}
		seen := make([]bool, n)
		for f := 0; f < 5; f++ {
			fk := fmt.Sprintf("Fold %d", f+1)
			idx, ok := dom[fk]
			if !ok {
				return none, fmt.Errorf("bench: %s: no %s in %s", name, clip.Quote(fk), clip.Quote(key))
			}
			if len(idx) == 0 {
				return none, fmt.Errorf("bench: %s: %s %s is empty", name, key, fk)
			}
			local := make([]int, len(idx))
			for i, g := range idx {
				r := g - offset
				if r < 0 || r >= n {
					return none, fmt.Errorf("bench: %s: %s %s: row %d is outside domain %s (global rows %d–%d)", name, key, fk, g, OfficeCaltechDomains[k], offset, offset+n-1)
				}
				if seen[r] {
					return none, fmt.Errorf("bench: %s: %s: row %d is in two folds", name, key, g)
				}
				seen[r] = true
				local[i] = r
			}
			folds[k][f] = local
		}
		for r, s := range seen {
			if !s {
				return none, fmt.Errorf("bench: %s: %s: row %d is in no fold", name, key, offset+r)
			}
		}
		offset += n
	}
	return folds, nil
}

// domainIndex returns the index of domain name (W, A, D or C).
func domainIndex(name string) (int, error) {
	for k, d := range OfficeCaltechDomains {
		if strings.EqualFold(d, name) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("bench: unknown Caltech-Office domain %s (want W, A, D or C)", clip.Quote(name))
}

// check reports whether o holds a loaded benchmark, as LoadOfficeCaltech
// returns it.
func (o *OfficeCaltech) check() error {
	if o == nil {
		return errors.New("bench: office-caltech10: the benchmark is not loaded (use LoadOfficeCaltech)")
	}
	for k, X := range o.X {
		if X == nil || X.IsEmpty() {
			return fmt.Errorf("bench: office-caltech10: domain %s has no features", OfficeCaltechDomains[k])
		}
		if r, _ := X.Dims(); len(o.Y[k]) != r {
			return fmt.Errorf("bench: office-caltech10: domain %s has %d rows and %d labels", OfficeCaltechDomains[k], r, len(o.Y[k]))
		}
	}
	return nil
}

// Split returns the experiment for target domain target (W, A, D or C) and
// test fold fold (1 … 5), named "T fold f": the sources are all rows of the
// other domains, the target's rows (named after the domain) are its other
// four folds, and the test rows fold fold with their labels.
func (o *OfficeCaltech) Split(target string, fold int) (*dataset.Problem, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	t, err := domainIndex(target)
	if err != nil {
		return nil, err
	}
	if fold < 1 || fold > 5 {
		return nil, fmt.Errorf("bench: fold %d is not in 1…5", fold)
	}
	name := OfficeCaltechDomains[t]
	p := &dataset.Problem{Name: fmt.Sprintf("%s fold %d", name, fold), Classes: o.classes(), Sources: o.sources(t)}
	var train, test []int
	for f := 0; f < 5; f++ {
		if f == fold-1 {
			test = append(test, o.Folds[t][f]...)
		} else {
			train = append(train, o.Folds[t][f]...)
		}
	}
	p.Target = dataset.Domain{Name: name, X: linalg.Rows(o.X[t], train)}
	p.Test = &dataset.Domain{Name: name, X: linalg.Rows(o.X[t], test)}
	for _, r := range test {
		p.Test.Y = append(p.Test.Y, o.Y[t][r])
	}
	return p, nil
}

// HeldOutSplit returns the pseudo-experiment of held-out-source validation
// (adapt.ValidateOnSources) for target domain target: its sources but the
// held-out-th (1-based, in the order of Split's sources) stay labeled, and
// the held-out source's rows are both the unlabeled target rows and the
// test rows (dataset.Problem.HoldOut). The target's rows are not used at
// all.
func (o *OfficeCaltech) HeldOutSplit(target string, heldOut int) (*dataset.Problem, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	t, err := domainIndex(target)
	if err != nil {
		return nil, err
	}
	p := &dataset.Problem{Name: OfficeCaltechDomains[t], Classes: o.classes(), Sources: o.sources(t)}
	if heldOut < 1 || heldOut > len(p.Sources) {
		return nil, fmt.Errorf("bench: held-out source %d is not in 1…%d", heldOut, len(p.Sources))
	}
	return p.HoldOut(heldOut - 1), nil
}

// classes returns the number of classes, 0 before LoadOfficeCaltech.
func (o *OfficeCaltech) classes() int {
	if o.Classes == nil {
		return 0
	}
	return o.Classes.Len()
}

// sources returns every domain but the t-th, labeled, in the order of
// OfficeCaltechDomains.
func (o *OfficeCaltech) sources(t int) []dataset.Domain {
	var src []dataset.Domain
	for k := range o.X {
		if k != t {
			src = append(src, dataset.Domain{Name: OfficeCaltechDomains[k], X: o.X[k], Y: o.Y[k]})
		}
	}
	return src
}
