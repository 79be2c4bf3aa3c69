package bench

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// sweepPenalties are the penalties λ of TestClassifierPenaltySweep,
// SoftmaxCV's default grid.
var sweepPenalties = classify.DefaultL2Grid

// TestClassifierPenaltySweep prints, for every data set of the development
// suite, the mean score over its targets of softmax regressions with every
// penalty λ of classify.DefaultL2Grid trained on:
//
//   - the pooled sources (source-only);
//   - DaDiL-R's reconstruction B(α_T; P), features min-max scaled as dadil
//     adapt scales them (the default), the dictionary fitted once with the
//     defaults (the penalty does not change it);
//   - the same reconstruction with its features standardised by their mean
//     and standard deviation over the reconstruction (the target rows with
//     the same map);
//   - DaDiL-R's reconstruction of the problem prepared with --scale
//     standard (every feature of zero mean and unit variance over all
//     domains), its own dictionary.
//
// It is the comparison behind the classifier's default penalty
// (docs/defaults.md). It reads target labels only to score, and runs only
// when DADIL_SUITE names the folder of the suite's data (DADIL_SETS,
// comma-separated, limits it to some of its sets):
//
//	DADIL_SUITE=$PWD/../shared/data go test ./bench -run ClassifierPenaltySweep -v -timeout 2h
func TestClassifierPenaltySweep(t *testing.T) {
	sets := suiteSets(t)
	rows := []string{"source-only", "dadil-r", "dadil-r, classifier standardises", "dadil-r, --scale standard"}
	mean := make([][][]float64, len(rows)) // [row][set][penalty]
	for r := range mean {
		mean[r] = make([][]float64, len(sets))
		for s := range sets {
			mean[r][s] = make([]float64, len(sweepPenalties))
		}
	}
	for s, set := range sets {
		for ti := range set.Domains {
			scores, err := penaltyScores(set, ti)
			if err != nil {
				t.Fatal(err)
			}
			for r := range rows {
				for i, v := range scores[r] {
					mean[r][s][i] += v / float64(len(set.Domains))
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| trained on | λ |")
	for _, set := range sets {
		fmt.Fprintf(&b, " %s |", set.Name)
	}
	fmt.Fprintf(&b, " mean |\n|---|---|%s---:|\n", strings.Repeat("---:|", len(sets)))
	for r, name := range rows {
		for i, l2 := range sweepPenalties {
			fmt.Fprintf(&b, "| %s | %g |", name, l2)
			var all float64
			for s := range sets {
				fmt.Fprintf(&b, " %.2f |", mean[r][s][i])
				all += mean[r][s][i] / float64(len(sets))
			}
			fmt.Fprintf(&b, " %.2f |\n", all)
		}
	}
	t.Log("\n" + b.String())
}

// penaltyScores returns, for the problem of set whose target is domain
// ti, the target scores of every row of TestClassifierPenaltySweep at
// every penalty.
func penaltyScores(set *SuiteSet, ti int) ([][]float64, error) {
	l, err := set.Problem(ti)
	if err != nil {
		return nil, err
	}
	p := l.Problem
	var Xs []*mat.Dense
	var ys []int
	for _, d := range p.Sources {
		Xs, ys = append(Xs, d.X), append(ys, d.Y...)
	}
	out := [][]float64{sweepScores(set, stack(Xs), classify.OneHot(ys, p.Classes), p.Test, false)}
	X, T, err := reconstruction(p)
	if err != nil {
		return nil, err
	}
	out = append(out, sweepScores(set, X, T, p.Test, false), sweepScores(set, X, T, p.Test, true))
	ls, err := set.ProblemScaled(ti, dataset.ScaleStandard)
	if err != nil {
		return nil, err
	}
	if X, T, err = reconstruction(ls.Problem); err != nil {
		return nil, err
	}
	return append(out, sweepScores(set, X, T, ls.Problem.Test, false)), nil
}

// reconstruction fits dadil-r as dadil adapt does by default, but with
// class-balanced target batches (dictionary.Settings.BalancedTarget, as
// the measurements of docs/defaults.md#the-penalty were made; of the
// suite's sets only landmine's results depend on it), and returns its
// reconstruction B(α_T; P): the points and their soft labels, normalised
// to sum to 1 as DaDiL-R's classifier receives them.
func reconstruction(p *dataset.Problem) (X, T *mat.Dense, err error) {
	cfg := adapt.Config{Seed: 1, MaxRows: 2000, Dictionary: &dictionary.Settings{Seed: 1, BalancedTarget: true}}
	m, err := cfg.New("dadil-r")
	if err != nil {
		return nil, nil, err
	}
	if err := m.Fit(p); err != nil {
		return nil, nil, err
	}
	if s, ok := m.(*adapt.Subsampled); ok {
		m = s.Method
	}
	rec := m.(*adapt.DaDiL).Model.Reconstruction
	T = mat.DenseCopyOf(rec.Y)
	for i := range T.RawMatrix().Rows {
		row := T.RawRowView(i)
		s := floats.Sum(row)
		floats.Scale(1/s, row)
	}
	return rec.X, T, nil
}

// sweepScores trains a softmax regression on X with the soft targets T at
// every penalty (after standardising X's features when z) and scores it on
// test as the suite scores set.
func sweepScores(set *SuiteSet, X, T *mat.Dense, test *dataset.Domain, z bool) []float64 {
	Xte := test.X
	if z {
		X, Xte = standardised(X, X), standardised(X, Xte)
	}
	out := make([]float64, len(sweepPenalties))
	for i, l2 := range sweepPenalties {
		c, err := (&classify.SoftmaxTrainer{Settings: &classify.Settings{L2: l2}}).Train(X, T, nil)
		if err != nil {
			panic(err)
		}
		if out[i], err = scoreOn(c, &dataset.Domain{X: Xte, Y: test.Y}, set.Balanced); err != nil {
			panic(err)
		}
	}
	return out
}

// standardised returns X with every feature shifted by its mean over ref
// and divided by its standard deviation there (1 for a constant feature).
func standardised(ref, X *mat.Dense) *mat.Dense {
	n, d := ref.Dims()
	mu, sd := make([]float64, d), make([]float64, d)
	for i := range n {
		for j, v := range ref.RawRowView(i) {
			mu[j] += v / float64(n)
		}
	}
	for i := range n {
		for j, v := range ref.RawRowView(i) {
			sd[j] += (v - mu[j]) * (v - mu[j]) / float64(n)
		}
	}
	Z := mat.DenseCopyOf(X)
	r, _ := Z.Dims()
	for j := range sd {
		sd[j] = math.Sqrt(sd[j])
		if sd[j] < 1e-6 {
			sd[j] = 1
		}
	}
	for i := range r {
		row := Z.RawRowView(i)
		for j := range row {
			row[j] = (row[j] - mu[j]) / sd[j]
		}
	}
	return Z
}

// suiteSets returns the development suite's data sets in the folder
// DADIL_SUITE names (those DADIL_SETS lists, comma-separated, when it is
// set), seeded by 1; it skips the test when DADIL_SUITE is not
// set and fails when the folder holds no data set (a wrong path: go test
// runs in the package's folder).
func suiteSets(t *testing.T) []*SuiteSet {
	var names []string
	if s := os.Getenv("DADIL_SETS"); s != "" {
		names = strings.Split(s, ",")
	}
	return suiteSetsOf(t, names, 1)
}

// suiteSetsOf is suiteSets for the named sets (nil: all) and the seed.
func suiteSetsOf(t *testing.T, names []string, seed uint64) []*SuiteSet {
	dir := os.Getenv("DADIL_SUITE")
	if dir == "" {
		t.Skip("DADIL_SUITE is not set")
	}
	sets, _, err := LoadSuite(dir, names, seed)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) == 0 {
		t.Fatalf("no data set of the suite in %s", dir)
	}
	return sets
}
