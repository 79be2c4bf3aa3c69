package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/sysmem"
	"github.com/dadil/dadil/npy"
	"github.com/dadil/dadil/signal"
)

// runFeaturesFFT turns recordings into spectrum features: random windows,
// FFT magnitudes, one .npz that dadil fit reads as a domain.
func runFeaturesFFT(args []string, e *env) error {
	f := newFFTFlags(e)
	if err := parse(f.fs, args); err != nil {
		return err
	}
	if *f.out == "" {
		return usageError{fmt.Errorf("--out is required")}
	}
	if !strings.HasSuffix(*f.out, ".npz") {
		return usageError{fmt.Errorf("--out %s: the output is a .npz archive", clip.Path(*f.out))}
	}
	if err := checkOutput("--out", *f.out); err != nil {
		return err
	}
	ex, err := f.extraction()
	if err != nil {
		return err
	}
	recs, err := f.recordings(e, ex)
	if err != nil {
		return err
	}
	rows, rates, err := f.extract(e, ex, recs)
	if err != nil {
		return err
	}
	return f.write(e, ex, recs, rows, rates)
}

// fftFlags are the flags of dadil features fft.
type fftFlags struct {
	fs                                     *flag.FlagSet
	inputs, labels                         multiFlag
	files, domain, data, variable, channel *string
	taper, melScale, melNorm, out          *string
	window, coeffs, windows, hop, melBands *int
	seed                                   *uint64
	logMag, db                             *bool
	fmin, fmax, rate                       *float64
}

// newFFTFlags registers the flags of dadil features fft and its usage.
func newFFTFlags(e *env) *fftFlags {
	fs := newFlags("dadil features fft", e)
	f := &fftFlags{fs: fs}
	fs.Var(&f.inputs, "input", "recording `PATH`: MATLAB (.mat), WAV (.wav), FLAC (.flac), NumPy (.npy, .npz) or CSV (.csv); repeat for every recording")
	fs.Var(&f.labels, "label", "integer class label of the matching --input (give one per --input, or none)")
	f.files = fs.String("files", "", "take the recordings of one domain from a file map `CSV` (header file,label,class,domain,variable; an empty variable is the file's default signal), as dadil bench cwru does")
	f.domain = fs.String("domain", "", "the domain of --files to extract")
	f.data = fs.String("data", "", "folder the paths of --files are relative to (default: the folder of the map)")
	f.variable = fs.String("variable", "", "the signal of every --input: a MATLAB variable, an .npz array or a CSV column header (default: for <id>.mat X<id>_<sensor>_time, for another .mat the only variable ending in _<sensor>_time; for .npz the only array)")
	f.channel = fs.String("channel", "", "for .mat files the CWRU sensor that finds the default variable: DE (drive end, the default), FE (fan end) or BA (base); for .wav, .flac, .npy, .npz and .csv files a channel number counted from 1, or mean (the mean of all channels; default: the file's only channel)")
	f.window = fs.Int("window", 4096, "samples per window")
	f.coeffs = fs.Int("coeffs", 2048, "Fourier magnitudes kept per window (at most window/2+1)")
	f.windows = fs.Int("windows", 800, "windows drawn from every recording (with --hop: at most this many, all that fit when not given)")
	f.hop = fs.Int("hop", 0, "cut windows every `N` samples from the start of each recording instead of at random positions (N = window: adjacent windows)")
	f.seed = fs.Uint64("seed", 1, "random seed of the window positions")
	f.taper = fs.String("taper", "none", "window function applied before the transform: none (the paper's CWRU preprocessing) or hann (less leakage between bins)")
	f.logMag = fs.Bool("log", false, "write log(1 + v) instead of every magnitude or band energy v (compresses the dynamic range of audio spectra)")
	f.db = fs.Bool("db", false, "write decibels of power instead: 10·log10(max(p, 1e-10)) of |X_k|² or of the band energies (with --mel: a log-mel spectrogram)")
	f.melBands = fs.Int("mel", 0, "write the energies Σ_k H_b(f_k)|X_k|² of `B` triangular bands equally spaced on the mel scale (HTK, as torchaudio) instead of the magnitudes; needs the sampling rate")
	f.melScale = fs.String("mel-scale", "htk", "mel scale of the bands: htk (2595·log10(1 + f/700), torchaudio's default) or slaney (linear below 1 kHz, librosa's default)")
	f.melNorm = fs.String("mel-norm", "none", "none (every band peaks at 1, torchaudio's default) or slaney (every band has unit area in Hz, librosa's default)")
	f.fmin = fs.Float64("fmin", 0, "lower edge of the first mel band, in `Hz`")
	f.fmax = fs.Float64("fmax", 0, "upper edge of the last mel band, in `Hz` (default: half the sampling rate)")
	f.rate = fs.Float64("rate", 0, "sampling rate in `Hz` of recordings that do not carry one (.mat, .npy, .npz, .csv); WAV and FLAC files carry theirs")
	f.out = fs.String("out", "", "output `FILE`.npz: X (windows × coeffs or bands), y (labels, if given), file (index of the recording), start (first sample), freq (the frequency in Hz of every column, when the sampling rate is known: a coefficient's, or a mel band's centre)")
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
	return f
}

