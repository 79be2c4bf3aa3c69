package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/npy"
	"github.com/dadil/dadil/ot"
)

// otInputs holds what "dadil ot" commands read.
type otInputs struct {
	C    *mat.Dense
	a, b []float64
	n, m int
}

// readOTInputs reads the cost matrix and the optional weights; a nil weight
// vector stands for uniform weights.
func readOTInputs(costPath, aPath, bPath string) (*otInputs, error) {
	if costPath == "" {
		return nil, usageError{fmt.Errorf("--cost is required")}
	}
	arr, err := npy.ReadFile(costPath)
	if err != nil {
		return nil, err
	}
	C, err := arr.Matrix()
	if err != nil {
		return nil, fmt.Errorf("%s: cost: %w", costPath, err)
	}
	in := &otInputs{C: C}
	in.n, in.m = C.Dims()
	read := func(path, name string, want int, what string) ([]float64, error) {
		if path == "" {
			return nil, nil
		}
		arr, err := npy.ReadFile(path)
		if err != nil {
			return nil, err
		}
		v, err := arr.Vector()
		if err != nil {
			return nil, fmt.Errorf("%s: weights %s: %w", path, name, err)
		}
		if len(v) != want {
			return nil, fmt.Errorf("%s: weights %s have %d entries but the cost matrix %s has %d %s", path, name, len(v), costPath, want, what)
		}
		return v, nil
	}
	if in.a, err = read(aPath, "a", in.n, "rows"); err != nil {
		return nil, err
	}
	if in.b, err = read(bPath, "b", in.m, "columns"); err != nil {
		return nil, err
	}
	return in, nil
}

// otJSON is the one-line JSON summary of "dadil ot" commands.
type otJSON struct {
	Cost       float64 `json:"cost"`
	Seconds    float64 `json:"seconds"`
	Iterations int     `json:"iterations"`
	N          int     `json:"n"`
	M          int     `json:"m"`
	Converged  *bool   `json:"converged,omitempty"`
}

func printJSON(e *env, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", b)
	return err
}

func runEMD(args []string, e *env) error {
	fs := newFlags("dadil ot emd", e)
	cost := fs.String("cost", "", "cost matrix `C.npy` (n×m, float64 or float32)")
	aPath := fs.String("a", "", "source weights `a.npy` (n); uniform when absent")
	bPath := fs.String("b", "", "target weights `b.npy` (m); uniform when absent")
	planPath := fs.String("plan", "", "write the dense optimal plan to `P.npy` (float64)")
	asJSON := fs.Bool("json", false, "print one JSON object on the last line")
	maxPivots := fs.Int("max-pivots", 0, "fail if optimality needs more than `N` pivots (0: no limit)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil ot emd --cost C.npy [--a a.npy] [--b b.npy] [--plan P.npy] [--json]")
		fmt.Fprintln(fs.Output(), "\nSolves min ⟨C, π⟩ over plans π with marginals a and b exactly (network simplex).")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkPlan(*planPath); err != nil {
		return err
	}
	in, err := readOTInputs(*cost, *aPath, *bPath)
	if err != nil {
		return err
	}
	s := ot.EMDSolver{MaxPivots: *maxPivots}
	var r ot.EMDResult
	t0 := time.Now()
	err = s.Solve(&r, in.a, in.b, in.C)
	secs := time.Since(t0).Seconds()
	if err != nil {
		return err
	}
	if *planPath != "" {
		if err := npy.WriteMatrix(*planPath, r.Plan.Dense()); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(e, otJSON{Cost: r.Cost, Seconds: secs, Iterations: r.Pivots, N: in.n, M: in.m})
	}
	fmt.Fprintf(e.stdout, "EMD %d×%d: cost %.12g, %d pivots, %d non-zeros in the plan, %.4g s\n",
		in.n, in.m, r.Cost, r.Pivots, r.Plan.Len(), secs)
	return nil
}

// Bounds of the generated problems of ot demo and bench emd: 20 000 points
// make a 3.2 GB cost matrix; 20 000 points in 2¹⁶ dimensions 10 GB of
// points.
const (
	maxDemoPoints = 20000
	maxDemoDim    = 1 << 16
)

