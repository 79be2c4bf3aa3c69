package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dadil/dadil/bench"
)

// cwruFlags are the flags shared by dadil bench cwru and dadil bench
// cwru-encoder: where the recordings are, which runs, and how windows and
// spectra are drawn.
type cwruFlags struct {
	data, files, targets, jsonPath *string
	seeds                          *int
	seed                           *uint64
	windows, train, window, coeffs *int
}

// addCWRUFlags registers the shared flags on fs; targetsHelp describes
// --targets.
func addCWRUFlags(fs *flag.FlagSet, targetsHelp string) *cwruFlags {
	return &cwruFlags{
		data:     fs.String("data", "", "CWRU data folder `DIR` (holding 12k_DE/ and normal/)"),
		files:    fs.String("files", "", "file map `CSV` (file,label,class,domain,variable); default: the paper's table of file ids"),
		targets:  fs.String("targets", strings.Join(bench.CWRUDomains, ","), targetsHelp),
		seeds:    fs.Int("seeds", 5, "repetitions, each with its own draw of windows, encoders and fits"),
		seed:     fs.Uint64("seed", 1, "base random seed"),
		jsonPath: fs.String("json", "", "write every result to `FILE` as JSON"),
		windows:  fs.Int("windows", 800, "windows per class and domain"),
		train:    fs.Int("train", 600, "training windows per class (the rest are test windows)"),
		window:   fs.Int("window", 4096, "samples per window"),
		coeffs:   fs.Int("coeffs", 2048, "Fourier magnitudes per window"),
	}
}

// check validates the shared flags after parsing, before any work.
func (f *cwruFlags) check() error {
	if *f.data == "" {
		return usageError{fmt.Errorf("--data is required")}
	}
	if *f.seeds < 1 {
		return usageError{fmt.Errorf("--seeds must be at least 1")}
	}
	return checkJSON(*f.jsonPath)
}

// protocol returns the windows and spectra the flags ask for; the caller
// sets the encoder where it needs one.
func (f *cwruFlags) protocol() *bench.CWRUProtocol {
	return &bench.CWRUProtocol{Window: *f.window, Coeffs: *f.coeffs, Windows: *f.windows, Train: *f.train}
}

// load reads the file map and the recordings, and says on stderr when
// classes without recordings were dropped.
func (f *cwruFlags) load(e *env) (*bench.CWRU, error) {
	fileMap := bench.CWRUFiles()
	if *f.files != "" {
		var err error
		if fileMap, err = bench.ReadCWRUFiles(*f.files); err != nil {
			return nil, err
		}
	}
	c, err := bench.LoadCWRU(*f.data, fileMap, *f.window)
	if err != nil {
		return nil, err
	}
	if len(c.Dropped) > 0 {
		fmt.Fprintf(e.stderr, "cwru: no recordings for class %s: running the %d-class problem\n", strings.Join(c.Dropped, ", "), len(c.Labels))
	}
	return c, nil
}

// benchProgress prints a finished unit of a benchmark to stderr with the
// elapsed time and an estimate of the time left.
func benchProgress(e *env) func(done, total int, what string, elapsed time.Duration) {
	return func(done, total int, what string, elapsed time.Duration) {
		eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		fmt.Fprintf(e.stderr, "[%d/%d] %s done; %s elapsed, ETA %s\n", done, total, what, elapsed.Round(time.Second), eta.Round(time.Second))
	}
}

// plural returns "1 seed", "2 seeds": n and the noun, in the plural unless
// n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// validation is the "validation" field of a benchmark's JSON: what its
// accuracies measure.
func validation(heldOutSources bool) string {
	if heldOutSources {
		return "held-out-sources"
	}
	return "target"
}
