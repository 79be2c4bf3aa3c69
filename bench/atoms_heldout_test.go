package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/selection"
)

// TestExtraAtomsHeldOut prints, for every data set of the development
// suite (DADIL_SETS: a comma-separated subset; DADIL_SEED: the seed,
// 1 by default), the mean score of DaDiL-R
// with as many atoms as sources (the default) and with one more
// (--atoms +1), and of choosing between the two per target by held-out
// sources scored by balanced accuracy (selection.ExtraAtoms, as
// --atoms auto chooses): the comparison behind docs/defaults.md's
// choice of K. It reads target labels only to score, and runs only when
// DADIL_SUITE names the folder of the suite's data:
//
//	DADIL_SUITE=$PWD/../shared/data go test ./bench -run ExtraAtomsHeldOut -v -timeout 3h
func TestExtraAtomsHeldOut(t *testing.T) {
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
	sets := suiteSetsOf(t, names, seed)
	extras := []int{0, 1}
	// dadil-r as dadil bench suite fits it by default, trained on the
	// reconstruction alone (--transport none), as docs/defaults.md's
	// measurements of K were made.
	cfg := adapt.Config{
		Seed: seed, MaxRows: 2000,
		Classifier: &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: adapt.DefaultPenalty(dataset.ScaleStandard)}},
		Dictionary: &dictionary.Settings{Transport: dictionary.TransportNone},
	}
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
			var score [2]float64
			for i, extra := range extras {
				if score[i], err = extraAtomsScore(l.Problem, selection.WithExtraAtoms(cfg, extra), set.Balanced); err != nil {
					t.Fatalf("%s, target %d, +%d: %v", set.Name, ti, extra, err)
				}
				mean[i] += score[i] / float64(len(set.Domains))
			}
			ch, err := selection.ExtraAtoms(l.Problem, cfg, extras)
			if err != nil {
				t.Fatalf("%s, target %d: %v", set.Name, ti, err)
			}
			t.Logf("%s %s: target %.2f / %.2f, held-out balanced %.4f / %.4f", set.Name, l.Problem.Target.Name, score[0], score[1], ch.Scores[0], ch.Scores[1])
			pick := ch.Extra // extras are 0 and 1: a choice is its own index
			picks += pick
			chosen += score[pick] / float64(len(set.Domains))
			best += max(score[0], score[1]) / float64(len(set.Domains))
		}
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %d of %d | %.2f |\n", set.Name, mean[0], mean[1], chosen, picks, len(set.Domains), best)
	}
}

// extraAtomsScore fits DaDiL-R built by cfg and returns its score on
// p.Test (balanced accuracy or accuracy, in %).
func extraAtomsScore(p *dataset.Problem, cfg adapt.Config, balanced bool) (float64, error) {
	m, err := cfg.New("dadil-r")
	if err != nil {
		return 0, err
	}
	if err := m.Fit(p); err != nil {
		return 0, err
	}
	pred, err := m.Predict(p.Test.X)
	if err != nil {
		return 0, err
	}
	score := classify.Accuracy
	if balanced {
		score = classify.BalancedAccuracy
	}
	v, err := score(pred, p.Test.Y)
	return 100 * v, err
}
