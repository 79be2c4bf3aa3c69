package classify

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/dadil/dadil/internal/linalg"
)

// Default values used by Fit and FitLabels for zero fields of Settings.
const (
	DefaultL2      = 1e-3
	DefaultMaxIter = 1000
	DefaultGradTol = 1e-6
)

// targetTol is the largest allowed |Σ_k t_ik − 1| for a row of soft targets.
const targetTol = 1e-6

// Settings configures Fit and FitLabels. The zero value, like a nil
// *Settings, selects the defaults.
type Settings struct {
	// L2 is the penalty weight λ on ‖W‖²_F. Zero means DefaultL2; it must
	// not be negative, NaN or infinite. To train without a penalty set
	// NoPenalty instead.
	L2 float64

	// NoPenalty requests λ = 0. L2 must then be zero. Without a penalty
	// the minimum does not exist when the classes are separable: ‖W‖
	// grows until MaxIter is reached or the loss stops decreasing in
	// floating point.
	NoPenalty bool

	// MaxIter caps the number of L-BFGS iterations. Zero means
	// DefaultMaxIter; it must not be negative.
	MaxIter int

	// GradTol stops training once ‖∇L‖_∞ < GradTol, the maximum taken
	// over the entries of ∂L/∂W and ∂L/∂b. Zero means DefaultGradTol; it
	// must not be negative or NaN. The test is absolute: L is a mean
	// cross-entropy, of order 1, but ∂L/∂W scales with the features, so
	// features of tiny magnitude meet any tolerance at once.
	GradTol float64

	// Workers caps the number of goroutines that evaluate the loss and
	// its gradient. Zero means runtime.GOMAXPROCS(0) and 1 disables
	// parallelism; it must not be negative. The samples are split into a
	// fixed partition of blocks of 256 rows that does not depend on
	// Workers, and block sums are added in block order, so the trained
	// model is bit-identical for any value. Problems of at most 256
	// samples run on the calling goroutine.
	Workers int
}

// Result describes a training run.
type Result struct {
	// Loss is the objective L(W, b), penalty included, at the returned
	// model.
	Loss float64

	// GradNorm is ‖∇L‖_∞ at the returned model (up to rounding: it is
	// computed from the gradient in the coordinates of the optimiser; see
	// the package documentation).
	GradNorm float64

	// Converged reports whether GradNorm < GradTol.
	Converged bool

	// Iterations is the number of L-BFGS iterations performed, and
	// Evaluations the number of evaluations of the loss (each a pass over
	// the data; the gradient costs about as much again).
	Iterations, Evaluations int

	// Status is the reason training stopped: optimize.GradientThreshold
	// once ‖∇L‖_∞ < GradTol, optimize.IterationLimit after MaxIter
	// iterations, or optimize.MethodConverge when the line search finds no
	// point with a lower loss, which happens when the loss is flat to
	// floating-point precision, typically with ‖∇L‖_∞ barely above
	// GradTol. (Gonum's own line searches report that case as
	// optimize.Failure with optimize.ErrNoProgress; here it is no error:
	// the model returned is the best found.)
	Status optimize.Status
}

// BalancedWeights returns the sample weight 1/n_k of every row of class k
// (y holds the rows' classes, in [0, classes)), n_k the rows of class k,
// so that every class present weighs the same in Fit.
func BalancedWeights(y []int, classes int) []float64 {
	n := make([]float64, classes)
	for _, k := range y {
		n[k]++
	}
	w := make([]float64, len(y))
	for i, k := range y {
		w[i] = 1 / n[k]
	}
	return w
}

// HalfWeights returns the sample weights of n points followed by the
// rows of classes y: half of the total weight to the n points, equally,
// and half to the rows, every class present weighing the same
// (BalancedWeights); they sum to 1.
func HalfWeights(n int, y []int, classes int) []float64 {
	ws := BalancedWeights(y, classes)
	sum := floats.Sum(ws)
	w := make([]float64, n+len(y))
	for i := range n {
		w[i] = 0.5 / float64(n)
	}
	for i, v := range ws {
		w[n+i] = 0.5 * v / sum
	}
	return w
}

// Fit trains a softmax regression on the n×d features X, which may hold
// any finite values, and the n×c soft targets T. Each row of T must be a probability vector (non-negative,
// summing to 1 within 1e-6); one-hot rows give the usual hard-label loss.
// weights holds the sample weights s_i ≥ 0, not all zero; nil means uniform
// weights. Only their ratios matter. A nil s selects the defaults. The
// inputs are read, never modified, and must not change during the call.
//
// Fit minimises L(W, b) (see the package documentation) with L-BFGS from
// W = 0, b = 0. It returns an error, and no model, only for invalid input;
// a run that stops before ‖∇L‖_∞ < GradTol still returns the best model
// found, with Result.Converged false.
func Fit(X, T *mat.Dense, weights []float64, s *Settings) (*Softmax, *Result, error) {
	return fitFrom(X, T, weights, s, nil)
}

