package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/par"
)

// Problem is one adaptation task: labeled sources, the unlabeled target
// rows the dictionary learns from, and optionally labeled target rows that
// are only scored on (for a benchmark, the test fold; for a user's labeled
// target file, the same rows as Target).
type Problem struct {
	Name    string              // e.g. "W fold 1"
	Sources []dictionary.Domain // labeled, class indices in [0, Classes)
	Target  dictionary.Domain   // unlabeled (Y is ignored)
	Classes int
	// TestX and TestY are the scored rows and their class indices; with
	// TestY nil, accuracies are NaN (null in JSON).
	TestX *mat.Dense
	TestY []int
}

// domains returns the sources followed by the unlabeled target.
func (p *Problem) domains() []dictionary.Domain {
	ds := append([]dictionary.Domain(nil), p.Sources...)
	t := p.Target
	t.Y = nil
	if t.Name == "" {
		t.Name = "target"
	}
	return append(ds, t)
}

func (p *Problem) check() error {
	if len(p.Sources) == 0 {
		return fmt.Errorf("analyze: problem %q has no source", p.Name)
	}
	if p.Target.X == nil {
		return fmt.Errorf("analyze: problem %q has no target rows", p.Name)
	}
	if p.TestY != nil {
		if p.TestX == nil {
			return fmt.Errorf("analyze: problem %q has test labels but no test rows", p.Name)
		}
		if r, _ := p.TestX.Dims(); r != len(p.TestY) {
			return fmt.Errorf("analyze: problem %q: %d test rows, %d test labels", p.Name, r, len(p.TestY))
		}
	}
	return nil
}

// accuracy scores predictions on the test rows, in percent; rows whose
// label is negative (a class unknown to the sources) count as errors.
func (p *Problem) accuracy(predict func(*mat.Dense) ([]int, error)) (Score, error) {
	if p.TestY == nil {
		return Score(math.NaN()), nil
	}
	pred, err := predict(p.TestX)
	if err != nil {
		return 0, err
	}
	acc, err := classify.Accuracy(pred, p.TestY)
	if err != nil {
		return 0, fmt.Errorf("analyze: %s: %w", p.Name, err)
	}
	return Score(100 * acc), nil
}

// fit learns a dictionary on the problem and its DaDiL-R/E model.
func (p *Problem) fit(s dictionary.Settings) (*dictionary.Dictionary, *dictionary.Model, error) {
	ds := p.domains()
	d, err := dictionary.Fit(ds, p.Classes, &s)
	if err != nil {
		return nil, nil, fmt.Errorf("analyze: %s: %w", p.Name, err)
	}
	m, err := dictionary.NewModel(d, len(ds)-1, nil, s.Seed)
	if err != nil {
		return nil, nil, fmt.Errorf("analyze: %s: %w", p.Name, err)
	}
	return d, m, nil
}

// Score is a percentage or a correlation that may be undefined (NaN, for
// instance without target labels); it encodes as null in JSON then.
type Score float64

// MarshalJSON encodes NaN and infinities as null.
func (s Score) MarshalJSON() ([]byte, error) {
	f := float64(s)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON decodes null as NaN.
func (s *Score) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = Score(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*s = Score(f)
	return nil
}

// forEach runs fn(0) … fn(n−1) on at most workers goroutines and returns
// the error of the lowest index that failed. progress, if not nil, is
// called after every finished call, serialised.
func forEach(n, workers int, fn func(i int) error, progress func(i int)) error {
	errs := make([]error, n)
	par.ForEach(n, workers, func(i int) { errs[i] = fn(i) }, progress)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// inner returns the settings of one fit among several run at once: its own
// goroutines are limited to one when the runs already fill the cores (the
// result does not depend on it).
func inner(s dictionary.Settings, parallelRuns, workers int) dictionary.Settings {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if parallelRuns > 1 && workers > 1 {
		s.Workers = 1
	}
	s.Progress = nil
	return s
}
