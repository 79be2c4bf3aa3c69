package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dadil/dadil/bench"
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

func runBenchOfficeCaltech(args []string, e *env) error {
	fs := newFlags("dadil bench office-caltech10", e)
	data := fs.String("data", "", "benchmark folder `DIR` holding surf/, decaf/ and folds/")
	features := fs.String("features", "surf", "feature set: `surf` or decaf")
	methods := fs.String("methods", "all", "comma-separated `LIST` of methods, or all")
	targets := fs.String("targets", "W,A,D,C", "comma-separated target domains")
	folds := fs.String("folds", "1,2,3,4,5", "comma-separated test folds")
	seed := fs.Uint64("seed", 1, "random seed")
	jsonPath := fs.String("json", "", "write every result to `FILE` as JSON")
	workers := fs.Int("workers", 0, "experiments run at once (0: one per core); results do not depend on it")
	heldOut := fs.Bool("held-out-sources", false, "validate without the target instead: each target's sources are held out in turn as its unlabeled target (no folds)")
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
		return err
	}
	if err := checkWorkers(*workers); err != nil {
		return err
	}
	if *data == "" {
		return usageError{fmt.Errorf("--data is required")}
	}
	if *jsonPath != "" {
		if err := checkOutput("--json", *jsonPath); err != nil {
			return err
		}
	}
	var fl []int
	if *heldOut {
		if flagSet(fs, "folds") {
			return usageError{fmt.Errorf("--folds has no meaning with --held-out-sources (the target is not used)")}
		}
		*folds = ""
	}
	for _, f := range splitList(*folds) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return usageError{fmt.Errorf("--folds: %q is not a number", f)}
		}
		fl = append(fl, v)
	}
	tl := splitList(*targets)
	for i := range tl {
		tl[i] = strings.ToUpper(tl[i])
	}
	ml := splitList(*methods)
	o, err := bench.LoadOfficeCaltech(*data, *features)
	if err != nil {
		return err
	}
	announceMachine(e)
	start := time.Now()
	res, err := bench.RunOfficeCaltech(o, bench.Options{
		Methods: ml, Targets: tl, Folds: fl, Seed: *seed, Workers: *workers, HeldOutSources: *heldOut,
		Progress: benchProgress(e),
	})
	if err != nil {
		return err
	}
	bench.SortResults(res, bench.MethodNames(), tl)
	names := ml
	if len(ml) == 0 || (len(ml) == 1 && ml[0] == "all") {
		names = bench.MethodNames()
	}
	if *heldOut {
		fmt.Fprintf(e.stdout, "Caltech-Office 10, %s features: held-out-source validation, without the target. Column T: accuracy (%%) on\n"+
			"T's three sources, each held out in turn as the unlabeled target; mean ± std over them; seed %d; %.0f s.\n\n",
			*features, *seed, time.Since(start).Seconds())
	} else {
		fmt.Fprintf(e.stdout, "Caltech-Office 10, %s features: target accuracy (%%), mean ± std over folds %s; seed %d; %.0f s.\n\n",
			*features, *folds, *seed, time.Since(start).Seconds())
	}
	fmt.Fprint(e.stdout, bench.Table(res, names, tl))
	if *jsonPath != "" {
		return writeBenchJSON(*jsonPath, map[string]any{"benchmark": "office-caltech10", "features": *features, "results": res, "validation": validation(*heldOut)})
	}
	return nil
}
