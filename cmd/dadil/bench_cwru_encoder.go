package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/mlp"
)

// runBenchCWRUEncoder scores encoder settings on held-out source loads: a
// label-free way to choose how the CWRU encoder is trained.
func runBenchCWRUEncoder(args []string, e *env) error {
	fs := newFlags("dadil bench cwru-encoder", e)
	cf := addCWRUFlags(fs, "comma-separated target domains (rpm); each is left out, and its two sources validate each other")
	epochs := fs.String("epochs", "5,10", "comma-separated `LIST` of encoder epochs to try")
	decays := fs.String("weight-decay", "0,0.001,0.01", "comma-separated `LIST` of encoder weight decays λ to try")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil bench cwru-encoder --data DIR [--epochs 5,10] [--weight-decay 0,0.001,0.01] [--targets 1772,1750,1730] [--seeds 5] [--json FILE]")
		fmt.Fprintln(fs.Output(), "\nScores CWRU encoder settings without the target: for each target and seed, the encoder is trained on")
		fmt.Fprintln(fs.Output(), "one source load alone and tested on the other source's test windows (both ways). The target's")
		fmt.Fprintln(fs.Output(), "recordings are never read, so the table can choose the encoder of dadil bench cwru without target labels.")
		fmt.Fprintln(fs.Output())
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := cf.check(); err != nil {
		return err
	}
	eps, err := parseInts("epochs", *epochs)
	if err != nil {
		return err
	}
	var wds []float64
	for _, f := range splitList(*decays) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v < 0 || v != v || v > 1e300 {
			return usageError{fmt.Errorf("--weight-decay: %s is not a finite non-negative number", clip.Quote(f))}
		}
		wds = append(wds, v)
	}
	if len(eps) == 0 || len(wds) == 0 {
		return usageError{fmt.Errorf("--epochs and --weight-decay need at least one value each")}
	}
	var cands []*mlp.Settings
	var names []string
	for _, ep := range eps {
		for _, wd := range wds {
			s := bench.CWRUEncoder()
			s.Epochs, s.WeightDecay = ep, wd
			cands = append(cands, s)
			names = append(names, bench.EncoderName(s))
		}
	}
	proto := cf.protocol()
	announceMachine(e)
	start := time.Now()
	c, err := cf.load(e)
	if err != nil {
		return err
	}
	tl := splitList(*cf.targets)
	res, err := bench.ValidateCWRUEncoders(c, bench.EncoderOptions{
		Candidates: cands, Targets: tl, Seeds: *cf.seeds, Seed: *cf.seed, Protocol: proto,
		Progress: benchProgress(e),
	})
	if err != nil {
		return err
	}
	bench.SortResults(res, names, tl)
	fmt.Fprintf(e.stdout, "CWRU, %d classes: accuracy (%%) of encoders trained on one source load and tested on the other,\n"+
		"by left-out target; mean ± std over %s (base seed %d); %.0f s.\n\n", len(c.Labels), plural(*cf.seeds, "seed"), *cf.seed, time.Since(start).Seconds())
	fmt.Fprint(e.stdout, strings.Replace(bench.Table(res, names, tl), "| Method |", "| Encoder |", 1))
	if *cf.jsonPath != "" {
		return writeBenchJSON(*cf.jsonPath, map[string]any{
			"benchmark": "cwru-encoder", "classes": c.Labels, "class_names": c.Names, "dropped": c.Dropped,
			"protocol": proto, "seeds": *cf.seeds, "seed": *cf.seed, "results": res,
		})
	}
	return nil
}
