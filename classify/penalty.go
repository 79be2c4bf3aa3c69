package classify

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Labeled is a set of labeled rows: the features X and the class index of
// every row in Y.
type Labeled struct {
	X *mat.Dense
	Y []int
}

// PenaltyChoice is the outcome of ChoosePenalty.
type PenaltyChoice struct {
	// L2 is the chosen penalty and Model the regression trained with it
	// (Fit's model for that penalty, bit for bit).
	L2    float64  `json:"l2"`
	Model *Softmax `json:"-"`
	// Anchor is λ₀, the penalty kept unless the validation sets show
	// that another is better.
	Anchor float64 `json:"anchor"`
	// Grid holds the penalties tried, largest first; Score the mean
	// balanced accuracy of each over the validation sets, and SE its
	// standard error.
	Grid  []float64 `json:"grid"`
	Score []float64 `json:"score"`
	SE    []float64 `json:"se"`
}

// ChoosePenalty trains a softmax regression on the features X with the
// soft targets T and the sample weights w (as Fit) for every penalty λ of
// grid (nil: DefaultL2Grid) and for the penalty λ₀ of s (its L2; zero:
// DefaultL2), and chooses λ by how well the regression classifies other
// labeled data, val. With the mean balanced accuracy on the V sets and its
// standard error,
//
//	S(λ)  = (1/V) Σ_v BA_v(λ),
//	SE(λ) = (1/V) √(Σ_v SE_v(λ)²),  SE_v = (1/C_v) √(Σ_c r_c (1 − r_c) / n_c),
//
// r_c the recall of class c among the n_c rows of set v that hold it and
// C_v the number of such classes, and λ* the penalty of the best score
// (the largest among ties), the choice is λ₀ if S(λ₀) ≥ S(λ*) − SE(λ*),
// and otherwise, by the one-standard-error rule, the largest λ with
// S(λ) ≥ S(λ*) − SE(λ*): the penalty moves from λ₀ only when the
// validation sets show, beyond their noise, that another classifies them
// better, and then to the smoothest one that does as well as the best
// within that noise.
//
// DaDiL-R trains on a reconstruction of the target whose classes are
// cleaner than real data: validated on itself (SoftmaxCV), it keeps
// preferring weaker penalties that transfer badly. Validated on the
// labeled sources, real rows of other domains, it measures how a
// classifier of the reconstruction carries over to real data; a source
// far from the target can mislead it, which the anchor λ₀ guards against.
// s sets MaxIter, GradTol and Workers of every fit; its NoPenalty is
// ignored. The choice is deterministic and does not depend on Workers.
func ChoosePenalty(X, T *mat.Dense, w []float64, val []Labeled, grid []float64, s *Settings) (*PenaltyChoice, error) {
	l0 := DefaultL2
	if s != nil && s.L2 != 0 {
		l0 = s.L2
	}
	if grid == nil {
		grid = DefaultL2Grid
	}
	if len(grid) > 0 && !slices.Contains(grid, l0) {
		grid = append(slices.Clone(grid), l0)
	}
	grid, err := sortedGrid(grid)
	if err != nil {
		return nil, fmt.Errorf("classify: ChoosePenalty: %w", err)
	}
	if len(val) == 0 {
		return nil, errors.New("classify: ChoosePenalty: no validation set")
	}
	for v, d := range val {
		if d.X == nil || d.X.IsEmpty() || len(d.Y) == 0 {
			return nil, fmt.Errorf("classify: ChoosePenalty: validation set %d is empty", v)
		}
		if r, _ := d.X.Dims(); r != len(d.Y) {
			return nil, fmt.Errorf("classify: ChoosePenalty: validation set %d has %d rows and %d labels", v, r, len(d.Y))
		}
	}
	fs := gridSettings(s, 0)
	c := &PenaltyChoice{Anchor: l0, Grid: grid, Score: make([]float64, len(grid)), SE: make([]float64, len(grid))}
	models := make([]*Softmax, len(grid))
	best := 0
	for j, l2 := range grid {
		fs.L2 = l2
		m, _, err := Fit(X, T, w, &fs)
		if err != nil {
			return nil, err
		}
		models[j] = m
		if c.Score[j], c.SE[j], err = validate(m, val); err != nil {
			return nil, err
		}
		if c.Score[j] > c.Score[best] {
			best = j
		}
	}
	floor := c.Score[best] - c.SE[best]
	chosen := slices.Index(grid, l0)
	if c.Score[chosen] < floor {
		for chosen = 0; c.Score[chosen] < floor; chosen++ { // the largest λ over the floor
		}
	}
	c.L2, c.Model = grid[chosen], models[chosen]
	return c, nil
}

// validate returns the mean balanced accuracy of m over the sets and its
// standard error (ChoosePenalty).
func validate(m *Softmax, val []Labeled) (score, se float64, err error) {
	for _, d := range val {
		pred, err := m.Predict(d.X)
		if err != nil {
			return 0, 0, err
		}
		ba, v := balancedAccuracyVar(pred, d.Y)
		score += ba / float64(len(val))
		se += v
	}
	return score, math.Sqrt(se) / float64(len(val)), nil
}

// balancedAccuracyVar returns the balanced accuracy of pred against truth
// as BalancedAccuracy computes it (whose checks the callers made), and
// its variance (1/C²) Σ_c r_c (1 − r_c) / n_c.
func balancedAccuracyVar(pred, truth []int) (ba, variance float64) {
	rows, hits := map[int]int{}, map[int]int{}
	for i, t := range truth {
		t = max(t, -1)
		rows[t]++
		if pred[i] == t && t >= 0 {
			hits[t]++
		}
	}
	classes := slices.Sorted(maps.Keys(rows)) // a fixed order of summation
	for _, k := range classes {
		r := float64(hits[k]) / float64(rows[k])
		ba += r
		variance += r * (1 - r) / float64(rows[k])
	}
	return ba / float64(len(rows)), variance / float64(len(rows)*len(rows))
}
