package classify

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
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
	// balanced accuracy of each over the validation sets, and SE the
	// standard error of its deficit to the best score.
	Grid  []float64 `json:"grid"`
	Score []float64 `json:"score"`
	SE    []float64 `json:"se"`
}

// ChoosePenalty trains a softmax regression on the features X with the
// soft targets T and the sample weights w (as Fit) for every penalty λ of
// grid (nil: DefaultL2Grid) and for the penalty λ₀ of s (its L2; zero:
// DefaultL2), and chooses λ by how well the regression classifies other
// labeled data, val. With BA_v(λ) the balanced accuracy on set v of the V
// sets, λ* the penalty of the best mean score S(λ) = (1/V) Σ_v BA_v(λ) (the
// largest among ties), and the deficits D_v(λ) = BA_v(λ*) − BA_v(λ) of
// mean D(λ) and standard error
//
//	SE(λ) = √(Σ_v (D_v(λ) − D(λ))² / (V (V − 1))),
//
// the choice is λ₀ if D(λ₀) ≤ SE(λ₀), and otherwise, by the
// one-standard-error rule, the largest λ with D(λ) ≤ SE(λ): the penalty
// moves from λ₀ only when the sets show, beyond their noise, that another
// classifies them better, and then to the smoothest one that does as well
// as the best within that noise. The deficits are paired: sets of unequal
// difficulty shift every λ's score alike, and only how consistently λ*
// beats λ from one set to the next is evidence. With a single set, SE(λ)
// is the sampling error of BA(λ*), (1/C) √(Σ_c r_c (1 − r_c) / n_c), r_c
// the recall of class c among the n_c rows that hold it and C the number
// of classes.
//
// DaDiL-R trains on a reconstruction of the target whose classes are
// cleaner than real data: validated on itself (SoftmaxCV), it keeps
// preferring weaker penalties that transfer badly. Validated on the
// labeled sources, real rows of other domains, it measures how a
// classifier of the reconstruction carries over to real data. The sources
// are closer to the atoms than the target is, and the penalty that suits
// them need not suit the target: the anchor λ₀ holds the choice until
// their evidence is consistent.
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
	if err := checkValidation(val); err != nil {
		return nil, err
	}
	fs := gridSettings(s, 0)
	c := &PenaltyChoice{Anchor: l0, Grid: grid, Score: make([]float64, len(grid)), SE: make([]float64, len(grid))}
	models := make([]*Softmax, len(grid))
	ba := make([][]float64, len(grid)) // [λ][set]
	var sampling []float64             // the sampling error of every λ's score, with one set
	for j, l2 := range grid {
		fs.L2 = l2
		m, _, err := Fit(X, T, w, &fs)
		if err != nil {
			return nil, err
		}
		models[j] = m
		var v float64
		if ba[j], v, err = validate(m, val); err != nil {
			return nil, err
		}
		c.Score[j] = floats.Sum(ba[j]) / float64(len(val))
		sampling = append(sampling, math.Sqrt(v))
	}
	best := floats.MaxIdx(c.Score)
	within := make([]bool, len(grid)) // D(λ) ≤ SE(λ)
	for j := range grid {
		d := deficits(ba[best], ba[j])
		if len(d) == 1 {
			c.SE[j] = sampling[best]
		} else {
			_, sd := stat.MeanStdDev(d, nil)
			c.SE[j] = sd / math.Sqrt(float64(len(d)))
		}
		within[j] = floats.Sum(d)/float64(len(d)) <= c.SE[j]
	}
	chosen := slices.Index(grid, l0)
	if !within[chosen] {
		chosen = slices.Index(within, true) // the largest λ within one SE of the best
	}
	c.L2, c.Model = grid[chosen], models[chosen]
	return c, nil
}

// deficits returns best − ba, set by set.
func deficits(best, ba []float64) []float64 {
	d := make([]float64, len(ba))
	floats.SubTo(d, best, ba)
	return d
}

// checkValidation returns an error unless val holds at least one set, each
// with as many labels as rows (ChoosePenalty).
func checkValidation(val []Labeled) error {
	if len(val) == 0 {
		return errors.New("classify: ChoosePenalty: no validation set")
	}
	for v, d := range val {
		if d.X == nil || d.X.IsEmpty() || len(d.Y) == 0 {
			return fmt.Errorf("classify: ChoosePenalty: validation set %d is empty", v)
		}
		if r, _ := d.X.Dims(); r != len(d.Y) {
			return fmt.Errorf("classify: ChoosePenalty: validation set %d has %d rows and %d labels", v, r, len(d.Y))
		}
	}
	return nil
}

// validate returns the balanced accuracy of m on every set and, for a
// single set, its sampling variance (ChoosePenalty).
func validate(m *Softmax, val []Labeled) (ba []float64, variance float64, err error) {
	ba = make([]float64, len(val))
	for v, d := range val {
		pred, err := m.Predict(d.X)
		if err != nil {
			return nil, 0, err
		}
		ba[v], variance = balancedAccuracyVar(pred, d.Y)
	}
	return ba, variance, nil
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
