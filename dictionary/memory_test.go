package dictionary

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/bombtest"
)

// TestEstimateMemory: the parts of the estimate are those of the formula
// of EstimateMemory, computed by hand for small sizes.
func TestEstimateMemory(t *testing.T) {
	z := Sizes{Domains: 2, Labeled: 1, Rows: 100, LabeledRows: 50, TargetRows: 50, Features: 3, Classes: 2}
	for _, tc := range []struct {
		name string
		s    Settings
		want MemoryEstimate // in numbers; multiplied by 8 below
	}{
		// Data 100·4; Atoms 2·10·27 + 3·3·8; Step with Gram matrices
		// (K = 2): 2·(2·5·7 + 10²) + 2·(5·25 + 9·5·5); Reconstruction
		// 2·10·5 + 10·5 + 2·10·11 + (4 + 4)·100; DaDiL-R then the two
		// atoms moved onto it: max(1170 + 10·12, 150 + 2·(30 + 10·12)).
		{"reconstruction alone", Settings{Atoms: 2, Samples: 10, Batch: 5, Epochs: 4, Transport: TransportNone},
			MemoryEstimate{Data: 400, Atoms: 612, Step: 1040, Model: 1290, Reconstruction: 1170, Transport: 60, Classifiers: 360}},
		// The defaults add the 50 source rows moved along the dictionary:
		// 2·10·3 + 2·1·10·3 + 50·3 + 2·50·10/2 = 770 numbers, and DaDiL-R's
		// classifier on them too, 50·12; that part of the model peaks at
		// 150 + max(770, 60·5 + 60·12) = 1170, below the 1290 above.
		{"defaults", Settings{Atoms: 2, Samples: 10, Batch: 5, Epochs: 4},
			MemoryEstimate{Data: 400, Atoms: 612, Step: 1040, Model: 1290, Reconstruction: 1170, Transport: 60 + 770, Classifiers: 360 + 600}},
		// Exact plans to the 50 target rows for DaDiL-R (map) and both
		// atoms (labels: their classifiers train on the 50 rows), all at
		// once: m·d + 3·2·10·50, classifiers 10·12 + 2·50·12.
		{"transport", Settings{Atoms: 2, Samples: 10, Batch: 5, Epochs: 4, Transport: TransportMap, EnsembleTransport: TransportLabels},
			MemoryEstimate{Data: 400, Atoms: 612, Step: 1040, Model: 1170 + 3150 + 1320, Reconstruction: 1170, Transport: 150 + 3000, Classifiers: 1320}},
		// Blocks of 4 points: 2·10·5 + 10·5 + 2·4·11 + 8·16; the atoms
		// moved onto the reconstruction now come last.
		{"blocks", Settings{Atoms: 2, Samples: 10, Batch: 5, Epochs: 4, ReconstructionBlock: 4, Transport: TransportNone},
			MemoryEstimate{Data: 400, Atoms: 612, Step: 1040, Model: 366 + 120, Reconstruction: 366, Transport: 60, Classifiers: 360}},
		// One shared atom batch with its Gram matrix (9·2 > 2·2).
		{"shared", Settings{Atoms: 2, Samples: 10, Batch: 5, Epochs: 4, SharedAtomBatch: true, Transport: TransportNone},
			MemoryEstimate{Data: 400, Atoms: 612, Step: 170 + 700, Model: 1290, Reconstruction: 1170, Transport: 60, Classifiers: 360}},
		// K = 5: no Gram matrix, but K·n_b² inner products of the
		// changed points: 2·5·5·7 + 2·((11 + 5)·25 + 15·25).
		{"no gram", Settings{Atoms: 5, Samples: 10, Batch: 5, Epochs: 1, Transport: TransportNone},
			MemoryEstimate{Data: 400, Atoms: 5*10*27 + 3*6*2, Step: 350 + 2*(16*25+15*25), Model: 5*10*5 + 50 + 5*10*11 + 15*100 + 120,
				Reconstruction: 5*10*5 + 50 + 5*10*11 + 15*100, Transport: 150, Classifiers: 6 * 120}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EstimateMemory(z, &tc.s)
			w := tc.want
			want := MemoryEstimate{8 * w.Data, 8 * w.Atoms, 8 * w.Step, 8 * w.Model, 8 * w.Reconstruction, 8 * w.Transport, 8 * w.Classifiers}
			if got != want {
				t.Fatalf("got %#v\nwant %#v", got, want)
			}
			if p := got.Peak(); p != want.Data+want.Atoms+max(want.Step, want.Model) {
				t.Fatalf("peak %d", p)
			}
		})
	}
	// Sizes beyond any memory saturate instead of overflowing.
	huge := EstimateMemory(Sizes{Domains: 4, Labeled: 3, Rows: 1 << 40, Features: 1 << 30, Classes: 10}, &Settings{Atoms: 1 << 40, Samples: 1 << 40})
	if huge.Peak() <= 0 || huge.Learning() <= 0 || !strings.Contains(huge.String(), "EiB") {
		t.Fatalf("huge sizes: %+v, %s", huge, huge)
	}
}

