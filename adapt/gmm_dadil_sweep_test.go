package adapt_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

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
// class-balanced (BalancedTarget) and GMM-DaDiL-R trained on the
// reconstruction alone (Transport none), as when it was made. It runs only when
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
			m := &adapt.GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: seed}, EM: &gmm.Settings{}, Seed: seed, BalancedTarget: true,
				Transport: dictionary.TransportNone}
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
// (docs/gmm.md), the target's term class-balanced (BalancedTarget) and
// GMM-DaDiL-R trained on the reconstruction alone (Transport none), as
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
	for _, v := range variants {
		v.gmm.Transport = dictionary.TransportNone // GMM-DaDiL-R on the reconstruction alone, as when it was made
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
// (BalancedTarget) and GMM-DaDiL-R trained on the reconstruction alone
// (Transport none), as when it was made. It runs only when DADIL_SUITE names the
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
	for _, v := range variants {
		v.gmm.Transport = dictionary.TransportNone // GMM-DaDiL-R on the reconstruction alone, as when it was made
	}
	suiteSweep(t, dir, variants, true)
}

// TestGMMDaDiLSourcesSweep prints, as TestGMMDaDiLSuiteSweep, GMM-DaDiL-R's
// and GMM-DaDiL-E's mean scores and seconds per fit with the defaults
// (GMM-DaDiL-R beside as many moved rows of every source as it draws from
// the reconstruction), on the reconstruction alone, and beside at most
// 4000 or every row of every source: the comparison behind the default
// Transport and TransportRows (docs/gmm.md). It runs only when DADIL_SUITE names the folder of the
// suite's data:
//
//	DADIL_SUITE=$PWD/../shared/data go test ./adapt -run GMMDaDiLSourcesSweep -v -timeout 1h
func TestGMMDaDiLSourcesSweep(t *testing.T) {
	suiteSweep(t, suiteDir(t), []dadilVariant{
		{"defaults (as many rows of every source as are drawn)", &adapt.GMMDaDiL{}},
		{"the reconstruction alone", &adapt.GMMDaDiL{Transport: dictionary.TransportNone}},
		{"at most 4000 rows of every source", &adapt.GMMDaDiL{TransportRows: 4000}},
		{"every row of every source", &adapt.GMMDaDiL{TransportRows: -1}},
	}, false)
}

// suiteSweep prints the table of TestGMMDaDiLSuiteSweep for the variants,
// the target's term class-balanced when balanced, over the seeds (1, 2
// and 3 when none are given).
func suiteSweep(t *testing.T, dir string, variants []dadilVariant, balanced bool, seeds ...uint64) {
	if len(seeds) == 0 {
		seeds = []uint64{1, 2, 3}
	}
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
				fmt.Fprintf(&b, "| setting | predictor | %s | mean | seeds %s | s per fit, cwru / office-caltech10 |\n|---|---|%s---:|---|---|\n",
					strings.Join(names, " | "), joinf(seeds, "%d"), strings.Repeat("---:|", len(names)))
			}
			cfg := adapt.Config{Seed: seed, GMM: v.gmm, Dictionary: &dictionary.Settings{BalancedTarget: balanced},
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
			fmt.Fprintf(&b, " %.2f | %s |", total/float64(len(names)), joinf(perSeed, "%.2f"))
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

// joinf formats every value of v with format and joins them with " / ".
func joinf[T any](v []T, format string) string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(out, " / ")
}

// TestGMMDaDiLGap prints what bounds GMM-DaDiL-R below DaDiL-R on some
// sets (docs/gmm.md, Caltech-Office SURF): its mean scores at seed 1 with
// the defaults and with 10 and 20 components per class in the atoms and
// the domains' mixtures (with their seconds per fit), and, per set, the
// score of the same classifier trained on 100 rows per class drawn from a
// labeled mixture fitted to the target's own rows and labels (3
// components per class, the defaults' variance floor): a bound that reads
// the target labels, of what a labeled diagonal mixture as good as can be
// gives. It runs only when DADIL_SUITE names the folder of the suite's
// data:
//
//	DADIL_SUITE=$PWD/../shared/data go test ./adapt -run GMMDaDiLGap -v -timeout 1h
func TestGMMDaDiLGap(t *testing.T) {
	dir := suiteDir(t)
	per := func(n int) *adapt.GMMDaDiL {
		return &adapt.GMMDaDiL{Settings: &gmm.DictionarySettings{ComponentsPerClass: n}}
	}
	softmax := &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: adapt.DefaultPenalty(dataset.ScaleStandard)}}
	var b strings.Builder
	b.WriteString("| set | labeled mixture of the target |\n|---|---:|\n")
	for _, s := range loadSuite(t, dir, 1) {
		var sum float64
		for i := range s.Domains {
			l, err := s.ProblemScaled(i, dataset.ScaleStandard)
			if err != nil {
				t.Fatal(err)
			}
			sum += targetMixtureScore(t, l.Problem, softmax, s.Balanced) / float64(len(s.Domains))
		}
		fmt.Fprintf(&b, "| %s | %.2f |\n", s.Name, sum)
	}
	t.Log("\n" + b.String())
	suiteSweep(t, dir, []dadilVariant{{"defaults", per(0)}, {"10 components per class", per(10)}, {"20 components per class", per(20)}}, false, 1)
}

// targetMixtureScore returns the score on p's test rows of tr trained on
// 100 rows per class drawn from a labeled mixture fitted to p.Test's rows
// and labels.
func targetMixtureScore(t *testing.T, p *dataset.Problem, tr classify.Trainer, balanced bool) float64 {
	set := gmm.Settings{Components: 3, VarFloor: adapt.DefaultGMMDaDiLVarFloor, Tol: adapt.DefaultGMMTol, Seed: 1}
	r, err := gmm.FitLabeled(p.Test.X, p.Test.Y, p.Classes, &set)
	if err != nil {
		t.Fatal(err)
	}
	B := r.Mixture
	X := mat.NewDense(adapt.DefaultGMMSamplesPerClass*p.Classes, B.Dim(), nil)
	comp, err := B.Sample(X, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	T := mat.NewDense(len(comp), p.Classes, nil)
	for i, k := range comp {
		T.SetRow(i, B.Labels.RawRowView(k))
	}
	h, err := tr.Train(X, T, nil)
	if err != nil {
		t.Fatal(err)
	}
	pred := func(Z *mat.Dense) ([]int, error) {
		var P mat.Dense
		if err := h.Proba(&P, Z); err != nil {
			return nil, err
		}
		return classify.Argmax(&P), nil
	}
	return gmmScore(t, pred, p.Test.X, p.Test.Y, balanced)
}
