package main

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/npy"
	"github.com/dadil/dadil/signal"
)

// maxFeatureGB bounds the size of the feature matrix features fft builds.
const maxFeatureGB = 16

// runFeaturesFFT turns recordings into spectrum features: random windows,
// FFT magnitudes, one .npz that dadil fit reads as a domain.
func runFeaturesFFT(args []string, e *env) error {
	fs := newFlags("dadil features fft", e)
	var inputs, labels multiFlag
	fs.Var(&inputs, "input", "recording `PATH`: MATLAB (.mat), WAV (.wav), FLAC (.flac), NumPy (.npy, .npz) or CSV (.csv); repeat for every recording")
	fs.Var(&labels, "label", "integer class label of the matching --input (give one per --input, or none)")
	files := fs.String("files", "", "take the recordings of one domain from a file map `CSV` (header file,label,class,domain,variable; an empty variable is the file's default signal), as dadil bench cwru does")
	domain := fs.String("domain", "", "the domain of --files to extract")
	data := fs.String("data", "", "folder the paths of --files are relative to (default: the folder of the map)")
	variable := fs.String("variable", "", "the signal of every --input: a MATLAB variable, an .npz array or a CSV column header (default: for <id>.mat X<id>_<sensor>_time, for another .mat the only variable ending in _<sensor>_time; for .npz the only array)")
	channel := fs.String("channel", "", "for .mat files the CWRU sensor that finds the default variable: DE (drive end, the default), FE (fan end) or BA (base); for .wav, .flac, .npy, .npz and .csv files a channel number counted from 1, or mean (the mean of all channels; default: the file's only channel)")
	window := fs.Int("window", 4096, "samples per window")
	coeffs := fs.Int("coeffs", 2048, "Fourier magnitudes kept per window (at most window/2+1)")
	windows := fs.Int("windows", 800, "windows drawn from every recording (with --hop: at most this many, all that fit when not given)")
	hop := fs.Int("hop", 0, "cut windows every `N` samples from the start of each recording instead of at random positions (N = window: adjacent windows)")
	seed := fs.Uint64("seed", 1, "random seed of the window positions")
	taper := fs.String("taper", "none", "window function applied before the transform: none (the paper's CWRU preprocessing) or hann (less leakage between bins)")
	logMag := fs.Bool("log", false, "write log(1 + v) instead of every magnitude or band energy v (compresses the dynamic range of audio spectra)")
	db := fs.Bool("db", false, "write decibels of power instead: 10·log10(max(p, 1e-10)) of |X_k|² or of the band energies (with --mel: a log-mel spectrogram)")
	melBands := fs.Int("mel", 0, "write the energies Σ_k H_b(f_k)|X_k|² of `B` triangular bands equally spaced on the mel scale (HTK, as torchaudio) instead of the magnitudes; needs the sampling rate")
	melScale := fs.String("mel-scale", "htk", "mel scale of the bands: htk (2595·log10(1 + f/700), torchaudio's default) or slaney (linear below 1 kHz, librosa's default)")
	melNorm := fs.String("mel-norm", "none", "none (every band peaks at 1, torchaudio's default) or slaney (every band has unit area in Hz, librosa's default)")
	fmin := fs.Float64("fmin", 0, "lower edge of the first mel band, in `Hz`")
	fmax := fs.Float64("fmax", 0, "upper edge of the last mel band, in `Hz` (default: half the sampling rate)")
	rate := fs.Float64("rate", 0, "sampling rate in `Hz` of recordings that do not carry one (.mat, .npy, .npz, .csv); WAV and FLAC files carry theirs")
	out := fs.String("out", "", "output `FILE`.npz: X (windows × coeffs or bands), y (labels, if given), file (index of the recording), start (first sample), freq (the frequency in Hz of every column, when the sampling rate is known: a coefficient's, or a mel band's centre)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil features fft --out FILE.npz (--input PATH [--label L] ... | --files MAP.csv --domain D [--data DIR]) [flags]")
		fmt.Fprintln(fs.Output(), "\nDraws windows of consecutive samples at random positions (or, with --hop, at a fixed stride) from")
		fmt.Fprintln(fs.Output(), "each recording and writes the magnitudes of their discrete Fourier transforms, one row per window:")
		fmt.Fprintln(fs.Output(), "the preprocessing of the paper's CWRU experiment. With --mel B it writes instead the energies of B")
		fmt.Fprintln(fs.Output(), "mel-scale bands (with --taper hann --db: the log-mel spectrogram of audio front ends). The output")
		fmt.Fprintln(fs.Output(), "is a domain for dadil fit (X and, with labels, y). WAV and FLAC samples are scaled to [-1, 1)")
		fmt.Fprintln(fs.Output(), "(integers) or read as they are (float WAV).")
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
	// A window past this (6 minutes at 48 kHz) is a mistake rather than a
	// spectrum; refusing it keeps the transform's buffers from exhausting
	// the memory before the recordings show it is longer than they are.
	if *window > maxWindow {
		return usageError{fmt.Errorf("--window %d: at most %d samples", *window, maxWindow)}
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
	if *logMag && *db {
		return usageError{fmt.Errorf("--log and --db exclude each other")}
	}
	if *rate < 0 || math.IsNaN(*rate) || math.IsInf(*rate, 0) || flagSet(fs, "rate") && *rate == 0 {
		return usageError{fmt.Errorf("--rate %v: want a sampling rate in Hz above 0", *rate)}
	}
	var mel *signal.Mel
	cols := *coeffs // columns of X
	switch {
	case *melBands < 0:
		return usageError{fmt.Errorf("--mel %d: want a number of bands (at least 1)", *melBands)}
	case *melBands > 0:
		if flagSet(fs, "coeffs") {
			return usageError{fmt.Errorf("--coeffs and --mel exclude each other: with --mel the features are the %d band energies, computed from every coefficient", *melBands)}
		}
		sc, err := signal.ParseMelScale(*melScale)
		if err != nil {
			return usageError{fmt.Errorf("--mel-scale: %s", strings.TrimPrefix(err.Error(), "signal: "))}
		}
		if *melNorm != "none" && *melNorm != "slaney" {
			return usageError{fmt.Errorf("--mel-norm %q: want none or slaney", *melNorm)}
		}
		mel = &signal.Mel{Min: *fmin, Max: *fmax, Scale: sc, Normalize: *melNorm == "slaney"}
		cols = *melBands
	case flagSet(fs, "fmin") || flagSet(fs, "fmax") || flagSet(fs, "mel-scale") || flagSet(fs, "mel-norm"):
		return usageError{fmt.Errorf("--fmin, --fmax, --mel-scale and --mel-norm set the mel bands: give them with --mel")}
	}
	spec := &signal.Settings{Taper: tp, Log: *logMag, Decibels: *db}
	// The bands depend on each recording's rate; their settings are
	// checked once it is known.
	if mel == nil {
		if _, err := signal.NewSpectrum(*window, *coeffs, spec); err != nil {
			return usageError{err}
		}
	} else if *rate > 0 {
		m, s := *mel, *spec
		m.Rate = *rate
		s.Mel = &m
		if _, err := signal.NewSpectrum(*window, cols, &s); err != nil {
			return usageError{fmt.Errorf("--rate %g: %s", *rate, strings.TrimPrefix(err.Error(), "signal: "))}
		}
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
		if *domain != "" || *data != "" {
			return usageError{fmt.Errorf("--domain and --data select recordings of a --files map; with --input they have no meaning")}
		}
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
	if len(recs) == 0 {
		return fmt.Errorf("--files %s: none of the recordings of domain %q is present: nothing to write", *files, *domain)
	}
	// A recording given twice (the same file and signal) would count twice,
	// perhaps under two labels.
	byVariable := map[string][]string{}
	for _, r := range recs {
		byVariable[r.variable] = append(byVariable[r.variable], r.path)
	}
	for _, paths := range byVariable {
		if err := distinctFiles(paths, "recording"); err != nil {
			return err
		}
	}
	// The features must fit in memory: refuse a typo such as --windows
	// 100000000 before reading anything.
	if gb := float64(*windows) * float64(len(recs)) * float64(cols) * 8 / 1e9; limit > 0 && gb > maxFeatureGB {
		return usageError{fmt.Errorf("--windows %d: %d recordings × %d windows × %d columns make %.3g GB of features, more than %d GB", *windows, len(recs), *windows, cols, gb, maxFeatureGB)}
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
		if ext := strings.ToLower(filepath.Ext(r.path)); mel != nil && *rate == 0 && ext != ".wav" && ext != ".flac" {
			return usageError{fmt.Errorf("--mel needs the sampling rate, and %s does not carry one (only WAV and FLAC files do): give --rate HZ", r.path)}
		}
	}
	var X, y, file, start []float64
	rates := map[float64]bool{}
	var first struct {
		path string
		rate float64
	}
	for i, r := range recs {
		rec, err := signal.Read(r.path, &opts[i])
		if err != nil {
			return err
		}
		what := r.path
		if rec.Signal != "" {
			what += ": " + rec.Signal
		}
		fr := float64(rec.Rate)
		switch {
		case rec.Rate == 0:
			fr = *rate
		case *rate > 0 && fr != *rate:
			return usageError{fmt.Errorf("--rate %g: %s is sampled at %d Hz, as its header says", *rate, r.path, rec.Rate)}
		}
		rates[fr] = true
		if i == 0 {
			first.path, first.rate = r.path, fr
		}
		if mel != nil {
			if *fmax == 0 && fr != first.rate {
				return usageError{fmt.Errorf("--mel: %s is sampled at %g Hz and %s at %g Hz: give --fmax (at most %g Hz) so that the bands are the same frequencies in every recording", first.path, first.rate, r.path, fr, min(first.rate, fr)/2)}
			}
			mel.Rate = fr
			spec.Mel = mel
		}
		var starts []int
		if *hop > 0 {
			starts, err = signal.SlidingStarts(len(rec.Samples), *window, *hop, limit)
		} else {
			if positions := len(rec.Samples) - *window + 1; positions > 0 && positions < *windows {
				fmt.Fprintf(e.stderr, "note: %s: %d samples leave %d distinct window positions for %d windows: rows repeat\n", what, len(rec.Samples), positions, *windows)
			}
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
		F, err := signal.Features(rec.Samples, starts, *window, cols, spec)
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
		var rs []float64
		for r := range rates {
			rs = append(rs, r)
		}
		slices.Sort(rs)
		names := make([]string, len(rs))
		for i, r := range rs {
			names[i] = "unknown"
			if r > 0 {
				names[i] = strconv.FormatFloat(r, 'g', -1, 64) + " Hz"
			}
		}
		what := "coefficient k is a different frequency in each"
		if mel != nil {
			what = fmt.Sprintf("the mel bands are the same frequencies in each, but a window of %d samples lasts a different time", *window)
		}
		fmt.Fprintf(e.stderr, "note: the recordings have different sampling rates (%s): %s\n", strings.Join(names, ", "), what)
	}
	arrays := map[string]*npy.Array{
		"X":     {Shape: []int{rows, cols}, Data: X},
		"file":  {Shape: []int{rows}, Data: file},
		"start": {Shape: []int{rows}, Data: start},
	}
	if len(y) > 0 {
		arrays["y"] = &npy.Array{Shape: []int{rows}, Data: y}
	}
	// The frequency of every column, when it is the same in every row.
	var freq []float64
	switch {
	case mel != nil:
		freq = mel.Edges(cols)[1 : cols+1]
	case len(rates) == 1 && first.rate > 0:
		freq = make([]float64, cols)
		for k := range freq {
			freq[k] = float64(k) * first.rate / float64(*window)
		}
	}
	if freq != nil {
		arrays["freq"] = &npy.Array{Shape: []int{cols}, Data: freq}
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
	what := "magnitudes"
	if mel != nil {
		what = "mel band energies"
	}
	switch {
	case *logMag:
		how += ", log " + strings.TrimPrefix(what, "mel band ")
	case *db:
		how += ", decibels"
	}
	fmt.Fprintf(e.stdout, "wrote %s: %d windows × %d %s from %d recordings (%s; window %d, %s)\n", *out, rows, cols, what, len(recs), lab, *window, how)
	switch {
	case mel != nil:
		norm := ""
		if mel.Normalize {
			norm = ", unit area"
		}
		fmt.Fprintf(e.stdout, "mel bands (%s scale%s) from %.6g to %.6g Hz, centres %.6g … %.6g Hz (freq in the archive)\n", mel.Scale, norm, mel.Min, mel.Edges(cols)[cols+1], freq[0], freq[cols-1])
	case len(rates) == 1 && first.rate > 0:
		fmt.Fprintf(e.stdout, "sampling rate %g Hz: coefficient k is at k × %.6g Hz\n", first.rate, first.rate/float64(*window))
	}
	return nil
}

// maxWindow is the longest window features fft accepts.
const maxWindow = 1 << 24

// recordingOptions turns --variable and --channel into the reading
// options of one recording: for a MATLAB file --channel is the CWRU
// sensor, for the others a channel number or "mean".
func recordingOptions(path, variable, channel string) (signal.ReadOptions, error) {
	o := signal.ReadOptions{Variable: variable}
	n, numErr := strconv.Atoi(channel)
	if strings.EqualFold(filepath.Ext(path), ".mat") {
		if numErr == nil || channel == "mean" {
			return o, usageError{fmt.Errorf("--channel %s: %s is a MATLAB file, whose signal is chosen by its CWRU sensor (DE, FE, BA) or --variable; channel numbers and mean apply to .wav, .flac, .npy, .npz and .csv files", channel, path)}
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