// extraction checks the flags of the windows and their features and
// returns the extraction they ask for.
func (f *fftFlags) extraction() (*signal.Extraction, error) {
	// A window past this (6 minutes at 48 kHz) is a mistake rather than a
	// spectrum; refusing it keeps the transform's buffers from exhausting
	// the memory before the recordings show it is longer than they are.
	if *f.window > signal.MaxWindow {
		return nil, usageError{fmt.Errorf("--window %d: at most %d samples", *f.window, signal.MaxWindow)}
	}
	if *f.windows < 1 {
		return nil, usageError{fmt.Errorf("--windows must be at least 1")}
	}
	if err := countFlag(f.fs, "hop", *f.hop, "windows at random positions"); err != nil {
		return nil, err
	}
	ex := &signal.Extraction{Window: *f.window, Coeffs: *f.coeffs, Hop: *f.hop, Windows: *f.windows}
	if *f.hop > 0 && !flagSet(f.fs, "windows") {
		ex.Windows = 0 // all that fit
	}
	if *f.hop > 0 && flagSet(f.fs, "seed") {
		return nil, usageError{fmt.Errorf("--seed has no meaning with --hop (the windows are not drawn at random)")}
	}
	tp, err := signal.ParseTaper(*f.taper)
	if err != nil {
		return nil, usageError{fmt.Errorf("--taper: %s", strings.TrimPrefix(err.Error(), "signal: "))}
	}
	if *f.logMag && *f.db {
		return nil, usageError{fmt.Errorf("--log and --db exclude each other")}
	}
	if r := *f.rate; r < 0 || math.IsNaN(r) || math.IsInf(r, 0) || flagSet(f.fs, "rate") && r == 0 {
		return nil, usageError{fmt.Errorf("--rate %v: want a sampling rate in Hz above 0", r)}
	}
	ex.Settings = signal.Settings{Taper: tp, Log: *f.logMag, Decibels: *f.db}
	if ex.Mel, err = f.mel(); err != nil {
		return nil, err
	}
	if ex.Mel != nil {
		ex.Coeffs = *f.melBands
	}
	// The bands depend on each recording's rate; their settings are
	// checked once it is known.
	switch {
	case ex.Mel == nil:
		if err := ex.Check(0); err != nil {
			return nil, usageError{err}
		}
	case *f.rate > 0:
		if err := ex.Check(*f.rate); err != nil {
			return nil, usageError{fmt.Errorf("--rate %g: %s", *f.rate, strings.TrimPrefix(err.Error(), "signal: "))}
		}
	}
	return ex, nil
}

// mel returns the bands --mel and its flags ask for; nil without --mel.
func (f *fftFlags) mel() (*signal.Mel, error) {
	if err := countFlag(f.fs, "mel", *f.melBands, "Fourier magnitudes, no bands"); err != nil {
		return nil, err
	}
	switch {
	case *f.melBands > 0:
		if flagSet(f.fs, "coeffs") {
			return nil, usageError{fmt.Errorf("--coeffs and --mel exclude each other: with --mel the features are the %d band energies, computed from every coefficient", *f.melBands)}
		}
		sc, err := signal.ParseMelScale(*f.melScale)
		if err != nil {
			return nil, usageError{fmt.Errorf("--mel-scale: %s", strings.TrimPrefix(err.Error(), "signal: "))}
		}
		if *f.melNorm != "none" && *f.melNorm != "slaney" {
			return nil, usageError{fmt.Errorf("--mel-norm %s: want none or slaney", clip.Quote(*f.melNorm))}
		}
		return &signal.Mel{Min: *f.fmin, Max: *f.fmax, Scale: sc, Normalize: *f.melNorm == "slaney"}, nil
	case flagSet(f.fs, "fmin") || flagSet(f.fs, "fmax") || flagSet(f.fs, "mel-scale") || flagSet(f.fs, "mel-norm"):
		return nil, usageError{fmt.Errorf("--fmin, --fmax, --mel-scale and --mel-norm set the mel bands: give them with --mel")}
	}
	return nil, nil
}

