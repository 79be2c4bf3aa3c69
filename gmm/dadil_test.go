package gmm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/dadil/dadil/synth"
)

// synthMixtures fits the mixtures of the synthetic problem of synth
// (seed): FitLabeled with two components per class on every source, Fit
// with six components on the target. It returns the target rows and
// labels too.
func synthMixtures(t testing.TB, seed uint64) (src []*Mixture, tgt *Mixture, X *mat.Dense, y []int) {
	t.Helper()
	p := synth.Generate(synth.Default(), seed)
	for i, s := range p.Sources {
		r, err := FitLabeled(s.X, s.Y, p.Classes, &Settings{Components: 2, Seed: uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, r.Mixture)
	}
	r, err := Fit(p.Target.X, &Settings{Components: 2 * p.Classes, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	return src, r.Mixture, p.Test.X, p.Test.Y
}

func TestLearnDictionaryLossDecreasesAndClassifiesTarget(t *testing.T) {
	src, tgt, X, y := synthMixtures(t, 1)
	d, err := LearnDictionary(src, tgt, &DictionarySettings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	first, last := d.Loss[0], d.Loss[len(d.Loss)-1]
	t.Logf("%d epochs (%v), loss %.4g → %.4g, α_T %v", d.Epochs, d.Status, first, last, d.Alpha.RawRowView(len(src)))
	if !(last < 0.5*first) {
		t.Errorf("loss %.4g → %.4g: not halved", first, last)
	}
	if d.Status != optimize.FunctionConvergence && d.Status != optimize.IterationLimit {
		t.Errorf("status %v", d.Status)
	}
	pred, err := d.Target().Predict(X)
	if err != nil {
		t.Fatal(err)
	}
	var P mat.Dense
	if err := d.EnsembleProba(&P, X, d.Alpha.RawRowView(len(src))); err != nil {
		t.Fatal(err)
	}
	accR, accE := 0.0, 0.0
	for i, c := range y {
		if pred[i] == c {
			accR++
		}
		if argmax(P.RawRowView(i)) == c {
			accE++
		}
	}
	accR /= float64(len(y))
	accE /= float64(len(y))
	t.Logf("accuracy R %.3f, E %.3f", accR, accE)
	// Three classes: chance is 1/3.
	if accR < 0.8 {
		t.Errorf("GMM-DaDiL-R accuracy %.3f", accR)
	}
}

// fixedPlanLoss returns the loss of the learner's current parameters with
// the plans pls held fixed, and its gradient with respect to the free
// parameters (a copy: the learner reuses its own).
func fixedPlanLoss(l *learner, pls []*domainPlans) (float64, *params) {
	atoms := l.p.atoms(0)
	var loss float64
	for i, Q := range l.domains {
		alpha := l.p.alpha.RawRowView(i)
		B := project(templateOf(atoms[0]), pls[i].bary, atoms, alpha)
		evalDomain(l.grads[i], B, atoms, alpha, Q, pls[i], &scratch{})
		loss += l.grads[i].loss
	}
	g := l.gradient(atoms)
	c := &params{alpha: mat.DenseCopyOf(g.alpha)}
	for k := range g.means {
		c.means = append(c.means, mat.DenseCopyOf(g.means[k]))
		c.logStd = append(c.logStd, mat.DenseCopyOf(g.logStd[k]))
		c.logits = append(c.logits, mat.DenseCopyOf(g.logits[k]))
	}
	return loss, c
}

func TestDictionaryGradientMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const d, c = 3, 2
	var src []*Mixture
	for range 2 {
		m := randMixture(rng, 4, d, c, 3, false)
		for k := range 4 {
			m.Labels.SetRow(k, []float64{float64(k % 2), float64(1 - k%2)})
		}
		src = append(src, m)
	}
	tgt := randMixture(rng, 5, d, 0, 3, false)
	for _, beta := range []float64{0, 0.7} {
		set, _ := (&DictionarySettings{Atoms: 3, Beta: beta, Seed: 2}).withDefaults(2)
		l := newLearner(src, tgt, c, set)
		// Move every parameter away from its start: labels not one-hot,
		// coordinates inside the simplex.
		for k := range set.Atoms {
			for _, M := range []*mat.Dense{l.p.means[k], l.p.logStd[k], l.p.logits[k]} {
				for i, v := range raw(M) {
					raw(M)[i] = v + 0.3*rng.NormFloat64()
				}
			}
		}
		for i := range len(l.domains) {
			row := l.p.alpha.RawRowView(i)
			var sum float64
			for k := range row {
				row[k] = 0.2 + rng.Float64()
				sum += row[k]
			}
			for k := range row {
				row[k] /= sum
			}
		}
		atoms := l.p.atoms(0)
		pls := make([]*domainPlans, len(l.domains))
		for i := range pls {
			var err error
			if pls[i], err = l.plans(i, atoms, stack(atoms...), l.p.alpha.RawRowView(i)); err != nil {
				t.Fatal(err)
			}
		}
		_, g := fixedPlanLoss(l, pls)
		check := func(what string, p, gp []float64) {
			const h = 1e-6
			var mx float64
			for _, v := range gp {
				mx = math.Max(mx, math.Abs(v))
			}
			if mx < 1e-3 {
				t.Errorf("β = %v: ∂L/∂%s vanishes: the check would be vacuous", beta, what)
			}
			for i := range p {
				v := p[i]
				p[i] = v + h
				fp, _ := fixedPlanLoss(l, pls)
				p[i] = v - h
				fm, _ := fixedPlanLoss(l, pls)
				p[i] = v
				if fd := (fp - fm) / (2 * h); !near(fd, gp[i], 1e-6) {
					t.Errorf("β = %v: ∂L/∂%s[%d] = %.10g, finite difference %.10g", beta, what, i, gp[i], fd)
				}
			}
		}
		for k := range set.Atoms {
			check("means", raw(l.p.means[k]), raw(g.means[k]))
			check("logStd", raw(l.p.logStd[k]), raw(g.logStd[k]))
			check("logits", raw(l.p.logits[k]), raw(g.logits[k]))
		}
		check("alpha", raw(l.p.alpha), raw(g.alpha))
	}
}

func TestLearnDictionaryBitIdenticalAcrossGOMAXPROCS(t *testing.T) {
	src, tgt, _, _ := synthMixtures(t, 2)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ref *Dictionary
	for _, c := range []struct{ procs, workers int }{{1, 0}, {4, 0}, {4, 1}, {2, 3}} {
		runtime.GOMAXPROCS(c.procs)
		d, err := LearnDictionary(src, tgt, &DictionarySettings{Atoms: 4, Seed: 5, Workers: c.workers})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = d
			continue
		}
		same := sameBits(ref.Alpha, d.Alpha) && len(ref.Loss) == len(d.Loss)
		for k := range d.Atoms {
			same = same && sameBits(ref.Atoms[k].Means, d.Atoms[k].Means) && sameBits(ref.Atoms[k].Std, d.Atoms[k].Std) &&
				sameBits(ref.Atoms[k].Labels, d.Atoms[k].Labels)
		}
		same = same && sameBits(ref.Target().Means, d.Target().Means)
		if !same {
			t.Errorf("GOMAXPROCS %d, workers %d: another dictionary", c.procs, c.workers)
		}
	}
}

func TestDictionaryReconstruct(t *testing.T) {
	src, tgt, X, _ := synthMixtures(t, 3)
	d, err := LearnDictionary(src, tgt, &DictionarySettings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Reconstructions) != len(src)+1 || d.Target() != d.Reconstructions[len(src)] {
		t.Fatalf("%d reconstructions", len(d.Reconstructions))
	}
	// The reconstructions are labeled mixtures of the atoms' shape, and a
	// vertex of the simplex reconstructs its atom.
	for k, a := range d.Atoms {
		e := make([]float64, len(d.Atoms))
		e[k] = 1
		B, err := d.Reconstruct(e)
		if err != nil {
			t.Fatal(err)
		}
		sameMixture(t, B, a, 1e-12)
	}
	pa, err := d.Target().Predict(X)
	if err != nil {
		t.Fatal(err)
	}
	B, err := d.Reconstruct(d.Alpha.RawRowView(len(src)))
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := B.Predict(X)
	agree := 0
	for i := range pa {
		if pa[i] == pb[i] {
			agree++
		}
	}
	// From the atom of the largest coordinate instead of the last step's
	// plans, the iteration may end at another fixed point, but a close
	// one.
	if float64(agree) < 0.95*float64(len(pa)) {
		t.Errorf("Reconstruct(α_T) and Target agree on %d of %d rows", agree, len(pa))
	}
	if _, err := d.Reconstruct([]float64{1}); err == nil {
		t.Error("one coordinate for three atoms accepted")
	}
	wantErr(t, func() error { _, err := d.Reconstruct([]float64{0.5, 0.6, -0.1}); return err }(), "α[2]")
	wantErr(t, d.EnsembleProba(&mat.Dense{}, X, []float64{1}), "EnsembleProba", "1 coordinates")
}

func TestLearnDictionaryErrors(t *testing.T) {
	src, tgt, _, _ := synthMixtures(t, 4)
	unlabeled := src[1].Clone()
	unlabeled.Labels = nil
	fewer := src[1].Clone()
	fewer.Labels = mat.NewDense(fewer.Components(), 2, nil)
	wide := randMixture(rand.New(rand.NewPCG(1, 1)), 3, 5, 0, 1, true)
	nan := tgt.Clone()
	nan.Means.Set(0, 0, math.NaN())
	for _, tc := range []struct {
		what string
		src  []*Mixture
		tgt  *Mixture
		s    *DictionarySettings
		want []string
	}{
		{"no sources", nil, tgt, nil, []string{"no source"}},
		{"unlabeled source", []*Mixture{src[0], unlabeled}, tgt, nil, []string{"source 1 is not labeled"}},
		{"classes", []*Mixture{src[0], fewer}, tgt, nil, []string{"source 1 has 2 classes"}},
		{"dimension", src, wide, nil, []string{"dimension 5"}},
		{"bad target", src, nan, nil, []string{"target", "NaN"}},
		{"nil target", src, nil, nil, []string{"target", "nil"}},
		{"atoms", src, tgt, &DictionarySettings{Atoms: -1}, []string{"Atoms = -1"}},
		{"rate", src, tgt, &DictionarySettings{LearningRate: math.Inf(1)}, []string{"LearningRate"}},
		{"beta", src, tgt, &DictionarySettings{Beta: -2}, []string{"Beta = -2"}},
		{"plateau", src, tgt, &DictionarySettings{PlateauTol: math.NaN()}, []string{"PlateauTol"}},
		{"divergence", src, tgt, &DictionarySettings{LearningRate: 1e300}, []string{"diverged"}},
	} {
		_, err := LearnDictionary(tc.src, tc.tgt, tc.s)
		if err == nil {
			t.Errorf("%s: no error", tc.what)
			continue
		}
		wantErr(t, err, tc.want...)
	}
}

// TestDictionaryAtomsOnto: at a vertex e_k of the simplex every atom moves
// onto atom k (B(e_k; P) = P_k), atom k onto itself; at α_T every moved
// atom keeps its weights and labels, its components are convex
// combinations of the reconstruction's (here, with equal weights, the
// plans are permutations: its components are the reconstruction's), and
// bad coordinates are errors.
func TestDictionaryAtomsOnto(t *testing.T) {
	src, tgt, _, _ := synthMixtures(t, 3)
	d, err := LearnDictionary(src, tgt, &DictionarySettings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	K := len(d.Atoms)
	e := make([]float64, K)
	e[1] = 1
	moved, err := d.AtomsOnto(e)
	if err != nil {
		t.Fatal(err)
	}
	sameMixture(t, moved[1], d.Atoms[1], 1e-12)
	alpha := d.Alpha.RawRowView(len(src))
	B, err := d.Reconstruct(alpha)
	if err != nil {
		t.Fatal(err)
	}
	if moved, err = d.AtomsOnto(alpha); err != nil {
		t.Fatal(err)
	}
	for k, m := range moved {
		a := d.Atoms[k]
		if !slices.Equal(m.Weights, a.Weights) || !mat.Equal(m.Labels, a.Labels) {
			t.Errorf("atom %d: weights or labels changed", k)
		}
		for i := range m.Components() {
			found := false
			for j := range B.Components() {
				if mat.EqualApprox(m.Means.RowView(i), B.Means.RowView(j), 1e-12) && mat.EqualApprox(m.Std.RowView(i), B.Std.RowView(j), 1e-12) {
					found = true
				}
			}
			if !found {
				t.Errorf("atom %d, component %d is not a component of B(α_T; P)", k, i)
			}
		}
	}
	if _, err := d.AtomsOnto(e[:1]); err == nil || !strings.Contains(err.Error(), "gmm: AtomsOnto: 1 coordinates") {
		t.Errorf("error %v", err)
	}
}

// TestClassWeights: with one-hot labels the reweighed components give
// every class its proportion; soft labels mix the scalings of their
// classes; the weights sum to 1, and a class without mass in the mixture
// gets none.
func TestClassWeights(t *testing.T) {
	B := &Mixture{Weights: []float64{0.25, 0.25, 0.25, 0.25},
		Labels: mat.NewDense(4, 3, []float64{1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1})}
	for _, p := range [][]float64{{0.5, 0.25, 0.25}, {0.9, 0.05, 0.05}, {1, 0, 0}} {
		w := classWeights(nil, B, p)
		mass := make([]float64, 3)
		for j, v := range w {
			floats.AddScaled(mass, v, B.Labels.RawRowView(j))
		}
		if !floats.EqualApprox(mass, p, 1e-12) || math.Abs(floats.Sum(w)-1) > 1e-12 {
			t.Errorf("p %v: weights %v, class masses %v", p, w, mass)
		}
	}
	// Soft labels: class masses m = (0.5, 0.175, 0.325), scalings p/m =
	// (1, 10/7, 10/13); component 3 of labels (0, 0.5, 0.5) gets
	// 0.25·(0.5·10/7 + 0.5·10/13).
	B.Labels = mat.NewDense(4, 3, []float64{1, 0, 0, 1, 0, 0, 0, 0.5, 0.5, 0, 0.2, 0.8})
	w := classWeights(nil, B, []float64{0.5, 0.25, 0.25})
	if want := 0.25 * (0.5*10.0/7 + 0.5*10.0/13); math.Abs(w[2]-want) > 1e-15 || math.Abs(floats.Sum(w)-1) > 1e-12 {
		t.Errorf("soft labels: weights %v, want w[2] = %v and a sum of 1", w, want)
	}
	// Class 2 has no mass: the others share it in their proportions.
	B.Labels = mat.NewDense(4, 3, []float64{1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0})
	w = classWeights(nil, B, []float64{0.3, 0.2, 0.5})
	if want := []float64{0.3, 0.3, 0.2, 0.2}; !floats.EqualApprox(w, want, 1e-12) {
		t.Errorf("class without mass: weights %v, want %v", w, want)
	}
	// Only class 2: B's own weights.
	w = classWeights(w, B, []float64{0, 0, 1})
	if !slices.Equal(w, B.Weights) {
		t.Errorf("only a class without mass: weights %v, want %v", w, B.Weights)
	}
}

// TestLearnDictionaryTargetClassesErrors: TargetClasses must hold one
// proportion per class, on the simplex.
func TestLearnDictionaryTargetClassesErrors(t *testing.T) {
	src, tgt, _, _ := synthMixtures(t, 1)
	c := src[0].Classes()
	for _, tc := range []struct {
		p    []float64
		want string
	}{
		{[]float64{1}, fmt.Sprintf("has 1 proportions for %d classes", c)},
		{append([]float64{-0.5, 1.5}, make([]float64, c-2)...), "TargetClasses[0] = -0.5"},
		{append([]float64{0.5, 0.4}, make([]float64, c-2)...), "sum to 0.9"},
	} {
		_, err := LearnDictionary(src, tgt, &DictionarySettings{TargetClasses: tc.p, Epochs: 1})
		if err == nil || !strings.HasPrefix(err.Error(), "gmm: LearnDictionary: DictionarySettings.TargetClasses") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("TargetClasses %v: error %v, want %q", tc.p, err, tc.want)
		}
	}
}
