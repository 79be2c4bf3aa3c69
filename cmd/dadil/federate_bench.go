package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/federate"
	"github.com/dadil/dadil/internal/clip"
)

// demoBenchFlags are the flags of dadil federate demo --bench.
type demoBenchFlags struct {
	bench, data, features, targets, folds, json string
}

// demoBenchOnly are the flags that only --bench uses; demoFileOnly those
// that --bench leaves unused.
var (
	demoBenchOnly = []string{"data", "features", "targets", "folds", "json"}
	demoFileOnly  = []string{"source", "target", "data-seed", "label-column", "no-header", "features-var", "labels-var"}
)

// federatedMethods are the rows of the table of dadil federate demo --bench.
var federatedMethods = []string{"federated DaDiL-R", "federated DaDiL-E", "centralised DaDiL-R", "centralised DaDiL-E",
	"centralised DaDiL-R, federation's start", "centralised DaDiL-E, federation's start"}

func (b *demoBenchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.bench, "bench", "", "run on every split of a benchmark's folds instead: `office-caltech10` (the paper's five folds)")
	fs.StringVar(&b.data, "data", "", "with --bench: benchmark folder `DIR` holding surf/, decaf/ and folds/")
	fs.StringVar(&b.features, "features", "surf", "with --bench: feature set, `surf` or decaf")
	fs.StringVar(&b.targets, "targets", "W,A,D,C", "with --bench: comma-separated target domains")
	fs.StringVar(&b.folds, "folds", "1,2,3,4,5", "with --bench: comma-separated test folds")
	fs.StringVar(&b.json, "json", "", "with --bench: write every split's accuracies and times, the federation's settings and bytes per round to `FILE` as JSON")
}

// unused reports flags of --bench given without it.
func (b *demoBenchFlags) unused(fs *flag.FlagSet) error {
	for _, f := range demoBenchOnly {
		if flagSet(fs, f) {
			return usageError{fmt.Errorf("--%s goes with --bench", f)}
		}
	}
	return nil
}

// lists checks the flags of --bench and returns the targets and folds.
func (b *demoBenchFlags) lists(fs *flag.FlagSet) ([]string, []int, error) {
	if b.bench != "office-caltech10" {
		return nil, nil, usageError{fmt.Errorf("--bench: want office-caltech10, not %s", clip.Quote(b.bench))}
	}
	for _, f := range demoFileOnly {
		if flagSet(fs, f) {
			return nil, nil, usageError{fmt.Errorf("--%s has no meaning with --bench (the benchmark gives the domains)", f)}
		}
	}
	if b.data == "" {
		return nil, nil, usageError{fmt.Errorf("--data is required with --bench")}
	}
	var targets []string
	for _, t := range splitList(b.targets) {
		t = strings.ToUpper(t)
		if !slices.Contains(bench.OfficeCaltechDomains, t) {
			return nil, nil, usageError{fmt.Errorf("--targets: %s is not one of %s", clip.Quote(t), strings.Join(bench.OfficeCaltechDomains, ", "))}
		}
		targets = append(targets, t)
	}
	var folds []int
	for _, f := range splitList(b.folds) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 || v > 5 {
			return nil, nil, usageError{fmt.Errorf("--folds: %s is not a fold (1 to 5)", clip.Quote(f))}
		}
		folds = append(folds, v)
	}
	if len(targets) == 0 || len(folds) == 0 {
		return nil, nil, usageError{fmt.Errorf("--targets and --folds need at least one value each")}
	}
	return targets, folds, nil
}

// run runs federated and centralised DaDiL on every split asked: the
// sources are the source sites, the target's other folds the target site,
// scored on the test fold. It prints a line per split, then the table.
func (b *demoBenchFlags) run(fs *flag.FlagSet, d demoRunner, e *env) error {
	targets, folds, err := b.lists(fs)
	if err != nil {
		return err
	}
	o, err := bench.LoadOfficeCaltech(b.data, b.features)
	if err != nil {
		return err
	}
	if d.trainer, err = (&dictFlags{classifier: defaultClassifier}).trainer(dataset.ScaleMinMax); err != nil {
		return err
	}
	if err := d.start(e); err != nil {
		return err
	}
	defer d.srv.Shutdown()
	w := e.stdout
	start := time.Now()
	var res []bench.Result
	var out, in int64 // bytes per round, the first split's
	for _, t := range targets {
		for _, f := range folds {
			p, err := o.Split(t, f)
			if err != nil {
				return err
			}
			r, err := d.run(p)
			if err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
			if len(res) == 0 {
				out, in = r.out, r.in
				d.describe(w, r)
				fmt.Fprintf(w, "  bytes per round (mean): %s sent to the sites, %s received from them\n", byteSize(r.out), byteSize(r.in))
			}
			fmt.Fprintf(w, "%s: federated R %.2f E %.2f (%.1f s), centralised R %.2f E %.2f (%.1f s), from the federation's start R %.2f E %.2f\n", p.Name,
				100*r.fedR, 100*r.fedE, r.fedTime.Seconds(), 100*r.cenR, 100*r.cenE, r.cenTime.Seconds(), 100*r.startR, 100*r.startE)
			for i, v := range []float64{r.fedR, r.fedE, r.cenR, r.cenE, r.startR, r.startE} {
				sec := []time.Duration{r.fedTime, r.cenTime, r.startTime}[i/2]
				res = append(res, bench.Result{Method: federatedMethods[i], Target: t, Fold: f, Accuracy: 100 * v, Seconds: sec.Seconds()})
			}
		}
	}
	fmt.Fprintf(w, "\nCaltech-Office 10, %s features: test-fold accuracy (%%), mean ± std over folds %s; centralised: %d epochs; %.0f s.\n\n",
		b.features, strings.Join(splitList(b.folds), ","), d.cfg.Rounds*d.cfg.LocalEpochs, time.Since(start).Seconds())
	fmt.Fprint(w, bench.Table(res, federatedMethods, targets))
	if b.json == "" {
		return nil
	}
	return writeBenchJSON(b.json, map[string]any{
		"benchmark": "office-caltech10", "features": b.features, "federation": federationJSON(d.cfg),
		"bytes_per_round": map[string]int64{"to_sites": out, "from_sites": in}, "results": res,
	})
}

// federationJSON describes the settings of a federation for --json.
func federationJSON(cfg federate.Config) map[string]any {
	return map[string]any{
		"rounds": cfg.Rounds, "local_epochs": cfg.LocalEpochs, "fraction": cfg.Fraction,
		"aggregation": cfg.Aggregation.String(), "server_optimizer": cfg.Server.Optimizer.String(),
		"keep_local_state": cfg.KeepLocalState, "weigh_moves": cfg.WeighMoves, "source_logits": cfg.SourceLogits, "share_moments": cfg.ShareMoments, "seed": cfg.Seed,
		"start": cfg.Start.String(), "scaling": cfg.Scaling.String(),
		"atoms": cfg.Settings.Atoms, "samples": cfg.Settings.Samples, "batch": cfg.Settings.Batch, "learning_rate": cfg.Settings.LearningRate,
	}
}
