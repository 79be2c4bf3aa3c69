package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/clip"
)

// splitList splits a comma-separated flag value.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// tableMethods returns the methods of a benchmark's table: those asked,
// or all of them when none or "all" is asked.
func tableMethods(asked, all []string) []string {
	if len(asked) == 0 || (len(asked) == 1 && asked[0] == "all") {
		return all
	}
	return asked
}

// benchOCCommand holds the flags of dadil bench office-caltech10.
type benchOCCommand struct {
	fs                                                *flag.FlagSet
	data, features, methods, targets, folds, jsonPath string
	seed                                              uint64
	workers                                           int
	heldOut                                           bool
	l2, scale, transport                              string
	foldList                                          []int    // from --folds
	targetList, methodList                            []string // from --targets (upper case) and --methods
}

// parseBenchOC parses and checks the flags of dadil bench
// office-caltech10, before any work.
func parseBenchOC(args []string, e *env) (*benchOCCommand, error) {
	c := &benchOCCommand{fs: newFlags("dadil bench office-caltech10", e)}
	fs := c.fs
	fs.StringVar(&c.data, "data", "", "benchmark folder `DIR` holding surf/, decaf/ and folds/")
	fs.StringVar(&c.features, "features", "surf", "feature set: `surf` or decaf")
	fs.StringVar(&c.methods, "methods", "all", "comma-separated `LIST` of methods, or all")
	fs.StringVar(&c.targets, "targets", "W,A,D,C", "comma-separated target domains")
	fs.StringVar(&c.folds, "folds", "1,2,3,4,5", "comma-separated test folds")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed")
	fs.StringVar(&c.jsonPath, "json", "", "write every result to `FILE` as JSON")
	fs.IntVar(&c.workers, "workers", 0, "experiments run at once (0: one per core); results do not depend on it")
	fs.StringVar(&c.l2, "l2", "", "penalty `λ` of every method's softmax classifier but the paper's DaDiL (default 0.01 with --scale standard, else 0.001); auto: DaDiL-R and DaDiL-E choose theirs on the labeled sources (see dadil fit)")
	fs.StringVar(&c.scale, "scale", "standard", "feature scaling of every method but the paper's DaDiL, over all rows of the four domains: `standard` (dadil adapt's) or minmax (the paper's)")
	fs.StringVar(&c.transport, "transport", "auto", transportUsage)
	fs.BoolVar(&c.heldOut, "held-out-sources", false, "validate without the target instead: each target's sources are held out in turn as its unlabeled target (no folds)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil bench office-caltech10 --data DIR [--features surf|decaf] [--methods LIST] [--targets W,A,D,C] [--folds 1,2,3,4,5 | --held-out-sources] [--seed s] [--json FILE]")
		fmt.Fprintln(fs.Output(), "\nReproduces the Caltech-Office 10 experiments of the DaDiL paper (Tables 2 and 3) on the authors'")
		fmt.Fprintln(fs.Output(), "five folds: for every target and fold, the sources are the other three domains, the target's")
		fmt.Fprintln(fs.Output(), "other folds are its unlabeled training data, and accuracy is measured on the test fold.")
		fmt.Fprintln(fs.Output(), "With --held-out-sources, the target is not used: each of its three sources in turn is held out,")
		fmt.Fprintln(fs.Output(), "its labels hidden, and plays the target (leave-one-domain-out validation, a label-free choice).")
		fmt.Fprintf(fs.Output(), "\nMethods: %s\n\n", strings.Join(bench.MethodNames(), ", "))
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	return c, c.check()
}

// check reports malformed flags and reads the lists.
func (c *benchOCCommand) check() error {
	if err := checkWorkers(c.workers); err != nil {
		return err
	}
	if c.data == "" {
		return usageError{fmt.Errorf("--data is required")}
	}
	if err := checkJSON(c.jsonPath); err != nil {
		return err
	}
	if flagSet(c.fs, "l2") {
		if _, err := parseL2(c.l2); err != nil {
			return err
		}
	}
	if c.scale != "minmax" && c.scale != "standard" {
		return usageError{fmt.Errorf("--scale: want minmax or standard, not %s", clip.Quote(c.scale))}
	}
	if _, err := transportSettings(c.transport); err != nil {
		return err
	}
	if c.heldOut {
		if flagSet(c.fs, "folds") {
			return usageError{fmt.Errorf("--folds has no meaning with --held-out-sources (the target is not used)")}
		}
		c.folds = ""
	}
	for _, f := range splitList(c.folds) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return usageError{fmt.Errorf("--folds: %s is not a number", clip.Quote(f))}
		}
		c.foldList = append(c.foldList, v)
	}
	c.targetList = splitList(c.targets)
	for i := range c.targetList {
		c.targetList[i] = strings.ToUpper(c.targetList[i])
	}
	c.methodList = splitList(c.methods)
	return nil
}

