package adapt

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/par"
)

// The scale benchmark of GMM-DaDiL: four domains (three labeled sources
// and the target) of 1,000,000 rows × 64 features, 10 classes
// (docs/gmm.md, "Scale", has the numbers):
//
//	go test -run '^$' -bench GMMDaDiLScale -benchtime 1x ./adapt
const (
	scaleRows     = 1_000_000
	scaleDim      = 64
	scaleClasses  = 10
	scaleSources  = 3
	scaleGenBlock = 50_000 // rows drawn from one PCG stream
)

// scaleProblem draws the problem deterministically: class c has mean μ_c
// (entries N(0, 0.5²)), every domain its shift δ (entries N(0, 0.5²),
// ‖δ‖ ≈ 4, comparable to the distances between classes) and its scale s
// of the features (uniform in [0.8, 1.2]); a row of class c in domain t is
// s_t ⊙ (μ_c + ε) + δ_t, ε ~ N(0, I), the class uniform. The target's
// labels go to Test.
func scaleProblem() *dataset.Problem {
	rng := rand.New(rand.NewPCG(26, 0))
	mu := mat.NewDense(scaleClasses, scaleDim, nil)
	for i := range mu.RawMatrix().Data {
		mu.RawMatrix().Data[i] = 0.5 * rng.NormFloat64()
	}
	domains := make([]dataset.Domain, scaleSources+1)
	for t := range domains {
		shift, scale := make([]float64, scaleDim), make([]float64, scaleDim)
		for j := range shift {
			shift[j], scale[j] = 0.5*rng.NormFloat64(), 0.8+0.4*rng.Float64()
		}
		X, y := mat.NewDense(scaleRows, scaleDim, nil), make([]int, scaleRows)
		blocks := (scaleRows + scaleGenBlock - 1) / scaleGenBlock
		par.ForEach(blocks, 0, func(b int) {
			r := rand.New(rand.NewPCG(uint64(t), uint64(b)))
			for i := b * scaleGenBlock; i < min((b+1)*scaleGenBlock, scaleRows); i++ {
				y[i] = r.IntN(scaleClasses)
				m := mu.RawRowView(y[i])
				row := X.RawRowView(i)
				for j := range row {
					row[j] = scale[j]*(m[j]+r.NormFloat64()) + shift[j]
				}
			}
		}, nil)
		domains[t] = dataset.Domain{Name: "domain " + strconv.Itoa(t+1), X: X, Y: y}
	}
	test := domains[scaleSources]
	return &dataset.Problem{Name: "scale", Classes: scaleClasses, Sources: domains[:scaleSources],
		Target: dataset.Domain{Name: test.Name, X: test.X}, Test: &test}
}

// BenchmarkGMMDaDiLScale fits GMM-DaDiL with its defaults (adapt.GMMDaDiL,
// seed 1) to the problem of scaleProblem and reports, besides the time of
// a fit, the process's peak resident memory during the fits (peak-RSS-MiB,
// the data included), the data's own size (data-MiB) and the target
// accuracy of the fitted method (accuracy%). The data are generated once,
// outside the timer.
func BenchmarkGMMDaDiLScale(b *testing.B) {
	benchScale(b, func() Method { return &GMMDaDiL{Seed: 1} })
}

// BenchmarkDaDiLScale fits DaDiL-R with its defaults (New("dadil-r", 1))
// to the same problem, reporting the same metrics.
func BenchmarkDaDiLScale(b *testing.B) {
	benchScale(b, func() Method {
		m, err := New("dadil-r", 1)
		if err != nil {
			b.Fatal(err)
		}
		return m
	})
}

// benchScale times fits of the methods newMethod returns to the problem
// of scaleProblem and reports peak-RSS-MiB, data-MiB and accuracy%.
func benchScale(b *testing.B, newMethod func() Method) {
	p := scaleProblem()
	data := float64((scaleSources+1)*scaleRows*scaleDim*8) / (1 << 20)
	runtime.GC()
	resetPeakRSS(b)
	var m Method
	for b.Loop() {
		m = newMethod()
		if err := m.Fit(p); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if peak, ok := peakRSS(); ok {
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	}
	b.ReportMetric(data, "data-MiB")
	pred, err := m.Predict(p.Test.X)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(100*accuracy(pred, p.Test.Y), "accuracy%")
}

// resetPeakRSS resets the process's peak resident set size (VmHWM) by
// writing 5 to /proc/self/clear_refs (Linux).
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("peak memory not reset, it covers the data's generation: %v", err)
	}
}

// peakRSS returns VmHWM of /proc/self/status, the process's peak resident
// set size, in bytes.
func peakRSS() (int64, bool) {
	f, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:")); ok {
			f := bytes.Fields(v)
			if len(f) == 2 {
				n, err := strconv.ParseInt(string(f[0]), 10, 64)
				return n << 10, err == nil
			}
		}
	}
	return 0, false
}
