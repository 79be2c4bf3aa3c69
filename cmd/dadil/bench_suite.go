package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/selection"
)

// suiteCommand holds the flags of dadil bench suite.
type suiteCommand struct {
	fs                                *flag.FlagSet
	dict                              dictFlags
	gmm                               gmmFlags
	data, sets, methods, json, choose string
	among                             string
	scored                            selection.Among // --select-among parsed; nil: every method
	scale                             string
	from                              string
	workers, maxRows, seeds           int
	quiet                             bool
}

func parseSuite(args []string, e *env) (*suiteCommand, error) {
	c := &suiteCommand{fs: newFlags("dadil bench suite", e)}
	fs := c.fs
	c.dict.register(fs)
	c.gmm.register(fs)
	fs.StringVar(&c.data, "data", "", "`DIR` holding the data sets' folders (../shared/data)")
	fs.StringVar(&c.sets, "sets", strings.Join(bench.SuiteSetNames, ","), "comma-separated `LIST` of data sets")
	fs.StringVar(&c.methods, "methods", "all", "comma-separated `LIST` of methods ("+strings.Join(adapt.Names(), ", ")+"), or all")
	fs.StringVar(&c.json, "json", "", "write every result to `FILE` as JSON")
	fs.StringVar(&c.from, "from", "", "print the tables of the results previous runs wrote with --json to `FILES` (comma-separated; runs of other seeds are summarised together), without fitting anything")
	fs.IntVar(&c.seeds, "seeds", 1, "run the suite `N` times, with the seeds --seed … --seed+N−1, and summarise them together (means over the seeds and targets, ranks on those means)")
	fs.IntVar(&c.workers, "workers", 0, "fits run at once (0: one per core); results do not depend on it")
	fs.StringVar(&c.scale, "scale", "standard", "feature scaling over all domains of a problem together, as dadil adapt's: `standard` or minmax (--paper: minmax unless given)")
	fs.IntVar(&c.maxRows, "max-rows", 2000, "rows of every domain for the transport-based methods, as dadil adapt")
	fs.StringVar(&c.choose, "select", "", selectUsage+"; prints each scorer's pick against the best method of every experiment")
	fs.StringVar(&c.among, "select-among", "", "with --select, score and pick among these methods only (comma-separated `LIST`, as dadil adapt --methods LIST --select would), the oracle staying the best of all methods")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress output")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil bench suite --data DIR [--sets LIST] [--methods LIST] [--select LIST [--select-among LIST]] [--json FILE]")
		fmt.Fprintln(fs.Output(), "\nRuns every method on every target of every data set of the development suite, each domain in")
		fmt.Fprintln(fs.Output(), "turn the target and the others its sources, prepared as dadil adapt prepares files by default,")
		fmt.Fprintln(fs.Output(), "and prints each method's mean score per data set (balanced accuracy where classes are")
		fmt.Fprintln(fs.Output(), "imbalanced), its rank there, and its mean rank. With --select, also the mean score of the method")
		fmt.Fprintln(fs.Output(), "each label-free scorer picks on every experiment, and its gap to the best method (the oracle).")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if c.data == "" && c.from == "" {
		return nil, usageError{fmt.Errorf("--data is required (or --from)")}
	}
	c.dict.allowAuto = true
	if err := c.dict.check(); err != nil {
		return nil, err
	}
	if err := c.gmm.check(); err != nil {
		return nil, err
	}
	if err := checkWorkers(c.workers); err != nil {
		return nil, err
	}
	if c.seeds < 1 {
		return nil, usageError{fmt.Errorf("--seeds must be at least 1")}
	}
	if c.json != "" {
		if err := checkOutput("--json", c.json); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func runBenchSuite(args []string, e *env) error {
	c, err := parseSuite(args, e)
	if err != nil {
		return err
	}
	methods, err := requestedMethods(c.methods)
	if err != nil {
		return usageError{err}
	}
	if c.from != "" {
		return printSuiteFrom(e, c.from, methods)
	}
	if c.dict.paper && !flagSet(c.fs, "scale") {
		c.scale = "minmax"
	}
	if c.scale != "minmax" && c.scale != "standard" {
		return usageError{fmt.Errorf("--scale %s: want minmax or standard", clip.Quote(c.scale))}
	}
	scorers, err := requestedScorers(c.choose, c.dict.seed)
	if err != nil {
		return usageError{err}
	}
	if c.scored, err = parseAmong(c.among, scorers, methods); err != nil {
		return err
	}
	if slices.Contains(methods, "dadil-r") || slices.Contains(methods, "dadil-e") {
		if err := c.dict.checkEarly(1); err != nil {
			return err
		}
	}
	start := time.Now()
	base := c.dict.seed
	var runs [][]bench.SuiteResult
	var sets []*bench.SuiteSet
	var trainer classify.Trainer
	for s := range uint64(c.seeds) {
		c.dict.seed = base + s
		var results []bench.SuiteResult
		if results, sets, trainer, err = c.run(e, methods, s == 0); err != nil {
			return err
		}
		runs = append(runs, results)
	}
	c.dict.seed = base
	results, err := bench.MergeSuiteResults(runs...)
	if err != nil {
		return err
	}
	return c.report(e, sets, methods, scorerNames(scorers), trainer, results, time.Since(start))
}

// parseAmong parses --select-among: methods among those run, with
// scorers (--select); nil when the flag is empty (every method scored).
// dadil adapt and dadil bench suite share it.
func parseAmong(among string, scorers []selection.Scorer, methods []string) (selection.Among, error) {
	if among == "" {
		return nil, nil
	}
	if len(scorers) == 0 {
		return nil, usageError{errors.New("--select-among needs --select")}
	}
	list, err := listFlag("--select-among", "method", among, adapt.Names())
	if err != nil {
		return nil, usageError{err}
	}
	for _, m := range list {
		if !slices.Contains(methods, m) {
			return nil, usageError{fmt.Errorf("--select-among: %s is not among the methods run (--methods)", m)}
		}
	}
	return list, nil
}

// report prints the sets, the summary of the results and, with scorers,
// their selection, and writes --json.
func (c *suiteCommand) report(e *env, sets []*bench.SuiteSet, methods, scorers []string, trainer classify.Trainer, results []bench.SuiteResult, took time.Duration) error {
	var names []string
	for _, s := range sets {
		names = append(names, s.Name)
		fmt.Fprintf(e.stdout, "- %s: %s (%d targets%s)\n", s.Name, s.Protocol, len(s.Domains), map[bool]string{true: ", balanced accuracy"}[s.Balanced])
	}
	fmt.Fprintf(e.stdout, "\nMean score per data set (rank), classifier %s, %s scaling, %s; %s.\n\n", classifierLabel(trainer.Name(), c.dict.l2), c.scale, seedsLabel(c.dict.seed, c.seeds), took.Round(time.Second))
	fmt.Fprint(e.stdout, bench.Summarize(results, names, methods).Markdown())
	if len(scorers) > 0 {
		fmt.Fprintf(e.stdout, "\nLabel-free selection: mean score of the method each scorer picks (its highest value) per data set, and in brackets its gap to the best method of every experiment (the oracle, which reads the target labels).\n\n")
		fmt.Fprint(e.stdout, bench.SummarizeSelection(results, names, scorers).Markdown())
	}
	if c.json != "" {
		return writeBenchJSON(c.json, map[string]any{"benchmark": "suite", "seed": c.dict.seed, "seeds": c.seeds, "classifier": trainer.Name(), "scaling": c.scale, "results": results})
	}
	return nil
}

// seedsLabel says which seeds a summary holds: "seed 1", "seeds 1–3".
func seedsLabel(base uint64, n int) string {
	if n == 1 {
		return fmt.Sprintf("seed %d", base)
	}
	return fmt.Sprintf("seeds %d–%d", base, base+uint64(n)-1)
}

// scorerNamesOf returns the scorers whose values the results hold, in the
// order they first appear.
func scorerNamesOf(results []bench.SuiteResult) []string {
	var out []string
	for _, r := range results {
		for _, x := range r.Selection {
			if !slices.Contains(out, x.Scorer) {
				out = append(out, x.Scorer)
			}
		}
	}
	return out
}

// run runs the suite once with the seed of --seed, and returns its
// results, its sets and the classifier; notes on the sets are printed
// when first is true (they do not depend on the seed).
func (c *suiteCommand) run(e *env, methods []string, first bool) ([]bench.SuiteResult, []*bench.SuiteSet, classify.Trainer, error) {
	scorers, err := requestedScorers(c.choose, c.dict.seed) // checked; seeded
	if err != nil {
		return nil, nil, nil, err
	}
	seed := c.dict.seed
	sets, notes, err := bench.LoadSuite(c.data, splitList(c.sets), seed)
	if err != nil {
		return nil, nil, nil, err
	}
	if first {
		for _, n := range notes {
			fmt.Fprintln(e.stderr, "note:", n)
		}
	}
	kind, _ := dataset.ParseScaling(c.scale) // checked
	trainer, err := c.dict.trainer(kind)
	if err != nil {
		return nil, nil, nil, err
	}
	// The sets' classes differ: sizes stay per class (no rounding).
	set, err := c.dict.settings(c.fs, 1, func(string, ...any) {})
	if err != nil {
		return nil, nil, nil, err
	}
	opt := bench.SuiteOptions{Methods: methods, Config: adapt.Config{Seed: seed, MaxRows: c.maxRows, Classifier: trainer, Dictionary: &set,
		GMM: c.gmm.template(0, gmm.DefaultDictionaryPlateauTol)}, Workers: c.workers, Scorers: scorers, Standard: c.scale == "standard"}
	opt.SelectAmong = c.scored
	if c.dict.autoAtoms {
		opt.ExtraAtoms = autoExtraAtoms
	}
	if err := c.checkMemory(sets, methods, &opt.Config); err != nil {
		return nil, nil, nil, err
	}
	defer useMemoryLimit(memoryLimit(c.dict.maxBytes))()
	if !c.quiet {
		opt.Progress = benchProgress(e)
		if c.seeds > 1 {
			p := opt.Progress
			opt.Progress = func(done, total int, what string, elapsed time.Duration) {
				p(done, total, fmt.Sprintf("seed %d: %s", seed, what), elapsed)
			}
		}
	}
	results, err := bench.RunSuite(sets, opt)
	return results, sets, trainer, err
}

// printSuiteFrom prints the tables of the results runs wrote with --json
// (paths, comma-separated), summarised together: every set and scorer
// they hold, in the order they appear, and the requested methods.
func printSuiteFrom(e *env, paths string, methods []string) error {
	var runs [][]bench.SuiteResult
	for _, path := range splitList(paths) {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var saved struct {
			Seed    uint64              `json:"seed"`
			Results []bench.SuiteResult `json:"results"`
		}
		if err := json.Unmarshal(b, &saved); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(saved.Results) == 0 {
			return fmt.Errorf("%s holds no suite results", path)
		}
		for i := range saved.Results {
			if saved.Results[i].Seed == 0 { // results without their own seed have the file's
				saved.Results[i].Seed = saved.Seed
			}
		}
		runs = append(runs, saved.Results)
	}
	results, err := bench.MergeSuiteResults(runs...)
	if err != nil {
		return fmt.Errorf("%s: %w", paths, err)
	}
	var sets []string
	for _, r := range results {
		if !slices.Contains(sets, r.Set) {
			sets = append(sets, r.Set)
		}
	}
	fmt.Fprint(e.stdout, bench.Summarize(results, sets, methods).Markdown())
	if scorers := scorerNamesOf(results); len(scorers) > 0 {
		fmt.Fprintln(e.stdout)
		fmt.Fprint(e.stdout, bench.SummarizeSelection(results, sets, scorers).Markdown())
	}
	return nil
}

// checkMemory refuses, before any fit, more atoms than labeled rows and
// methods whose fits would exceed the memory limit, on every target of
// every set (each domain in turn the target of the others).
func (c *suiteCommand) checkMemory(sets []*bench.SuiteSet, methods []string, cfg *adapt.Config) error {
	var heads []string
	for _, g := range adapt.Group(methods) {
		heads = append(heads, g[0])
	}
	dadil := slices.Contains(heads, "dadil-r") || slices.Contains(heads, "dadil-e")
	lim := memoryLimit(c.dict.maxBytes)
	for _, s := range sets {
		for t := range s.Domains {
			p := suiteSizes(s, t)
			if dadil {
				if err := c.dict.checkFit(p, []dictionary.Settings{c.dict.worstAtoms(*cfg.Dictionary)}, 1, 0, func(string, ...any) {}); err != nil {
					return fmt.Errorf("%s, target %s: %w", s.Name, s.Domains[t].Name, err)
				}
			}
			if err := checkMethodsMemory(c.fs, heads, cfg, p, c.workers, lim); err != nil {
				return fmt.Errorf("%s, target %s: %w", s.Name, s.Domains[t].Name, err)
			}
		}
	}
	return nil
}

// suiteSizes returns a problem with the sizes of set s's problem of
// target t (its rows, features, labeled sources and classes), for the
// memory estimates; its labels are not the set's.
func suiteSizes(s *bench.SuiteSet, t int) *dataset.Problem {
	classes := map[int]bool{}
	p := &dataset.Problem{}
	for k, f := range s.Domains {
		for _, l := range f.Labels {
			classes[l] = true
		}
		if k == t {
			p.Target = dataset.Domain{Name: f.Name, X: f.X}
			continue
		}
		p.Sources = append(p.Sources, dataset.Domain{Name: f.Name, X: f.X, Y: make([]int, f.X.RawMatrix().Rows)})
	}
	p.Classes = max(len(classes), 1)
	return p
}