// FitFrom is Fit with L-BFGS started from the weights and biases of start
// instead of zero: a warm start for data close to those start was trained
// on. With a penalty (L2 > 0) the loss is strictly convex, so the
// minimiser is Fit's; only the path to it, and so where GradTol stops it,
// changes. start must have T's classes and X's features.
func FitFrom(X, T *mat.Dense, weights []float64, s *Settings, start *Softmax) (*Softmax, *Result, error) {
	if start == nil {
		return nil, nil, errors.New("classify: FitFrom without a start model")
	}
	return fitFrom(X, T, weights, s, start)
}

// fitFrom is Fit from start, or from zero when start is nil.
func fitFrom(X, T *mat.Dense, weights []float64, s *Settings, start *Softmax) (*Softmax, *Result, error) {
	cfg, err := s.resolve()
	if err != nil {
		return nil, nil, err
	}
	xr, err := checkFeatures(X)
	if err != nil {
		return nil, nil, err
	}
	if T == nil || T.IsEmpty() {
		return nil, nil, errors.New("classify: targets T are empty")
	}
	nt, c := T.Dims()
	if nt != xr.Rows {
		return nil, nil, fmt.Errorf("classify: shape mismatch: X has %d rows but T has %d", xr.Rows, nt)
	}
	if err := checkSize(c, xr.Cols); err != nil {
		return nil, nil, err
	}
	tr := T.RawMatrix()
	for i := range nt {
		row := tr.Data[i*tr.Stride : i*tr.Stride+c]
		ok, k, sum := linalg.OnSimplex(row, targetTol)
		switch {
		case ok:
		case k < 0:
			return nil, nil, fmt.Errorf("classify: row %d of T sums to %.17g, not 1", i, sum)
		case math.IsNaN(row[k]):
			return nil, nil, fmt.Errorf("classify: T[%d, %d] is NaN", i, k)
		case row[k] < 0:
			return nil, nil, fmt.Errorf("classify: T[%d, %d] = %g is negative", i, k, row[k])
		default:
			return nil, nil, fmt.Errorf("classify: T[%d, %d] is infinite", i, k)
		}
	}
	sumW, err := checkWeights(weights, xr.Rows)
	if err != nil {
		return nil, nil, err
	}
	o := newObjective(xr.Data, xr.Stride, xr.Rows, xr.Cols, tr.Data, tr.Stride, nil, c, weights, sumW, cfg.lambda, cfg.workers)
	if start == nil {
		return train(o, cfg)
	}
	if start.W == nil || len(start.B) != c {
		return nil, nil, fmt.Errorf("classify: FitFrom: the start model has %d biases for %d classes", len(start.B), c)
	}
	if r, cols := start.W.Dims(); r != c || cols != xr.Cols {
		return nil, nil, fmt.Errorf("classify: FitFrom: the start model's weights are %d×%d, the data have %d classes and %d features", r, cols, c, xr.Cols)
	}
	return trainFrom(o, cfg, newShifted(o).coordinates(start))
}

// FitLabels trains a softmax regression on the n×d features X and the
// class indices labels, each in [0, classes). It gives the same model,
// bit for bit, as Fit with one-hot targets, without building them. weights
// and s are as for Fit. A class absent from labels keeps a small
// probability: see the package documentation.
func FitLabels(X *mat.Dense, labels []int, classes int, weights []float64, s *Settings) (*Softmax, *Result, error) {
	cfg, err := s.resolve()
	if err != nil {
		return nil, nil, err
	}
	xr, err := checkFeatures(X)
	if err != nil {
		return nil, nil, err
	}
	if classes < 1 {
		return nil, nil, fmt.Errorf("classify: %d classes; need at least 1", classes)
	}
	if err := checkSize(classes, xr.Cols); err != nil {
		return nil, nil, err
	}
	if len(labels) != xr.Rows {
		return nil, nil, fmt.Errorf("classify: shape mismatch: X has %d rows but there are %d labels", xr.Rows, len(labels))
	}
	for i, y := range labels {
		if y < 0 || y >= classes {
			return nil, nil, fmt.Errorf("classify: label %d of row %d is outside [0, %d)", y, i, classes)
		}
	}
	sumW, err := checkWeights(weights, xr.Rows)
	if err != nil {
		return nil, nil, err
	}
	o := newObjective(xr.Data, xr.Stride, xr.Rows, xr.Cols, nil, 0, labels, classes, weights, sumW, cfg.lambda, cfg.workers)
	return train(o, cfg)
}

// config is a validated Settings with the defaults filled in.
type config struct {
	lambda  float64
	maxIter int
	gradTol float64
	workers int
}

