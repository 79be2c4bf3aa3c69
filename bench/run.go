package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/par"
)

// Result is the accuracy of one method on one experiment.
type Result struct {
	Method   string  `json:"method"`
	Target   string  `json:"target"`
	Fold     int     `json:"fold"`
	Accuracy float64 `json:"accuracy"` // percent of the test rows
	Seconds  float64 `json:"seconds"`  // fit + predict
	// HeldOut names the source held out as the target in held-out-source
	// validation (Options.HeldOutSources); empty otherwise.
	HeldOut string `json:"held_out,omitempty"`
}

// family is a set of methods sharing one fit (DaDiL-R and DaDiL-E are two
// predictors of one dictionary).
type family struct {
	members []string
	// paper marks DaDiL in the paper's setting, which keeps the protocol's
	// min-max scaling (Options.Standard).
	paper bool
	// fit fits on the problem and returns one predictor per member.
	fit func(p *dataset.Problem, seed uint64) ([]func(*mat.Dense) ([]int, error), error)
}

// named is the family of the method of adapt.New called members[0] and,
// for a dictionary method, of its sibling members[1] (adapt.Predictors),
// which shares its fit: one fit of adapt.Group.
func named(members []string) family {
	return namedWith(members, nil, nil)
}

// namedWith is named whose method adapt.Config builds with the dictionary
// settings s, seeded by the experiment, and the classifier t (nil: the
// defaults).
func namedWith(members []string, s *dictionary.Settings, t classify.Trainer) family {
	return fromMethod(members, func(seed uint64) (adapt.Method, error) {
		cfg := adapt.Config{Seed: seed, Classifier: t, Dictionary: s}
		return cfg.New(members[0])
	})
}

// fromMethod is the family of a method from build and, when members names
// two, of its sibling predictor (adapt.Predictors).
func fromMethod(members []string, build func(seed uint64) (adapt.Method, error)) family {
	return family{members: members, fit: func(p *dataset.Problem, seed uint64) ([]func(*mat.Dense) ([]int, error), error) {
		m, err := build(seed)
		if err != nil {
			return nil, err
		}
		if err := m.Fit(p); err != nil {
			return nil, err
		}
		var preds []func(*mat.Dense) ([]int, error)
		for _, p := range adapt.Predictors(m)[:len(members)] {
			preds = append(preds, p.Predict)
		}
		return preds, nil
	}}
}

// families returns every method of the benchmark, in table order: the
// methods of package adapt and DaDiL in the paper's setting
// (dictionary.Paper), "dadil-r-paper" and "dadil-e-paper".
func families() []family { return familiesWith(nil, nil) }

// familiesWith is families whose default-setting methods have the
// dictionary settings s and the classifier t (Options).
func familiesWith(s *dictionary.Settings, t classify.Trainer) []family {
	paper := fromMethod([]string{"dadil-r-paper", "dadil-e-paper"}, func(seed uint64) (adapt.Method, error) {
		return adapt.NewDaDiLR(dictionary.Paper(seed)), nil
	})
	paper.paper = true
	return tableFamilies(func(members []string) family { return namedWith(members, s, t) }, paper)
}

// tableFamilies returns the families of the fits of adapt.Group(adapt.Names()),
// made by fam, in the order of the paper's tables, with the benchmark's
// families of DaDiL in the paper's setting, paper, placed before the
// defaults' "dadil-r" and "dadil-e".
func tableFamilies[F any](fam func(members []string) F, paper ...F) []F {
	var fams []F
	for _, fit := range adapt.Group(adapt.Names()) {
		if fit[0] == "dadil-r" {
			fams = append(fams, paper...)
		}
		fams = append(fams, fam(fit))
	}
	return fams
}

// MethodNames returns the names of all methods, in table order.
func MethodNames() []string {
	var out []string
	for _, f := range families() {
		out = append(out, f.members...)
	}
	return out
}