// TestFitMemoryLimit: a fit whose estimate exceeds Settings.MaxMemory is
// refused before any work with a *MemoryError naming the sizes, the
// estimate and the limit; FitModel counts the model, Fit only learning;
// a negative MaxMemory disables the check, and zero is the machine's.
func TestFitMemoryLimit(t *testing.T) {
	ds, p := synthDomains(3)
	base := Settings{Atoms: 2, Samples: 60, Batch: 6, Epochs: 1, Seed: 1}
	est := EstimateMemory(SizesOf(ds, 3), &base)
	if est.Learning() >= est.Peak() {
		t.Fatalf("learning %d, peak %d: want a model larger than a step", est.Learning(), est.Peak())
	}
	between := base
	between.MaxMemory = (est.Learning() + est.Peak()) / 2
	tiny := base
	tiny.MaxMemory = 1000
	off := base
	off.MaxMemory = -1
	fitModel := func(s *Settings) error { _, err := FitModel(p, s, nil); return err }
	fit := func(s *Settings) error { _, err := Fit(ds, 3, s); return err }
	wbr := func(s *Settings) error { _, err := WBR(p, s); return err }
	for _, tc := range []struct {
		name string
		run  func(*Settings) error
		s    Settings
		need int64 // 0: no error
	}{
		{"fit model, tiny limit", fitModel, tiny, est.Peak()},
		{"fit model, limit between", fitModel, between, est.Peak()},
		{"fit, limit between", fit, between, 0},
		{"fit, tiny limit", fit, tiny, est.Learning()},
		{"wbr, tiny limit", wbr, tiny, -1},
		{"no limit", fitModel, off, 0},
		{"machine", fitModel, base, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(&tc.s)
			if tc.need == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var me *MemoryError
			if !errors.As(err, &me) {
				t.Fatalf("error %v, want a *MemoryError", err)
			}
			if tc.need > 0 && me.Need != tc.need {
				t.Fatalf("need %d, want %d", me.Need, tc.need)
			}
			for _, want := range []string{"dictionary: a fit of K = ", "would need about", "more than the limit of", "(Settings.MaxMemory)"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("%q lacks %q", err, want)
				}
			}
			if me.Limit.Bytes != tc.s.MaxMemory || me.Settings.Batch != 6 {
				t.Fatalf("limit %+v, settings %+v", me.Limit, me.Settings)
			}
		})
	}
	if err := CheckMemory(SizesOf(ds, 3), &tiny); err == nil {
		t.Fatal("CheckMemory accepted a tiny limit")
	}
}