// resolve validates s and fills in the defaults.
func (s *Settings) resolve() (config, error) {
	cfg := config{
		lambda:  DefaultL2,
		maxIter: DefaultMaxIter,
		gradTol: DefaultGradTol,
		workers: runtime.GOMAXPROCS(0),
	}
	if s == nil {
		return cfg, nil
	}
	switch {
	case math.IsNaN(s.L2) || math.IsInf(s.L2, 0) || s.L2 < 0:
		return cfg, fmt.Errorf("classify: Settings.L2 = %g; need a finite value ≥ 0 (NoPenalty requests λ = 0)", s.L2)
	case s.NoPenalty && s.L2 != 0:
		return cfg, fmt.Errorf("classify: Settings.NoPenalty is set but Settings.L2 = %g", s.L2)
	case s.MaxIter < 0:
		return cfg, fmt.Errorf("classify: Settings.MaxIter = %d is negative", s.MaxIter)
	case math.IsNaN(s.GradTol) || s.GradTol < 0:
		return cfg, fmt.Errorf("classify: Settings.GradTol = %g; need a value ≥ 0", s.GradTol)
	case s.Workers < 0:
		return cfg, fmt.Errorf("classify: Settings.Workers = %d is negative", s.Workers)
	}
	if s.NoPenalty {
		cfg.lambda = 0
	} else if s.L2 != 0 {
		cfg.lambda = s.L2
	}
	if s.MaxIter != 0 {
		cfg.maxIter = s.MaxIter
	}
	if s.GradTol != 0 {
		cfg.gradTol = s.GradTol
	}
	if s.Workers != 0 {
		cfg.workers = s.Workers
	}
	return cfg, nil
}

// MaxParams bounds the number of parameters c·(d + 1) of a model that Fit
// and FitLabels train: L-BFGS keeps about 25 vectors of that length, 13 GB
// at the bound.
const MaxParams = 1 << 26

// checkSize refuses models of more than MaxParams parameters.
func checkSize(classes, dim int) error {
	if p := float64(classes) * float64(dim+1); p > MaxParams {
		return fmt.Errorf("classify: %d classes × %d features make %.3g parameters, more than MaxParams = %d", classes, dim, p, MaxParams)
	}
	return nil
}

// checkFeatures validates X and returns its raw matrix.
func checkFeatures(X *mat.Dense) (raw blas64.General, err error) {
	if X == nil || X.IsEmpty() {
		return raw, errors.New("classify: features X are empty")
	}
	raw = X.RawMatrix()
	for i := range raw.Rows {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return raw, fmt.Errorf("classify: X[%d, %d] = %g is not finite", i, j, v)
			}
		}
	}
	return raw, nil
}

// checkWeights validates the sample weights of n samples and returns their
// sum; nil weights are uniform.
func checkWeights(w []float64, n int) (float64, error) {
	if w == nil {
		return float64(n), nil
	}
	if len(w) != n {
		return 0, fmt.Errorf("classify: shape mismatch: X has %d rows but there are %d weights", n, len(w))
	}
	var sum float64
	for i, v := range w {
		switch {
		case math.IsNaN(v):
			return 0, fmt.Errorf("classify: weight %d is NaN", i)
		case v < 0:
			return 0, fmt.Errorf("classify: weight %d = %g is negative", i, v)
		case math.IsInf(v, 0):
			return 0, fmt.Errorf("classify: weight %d is infinite", i)
		}
		sum += v
	}
	if sum == 0 {
		return 0, errors.New("classify: the weights sum to zero")
	}
	if math.IsInf(sum, 0) {
		return 0, errors.New("classify: the sum of the weights overflows")
	}
	if math.IsInf(1/sum, 0) {
		return 0, fmt.Errorf("classify: the weights sum to %g, too small to invert", sum)
	}
	return sum, nil
}

// train minimises o with L-BFGS, in shifted coordinates, from W = 0, b = 0
// and returns the model and the run summary.
func train(o *objective, cfg config) (*Softmax, *Result, error) {
	return trainFrom(o, cfg, make([]float64, o.dim()))
}

// trainFrom is train from the point v of the shifted coordinates, which it
// overwrites with the minimiser found: a warm start for a path of
// penalties on the same data.
func trainFrom(o *objective, cfg config, v []float64) (*Softmax, *Result, error) {
	sh := newShifted(o)
	f, g, iter, st := minimize(sh, v, cfg.maxIter, cfg.gradTol)
	r := &Result{
		Loss:        f,
		GradNorm:    sh.norm(g),
		Iterations:  iter,
		Evaluations: o.lossPasses,
		Status:      st,
	}
	if math.IsInf(r.Loss, 0) || math.IsNaN(r.Loss) || math.IsInf(r.GradNorm, 0) || math.IsNaN(r.GradNorm) {
		return nil, nil, errors.New("classify: the loss or its gradient overflows; rescale the features")
	}
	r.Converged = r.GradNorm < cfg.gradTol
	theta := sh.model(make([]float64, o.dim()), v)
	c, d := o.c, o.d
	m := &Softmax{
		W:       mat.NewDense(c, d, theta[:c*d:c*d]),
		B:       theta[c*d:],
		Classes: c,
		Dim:     d,
	}
	return m, r, nil
}
