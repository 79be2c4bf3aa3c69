package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// extraAtomsDaDiL is dadil-r as dadil bench suite fits it by default, with
// ExtraAtoms atoms beyond the number of sources of the problem it fits.
type extraAtomsDaDiL struct {
	extra int
	seed  uint64
	m     adapt.Method
}

func (e *extraAtomsDaDiL) Name() string { return fmt.Sprintf("dadil-r, --atoms +%d", e.extra) }

func (e *extraAtomsDaDiL) Fit(p *dataset.Problem) error {
	cfg := adapt.Config{
		Seed: e.seed, MaxRows: 2000,
		Classifier: &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: adapt.DefaultPenalty(dataset.ScaleStandard)}},
		Dictionary: &dictionary.Settings{ExtraAtoms: e.extra},
	}
	m, err := cfg.New("dadil-r")
	if err != nil {
		return err
	}
	e.m = m
	return m.Fit(p)
}

func (e *extraAtomsDaDiL) Predict(X *mat.Dense) ([]int, error) { return e.m.Predict(X) }

// TestExtraAtomsHeldOut prints, for every data set of the development
// suite (DADIL_SETS: a comma-separated subset; DADIL_SEED: the seed,
// 1 by default), the mean score of DaDiL-R
// with as many atoms as sources (the default) and with one more
// (--atoms +1), and of choosing between the two per target by held-out
// sources scored by balanced accuracy (adapt.ValidateOnSources, the
// scorer held-out-balanced): the comparison behind docs/defaults.md's
// choice of K. It reads target labels only to score, and runs only when
// DADIL_SUITE names the folder of the suite's data:
//
//	DADIL_SUITE=$PWD/../shared/data go test ./bench -run ExtraAtomsHeldOut -v -timeout 3h
func TestExtraAtomsHeldOut(t *testing.T) {
	dir := os.Getenv("DADIL_SUITE")
	if dir == "" {
		t.Skip("DADIL_SUITE is not set")
	}
	var names []string
	var err error
	if s := os.Getenv("DADIL_SETS"); s != "" {
		names = strings.Split(s, ",")
	}
	seed := uint64(1)
	if s := os.Getenv("DADIL_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("DADIL_SEED: %v", err)
		}
	}
	sets, _, err := LoadSuite(dir, names, seed)
	if err != nil {
		t.Fatal(err)
	}
	extras := []int{0, 1}
	fmt.Println("| set | --atoms +0 | --atoms +1 | held-out-balanced's choice | picks of +1 | better of the two per target |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, set := range sets {
		var mean [2]float64
		var chosen, best float64
		picks := 0
		for ti := range set.Domains {
			l, err := set.ProblemScaled(ti, dataset.ScaleStandard)
			if err != nil {
				t.Fatal(err)
			}
			var score, held [2]float64
			for i, extra := range extras {
				score[i], held[i], err = extraAtomsScores(l.Problem, extra, seed, set.Balanced)
				if err != nil {
					t.Fatalf("%s, target %d, +%d: %v", set.Name, ti, extra, err)
				}
				mean[i] += score[i] / float64(len(set.Domains))
			}
			t.Logf("%s %s: target %.2f / %.2f, held-out balanced %.4f / %.4f", set.Name, l.Problem.Target.Name, score[0], score[1], held[0], held[1])
			pick := 0
			if held[1] > held[0] {
				pick, picks = 1, picks+1
			}
			chosen += score[pick] / float64(len(set.Domains))
			best += max(score[0], score[1]) / float64(len(set.Domains))
		}
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %d of %d | %.2f |\n", set.Name, mean[0], mean[1], chosen, picks, len(set.Domains), best)
	}
}

// extraAtomsScores fits DaDiL-R with extra atoms beyond the sources and
// returns its score on p.Test (balanced accuracy or accuracy, in %) and
// its held-out sources' mean balanced accuracy.
func extraAtomsScores(p *dataset.Problem, extra int, seed uint64, balanced bool) (score, held float64, err error) {
	m := &extraAtomsDaDiL{extra: extra, seed: seed}
	if err := m.Fit(p); err != nil {
		return 0, 0, err
	}
	pred, err := m.Predict(p.Test.X)
	if err != nil {
		return 0, 0, err
	}
	if balanced {
		score, err = classify.BalancedAccuracy(pred, p.Test.Y)
	} else {
		score, err = classify.Accuracy(pred, p.Test.Y)
	}
	if err != nil {
		return 0, 0, err
	}
	h, err := adapt.ValidateOnSources(p, func() adapt.Method { return &extraAtomsDaDiL{extra: extra, seed: seed} })
	if err != nil {
		return 0, 0, err
	}
	return 100 * score, adapt.MeanBalanced(h), nil
}
