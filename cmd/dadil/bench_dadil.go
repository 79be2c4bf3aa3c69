package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/classify"
)

// dadilTiming is one implementation's row of "dadil bench dadil".
type dadilTiming struct {
	Implementation string  `json:"implementation"`
	Threads        int     `json:"threads"`
	LearnSeconds   float64 `json:"learn_seconds"`
	ModelSeconds   float64 `json:"model_seconds"`
	TotalSeconds   float64 `json:"total_seconds"`
	AccuracyR      float64 `json:"accuracy_r"`
	AccuracyE      float64 `json:"accuracy_e"`
}

func runBenchDaDiL(args []string, e *env) error {
	fs := newFlags("dadil bench dadil", e)
	data := fs.String("data", "", "benchmark folder `DIR` holding office-caltech10/")
	target := fs.String("target", "W", "target domain (W, A, D or C)")
	fold := fs.Int("fold", 1, "test fold (1…5)")
	seed := fs.Uint64("seed", 1, "random seed")
	python := fs.String("python", "auto", "Python interpreter with PyTorch and POT for the reference; \"auto\" tries /usr/bin/python3, \"none\" skips")
	jsonPath := fs.String("json", "", "also write the timings to `FILE` as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil bench dadil --data DIR [--target W] [--fold 1] [--python PYTHON|auto|none] [--json FILE]")
		fmt.Fprintln(fs.Output(), "\nTimes one DaDiL fit with the paper's Caltech-Office setting (K=8, n=1000, n_b=200, η=0.1, 10 epochs)")
		fmt.Fprintln(fs.Output(), "on SURF features, with all cores and with one, and an independent Python reference (PyTorch +")
		fmt.Fprintln(fs.Output(), "POT), also with one thread and with all cores, on the same split.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *data == "" {
		return usageError{fmt.Errorf("--data is required")}
	}
	o, err := bench.LoadOfficeCaltech(filepath.Join(*data, "office-caltech10"), "surf")
	if err != nil {
		return err
	}
	s, err := o.Split(*target, *fold)
	if err != nil {
		return err
	}
	c := o.Classes.Len()
	var rows []dadilTiming
	procs := runtime.GOMAXPROCS(0)
	for _, threads := range []int{procs, 1} {
		runtime.GOMAXPROCS(threads)
		fmt.Fprintf(e.stderr, "dadil (Go), %d thread(s)… ", threads)
		t0 := time.Now()
		m := adapt.NewDaDiLR(bench.PaperDaDiL(*seed))
		err := m.Fit(s.Sources, s.Train, c)
		total := time.Since(t0).Seconds()
		runtime.GOMAXPROCS(procs)
		if err != nil {
			return err
		}
		pr, err := m.Model.PredictR(s.Test)
		if err != nil {
			return err
		}
		pe, err := m.Model.PredictE(s.Test)
		if err != nil {
			return err
		}
		accR, err := classify.Accuracy(pr, s.TestY)
		if err != nil {
			return err
		}
		accE, err := classify.Accuracy(pe, s.TestY)
		if err != nil {
			return err
		}
		learn := m.Dict.History.Elapsed.Seconds()
		rows = append(rows, dadilTiming{Implementation: "dadil (Go)", Threads: threads, LearnSeconds: learn,
			ModelSeconds: total - learn, TotalSeconds: total, AccuracyR: 100 * accR, AccuracyE: 100 * accE})
		fmt.Fprintf(e.stderr, "%.1f s\n", total)
		if procs == 1 {
			break
		}
	}
	py, err := findPython(*python, "torch, ot", e)
	if err != nil {
		return err
	}
	if py != "" {
		tmp, err := os.MkdirTemp("", "dadil-bench-dadil-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		split := filepath.Join(tmp, "split.npz")
		if err := bench.ExportSplit(split, s, c); err != nil {
			return err
		}
		script := filepath.Join(tmp, "dadil_reference.py")
		if err := os.WriteFile(script, []byte(bench.PythonReference), 0o644); err != nil {
			return err
		}
		for _, threads := range []int{1, procs} {
			row, err := runPythonReference(py, script, split, *seed, threads, e)
			if err != nil {
				return err
			}
			rows = append(rows, row)
			if procs == 1 {
				break
			}
		}
	}
	w := e.stdout
	fmt.Fprintf(w, "One DaDiL fit, paper setting (K=8, n=1000, n_b=200, η=0.1, 10 epochs), Caltech-Office SURF, target %s, fold %d, seed %d.\n\n", *target, *fold, *seed)
	fmt.Fprintln(w, "| implementation | threads | dictionary learning (s) | reconstruction + classifiers (s) | total (s) | DaDiL-R acc. (%) | DaDiL-E acc. (%) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.1f | %.2f | %.2f |\n", r.Implementation, r.Threads, r.LearnSeconds, r.ModelSeconds, r.TotalSeconds, r.AccuracyR, r.AccuracyE)
	}
	if py != "" {
		// rows: Go on procs threads[, Go on 1], Python on 1[, Python on procs].
		goAll, goOne := rows[0], rows[0]
		pyOne, pyAll := rows[len(rows)-1], rows[len(rows)-1]
		if procs > 1 {
			goOne, pyOne = rows[1], rows[2]
		}
		fmt.Fprintf(w, "\nSpeed-up of dadil over the Python reference: %.1f× (dadil on %d threads, Python on 1), %.1f× (both on %d), %.1f× (both on 1).\n",
			pyOne.TotalSeconds/goAll.TotalSeconds, goAll.Threads, pyAll.TotalSeconds/goAll.TotalSeconds, goAll.Threads, pyOne.TotalSeconds/goOne.TotalSeconds)
	}
	if *jsonPath != "" {
		return writeJSON(*jsonPath, map[string]any{"benchmark": "dadil-fit", "target": *target, "fold": *fold, "results": rows})
	}
	return nil
}

// runPythonReference runs the Python reference script on the split with
// the given number of threads and returns its row of the table.
func runPythonReference(py, script, split string, seed uint64, threads int, e *env) (dadilTiming, error) {
	fmt.Fprintf(e.stderr, "Python reference (%d thread(s))… ", threads)
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
	fmt.Fprintf(e.stderr, "%.1f s\n", num("total_seconds"))
	return dadilTiming{Implementation: fmt.Sprintf("Python reference (PyTorch %s, POT %s)", str("torch"), str("pot")), Threads: threads,
		LearnSeconds: num("fit_seconds"), ModelSeconds: num("classifier_seconds"), TotalSeconds: num("total_seconds"),
		AccuracyR: num("accuracy_r"), AccuracyE: num("accuracy_e")}, nil
}
