package analyze

import (
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/par"
)

// SweepSettings configure Sweep.
type SweepSettings struct {
	// Dictionary holds the settings of every fit; each sweep overrides
	// one field. The paper fixes n = 1000 and n_b = 200 while K varies,
	// K = 8 and n_b = 200 while n varies, K = 8 and n = 1000 while n_b
	// varies.
	Dictionary dictionary.Settings
	// Classifier trains DaDiL-R and DaDiL-E (nil: a softmax regression
	// with the default penalty).
	Classifier classify.Trainer
	// Atoms, Samples and Batches are the values of K, n and n_b to try;
	// an empty list skips that sweep.
	Atoms, Samples, Batches []int
	// Neighbours is the k of the density score; 0 means 5 (the paper's).
	Neighbours int
	// Workers bounds the fits run at once; 0 means GOMAXPROCS.
	Workers int
	// Progress, if not nil, is called after every fit.
	Progress func(done, total int, what string)
}

// SweepRun is one fit of a sweep.
type SweepRun struct {
	Problem string `json:"problem"`
	// Param is the swept hyper-parameter, "K", "n" or "n_b", and Value
	// its value; Atoms, Samples and Batch are the settings in effect.
	Param   string `json:"param"`
	Value   int    `json:"value"`
	Atoms   int    `json:"atoms"`
	Samples int    `json:"samples"`
	Batch   int    `json:"batch"`
	// AccuracyR and AccuracyE are DaDiL-R's and DaDiL-E's accuracies on
	// the problem's test rows, in percent.
	AccuracyR Score `json:"accuracy_r"`
	AccuracyE Score `json:"accuracy_e"`
	// Domains names the domains (sources, then the target); Alpha[ℓ] and
	// Sparsity[ℓ] are the learned coordinates of domain ℓ and their
	// sparsity score.
	Domains  []string    `json:"domains"`
	Alpha    [][]float64 `json:"alpha"`
	Sparsity []float64   `json:"sparsity"`
	// Density is the support density score of the atoms.
	Density float64 `json:"density"`
	Epochs  int     `json:"epochs"`
	Seconds float64 `json:"seconds"`
}

// Sweep fits one dictionary per problem and per value of each swept
// hyper-parameter (the others as in s.Dictionary, the same seed for all,
// so runs differ only by the swept value) and reports the accuracies of
// DaDiL-R and DaDiL-E, the sparsity of every domain's coordinates and the
// density of the atoms' supports (paper appendix, Tables 7–11). Fits run in
// parallel; results do not depend on Workers. Runs are ordered by problem,
// then K, n and n_b sweeps, then value.
func Sweep(problems []*dataset.Problem, s *SweepSettings) ([]SweepRun, error) {
	if s == nil {
		return nil, fmt.Errorf("analyze: sweep without settings")
	}
	k := s.Neighbours
	if k == 0 {
		k = 5
	}
	jobs, err := sweepJobs(problems, s)
	if err != nil {
		return nil, err
	}
	runs := make([]SweepRun, len(jobs))
	done := 0
	err = par.Run(len(jobs), s.Workers, func(i int) (err error) {
		set := inner(s.Dictionary, len(jobs), s.Workers)
		runs[i], err = sweepRun(problems[jobs[i].p], jobs[i], set, s.Classifier, k)
		return err
	}, func(i int) {
		done++
		if s.Progress != nil {
			j := jobs[i]
			s.Progress(done, len(jobs), fmt.Sprintf("%s, %s = %d", problems[j.p].Name, j.param, j.value))
		}
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// sweepJob is one fit of a sweep: problem p with the hyper-parameter
// param ("K", "n" or "n_b") set to value.
type sweepJob struct {
	p     int
	param string
	value int
}

// sweepJobs checks the problems and the swept values (each ≥ 1) and lists
// the fits of a sweep in the order of its runs.
func sweepJobs(problems []*dataset.Problem, s *SweepSettings) ([]sweepJob, error) {
	var jobs []sweepJob
	for i := range problems {
		if err := check(problems[i]); err != nil {
			return nil, err
		}
		for _, sw := range []struct {
			name string
			vals []int
		}{{"K", s.Atoms}, {"n", s.Samples}, {"n_b", s.Batches}} {
			for _, v := range sw.vals {
				if v < 1 {
					return nil, fmt.Errorf("analyze: sweep of %s: value %d (want ≥ 1)", sw.name, v)
				}
				jobs = append(jobs, sweepJob{i, sw.name, v})
			}
		}
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("analyze: sweep: no problem or no value of K, n or n_b to try")
	}
	return jobs, nil
}

// sweepRun fits the dictionary of job j on p, with the settings set but
// the swept hyper-parameter and classifiers trained by t, and scores it:
// accuracies, the sparsity of every domain's coordinates and the density
// of the atoms' supports with k neighbours.
func sweepRun(p *dataset.Problem, j sweepJob, set dictionary.Settings, t classify.Trainer, k int) (SweepRun, error) {
	switch j.param {
	case "K":
		set.Atoms, set.ExtraAtoms = j.value, 0
	case "n":
		set.Samples = j.value
	case "n_b":
		set.Batch = j.value
	}
	t0 := time.Now()
	d, m, err := fit(p, set, t)
	if err != nil {
		return SweepRun{}, fmt.Errorf("%s = %d: %w", j.param, j.value, err)
	}
	r := SweepRun{
		Problem: p.Name, Param: j.param, Value: j.value,
		Atoms: d.Settings.Atoms, Samples: d.Settings.Samples, Batch: d.Settings.Batch,
		Domains: d.Names, Epochs: len(d.History.Loss),
	}
	if r.AccuracyR, err = accuracy(p, m.PredictR); err != nil {
		return SweepRun{}, err
	}
	if r.AccuracyE, err = accuracy(p, m.PredictE); err != nil {
		return SweepRun{}, err
	}
	N, _ := d.Alpha.Dims()
	for l := range N {
		a := mat.Row(nil, l, d.Alpha)
		r.Alpha = append(r.Alpha, a)
		r.Sparsity = append(r.Sparsity, Sparsity(a))
	}
	var atoms []*mat.Dense
	for _, a := range d.Atoms {
		atoms = append(atoms, a.X)
	}
	if r.Density, err = Density(atoms, k); err != nil {
		return SweepRun{}, fmt.Errorf("%s = %d: %w", j.param, j.value, err)
	}
	r.Seconds = time.Since(t0).Seconds()
	return r, nil
}
