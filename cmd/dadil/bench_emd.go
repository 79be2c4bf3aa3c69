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
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/npy"
	"github.com/dadil/dadil/ot"
)

// potScript times POT's ot.emd on a cost matrix, with POT's default
// iteration cap and with a cap high enough to reach optimality. It prints one
// JSON object. POT is only used for comparison, never by the library.
const potScript = `
import json, sys, time, warnings
import numpy as np
import ot
C = np.load(sys.argv[1])
reps = int(sys.argv[2])
n, m = C.shape
a = np.full(n, 1.0 / n)
b = np.full(m, 1.0 / m)
out = {"version": ot.__version__}
for name, cap in (("default", 100000), ("optimal", 2**31 - 1)):
    times = []
    for _ in range(reps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            G, log = ot.emd(a, b, C, numItermax=cap, log=True)
            times.append(time.perf_counter() - t0)
    out[name] = {"seconds": sorted(times)[len(times) // 2], "cost": float(log["cost"]),
                 "warning": log["warning"] or ""}
print(json.dumps(out))
`

// benchEMDRow is one size of "dadil bench emd".
type benchEMDRow struct {
	N          int     `json:"n"`
	Seconds    float64 `json:"seconds"`
	Pivots     int     `json:"pivots"`
	Cost       float64 `json:"cost"`
	POTVersion string  `json:"pot_version,omitempty"`
	// POT with its default iteration cap (100000), and uncapped.
	POTDefaultSeconds float64 `json:"pot_default_seconds,omitempty"`
	POTDefaultCost    float64 `json:"pot_default_cost,omitempty"`
	POTDefaultWarning string  `json:"pot_default_warning,omitempty"`
	POTOptimalSeconds float64 `json:"pot_optimal_seconds,omitempty"`
	POTOptimalCost    float64 `json:"pot_optimal_cost,omitempty"`
}

// benchEMDCommand holds the flags of dadil bench emd.
type benchEMDCommand struct {
	sizes, pot, jsonPath string
	dim, repeat          int
	seed                 uint64
	ns                   []int // the sizes, from --sizes
}

// parseBenchEMD parses and checks the flags of dadil bench emd, before any
// work.
func parseBenchEMD(args []string, e *env) (*benchEMDCommand, error) {
	c := &benchEMDCommand{}
	fs := newFlags("dadil bench emd", e)
	fs.StringVar(&c.sizes, "sizes", "200,1000,2000,5000", "comma-separated problem sizes `n` (n×n)")
	fs.IntVar(&c.dim, "dim", 64, "dimension of the Gaussian points")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed")
	fs.IntVar(&c.repeat, "repeat", 3, "timed runs per size (the median is reported)")
	fs.StringVar(&c.pot, "pot", "auto", "Python interpreter with POT for the side-by-side timing; \"auto\" tries /usr/bin/python3, \"none\" skips")
	fs.StringVar(&c.jsonPath, "json", "", "also write the results to `FILE` as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil bench emd [--sizes 200,1000,2000,5000] [--dim 64] [--repeat 3] [--pot PYTHON|auto|none] [--json FILE]")
		fmt.Fprintln(fs.Output(), "\nTimes exact OT between two samples of n standard Gaussian points in R^dim (squared-Euclidean")
		fmt.Fprintln(fs.Output(), "cost, uniform weights), and POT's ot.emd on the very same cost matrices when available.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	return c, c.check()
}

// check reports malformed flags.
func (c *benchEMDCommand) check() error {
	for _, f := range strings.Split(c.sizes, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return usageError{fmt.Errorf("--sizes: %s is not a positive integer", clip.Quote(f))}
		}
		if err := inRange("--sizes", v, 1, maxDemoPoints, "an n×n cost matrix must fit in memory"); err != nil {
			return err
		}
		c.ns = append(c.ns, v)
	}
	if err := inRange("--repeat", c.repeat, 1, 1000, "timed runs per size"); err != nil {
		return err
	}
	if err := inRange("--dim", c.dim, 1, maxDemoDim, "the points must fit in memory"); err != nil {
		return err
	}
	return checkJSON(c.jsonPath)
}