// fftRecording is a recording features fft reads: its file, the signal
// in it and its label.
type fftRecording struct {
	path, variable string
	label          int
	labeled        bool
	opts           signal.ReadOptions
}

// recordings returns the recordings --input or --files give, after
// checking that none is given twice, that their features fit in memory
// and every recording's reading options, before reading any.
func (f *fftFlags) recordings(e *env, ex *signal.Extraction) ([]fftRecording, error) {
	var recs []fftRecording
	var err error
	switch {
	case *f.files != "" && len(f.inputs) > 0:
		return nil, usageError{fmt.Errorf("give either --input or --files, not both")}
	case *f.files != "":
		recs, err = f.mapRecordings(e)
	case len(f.inputs) > 0:
		recs, err = f.inputRecordings()
	default:
		return nil, usageError{fmt.Errorf("give the recordings with --input or --files")}
	}
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("--files %s: none of the recordings of domain %s is present: nothing to write", clip.Path(*f.files), clip.Quote(*f.domain))
	}
	// A recording given twice (the same file and signal) would count twice,
	// perhaps under two labels.
	byVariable := map[string][]string{}
	for _, r := range recs {
		byVariable[r.variable] = append(byVariable[r.variable], r.path)
	}
	for _, paths := range byVariable {
		if err := distinctFiles(paths, "recording"); err != nil {
			return nil, err
		}
	}
	// The features must fit in memory: refuse a typo such as --windows
	// 100000000 before reading anything.
	lim := sysmem.Machine()
	if b := float64(*f.windows) * float64(len(recs)) * float64(ex.Coeffs) * 8; ex.Windows > 0 && b > float64(lim.Bytes) {
		return nil, usageError{fmt.Errorf("--windows %d: %d recordings × %d windows × %d columns make %s of features, more than the limit of %s", *f.windows, len(recs), *f.windows, ex.Coeffs, sysmem.Size(int64(min(b, math.MaxInt64))), lim)}
	}
	for i, r := range recs {
		if recs[i].opts, err = recordingOptions(r.path, r.variable, *f.channel); err != nil {
			return nil, err
		}
		if ext := strings.ToLower(filepath.Ext(r.path)); ex.Mel != nil && *f.rate == 0 && ext != ".wav" && ext != ".flac" {
			return nil, usageError{fmt.Errorf("--mel needs the sampling rate, and %s does not carry one (only WAV and FLAC files do): give --rate HZ", clip.Path(r.path))}
		}
	}
	return recs, nil
}

// mapRecordings returns the recordings of --domain in the file map
// --files, of the classes dadil bench cwru uses.
func (f *fftFlags) mapRecordings(e *env) ([]fftRecording, error) {
	if *f.domain == "" {
		return nil, usageError{fmt.Errorf("--files needs --domain")}
	}
	fm, err := bench.ReadCWRUFiles(*f.files)
	if err != nil {
		return nil, err
	}
	dir := *f.data
	if dir == "" {
		dir = filepath.Dir(*f.files)
	}
	if doms := bench.CWRUFileDomains(fm); !slices.Contains(doms, *f.domain) {
		return nil, usageError{fmt.Errorf("--domain %s: %s lists no file for it (domains: %s)", clip.Quote(*f.domain), clip.Path(*f.files), clip.List(doms, 12))}
	}
	present, err := bench.PresentCWRUFiles(dir, fm)
	if err != nil {
		return nil, err
	}
	if len(present.Dropped) > 0 {
		fmt.Fprintf(e.stderr, "note: no recordings of class %s in %s: left out, as dadil bench cwru does\n", strings.Join(present.Dropped, ", "), dir)
	}
	var recs []fftRecording
	for _, fl := range present.Files {
		if fl.Domain == *f.domain {
			recs = append(recs, fftRecording{path: filepath.Join(dir, filepath.FromSlash(fl.Path)), variable: fl.Variable, label: fl.Label, labeled: true})
		}
	}
	return recs, nil
}

