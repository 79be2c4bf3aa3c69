package adapt

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/synth"
)

// TestWBSynthetic compares WB and WBT with source-only on the demo
// problem over a few seeds. The target lies outside the sources'
// Wasserstein hull (it is shifted further than any source), so the
// barycenter alone (WB) does no better than pooling the sources, while
// the final transport of WBT reaches the target.
func TestWBSynthetic(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		src, tgt, truth := synthProblem(seed)
		acc := map[string]float64{}
		for _, m := range []Method{&SourceOnly{}, &WB{Bary: BarycenterSettings{Seed: seed}}, &WBT{Bary: BarycenterSettings{Seed: seed}}} {
			if err := fit(m, src, tgt, 3); err != nil {
				t.Fatal(err)
			}
			p, err := m.Predict(tgt)
			if err != nil {
				t.Fatal(err)
			}
			acc[m.Name()] = accuracy(p, truth)
		}
		t.Logf("seed %d: source-only %.4f, wb %.4f, wbt-reg %.4f", seed, acc["source-only"], acc["wb"], acc["wbt-reg"])
		if math.Abs(acc["wb"]-acc["source-only"]) > 0.05 {
			t.Errorf("seed %d: wb %.4f does not match source-only %.4f", seed, acc["wb"], acc["source-only"])
		}
		if acc["wbt-reg"] < 0.95 || acc["wbt-reg"] < acc["source-only"] {
			t.Errorf("seed %d: wbt-reg %.4f, source-only %.4f", seed, acc["wbt-reg"], acc["source-only"])
		}
	}
}

// When the target is the barycenter of the sources, WB recovers it, even
// where pooling fails: a large source (300 rows) and a small one (30
// rows) shifted up by 0 and 6, with classes 3 apart along y, and a target
// shifted by 3, the middle. Pooling weighs the sources by their sizes and
// places the classes near the large source; the barycenter weighs them
// equally (α = (1/2, 1/2)) and has the target's layout.
func TestWBInsideHull(t *testing.T) {
	l := synth.Default()
	l.Shifts = [][2]float64{{0, 0}, {0, 6}}
	l.Angles = []float64{0, 0}
	l.TargetShift = [2]float64{0, 3}
	p := synth.Generate(l, 5)
	big := p.Sources[0]
	small := dataset.Domain{Name: "small", X: mat.NewDense(30, 2, nil), Y: make([]int, 30)}
	for c := range 3 {
		for i := range 10 { // rows are grouped by class, 100 per class
			r := c*l.PerClass + i
			small.X.SetRow(c*10+i, p.Sources[1].X.RawRowView(r))
			small.Y[c*10+i] = p.Sources[1].Y[r]
		}
	}
	src := []dataset.Domain{big, small}
	acc := map[string]float64{}
	for _, m := range []Method{&SourceOnly{}, &WB{}, &WBT{}} {
		if err := fit(m, src, p.Target.X, 3); err != nil {
			t.Fatal(err)
		}
		pred, err := m.Predict(p.Target.X)
		if err != nil {
			t.Fatal(err)
		}
		acc[m.Name()] = accuracy(pred, p.Test.Y)
	}
	t.Logf("accuracies %v", acc)
	if acc["wb"] < 0.95 || acc["wbt-reg"] < 0.95 || acc["source-only"] > 0.8 {
		t.Errorf("accuracies %v", acc)
	}
}

// The barycenter has the documented support size and soft labels on the
// simplex, and is the same for the same seed.
func TestWBBarycenter(t *testing.T) {
	src, tgt, _ := synthProblem(4)
	// Unequal source sizes: 300, 200 and 100 rows; mean 200.
	src[1] = dataset.Domain{Name: src[1].Name, X: src[1].X.Slice(0, 200, 0, 2).(*mat.Dense), Y: src[1].Y[:200]}
	src[2] = dataset.Domain{Name: src[2].Name, X: src[2].X.Slice(0, 100, 0, 2).(*mat.Dense), Y: src[2].Y[:100]}
	cases := []struct {
		bary  BarycenterSettings
		wantN int
	}{
		{BarycenterSettings{}, 200},
		{BarycenterSettings{Support: 90, Seed: 3}, 90},
		{BarycenterSettings{Support: 50, MaxIter: 2, Beta: 5}, 50},
	}
	for _, c := range cases {
		m1, m2 := &WB{Bary: c.bary}, &WBT{Bary: c.bary}
		if err := fit(m1, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		if err := fit(m2, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		b := m1.Barycenter
		if n, _ := b.X.Dims(); n != c.wantN {
			t.Errorf("%+v: %d barycenter points, want %d", c.bary, n, c.wantN)
		}
		for i := 0; i < c.wantN; i++ {
			row := b.Y.RawRowView(i)
			if math.Abs(floats.Sum(row)-1) > 1e-12 || floats.Min(row) < 0 {
				t.Fatalf("%+v: label row %d = %v", c.bary, i, row)
			}
		}
		if c.bary.MaxIter != 0 && b.Iterations > c.bary.MaxIter {
			t.Errorf("%+v: %d iterations", c.bary, b.Iterations)
		}
		// Same seed, same barycenter (WBT computes it the same way).
		if !mat.Equal(b.X, m2.Barycenter.X) || !mat.Equal(b.Y, m2.Barycenter.Y) {
			t.Errorf("%+v: WB and WBT barycenters differ", c.bary)
		}
		if r, cc := m2.Mapped.Dims(); r != c.wantN || cc != 2 {
			t.Errorf("%+v: mapped barycenter is %d×%d", c.bary, r, cc)
		}
	}
	// Another seed, another initial support.
	a, b := &WB{Bary: BarycenterSettings{Seed: 1, MaxIter: 1}}, &WB{Bary: BarycenterSettings{Seed: 2, MaxIter: 1}}
	if err := fit(a, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	if err := fit(b, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	if mat.Equal(a.Barycenter.X, b.Barycenter.X) {
		t.Error("seeds 1 and 2 give the same barycenter")
	}
}
