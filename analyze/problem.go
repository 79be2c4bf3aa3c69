package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/clip"
)

// check returns an error unless p can be analysed (dataset.Problem.Check).
func check(p *dataset.Problem) error {
	if err := p.Check(); err != nil {
		return fmt.Errorf("analyze: problem %s: %w", clip.Quote(p.Name), err)
	}
	return nil
}

// accuracy scores predictions on the problem's test rows, in percent;
// rows whose label is −1 (a class unknown to the sources) count as errors.
// Without test rows the score is NaN.
func accuracy(p *dataset.Problem, predict func(*mat.Dense) ([]int, error)) (Score, error) {
	if p.Test == nil {
		return Score(math.NaN()), nil
	}
	pred, err := predict(p.Test.X)
	if err != nil {
		return 0, err
	}
	acc, err := classify.Accuracy(pred, p.Test.Y)
	if err != nil {
		return 0, fmt.Errorf("analyze: %s: %w", p.Name, err)
	}
	return Score(100 * acc), nil
}

// fit learns a dictionary on the problem and its DaDiL-R/E model, whose
// classifiers t trains.
func fit(p *dataset.Problem, s dictionary.Settings, t classify.Trainer) (*dictionary.Dictionary, *dictionary.Model, error) {
	m, err := dictionary.FitModel(p, &s, t)
	if err != nil {
		return nil, nil, fmt.Errorf("analyze: %s: %w", p.Name, err)
	}
	return m.Dict, m, nil
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
