package adapt_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/classify"
)

// gmmVariant is a setting of GMM-OTDA or GMM-WBT compared on the
// development suite; one fit scores both classifying rules.
type gmmVariant struct {
	name string
	fit  func(seed uint64) adapt.Method
}

// gmmVariants are the settings of docs/gmm.md's comparison: the defaults,
// per-source mixtures, fewer components, components by BIC, a lower
// variance floor and the random map.
func gmmVariants() []gmmVariant {
	c := func(per int, bic bool, floor float64) adapt.GMMComponents {
		return adapt.GMMComponents{PerClass: per, BIC: bic, VarFloor: floor}
	}
	otda := func(name string, per, random bool, comp adapt.GMMComponents) gmmVariant {
		return gmmVariant{name, func(seed uint64) adapt.Method {
			return &adapt.GMMOTDA{PerSource: per, Random: random, Components: comp, Seed: seed}
		}}
	}
	wbt := func(name string, random bool, comp adapt.GMMComponents) gmmVariant {
		return gmmVariant{name, func(seed uint64) adapt.Method {
			return &adapt.GMMWBT{Random: random, Components: comp, Seed: seed}
		}}
	}
	return []gmmVariant{
		otda("gmm-otda", false, false, c(0, false, 0)),
		otda("gmm-otda per source", true, false, c(0, false, 0)),
		otda("gmm-otda 4 per class", false, false, c(4, false, 0)),
		otda("gmm-otda BIC", false, false, c(0, true, 0)),
		otda("gmm-otda floor 1e-3", false, false, c(0, false, 1e-3)),
		otda("gmm-otda random map", false, true, c(0, false, 0)),
		wbt("gmm-wbt", false, c(0, false, 0)),
		wbt("gmm-wbt 4 per class", false, c(4, false, 0)),
		wbt("gmm-wbt BIC", false, c(0, true, 0)),
		wbt("gmm-wbt floor 1e-3", false, c(0, false, 1e-3)),
		wbt("gmm-wbt random map", true, c(0, false, 0)),
	}
}

// TestGMMSuiteVariants prints the mean score per data set of the
// development suite of every variant of gmmVariants, for the mapping rule
// and for label propagation (" labels"), averaged over seeds, with the
// fit time summed over the experiments. It reads the data sets from the
// folder DADIL_GMM_SUITE and runs only when that is set; DADIL_GMM_SEEDS
// lists the seeds (default 1) and DADIL_GMM_SETS the data sets (default
// all):
//
//	DADIL_GMM_SUITE=$PWD/../shared/data DADIL_GMM_SEEDS=1,2,3,4 go test -run TestGMMSuiteVariants -v -timeout 4h ./adapt
func TestGMMSuiteVariants(t *testing.T) {
	dir := os.Getenv("DADIL_GMM_SUITE")
	if dir == "" {
		t.Skip("set DADIL_GMM_SUITE to the development suite's folder")
	}
	seeds := []uint64{1}
	if s := os.Getenv("DADIL_GMM_SEEDS"); s != "" {
		seeds = nil
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, v)
		}
	}
	var names []string
	if s := os.Getenv("DADIL_GMM_SETS"); s != "" {
		names = strings.Split(s, ",")
	}
	sets, notes, err := bench.LoadSuite(dir, names, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		t.Log(n)
	}
	tab := newGMMTable()
	for _, s := range sets {
		for i := range s.Domains {
			l, err := s.Problem(i)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range gmmVariants() {
				for _, seed := range seeds {
					m := v.fit(seed)
					t0 := time.Now()
					if err := m.Fit(l.Problem); err != nil {
						t.Fatal(err)
					}
					tab.second[v.name] += time.Since(t0).Seconds() / float64(len(seeds))
					for _, r := range gmmRules(m) {
						if r.suffix != "" && strings.HasSuffix(v.name, "random map") {
							continue // the labels do not depend on the map
						}
						score := gmmScore(t, r.predict, l.Test.X, l.Test.Y, s.Balanced) / float64(len(seeds))
						tab.add(v.name+r.suffix, v.name, s.Name, score)
					}
				}
			}
		}
	}
	t.Log("\n" + tab.markdown(sets))
}

// gmmRule is a way of classifying with a fit.
type gmmRule struct {
	suffix  string
	predict func(*mat.Dense) ([]int, error)
}

// gmmRules returns the predictions of a fit by its own rule ("") and by
// label propagation through its labeled target mixture (" labels").
func gmmRules(m adapt.Method) []gmmRule {
	var target interface {
		Proba(dst, X *mat.Dense) error
	}
	switch x := m.(type) {
	case *adapt.GMMOTDA:
		target = x.Target
	case *adapt.GMMWBT:
		target = x.Target
	}
	return []gmmRule{{"", m.Predict}, {" labels", func(X *mat.Dense) ([]int, error) {
		var P mat.Dense
		if err := target.Proba(&P, X); err != nil {
			return nil, err
		}
		return classify.Argmax(&P), nil
	}}}
}

// gmmScore returns the accuracy, or balanced accuracy, of pred in percent.
func gmmScore(t *testing.T, pred func(*mat.Dense) ([]int, error), X *mat.Dense, y []int, balanced bool) float64 {
	p, err := pred(X)
	if err != nil {
		t.Fatal(err)
	}
	score := classify.Accuracy
	if balanced {
		score = classify.BalancedAccuracy
	}
	a, err := score(p, y)
	if err != nil {
		t.Fatal(err)
	}
	return 100 * a
}

// gmmTable sums scores per row (a variant and a rule) and set, and fit
// times per variant.
type gmmTable struct {
	rows    []string
	variant map[string]string
	score   map[[2]string]float64
	second  map[string]float64
}

func newGMMTable() *gmmTable {
	return &gmmTable{variant: map[string]string{}, score: map[[2]string]float64{}, second: map[string]float64{}}
}

// add adds a seed's share of the score of a row on a target of set.
func (g *gmmTable) add(row, variant, set string, score float64) {
	if _, ok := g.variant[row]; !ok {
		g.rows = append(g.rows, row)
		g.variant[row] = variant
	}
	g.score[[2]string{row, set}] += score
}

// markdown returns the table: the mean score per set over its targets,
// the mean over sets and the variant's fit time.
func (g *gmmTable) markdown(sets []*bench.SuiteSet) string {
	var b strings.Builder
	b.WriteString("| variant |")
	for _, s := range sets {
		fmt.Fprintf(&b, " %s |", s.Name)
	}
	b.WriteString(" mean | fit time |\n|---|" + strings.Repeat("---:|", len(sets)+2) + "\n")
	for _, r := range g.rows {
		fmt.Fprintf(&b, "| %s |", r)
		var mean float64
		for _, s := range sets {
			m := g.score[[2]string{r, s.Name}] / float64(len(s.Domains))
			mean += m / float64(len(sets))
			fmt.Fprintf(&b, " %.2f |", m)
		}
		fmt.Fprintf(&b, " %.2f | %.1f s |\n", mean, g.second[g.variant[r]])
	}
	return b.String()
}
