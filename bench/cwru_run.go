package bench

import (
	"fmt"
	"slices"
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

// CWRUOTRows caps the rows each domain contributes to the fits of the
// transport-based baselines on CWRU (OTDA with Sinkhorn, JCPOT, WB, WBT_reg,
// WJDOT, WBR): a uniform draw without replacement from each source and from the
// target's training rows. With 7200 windows per source and 5400 target
// training windows, their full transport problems take minutes each, and
// the benchmark would not fit its hour; DaDiL itself learns from mini-batches
// of n_b = 200 per domain. Exact OTDA (EMD), SA, TCA and the source-only
// methods use every row.
const CWRUOTRows = 2000

// cwruFamily is a method family of the CWRU benchmark.
type cwruFamily struct {
	members []string
	// fit fits on the prepared experiment and returns one predictor per
	// member, for the encoded target test rows (or, for "mlp", any rows:
	// it is called with the test spectra).
	fit func(e *CWRUExperiment, seed uint64) ([]func(*mat.Dense) ([]int, error), error)
	// spectra says the predictors take the spectra rather than the
	// encoded features; paper that they take PaperProblem's features.
	spectra, paper bool
}

// fromFamily adapts a family of the Caltech-Office benchmark, optionally
// capping the rows of the fit.
func fromFamily(f family, capRows int) cwruFamily {
	return cwruFamily{members: f.members, fit: func(e *CWRUExperiment, seed uint64) ([]func(*mat.Dense) ([]int, error), error) {
		p := e.Problem
		if capRows > 0 {
			// Every source and the target's training rows reduced to at
			// most capRows rows drawn uniformly without replacement.
			p, _ = p.Subsample(capRows, seed)
		}
		return f.fit(p, seed)
	}}
}

// paperMember is a one-member family of the paper's setting: a DaDiL fit
// with settings s on the experiment's PaperProblem, and its R (useR) or E
// predictor.
func paperMember(name string, settings func(seed uint64) *dictionary.Settings, useR bool) cwruFamily {
	return cwruFamily{members: []string{name}, paper: true, fit: func(e *CWRUExperiment, seed uint64) ([]func(*mat.Dense) ([]int, error), error) {
		m := adapt.NewDaDiLR(settings(seed))
		if err := m.Fit(e.PaperProblem); err != nil {
			return nil, err
		}
		if useR {
			return []func(*mat.Dense) ([]int, error){m.Model.PredictR}, nil
		}
		return []func(*mat.Dense) ([]int, error){m.Model.PredictE}, nil
	}}
}

// cwruFamilies returns every method of the CWRU benchmark, in table order:
// the encoder's own classification, then the families of the Caltech-Office
// benchmark, the methods of adapt.DenseTransport fitted on at most
// CWRUOTRows rows per domain, and DaDiL in the paper's setting as two fits
// (dictionary.PaperCWRU with K = 8 for DaDiL-R, K = 3 for DaDiL-E). The
// classifier t (nil: the default) trains every method's final classifier
// but the encoder's and the paper's DaDiL's, and the dictionary settings s
// (nil: the defaults) set the other dictionary methods.
func cwruFamilies(t classify.Trainer, s *dictionary.Settings) []cwruFamily {
	encoder := cwruFamily{members: []string{"mlp"}, spectra: true, fit: func(e *CWRUExperiment, _ uint64) ([]func(*mat.Dense) ([]int, error), error) {
		return []func(*mat.Dense) ([]int, error){e.Encoder.Predict}, nil
	}}
	fam := func(members []string) cwruFamily {
		n := 0
		if adapt.DenseTransport(members[0]) {
			n = CWRUOTRows
		}
		return fromFamily(namedWith(members, s, t), n)
	}
	return append([]cwruFamily{encoder}, tableFamilies(fam,
		paperMember("dadil-r-paper", func(seed uint64) *dictionary.Settings { return dictionary.PaperCWRU(8, seed) }, true),
		paperMember("dadil-e-paper", func(seed uint64) *dictionary.Settings { return dictionary.PaperCWRU(3, seed) }, false),
	)...)
}

// CWRUMethodNames returns the names of the methods of the CWRU benchmark,
// in table order: "mlp" is the encoder's own classification (the paper's
// source-only baseline), "dadil-r-paper" and "dadil-e-paper" the paper's
// setting (K = 8 and K = 3), "dadil-r" and "dadil-e" the defaults of package
// dictionary; the others are as in the Caltech-Office benchmark.
func CWRUMethodNames() []string {
	var out []string
	for _, f := range cwruFamilies(nil, nil) {
		out = append(out, f.members...)
	}
	return out
}

// CWRUOptions configure RunCWRU.
type CWRUOptions struct {
	Methods  []string // nil: all
	Targets  []string // nil: every domain
	Seeds    int      // repetitions 1 … Seeds; 0: 5
	Seed     uint64   // base seed
	Workers  int      // methods fitted at once; 0: GOMAXPROCS
	Protocol *CWRUProtocol
	// Progress, if not nil, receives a line per finished fit.
	Progress func(done, total int, what string, elapsed time.Duration)
	// Encoder, if not nil, receives the encoder's epochs.
	Encoder func(target string, rep, epoch, epochs int, loss, accuracy float64)
	// HeldOutSources runs held-out-source validation instead of the
	// benchmark: for every target and repetition, each source in turn is
	// held out and plays the target (CWRU.PrepareHeldOut), with the
	// windows of that repetition; the target's recordings are never read.
	// A Result's Target is then the real target, HeldOut the held-out
	// source, Fold the repetition.
	HeldOutSources bool
	// Classifier, when not nil, trains the final classifier of every
	// method but "mlp" and the paper's DaDiL (adapt.Config.Classifier).
	Classifier classify.Trainer
	// Dictionary, when not nil, sets the dictionary methods but the
	// paper's DaDiL (adapt.Config.Dictionary).
	Dictionary *dictionary.Settings
}

// runs checks the targets and the number of repetitions of a run over c,
// defaulting to every domain and 5 repetitions.
func (c *CWRU) runs(targets []string, seeds int) ([]string, int, error) {
	if targets == nil {
		targets = c.Domains
	}
	for _, t := range targets {
		if !slices.Contains(c.Domains, t) {
			return nil, 0, fmt.Errorf("bench: cwru: unknown target %s (domains: %s)", clip.Quote(t), clip.List(c.Domains, 12))
		}
	}
	if seeds == 0 {
		seeds = 5
	}
	if seeds < 0 {
		return nil, 0, fmt.Errorf("bench: cwru: %d seeds", seeds)
	}
	return targets, seeds, nil
}

// RunCWRU runs the requested methods on every (target, repetition): for
// repetition r the windows, the encoder and every method are seeded from
// Seed, the target and r only, so results do not depend on Workers. The
// Fold of each Result is the repetition. Seconds is the method's fit and
// prediction time on the encoded data; for "mlp" it is the encoder's
// training time.
func RunCWRU(c *CWRU, opt CWRUOptions) ([]Result, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	targets, seeds, err := c.runs(opt.Targets, opt.Seeds)
	if err != nil {
		return nil, err
	}
	if _, err := opt.Protocol.resolve(); err != nil {
		return nil, err
	}
	want, err := selectMethods(opt.Methods, CWRUMethodNames())
	if err != nil {
		return nil, err
	}
	jobs := cwruJobs(opt.Classifier, opt.Dictionary, want)
	if opt.HeldOutSources {
		if err := c.canHoldOut(); err != nil {
			return nil, err
		}
	}
	prog := &cwruProgress{report: opt.Progress}
	for _, target := range targets {
		prog.total += seeds * len(c.experimentsOf(target, opt.HeldOutSources)) * len(jobs)
	}
	prog.start = time.Now()
	var out []Result
	for _, target := range targets {
		for rep := 1; rep <= seeds; rep++ {
			res, err := c.runCWRURep(target, rep, jobs, &opt, prog)
			if err != nil {
				return nil, err
			}
			out = append(out, res...)
		}
	}
	return out, nil
}

// cwruJob is one fit of a CWRU experiment: a family and the indices of its
// requested members.
type cwruJob struct {
	fam     cwruFamily
	members []int
}

// cwruJobs returns the fits of the methods want, in table order, their
// final classifiers trained by t (see cwruFamilies).
func cwruJobs(t classify.Trainer, s *dictionary.Settings, want map[string]bool) []cwruJob {
	var jobs []cwruJob
	for _, f := range cwruFamilies(t, s) {
		if mem := selected(f.members, want); len(mem) > 0 {
			jobs = append(jobs, cwruJob{f, mem})
		}
	}
	return jobs
}

// experimentsOf returns the experiments of a (target, repetition): the
// target itself (""), or with heldOut each of its sources held out.
func (c *CWRU) experimentsOf(target string, heldOut bool) []string {
	if !heldOut {
		return []string{""}
	}
	return c.sourcesOf(target)
}

// cwruProgress counts the finished fits of RunCWRU out of total and
// reports each (nil report: none) with the time since start.
type cwruProgress struct {
	done, total int
	start       time.Time
	report      func(done, total int, what string, elapsed time.Duration)
}

// finished counts job j on the experiment what as done and reports it.
func (p *cwruProgress) finished(j cwruJob, what string) {
	p.done++
	if p.report != nil {
		var names []string
		for _, m := range j.members {
			names = append(names, j.fam.members[m])
		}
		p.report(p.done, p.total, strings.Join(names, "/")+" on "+what, time.Since(p.start))
	}
}

// runCWRURep prepares every experiment of repetition rep on target (see
// experimentsOf) and runs the jobs on it; with sources held out, the
// results name the real target and the held-out source.
func (c *CWRU) runCWRURep(target string, rep int, jobs []cwruJob, opt *CWRUOptions, prog *cwruProgress) ([]Result, error) {
	expSeed := c.drawSeed(opt.Seed, target, rep)
	var encProgress func(epoch, epochs int, loss, acc float64)
	if opt.Encoder != nil {
		encProgress = func(epoch, epochs int, loss, acc float64) { opt.Encoder(target, rep, epoch, epochs, loss, acc) }
	}
	var out []Result
	for _, heldOut := range c.experimentsOf(target, opt.HeldOutSources) {
		var e *CWRUExperiment
		var err error
		what := fmt.Sprintf("%s seed %d", target, rep)
		if heldOut == "" {
			e, err = c.Prepare(target, expSeed, opt.Protocol, encProgress)
		} else {
			e, err = c.PrepareHeldOut(target, heldOut, expSeed, opt.Protocol, encProgress)
			what = fmt.Sprintf("the sources of %s seed %d, %s held out", target, rep, heldOut)
		}
		if err != nil {
			return nil, err
		}
		results, err := runCWRUJobs(e, jobs, expSeed, rep, what, opt.Workers, prog)
		if err != nil {
			return nil, err
		}
		for _, r := range results {
			if heldOut != "" {
				for j := range r {
					r[j].Target, r[j].HeldOut = target, heldOut
				}
			}
			out = append(out, r...)
		}
	}
	return out, nil
}

// runCWRUJobs fits the jobs on the prepared experiment e, named what in
// messages, workers at a time, and returns their results in job order.
func runCWRUJobs(e *CWRUExperiment, jobs []cwruJob, seed uint64, rep int, what string, workers int, prog *cwruProgress) ([][]Result, error) {
	results := make([][]Result, len(jobs))
	err := par.Run(len(jobs), workers, func(i int) (err error) {
		results[i], err = runCWRUJob(e, jobs[i].fam, jobs[i].members, seed, rep)
		if err != nil {
			return fmt.Errorf("bench: cwru: %s on %s: %w", strings.Join(jobs[i].fam.members, "/"), what, err)
		}
		return nil
	}, func(i int) { prog.finished(jobs[i], what) })
	if err != nil {
		return nil, err
	}
	return results, nil
}

// sourcesOf returns the domains other than target, in order: its sources.
func (c *CWRU) sourcesOf(target string) []string {
	var src []string
	for _, d := range c.Domains {
		if d != target {
			src = append(src, d)
		}
	}
	return src
}

// canHoldOut says whether held-out-source validation is possible: a target
// and at least two sources, one to hold out and one to learn from.
func (c *CWRU) canHoldOut() error {
	if len(c.Domains) < 3 {
		return fmt.Errorf("bench: cwru: %d domains; holding a source out needs at least 3", len(c.Domains))
	}
	return nil
}

// drawSeed is the seed of repetition rep on target under base seed base:
// it seeds the windows, the encoder and every method of that experiment.
func (c *CWRU) drawSeed(base uint64, target string, rep int) uint64 {
	return base*1000 + uint64(10*(slices.Index(c.Domains, target)+1)+rep)
}

// runCWRUJob fits one family on a prepared experiment and scores its
// requested members.
func runCWRUJob(e *CWRUExperiment, f cwruFamily, members []int, seed uint64, rep int) ([]Result, error) {
	t0 := time.Now()
	preds, err := f.fit(e, seed)
	if err != nil {
		return nil, err
	}
	fitSecs := time.Since(t0).Seconds()
	if f.spectra {
		fitSecs = e.EncoderSeconds
	}
	var out []Result
	for _, i := range members {
		t1 := time.Now()
		test := e.Problem.Test
		switch {
		case f.spectra:
			test = &dataset.Domain{X: e.TestSpectra, Y: test.Y}
		case f.paper:
			test = e.PaperProblem.Test
		}
		acc, err := adapt.Score(preds[i], test)
		if err != nil {
			return nil, err
		}
		out = append(out, Result{
			Method: f.members[i], Target: e.Target, Fold: rep,
			Accuracy: 100 * acc,
			Seconds:  fitSecs + time.Since(t1).Seconds(),
		})
	}
	return out, nil
}
