package main

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/npy"
	"github.com/dadil/dadil/signal"
)

// runFeaturesFFT turns recordings into spectrum features: random windows,
// FFT magnitudes, one .npz that dadil fit reads as a domain.
func runFeaturesFFT(args []string, e *env) error {
	fs := newFlags("dadil features fft", e)
	var inputs, labels multiFlag
	fs.Var(&inputs, "input", "recording `PATH`: MATLAB (.mat), WAV (.wav), NumPy (.npy, .npz) or CSV (.csv); repeat for every recording")
	fs.Var(&labels, "label", "integer class label of the matching --input (give one per --input, or none)")
	files := fs.String("files", "", "take the recordings of one domain from a file map `CSV` (file,label,class,domain,variable), as dadil bench cwru does")
	domain := fs.String("domain", "", "the domain of --files to extract")
	data := fs.String("data", "", "folder the paths of --files are relative to (default: the folder of the map)")
	variable := fs.String("variable", "", "the signal of every --input: a MATLAB variable, an .npz array or a CSV column header (default: for <id>.mat X<id>_<sensor>_time, for another .mat the only variable ending in _<sensor>_time; for .npz the only array)")
	channel := fs.String("channel", "", "for .mat files the CWRU sensor that finds the default variable: DE (drive end, the default), FE (fan end) or BA (base); for .wav, .npy, .npz and .csv files a channel number counted from 1, or mean (the mean of all channels; default: the file's only channel)")
	window := fs.Int("window", 4096, "samples per window")
	coeffs := fs.Int("coeffs", 2048, "Fourier magnitudes kept per window (at most window/2+1)")
	windows := fs.Int("windows", 800, "windows drawn from every recording (with --hop: at most this many, all that fit when not given)")
	hop := fs.Int("hop", 0, "cut windows every `N` samples from the start of each recording instead of at random positions (N = window: adjacent windows)")
	seed := fs.Uint64("seed", 1, "random seed of the window positions")
	taper := fs.String("taper", "none", "window function applied before the transform: none (the paper's CWRU preprocessing) or hann (less leakage between bins)")
	logMag := fs.Bool("log", false, "write log(1 + |X_k|) instead of the magnitudes |X_k| (compresses the dynamic range of audio spectra)")
	out := fs.String("out", "", "output `FILE`.npz: X (windows × coeffs), y (labels, if given), file (index of the recording), start (first sample)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil features fft --out FILE.npz (--input PATH [--label L] ... | --files MAP.csv --domain D [--data DIR]) [flags]")
		fmt.Fprintln(fs.Output(), "\nDraws windows of consecutive samples at random positions (or, with --hop, at a fixed stride) from")
		fmt.Fprintln(fs.Output(), "each recording and writes the magnitudes of their discrete Fourier transforms, one row per window:")
		fmt.Fprintln(fs.Output(), "the preprocessing of the paper's CWRU experiment. The output is a domain for dadil fit (X and,")
		fmt.Fprintln(fs.Output(), "with labels, y). WAV samples are scaled to [-1, 1) (integer PCM) or read as they are (float).")
		fmt.Fprintln(fs.Output())
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError{fmt.Errorf("--out is required")}
	}
	if !strings.HasSuffix(*out, ".npz") {
		return usageError{fmt.Errorf("--out %s: the output is a .npz archive", *out)}
	}
	if err := checkOutput("--out", *out); err != nil {
		return err
	}
	if *windows < 1 {
		return usageError{fmt.Errorf("--windows must be at least 1")}
	}
	if *hop < 0 {
		return usageError{fmt.Errorf("--hop must be positive (or 0: random positions)")}
	}
	limit := *windows // windows per recording with --hop; 0: all
	if *hop > 0 && !flagSet(fs, "windows") {
		limit = 0
	}
	if *hop > 0 && flagSet(fs, "seed") {
		return usageError{fmt.Errorf("--seed has no meaning with --hop (the windows are not drawn at random)")}
	}
	tp, err := signal.ParseTaper(*taper)
	if err != nil {
		return usageError{fmt.Errorf("--taper: %s", strings.TrimPrefix(err.Error(), "signal: "))}
	}
	spec := &signal.Settings{Taper: tp, Log: *logMag}
	if _, err := signal.NewSpectrum(*window, *coeffs, spec); err != nil {
		return usageError{err}
	}
	type rec struct {
		path, variable string
		label          int
		labeled        bool
	}
	var recs []rec
	switch {
	case *files != "" && len(inputs) > 0:
		return usageError{fmt.Errorf("give either --input or --files, not both")}
	case *files != "":
		if *domain == "" {
			return usageError{fmt.Errorf("--files needs --domain")}
		}
		fm, err := bench.ReadCWRUFiles(*files)
		if err != nil {
			return err
		}
		dir := *data
		if dir == "" {
			dir = filepath.Dir(*files)
		}
		var doms []string
		for _, f := range fm {
			if !slices.Contains(doms, f.Domain) {
				doms = append(doms, f.Domain)
			}
		}
		if !slices.Contains(doms, *domain) {
			return usageError{fmt.Errorf("--domain %q: %s lists no file for it (domains: %s)", *domain, *files, strings.Join(doms, ", "))}
		}
		// The classes of the map are those dadil bench cwru uses.
		present, err := bench.PresentCWRUFiles(dir, fm)
		if err != nil {
			return err
		}
		if len(present.Dropped) > 0 {
			fmt.Fprintf(e.stderr, "note: no recordings of class %s in %s: left out, as dadil bench cwru does\n", strings.Join(present.Dropped, ", "), dir)
		}
		for _, f := range present.Files {
			if f.Domain == *domain {
				recs = append(recs, rec{filepath.Join(dir, filepath.FromSlash(f.Path)), f.Variable, f.Label, true})
			}
		}
	case len(inputs) > 0:
		if len(labels) > 0 && len(labels) != len(inputs) {
			return usageError{fmt.Errorf("%d --label for %d --input: give one label per input, or none", len(labels), len(inputs))}
		}
		for i, p := range inputs {
			r := rec{path: p, variable: *variable}
			if len(labels) > 0 {
				l, err := strconv.Atoi(labels[i])
				if err != nil {
					return usageError{fmt.Errorf("--label %q (for %s) is not an integer", labels[i], p)}
				}
				r.label, r.labeled = l, true
			}
			recs = append(recs, r)
		}
	default:
		return usageError{fmt.Errorf("give the recordings with --input or --files")}
	}
	// Check every recording's options before reading any, and read them
	// all before writing anything.
	opts := make([]signal.ReadOptions, len(recs))
	for i, r := range recs {
		o, err := recordingOptions(r.path, r.variable, *channel)
		if err != nil {
			return err
		}
		opts[i] = o
	}
	var X, y, file, start []float64
	rates := map[int]bool{}
	for i, r := range recs {
		rec, err := signal.Read(r.path, &opts[i])
		if err != nil {
			return err
		}
		what := r.path
		if rec.Signal != "" {
			what += ": " + rec.Signal
		}
		rates[rec.Rate] = true
		var starts []int
		if *hop > 0 {
			starts, err = signal.SlidingStarts(len(rec.Samples), *window, *hop, limit)
		} else {
			h := fnv.New64a()
			h.Write([]byte(strconv.Itoa(i)))
			starts, err = signal.RandomStarts(rand.New(rand.NewPCG(*seed, h.Sum64())), len(rec.Samples), *window, *windows)
		}
		// The signal package's errors, with the recording named after
		// their prefix.
		named := func(err error) error {
			return fmt.Errorf("signal: %s: %s", what, strings.TrimPrefix(err.Error(), "signal: "))
		}
		if err != nil {
			return named(err)
		}
		F, err := signal.Features(rec.Samples, starts, *window, *coeffs, spec)
		if err != nil {
			return named(err)
		}
		X = append(X, F.RawMatrix().Data...)
		for _, s := range starts {
			file = append(file, float64(i))
			start = append(start, float64(s))
			if r.labeled {
				y = append(y, float64(r.label))
			}
		}
	}
	rows := len(file)
	if len(rates) > 1 {
		var rs []string
		for r := range rates {
			if r > 0 {
				rs = append(rs, strconv.Itoa(r)+" Hz")
			} else {
				rs = append(rs, "unknown")
			}
		}
		slices.Sort(rs)
		fmt.Fprintf(e.stderr, "note: the recordings have different sampling rates (%s): coefficient k is a different frequency in each\n", strings.Join(rs, ", "))
	}
	arrays := map[string]*npy.Array{
		"X":     {Shape: []int{rows, *coeffs}, Data: X},
		"file":  {Shape: []int{rows}, Data: file},
		"start": {Shape: []int{rows}, Data: start},
	}
	if len(y) > 0 {
		arrays["y"] = &npy.Array{Shape: []int{rows}, Data: y}
	}
	if err := npy.WriteNPZ(*out, arrays); err != nil {
		return err
	}
	lab := "unlabeled"
	if len(y) > 0 {
		lab = "labeled"
	}
	how := fmt.Sprintf("seed %d", *seed)
	if *hop > 0 {
		how = fmt.Sprintf("hop %d", *hop)
	}
	if tp != signal.Rectangular {
		how += ", " + tp.String() + " taper"
	}
	if *logMag {
		how += ", log magnitudes"
	}
	fmt.Fprintf(e.stdout, "wrote %s: %d windows × %d magnitudes from %d recordings (%s; window %d, %s)\n", *out, rows, *coeffs, len(recs), lab, *window, how)
	if len(rates) == 1 {
		for r := range rates {
			if r > 0 {
				fmt.Fprintf(e.stdout, "sampling rate %d Hz: coefficient k is at k × %.6g Hz\n", r, float64(r)/float64(*window))
			}
		}
	}
	return nil
}

// recordingOptions turns --variable and --channel into the reading
// options of one recording: for a MATLAB file --channel is the CWRU
// sensor, for the others a channel number or "mean".
func recordingOptions(path, variable, channel string) (signal.ReadOptions, error) {
	o := signal.ReadOptions{Variable: variable}
	n, numErr := strconv.Atoi(channel)
	if strings.EqualFold(filepath.Ext(path), ".mat") {
		if numErr == nil || channel == "mean" {
			return o, usageError{fmt.Errorf("--channel %s: %s is a MATLAB file, whose signal is chosen by its CWRU sensor (DE, FE, BA) or --variable; channel numbers and mean apply to .wav, .npy, .npz and .csv files", channel, path)}
		}
		o.Sensor = channel
		return o, nil
	}
	switch {
	case channel == "":
		o.Channel = signal.OnlyChannel
	case channel == "mean":
		o.Channel = signal.MeanChannel
	case numErr == nil && n >= 1:
		o.Channel = n
	default:
		return o, usageError{fmt.Errorf("--channel %s for %s: want a channel number (1, 2, …) or mean; sensor names (DE, FE, BA) apply to MATLAB files", channel, path)}
	}
	return o, nil
}
