package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dadil/dadil/selection"
)

// SelectionSummary says how well label-free scorers choose among the
// methods of a suite run. In every experiment (a seed, a set and a
// target) each scorer picks the method of its highest value
// (selection.Best, the first in the results' order among equals); the
// oracle picks the method of the best score on the target labels
// (SuiteResult.Score), which is only possible with those labels. Means
// are over a set's experiments, then, for the suite, over the sets (each
// set weighs the same, as in SuiteSummary's mean rank).
type SelectionSummary struct {
	Sets, Scorers []string
	// Picked[s][j] is the mean score of the method scorer s picks on set
	// j; Gap[s][j] the mean of that score minus the oracle's, ≤ 0.
	Picked, Gap [][]float64
	// Missed[s][j] counts the experiments of set j where scorer s scored
	// no method; they are left out of its means.
	Missed [][]int
	// Oracle[j] is the mean best score on set j, and Random[j] the mean
	// score of all methods there (the expected score of a pick at
	// random; its gap is Random − Oracle).
	Oracle, Random []float64
	// Best[j] is the mean score on set j of BestMethod[j], the method of
	// the highest mean there: the best single method of the set, chosen
	// with the target labels once for all its experiments rather than in
	// every one (the first in the results' order among equals).
	Best       []float64
	BestMethod []string
	// Among lists the methods the scorers scored when they scored only
	// some (SuiteOptions.SelectAmong), nil when they scored all: their
	// picks are among these, the oracle and the best method of the set
	// among all. RandomAmong[j] is then the mean score of those methods
	// on set j, the expected score of a pick at random among them.
	Among       []string
	RandomAmong []float64
}

// suiteExperiment gathers the results of one target of one set at one
// seed.
type suiteExperiment struct {
	set     string
	results []SuiteResult
}

// SummarizeSelection summarises the picks of the scorers named in the
// results' Selection values, for the sets given, in their order.
func SummarizeSelection(results []SuiteResult, sets, scorers []string) *SelectionSummary {
	var exps []*suiteExperiment
	for _, rows := range experimentRows(results) {
		e := &suiteExperiment{set: results[rows[0]].Set}
		for _, i := range rows {
			e.results = append(e.results, results[i])
		}
		exps = append(exps, e)
	}
	s := &SelectionSummary{Sets: sets, Scorers: scorers}
	s.Among = scoredMethods(results)
	s.Oracle, s.Random = make([]float64, len(sets)), make([]float64, len(sets))
	if s.Among != nil {
		s.RandomAmong = make([]float64, len(sets))
	}
	for j, set := range sets {
		var oracle, random, among []float64
		for _, e := range exps {
			if e.set == set {
				oracle = append(oracle, e.oracle())
				random = append(random, e.mean(nil))
				among = append(among, e.mean(s.Among))
			}
		}
		s.Oracle[j], s.Random[j] = meanOf(oracle), meanOf(random)
		if s.Among != nil {
			s.RandomAmong[j] = meanOf(among)
		}
	}
	s.Best, s.BestMethod = bestMethods(results, sets)
	// A fixed choice of DaDiL-R, the reference a scorer must beat.
	if slices.ContainsFunc(results, func(r SuiteResult) bool { return r.Method == "dadil-r" }) {
		s.Scorers = append(slices.Clip(s.Scorers), alwaysPrefix+"dadil-r")
	}
	for _, name := range s.Scorers {
		picked, gap, missed := s.scorerRow(exps, name)
		s.Picked = append(s.Picked, picked)
		s.Gap = append(s.Gap, gap)
		s.Missed = append(s.Missed, missed)
	}
	return s
}

// bestMethods returns, for every set, the highest mean score of a method
// over the set's results (Summarize's means) and that method, the first
// in the results' order among equals.
func bestMethods(results []SuiteResult, sets []string) ([]float64, []string) {
	var methods []string
	for _, r := range results {
		if !slices.Contains(methods, r.Method) {
			methods = append(methods, r.Method)
		}
	}
	mean := Summarize(results, sets, methods).Mean
	best, names := make([]float64, len(sets)), make([]string, len(sets))
	for j := range sets {
		best[j] = math.NaN()
		for i, m := range methods {
			if v := mean[i][j]; !math.IsNaN(v) && (names[j] == "" || v > best[j]) {
				best[j], names[j] = v, m
			}
		}
	}
	return best, names
}

// scoredMethods returns the methods with scorers' values, in the results'
// order, nil when every method has some.
func scoredMethods(results []SuiteResult) []string {
	var scored, all []string
	for _, r := range results {
		if !slices.Contains(all, r.Method) {
			all = append(all, r.Method)
		}
		if len(r.Selection) > 0 && !slices.Contains(scored, r.Method) {
			scored = append(scored, r.Method)
		}
	}
	if len(scored) == len(all) {
		return nil
	}
	return scored
}

