package selection

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/clip"
)

// A Scorer scores the predictors of a fitted method on a problem without
// reading its target labels (Problem.Test). Higher is better.
type Scorer interface {
	// Name returns the scorer's command-line name ("entropy", "iwv", …).
	Name() string
	// Score returns one score per scored predictor of c (Candidate), in
	// the order of adapt.Predictors.
	Score(p *dataset.Problem, c *Candidate) ([]float64, error)
	// Refits returns the number of fits of a method Score makes on p for
	// a candidate of the given number of predictors, beyond the
	// candidate's own: the scorer's cost.
	Refits(p *dataset.Problem, predictors int) int
}

// A Candidate is a method fitted on a problem, to be scored on that
// problem. Use one Candidate per fitted method, from one goroutine at a
// time: it keeps the refits that scorers share.
type Candidate struct {
	// Method is fitted on the problem scored.
	Method adapt.Method
	// Build returns a new, unfitted method with Method's settings (its
	// seed included), for the scorers that refit; they fail without it.
	Build func() adapt.Method
	// Predictors is the number of predictors scored, the first ones of
	// adapt.Predictors(Method); 0 (or more than there are) scores all.
	// A caller that only wants DaDiL-R sets 1, sparing the refits of
	// DaDiL-E that Circular would make.
	Predictors int

	memo *memo
}

// memo holds the work of one Candidate that scorers share.
type memo struct {
	heldOut []adapt.Scores
	splits  map[splitKey]*split
}

// cache returns the candidate's memo, made on first use.
func (c *Candidate) cache() *memo {
	if c.memo == nil {
		c.memo = &memo{splits: map[splitKey]*split{}}
	}
	return c.memo
}

// predictors returns the scored predictors of the fitted method.
func (c *Candidate) predictors() ([]adapt.Predictor, error) {
	if c == nil || c.Method == nil {
		return nil, errors.New("selection: no fitted method")
	}
	return firstN(adapt.Predictors(c.Method), c.Predictors), nil
}

// firstN returns the first n predictors of ps, all of them when n is 0 or
// larger than len(ps).
func firstN(ps []adapt.Predictor, n int) []adapt.Predictor {
	if n <= 0 || n > len(ps) {
		return ps
	}
	return ps[:n]
}

// count returns the number of predictors scored when the method has
// predictors of them (the scorer's Refits argument for it).
func (c *Candidate) count() int {
	ps, err := c.predictors()
	if err != nil {
		return 0
	}
	return len(ps)
}

// build returns a new method from Build, or an error naming the scorer.
func (c *Candidate) build(scorer string) (adapt.Method, error) {
	if c.Build == nil {
		return nil, fmt.Errorf("selection: %s refits the method and needs Candidate.Build", scorer)
	}
	m := c.Build()
	if m == nil {
		return nil, fmt.Errorf("selection: %s: Build returned no method", scorer)
	}
	return m, nil
}

// names are the scorers of New, in the order of the package documentation.
var names = []string{"held-out", "held-out-balanced", "iwv", "dev", "entropy", "snd", "circular", "mixval", "ensv", "ensv-balanced"}

// Names returns the names New knows, in table order.
func Names() []string { return append([]string(nil), names...) }

// New returns the scorer called name (one of Names) with its default
// settings, its random choices (the split of IWV and DEV, the pairs of
// MixVal) seeded by seed.
func New(name string, seed uint64) (Scorer, error) {
	switch name {
	case "held-out":
		return HeldOutSources{}, nil
	case "held-out-balanced":
		return HeldOutSources{Balanced: true}, nil
	case "iwv":
		return &IWV{Seed: seed}, nil
	case "dev":
		return &DEV{Seed: seed}, nil
	case "entropy":
		return Entropy{}, nil
	case "snd":
		return &SND{}, nil
	case "circular":
		return Circular{}, nil
	case "mixval":
		return &MixVal{Seed: seed}, nil
	case "ensv":
		return EnsV{}, nil
	case "ensv-balanced":
		return EnsV{Balanced: true}, nil
	}
	return nil, fmt.Errorf("selection: unknown scorer %s (known: %s)", clip.Quote(name), strings.Join(names, ", "))
}

// A Value is one scorer's score of one predictor, or why it has none. It
// is what reports keep: JSON has no NaN.
type Value struct {
	Scorer string   `json:"scorer"`
	Score  *float64 `json:"score,omitempty"`
	Error  string   `json:"error,omitempty"`
	// Seconds is the scorer's time for all the scored predictors of the
	// fit together (a refit shared with an earlier scorer counts there).
	Seconds float64 `json:"seconds"`
}

// Float returns the score, NaN when there is none.
func (v Value) Float() float64 {
	if v.Score == nil {
		return math.NaN()
	}
	return *v.Score
}

// Values scores the candidate with every scorer, in order, and returns for
// every scored predictor its values, in the order of scorers. A scorer that
// fails, or gives a score that is not finite, leaves its error in the
// values and spares the others. A PooledScorer's values are left pending
// (no score, no error) for Pool.
func Values(p *dataset.Problem, c *Candidate, scorers []Scorer) [][]Value {
	out := make([][]Value, c.count())
	for _, s := range scorers {
		if _, ok := s.(PooledScorer); ok {
			for i := range out {
				out[i] = append(out[i], Value{Scorer: s.Name()})
			}
			continue
		}
		t0 := time.Now()
		scores, err := s.Score(p, c)
		secs := time.Since(t0).Seconds()
		if err == nil && len(scores) != len(out) {
			err = fmt.Errorf("selection: %s gave %d scores for %d predictors", s.Name(), len(scores), len(out))
		}
		for i := range out {
			v := Value{Scorer: s.Name(), Seconds: secs}
			switch {
			case err != nil:
				v.Error = err.Error()
			case math.IsNaN(scores[i]) || math.IsInf(scores[i], 0):
				v.Error = fmt.Sprintf("selection: %s: score %g", s.Name(), scores[i])
			default:
				x := scores[i]
				v.Score = &x
			}
			out[i] = append(out[i], v)
		}
	}
	return out
}

// Best returns the index of the highest score, the first among equals,
// skipping NaN; −1 when no score is a number.
func Best(scores []float64) int {
	best := -1
	for i, s := range scores {
		if !math.IsNaN(s) && (best < 0 || s > scores[best]) {
			best = i
		}
	}
	return best
}

// mean returns the mean of x (NaN when empty).
func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
