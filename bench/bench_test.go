package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dadil/dadil/adapt"
)

// dataDir is the benchmark data folder; tests and benchmarks that need it
// skip when it is absent.
func dataDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("DADIL_DATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "office-caltech10", "surf")); err != nil {
		tb.Skipf("benchmark data not found in %s (set DADIL_DATA): skipping", dir)
	}
	return dir
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
		m := adapt.NewDaDiLR(PaperDaDiL(1))
		if err := m.Fit(s.Sources, s.Train, o.Classes.Len()); err != nil {
			b.Fatal(err)
		}
		p, err := m.Predict(s.Test)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(100*agreement(p, s.TestY), "accuracy%")
	}
}
