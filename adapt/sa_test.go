package adapt

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/testdata"
	"github.com/dadil/dadil/ot"
)

// baselines returns fresh instances of the methods of sa.go, tca.go,
// otda.go and wbt.go with their default settings.
func baselines() []Method {
	return []Method{&SA{}, &TCA{}, NewOTDAEMD(), NewOTDASinkhorn(), &WB{}, &WBT{}}
}

// TestBaselinesSynthetic runs every baseline on the demo problem: Predict
// before Fit fails with ErrNotFitted, predictions have the right length
// and range, a second fit gives the same predictions, and predicting a
// subset of rows gives the corresponding predictions. Accuracies are
// checked where the method is expected to adapt (see the wants).
func TestBaselinesSynthetic(t *testing.T) {
	src, tgt, truth := synthProblem(1)
	so := &SourceOnly{}
	if err := fit(so, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	p, err := so.Predict(tgt)
	if err != nil {
		t.Fatal(err)
	}
	soAcc := accuracy(p, truth)
	// Minimum accuracies. Per-domain centring (SA) and transport to the
	// target (OTDA, WBT) undo the vertical shift of the target; TCA with
	// as many components as features is an invertible linear map and WB
	// stays inside the sources' Wasserstein hull, which does not contain
	// the target, so neither is expected to beat source-only here.
	want := map[string]float64{"sa": 0.95, "otda-emd": 0.95, "otda-sinkhorn": 0.95, "wbt-reg": 0.95}
	acc := map[string]float64{"source-only": soAcc}
	for i, m := range baselines() {
		name := m.Name()
		if _, err := m.Predict(tgt); !errors.Is(err, ErrNotFitted) {
			t.Errorf("%s: Predict before Fit: %v", name, err)
		}
		start := time.Now()
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		elapsed := time.Since(start)
		pred, err := m.Predict(tgt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(pred) != len(truth) {
			t.Fatalf("%s: %d predictions for %d rows", name, len(pred), len(truth))
		}
		for _, c := range pred {
			if c < 0 || c >= 3 {
				t.Fatalf("%s: class %d outside [0, 3)", name, c)
			}
		}
		acc[name] = accuracy(pred, truth)
		t.Logf("%-14s accuracy %.4f (source-only %.4f), Fit %v", name, acc[name], soAcc, elapsed)
		if w, ok := want[name]; ok && acc[name] < w {
			t.Errorf("%s: accuracy %.4f < %.2f", name, acc[name], w)
		}

		// Determinism: a fresh instance gives the same predictions.
		again := baselines()[i]
		if err := fit(again, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		pred2, err := again.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pred, pred2) {
			t.Errorf("%s: a second fit predicts differently", name)
		}

		// New rows: a subset is classified as in the full set.
		sub := tgt.Slice(10, 40, 0, 2).(*mat.Dense)
		ps, err := m.Predict(sub)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ps, pred[10:40]) {
			t.Errorf("%s: predictions of a subset differ", name)
		}
	}
	// WB matches source-only here (see above).
	if math.Abs(acc["wb"]-soAcc) > 0.05 {
		t.Errorf("wb accuracy %.4f, source-only %.4f", acc["wb"], soAcc)
	}
}

// TestBaselinesBadInput checks that invalid data and settings give errors,
// never panics, and that a failed Fit leaves the method unfitted.
func TestBaselinesBadInput(t *testing.T) {
	src, tgt, _ := synthProblem(2)
	nan := mat.DenseCopyOf(tgt)
	nan.Set(3, 1, math.NaN())
	wide := mat.NewDense(5, 3, nil)
	data := []struct {
		name    string
		src     []dataset.Domain
		tgt     *mat.Dense
		classes int
		want    string
	}{
		{"no sources", nil, tgt, 3, "no source"},
		{"one class", src, tgt, 1, "1 classes"},
		{"nil target", src, nil, 3, "target has no rows"},
		{"dimensions", src, wide, 3, "features"},
		{"NaN target", src, nan, 3, "NaN"},
		{"label range", []dataset.Domain{{X: src[0].X, Y: append([]int{5}, src[0].Y[1:]...)}}, tgt, 3, "label 5"},
	}
	for _, m := range baselines() {
		for _, d := range data {
			err := fit(m, d.src, d.tgt, d.classes)
			if err == nil || !strings.HasPrefix(err.Error(), "adapt: ") || !strings.Contains(err.Error(), d.want) {
				t.Errorf("%s, %s: error %v, want one containing %q", m.Name(), d.name, err, d.want)
			}
			if _, err := m.Predict(tgt); !errors.Is(err, ErrNotFitted) {
				t.Errorf("%s, %s: Predict after a failed Fit: %v", m.Name(), d.name, err)
			}
		}
	}

	settings := []struct {
		m    Method
		want string
	}{
		{&SA{Components: -1}, "Components = -1"},
		{&TCA{Components: -2}, "Components = -2"},
		{&TCA{Mu: -1}, "Mu = -1"},
		{&TCA{Mu: math.NaN()}, "Mu = NaN"},
		{&TCA{Mu: math.Inf(1)}, "Mu = +Inf"},
		{&OTDA{Sinkhorn: true, RegE: -0.1}, "RegE = -0.1"},
		{&OTDA{Sinkhorn: true, RegCl: math.NaN()}, "RegCl = NaN"},
		{&OTDA{Sinkhorn: true, Lpl1: &ot.SinkhornLpl1Settings{P: 2}}, "P must lie in (0, 1]"},
		{&OTDA{Sinkhorn: true, Lpl1: &ot.SinkhornLpl1Settings{Sinkhorn: &ot.SinkhornSettings{MaxIter: -1}}}, "MaxIter must be non-negative"},
		{&WB{Bary: BarycenterSettings{Support: -1}}, "Support -1"},
		{&WB{Bary: BarycenterSettings{Beta: -1}}, "Beta = -1"},
		{&WBT{Bary: BarycenterSettings{MaxIter: -1}}, "MaxIter -1"},
		{&WBT{RegE: math.Inf(1)}, "RegE = +Inf"},
		{&WBT{Lpl1: &ot.SinkhornLpl1Settings{OuterIter: -1}}, "OuterIter must be non-negative"},
	}
	for _, s := range settings {
		err := fit(s.m, src, tgt, 3)
		if err == nil || !strings.HasPrefix(err.Error(), "adapt: "+s.m.Name()+": ") || !strings.Contains(err.Error(), s.want) {
			t.Errorf("%s: error %v, want one containing %q", s.m.Name(), err, s.want)
		}
	}

	// Predict on bad rows after a successful fit.
	for _, m := range baselines() {
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		for _, X := range []*mat.Dense{nil, {}, wide, nan} {
			if _, err := m.Predict(X); err == nil {
				t.Errorf("%s: no error predicting bad rows", m.Name())
			}
		}
	}
}

// When the sources and the target are the same data, both subspaces are
// the same, the alignment is the identity and SA is source-only training
// on the principal components: a rotation of centred data, to which the
// classifier (an L2-penalised softmax regression with a free bias) is
// invariant.
func TestSASameData(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	X := mat.NewDense(120, 6, nil)
	y := make([]int, 120)
	for i := range 120 {
		y[i] = i % 3
		for j := range 6 {
			X.Set(i, j, rng.NormFloat64()+float64(y[i]*(j%2)))
		}
	}
	for _, c := range []struct{ d, wantK int }{{0, 6}, {4, 4}, {6, 6}} {
		d := c.d
		m := &SA{Components: d}
		src := []dataset.Domain{{Name: "s", X: X, Y: y}}
		if err := fit(m, src, X, 3); err != nil {
			t.Fatal(err)
		}
		_, k := m.Alignment.Dims()
		if k != c.wantK {
			t.Errorf("d = %d: %d components, want %d", d, k, c.wantK)
		}
		var I mat.Dense
		I.Sub(m.Alignment, identityMatrix(k))
		if e := mat.Norm(&I, math.Inf(1)); e > 1e-12 {
			t.Errorf("d = %d: ‖M − I‖∞ = %g", d, e)
		}
		if k == 6 {
			// Full rank: SA predicts like source-only.
			so := &SourceOnly{}
			if err := fit(so, src, X, 3); err != nil {
				t.Fatal(err)
			}
			p1, _ := m.Predict(X)
			p2, _ := so.Predict(X)
			a1, a2 := accuracy(p1, y), accuracy(p2, y)
			if a1 != a2 {
				t.Errorf("d = %d: SA accuracy %.4f, source-only %.4f", d, a1, a2)
			}
		}
	}
}

func identityMatrix(n int) *mat.Dense {
	I := mat.NewDense(n, n, nil)
	for i := range n {
		I.Set(i, i, 1)
	}
	return I
}

// The bases are orthonormal, ordered by decreasing variance and capped by
// the rank of each domain, through both Gram paths (n ≥ D and n < D).
func TestSABases(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	D := 12
	rows := func(n int, scale float64) *mat.Dense {
		X := mat.NewDense(n, D, nil)
		for i := range n {
			for j := range D {
				X.Set(i, j, scale*rng.NormFloat64()/float64(j+1))
			}
		}
		return X
	}
	Xs := rows(50, 1)
	ys := make([]int, 50)
	for i := range ys {
		ys[i] = i % 2
	}
	cases := []struct {
		name  string
		tgt   *mat.Dense
		d     int
		wantK int
	}{
		{"n ≥ D", rows(40, 2), 5, 5},
		{"n < D", rows(8, 2), 10, 7}, // 8 centred rows have rank 7
	}
	for _, c := range cases {
		m := &SA{Components: c.d}
		if err := fit(m, []dataset.Domain{{X: Xs, Y: ys}}, c.tgt, 2); err != nil {
			t.Fatal(err)
		}
		for _, P := range []*mat.Dense{m.SourceBasis, m.TargetBasis} {
			_, k := P.Dims()
			if k != c.wantK {
				t.Errorf("%s: %d components, want %d", c.name, k, c.wantK)
			}
			var G mat.Dense
			G.Mul(P.T(), P)
			G.Sub(&G, identityMatrix(k))
			if e := mat.Norm(&G, math.Inf(1)); e > 1e-10 {
				t.Errorf("%s: ‖PᵀP − I‖∞ = %g", c.name, e)
			}
		}
		// Decreasing variance of the projected target.
		Z, err := projectRows(c.tgt, m.TargetMean, m.TargetBasis)
		if err != nil {
			t.Fatal(err)
		}
		prev := math.Inf(1)
		for j := 0; j < c.wantK; j++ {
			v := mat.Dot(Z.ColView(j), Z.ColView(j))
			if v > prev*(1+1e-12) {
				t.Errorf("%s: component %d has more variance than the previous", c.name, j)
			}
			prev = v
		}
	}
}

// baselinesOfficeSURF reads the four Caltech-Office SURF domains, min-max scaled
// together, with their class indices, or skips the test.
func baselinesOfficeSURF(t *testing.T) (map[string]dataset.Domain, int) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping the Caltech-Office smoke test in short mode")
	}
	dir := filepath.Join(testdata.Dir(t, "office-caltech10/surf"), "office-caltech10/surf")
	files := map[string]string{
		"amazon":  "amazon_SURF_L10.mat",
		"caltech": "Caltech10_SURF_L10.mat",
		"dslr":    "dslr_SURF_L10.mat",
		"webcam":  "webcam_SURF_L10.mat",
	}
	names := []string{"amazon", "caltech", "dslr", "webcam"}
	var doms []*dataset.File
	for _, n := range names {
		path := filepath.Join(dir, files[n])
		if _, err := os.Stat(path); err != nil {
			t.Skipf("skipping: Caltech-Office SURF file %s is not available (%v)", path, err)
		}
		d, err := dataset.Read(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		doms = append(doms, d)
	}
	sc, err := dataset.FitScaler(dataset.ScaleMinMax, doms...)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := dataset.NewClasses(doms...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]dataset.Domain{}
	for i, d := range doms {
		s, err := sc.TransformFile(d)
		if err != nil {
			t.Fatal(err)
		}
		y, err := cl.Encode(d.Labels)
		if err != nil {
			t.Fatal(err)
		}
		out[names[i]] = dataset.Domain{Name: names[i], X: s.X, Y: y}
	}
	return out, cl.Len()
}

