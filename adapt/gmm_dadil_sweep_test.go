package adapt_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/gmm"
)

// TestGMMDaDiLSweep prints GMM-DaDiL-R's mean score on every data set of
// the development suite (as dadil bench suite scores it, seed 1 unless
// noted) for its defaults and for one setting changed at a time: the
// comparison behind the defaults (docs/gmm.md). It runs only when
// DADIL_SUITE names the folder of the suite's data:
//
//	DADIL_SUITE=../shared/data go test ./adapt -run GMMDaDiLSweep -v -timeout 2h
func TestGMMDaDiLSweep(t *testing.T) {
	dir := os.Getenv("DADIL_SUITE")
	if dir == "" {
		t.Skip("DADIL_SUITE is not set")
	}
	sets, _, err := bench.LoadSuite(dir, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name  string
		build func(seed uint64) *adapt.GMMDaDiL
	}
	def := func(f func(m *adapt.GMMDaDiL)) func(uint64) *adapt.GMMDaDiL {
		return func(seed uint64) *adapt.GMMDaDiL {
			m := &adapt.GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: seed}, EM: &gmm.Settings{}, Seed: seed}
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