// inputRecordings returns the recordings of --input, with the labels of
// --label if given.
func (f *fftFlags) inputRecordings() ([]fftRecording, error) {
	if *f.domain != "" || *f.data != "" {
		return nil, usageError{fmt.Errorf("--domain and --data select recordings of a --files map; with --input they have no meaning")}
	}
	if len(f.labels) > 0 && len(f.labels) != len(f.inputs) {
		return nil, usageError{fmt.Errorf("%d --label for %d --input: give one label per input, or none", len(f.labels), len(f.inputs))}
	}
	recs := make([]fftRecording, len(f.inputs))
	for i, p := range f.inputs {
		recs[i] = fftRecording{path: p, variable: *f.variable}
		if len(f.labels) > 0 {
			l, err := strconv.Atoi(f.labels[i])
			if err != nil {
				return nil, usageError{fmt.Errorf("--label %s (for %s) is not an integer", clip.Quote(f.labels[i]), clip.Path(p))}
			}
			recs[i].label, recs[i].labeled = l, true
		}
	}
	return recs, nil
}

// extract reads the recordings one at a time and returns the rows of
// their windows and the sampling rate of each (0: unknown). The windows
// of recording i are drawn from signal.Stream(seed, "i").
func (f *fftFlags) extract(e *env, ex *signal.Extraction, recs []fftRecording) (*signal.Rows, []float64, error) {
	var rows signal.Rows
	rates := make([]float64, len(recs))
	for i, r := range recs {
		rec, err := signal.Read(r.path, &r.opts)
		if err != nil {
			return nil, nil, err
		}
		what := r.path
		if rec.Signal != "" {
			what += ": " + rec.Signal
		}
		fr := float64(rec.Rate)
		switch {
		case rec.Rate == 0:
			fr = *f.rate
		case *f.rate > 0 && fr != *f.rate:
			return nil, nil, usageError{fmt.Errorf("--rate %g: %s is sampled at %d Hz, as its header says", *f.rate, clip.Path(r.path), rec.Rate)}
		}
		rates[i] = fr
		if ex.Mel != nil && *f.fmax == 0 && fr != rates[0] {
			return nil, nil, usageError{fmt.Errorf("--mel: %s is sampled at %g Hz and %s at %g Hz: give --fmax (at most %g Hz) so that the bands are the same frequencies in every recording", clip.Path(recs[0].path), rates[0], clip.Path(r.path), fr, min(rates[0], fr)/2)}
		}
		var rng *rand.Rand
		if ex.Hop == 0 {
			if positions := len(rec.Samples) - ex.Window + 1; positions > 0 && positions < ex.Windows {
				fmt.Fprintf(e.stderr, "note: %s: %d samples leave %d distinct window positions for %d windows: rows repeat\n", what, len(rec.Samples), positions, ex.Windows)
			}
			rng = signal.Stream(*f.seed, strconv.Itoa(i))
		}
		// The signal package's errors, with the recording named after
		// their prefix.
		if err := ex.Append(&rows, i, rec.Samples, fr, rng); err != nil {
			return nil, nil, fmt.Errorf("signal: %s: %s", what, strings.TrimPrefix(err.Error(), "signal: "))
		}
	}
	return &rows, rates, nil
}

