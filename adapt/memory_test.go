package adapt

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/bombtest"
)

// gaussianProblem returns N−1 labeled sources and a target of rows×d
// Gaussian rows, class k shifted along feature k mod d.
func gaussianProblem(N, rows, d, c int) *dataset.Problem {
	rng := rand.New(rand.NewPCG(1, 2))
	dom := func(name string, labeled bool) dataset.Domain {
		X := mat.NewDense(rows, d, nil)
		var y []int
		for i := range rows {
			row := X.RawRowView(i)
			for j := range row {
				row[j] = rng.NormFloat64()
			}
			row[(i%c)%d] += 3
			if labeled {
				y = append(y, i%c)
			}
		}
		return dataset.Domain{Name: name, X: X, Y: y}
	}
	p := &dataset.Problem{Classes: c, Target: dom("target", false)}
	for s := range N - 1 {
		p.Sources = append(p.Sources, dom(fmt.Sprint("source ", s+1), true))
	}
	return p
}

// TestEstimateMemory: the estimate follows its formula, MaxRows caps the
// transport-based methods only, and the dictionary methods take
// dictionary.EstimateMemory.
func TestEstimateMemory(t *testing.T) {
	p := gaussianProblem(3, 300, 4, 2) // R = 900, 2 sources × 300 × 300 cells
	lin := 900.0 * (3*4 + 3*2)
	capped := 3 * 100 * (3*4 + 3*2)
	set := &dictionary.Settings{Atoms: 3, Samples: 40}
	dict := dictionary.EstimateMemory(dictionary.SizesOf(p.Domains(), 2), set)
	for _, tc := range []struct {
		name string
		cfg  Config
		want float64 // numbers; -1: the dictionary's
	}{
		{"source-only", Config{}, lin},
		{"sa", Config{}, lin + 3*16},
		{"tca", Config{}, lin + 3*16},
		{"otda-emd", Config{}, lin + 2*2*300*300},
		{"otda-emd", Config{MaxRows: 100}, lin + 2*2*300*300}, // not capped
		{"jcpot", Config{}, lin + 3*2*300*300},
		{"jcpot", Config{MaxRows: 100}, float64(capped) + 3*2*100*100},
		{"wb", Config{MaxRows: 1000}, lin + 6*2*300*300},
		{"dadil-r", Config{Dictionary: set}, -1},
	} {
		got, err := EstimateMemory(tc.name, &tc.cfg, p)
		want := int64(8 * tc.want)
		if tc.want < 0 {
			want = dict.Peak() - dict.Data
		}
		if err != nil || got != want {
			t.Errorf("%s %+v: %d, %v; want %d", tc.name, tc.cfg, got, err, want)
		}
	}
	if _, err := EstimateMemory("nope", nil, p); err == nil || !strings.Contains(err.Error(), "unknown method") {
		t.Errorf("unknown method: %v", err)
	}
	if _, err := EstimateMemory("jcpot", nil, nil); err == nil {
		t.Error("no problem: no error")
	}
}

// TestEstimateMemoryMeasured compares the estimates of the transport-based
// methods with the largest live heap of their fit (bombtest.PeakHeap) on
// three sources and a target of 1000 rows. It takes half a minute and
// sets the collector process-wide, so it runs only when
// DADIL_MEASURE_MEMORY is set.
func TestEstimateMemoryMeasured(t *testing.T) {
	if os.Getenv("DADIL_MEASURE_MEMORY") == "" {
		t.Skip("set DADIL_MEASURE_MEMORY=1 to measure")
	}
	p := gaussianProblem(4, 1000, 20, 5)
	for name := range cellNumbers {
		m, _ := New(name, 1)
		peak := bombtest.PeakHeap(func() {
			if err := m.Fit(p); err != nil {
				t.Fatal(err)
			}
		})
		est, _ := EstimateMemory(name, nil, p)
		r := float64(est) / float64(peak)
		t.Logf("%s: measured %.0f MB, estimated %.0f MB (%.2f)", name, float64(peak)/1e6, float64(est)/1e6, r)
		if r < 1 || r > 2 {
			t.Errorf("%s: estimate %.2f times the measured peak", name, r)
		}
	}
}