// TestCheckScale: Fit refuses more atoms than labeled rows and atoms of
// more than MaxScaleRatio times the rows of the data (the time-scale
// guard); it accepts up to those bounds.
func TestCheckScale(t *testing.T) {
	ds, _ := synthDomains(4)
	small := []dataset.Domain{sub(ds[0], 6), sub(ds[1], 6), sub(ds[3], 6)} // 12 labeled rows, 18 in all
	for _, tc := range []struct {
		K, n int
		want string
	}{
		{12, 3, ""},
		{13, 3, "dictionary: K = 13 atoms for 12 labeled rows: a dictionary cannot have more atoms than labeled rows"},
		{3, 6000, ""},
		{3, 6003, "dictionary: the K = 3 atoms of n = 6003 points hold 1000 times the 18 rows of the data, more than 1000 times"},
	} {
		s := &Settings{Atoms: tc.K, Samples: tc.n, Batch: 3, Epochs: 1, PlateauTol: -1}
		err := CheckScale(SizesOf(small, 3), s)
		if (tc.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("K = %d, n = %d: error %v, want %q", tc.K, tc.n, err, tc.want)
		}
		if tc.want == "" {
			continue
		}
		if _, fitErr := Fit(small, 3, s); fitErr == nil || fitErr.Error() != err.Error() {
			t.Errorf("K = %d, n = %d: Fit: %v, want %v", tc.K, tc.n, fitErr, err)
		}
	}
}

// sub returns rows rows of dm: for a labeled domain, the first rows/3 of
// each of the classes 0, 1 and 2.
func sub(dm dataset.Domain, rows int) dataset.Domain {
	var idx []int
	for i := 0; len(idx) < rows; i++ {
		if dm.Y == nil || len(idx) < rows && countOf(dm.Y, idx, dm.Y[i]) < rows/3 {
			idx = append(idx, i)
		}
	}
	_, d := dm.X.Dims()
	X := mat.NewDense(len(idx), d, nil)
	var y []int
	for r, i := range idx {
		X.SetRow(r, dm.X.RawRowView(i))
		if dm.Y != nil {
			y = append(y, dm.Y[i])
		}
	}
	return dataset.Domain{Name: dm.Name, X: X, Y: y}
}

// countOf returns how many of the rows idx have label k.
func countOf(y, idx []int, k int) int {
	n := 0
	for _, i := range idx {
		if y[i] == k {
			n++
		}
	}
	return n
}