// write writes the archive of the rows, after a note if the recordings
// have different sampling rates, and says what it wrote.
func (f *fftFlags) write(e *env, ex *signal.Extraction, recs []fftRecording, rows *signal.Rows, rates []float64) error {
	distinct := slices.Compact(slices.Sorted(slices.Values(rates)))
	if len(distinct) > 1 {
		names := make([]string, len(distinct))
		for i, r := range distinct {
			names[i] = "unknown"
			if r > 0 {
				names[i] = strconv.FormatFloat(r, 'g', -1, 64) + " Hz"
			}
		}
		what := "coefficient k is a different frequency in each"
		if ex.Mel != nil {
			what = fmt.Sprintf("the mel bands are the same frequencies in each, but a window of %d samples lasts a different time", ex.Window)
		}
		fmt.Fprintf(e.stderr, "note: the recordings have different sampling rates (%s): %s\n", strings.Join(names, ", "), what)
	}
	n, cols := rows.Len(), rows.Cols
	file, start, y := make([]float64, n), make([]float64, n), make([]float64, 0, n)
	for i, r := range rows.Recording {
		file[i], start[i] = float64(r), float64(rows.Start[i])
		if recs[r].labeled {
			y = append(y, float64(recs[r].label))
		}
	}
	arrays := map[string]*npy.Array{
		"X":     {Shape: []int{n, cols}, Data: rows.Data},
		"file":  {Shape: []int{n}, Data: file},
		"start": {Shape: []int{n}, Data: start},
	}
	if len(y) > 0 {
		arrays["y"] = &npy.Array{Shape: []int{n}, Data: y}
	}
	// The frequency of every column, when it is the same in every row: the
	// mel bands are, and the coefficients at a single known rate.
	var freq []float64
	if ex.Mel != nil || len(distinct) == 1 {
		freq = ex.Freq(rates[0])
	}
	if freq != nil {
		arrays["freq"] = &npy.Array{Shape: []int{cols}, Data: freq}
	}
	if err := npy.WriteNPZ(*f.out, arrays); err != nil {
		return err
	}
	f.report(e, ex, n, len(recs), len(y) > 0, rates[0], freq)
	return nil
}

// report prints what write wrote: rows from so many recordings, the
// settings and, with freq, the frequencies of the columns, those of
// recordings sampled at rate Hz.
func (f *fftFlags) report(e *env, ex *signal.Extraction, rows, recordings int, labeled bool, rate float64, freq []float64) {
	lab := "unlabeled"
	if labeled {
		lab = "labeled"
	}
	how := fmt.Sprintf("seed %d", *f.seed)
	if ex.Hop > 0 {
		how = fmt.Sprintf("hop %d", ex.Hop)
	}
	if ex.Taper != signal.Rectangular {
		how += ", " + ex.Taper.String() + " taper"
	}
	what := "magnitudes"
	if ex.Mel != nil {
		what = "mel band energies"
	}
	switch {
	case ex.Log:
		how += ", log " + strings.TrimPrefix(what, "mel band ")
	case ex.Decibels:
		how += ", decibels"
	}
	cols := ex.Coeffs
	fmt.Fprintf(e.stdout, "wrote %s: %d windows × %d %s from %d recordings (%s; window %d, %s)\n", *f.out, rows, cols, what, recordings, lab, ex.Window, how)
	switch {
	case ex.Mel != nil:
		norm := ""
		if ex.Mel.Normalize {
			norm = ", unit area"
		}
		mel := *ex.Mel
		mel.Rate = rate
		fmt.Fprintf(e.stdout, "mel bands (%s scale%s) from %.6g to %.6g Hz, centres %.6g … %.6g Hz (freq in the archive)\n", mel.Scale, norm, mel.Min, mel.Edges(cols)[cols+1], freq[0], freq[cols-1])
	case freq != nil:
		fmt.Fprintf(e.stdout, "sampling rate %g Hz: coefficient k is at k × %.6g Hz\n", rate, rate/float64(ex.Window))
	}
}

// recordingOptions turns --variable and --channel into the reading
// options of one recording: for a MATLAB file --channel is the CWRU
// sensor, for the others a channel number or "mean".
func recordingOptions(path, variable, channel string) (signal.ReadOptions, error) {
	o := signal.ReadOptions{Variable: variable}
	n, numErr := strconv.Atoi(channel)
	if strings.EqualFold(filepath.Ext(path), ".mat") {
		if numErr == nil || channel == "mean" {
			return o, usageError{fmt.Errorf("--channel %s: %s is a MATLAB file, whose signal is chosen by its CWRU sensor (DE, FE, BA) or --variable; channel numbers and mean apply to .wav, .flac, .npy, .npz and .csv files", clip.Arg(channel), clip.Path(path))}
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
		return o, usageError{fmt.Errorf("--channel %s for %s: want a channel number (1, 2, …) or mean; sensor names (DE, FE, BA) apply to MATLAB files", clip.Arg(channel), clip.Path(path))}
	}
	return o, nil
}