// Options configure a benchmark run.
type Options struct {
	Methods []string // nil: all
	Targets []string // nil: all domains
	Folds   []int    // nil: 1 … 5
	Seed    uint64
	Workers int // experiments run at once; 0: GOMAXPROCS
	// HeldOutSources runs held-out-source validation instead of the
	// benchmark: for every target, each of its three sources in turn is
	// held out and plays the unlabeled target (OfficeCaltech.HeldOutSplit).
	// The target's rows are never used; a Result's Fold is then the
	// held-out source's place among the sources (1 … 3) and HeldOut its
	// name. Folds must be nil.
	HeldOutSources bool
	// Progress, if not nil, receives a line per finished experiment.
	Progress func(done, total int, what string, elapsed time.Duration)
	// Dictionary and Classifier, when not nil, set the methods of the
	// defaults (adapt.Config); the paper's DaDiL keeps its preset.
	Dictionary *dictionary.Settings
	Classifier classify.Trainer
	// Standard rescales the features of every method but the paper's
	// DaDiL ("dadil-r-paper", "dadil-e-paper") to zero mean and unit
	// variance over all rows of the four domains
	// (OfficeCaltech.Standardised), as dadil adapt's --scale standard
	// does; false keeps the protocol's min-max scaling.
	Standard bool
}

// experiment is one (family, target, fold) fit.
type experiment struct {
	fam     family
	members []int // indices into fam.members that were requested
	target  string
	fold    int
}

