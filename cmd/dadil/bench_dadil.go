package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"gonum.org/v1/gonum/mat"
)

// dadilTiming is one row of "dadil bench dadil": one implementation on one
// split with a number of threads.
type dadilTiming struct {
	Implementation string  `json:"implementation"`
	Target         string  `json:"target"`
	Fold           int     `json:"fold"`
	Threads        int     `json:"threads"`
	LearnSeconds   float64 `json:"learn_seconds"`
	ModelSeconds   float64 `json:"model_seconds"`
	TotalSeconds   float64 `json:"total_seconds"`
	AccuracyR      float64 `json:"accuracy_r"`
	AccuracyE      float64 `json:"accuracy_e"`
}

const goImpl = "dadil (Go)"

func runBenchDaDiL(args []string, e *env) error {
	fs := newFlags("dadil bench dadil", e)
	data := fs.String("data", "", "benchmark folder `DIR` holding office-caltech10/")
	targets := fs.String("targets", "W", "comma-separated target domains (W, A, D, C)")
	folds := fs.String("folds", "1", "comma-separated test folds (1…5)")
	seed := fs.Uint64("seed", 1, "random seed")
	threads := fs.String("threads", "all,1", "comma-separated thread counts for dadil (`all`: every core)")
	pyThreads := fs.String("python-threads", "1,all", "comma-separated thread counts for the Python reference")
	python := fs.String("python", "auto", "Python interpreter with PyTorch and POT for the reference; \"auto\" tries /usr/bin/python3, \"none\" skips")
	jsonPath := fs.String("json", "", "also write the timings to `FILE` as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil bench dadil --data DIR [--targets W] [--folds 1] [--threads all,1] [--python-threads 1,all] [--python PYTHON|auto|none] [--json FILE]")
		fmt.Fprintln(fs.Output(), "\nTimes DaDiL fits with the paper's Caltech-Office setting (K=8, n=1000, n_b=200, η=0.1, 10 epochs)")
		fmt.Fprintln(fs.Output(), "on SURF features, and an independent Python reference (PyTorch + POT) on the same splits; with")
		fmt.Fprintln(fs.Output(), "several splits it also prints the accuracies averaged over them.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" {
		return usageError{fmt.Errorf("--data is required")}
	}
	procs := runtime.GOMAXPROCS(0)
	goThreads, err := parseThreads("threads", *threads, procs)
	if err != nil {
		return err
	}
	refThreads, err := parseThreads("python-threads", *pyThreads, procs)
	if err != nil {
		return err
	}
	foldList, err := parseInts("folds", *folds)
	if err != nil {
		return err
	}
	if *jsonPath != "" {
		if err := checkOutput("--json", *jsonPath); err != nil {
			return err
		}
	}
	announceMachine(e)
	o, err := bench.LoadOfficeCaltech(filepath.Join(*data, "office-caltech10"), "surf")
	if err != nil {
		return err
	}
	py, err := findPython(*python, "torch, ot", e)
	if err != nil {
		return err
	}
	var tmp, script string
	if py != "" {
		if tmp, err = os.MkdirTemp("", "dadil-bench-dadil-"); err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		script = filepath.Join(tmp, "dadil_reference.py")
		if err := os.WriteFile(script, []byte(bench.PythonReference), 0o644); err != nil {
			return err
		}
	}
	var rows []dadilTiming
	for _, target := range splitList(*targets) {
		for _, fold := range foldList {
			s, err := o.Split(target, fold)
			if err != nil {
				return err
			}
			for _, th := range goThreads {
				fmt.Fprintf(e.stderr, "%s %d: dadil (Go), %d thread(s)… ", target, fold, th)
				r, err := timeGoFit(s, *seed, th)
				if err != nil {
					return err
				}
				r.Target, r.Fold = target, fold
				rows = append(rows, r)
				fmt.Fprintf(e.stderr, "%.1f s\n", r.TotalSeconds)
			}
			if py == "" {
				continue
			}
			split := filepath.Join(tmp, "split.npz")
			if err := bench.ExportSplit(split, s); err != nil {
				return err
			}
			for _, th := range refThreads {
				fmt.Fprintf(e.stderr, "%s %d: Python reference, %d thread(s)… ", target, fold, th)
				r, err := runPythonReference(py, script, split, *seed, th)
				if err != nil {
					return err
				}
				r.Target, r.Fold = target, fold
				rows = append(rows, r)
				fmt.Fprintf(e.stderr, "%.1f s\n", r.TotalSeconds)
			}
		}
	}
	printBenchDaDiL(e, rows, *seed)
	if *jsonPath != "" {
		return writeBenchJSON(*jsonPath, map[string]any{"benchmark": "dadil-fit", "results": rows})
	}
	return nil
}

// parseThreads parses a list of thread counts, "all" meaning procs.
func parseThreads(flag, list string, procs int) ([]int, error) {
	var out []int
	for _, f := range splitList(list) {
		if f == "all" {
			f = strconv.Itoa(procs)
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, usageError{fmt.Errorf("--%s: %q is neither a positive integer nor all", flag, f)}
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// timeGoFit fits DaDiL with the paper's setting on threads threads and
// measures both predictors on the split's test rows.
func timeGoFit(p *dataset.Problem, seed uint64, threads int) (dadilTiming, error) {
	procs := runtime.GOMAXPROCS(threads)
	t0 := time.Now()
	m := adapt.NewDaDiLR(dictionary.Paper(seed))
	err := m.Fit(p)
	total := time.Since(t0).Seconds()
	runtime.GOMAXPROCS(procs)
	if err != nil {
		return dadilTiming{}, err
	}
	var acc [2]float64
	for i, predict := range []func(*mat.Dense) ([]int, error){m.Model.PredictR, m.Model.PredictE} {
		if acc[i], err = adapt.Score(predict, p.Test); err != nil {
			return dadilTiming{}, err
		}
	}
	learn := m.Dict.History.Elapsed.Seconds()
	return dadilTiming{Implementation: goImpl, Threads: threads, LearnSeconds: learn, ModelSeconds: total - learn,
		TotalSeconds: total, AccuracyR: 100 * acc[0], AccuracyE: 100 * acc[1]}, nil
}

// printBenchDaDiL prints one table row per fit and, over several splits,
// one summary row per implementation and thread count, then the speed-ups.
func printBenchDaDiL(e *env, rows []dadilTiming, seed uint64) {
	w := e.stdout
	fmt.Fprintf(w, "DaDiL fits, paper setting (K=8, n=1000, n_b=200, η=0.1, 10 epochs), Caltech-Office SURF, seed %d.\n\n", seed)
	fmt.Fprintln(w, "| implementation | target | fold | threads | dictionary learning (s) | reconstruction + classifiers (s) | total (s) | DaDiL-R acc. (%) | DaDiL-E acc. (%) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %.1f | %.1f | %.1f | %.2f | %.2f |\n", r.Implementation, r.Target, r.Fold, r.Threads,
			r.LearnSeconds, r.ModelSeconds, r.TotalSeconds, r.AccuracyR, r.AccuracyE)
	}
	// Group by implementation and threads, in order of appearance.
	type group struct {
		impl    string
		threads int
		totals  []float64
		med     float64 // median of totals
		r, e    float64
	}
	var groups []*group
	for _, r := range rows {
		i := slices.IndexFunc(groups, func(g *group) bool { return g.impl == r.Implementation && g.threads == r.Threads })
		if i < 0 {
			groups = append(groups, &group{impl: r.Implementation, threads: r.Threads})
			i = len(groups) - 1
		}
		g := groups[i]
		g.totals = append(g.totals, r.TotalSeconds)
		g.r += r.AccuracyR
		g.e += r.AccuracyE
	}
	for _, g := range groups {
		s := slices.Clone(g.totals)
		sort.Float64s(s)
		n := len(s)
		g.med = s[n/2]
		if n%2 == 0 {
			g.med = (s[n/2-1] + s[n/2]) / 2
		}
	}
	if len(groups) > 0 && len(groups[0].totals) > 1 {
		fmt.Fprintf(w, "\nOver the %d splits:\n\n", len(groups[0].totals))
		fmt.Fprintln(w, "| implementation | threads | median total (s) | mean DaDiL-R acc. (%) | mean DaDiL-E acc. (%) |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
		for _, g := range groups {
			n := float64(len(g.totals))
			fmt.Fprintf(w, "| %s | %d | %.1f | %.2f | %.2f |\n", g.impl, g.threads, g.med, g.r/n, g.e/n)
		}
	}
	// Speed-ups of every dadil thread count over the reference at its
	// fastest, and thread for thread.
	var fastest *group
	for _, g := range groups {
		if g.impl != goImpl && (fastest == nil || g.med < fastest.med) {
			fastest = g
		}
	}
	if fastest == nil {
		return
	}
	fmt.Fprintln(w)
	for _, g := range groups {
		if g.impl != goImpl {
			continue
		}
		fmt.Fprintf(w, "dadil on %d thread(s): %.1f× faster than the Python reference at its fastest (%d thread(s))", g.threads,
			fastest.med/g.med, fastest.threads)
		for _, p := range groups {
			if p.impl != goImpl && p.threads == g.threads && p != fastest {
				fmt.Fprintf(w, ", %.1f× on as many threads", p.med/g.med)
			}
		}
		fmt.Fprintln(w, ".")
	}
}

// runPythonReference runs the Python reference script on the split with
// the given number of threads and returns its row of the table.
func runPythonReference(py, script, split string, seed uint64, threads int) (dadilTiming, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(py, script, split, "8", "1000", "200", "0.1", "10", strconv.FormatUint(seed, 10))
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// PyTorch's own threads are set by the script from DADIL_REF_THREADS;
	// BLAS and OpenMP threads here.
	n := strconv.Itoa(threads)
	cmd.Env = append(os.Environ(), "DADIL_REF_THREADS="+n, "OPENBLAS_NUM_THREADS="+n, "OMP_NUM_THREADS="+n, "MKL_NUM_THREADS="+n)
	if err := cmd.Run(); err != nil {
		return dadilTiming{}, fmt.Errorf("Python reference: %w\n%s", err, errOut.String())
	}
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	var raw map[string]any
	if err := json.Unmarshal(lines[len(lines)-1], &raw); err != nil {
		return dadilTiming{}, fmt.Errorf("Python reference: unreadable output: %w", err)
	}
	num := func(k string) float64 { v, _ := raw[k].(float64); return v }
	str := func(k string) string { v, _ := raw[k].(string); return v }
	return dadilTiming{Implementation: fmt.Sprintf("Python reference (PyTorch %s, POT %s)", str("torch"), str("pot")), Threads: threads,
		LearnSeconds: num("fit_seconds"), ModelSeconds: num("classifier_seconds"), TotalSeconds: num("total_seconds"),
		AccuracyR: num("accuracy_r"), AccuracyE: num("accuracy_e")}, nil
}