// TestScaleWarning: atoms holding more than ScaleRatio times the rows of
// the data get a warning; the defaults do not.
func TestScaleWarning(t *testing.T) {
	z := Sizes{Domains: 4, Labeled: 3, Rows: 1440, LabeledRows: 1080, TargetRows: 360, Features: 1024, Classes: 20}
	for _, tc := range []struct {
		s    *Settings
		want string
	}{
		{nil, ""},
		{&Settings{Atoms: 14}, ""}, // 14·2000 = 28000 < 20·1440
		{&Settings{Atoms: 15}, "the 15 atoms of 2000 points hold 21 times the 1440 rows of the data"},
		{&Settings{Atoms: 3, Samples: 100000}, "the 3 atoms of 100000 points hold 208 times"},
	} {
		if got := ScaleWarning(z, tc.s); tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestBenchmarkSizesPass: the defaults and the paper's presets pass the
// memory guard (within 2 GiB) and the scale guards on the sizes of the
// benchmarks: Caltech-Office SURF (domains of 157 to 1123 rows, 800
// features, 10 classes; K up to 8 and n up to 2000 in the analyses), CWRU
// (6000 training rows per load, 256 encoded features) and the
// development suite's COIL-20 (4 × 360 rows, 1024 features, 20 classes).
func TestBenchmarkSizesPass(t *testing.T) {
	oc := Sizes{Domains: 4, Labeled: 3, Rows: 157 + 295 + 958 + 1123, LabeledRows: 157 + 295 + 958, TargetRows: 1123, Features: 800, Classes: 10}
	cwru := Sizes{Domains: 4, Labeled: 3, Rows: 24000, LabeledRows: 18000, TargetRows: 6000, Features: 256, Classes: 10}
	coil := Sizes{Domains: 4, Labeled: 3, Rows: 1440, LabeledRows: 1080, TargetRows: 360, Features: 1024, Classes: 20}
	settings := map[string]*Settings{"defaults": nil, "paper": Paper(1), "cwru-r": PaperCWRU(8, 1), "cwru-e": PaperCWRU(3, 1)}
	for _, K := range []int{3, 8} {
		for _, n := range []int{500, 2000} {
			for _, nb := range []int{50, 200} {
				settings[fmt.Sprintf("sweep K%d n%d nb%d", K, n, nb)] = &Settings{Atoms: K, Samples: n, Batch: nb}
			}
		}
	}
	for name, s := range settings {
		for set, z := range map[string]Sizes{"office-caltech10": oc, "cwru": cwru, "coil20": coil} {
			var ss Settings
			if s != nil {
				ss = *s
			}
			ss.MaxMemory = 2 << 30
			if err := CheckMemory(z, &ss); err != nil {
				t.Errorf("%s on %s: %v", name, set, err)
			}
			ss.fillDefaults(z)
			if err := CheckScale(z, &ss); err != nil {
				t.Errorf("%s on %s: %v", name, set, err)
			}
			if w := ScaleWarning(z, &ss); w != "" {
				t.Errorf("%s on %s: %s", name, set, w)
			}
		}
	}
}

// TestEstimateMemoryMeasured compares the estimate with the largest live
// heap of FitModel (bombtest.PeakHeap) on sizes from the benchmarks' to a few GB (the
// estimate excludes the data, which exist before the fit). It takes a
// minute and sets the collector process-wide, so it runs only when
// DADIL_MEASURE_MEMORY is set.
func TestEstimateMemoryMeasured(t *testing.T) {
	if os.Getenv("DADIL_MEASURE_MEMORY") == "" {
		t.Skip("set DADIL_MEASURE_MEMORY=1 to measure")
	}
	for _, tc := range []struct {
		N, rows, d, c int
		s             Settings
	}{
		{4, 800, 800, 10, Settings{Epochs: 2}},
		{4, 800, 800, 10, Settings{Atoms: 8, Samples: 1000, Batch: 200, Epochs: 2}},
		{4, 500, 50, 10, Settings{Atoms: 8, Samples: 4000, Batch: 400, Epochs: 1}},
		{4, 500, 50, 10, Settings{Atoms: 3, Samples: 4000, Batch: 1000, Epochs: 1}},
		{4, 500, 50, 10, Settings{Atoms: 3, Samples: 3000, Batch: 100, Epochs: 1, ReconstructionBlock: -1}},
		{4, 3000, 50, 10, Settings{Atoms: 3, Samples: 2000, Batch: 100, Epochs: 1, Transport: TransportMap, EnsembleTransport: TransportLabels}},
		{3, 400, 20, 5, Settings{Atoms: 40, Samples: 500, Batch: 100, Epochs: 1}},
		{3, 400, 20, 5, Settings{Atoms: 40, Samples: 500, Batch: 100, Epochs: 1, SharedAtomBatch: true}},
		{5, 300, 1000, 4, Settings{Atoms: 2, Samples: 4000, Batch: 20, Epochs: 3}},
	} {
		p := gaussianProblem(tc.N, tc.rows, tc.d, tc.c)
		s := tc.s
		s.MaxMemory = -1
		peak := bombtest.PeakHeap(func() {
			if _, err := FitModel(p, &s, nil); err != nil {
				t.Fatal(err)
			}
		})
		est := EstimateMemory(SizesOf(p.Domains(), p.Classes), &tc.s)
		r := float64(est.Peak()-est.Data) / float64(peak)
		t.Logf("%d domains of %d×%d, %d classes, %+v: measured %.0f MB, estimated %.0f MB (%.2f) [%s]", tc.N, tc.rows, tc.d, tc.c, tc.s, float64(peak)/1e6, float64(est.Peak()-est.Data)/1e6, r, est)
		if r < 0.95 || r > 1.6 {
			t.Errorf("estimate %.2f times the measured peak", r)
		}
	}
}

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