func runBenchOfficeCaltech(args []string, e *env) error {
	c, err := parseBenchOC(args, e)
	if err != nil {
		return err
	}
	o, err := bench.LoadOfficeCaltech(c.data, c.features)
	if err != nil {
		return err
	}
	dict, classifier := c.l2Settings()
	announceMachine(e)
	start := time.Now()
	res, err := bench.RunOfficeCaltech(o, bench.Options{
		Methods: c.methodList, Targets: c.targetList, Folds: c.foldList, Seed: c.seed, Workers: c.workers, HeldOutSources: c.heldOut,
		Progress: benchProgress(e), Dictionary: dict, Classifier: classifier, Standard: c.scale == "standard",
	})
	if err != nil {
		return err
	}
	bench.SortResults(res, bench.MethodNames(), c.targetList)
	c.print(e.stdout, res, classifierLabel(classifier.Name(), c.l2), time.Since(start))
	if c.jsonPath != "" {
		return writeBenchJSON(c.jsonPath, map[string]any{"benchmark": "office-caltech10", "features": c.features, "scaling": c.scale, "classifier": classifier.Name(), "results": res, "validation": validation(c.heldOut)})
	}
	return nil
}

// l2Settings returns the options of --l2, --scale and --transport: a
// softmax regression with the penalty of --l2, or else the default penalty
// of the scaling (adapt.DefaultPenalty); with auto, DaDiL's defaults
// choosing theirs, anchored at that default; DaDiL-R's last step of
// --transport.
func (c *benchOCCommand) l2Settings() (*dictionary.Settings, classify.Trainer) {
	kind, _ := dataset.ParseScaling(c.scale)  // checked
	dict, _ := transportSettings(c.transport) // checked
	if c.l2 == "auto" {
		if dict == nil {
			dict = &dictionary.Settings{}
		}
		dict.ChoosePenalty = true
	}
	return dict, &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: penalty(c.l2, kind)}}
}

// print writes what the accuracies measure, the scaling and classifier of
// the methods but the paper's DaDiL, and the table.
func (c *benchOCCommand) print(w io.Writer, res []bench.Result, classifier string, took time.Duration) {
	if c.heldOut {
		fmt.Fprintf(w, "Caltech-Office 10, %s features: held-out-source validation, without the target. Column T: accuracy (%%) on\n"+
			"T's three sources, each held out in turn as the unlabeled target; mean ± std over them; seed %d; %.0f s.\n\n",
			c.features, c.seed, took.Seconds())
	} else {
		fmt.Fprintf(w, "Caltech-Office 10, %s features: target accuracy (%%), mean ± std over folds %s; seed %d; %.0f s.\n\n",
			c.features, c.folds, c.seed, took.Seconds())
	}
	fmt.Fprintf(w, "Features %s scaled, classifier %s (the paper's DaDiL: min-max, its own).\n\n", c.scale, classifier)
	fmt.Fprint(w, bench.Table(res, tableMethods(c.methodList, bench.MethodNames()), c.targetList))
}

// transportUsage is the help of the benchmarks' --transport.
const transportUsage = "last step of the default DaDiL-R (dadil-r), as dadil fit's --transport: none, sources, map, labels or `auto` (sources)"

// transportSettings returns the dictionary settings of a benchmark's
// --transport v: nil for auto (the defaults), else settings with that
// Transport; a usage error for a value that is not one of DaDiL-R's.
func transportSettings(v string) (*dictionary.Settings, error) {
	var tr dictionary.Transport
	if err := tr.UnmarshalText([]byte(v)); err != nil || tr == dictionary.TransportBarycenter {
		return nil, usageError{fmt.Errorf("--transport: want none, sources, map, labels or auto, not %s", clip.Quote(v))}
	}
	if tr == dictionary.TransportAuto {
		return nil, nil
	}
	return &dictionary.Settings{Transport: tr}, nil
}
