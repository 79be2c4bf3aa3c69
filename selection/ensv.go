package selection

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
)

// A PooledScorer scores the predictors of several methods fitted on the
// same problem together: a predictor's score depends on the others. Values
// leaves its values pending (no score, no error); once every method is
// fitted, Pool fills them in from every predictor's class probabilities of
// the target rows (PoolProba).
type PooledScorer interface {
	Scorer
	// ScorePool returns one score per predictor from their class
	// probabilities of the same target rows, one n×c matrix each.
	ScorePool(probas []*mat.Dense) ([]float64, error)
}

// EnsV scores a method by its agreement with the ensemble of all the
// methods scored with it (Hu, Luo, Liang & Foo, "Towards Reliable Model
// Selection for Unsupervised Domain Adaptation: An Empirical Study and A
// Certified Baseline", NeurIPS 2024 Datasets and Benchmarks). The
// ensemble's class probabilities of a target row x are the mean of the M
// predictors' ones, and its class is their argmax,
//
//	p̄(x) = (1/M) Σ_m p̂_m(x),   ȳ(x) = argmax_c p̄_c(x);
//
// a predictor's score is the fraction of the n target rows it puts in the
// ensemble's class,
//
//	score_m = (1/n) Σ_i [argmax_c p̂_m,c(x_i) = ȳ(x_i)] ∈ [0, 1].
//
// Cost: no fit. It is a PooledScorer: alone among its candidates, a
// predictor scores 1. It assumes that the methods' errors are not shared
// by most of them, so that the ensemble is more often right than a method
// picked at random; a method never scores below the one the ensemble
// agrees with least, which is what its authors certify: it avoids the
// worst choice. When most methods make the same error (most candidates
// put a rare class's rows in the common one), it prefers them.
//
// With Balanced ("ensv-balanced"), three changes make it fit targets
// whose classes are unequal and methods of which many are poor:
//
//   - the ensemble's class probabilities are divided by their means over
//     the target rows before the argmax,
//
//     ȳ(x) = argmax_c p̄_c(x) / π̄_c,   π̄_c = (1/n) Σ_i p̄_c(x_i),
//
//     as if every class were equally likely a priori: a rare class the
//     ensemble underrates keeps the rows where it is likelier than on
//     average;
//
//   - the agreement is balanced, the mean over the ensemble's classes of
//     the fraction of its rows of that class the predictor puts there,
//
//     score_m = (1/|C|) Σ_{c∈C} |{i : ŷ_m(x_i) = c, ȳ(x_i) = c}| / |{i : ȳ(x_i) = c}|,
//
//     C the classes the ensemble gives at least one row, so that a
//     predictor cannot score well by putting every row in the common
//     class;
//
//   - the ensemble is trimmed: the predictors scoring below the median
//     of the M scores (the upper of the two middle ones for even M) are
//     left out of a second ensemble, which keeps at least half of them,
//     and every predictor is scored again against it, so that the
//     methods that disagree with most of the others do not blur the
//     reference.
//
// It suits targets scored by balanced accuracy, and on the development
// suite it is the closer of the two to the best method of every target
// on the sets scored by plain accuracy too (docs/validation.md); where
// the target's classes are unequal and plain accuracy counts, it favours
// predictors that overrate the rare classes.
type EnsV struct {
	Balanced bool
}

// Name returns "ensv", or "ensv-balanced" with Balanced.
func (s EnsV) Name() string {
	if s.Balanced {
		return "ensv-balanced"
	}
	return "ensv"
}

// Refits returns 0.
func (EnsV) Refits(*dataset.Problem, int) int { return 0 }

// errPooled is the error of a pooled scorer's Score.
func errPooled(name string) error {
	return fmt.Errorf("selection: %s scores several methods together (selection.Pool), not one", name)
}

// Score returns an error: EnsV scores methods together (ScorePool).
func (s EnsV) Score(*dataset.Problem, *Candidate) ([]float64, error) {
	return nil, errPooled(s.Name())
}

// ScorePool returns every predictor's agreement with the ensemble of all
// of them on the target rows (with Balanced, with the trimmed ensemble).
func (s EnsV) ScorePool(probas []*mat.Dense) ([]float64, error) {
	_, c, err := poolDims(probas)
	if err != nil {
		return nil, fmt.Errorf("selection: %s: %w", s.Name(), err)
	}
	preds := make([][]int, len(probas)) // every predictor's class of every row
	all := make([]bool, len(probas))
	for m, P := range probas {
		preds[m], all[m] = classify.Argmax(P), true
	}
	scores := s.agreement(preds, s.ensemble(probas, all), c)
	if !s.Balanced {
		return scores, nil
	}
	median := slices.Clone(scores)
	slices.Sort(median)
	kept := make([]bool, len(probas))
	for m, v := range scores {
		kept[m] = v >= median[len(median)/2]
	}
	return s.agreement(preds, s.ensemble(probas, kept), c), nil
}

