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
		fmt.Fprintln(fs.Output(), "POT, one thread) on the same split.")
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
		fmt.Fprintf(e.stderr, "Python reference (1 thread)… ")
		var out, errOut bytes.Buffer
		cmd := exec.Command(py, script, split, "8", "1000", "200", "0.1", "10", strconv.FormatUint(*seed, 10))
		cmd.Stdout, cmd.Stderr = &out, &errOut
		// One core, as the reference: PyTorch's own threads are set
		// in the script; BLAS and OpenMP threads are set here.
		cmd.Env = append(os.Environ(), "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1")
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("Python reference: %w\n%s", err, errOut.String())
		}
		lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
		var r struct {
			Fit, Classifiers, Total float64
			AccR, AccE              float64
			Torch, POT              string
		}
		var raw map[string]any
		if err := json.Unmarshal(lines[len(lines)-1], &raw); err != nil {
			return fmt.Errorf("Python reference: unreadable output: %w", err)
		}
		r.Fit, _ = raw["fit_seconds"].(float64)
		r.Classifiers, _ = raw["classifier_seconds"].(float64)
		r.Total, _ = raw["total_seconds"].(float64)
		r.AccR, _ = raw["accuracy_r"].(float64)
		r.AccE, _ = raw["accuracy_e"].(float64)
		r.Torch, _ = raw["torch"].(string)
		r.POT, _ = raw["pot"].(string)
		fmt.Fprintf(e.stderr, "%.1f s\n", r.Total)
		rows = append(rows, dadilTiming{Implementation: fmt.Sprintf("Python reference (PyTorch %s, POT %s)", r.Torch, r.POT), Threads: 1,
			LearnSeconds: r.Fit, ModelSeconds: r.Classifiers, TotalSeconds: r.Total, AccuracyR: r.AccR, AccuracyE: r.AccE})
	}
	w := e.stdout
	fmt.Fprintf(w, "One DaDiL fit, paper setting (K=8, n=1000, n_b=200, η=0.1, 10 epochs), Caltech-Office SURF, target %s, fold %d, seed %d.\n\n", *target, *fold, *seed)
	fmt.Fprintln(w, "| implementation | threads | dictionary learning (s) | reconstruction + classifiers (s) | total (s) | DaDiL-R acc. (%) | DaDiL-E acc. (%) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.1f | %.2f | %.2f |\n", r.Implementation, r.Threads, r.LearnSeconds, r.ModelSeconds, r.TotalSeconds, r.AccuracyR, r.AccuracyE)
	}
	if py != "" {
		ref := rows[len(rows)-1].TotalSeconds
		fmt.Fprintf(w, "\nSpeed-up of dadil over the Python reference: %.1f× (%d threads), %.1f× (1 thread).\n", ref/rows[0].TotalSeconds, rows[0].Threads, ref/rows[len(rows)-2].TotalSeconds)
	}
	if *jsonPath != "" {
		return writeJSON(*jsonPath, map[string]any{"benchmark": "dadil-fit", "target": *target, "fold": *fold, "results": rows})
	}
	return nil
}