// TestBaselinesOfficeCaltechSURF adapts amazon + caltech + dslr → webcam (whole
// domains) with every baseline and logs the accuracies on webcam, whose
// labels are used only for scoring. An independent Python implementation
// on the 5-fold protocol reports, target webcam: source-only 51.3%,
// OTDA (EMD) 46.5%.
func TestBaselinesOfficeCaltechSURF(t *testing.T) {
	doms, classes := baselinesOfficeSURF(t)
	src := []dataset.Domain{doms["amazon"], doms["caltech"], doms["dslr"]}
	tgt := doms["webcam"]
	for _, m := range append([]Method{&SourceOnly{}}, baselines()...) {
		start := time.Now()
		if err := fit(m, src, tgt.X, classes); err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		elapsed := time.Since(start)
		pred, err := m.Predict(tgt.X)
		if err != nil {
			t.Fatal(err)
		}
		acc := accuracy(pred, tgt.Y)
		t.Logf("A+C+D → W  %-14s accuracy %.2f%%  Fit %v", m.Name(), 100*acc, elapsed.Round(time.Millisecond))
		if acc < 0.3 { // chance is 10%; all methods reach 45–70% here
			t.Errorf("%s: accuracy %.4f", m.Name(), acc)
		}
	}
}

// TestLeadingEigenPaths checks that the two ways of leadingEigen, a few
// eigenvectors by inverse iteration or all by the QR iteration, agree.
func TestLeadingEigenPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	X := mat.NewDense(300, 120, nil)
	for i := range 300 {
		for j := range 120 {
			X.Set(i, j, rng.NormFloat64()/float64(j+1))
		}
	}
	var G mat.SymDense
	G.SymOuterK(1, X.T())
	few, vecFew, err := leadingEigen(&G, 10) // 10 < 120/4: inverse iteration
	if err != nil {
		t.Fatal(err)
	}
	all, vecAll, err := leadingEigen(&G, 40) // all eigenvectors
	if err != nil {
		t.Fatal(err)
	}
	if len(few) != 10 || len(all) != 40 {
		t.Fatalf("%d and %d eigenvalues", len(few), len(all))
	}
	a, b := make([]float64, 120), make([]float64, 120)
	for c := range 10 {
		if math.Abs(few[c]-all[c]) > 1e-10*all[0] || (c > 0 && few[c] > few[c-1]) {
			t.Errorf("eigenvalue %d: %v and %v", c, few[c], all[c])
		}
		vecFew(c, a)
		vecAll(c, b)
		if d := math.Abs(math.Abs(floats.Dot(a, b)) - 1); d > 1e-9 {
			t.Errorf("eigenvector %d: |⟨a, b⟩| differs from 1 by %g", c, d)
		}
	}
}

