package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/dadil/dadil/bench"
)

func runBenchCWRU(args []string, e *env) error {
	fs := newFlags("dadil bench cwru", e)
	data := fs.String("data", "", "CWRU data folder `DIR` (holding 12k_DE/ and normal/)")
	files := fs.String("files", "", "file map `CSV` (file,label,class,domain,variable); default: the paper's table of file ids")
	methods := fs.String("methods", "all", "comma-separated `LIST` of methods, or all")
	targets := fs.String("targets", strings.Join(bench.CWRUDomains, ","), "comma-separated target domains (rpm)")
	seeds := fs.Int("seeds", 5, "repetitions: windows, encoder and methods re-drawn for each")
	seed := fs.Uint64("seed", 1, "base random seed")
	jsonPath := fs.String("json", "", "write every result to `FILE` as JSON")
	workers := fs.Int("workers", 0, "methods fitted at once (0: one per core); results do not depend on it")
	windows := fs.Int("windows", 800, "windows per class and domain")
	train := fs.Int("train", 600, "training windows per class (the rest are test windows)")
	window := fs.Int("window", 4096, "samples per window")
	coeffs := fs.Int("coeffs", 2048, "Fourier magnitudes per window")
	encEpochs := fs.Int("encoder-epochs", bench.CWRUEncoder().Epochs, "epochs of the encoder's training")
	encDecay := fs.Float64("encoder-weight-decay", bench.CWRUEncoder().WeightDecay, "L2 penalty λ on the encoder's weights")
	scaling := fs.String("scale", "minmax", "scaling of the encoded features: minmax, standard or none")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil bench cwru --data DIR [--methods LIST] [--targets 1772,1750,1730] [--seeds 5] [--json FILE]")
		fmt.Fprintln(fs.Output(), "\nReproduces the CWRU cross-domain fault-diagnosis experiment of the DaDiL paper (Table 5): from the")
		fmt.Fprintln(fs.Output(), "raw drive-end recordings, random windows → FFT magnitudes → an MLP encoder trained on the sources")
		fmt.Fprintln(fs.Output(), "→ every method on the encoded features; accuracy on the target's test windows, mean ± std over seeds.")
		fmt.Fprintf(fs.Output(), "\nMethods: %s\n\n", strings.Join(bench.CWRUMethodNames(), ", "))
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
	if *encEpochs < 1 {
		return usageError{fmt.Errorf("--encoder-epochs must be at least 1")}
	}
	if !(*encDecay >= 0) || *encDecay > 1e300 {
		return usageError{fmt.Errorf("--encoder-weight-decay must be a finite non-negative number")}
	}
	if *jsonPath != "" {
		if err := checkOutput("--json", *jsonPath); err != nil {
			return err
		}
	}
	fileMap := bench.CWRUFiles()
	if *files != "" {
		var err error
		if fileMap, err = bench.ReadCWRUFiles(*files); err != nil {
			return err
		}
	}
	enc := bench.CWRUEncoder()
	enc.Epochs = *encEpochs
	enc.WeightDecay = *encDecay
	proto := &bench.CWRUProtocol{Window: *window, Coeffs: *coeffs, Windows: *windows, Train: *train, Encoder: enc, Scaling: *scaling}
	start := time.Now()
	c, err := bench.LoadCWRU(*data, fileMap, *window)
	if err != nil {
		return err
	}
	if len(c.Dropped) > 0 {
		fmt.Fprintf(e.stderr, "cwru: no recordings for class %s: running the %d-class problem\n", strings.Join(c.Dropped, ", "), len(c.Labels))
	}
	tl := splitList(*targets)
	ml := splitList(*methods)
	res, err := bench.RunCWRU(c, bench.CWRUOptions{
		Methods: ml, Targets: tl, Seeds: *seeds, Seed: *seed, Workers: *workers, Protocol: proto,
		Progress: func(done, total int, what string, elapsed time.Duration) {
			eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
			fmt.Fprintf(e.stderr, "[%d/%d] %s done; %s elapsed, ETA %s\n", done, total, what, elapsed.Round(time.Second), eta.Round(time.Second))
		},
		Encoder: func(target string, rep, epoch, epochs int, loss, acc float64) {
			fmt.Fprintf(e.stderr, "encoder for %s seed %d: epoch %d/%d, loss %.4g, training accuracy %.2f%%\n", target, rep, epoch, epochs, loss, 100*acc)
		},
	})
	if err != nil {
		return err
	}
	names := ml
	if len(ml) == 0 || (len(ml) == 1 && ml[0] == "all") {
		names = bench.CWRUMethodNames()
	}
	bench.SortResults(res, bench.CWRUMethodNames(), tl)
	fmt.Fprintf(e.stdout, "CWRU, %d classes: target accuracy (%%), mean ± std over %d seeds (base seed %d); %.0f s.\n\n",
		len(c.Labels), *seeds, *seed, time.Since(start).Seconds())
	fmt.Fprint(e.stdout, bench.Table(res, names, tl))
	if *jsonPath != "" {
		return writeJSON(*jsonPath, map[string]any{
			"benchmark": "cwru", "classes": c.Labels, "class_names": c.Names, "dropped": c.Dropped,
			"protocol": proto, "seeds": *seeds, "seed": *seed, "results": res,
		})
	}
	return nil
}
