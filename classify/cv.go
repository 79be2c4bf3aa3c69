package classify

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/internal/par"
)

// DefaultL2Grid is the grid of penalties λ SoftmaxCV tries by default.
var DefaultL2Grid = []float64{1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6}

// DefaultFolds is SoftmaxCV's default number of folds.
const DefaultFolds = 3

// SoftmaxCV trains a softmax regression whose penalty λ is chosen by
// stratified k-fold cross-validation on the training points themselves:
// the rows are dealt into k folds class by class (by the argmax of their
// targets), in an order shuffled by Seed; for every fold the penalties are
// fitted, from the largest down, on the other folds, each fit starting from
// the previous one's solution, and scored on the fold; the penalty with the
// best mean held-out accuracy (weighted by the sample weights, against the
// argmax of the targets) wins, ties going to the lower mean cross-entropy
// and then to the larger penalty, and the model is fitted with it on every
// row. It needs no label but the training points' own, so every method can
// choose its classifier's regularisation without target labels.
//
// Folds are fitted in parallel on one goroutine each; the result depends on
// Seed only, not on the number of goroutines. With fewer than two rows per
// fold it fits DefaultL2 without cross-validation.
type SoftmaxCV struct {
	// L2s is the grid of penalties, all positive; nil: DefaultL2Grid.
	L2s []float64
	// Folds is k ≥ 2; 0: DefaultFolds.
	Folds int
	// Seed orders the rows dealt into the folds.
	Seed uint64
	// Settings set MaxIter, GradTol and Workers of every fit; their L2
	// and NoPenalty are ignored.
	Settings *Settings
}

// Name returns "softmax-cv".
func (c *SoftmaxCV) Name() string { return "softmax-cv" }

