package selection

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

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
// With Balanced ("ensv-balanced"), the ensemble's class probabilities
// are divided by their means over the target rows before the argmax,
//
//	ȳ(x) = argmax_c p̄_c(x) / π̄_c,   π̄_c = (1/n) Σ_i p̄_c(x_i),
//
// as if every class were equally likely a priori: a rare class the
// ensemble underrates keeps the rows where it is more likely than on
// average. It suits targets scored by balanced accuracy; where the
// target's classes are unequal and plain accuracy counts, it favours
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
// of them on the target rows.
func (s EnsV) ScorePool(probas []*mat.Dense) ([]float64, error) {
	n, c, err := poolDims(probas)
	if err != nil {
		return nil, fmt.Errorf("selection: %s: %w", s.Name(), err)
	}
	E := mat.NewDense(n, c, nil) // Σ_m p̂_m(x_i), the ensemble up to 1/M
	for _, P := range probas {
		E.Add(E, P)
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
	ensemble := make([]int, n)
	for i := range n {
		ensemble[i] = floats.MaxIdx(E.RawRowView(i))
	}
	out := make([]float64, len(probas))
	for m, P := range probas {
		agree := 0
		for i := range n {
			if floats.MaxIdx(P.RawRowView(i)) == ensemble[i] {
				agree++
			}
		}
		out[m] = float64(agree) / float64(n)
	}
	return out, nil
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

// Pool fills in the values of the pooled scorers among scorers, left
// pending by Values: values[i] are predictor i's values (Values' rows, in
// the order of scorers), probas[i] its class probabilities of the target
// rows (PoolProba), nil when they are unknown. A scorer that fails, or a
// predictor without probabilities, gets the error in its value.
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
