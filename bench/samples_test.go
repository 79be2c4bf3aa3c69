package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// sparseTextProblem returns a generated problem shaped like product
// reviews as bags of words: 4 domains (the last the target) of n rows of
// d binary "word" features and 2 balanced classes. Word j occurs with
// probability b_j·exp(z_kj/2) in domain k (b_j = 0.06·u⁴, u uniform, z
// standard normal: few frequent words, frequencies that differ between
// domains), and a row's class is whether Σ_j x_j w_j + 2ε (w and ε
// standard normal) is above its domain's median. The files are prepared
// as dadil adapt prepares them (dataset.Prepare: features standardised
// over all the domains' rows).
func sparseTextProblem(t testing.TB, n, d int, seed uint64) *dataset.Problem {
	r := rand.New(rand.NewPCG(seed, 0x7e7))
	w, base := make([]float64, d), make([]float64, d)
	for j := range d {
		w[j] = r.NormFloat64()
		base[j] = 0.06 * math.Pow(r.Float64(), 4)
	}
	files := make([]*dataset.File, 4)
	for k := range files {
		X := mat.NewDense(n, d, nil)
		p := make([]float64, d)
		for j := range d {
			p[j] = base[j] * math.Exp(r.NormFloat64()/2)
		}
		s := make([]float64, n)
		for i := range n {
			for j := range d {
				if r.Float64() < p[j] {
					X.Set(i, j, 1)
					s[i] += w[j]
				}
			}
			s[i] += 2 * r.NormFloat64()
		}
		sorted := slices.Sorted(slices.Values(s))
		med := stat.Quantile(0.5, stat.Empirical, sorted, nil)
		y := make([]int, n)
		for i, v := range s {
			if v > med {
				y[i] = 1
			}
		}
		files[k] = &dataset.File{Name: fmt.Sprintf("domain %d", k+1), X: X, Labels: y}
	}
	l, err := dataset.Prepare(files[:3], files[3], &dataset.LoadOptions{Scaling: dataset.ScaleStandard})
	if err != nil {
		t.Fatal(err)
	}
	return l.Problem
}

// TestSamplesSparseText prints the target accuracy of source-only and of
// DaDiL-R with 100 atom points per class and with the default support
// (dictionary.DefaultSamples: here 2000 points), trained on the
// reconstruction alone, and with the default support beside the sources'
// moved rows (the default transport), on sparseTextProblem (4 domains of
// 2000 rows of 5000 features): the comparisons behind the default n and
// the default transport of docs/defaults.md. It takes a few minutes and
// runs only when DADIL_MEASURE_SAMPLES is set:
//
//	DADIL_MEASURE_SAMPLES=1 go test ./bench -run SamplesSparseText -v -timeout 30m
func TestSamplesSparseText(t *testing.T) {
	if os.Getenv("DADIL_MEASURE_SAMPLES") == "" {
		t.Skip("DADIL_MEASURE_SAMPLES is not set")
	}
	p := sparseTextProblem(t, 2000, 5000, 1)
	trainer := &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: adapt.DefaultPenalty(dataset.ScaleStandard)}}
	none := dictionary.TransportNone
	for _, c := range []struct {
		name      string
		method    string
		samples   int
		transport dictionary.Transport
	}{
		{"source-only", "source-only", 0, none},
		{"dadil-r, 100 points per class, on the reconstruction alone", "dadil-r", 200, none},
		{"dadil-r, the default n, on the reconstruction alone", "dadil-r", 0, none},
		{"dadil-r, the default n, beside the sources' moved rows (the default)", "dadil-r", 0, dictionary.TransportAuto},
	} {
		cfg := adapt.Config{Seed: 1, MaxRows: 2000, Classifier: trainer, Dictionary: &dictionary.Settings{Samples: c.samples, Transport: c.transport}}
		m, err := cfg.New(c.method)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Fit(p); err != nil {
			t.Fatal(err)
		}
		acc, err := adapt.Score(m.Predict, p.Test)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("| %s | %.2f |\n", c.name, 100*acc)
	}
}