// highDimProblem returns a 1024-dimensional source of 4000 rows and a
// target of 2000, with decaying feature scales.
func highDimProblem() ([]dataset.Domain, *mat.Dense) {
	rng := rand.New(rand.NewPCG(1, 2))
	domain := func(n int) *mat.Dense {
		X := mat.NewDense(n, 1024, nil)
		for i := range X.RawMatrix().Data {
			X.RawMatrix().Data[i] = rng.NormFloat64() / float64(1+i%1024)
		}
		return X
	}
	y := make([]int, 4000)
	for i := range y {
		y[i] = i % 3
	}
	return []dataset.Domain{{X: domain(4000), Y: y}}, domain(2000)
}

// BenchmarkSAHighDim fits SA on 1024-dimensional domains, where finding
// the leading principal directions dominates.
func BenchmarkSAHighDim(b *testing.B) {
	src, tgt := highDimProblem()
	b.ResetTimer()
	for range b.N {
		if err := fit((&SA{}), src, tgt, 3); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTCAHighDim fits TCA on the same domains.
func BenchmarkTCAHighDim(b *testing.B) {
	src, tgt := highDimProblem()
	b.ResetTimer()
	for range b.N {
		if err := fit((&TCA{}), src, tgt, 3); err != nil {
			b.Fatal(err)
		}
	}
}

// rankDeficientProblem is highDimProblem with its last 64 features zero
// and feature 1 repeated in feature 2, so that XᵀX is singular.
func rankDeficientProblem() ([]dataset.Domain, *mat.Dense) {
	src, tgt := highDimProblem()
	for _, X := range []*mat.Dense{src[0].X, tgt} {
		r, c := X.Dims()
		for i := 0; i < r; i++ {
			row := X.RawRowView(i)
			row[2] = row[1]
			clear(row[c-64:])
		}
	}
	return src, tgt
}

// BenchmarkTCARankDeficient fits TCA on 1024-dimensional domains whose
// Gram matrix is singular.
func BenchmarkTCARankDeficient(b *testing.B) {
	src, tgt := rankDeficientProblem()
	b.ResetTimer()
	for range b.N {
		if err := fit((&TCA{}), src, tgt, 3); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTCARepeatedRows fits TCA on 2000 rows of 4096 features, 50 of
// them repeated, so that XXᵀ is singular.
func BenchmarkTCARepeatedRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	domain := func(n int, shift float64) *mat.Dense {
		X := mat.NewDense(n, 4096, nil)
		for i := range X.RawMatrix().Data {
			X.RawMatrix().Data[i] = rng.NormFloat64() + shift*float64(i%3)
		}
		return X
	}
	src := domain(1200, 0)
	for i := 0; i < 50; i++ {
		copy(src.RawRowView(i+600), src.RawRowView(i))
	}
	y := make([]int, 1200)
	for i := range y {
		y[i] = i % 3
	}
	tgt := domain(800, 0.1)
	b.ResetTimer()
	for range b.N {
		if err := fit((&TCA{}), []dataset.Domain{{X: src, Y: y}}, tgt, 3); err != nil {
			b.Fatal(err)
		}
	}
}
