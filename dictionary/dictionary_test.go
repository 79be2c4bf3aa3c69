package dictionary

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/plateau"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/dadil/dadil/barycenter"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/synth"
)

func synthDomains(seed uint64) ([]dataset.Domain, *dataset.Problem) {
	p := synth.Generate(synth.Default(), seed)
	return p.Domains(), p
}

func accuracy(pred, truth []int) float64 {
	ok := 0
	for i := range pred {
		if pred[i] == truth[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(pred))
}

// TestSyntheticAdaptation: on the demo problem DaDiL-R and DaDiL-E classify
// the target almost perfectly, far better than a classifier trained on the
// pooled sources.
func TestSyntheticAdaptation(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		ds, p := synthDomains(seed)
		var pooled mat.Dense
		var y []int
		for _, s := range p.Sources {
			if pooled.IsEmpty() {
				pooled.CloneFrom(s.X)
			} else {
				var st mat.Dense
				st.Stack(&pooled, s.X)
				pooled = st
			}
			y = append(y, s.Y...)
		}
		so, _, err := classify.FitLabels(&pooled, y, p.Classes, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		pso, err := so.Predict(p.Target.X)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Fit(ds, p.Classes, &Settings{Atoms: 4, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewModel(d, len(ds)-1, nil, seed)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := m.PredictR(p.Target.X)
		if err != nil {
			t.Fatal(err)
		}
		pe, err := m.PredictE(p.Target.X)
		if err != nil {
			t.Fatal(err)
		}
		aso, ar, ae := accuracy(pso, p.Test.Y), accuracy(pr, p.Test.Y), accuracy(pe, p.Test.Y)
		t.Logf("seed %d: source-only %.3f, DaDiL-R %.3f, DaDiL-E %.3f, %d epochs (%s), α_T %.3f",
			seed, aso, ar, ae, len(d.History.Loss), d.History.Stopped, m.Alpha)
		if ar < 0.95 || ae < 0.95 {
			t.Errorf("seed %d: DaDiL-R %.3f, DaDiL-E %.3f; want ≥ 0.95", seed, ar, ae)
		}
		if ar-aso < 0.3 || ae-aso < 0.3 {
			t.Errorf("seed %d: source-only %.3f is not far below DaDiL (%.3f, %.3f)", seed, aso, ar, ae)
		}
		// The loss went down.
		h := d.History.Loss
		if h[len(h)-1] > 0.5*h[0] {
			t.Errorf("seed %d: loss %v did not halve", seed, h)
		}
	}
}

// TestWBRRecoversAlpha: for a target built as an exact barycenter of the
// sources, WBR regresses its coordinates.
func TestWBRRecoversAlpha(t *testing.T) {
	ds, _ := synthDomains(3)
	sources := ds[:3]
	want := []float64{0.2, 0.5, 0.3}
	ms := make([]barycenter.Measure, len(sources))
	for k, s := range sources {
		ms[k] = barycenter.Measure{X: s.X}
	}
	b, err := barycenter.FreeSupport(ms, want, &barycenter.Settings{InitSamples: true, MaxIter: 20})
	if err != nil {
		t.Fatal(err)
	}
	w, err := WBR(&dataset.Problem{Classes: 3, Sources: sources, Target: dataset.Domain{Name: "target", X: b.X}}, &Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := mat.Row(nil, 0, w.Alpha)
	for k := range want {
		if math.Abs(got[k]-want[k]) > 0.05 {
			t.Fatalf("WBR α = %.3f, want %.3f ± 0.05", got, want)
		}
	}
	t.Logf("WBR α = %.4f (want %.2f), %d epochs", got, want, len(w.History.Loss))
}

// TestDeterministicAcrossGOMAXPROCS: the same seed gives bit-identical
// dictionaries whatever the parallelism, with per-domain or shared atom
// batches.
func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	ds, _ := synthDomains(4)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, shared := range []bool{false, true} {
		var ref *Dictionary
		for _, procs := range []int{1, 3, 8} {
			runtime.GOMAXPROCS(procs)
			d, err := Fit(ds, 3, &Settings{Atoms: 3, Epochs: 4, PlateauTol: -1, SharedAtomBatch: shared, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = d
				continue
			}
			if !mat.Equal(d.Alpha, ref.Alpha) {
				t.Fatalf("shared=%v, GOMAXPROCS=%d: α differs", shared, procs)
			}
			for k := range d.Atoms {
				if !mat.Equal(d.Atoms[k].X, ref.Atoms[k].X) || !mat.Equal(d.Atoms[k].Logits, ref.Atoms[k].Logits) {
					t.Fatalf("shared=%v, GOMAXPROCS=%d: atom %d differs", shared, procs, k)
				}
			}
			for e := range d.History.Loss {
				if d.History.Loss[e] != ref.History.Loss[e] {
					t.Fatalf("shared=%v, GOMAXPROCS=%d: loss history differs", shared, procs)
				}
			}
		}
	}
}

// TestFixedEpochs: a negative plateau tolerance runs exactly the cap, as
// the paper's fixed N_iter.
func TestFixedEpochs(t *testing.T) {
	ds, _ := synthDomains(5)
	d, err := Fit(ds, 3, &Settings{Atoms: 2, Epochs: 3, PlateauTol: -1, Init: InitGaussian})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.History.Loss) != 3 || d.History.Stopped != optimize.IterationLimit || StopReason(d.History.Stopped) != "epochs" || len(d.History.Alpha) != 3 {
		t.Errorf("ran %d epochs, stopped by %v", len(d.History.Loss), d.History.Stopped)
	}
	if n := len(d.History.DeltaX); n != 3*5 {
		t.Errorf("%d update magnitudes, want one per batch (15)", n)
	}
	for l := 0; l < 4; l++ {
		var s float64
		for _, v := range d.Alpha.RawRowView(l) {
			if v < 0 {
				t.Errorf("negative coordinate %g", v)
			}
			s += v
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("α row %d sums to %g", l, s)
		}
	}
}

// TestProgressStatus: Settings.Progress sees optimize.NotTerminated after
// every epoch but the last and History.Stopped after the last, whether the
// plateau rule or the epoch cap ends learning.
func TestProgressStatus(t *testing.T) {
	ds, _ := synthDomains(4)
	for _, c := range []struct {
		name string
		s    Settings
		want optimize.Status
	}{
		{"plateau", Settings{Atoms: 2, Epochs: 60, Window: 2, Samples: 150, Batch: 30, Seed: 10}, optimize.FunctionConvergence},
		{"epochs", Settings{Atoms: 2, Epochs: 4, Samples: 150, Batch: 30, Seed: 10}, optimize.IterationLimit},
	} {
		var got []EpochStats
		c.s.Progress = func(e EpochStats) { got = append(got, e) }
		d, err := Fit(ds, 3, &c.s)
		if err != nil {
			t.Fatal(err)
		}
		h := d.History
		if h.Stopped != c.want {
			t.Fatalf("%s: stopped by %v, want %v", c.name, h.Stopped, c.want)
		}
		if len(got) != len(h.Loss) || (c.want == optimize.FunctionConvergence) != (len(got) < c.s.Epochs) {
			t.Fatalf("%s: %d progress calls, %d epochs of at most %d", c.name, len(got), len(h.Loss), c.s.Epochs)
		}
		for i, e := range got {
			want := optimize.NotTerminated
			if i == len(got)-1 {
				want = h.Stopped
			}
			if e.Status != want || e.Epoch != i+1 || e.Epochs != c.s.Epochs || e.Loss != h.Loss[i] {
				t.Errorf("%s: progress %d is %+v, want epoch %d of %d, loss %g, status %v", c.name, i, e, i+1, c.s.Epochs, h.Loss[i], want)
			}
		}
	}
}

func TestPlateau(t *testing.T) {
	cases := []struct {
		loss []float64
		tol  float64
		want bool
	}{
		{[]float64{10, 9, 8, 7}, 0.01, false},               // too short for w = 2
		{[]float64{10, 9, 8, 7, 6, 5}, 0.01, false},         // still falling
		{[]float64{10, 9, 5, 5, 5, 5.01}, 0.01, true},       // flat
		{[]float64{10, 9, 5, 5, 5, 5.01}, -1, false},        // disabled
		{[]float64{10, 9, 5.1, 5.0, 4.95, 4.9}, 0.05, true}, // 2% < 5%
	}
	for _, c := range cases {
		if got := plateau.Reached(c.loss, 2, c.tol); got != c.want {
			t.Errorf("plateau(%v, 2, %g) = %v, want %v", c.loss, c.tol, got, c.want)
		}
	}
}

func TestFitErrors(t *testing.T) {
	ds, _ := synthDomains(6)
	bad := func(mod func([]dataset.Domain) []dataset.Domain) []dataset.Domain {
		cp := append([]dataset.Domain(nil), ds...)
		return mod(cp)
	}
	nan := mat.DenseCopyOf(ds[0].X)
	nan.Set(3, 1, math.NaN())
	one := make([]int, len(ds[0].Y))
	cases := []struct {
		name    string
		domains []dataset.Domain
		classes int
		s       *Settings
		want    string
	}{
		{"no domains", nil, 3, nil, "no domains"},
		{"dims", bad(func(d []dataset.Domain) []dataset.Domain { d[1].X = mat.NewDense(5, 3, nil); return d }), 3, nil, "has 3 features"},
		{"NaN", bad(func(d []dataset.Domain) []dataset.Domain { d[0].X = nan; return d }), 3, nil, "(3, 1) is NaN"},
		{"empty", bad(func(d []dataset.Domain) []dataset.Domain { d[2].X = &mat.Dense{}; return d }), 3, nil, "is empty"},
		{"single class", bad(func(d []dataset.Domain) []dataset.Domain { d[0].Y = one; return d }), 3, nil, "single class"},
		{"label range", bad(func(d []dataset.Domain) []dataset.Domain {
			y := append([]int(nil), d[0].Y...)
			y[0] = 5
			d[0].Y = y
			return d
		}), 3, nil, "label 5"},
		{"label count", bad(func(d []dataset.Domain) []dataset.Domain { d[0].Y = d[0].Y[:10]; return d }), 3, nil, "10 labels"},
		{"unlabeled", []dataset.Domain{ds[3]}, 3, nil, "no labeled domain"},
		{"K", ds, 3, &Settings{Atoms: -1}, "K = -1"},
		{"extra atoms negative", ds, 3, &Settings{ExtraAtoms: -1}, "-1 extra atoms"},
		{"extra atoms and K", ds, 3, &Settings{Atoms: 2, ExtraAtoms: 1}, "1 extra atoms with K = 2"},
		{"batch", ds, 3, &Settings{Samples: 30, Batch: 60}, "larger than"},
		{"batch below classes", ds, 3, &Settings{Samples: 30, Batch: 2}, "never hold class 2"},
		{"batch far below classes", ds, 3, &Settings{Samples: 30, Batch: 1}, "never hold classes 1 to 2"},
		{"lr", ds, 3, &Settings{LearningRate: -1}, "learning rate"},
		{"barycenter tol", ds, 3, &Settings{BarycenterTol: -1}, "τ = -1"},
		{"barycenter tol NaN", ds, 3, &Settings{BarycenterTol: math.NaN()}, "τ = NaN"},
		{"plateau NaN", ds, 3, &Settings{PlateauTol: math.NaN()}, "plateau tolerance NaN"},
		{"workers", ds, 3, &Settings{Workers: -1}, "Workers = -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Fit(c.domains, c.classes, c.s)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "dictionary: ") {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestExtraAtoms: K = labeled domains + ExtraAtoms, resolved into Atoms;
// the extra atom starts, as the others, on a labeled domain (its labels at
// 90% on classes).
func TestExtraAtoms(t *testing.T) {
	ds, _ := synthDomains(6)
	labeled := 0
	for _, d := range ds {
		if d.Labeled() {
			labeled++
		}
	}
	for _, extra := range []int{0, 1, 2} {
		d, err := Fit(ds, 3, &Settings{ExtraAtoms: extra, Epochs: 1, PlateauTol: -1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := labeled + extra
		if len(d.Atoms) != want || d.Settings.Atoms != want || d.Settings.ExtraAtoms != 0 {
			t.Fatalf("ExtraAtoms %d: %d atoms, Settings.Atoms %d, ExtraAtoms %d; want %d atoms resolved", extra, len(d.Atoms), d.Settings.Atoms, d.Settings.ExtraAtoms, want)
		}
		if _, c := d.Alpha.Dims(); c != want {
			t.Fatalf("ExtraAtoms %d: α has %d columns, want %d", extra, c, want)
		}
	}
}

// TestDefaultSamples: the default atom support grows beyond 100 points
// per class to the features, the labeled domains' mean rows per class and
// 2000 points, whichever is least, and holds no more points per class
// than the largest domain has rows per class where those are at most
// half of them.
func TestDefaultSamples(t *testing.T) {
	for _, c := range []struct {
		name                                             string
		labeled, labeledRows, largest, features, classes int
		want                                             int
	}{
		{"small domains", 3, 600, 200, 800, 10, 200},                     // at most 20 rows per class
		{"one large domain", 3, 1200, 1000, 800, 10, 1000},               // 40 per class on average, 100 in the largest
		{"largest domain a little smaller", 3, 2000, 958, 800, 10, 1000}, // 95 rows per class: more than half
		{"largest domain half as large", 3, 1500, 500, 800, 10, 500},     // 50 rows per class
		{"few features", 4, 40000, 10000, 9, 2, 200},                     // 9 features
		{"rows per class the least", 3, 3600, 1200, 5000, 2, 1200},       // 600 per class
		{"features the least", 3, 36000, 12000, 300, 2, 600},             // 300 features
		{"large domains", 4, 40000, 10000, 5000, 2, 2000},                // 2000 points in all
		{"many classes", 3, 300000, 100000, 5000, 30, 3000},              // 2000/30 < 100
		{"largest domain not known", 3, 600, 0, 800, 10, 1000},           // as without the bound
		{"fewer rows than classes", 1, 5, 5, 800, 10, 1000},
		{"no labeled domain", 0, 0, 0, 50, 5, 500},
	} {
		z := Sizes{Labeled: c.labeled, LabeledRows: c.labeledRows, LargestRows: c.largest, Features: c.features, Classes: c.classes}
		if got := DefaultSamples(z); got != c.want {
			t.Errorf("%s: DefaultSamples(%+v) = %d, want %d", c.name, z, got, c.want)
		}
	}
	// Fit resolves it from its domains: the generated problem's 2
	// features keep 100 points per class whatever the rows.
	l := synth.Default()
	l.PerClass = 300
	p := synth.Generate(l, 1)
	d, err := Fit(p.Domains(), p.Classes, &Settings{Epochs: 1, PlateauTol: -1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := 100 * p.Classes; d.Settings.Samples != want {
		t.Errorf("2 features, 300 rows per class: n = %d, want %d", d.Settings.Samples, want)
	}
	// Domains of 40 rows per class give atoms of 40 points per class, of
	// 60 the default 100.
	for _, c := range []struct{ rows, want int }{{40, 40}, {60, 100}} {
		l.PerClass = c.rows
		p = synth.Generate(l, 1)
		if d, err = Fit(p.Domains(), p.Classes, &Settings{Epochs: 1, PlateauTol: -1, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		if want := c.want * p.Classes; d.Settings.Samples != want {
			t.Errorf("2 features, %d rows per class: n = %d, want %d", c.rows, d.Settings.Samples, want)
		}
	}
	// With 150 features (148 of noise added) and 200 rows per class, n
	// grows to 150 per class.
	l.PerClass = 200
	p = synth.Generate(l, 1)
	r := rand.New(rand.NewPCG(1, 1))
	doms := p.Domains()
	for i, dm := range doms {
		n, _ := dm.X.Dims()
		X := mat.NewDense(n, 150, nil)
		for row := range n {
			X.Set(row, 0, dm.X.At(row, 0))
			X.Set(row, 1, dm.X.At(row, 1))
			for j := 2; j < 150; j++ {
				X.Set(row, j, 0.1*r.NormFloat64())
			}
		}
		doms[i].X = X
	}
	if d, err = Fit(doms, p.Classes, &Settings{Epochs: 1, PlateauTol: -1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if want := 150 * p.Classes; d.Settings.Samples != want {
		t.Errorf("150 features, 200 rows per class: n = %d, want %d", d.Settings.Samples, want)
	}
}
