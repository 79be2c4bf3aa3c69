// Command dadil is the command-line interface of the dadil library:
// optimal transport and multi-source domain adaptation by dataset
// dictionary learning.
//
// Usage:
//
//	dadil demo [--seed s] [--out DIR] [--method dadil|gmm]
//	dadil fit --source PATH [--source PATH ...] --target PATH --out DIR [--method dadil|gmm] [flags]
//	dadil adapt --source PATH [--source PATH ...] --target PATH [--methods LIST] [--validate] [--out DIR] [flags]
//	dadil predict --model FILE --data PATH [--method r|e|map|e-map] [--out FILE]
//	dadil ot emd --cost C.npy [--a a.npy] [--b b.npy] [--plan P.npy] [--json]
//	dadil ot sinkhorn --cost C.npy --reg ε [--a a.npy] [--b b.npy] [--plan P.npy] [--json]
//	dadil ot demo [--n N] [--seed s]
//	dadil features fft --out FILE.npz (--input PATH [--label L] ... | --files MAP.csv --domain D) [--window 4096] [--coeffs 2048] [--windows 800]
//	dadil analyze sweep|hull|stability --out DIR (--source PATH ... --target PATH | --bench office-caltech10 --data DIR) [flags]
//	dadil federate serve --sites N [--nats URL | --listen HOST:PORT] [--token T] [--rounds R] [--local-epochs E] [--fraction C] [--aggregation avg|random]
//	dadil federate join (--source PATH | --target PATH) [--nats URL] [--token T] [--name NAME] [--out FILE]
//	dadil federate demo [--rounds R] [--local-epochs E] [--fraction C] [--aggregation avg|random]
//	dadil federate keys [--dir DIR] [--out FILE] NAME...
//	dadil bench emd [--sizes 200,1000,...] [--pot PYTHON] [--json FILE]
//	dadil bench office-caltech10 --data DIR [--features surf|decaf] [--methods LIST] [--held-out-sources] [--json FILE]
//	dadil bench cwru --data DIR [--methods LIST] [--targets 1772,1750,1730] [--seeds 5] [--held-out-sources] [--json FILE]
//	dadil bench cwru-encoder --data DIR [--epochs 5,10] [--weight-decay 0,0.001,0.01] [--seeds 5] [--json FILE]
//	dadil bench dadil --data DIR [--targets W] [--folds 1] [--threads all,1] [--python-threads 1,all] [--python PYTHON]
//
// Run "dadil help" or "dadil <command> -h" for details.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strings"

	"github.com/dadil/dadil/internal/clip"
)

// command is one sub-command: it parses its own flags from args.
type command struct {
	summary string
	run     func(args []string, env *env) error
}

// env carries the process's streams, so commands are testable.
type env struct {
	stdout, stderr io.Writer
}

// inRange returns a usage error unless lo ≤ v ≤ hi for the flag's value v;
// why says what the bounds are.
func inRange(flag string, v, lo, hi int, why string) error {
	if v < lo || v > hi {
		return usageError{fmt.Errorf("%s %d: want %d … %d (%s)", flag, v, lo, hi, why)}
	}
	return nil
}

// checkWorkers returns a usage error for a negative --workers.
func checkWorkers(v int) error {
	if v < 0 {
		return usageError{fmt.Errorf("--workers %d: want 0 (one per core) or a positive number", v)}
	}
	return nil
}

// usageError marks errors caused by the command line itself (exit status 2).
type usageError struct{ error }

func main() {
	// The FLAC decoder (github.com/mewkiz/flac) writes a line to the
	// standard logger for every frame of a file at some sampling rates
	// (24 and 176.4 kHz); dadil reports through its own messages only.
	log.SetOutput(io.Discard)
	os.Exit(run(os.Args[1:], &env{stdout: os.Stdout, stderr: os.Stderr}))
}

// singles are the one-word commands.
func singles() map[string]command {
	return map[string]command{
		"fit":     {"learn a dataset dictionary and classify the target (DaDiL-R and DaDiL-E, or GMM-DaDiL with --method gmm)", runFit},
		"adapt":   {"classify the target with every method (DaDiL and the baselines) and compare them", runAdapt},
		"predict": {"classify data with a model written by dadil fit", runPredict},
		"demo":    {"fit DaDiL (or GMM-DaDiL) on a generated problem and draw it (the main job on an embedded default)", runDemo},
	}
}

