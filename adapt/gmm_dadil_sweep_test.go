package adapt_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
)

// TestGMMDaDiLSweep prints GMM-DaDiL-R's mean score on every data set of
// the development suite (as dadil bench suite scores it, seed 1 unless
// noted) for its defaults and for one setting changed at a time: the
// comparison behind the defaults (docs/gmm.md), the target's term
// class-balanced (BalancedTarget), as when it was made. It runs only when
// DADIL_SUITE names the folder of the suite's data:
//
//	DADIL_SUITE=$PWD/../shared/data go test ./adapt -run GMMDaDiLSweep -v -timeout 2h
func TestGMMDaDiLSweep(t *testing.T) {
	sets := loadSuite(t, suiteDir(t), 1)
	type variant struct {
		name  string
		build func(seed uint64) *adapt.GMMDaDiL
	}
	def := func(f func(m *adapt.GMMDaDiL)) func(uint64) *adapt.GMMDaDiL {
		return func(seed uint64) *adapt.GMMDaDiL {
			m := &adapt.GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: seed}, EM: &gmm.Settings{}, Seed: seed, BalancedTarget: true}
			f(m)
			return m
		}
	}
	variants := []variant{
		{"defaults", def(func(*adapt.GMMDaDiL) {})},
		{"defaults, seed 2", def(func(*adapt.GMMDaDiL) {})},
		{"defaults, seed 3", def(func(*adapt.GMMDaDiL) {})},
		{"MAP rule", def(func(m *adapt.GMMDaDiL) { m.MAP = true })},
		{"variance floor 1e-6 (EM's)", def(func(m *adapt.GMMDaDiL) { m.EM.VarFloor = 1e-6 })},
		{"variance floor 0.3", def(func(m *adapt.GMMDaDiL) { m.EM.VarFloor = 0.3 })},
		{"variance floor 0.3, seed 2", def(func(m *adapt.GMMDaDiL) { m.EM.VarFloor = 0.3 })},
		{"variance floor 0.3, seed 3", def(func(m *adapt.GMMDaDiL) { m.EM.VarFloor = 0.3 })},
		{"variance floor 0.03", def(func(m *adapt.GMMDaDiL) { m.EM.VarFloor = 0.03 })},
		{"2 components per class", def(func(m *adapt.GMMDaDiL) { m.Settings.ComponentsPerClass = 2 })},
		{"4 components per class", def(func(m *adapt.GMMDaDiL) { m.Settings.ComponentsPerClass = 4 })},
		{"η = 0.1", def(func(m *adapt.GMMDaDiL) { m.Settings.LearningRate = 0.1 })},
		{"η = 0.02", def(func(m *adapt.GMMDaDiL) { m.Settings.LearningRate = 0.02 })},
		{"300 epochs, no plateau rule", def(func(m *adapt.GMMDaDiL) { m.Settings.Epochs, m.Settings.PlateauTol = 300, -1 })},
		{"target: 2 components per class", def(func(m *adapt.GMMDaDiL) { m.TargetComponents = -2 })},
		{"twice as many atoms as sources", def(func(m *adapt.GMMDaDiL) { m.Settings.Atoms = -2 })},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| setting |")
	for _, s := range sets {
		fmt.Fprintf(&b, " %s |", s.Name)
	}
	fmt.Fprintf(&b, " mean |\n|---|%s---:|\n", strings.Repeat("---:|", len(sets)))
	for _, v := range variants {
		seed := uint64(1)
		if _, s, ok := strings.Cut(v.name, "seed "); ok {
			fmt.Sscan(s, &seed)
		}
		var total float64
		fmt.Fprintf(&b, "| %s |", v.name)
		for _, s := range sets {
			score := sweepSet(t, s, v.build, seed)
			total += score
			fmt.Fprintf(&b, " %.2f |", score)
		}
		fmt.Fprintf(&b, " %.2f |\n", total/float64(len(sets)))
		t.Logf("%s done", v.name)
	}
	t.Log("\n" + b.String())
}

