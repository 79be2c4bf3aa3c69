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
	fs.Var(&inputs, "input", "MATLAB recording `PATH` (.mat); repeat for every recording")
	fs.Var(&labels, "label", "integer class label of the matching --input (give one per --input, or none)")
	files := fs.String("files", "", "take the recordings of one domain from a file map `CSV` (file,label,class,domain,variable), as dadil bench cwru does")
	domain := fs.String("domain", "", "the domain of --files to extract")
	data := fs.String("data", "", "folder the paths of --files are relative to (default: the folder of the map)")
	variable := fs.String("variable", "", "signal variable of every --input (default: X<id>_<channel>_time for <id>.mat, else the only variable ending in _<channel>_time)")
	channel := fs.String("channel", "DE", "channel used to find the default variable: DE (drive end), FE (fan end) or BA (base)")
	window := fs.Int("window", 4096, "samples per window")
	coeffs := fs.Int("coeffs", 2048, "Fourier magnitudes kept per window (at most window/2+1)")
	windows := fs.Int("windows", 800, "windows drawn from every recording")
	seed := fs.Uint64("seed", 1, "random seed of the window positions")
	out := fs.String("out", "", "output `FILE`.npz: X (windows × coeffs), y (labels, if given), file (index of the recording), start (first sample)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil features fft --out FILE.npz (--input PATH [--label L] ... | --files MAP.csv --domain D [--data DIR]) [flags]")
		fmt.Fprintln(fs.Output(), "\nDraws windows of consecutive samples at random positions from each recording and writes the")
		fmt.Fprintln(fs.Output(), "magnitudes of their discrete Fourier transforms, one row per window: the preprocessing of the")
		fmt.Fprintln(fs.Output(), "paper's CWRU experiment. The output is a domain for dadil fit (X and, with labels, y).")
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
	if _, err := signal.NewSpectrum(*window, *coeffs); err != nil {
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
	rows := len(recs) * *windows
	X := make([]float64, 0, rows**coeffs)
	var y, file, start []float64
	for i, r := range recs {
		x, v, err := signal.ReadChannel(r.path, r.variable, *channel)
		if err != nil {
			return err
		}
		h := fnv.New64a()
		h.Write([]byte(strconv.Itoa(i)))
		starts, err := signal.RandomStarts(rand.New(rand.NewPCG(*seed, h.Sum64())), len(x), *window, *windows)
		if err != nil {
			return fmt.Errorf("%s: variable %s: %w", r.path, v, err)
		}
		F, err := signal.Features(x, starts, *window, *coeffs)
		if err != nil {
			return fmt.Errorf("%s: variable %s: %w", r.path, v, err)
		}
		for k, s := range starts {
			X = append(X, F.RawRowView(k)...)
			file = append(file, float64(i))
			start = append(start, float64(s))
			if r.labeled {
				y = append(y, float64(r.label))
			}
		}
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
	fmt.Fprintf(e.stdout, "wrote %s: %d windows × %d magnitudes from %d recordings (%s; window %d, seed %d)\n", *out, rows, *coeffs, len(recs), lab, *window, *seed)
	return nil
}
