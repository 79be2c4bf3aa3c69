package dictionary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
)

// TestHardLabels: with Settings.HardLabels, NewModel trains DaDiL-R on the
// argmax of the reconstruction's labels and every DaDiL-E classifier on the
// argmax of its atom's labels; without it, on the soft labels, which gives
// other classifiers.
func TestHardLabels(t *testing.T) {
	ds, p := synthDomains(4)
	d, err := Fit(ds, p.Classes, &Settings{Atoms: 3, Epochs: 3, PlateauTol: -1, Seed: 4, EnsembleTransport: TransportNone})
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b *classify.Softmax) bool {
		return mat.Equal(a.W, b.W) && floats.Equal(a.B, b.B)
	}
	soft, err := NewModel(d, len(ds)-1, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	hd := *d
	hd.Settings.HardLabels = true
	hard, err := NewModel(&hd, len(ds)-1, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	// The reconstruction does not depend on the labels' use.
	if !mat.Equal(soft.Reconstruction.X, hard.Reconstruction.X) {
		t.Fatal("reconstructions differ")
	}
	wantR, _, err := classify.FitLabels(hard.Reconstruction.X, classify.Argmax(hard.Reconstruction.Y), p.Classes, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !same(hard.R.(*classify.Softmax), wantR) {
		t.Error("hard DaDiL-R classifier is not the one trained on the argmax labels")
	}
	if same(soft.R.(*classify.Softmax), wantR) {
		t.Error("soft DaDiL-R classifier equals the hard one")
	}
	for k, a := range d.Atoms {
		want, _, err := classify.FitLabels(a.X, classify.Argmax(a.Labels()), p.Classes, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !same(hard.E[k].(*classify.Softmax), want) {
			t.Errorf("atom %d: hard DaDiL-E classifier is not the one trained on the argmax labels", k)
		}
		if same(soft.E[k].(*classify.Softmax), want) {
			t.Errorf("atom %d: soft DaDiL-E classifier equals the hard one", k)
		}
	}
}

// handDictionary returns K atoms of n points in R^3 with random features
// and label logits over c classes, class q holding about a share
// proportional to q+1 of each atom's points (imbalanced classes).
func handDictionary(K, n, c int, seed uint64) *Dictionary {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &Dictionary{Classes: c, Alpha: mat.NewDense(1, K, nil)}
	for range K {
		X := mat.NewDense(n, 3, nil)
		Z := mat.NewDense(n, c, nil)
		for i := range n {
			for j := range 3 {
				X.Set(i, j, rng.NormFloat64())
			}
			q := int(math.Sqrt(rng.Float64()) * float64(c)) // P(q) ∝ 2q+1
			for r := range c {
				Z.Set(i, r, 0.3*rng.NormFloat64())
			}
			Z.Set(i, q, 3)
		}
		d.Atoms = append(d.Atoms, Atom{X: X, Logits: Z})
	}
	return d
}

// TestReconstructBlocks: atoms larger than ReconstructionBlock are
// reconstructed block by block: n support points, block-diagonal
// permutation plans of mass 1/n whose barycentric images are the support
// and its labels, blocks with each atom's class proportions (every class
// count within 1 of its share), a history that ends at the cost; with a
// block size of n or more the result is the single barycenter's.
func TestReconstructBlocks(t *testing.T) {
	const K, n, c, block = 2, 61, 4, 16 // 4 blocks of 16, 15, 15, 15
	d := handDictionary(K, n, c, 5)
	alpha := []float64{0.3, 0.7}
	d.Settings.ReconstructionBlock = block
	r, err := d.Reconstruct(alpha, 9)
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := r.X.Dims(); rows != n {
		t.Fatalf("%d support points, want %d", rows, n)
	}
	labels := make([]*mat.Dense, K)
	for k, a := range d.Atoms {
		labels[k] = a.Labels()
	}
	// src[k][j]: the point of atom k sent to support point j.
	src := make([][]int, K)
	for k, p := range r.Plans {
		if p.N != n || p.M != n || p.Len() != n {
			t.Fatalf("plan %d: %d×%d with %d entries", k, p.N, p.M, p.Len())
		}
		src[k] = make([]int, n)
		seenRow := make([]bool, n)
		for e := range p.Len() {
			if seenRow[p.Row[e]] || math.Abs(p.Mass[e]-1.0/n) > 1e-15 {
				t.Fatalf("plan %d is not a permutation of mass 1/n", k)
			}
			seenRow[p.Row[e]] = true
			src[k][p.Col[e]] = p.Row[e]
		}
	}
	for j := range n {
		for _, m := range []struct{ got, a0, a1 *mat.Dense }{
			{r.X, d.Atoms[0].X, d.Atoms[1].X},
			{r.Y, labels[0], labels[1]},
		} {
			_, cols := m.got.Dims()
			for q := range cols {
				want := alpha[0]*m.a0.At(src[0][j], q) + alpha[1]*m.a1.At(src[1][j], q)
				if math.Abs(m.got.At(j, q)-want) > 1e-12 {
					t.Fatalf("support point %d, column %d: %g, image of the plans %g", j, q, m.got.At(j, q), want)
				}
			}
		}
	}
	// Blocks: support rows [0, 16), [16, 31), [31, 46), [46, 61).
	starts := []int{0, 16, 31, 46, 61}
	for k := range K {
		total := make([]int, c)
		for _, q := range classify.Argmax(labels[k]) {
			total[q]++
		}
		for b := range 4 {
			count := make([]int, c)
			for j := starts[b]; j < starts[b+1]; j++ {
				count[floats.MaxIdx(labels[k].RawRowView(src[k][j]))]++
			}
			for q := range c {
				if share := float64(total[q]) / 4; math.Abs(float64(count[q])-share) > 1 {
					t.Errorf("atom %d, block %d: %d points of class %d, share %g", k, b, count[q], q, share)
				}
			}
		}
	}
	if last := r.History[len(r.History)-1]; last != r.Cost || len(r.History) != r.Iterations {
		t.Errorf("history %v ends at %g, cost %g, %d iterations", r.History, last, r.Cost, r.Iterations)
	}
	if want := alpha[0]*r.Costs[0] + alpha[1]*r.Costs[1]; math.Abs(r.Cost-want) > 1e-12*want {
		t.Errorf("cost %g, Σ α_k cost_k %g", r.Cost, want)
	}
	// One block: the single barycenter, as with blocks switched off.
	d.Settings.ReconstructionBlock = n
	whole, err := d.Reconstruct(alpha, 9)
	if err != nil {
		t.Fatal(err)
	}
	d.Settings.ReconstructionBlock = -1
	if off, _ := d.Reconstruct(alpha, 9); !mat.Equal(whole.X, off.X) || !mat.Equal(whole.Y, off.Y) {
		t.Error("ReconstructionBlock = n and −1 give different barycenters")
	}
}

// TestReconstructBlocksOneAtom: the barycenter of one atom is the atom,
// block by block too: the reconstruction's points and labels are the
// atom's, reordered.
func TestReconstructBlocksOneAtom(t *testing.T) {
	d := handDictionary(1, 50, 3, 6)
	d.Settings.ReconstructionBlock = 12
	r, err := d.Reconstruct([]float64{1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	key := func(X, Y *mat.Dense, i int) string {
		return fmt.Sprint(X.RawRowView(i), Y.RawRowView(i))
	}
	var got, want []string
	Y := d.Atoms[0].Labels()
	for i := range 50 {
		got = append(got, key(r.X, r.Y, i))
		want = append(want, key(d.Atoms[0].X, Y, i))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Error("the blocked barycenter of one atom is not the atom")
	}
}

// BenchmarkReconstructManyClasses times DaDiL-R's reconstruction from 3
// atoms of 100 points per class for 65 classes (6500 points in R^256:
// Gaussian classes with labels at 90% confidence), in one barycenter and
// in blocks.
func BenchmarkReconstructManyClasses(b *testing.B) {
	const K, c, per, dim = 3, 65, 100, 256
	n := c * per
	rng := rand.New(rand.NewPCG(7, 8))
	means := mat.NewDense(c, dim, nil)
	for q := range c {
		for j := range dim {
			means.Set(q, j, 2*rng.NormFloat64())
		}
	}
	d := &Dictionary{Classes: c}
	for range K {
		X := mat.NewDense(n, dim, nil)
		Z := mat.NewDense(n, c, nil)
		for i := range n {
			q := i % c
			for j := range dim {
				X.Set(i, j, means.At(q, j)+rng.NormFloat64())
			}
			Z.Set(i, q, math.Log(0.9*float64(c-1)/0.1)) // softmax: 0.9 on q
		}
		d.Atoms = append(d.Atoms, Atom{X: X, Logits: Z})
	}
	alpha := []float64{0.2, 0.3, 0.5}
	d.Alpha = mat.NewDense(1, K, alpha)
	for _, block := range []int{-1, 4096, DefaultReconstructionBlock} {
		b.Run(fmt.Sprint("block=", block), func(b *testing.B) {
			d.Settings.ReconstructionBlock = block
			for range b.N {
				if _, err := d.Reconstruct(alpha, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestModelErrors: incomplete dictionaries and models, features of the
// wrong shape and weights off the simplex are errors prefixed
// "dictionary: ", never panics or numbers that are not probabilities.
func TestModelErrors(t *testing.T) {
	ds, p := synthDomains(4)
	d, err := Fit(ds, p.Classes, &Settings{Atoms: 2, Epochs: 2, PlateauTol: -1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(d, len(ds)-1, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	X := ds[0].X
	_, dim := X.Dims()
	wide := mat.NewDense(3, dim+1, nil)
	noLogits := *d
	noLogits.Atoms = []Atom{d.Atoms[0], {X: d.Atoms[1].X}}
	badDim := *d
	badDim.Atoms = []Atom{d.Atoms[0], {X: wide, Logits: mat.NewDense(3, p.Classes, nil)}}
	badAlpha := *d
	badAlpha.Alpha = mat.NewDense(4, 3, nil)
	noE := *m
	noE.E = m.E[:1]
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"nil dictionary", func() error { _, err := NewModel(nil, 0, nil, 1); return err }, "no atoms"},
		{"empty dictionary", func() error { _, err := NewModel(&Dictionary{}, 0, nil, 1); return err }, "no atoms"},
		{"atom without logits", func() error { _, err := NewModel(&noLogits, 0, nil, 1); return err }, "atom 1 has no label logits"},
		{"atom dimension", func() error { _, err := badDim.Reconstruct([]float64{1, 0}, 1); return err }, "atom 1 has 3 features"},
		{"alpha columns", func() error { _, _, err := badAlpha.ClassifierR([]float64{0.5, 0.5}, nil, 1); return err }, "α has 3 columns for 2 atoms"},
		{"reconstruct off simplex", func() error { _, err := d.Reconstruct([]float64{0.5, 0.6}, 1); return err }, "dictionary: reconstruction: barycenter: α must lie on the simplex"},
		{"target row", func() error { _, err := NewModel(d, 7, nil, 1); return err }, "target row 7"},
		{"nil model", func() error { var nm *Model; _, err := nm.PredictR(X); return err }, "no model"},
		{"model without E", func() error { _, err := noE.PredictE(X); return err }, "no classifiers"},
		{"PredictE nil X", func() error { _, err := m.PredictE(nil); return err }, "features X are empty"},
		{"PredictR nil X", func() error { _, err := m.PredictR(nil); return err }, "features X are empty"},
		{"PredictR width", func() error { _, err := m.PredictR(wide); return err }, "dictionary: DaDiL-R: classify:"},
		{"PredictE width", func() error { _, err := m.PredictE(wide); return err }, "dictionary: DaDiL-E: classify:"},
		{"weights count", func() error { _, err := m.ProbaEWith([]float64{1}, X); return err }, "1 weights for 2 atoms"},
		{"weights negative", func() error { _, err := m.ProbaEWith([]float64{5, -4}, X); return err }, "weight 1 is -4"},
		{"weights sum", func() error { _, err := m.ProbaEWith([]float64{0.3, 0.3}, X); return err }, "sum to 0.59999"},
		{"weights NaN", func() error { _, err := m.ProbaEWith([]float64{math.NaN(), 1}, X); return err }, "weight 0 is NaN"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.HasPrefix(err.Error(), "dictionary: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one prefixed \"dictionary: \" containing %q", err, tc.want)
			}
		})
	}
	// Weights on the simplex give probability vectors.
	P, err := m.ProbaEWith([]float64{0.25, 0.75}, X)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := P.Dims()
	for i := 0; i < r; i++ {
		if s := floats.Sum(P.RawRowView(i)); math.Abs(s-1) > 1e-12 {
			t.Fatalf("row %d of DaDiL-E's probabilities sums to %g", i, s)
		}
	}
}

// TestEnsembleOnReconstruction: by default every DaDiL-E classifier trains
// on its atom moved onto the reconstruction through the barycenter's plan,
// with the atom's own labels.
func TestEnsembleOnReconstruction(t *testing.T) {
	ds, p := synthDomains(5)
	d, err := Fit(ds, p.Classes, &Settings{Atoms: 3, Epochs: 3, PlateauTol: -1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if d.Settings.Transport != TransportSources || d.Settings.EnsembleTransport != TransportBarycenter {
		t.Fatalf("default transports %v, %v", d.Settings.Transport, d.Settings.EnsembleTransport)
	}
	m, err := NewModel(d, len(ds)-1, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	rec := m.Reconstruction
	for k, a := range d.Atoms {
		var X mat.Dense
		if err := rec.Plans[k].BarycentricMap(&X, rec.X); err != nil {
			t.Fatal(err)
		}
		// Every moved point is a point of the reconstruction (the plans
		// of equal uniform measures are permutations).
		for i := range X.RawMatrix().Rows {
			found := false
			for j := range rec.X.RawMatrix().Rows {
				found = found || floats.Equal(X.RawRowView(i), rec.X.RawRowView(j))
			}
			if !found {
				t.Fatalf("atom %d: point %d moved off the reconstruction", k, i)
			}
		}
		want, _, err := classify.Fit(&X, a.Labels(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := m.E[k].(*classify.Softmax)
		if !mat.Equal(got.W, want.W) || !floats.Equal(got.B, want.B) {
			t.Errorf("atom %d: DaDiL-E classifier is not the one trained on the atom moved onto the reconstruction", k)
		}
	}
}

// TestFitModelChoosesPenalty: with Settings.ChoosePenalty and the default
// trainer, FitModel chooses DaDiL-R's penalty on the sources
// (Model.Penalty, R is the chosen regression) and trains DaDiL-E's
// classifiers with it; without it, it makes no choice; with another
// trainer it is an error.
func TestFitModelChoosesPenalty(t *testing.T) {
	_, p := synthDomains(4)
	base := Settings{Atoms: 3, Epochs: 3, PlateauTol: -1, Seed: 4, EnsembleTransport: TransportNone}
	choose := base
	choose.ChoosePenalty = true
	m, err := FitModel(p, &choose, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Penalty == nil || !slices.Contains(classify.DefaultL2Grid, m.Penalty.L2) || m.R != classify.Classifier(m.Penalty.Model) {
		t.Fatalf("penalty choice %+v: want one of the default grid, whose model is R", m.Penalty)
	}
	// DaDiL-E's atom 0 classifier is the regression of λ on its atom.
	a := m.Dict.Atoms[0]
	want, _, err := classify.Fit(a.X, a.Labels(), nil, &classify.Settings{L2: m.Penalty.L2})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.E[0].(*classify.Softmax); !mat.Equal(got.W, want.W) || !floats.Equal(got.B, want.B) {
		t.Fatalf("DaDiL-E's classifier of atom 0 is not trained with the chosen λ = %g", m.Penalty.L2)
	}
	if m, err := FitModel(p, &base, nil); err != nil || m.Penalty != nil {
		t.Fatalf("without ChoosePenalty: %v, penalty %+v", err, m.Penalty)
	}
	for _, tr := range []classify.Trainer{&classify.SoftmaxTrainer{Settings: &classify.Settings{NoPenalty: true}}, &classify.KNN{}} {
		_, err := FitModel(p, &choose, tr)
		if err == nil || !strings.Contains(err.Error(), "Settings.ChoosePenalty chooses the penalty of a penalised softmax regression") {
			t.Errorf("%s: error %v", tr.Name(), err)
		}
	}
	// A softmax regression of another penalty λ₀ anchors the choice there.
	m1, err := FitModel(p, &choose, &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: 1e-2}})
	if err != nil || m1.Penalty == nil || !slices.Contains(classify.DefaultL2Grid, m1.Penalty.L2) {
		t.Fatalf("λ₀ = 0.01: %v, penalty %+v", err, m1.Penalty)
	}
}
