package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/mlp"
)

// runBenchCWRUEncoder scores encoder settings on held-out source loads: a
// label-free way to choose how the CWRU encoder is trained.
func runBenchCWRUEncoder(args []string, e *env) error {
	fs := newFlags("dadil bench cwru-encoder", e)
	data := fs.String("data", "", "CWRU data folder `DIR` (holding 12k_DE/ and normal/)")
	files := fs.String("files", "", "file map `CSV` (file,label,class,domain,variable); default: the paper's table of file ids")
	epochs := fs.String("epochs", "5,10", "comma-separated `LIST` of encoder epochs to try")
	decays := fs.String("weight-decay", "0,0.001,0.01", "comma-separated `LIST` of encoder weight decays λ to try")
	targets := fs.String("targets", strings.Join(bench.CWRUDomains, ","), "comma-separated target domains (rpm); each is left out, and its two sources validate each other")
	seeds := fs.Int("seeds", 5, "repetitions: the windows of dadil bench cwru with the same --seed")
	seed := fs.Uint64("seed", 1, "base random seed")
	jsonPath := fs.String("json", "", "write every result to `FILE` as JSON")
	windows := fs.Int("windows", 800, "windows per class and domain")
	train := fs.Int("train", 600, "training windows per class (the rest are test windows)")
	window := fs.Int("window", 4096, "samples per window")
	coeffs := fs.Int("coeffs", 2048, "Fourier magnitudes per window")
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
	if *data == "" {
		return usageError{fmt.Errorf("--data is required")}
	}
	if *seeds < 1 {
		return usageError{fmt.Errorf("--seeds must be at least 1")}
	}
	eps, err := parseInts("epochs", *epochs)
	if err != nil {
		return err
	}
	var wds []float64
	for _, f := range splitList(*decays) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v < 0 || v != v || v > 1e300 {
			return usageError{fmt.Errorf("--weight-decay: %q is not a finite non-negative number", f)}
		}
		wds = append(wds, v)
	}
	if len(eps) == 0 || len(wds) == 0 {
		return usageError{fmt.Errorf("--epochs and --weight-decay need at least one value each")}
	}
	if *jsonPath != "" {
		if err := checkOutput("--json", *jsonPath); err != nil {
			return err
		}
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
	fileMap := bench.CWRUFiles()
	if *files != "" {
		if fileMap, err = bench.ReadCWRUFiles(*files); err != nil {
			return err
		}
	}
	proto := &bench.CWRUProtocol{Window: *window, Coeffs: *coeffs, Windows: *windows, Train: *train}
	start := time.Now()
	c, err := bench.LoadCWRU(*data, fileMap, *window)
	if err != nil {
		return err
	}
	if len(c.Dropped) > 0 {
		fmt.Fprintf(e.stderr, "cwru: no recordings for class %s: running the %d-class problem\n", strings.Join(c.Dropped, ", "), len(c.Labels))
	}
	tl := splitList(*targets)
	res, err := bench.ValidateCWRUEncoders(c, bench.EncoderOptions{
		Candidates: cands, Targets: tl, Seeds: *seeds, Seed: *seed, Protocol: proto,
		Progress: func(done, total int, what string, elapsed time.Duration) {
			eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
			fmt.Fprintf(e.stderr, "[%d/%d] %s done; %s elapsed, ETA %s\n", done, total, what, elapsed.Round(time.Second), eta.Round(time.Second))
		},
	})
	if err != nil {
		return err
	}
	bench.SortResults(res, names, tl)
	fmt.Fprintf(e.stdout, "CWRU, %d classes: accuracy (%%) of encoders trained on one source load and tested on the other,\n"+
		"by left-out target; mean ± std over %d seeds (base seed %d); %.0f s.\n\n", len(c.Labels), *seeds, *seed, time.Since(start).Seconds())
	fmt.Fprint(e.stdout, strings.Replace(bench.Table(res, names, tl), "| Method |", "| Encoder |", 1))
	if *jsonPath != "" {
		return writeJSON(*jsonPath, map[string]any{
			"benchmark": "cwru-encoder", "classes": c.Labels, "class_names": c.Names, "dropped": c.Dropped,
			"protocol": proto, "seeds": *seeds, "seed": *seed, "results": res,
		})
	}
	return nil
}