func runBenchEMD(args []string, e *env) error {
	c, err := parseBenchEMD(args, e)
	if err != nil {
		return err
	}
	python, err := findPython(c.pot, "ot", e)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "dadil-bench-emd-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var pot *potRunner
	if python != "" {
		if pot, err = newPOTRunner(python, tmp); err != nil {
			return err
		}
	}
	announceMachine(e)
	var rows []benchEMDRow
	for _, n := range c.ns {
		row, err := c.measure(e, n, pot)
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	c.print(e.stdout, rows, pot != nil)
	if c.jsonPath != "" {
		return writeBenchJSON(c.jsonPath, map[string]any{"benchmark": "emd", "dim": c.dim, "repeat": c.repeat, "results": rows})
	}
	return nil
}

// measure times dadil's EMD on the problem of size n and, with pot, POT's.
func (c *benchEMDCommand) measure(e *env, n int, pot *potRunner) (benchEMDRow, error) {
	fmt.Fprintf(e.stderr, "n = %d: generating… ", n)
	C, err := gaussianProblem(n, c.dim, 0, c.seed+uint64(n))
	if err != nil {
		return benchEMDRow{}, err
	}
	row := benchEMDRow{N: n}
	if err := timeEMD(e, C, c.repeat, &row); err != nil {
		return benchEMDRow{}, err
	}
	if pot != nil {
		fmt.Fprintf(e.stderr, "POT… ")
		path := filepath.Join(pot.dir, fmt.Sprintf("C%d.npy", n))
		if err := npy.WriteMatrix(path, C); err != nil {
			return benchEMDRow{}, err
		}
		C = nil // POT runs without dadil's copy of the matrix
		runtime.GC()
		if err := pot.run(path, n, c.repeat, &row); err != nil {
			return benchEMDRow{}, err
		}
		os.Remove(path)
	}
	fmt.Fprintln(e.stderr, "done")
	return row, nil
}

// timeEMD solves the problem of cost matrix C repeat times and sets the
// row's median time, pivots and cost.
func timeEMD(e *env, C *mat.Dense, repeat int, row *benchEMDRow) error {
	var s ot.EMDSolver
	var r ot.EMDResult
	times := make([]float64, repeat)
	for k := range times {
		fmt.Fprintf(e.stderr, "dadil run %d/%d… ", k+1, repeat)
		runtime.GC()
		t0 := time.Now()
		if err := s.Solve(&r, nil, nil, C); err != nil {
			return err
		}
		times[k] = time.Since(t0).Seconds()
	}
	slices.Sort(times)
	row.Seconds, row.Pivots, row.Cost = times[len(times)/2], r.Pivots, r.Cost
	return nil
}

// potRunner times POT's ot.emd with potScript, written in dir.
type potRunner struct {
	python, dir, script string
}

// newPOTRunner writes potScript into dir, for python.
func newPOTRunner(python, dir string) (*potRunner, error) {
	p := &potRunner{python: python, dir: dir, script: filepath.Join(dir, "pot_emd.py")}
	if err := os.WriteFile(p.script, []byte(potScript), 0o644); err != nil {
		return nil, err
	}
	return p, nil
}

// run times POT on the cost matrix in the .npy file path (size n) and
// sets POT's columns of the row.
func (p *potRunner) run(path string, n, repeat int, row *benchEMDRow) error {
	var out, errOut bytes.Buffer
	cmd := exec.Command(p.python, p.script, path, strconv.Itoa(repeat))
	cmd.Stdout = &out
	cmd.Stderr = &errOut // POT's warnings about its iteration cap
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("POT run for n = %d: %w\n%s", n, err, errOut.String())
	}
	var res struct {
		Version string `json:"version"`
		Default struct {
			Seconds float64 `json:"seconds"`
			Cost    float64 `json:"cost"`
			Warning string  `json:"warning"`
		} `json:"default"`
		Optimal struct {
			Seconds float64 `json:"seconds"`
			Cost    float64 `json:"cost"`
		} `json:"optimal"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return fmt.Errorf("POT run for n = %d: unreadable output %s: %w", n, clip.Quote(out.String()), err)
	}
	row.POTVersion = res.Version
	row.POTDefaultSeconds, row.POTDefaultCost, row.POTDefaultWarning = res.Default.Seconds, res.Default.Cost, res.Default.Warning
	row.POTOptimalSeconds, row.POTOptimalCost = res.Optimal.Seconds, res.Optimal.Cost
	return nil
}

// print writes the table of the results: dadil's alone, or side by side
// with POT's and the warnings where POT's uncapped cost is not dadil's.
func (c *benchEMDCommand) print(w io.Writer, rows []benchEMDRow, withPOT bool) {
	fmt.Fprintf(w, "Exact OT, n×n, Gaussian points in R^%d, squared-Euclidean cost, uniform weights; median of %d runs, solver time only.\n\n", c.dim, c.repeat)
	if !withPOT {
		fmt.Fprintln(w, "| n | dadil EMD (s) | pivots | cost |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|")
		for _, r := range rows {
			fmt.Fprintf(w, "| %d | %.4g | %d | %.10g |\n", r.N, r.Seconds, r.Pivots, r.Cost)
		}
		return
	}
	fmt.Fprintf(w, "| n | dadil EMD (s), always optimal | POT %s ot.emd, default cap (s) | its cost vs optimum | POT ot.emd, uncapped (s) | dadil speed-up vs POT capped / uncapped |\n", rows[0].POTVersion)
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		gap := "optimal"
		if rel := (r.POTDefaultCost - r.Cost) / r.Cost; rel > 1e-9 {
			gap = fmt.Sprintf("+%.2f%% (sub-optimal)", 100*rel)
		}
		fmt.Fprintf(w, "| %d | %.4g | %.4g | %s | %.4g | %.2f× / %.2f× |\n",
			r.N, r.Seconds, r.POTDefaultSeconds, gap, r.POTOptimalSeconds, r.POTDefaultSeconds/r.Seconds, r.POTOptimalSeconds/r.Seconds)
	}
	for _, r := range rows {
		if d := r.POTOptimalCost - r.Cost; d > 1e-9*r.Cost || -d > 1e-9*r.Cost {
			fmt.Fprintf(w, "\nWARNING: n = %d: uncapped POT cost %.12g differs from dadil's %.12g\n", r.N, r.POTOptimalCost, r.Cost)
		}
	}
}

// findPython resolves a flag naming the Python interpreter of a
// side-by-side comparison: "none" gives "", "auto" gives /usr/bin/python3
// when it can import the modules (else "" and a note), and any other value
// must be an interpreter that can import them.
func findPython(flag, modules string, e *env) (string, error) {
	can := func(py string) bool { return exec.Command(py, "-c", "import "+modules).Run() == nil }
	switch flag {
	case "none":
		return "", nil
	case "auto":
		if can("/usr/bin/python3") {
			return "/usr/bin/python3", nil
		}
		fmt.Fprintf(e.stderr, "/usr/bin/python3 cannot import %s: timing dadil only\n", modules)
		return "", nil
	}
	if !can(flag) {
		return "", fmt.Errorf("%s cannot import %s", flag, modules)
	}
	return flag, nil
}

// writeJSON writes v, indented, to path atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// checkOutput reports, before a long run, whether path can be written
// later: its folder must exist and accept new files.
func checkOutput(flag, path string) error {
	if err := atomicfile.Check(path); err != nil {
		return usageError{fmt.Errorf("%s: %w", flag, err)}
	}
	return nil
}

// checkJSON checks, as checkOutput, the file of a --json flag when one is
// given.
func checkJSON(path string) error {
	if path == "" {
		return nil
	}
	return checkOutput("--json", path)
}

// checkOutputDir is run before a long run: it cleans the leftovers of
// killed runs into the output folder dir of a command that owns the names
// owned, and reports whether dir can be written later
// (atomicfile.PrepareDir).
func checkOutputDir(flag, dir string, owned []string) error {
	if err := atomicfile.PrepareDir(dir, owned); err != nil {
		return usageError{fmt.Errorf("%s %s: %w", flag, dir, err)}
	}
	return nil
}