// experimentRows returns the indices of the results of every experiment
// (a seed, a set and a target), the experiments in the order of their
// first result.
func experimentRows(results []SuiteResult) [][]int {
	type key struct {
		seed        uint64
		set, target string
	}
	var out [][]int
	at := map[key]int{}
	for i, r := range results {
		k := key{r.Seed, r.Set, r.Target}
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, nil)
		}
		out[j] = append(out[j], i)
	}
	return out
}

// scorerRow returns the scorer's mean picked score, mean gap and misses
// on every set.
func (s *SelectionSummary) scorerRow(exps []*suiteExperiment, scorer string) (picked, gap []float64, missed []int) {
	for _, set := range s.Sets {
		var p, g []float64
		miss := 0
		for _, e := range exps {
			if e.set != set {
				continue
			}
			i := e.pick(scorer)
			if i < 0 {
				miss++
				continue
			}
			p = append(p, e.results[i].Score)
			g = append(g, e.results[i].Score-e.oracle())
		}
		picked, gap, missed = append(picked, meanOf(p)), append(gap, meanOf(g)), append(missed, miss)
	}
	return picked, gap, missed
}

// alwaysPrefix names a fixed choice among the scorers' rows: "always
// dadil-r" picks DaDiL-R in every experiment.
const alwaysPrefix = "always "

// pick returns the index of the result the scorer picks, −1 when it
// scored none; a fixed choice (alwaysPrefix) picks its method.
func (e *suiteExperiment) pick(scorer string) int {
	if method, ok := strings.CutPrefix(scorer, alwaysPrefix); ok {
		return slices.IndexFunc(e.results, func(r SuiteResult) bool { return r.Method == method })
	}
	v := make([]float64, len(e.results))
	for i, r := range e.results {
		v[i] = math.NaN()
		for _, x := range r.Selection {
			if x.Scorer == scorer {
				v[i] = x.Float()
			}
		}
	}
	return selection.Best(v)
}

// oracle returns the best score of the suiteExperiment.
func (e *suiteExperiment) oracle() float64 {
	best := math.Inf(-1)
	for _, r := range e.results {
		best = max(best, r.Score)
	}
	return best
}

// mean returns the mean score of the suiteExperiment's methods, or of
// those among methods when not nil.
func (e *suiteExperiment) mean(methods []string) float64 {
	var v []float64
	for _, r := range e.results {
		if methods == nil || slices.Contains(methods, r.Method) {
			v = append(v, r.Score)
		}
	}
	return meanOf(v)
}

// meanOf returns the mean of v, NaN when empty.
func meanOf(v []float64) float64 {
	m, _ := meanStd(v)
	return m
}

// Markdown formats the summary: a row for the oracle, one for the best
// method of every set, one per scorer and one for a pick at random; per
// set the mean score of the pick with its gap to the oracle in brackets
// (and the experiments missed, if any), then the means over the sets; the
// best methods are named below the table.
func (s *SelectionSummary) Markdown() string {
	var b strings.Builder
	b.WriteString(setsHeader("choice", s.Sets, "mean over sets"))
	row := func(name string, picked, gap []float64, missed []int) {
		fmt.Fprintf(&b, "| %s |", name)
		for j := range s.Sets {
			b.WriteString(selectionCell(picked[j], gap[j], missed, j))
		}
		b.WriteString(selectionCell(meanOf(picked), meanOf(gap), nil, 0) + "\n")
	}
	none := make([]float64, len(s.Sets))
	row("oracle (target labels)", s.Oracle, none, nil)
	best := make([]float64, len(s.Sets))
	for j := range best {
		best[j] = s.Best[j] - s.Oracle[j]
	}
	row("best method of the set (target labels)", s.Best, best, nil)
	for i, name := range s.Scorers {
		row(name, s.Picked[i], s.Gap[i], s.Missed[i])
	}
	random := make([]float64, len(s.Sets))
	for j := range random {
		random[j] = s.Random[j] - s.Oracle[j]
	}
	row("at random (expected)", s.Random, random, nil)
	if s.Among != nil {
		among := make([]float64, len(s.Sets))
		for j := range among {
			among[j] = s.RandomAmong[j] - s.Oracle[j]
		}
		row("at random among the scored methods (expected)", s.RandomAmong, among, nil)
	}
	b.WriteString("\nBest method of the set: ")
	for j, set := range s.Sets {
		if j > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", set, s.BestMethod[j])
	}
	b.WriteString(".\n")
	if s.Among != nil {
		fmt.Fprintf(&b, "The scorers pick among %s (the methods they scored); the oracle and the best method of the set are among all.\n", strings.Join(s.Among, ", "))
	}
	return b.String()
}

// selectionCell formats a picked score and its gap, with the count of
// missed experiments j when there are any.
func selectionCell(picked, gap float64, missed []int, j int) string {
	c := fmt.Sprintf(" %.2f (%+.2f)", picked, gap)
	if missed != nil && missed[j] > 0 {
		c += fmt.Sprintf(" [%d missed]", missed[j])
	}
	return c + " |"
}