// groups maps a top-level word to its sub-commands.
func groups() map[string]map[string]command {
	return map[string]map[string]command{
		"ot": {
			"emd":      {"exact optimal transport (network simplex) between two weight vectors for a cost matrix", runEMD},
			"sinkhorn": {"entropic optimal transport (log-domain Sinkhorn)", runSinkhorn},
			"demo":     {"solve a generated problem with EMD and Sinkhorn and compare them", runOTDemo},
		},
		"features": {
			"fft": {"windows of recordings → FFT magnitude features (.mat, .wav, .npy, .npz, .csv → .npz), the CWRU preprocessing", runFeaturesFFT},
		},
		"analyze": {
			"sweep":     {"accuracy, sparsity and density as K, n and n_b vary (paper Tables 7–11)", runAnalyzeSweep},
			"hull":      {"reconstruction loss and accuracy over the Wasserstein hull of the atoms (Figures 4–6)", runAnalyzeHull},
			"stability": {"loss curves over seeds and update magnitudes (Figures 7 and 8)", runAnalyzeStability},
		},
		"federate": {
			"serve": {"coordinate federated DaDiL over NATS (sites share only atoms)", runFederateServe},
			"join":  {"join a federation as a site", runFederateJoin},
			"demo":  {"federated DaDiL on the generated problem", runFederateDemo},
			"keys":  {"an NKey per site, and the file of their public keys", runFederateKeys},
		},
		"bench": {
			"emd":              {"time EMD on Gaussian problems, side by side with POT when available", runBenchEMD},
			"office-caltech10": {"reproduce the paper's Caltech-Office 10 experiments (Tables 2 and 3)", runBenchOfficeCaltech},
			"dadil":            {"time DaDiL fits (paper setting) side by side with a Python reference", runBenchDaDiL},
			"cwru":             {"reproduce the paper's CWRU fault-diagnosis experiment (Table 5) from the raw recordings", runBenchCWRU},
			"cwru-encoder":     {"score CWRU encoder settings on held-out source loads, without the target", runBenchCWRUEncoder},
			"suite":            {"every method on every target of the development suite's data sets", runBenchSuite},
		},
	}
}

// run executes the command line args and returns the exit status.
func run(args []string, e *env) int {
	g := groups()
	// "dadil help fit" and "dadil help bench cwru" are "dadil fit --help"
	// and "dadil bench cwru --help".
	if len(args) > 1 && args[0] == "help" {
		return run(append(append([]string(nil), args[1:]...), "--help"), e)
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(e.stdout, g)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if cmd, ok := singles()[args[0]]; ok {
		return finish("dadil "+args[0], cmd.run(args[1:], e), e)
	}
	sub, ok := g[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "dadil: unknown command %s\n", clip.Quote(args[0]))
		usage(e.stderr, g)
		return 2
	}
	if len(args) < 2 || args[1] == "-h" || args[1] == "--help" || args[1] == "help" {
		usageGroup(e.stdout, args[0], sub)
		if len(args) < 2 {
			return 2
		}
		return 0
	}
	cmd, ok := sub[args[1]]
	if !ok {
		fmt.Fprintf(e.stderr, "dadil %s: unknown command %s\n", args[0], clip.Quote(args[1]))
		usageGroup(e.stderr, args[0], sub)
		return 2
	}
	return finish("dadil "+args[0]+" "+args[1], cmd.run(args[2:], e), e)
}

// finish reports a command's error and returns the exit status: 0, 1 for
// failures, 2 for command-line mistakes.
func finish(name string, err error, e *env) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	default:
		fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
}

func usage(w io.Writer, g map[string]map[string]command) {
	fmt.Fprintln(w, "usage: dadil <command> [<subcommand>] [flags]")
	fmt.Fprintln(w)
	var lines [][2]string
	s := singles()
	for _, k := range sortedKeys(s) {
		lines = append(lines, [2]string{k, s[k].summary})
	}
	for _, k := range sortedKeys(g) {
		lines = append(lines, groupLines(k, g[k])...)
	}
	printCommands(w, lines)
}

// usageGroup lists the sub-commands of group name.
func usageGroup(w io.Writer, name string, sub map[string]command) {
	printCommands(w, groupLines(name, sub))
}

func groupLines(name string, sub map[string]command) [][2]string {
	var lines [][2]string
	for _, k := range sortedKeys(sub) {
		lines = append(lines, [2]string{name + " " + k, sub[k].summary})
	}
	return lines
}

// printCommands prints "dadil <name>  <summary>" lines, aligned.
func printCommands(w io.Writer, lines [][2]string) {
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  dadil %-*s  %s\n", width, l[0], l[1])
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// newFlags returns a flag set that reports errors instead of exiting and
// writes its usage to the command's stderr.
func newFlags(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// countFlag checks the count v of flag name, whose value 0 stands for a
// default (def) that only leaving the flag out selects: a negative count,
// or an explicit 0, is a usage error naming the flag.
func countFlag(fs *flag.FlagSet, name string, v int, def string) error {
	switch {
	case v < 0:
		return usageError{fmt.Errorf("--%s %d: need a positive number", name, v)}
	case v == 0 && flagSet(fs, name):
		return usageError{fmt.Errorf("--%s 0: need a positive number; leave the flag out for the default (%s)", name, def)}
	}
	return nil
}

// parse parses args, turning parse failures into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %s", clip.Quote(strings.Join(fs.Args(), " ")))}
	}
	return nil
}
