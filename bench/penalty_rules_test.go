package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
)

// penaltyScoresOf are, for one problem, the target score of DaDiL-R's
// classifier at every penalty of sweepPenalties (largest first) and its
// balanced accuracy on every source ([λ][source]).
type penaltyScoresOf struct {
	target []float64
	source [][]float64
}

// penaltyRule chooses the index of a penalty of sweepPenalties from the
// sources' balanced accuracies ([λ][source]).
type penaltyRule struct {
	name   string
	choose func(src [][]float64) int
}

// TestPenaltyRules prints, for every data set of the development suite
// prepared as dadil adapt prepares it by default (standardised features),
// DaDiL-R's mean score per set when its classifier's penalty λ is chosen,
// problem by problem, by each of several rules that read only the labeled
// sources: how the classifier of the target's reconstruction, trained at
// every λ of classify.DefaultL2Grid, classifies each source (balanced
// accuracy). The rules:
//
//   - fixed λ (no choice);
//   - paired, anchored at λ₀: classify.ChoosePenalty's rule (keep λ₀
//     unless its mean deficit to the best λ exceeds the standard error
//     of the deficits source by source; then the largest λ within it);
//   - spread, anchored at λ₀: the same with the standard error of the
//     mean score over the sources in place of the paired one;
//   - the λ of the best mean over the sources;
//   - the oracle, the best λ for the target (reads its labels).
//
// The dictionary is fitted once per problem with the defaults (λ does not
// change it). It is the comparison behind --l2 auto (docs/defaults.md).
// It reads target labels only to score, and runs only when DADIL_SUITE
// names the folder of the suite's data (DADIL_SETS, comma-separated,
// limits it to some of its sets):
//
//	DADIL_SUITE=$PWD/../shared/data go test ./bench -run PenaltyRules -v -timeout 2h
func TestPenaltyRules(t *testing.T) {
	sets := suiteSets(t)
	rules := penaltyRules()
	var b strings.Builder
	fmt.Fprintf(&b, "| rule |")
	for _, set := range sets {
		fmt.Fprintf(&b, " %s |", set.Name)
	}
	fmt.Fprintf(&b, " mean |\n|---|%s---:|\n", strings.Repeat("---:|", len(sets)))
	mean := make([][]float64, len(rules)) // [rule][set]
	for s, set := range sets {
		for ti := range set.Domains {
			sc, err := penaltyScoresFor(set, ti)
			if err != nil {
				t.Fatal(err)
			}
			for r, rule := range rules {
				if mean[r] == nil {
					mean[r] = make([]float64, len(sets))
				}
				v := floats.Max(sc.target) // the oracle
				if rule.choose != nil {
					v = sc.target[rule.choose(sc.source)]
				}
				mean[r][s] += v / float64(len(set.Domains))
			}
		}
	}
	for r, rule := range rules {
		fmt.Fprintf(&b, "| %s |", rule.name)
		for s := range sets {
			fmt.Fprintf(&b, " %.2f |", mean[r][s])
		}
		fmt.Fprintf(&b, " %.2f |\n", stat.Mean(mean[r], nil))
	}
	t.Log("\n" + b.String())
}

// penaltyRules returns the rules of TestPenaltyRules; the last one, the
// oracle, has no choose function: it reads the target's scores.
func penaltyRules() []penaltyRule {
	var rules []penaltyRule
	for j, l2 := range sweepPenalties[:4] {
		rules = append(rules, penaltyRule{fmt.Sprintf("fixed λ = %g", l2), func([][]float64) int { return j }})
	}
	for _, l0 := range []float64{1e-1, 1e-2} {
		a := slices.Index(sweepPenalties, l0)
		rules = append(rules,
			penaltyRule{fmt.Sprintf("paired, anchored at %g", l0), func(src [][]float64) int { return oneSE(src, a, pairedSE) }},
			penaltyRule{fmt.Sprintf("spread, anchored at %g", l0), func(src [][]float64) int { return oneSE(src, a, spreadSE) }})
	}
	return append(rules,
		penaltyRule{"best mean over the sources", func(src [][]float64) int { return floats.MaxIdx(means(src)) }},
		penaltyRule{name: "oracle (target labels)"})
}

// oneSE returns the anchor a if its deficit to the best mean is within
// the standard error se gives, else the first (largest) penalty that is.
func oneSE(src [][]float64, a int, se func(src [][]float64, best, j int) float64) int {
	m := means(src)
	best := floats.MaxIdx(m)
	within := func(j int) bool { return m[best]-m[j] <= se(src, best, j) }
	if within(a) {
		return a
	}
	for j := range src {
		if within(j) {
			return j
		}
	}
	return best
}

// pairedSE is the standard error of the deficits of j to best, source by
// source (classify.ChoosePenalty).
func pairedSE(src [][]float64, best, j int) float64 {
	d := make([]float64, len(src[j]))
	floats.SubTo(d, src[best], src[j])
	_, sd := stat.MeanStdDev(d, nil)
	return sd / math.Sqrt(float64(len(d)))
}

// spreadSE is the standard error of the best penalty's mean score over the
// sources.
func spreadSE(src [][]float64, best, _ int) float64 {
	_, sd := stat.MeanStdDev(src[best], nil)
	return sd / math.Sqrt(float64(len(src[best])))
}

// means returns every penalty's mean score over the sources.
func means(src [][]float64) []float64 {
	m := make([]float64, len(src))
	for j, s := range src {
		m[j] = stat.Mean(s, nil)
	}
	return m
}

// penaltyScoresFor fits DaDiL-R on the problem of set whose target is
// domain ti, standardised, and scores its classifier at every penalty on
// the target (as the suite scores set) and on every source (balanced
// accuracy).
func penaltyScoresFor(set *SuiteSet, ti int) (*penaltyScoresOf, error) {
	l, err := set.ProblemScaled(ti, dataset.ScaleStandard)
	if err != nil {
		return nil, err
	}
	p := l.Problem
	X, T, err := reconstruction(p)
	if err != nil {
		return nil, err
	}
	sc := &penaltyScoresOf{}
	for _, l2 := range sweepPenalties {
		c, err := (&classify.SoftmaxTrainer{Settings: &classify.Settings{L2: l2}}).Train(X, T, nil)
		if err != nil {
			return nil, err
		}
		v, err := scoreOn(c, p.Test, set.Balanced)
		if err != nil {
			return nil, err
		}
		sc.target = append(sc.target, v)
		var ba []float64
		for _, d := range p.Sources {
			if v, err = scoreOn(c, &d, true); err != nil {
				return nil, err
			}
			ba = append(ba, v)
		}
		sc.source = append(sc.source, ba)
	}
	return sc, nil
}

// scoreOn returns c's accuracy on the labeled domain d (%), or its
// balanced accuracy when balanced.
func scoreOn(c classify.Classifier, d *dataset.Domain, balanced bool) (float64, error) {
	pred, err := c.Predict(d.X)
	if err != nil {
		return 0, err
	}
	score := classify.Accuracy
	if balanced {
		score = classify.BalancedAccuracy
	}
	v, err := score(pred, d.Y)
	return 100 * v, err
}