// sweepSet returns GMM-DaDiL-R's mean score over the targets of s. A
// negative TargetComponents or Atoms stands for that many per class or
// per source.
func sweepSet(t *testing.T, s *bench.SuiteSet, build func(uint64) *adapt.GMMDaDiL, seed uint64) float64 {
	var sum float64
	for i := range s.Domains {
		p, err := s.Problem(i)
		if err != nil {
			t.Fatal(err)
		}
		m := build(seed)
		if m.TargetComponents < 0 {
			m.TargetComponents *= -p.Classes
		}
		if m.Settings.Atoms < 0 {
			m.Settings.Atoms *= -len(p.Sources)
		}
		if err := m.Fit(p.Problem); err != nil {
			t.Fatal(err)
		}
		pred, err := m.Predict(p.Test.X)
		if err != nil {
			t.Fatal(err)
		}
		score, _ := classify.Accuracy(pred, p.Test.Y)
		if s.Balanced {
			score, _ = classify.BalancedAccuracy(pred, p.Test.Y)
		}
		sum += 100 * score
	}
	return sum / float64(len(s.Domains))
}

// TestGMMDaDiLEnsembleSweep prints GMM-DaDiL-R's and GMM-DaDiL-E's mean
// scores on every data set of the development suite for seeds 1, 2 and 3,
// scored as dadil bench suite scores them by default (standard scaling,
// softmax λ = 0.01), GMM-DaDiL-E with its classifiers on the atoms moved
// onto the reconstruction (the default), on the atoms as they are, and
// with the atoms' MAP rules: the comparison behind GMM-DaDiL-E's default
// (docs/gmm.md), the target's term class-balanced (BalancedTarget), as
// when it was made. It runs only when DADIL_SUITE names the folder of the
// suite's data:
//
//	DADIL_SUITE=$PWD/../shared/data go test ./adapt -run GMMDaDiLEnsembleSweep -v -timeout 1h
func TestGMMDaDiLEnsembleSweep(t *testing.T) {
	dir := suiteDir(t)
	variants := []dadilVariant{
		{"atoms onto B(α_T; P) (default)", &adapt.GMMDaDiL{}},
		{"atoms as they are", &adapt.GMMDaDiL{EnsembleTransport: dictionary.TransportNone}},
		{"atoms' MAP rules", &adapt.GMMDaDiL{MAP: true}},
	}
	var b strings.Builder
	for seed := uint64(1); seed <= 3; seed++ {
		sets := loadSuite(t, dir, seed)
		if seed == 1 {
			fmt.Fprintf(&b, "| seed | predictor |")
			for _, s := range sets {
				fmt.Fprintf(&b, " %s |", s.Name)
			}
			fmt.Fprintf(&b, " mean |\n|---|---|%s---:|\n", strings.Repeat("---:|", len(sets)))
		}
		for i, v := range variants {
			cfg := adapt.Config{Seed: seed, GMM: v.gmm, Dictionary: &dictionary.Settings{BalancedTarget: true},
				Classifier: &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: adapt.DefaultPenalty(dataset.ScaleStandard)}}}
			res, err := bench.RunSuite(sets, bench.SuiteOptions{Methods: []string{"gmm-dadil", "gmm-dadil-e"}, Config: cfg, Standard: true})
			if err != nil {
				t.Fatal(err)
			}
			rows := []string{"gmm-dadil-e"}
			if i == 0 || v.gmm.MAP {
				rows = []string{"gmm-dadil", "gmm-dadil-e"}
			}
			for _, method := range rows {
				name := method + ", " + v.name
				if method == "gmm-dadil" {
					name = "gmm-dadil"
					if v.gmm.MAP {
						name += ", MAP rule"
					}
				}
				fmt.Fprintf(&b, "| %d | %s |", seed, name)
				var total float64
				for _, s := range sets {
					score, _ := setMean(res, s.Name, method)
					total += score
					fmt.Fprintf(&b, " %.2f |", score)
				}
				fmt.Fprintf(&b, " %.2f |\n", total/float64(len(sets)))
			}
			t.Logf("seed %d, %s done", seed, v.name)
		}
	}
	t.Log("\n" + b.String())
}