// Train selects the penalty (Select) and fits the model with it.
func (c *SoftmaxCV) Train(X, T *mat.Dense, w []float64) (Classifier, error) {
	l2, _, err := c.Select(X, T, w)
	if err != nil {
		return nil, err
	}
	s := c.fitSettings(0)
	s.L2 = l2
	m, _, err := Fit(X, T, w, &s)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// fitSettings returns the settings of one fit on workers goroutines (0:
// those of c.Settings).
func (c *SoftmaxCV) fitSettings(workers int) Settings { return gridSettings(c.Settings, workers) }

// gridSettings returns the settings s (nil: the defaults) of one fit of a
// grid of penalties, on workers goroutines (0: those of s), without a
// penalty of their own.
func gridSettings(s *Settings, workers int) Settings {
	var g Settings
	if s != nil {
		g = *s
	}
	g.NoPenalty, g.L2 = false, 0
	if workers > 0 {
		g.Workers = workers
	}
	return g
}

// grid returns the penalties, largest first, and the number of folds.
func (c *SoftmaxCV) grid() ([]float64, int, error) {
	grid, err := sortedGrid(c.L2s)
	if err != nil {
		return nil, 0, fmt.Errorf("classify: SoftmaxCV: %w", err)
	}
	k := c.Folds
	if k == 0 {
		k = DefaultFolds
	}
	if k < 2 {
		return nil, 0, fmt.Errorf("classify: SoftmaxCV: %d folds; need at least 2", k)
	}
	return grid, k, nil
}

// sortedGrid returns a copy of the penalties grid (nil: DefaultL2Grid),
// largest first, or an error if it is empty or holds a penalty that is
// not a positive number.
func sortedGrid(grid []float64) ([]float64, error) {
	if grid == nil {
		grid = DefaultL2Grid
	}
	if len(grid) == 0 {
		return nil, errors.New("an empty grid of penalties")
	}
	for _, l := range grid {
		if !(l > 0) || math.IsInf(l, 0) {
			return nil, fmt.Errorf("penalty %g is not a positive number", l)
		}
	}
	grid = slices.Clone(grid)
	slices.SortFunc(grid, func(a, b float64) int { return -cmp.Compare(a, b) })
	return grid, nil
}

// Select returns the penalty of the grid that cross-validation chooses and
// the mean held-out accuracy of every penalty, largest penalty first.
func (c *SoftmaxCV) Select(X, T *mat.Dense, w []float64) (float64, []float64, error) {
	grid, k, err := c.grid()
	if err != nil {
		return 0, nil, err
	}
	if X == nil || T == nil || X.IsEmpty() || T.IsEmpty() {
		return 0, nil, fmt.Errorf("classify: SoftmaxCV: empty training data")
	}
	n, _ := X.Dims()
	if n < 2*k {
		return DefaultL2, nil, nil
	}
	folds := StratifiedFolds(Argmax(T), k, c.Seed)
	acc := make([][]float64, k) // [fold][penalty]
	ce := make([][]float64, k)
	err = par.Run(k, 0, func(f int) error {
		var err error
		acc[f], ce[f], err = c.fold(X, T, w, folds[f], grid)
		return err
	}, nil)
	if err != nil {
		return 0, nil, err
	}
	mean := make([]float64, len(grid))
	meanCE := make([]float64, len(grid))
	for j := range grid {
		for f := range k {
			mean[j] += acc[f][j] / float64(k)
			meanCE[j] += ce[f][j] / float64(k)
		}
	}
	best := 0
	for j := 1; j < len(grid); j++ {
		if mean[j] > mean[best] || (mean[j] == mean[best] && meanCE[j] < meanCE[best]) {
			best = j
		}
	}
	return grid[best], mean, nil
}

// fold fits every penalty of the grid on the rows outside test, from the
// largest down with warm starts, and returns the weighted accuracy and
// mean cross-entropy of each on the rows of test.
func (c *SoftmaxCV) fold(X, T *mat.Dense, w []float64, test []int, grid []float64) ([]float64, []float64, error) {
	n, _ := X.Dims()
	train := Complement(test, n)
	Xtr, Ttr, wtr := linalg.Rows(X, train), linalg.Rows(T, train), Pick(w, train)
	Xte, Tte, wte := linalg.Rows(X, test), linalg.Rows(T, test), Pick(w, test)
	truth := Argmax(Tte)
	s := c.fitSettings(1)
	cfg, err := s.resolve()
	if err != nil {
		return nil, nil, err
	}
	xr, tr := Xtr.RawMatrix(), Ttr.RawMatrix()
	sumW, err := checkWeights(wtr, xr.Rows)
	if err != nil {
		return nil, nil, err
	}
	_, classes := T.Dims()
	var v []float64
	acc, ce := make([]float64, len(grid)), make([]float64, len(grid))
	var P mat.Dense
	for j, l2 := range grid {
		cfg.lambda = l2
		o := newObjective(xr.Data, xr.Stride, xr.Rows, xr.Cols, tr.Data, tr.Stride, nil, classes, wtr, sumW, cfg.lambda, cfg.workers)
		if v == nil {
			v = make([]float64, o.dim())
		}
		m, _, err := trainFrom(o, cfg, v)
		if err != nil {
			return nil, nil, err
		}
		P.Reset()
		if err := m.Proba(&P, Xte); err != nil {
			return nil, nil, err
		}
		acc[j], ce[j] = heldOutScores(&P, Tte, truth, wte)
	}
	return acc, ce, nil
}

// heldOutScores returns the weighted accuracy of the probabilities P
// against truth and their weighted mean cross-entropy with the targets T.
func heldOutScores(P, T *mat.Dense, truth []int, w []float64) (acc, ce float64) {
	var sum float64
	for i := range truth {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		sum += wi
		p, t := P.RawRowView(i), T.RawRowView(i)
		for k, tk := range t {
			if tk > 0 {
				ce -= wi * tk * math.Log(max(p[k], 1e-300))
			}
		}
	}
	if sum == 0 {
		return 0, 0
	}
	return WeightedAccuracy(Argmax(P), truth, w), ce / sum
}

// WeightedAccuracy returns the weighted fraction of the rows with
// pred[i] == truth[i], with the sample weights w (nil: uniform); 0 when the
// weights sum to zero. The slices must have the same length.
func WeightedAccuracy(pred, truth []int, w []float64) float64 {
	var hit, sum float64
	for i, y := range truth {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		sum += wi
		if pred[i] == y {
			hit += wi
		}
	}
	if sum == 0 {
		return 0
	}
	return hit / sum
}

// StratifiedFolds deals the rows, whose classes class lists, into k folds
// class by class, each class's rows in an order shuffled by seed,
// continuing from fold to fold across classes so that the folds' sizes
// differ by at most one and every class is spread evenly. Each fold lists
// its rows in increasing order.
func StratifiedFolds(class []int, k int, seed uint64) [][]int {
	rng := rand.New(rand.NewPCG(seed, 0xcf01d))
	byClass := map[int][]int{}
	var classes []int
	for i, c := range class {
		if _, ok := byClass[c]; !ok {
			classes = append(classes, c)
		}
		byClass[c] = append(byClass[c], i)
	}
	slices.Sort(classes)
	folds := make([][]int, k)
	f := 0
	for _, c := range classes {
		rows := byClass[c]
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		for _, r := range rows {
			folds[f] = append(folds[f], r)
			f = (f + 1) % k
		}
	}
	for _, fold := range folds {
		slices.Sort(fold)
	}
	return folds
}

// Complement returns the indices below n that are not in sorted (sorted
// in increasing order): the training rows of a fold.
func Complement(sorted []int, n int) []int {
	out := make([]int, 0, n-len(sorted))
	j := 0
	for i := range n {
		if j < len(sorted) && sorted[j] == i {
			j++
			continue
		}
		out = append(out, i)
	}
	return out
}

// Pick returns the weights w at the indices idx, nil when w is nil
// (uniform weights stay uniform): the weights of a fold's rows.
func Pick(w []float64, idx []int) []float64 {
	if w == nil {
		return nil
	}
	out := make([]float64, len(idx))
	for i, j := range idx {
		out[i] = w[j]
	}
	return out
}
