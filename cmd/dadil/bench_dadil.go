package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/dadil/dadil/internal/clip"
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

// benchDaDiLCommand holds the flags of dadil bench dadil.
type benchDaDiLCommand struct {
	data, targets, folds                 string
	threads, pyThreads, python, jsonPath string
	seed                                 uint64
	goThreads, refThreads, foldList      []int // from --threads, --python-threads and --folds
}

// parseBenchDaDiL parses and checks the flags of dadil bench dadil, before
// any work.
func parseBenchDaDiL(args []string, e *env) (*benchDaDiLCommand, error) {
	c := &benchDaDiLCommand{}
	fs := newFlags("dadil bench dadil", e)
	fs.StringVar(&c.data, "data", "", "benchmark folder `DIR` holding office-caltech10/")
	fs.StringVar(&c.targets, "targets", "W", "comma-separated target domains (W, A, D, C)")
	fs.StringVar(&c.folds, "folds", "1", "comma-separated test folds (1…5)")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed")
	fs.StringVar(&c.threads, "threads", "all,1", "comma-separated thread counts for dadil (`all`: every core)")
	fs.StringVar(&c.pyThreads, "python-threads", "1,all", "comma-separated thread counts for the Python reference")
	fs.StringVar(&c.python, "python", "auto", "Python interpreter with PyTorch and POT for the reference; \"auto\" tries /usr/bin/python3, \"none\" skips")
	fs.StringVar(&c.jsonPath, "json", "", "also write the timings to `FILE` as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil bench dadil --data DIR [--targets W] [--folds 1] [--threads all,1] [--python-threads 1,all] [--python PYTHON|auto|none] [--json FILE]")
		fmt.Fprintln(fs.Output(), "\nTimes DaDiL fits with the paper's Caltech-Office setting (K=8, n=1000, n_b=200, η=0.1, 10 epochs)")
		fmt.Fprintln(fs.Output(), "on SURF features, and an independent Python reference (PyTorch + POT) on the same splits; with")
		fmt.Fprintln(fs.Output(), "several splits it also prints the accuracies averaged over them.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	return c, c.check()
}

// check reports malformed flags.
func (c *benchDaDiLCommand) check() error {
	if c.data == "" {
		return usageError{fmt.Errorf("--data is required")}
	}
	procs := runtime.GOMAXPROCS(0)
	var err error
	if c.goThreads, err = parseThreads("threads", c.threads, procs); err != nil {
		return err
	}
	if c.refThreads, err = parseThreads("python-threads", c.pyThreads, procs); err != nil {
		return err
	}
	if c.foldList, err = parseInts("folds", c.folds); err != nil {
		return err
	}
	return checkJSON(c.jsonPath)
}

func runBenchDaDiL(args []string, e *env) error {
	c, err := parseBenchDaDiL(args, e)
	if err != nil {
		return err
	}
	announceMachine(e)
	o, err := bench.LoadOfficeCaltech(filepath.Join(c.data, "office-caltech10"), "surf")
	if err != nil {
		return err
	}
	py, err := findPython(c.python, "torch, ot", e)
	if err != nil {
		return err
	}
	var ref *pythonReference
	if py != "" {
		if ref, err = newPythonReference(py); err != nil {
			return err
		}
		defer os.RemoveAll(ref.dir)
	}
	var rows []dadilTiming
	for _, target := range splitList(c.targets) {
		for _, fold := range c.foldList {
			s, err := o.Split(target, fold)
			if err != nil {
				return err
			}
			r, err := c.timeSplit(e, s, target, fold, ref)
			if err != nil {
				return err
			}
			rows = append(rows, r...)
		}
	}
	printBenchDaDiL(e, rows, c.seed)
	if c.jsonPath != "" {
		return writeBenchJSON(c.jsonPath, map[string]any{"benchmark": "dadil-fit", "results": rows})
	}
	return nil
}

// timeSplit times dadil on the split with every --threads and, with ref,
// the Python reference with every --python-threads.
func (c *benchDaDiLCommand) timeSplit(e *env, s *dataset.Problem, target string, fold int, ref *pythonReference) ([]dadilTiming, error) {
	var rows []dadilTiming
	add := func(r dadilTiming) {
		r.Target, r.Fold = target, fold
		rows = append(rows, r)
		fmt.Fprintf(e.stderr, "%.1f s\n", r.TotalSeconds)
	}
	for _, th := range c.goThreads {
		fmt.Fprintf(e.stderr, "%s %d: dadil (Go), %d thread(s)… ", target, fold, th)
		r, err := timeGoFit(s, c.seed, th)
		if err != nil {
			return nil, err
		}
		add(r)
	}
	if ref == nil {
		return rows, nil
	}
	split := filepath.Join(ref.dir, "split.npz")
	if err := bench.ExportSplit(split, s); err != nil {
		return nil, err
	}
	for _, th := range c.refThreads {
		fmt.Fprintf(e.stderr, "%s %d: Python reference, %d thread(s)… ", target, fold, th)
		r, err := ref.run(split, c.seed, th)
		if err != nil {
			return nil, err
		}
		add(r)
	}
	return rows, nil
}

// pythonReference runs bench.PythonReference, written in the temporary
// folder dir, with the interpreter python.
type pythonReference struct {
	python, dir, script string
}

// newPythonReference writes the reference script into a new temporary
// folder; the caller removes the folder.
func newPythonReference(python string) (*pythonReference, error) {
	dir, err := os.MkdirTemp("", "dadil-bench-dadil-")
	if err != nil {
		return nil, err
	}
	r := &pythonReference{python: python, dir: dir, script: filepath.Join(dir, "dadil_reference.py")}
	if err := os.WriteFile(r.script, []byte(bench.PythonReference), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return r, nil
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
			return nil, usageError{fmt.Errorf("--%s: %s is neither a positive integer nor all", flag, clip.Quote(f))}
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
	groups := groupTimings(rows)
	if len(groups) > 0 && len(groups[0].totals) > 1 {
		fmt.Fprintf(w, "\nOver the %d splits:\n\n", len(groups[0].totals))
		fmt.Fprintln(w, "| implementation | threads | median total (s) | mean DaDiL-R acc. (%) | mean DaDiL-E acc. (%) |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
		for _, g := range groups {
			n := float64(len(g.totals))
			fmt.Fprintf(w, "| %s | %d | %.1f | %.2f | %.2f |\n", g.impl, g.threads, g.med, g.r/n, g.e/n)
		}
	}
	printSpeedUps(w, groups)
}

// timingGroup gathers the fits of one implementation on one number of
// threads.
type timingGroup struct {
	impl    string
	threads int
	totals  []float64
	med     float64 // median of totals
	r, e    float64 // sums of the accuracies
}

// groupTimings groups the rows by implementation and threads, in order of
// appearance.
func groupTimings(rows []dadilTiming) []*timingGroup {
	var groups []*timingGroup
	for _, r := range rows {
		i := slices.IndexFunc(groups, func(g *timingGroup) bool { return g.impl == r.Implementation && g.threads == r.Threads })
		if i < 0 {
			groups = append(groups, &timingGroup{impl: r.Implementation, threads: r.Threads})
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
	return groups
}

// printSpeedUps prints the speed-ups of every dadil thread count over the
// reference at its fastest, and thread for thread; nothing without the
// reference.
func printSpeedUps(w io.Writer, groups []*timingGroup) {
	var fastest *timingGroup
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

// run runs the Python reference on the split with the given number of
// threads and returns its row of the table.
func (p *pythonReference) run(split string, seed uint64, threads int) (dadilTiming, error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(p.python, p.script, split, "8", "1000", "200", "0.1", "10", strconv.FormatUint(seed, 10))
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