// TestGMMDaDiLSuiteSweep prints, for GMM-DaDiL's defaults and for one
// setting changed at a time, GMM-DaDiL-R's and GMM-DaDiL-E's mean score on
// every data set of the development suite, as dadil bench suite scores
// them by default (standard scaling, softmax λ = 0.01, one fit at a time),
// averaged over seeds 1, 2 and 3, with the mean over the sets for every
// seed and the mean seconds per fit on CWRU and Caltech-Office: the
// settings that could make a fit cheaper or close the gap to DaDiL-R on
// Caltech-Office (docs/gmm.md), the target's term class-balanced
// (BalancedTarget), as when it was made. It runs only when DADIL_SUITE names the
// folder of the suite's data:
//
//	DADIL_SUITE=$PWD/../shared/data go test ./adapt -run GMMDaDiLSuiteSweep -v -timeout 1h
func TestGMMDaDiLSuiteSweep(t *testing.T) {
	dir := suiteDir(t)
	variants := []dadilVariant{
		{"defaults", &adapt.GMMDaDiL{}},
		{"50 samples per class", &adapt.GMMDaDiL{SamplesPerClass: 50}},
		{"EM tolerance 10⁻²", &adapt.GMMDaDiL{EM: &gmm.Settings{Tol: 1e-2}}},
		{"5 components per class", &adapt.GMMDaDiL{Settings: &gmm.DictionarySettings{ComponentsPerClass: 5}}},
		{"variance floor 0.3", &adapt.GMMDaDiL{EM: &gmm.Settings{VarFloor: 0.3}}},
	}
	seeds := []uint64{1, 2, 3}
	var names []string
	var b strings.Builder
	for _, v := range variants {
		score := map[string][]float64{} // method/set → score per seed
		secs := map[string]float64{}    // set → mean seconds per fit over the seeds
		for _, seed := range seeds {
			sets := loadSuite(t, dir, seed)
			if names == nil {
				for _, s := range sets {
					names = append(names, s.Name)
				}
				fmt.Fprintf(&b, "| setting | predictor | %s | mean | seeds 1 / 2 / 3 | s per fit, cwru / office-caltech10 |\n|---|---|%s---:|---|---|\n",
					strings.Join(names, " | "), strings.Repeat("---:|", len(names)))
			}
			cfg := adapt.Config{Seed: seed, GMM: v.gmm, Dictionary: &dictionary.Settings{BalancedTarget: true},
				Classifier: &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: adapt.DefaultPenalty(dataset.ScaleStandard)}}}
			res, err := bench.RunSuite(sets, bench.SuiteOptions{Methods: []string{"gmm-dadil", "gmm-dadil-e"}, Config: cfg, Standard: true, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, method := range []string{"gmm-dadil", "gmm-dadil-e"} {
				for _, s := range sets {
					mean, seconds := setMean(res, s.Name, method)
					score[method+"/"+s.Name] = append(score[method+"/"+s.Name], mean)
					if method == "gmm-dadil" { // the same fit as gmm-dadil-e's
						secs[s.Name] += seconds / float64(len(seeds))
					}
				}
			}
			t.Logf("%s, seed %d done", v.name, seed)
		}
		for _, method := range []string{"gmm-dadil", "gmm-dadil-e"} {
			fmt.Fprintf(&b, "| %s | %s |", v.name, method)
			perSeed := make([]float64, len(seeds))
			var total float64
			for _, name := range names {
				var sum float64
				for i, s := range score[method+"/"+name] {
					sum += s
					perSeed[i] += s / float64(len(names))
				}
				total += sum / float64(len(seeds))
				fmt.Fprintf(&b, " %.2f |", sum/float64(len(seeds)))
			}
			fmt.Fprintf(&b, " %.2f | %.2f / %.2f / %.2f |", total/float64(len(names)), perSeed[0], perSeed[1], perSeed[2])
			fmt.Fprintf(&b, " %.2f / %.2f |\n", secs["cwru"], secs["office-caltech10"])
		}
	}
	t.Log("\n" + b.String())
}

// A dadilVariant is a setting of GMM-DaDiL compared on the development
// suite: adapt.Config.GMM.
type dadilVariant struct {
	name string
	gmm  *adapt.GMMDaDiL
}

// suiteDir returns the folder of the suite's data, DADIL_SUITE, and skips
// the test when it is not set.
func suiteDir(t *testing.T) string {
	dir := os.Getenv("DADIL_SUITE")
	if dir == "" {
		t.Skip("DADIL_SUITE is not set")
	}
	return dir
}

// loadSuite returns the suite's data sets in dir, seeded by seed; it
// fails when there is none (a wrong folder).
func loadSuite(t *testing.T, dir string, seed uint64) []*bench.SuiteSet {
	sets, _, err := bench.LoadSuite(dir, nil, seed)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) == 0 {
		t.Fatalf("no data set of the suite in %s", dir)
	}
	return sets
}

// setMean returns the mean score of method over the targets of the set
// in res, and its mean seconds per fit.
func setMean(res []bench.SuiteResult, set, method string) (score, seconds float64) {
	n := 0
	for _, r := range res {
		if r.Set == set && r.Method == method {
			score += r.Score
			seconds += r.Seconds
			n++
		}
	}
	return score / float64(n), seconds / float64(n)
}