// ensemble returns the class of every target row under the ensemble of
// the kept predictors: the argmax of their summed class probabilities,
// divided first by their means over the rows with Balanced.
func (s EnsV) ensemble(probas []*mat.Dense, kept []bool) []int {
	n, c := probas[0].Dims()
	E := mat.NewDense(n, c, nil) // Σ_m p̂_m(x_i), the ensemble up to 1/M
	for m, P := range probas {
		if kept[m] {
			E.Add(E, P)
		}
	}
	if s.Balanced {
		prior := make([]float64, c)
		for i := range n {
			floats.Add(prior, E.RawRowView(i))
		}
		for k, v := range prior {
			if v > 0 {
				prior[k] = 1 / v
			}
		}
		for i := range n {
			floats.Mul(E.RawRowView(i), prior)
		}
	}
	return classify.Argmax(E)
}

// agreement returns every predictor's agreement with the classes ens of
// c classes, the predictors' own classes of the rows being preds: the
// fraction of the rows it puts in their class, or with Balanced the mean
// of that fraction over the classes ens gives.
func (s EnsV) agreement(preds [][]int, ens []int, c int) []float64 {
	count := make([]float64, c)
	for _, k := range ens {
		count[k]++
	}
	out := make([]float64, len(preds))
	hits := make([]float64, c)
	for m, pred := range preds {
		clear(hits)
		for i, k := range ens {
			if pred[i] == k {
				hits[k]++
			}
		}
		if !s.Balanced {
			out[m] = floats.Sum(hits) / float64(len(ens))
			continue
		}
		var sum, classes float64
		for k, nk := range count {
			if nk > 0 {
				sum += hits[k] / nk
				classes++
			}
		}
		out[m] = sum / classes
	}
	return out
}

// poolDims returns the common shape of the probability matrices, or why
// they cannot be pooled.
func poolDims(probas []*mat.Dense) (n, c int, err error) {
	if len(probas) == 0 {
		return 0, 0, errors.New("no predictors")
	}
	for m, P := range probas {
		if P == nil || P.IsEmpty() {
			return 0, 0, fmt.Errorf("predictor %d has no class probabilities", m+1)
		}
		r, k := P.Dims()
		if m == 0 {
			n, c = r, k
		}
		if r != n || k != c {
			return 0, 0, fmt.Errorf("predictor %d has %d×%d class probabilities, predictor 1 %d×%d", m+1, r, k, n, c)
		}
		for _, v := range P.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, fmt.Errorf("predictor %d has a class probability of %g", m+1, v)
			}
		}
	}
	return n, c, nil
}

// PoolProba returns what Pool needs of a fitted candidate: nil when none
// of the scorers is pooled, else the class probabilities of p's target
// rows under every scored predictor of c, in order, all nil when c gives
// none (Pool then gives its predictors the pooled scorers' error).
func PoolProba(p *dataset.Problem, c *Candidate, scorers []Scorer) []*mat.Dense {
	if !Pooled(scorers) {
		return nil
	}
	out, err := targetProba(p, c, "pool")
	if err != nil {
		return make([]*mat.Dense, c.count())
	}
	return out
}

// Pooled reports whether any of the scorers is a PooledScorer: the
// callers of Values must then call Pool once every method is fitted.
func Pooled(scorers []Scorer) bool {
	for _, s := range scorers {
		if _, ok := s.(PooledScorer); ok {
			return true
		}
	}
	return false
}

// Among restricts the scorers to some methods, by name; empty, they
// score every method. The others are neither scored nor in a pooled
// scorer's ensemble: their values and probabilities stay nil (Pool).
type Among []string

// Scores reports whether the scorers score the method.
func (a Among) Scores(method string) bool {
	return len(a) == 0 || slices.Contains(a, method)
}

// Scorers returns the scorers of a group of methods sharing a fit: none
// when no method of the group is scored.
func (a Among) Scorers(scorers []Scorer, group []string) []Scorer {
	if slices.ContainsFunc(group, a.Scores) {
		return scorers
	}
	return nil
}

// Pool fills in the values of the pooled scorers among scorers, left
// pending by Values: values[i] are predictor i's values (Values' rows, in
// the order of scorers), probas[i] its class probabilities of the target
// rows (PoolProba), nil when they are unknown. A scorer that fails, or a
// predictor without probabilities, gets the error in its value. A
// predictor with nil values and probabilities is not scored (Among): it
// takes no part in the ensemble and gets no value.
func Pool(values [][]Value, probas []*mat.Dense, scorers []Scorer) {
	var known []int
	var ps []*mat.Dense
	for i, P := range probas {
		if P != nil {
			known, ps = append(known, i), append(ps, P)
		}
	}
	for j, s := range scorers {
		ps2, ok := s.(PooledScorer)
		if !ok {
			continue
		}
		t0 := time.Now()
		scores, err := ps2.ScorePool(ps)
		if err == nil && len(scores) != len(ps) {
			err = fmt.Errorf("selection: %s gave %d scores for %d predictors", s.Name(), len(scores), len(ps))
		}
		secs := time.Since(t0).Seconds()
		for i := range values {
			if values[i] == nil {
				continue
			}
			v := Value{Scorer: s.Name(), Seconds: secs}
			k := slices.Index(known, i)
			switch {
			case err != nil:
				v.Error = err.Error()
			case k < 0:
				v.Error = fmt.Sprintf("selection: %s: no class probabilities of the target", s.Name())
			case math.IsNaN(scores[k]) || math.IsInf(scores[k], 0):
				v.Error = fmt.Sprintf("selection: %s: score %g", s.Name(), scores[k])
			default:
				x := scores[k]
				v.Score = &x
			}
			values[i][j] = v
		}
	}
}
