package adapt_test

import (
	"os"
	"testing"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/gmm"
)

// BenchmarkGMMDaDiLSuite times GMM-DaDiL's fits (seed 1, defaults, as
// dadil bench suite runs them: features standard-scaled over all domains,
// softmax regressions with adapt.DefaultPenalty) on every target of one
// data set of the development suite, DADIL_BENCH_SET (default cwru), read
// from the folder DADIL_SUITE; it skips when DADIL_SUITE is not set. The
// preparation of the problems is not timed. For a profile of the CWRU
// fits on one thread:
//
//	DADIL_SUITE=$PWD/../shared/data GOMAXPROCS=1 go test -run '^$' -bench GMMDaDiLSuite -cpuprofile cpu.out ./adapt
func BenchmarkGMMDaDiLSuite(b *testing.B) {
	dir := os.Getenv("DADIL_SUITE")
	if dir == "" {
		b.Skip("DADIL_SUITE is not set")
	}
	names := []string{"cwru"}
	if s := os.Getenv("DADIL_BENCH_SET"); s != "" {
		names = []string{s}
	}
	sets, _, err := bench.LoadSuite(dir, names, 1)
	if err != nil {
		b.Fatal(err)
	}
	softmax := &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: adapt.DefaultPenalty(dataset.ScaleStandard)}}
	b.ResetTimer()
	for b.Loop() {
		for _, s := range sets {
			for i := range s.Domains {
				b.StopTimer()
				l, err := s.ProblemScaled(i, dataset.ScaleStandard)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				m := &adapt.GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: 1}, Seed: 1, Classifier: softmax}
				if err := m.Fit(l.Problem); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