func runSinkhorn(args []string, e *env) error {
	fs := newFlags("dadil ot sinkhorn", e)
	cost := fs.String("cost", "", "cost matrix `C.npy` (n×m, float64 or float32)")
	reg := fs.Float64("reg", 0, "entropic regularisation `ε` > 0 (required)")
	aPath := fs.String("a", "", "source weights `a.npy` (n); uniform when absent")
	bPath := fs.String("b", "", "target weights `b.npy` (m); uniform when absent")
	planPath := fs.String("plan", "", "write the dense plan to `P.npy` (float64)")
	asJSON := fs.Bool("json", false, "print one JSON object on the last line")
	tol := fs.Float64("tol", 0, "stop when the L1 marginal violation is below `t` (0: default 1e-9)")
	maxIter := fs.Int("max-iter", 0, "iteration cap (default 1000)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil ot sinkhorn --cost C.npy --reg ε [--a a.npy] [--b b.npy] [--plan P.npy] [--json]")
		fmt.Fprintln(fs.Output(), "\nSolves the entropic problem min ⟨C, π⟩ − ε H(π) (log-domain Sinkhorn).")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *reg == 0 {
		return usageError{fmt.Errorf("--reg is required and must be positive")}
	}
	if err := countFlag(fs, "max-iter", *maxIter, "1000"); err != nil {
		return err
	}
	if err := checkPlan(*planPath); err != nil {
		return err
	}
	in, err := readOTInputs(*cost, *aPath, *bPath)
	if err != nil {
		return err
	}
	t0 := time.Now()
	r, err := ot.Sinkhorn(in.a, in.b, in.C, *reg, &ot.SinkhornSettings{Tol: *tol, MaxIter: *maxIter})
	secs := time.Since(t0).Seconds()
	if err != nil {
		return err
	}
	// The JSON is encoded before the plan is written, so that a failure
	// (a cost beyond float64) leaves no plan file behind.
	var js []byte
	if *asJSON {
		conv := r.Converged
		if js, err = json.Marshal(otJSON{Cost: r.Cost, Seconds: secs, Iterations: r.Iterations, N: in.n, M: in.m, Converged: &conv}); err != nil {
			return fmt.Errorf("the result (cost %g) cannot be written as JSON: %w", r.Cost, err)
		}
	}
	if *planPath != "" {
		if err := npy.WriteMatrix(*planPath, r.Plan); err != nil {
			return err
		}
	}
	if *asJSON {
		_, err := fmt.Fprintf(e.stdout, "%s\n", js)
		return err
	}
	status := "converged"
	if !r.Converged {
		status = fmt.Sprintf("NOT converged (marginal error %.3g)", r.MarginalError)
	}
	fmt.Fprintf(e.stdout, "Sinkhorn %d×%d, ε = %g: cost %.12g, %d iterations, %s, %.4g s\n",
		in.n, in.m, *reg, r.Cost, r.Iterations, status, secs)
	return nil
}

// gaussianProblem draws n points of N(0, I_d) and n points of N(shift, I_d)
// and returns their squared-Euclidean cost matrix.
func gaussianProblem(n, d int, shift float64, seed uint64) (*mat.Dense, error) {
	rng := rand.New(rand.NewPCG(seed, 0x0a7))
	X := mat.NewDense(n, d, nil)
	Y := mat.NewDense(n, d, nil)
	x, y := X.RawMatrix().Data, Y.RawMatrix().Data
	for k := range x {
		x[k] = rng.NormFloat64()
		y[k] = rng.NormFloat64() + shift
	}
	var C mat.Dense
	if err := ot.SqEuclidean(&C, X, Y); err != nil {
		return nil, err
	}
	return &C, nil
}

func runOTDemo(args []string, e *env) error {
	fs := newFlags("dadil ot demo", e)
	n := fs.Int("n", 1000, "points per cloud")
	d := fs.Int("d", 64, "dimension")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := inRange("--n", *n, 1, maxDemoPoints, "an n×n cost matrix must fit in memory"); err != nil {
		return err
	}
	if err := inRange("--d", *d, 1, maxDemoDim, "the points must fit in memory"); err != nil {
		return err
	}
	C, err := gaussianProblem(*n, *d, 0.5, *seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Two clouds of %d Gaussian points in R^%d (the second shifted by 0.5 per coordinate), squared-Euclidean cost, uniform weights.\n\n", *n, *d)
	t0 := time.Now()
	r, err := ot.EMD(nil, nil, C)
	if err != nil {
		return err
	}
	exact := r.Cost
	fmt.Fprintf(e.stdout, "%-28s %14s %12s %10s\n", "solver", "cost", "iterations", "seconds")
	fmt.Fprintf(e.stdout, "%-28s %14.8f %12d %10.4f\n", "EMD (exact)", exact, r.Pivots, time.Since(t0).Seconds())
	maxC := mat.Max(C)
	for _, f := range []float64{1e-1, 3e-2, 1e-2} {
		t0 := time.Now()
		s, err := ot.Sinkhorn(nil, nil, C, f*maxC, &ot.SinkhornSettings{MaxIter: 5000})
		if err != nil {
			return err
		}
		label := fmt.Sprintf("Sinkhorn ε = %g·max C", f)
		if !s.Converged {
			label += " (cap)"
		}
		fmt.Fprintf(e.stdout, "%-28s %14.8f %12d %10.4f\n", label, s.Cost, s.Iterations, time.Since(t0).Seconds())
	}
	fmt.Fprintf(e.stdout, "\nThe entropic cost approaches the exact one as ε → 0; EMD's plan has %d non-zeros (at most n+m−1 = %d).\n", r.Plan.Len(), 2**n-1)
	return nil
}

// checkPlan checks, before solving, that the file of --plan, when given,
// can be written.
func checkPlan(path string) error {
	if path == "" {
		return nil
	}
	return checkOutput("--plan", path)
}