// RunOfficeCaltech runs the requested methods on the requested experiments.
// Experiments run in parallel; each is seeded from Options.Seed, the target
// and the fold only, so results do not depend on the number of workers.
func RunOfficeCaltech(o *OfficeCaltech, opt Options) ([]Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Classes == nil {
		return nil, errors.New("bench: office-caltech10: the benchmark has no classes (use LoadOfficeCaltech)")
	}
	targets := opt.Targets
	if targets == nil {
		targets = OfficeCaltechDomains
	}
	for _, t := range targets {
		if _, err := domainIndex(t); err != nil {
			return nil, err
		}
	}
	folds := opt.Folds
	switch {
	case opt.HeldOutSources && folds != nil:
		return nil, fmt.Errorf("bench: held-out-source validation has no folds (the target is not used)")
	case opt.HeldOutSources:
		folds = []int{1, 2, 3}
	case folds == nil:
		folds = []int{1, 2, 3, 4, 5}
	}
	for _, f := range folds {
		if f < 1 || f > 5 {
			return nil, fmt.Errorf("bench: fold %d is not in 1…5", f)
		}
	}
	want, err := selectMethods(opt.Methods, MethodNames())
	if err != nil {
		return nil, err
	}
	var exps []experiment
	for _, fam := range familiesWith(opt.Dictionary, opt.Classifier) {
		mem := selected(fam.members, want)
		if len(mem) == 0 {
			continue
		}
		for _, t := range targets {
			for _, f := range folds {
				exps = append(exps, experiment{fam: fam, members: mem, target: strings.ToUpper(t), fold: f})
			}
		}
	}
	std := o
	if opt.Standard {
		if std, err = o.Standardised(); err != nil {
			return nil, err
		}
	}
	results := make([][]Result, len(exps))
	start := time.Now()
	done := 0
	err = par.Run(len(exps), opt.Workers, func(i int) (err error) {
		data := std
		if exps[i].fam.paper {
			data = o
		}
		results[i], err = runExperiment(data, exps[i], opt.Seed, opt.HeldOutSources)
		if err != nil {
			return fmt.Errorf("bench: %s: %w", describe(exps[i], opt.HeldOutSources), err)
		}
		return nil
	}, func(i int) {
		done++
		if opt.Progress != nil {
			opt.Progress(done, len(exps), describe(exps[i], opt.HeldOutSources), time.Since(start))
		}
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(results...), nil
}

// describe names an experiment in progress lines and errors.
func describe(e experiment, heldOut bool) string {
	if heldOut {
		return fmt.Sprintf("%s on the sources of %s, %s held out", strings.Join(namesOf(e), "/"), e.target, heldOutSource(e.target, e.fold))
	}
	return fmt.Sprintf("%s on %s fold %d", strings.Join(namesOf(e), "/"), e.target, e.fold)
}

func namesOf(e experiment) []string {
	var n []string
	for _, i := range e.members {
		n = append(n, e.fam.members[i])
	}
	return n
}

// selected returns the indices of the members of a family that want
// holds.
func selected(members []string, want map[string]bool) []int {
	var idx []int
	for i, name := range members {
		if want[name] {
			idx = append(idx, i)
		}
	}
	return idx
}

// selectMethods resolves the requested names among all ("all" or nil for
// every method).
func selectMethods(names, all []string) (map[string]bool, error) {
	want := map[string]bool{}
	if len(names) == 0 || (len(names) == 1 && names[0] == "all") {
		for _, n := range all {
			want[n] = true
		}
		return want, nil
	}
	known := map[string]bool{}
	for _, n := range all {
		known[n] = true
	}
	for _, n := range names {
		if n == "all" {
			return nil, errors.New("bench: method \"all\" stands alone (it means every method)")
		}
		if !known[n] {
			return nil, fmt.Errorf("bench: unknown method %s (known: %s, all)", clip.Quote(n), strings.Join(all, ", "))
		}
		want[n] = true
	}
	return want, nil
}

// runExperiment fits a family once and scores its requested members.
func runExperiment(o *OfficeCaltech, e experiment, seed uint64, heldOut bool) ([]Result, error) {
	var p *dataset.Problem
	var err error
	var heldOutName string
	if heldOut {
		p, err = o.HeldOutSplit(e.target, e.fold)
		heldOutName = heldOutSource(e.target, e.fold)
	} else {
		p, err = o.Split(e.target, e.fold)
	}
	if err != nil {
		return nil, err
	}
	t, _ := domainIndex(e.target)
	expSeed := seed*1000 + uint64(10*t+e.fold)
	t0 := time.Now()
	preds, err := e.fam.fit(p, expSeed)
	if err != nil {
		return nil, err
	}
	fitSecs := time.Since(t0).Seconds()
	var out []Result
	for _, i := range e.members {
		t1 := time.Now()
		acc, err := adapt.Score(preds[i], p.Test)
		if err != nil {
			return nil, err
		}
		out = append(out, Result{
			Method: e.fam.members[i], Target: e.target, Fold: e.fold, HeldOut: heldOutName,
			Accuracy: 100 * acc,
			Seconds:  fitSecs + time.Since(t1).Seconds(),
		})
	}
	return out, nil
}

// heldOutSource names the held-out-th source (1-based) of target in
// HeldOutSplit.
func heldOutSource(target string, heldOut int) string {
	var names []string
	for _, d := range OfficeCaltechDomains {
		if d != target {
			names = append(names, d)
		}
	}
	return names[heldOut-1]
}

// Table formats results as a Markdown table laid out like the paper's:
// one row per method (in the order given), one column per target (in the
// order given) with the mean ± standard deviation over folds (population
// standard deviation, numpy's default), and the average of the target
// means.
func Table(results []Result, methods, targets []string) string {
	type key struct{ m, t string }
	acc := map[key][]float64{}
	for _, r := range results {
		acc[key{r.Method, r.Target}] = append(acc[key{r.Method, r.Target}], r.Accuracy)
	}
	var b strings.Builder
	b.WriteString("| Method |")
	for _, t := range targets {
		b.WriteString(" " + t + " |")
	}
	b.WriteString(" Avg |\n|---|")
	for range targets {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, m := range methods {
		vals := 0
		var sum float64
		var row strings.Builder
		for _, t := range targets {
			a := acc[key{m, t}]
			if len(a) == 0 {
				row.WriteString(" – |")
				continue
			}
			mean, std := meanStd(a)
			fmt.Fprintf(&row, " %.2f ± %.2f |", mean, std)
			sum += mean
			vals++
		}
		if vals == 0 {
			continue
		}
		avg := "–"
		if vals == len(targets) {
			avg = fmt.Sprintf("%.2f", sum/float64(vals))
		}
		fmt.Fprintf(&b, "| %s |%s %s |\n", m, row.String(), avg)
	}
	return b.String()
}

func meanStd(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)))
}

// SortResults orders results by method (in the order of methods), target
// (in the order of targets) and fold.
func SortResults(rs []Result, methods, targets []string) {
	order := map[string]int{}
	for i, m := range methods {
		order[m] = i
	}
	torder := map[string]int{}
	for i, t := range targets {
		torder[strings.ToUpper(t)] = i
	}
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if order[a.Method] != order[b.Method] {
			return order[a.Method] < order[b.Method]
		}
		if torder[a.Target] != torder[b.Target] {
			return torder[a.Target] < torder[b.Target]
		}
		return a.Fold < b.Fold
	})
}
