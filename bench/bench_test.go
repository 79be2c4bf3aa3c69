package bench

import (
	"path/filepath"
	"testing"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/testdata"
)

// dataDir is the benchmark data folder (see internal/testdata); tests and
// benchmarks that need it skip when it is absent.
func dataDir(tb testing.TB) string {
	tb.Helper()
	return testdata.Dir(tb, "office-caltech10/surf")
}

// BenchmarkDaDiLFitOfficeCaltech times one DaDiL fit (dictionary learning
// and the DaDiL-R/E classifiers) with the paper's Caltech-Office setting on
// SURF features, target Webcam, fold 1.
func BenchmarkDaDiLFitOfficeCaltech(b *testing.B) {
	o, err := LoadOfficeCaltech(filepath.Join(dataDir(b), "office-caltech10"), "surf")
	if err != nil {
		b.Fatal(err)
	}
	s, err := o.Split("W", 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := adapt.NewDaDiLR(dictionary.Paper(1))
		if err := m.Fit(s); err != nil {
			b.Fatal(err)
		}
		p, err := m.Predict(s.Test.X)
		if err != nil {
			b.Fatal(err)
		}
		acc, err := classify.Accuracy(p, s.Test.Y)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(100*acc, "accuracy%")
	}
}
