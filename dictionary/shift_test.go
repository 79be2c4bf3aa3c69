package dictionary

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/testproblem"
)

// TestQuotas: n_b rows shared in proportion to h among the classes
// present, by largest remainders; nil when h weighs none of them.
func TestQuotas(t *testing.T) {
	for _, c := range []struct {
		h       []float64
		present []bool
		nb      int
		want    []int
	}{
		{[]float64{0.25, 0.25, 0.25, 0.25}, []bool{true, true, true, true}, 20, []int{5, 5, 5, 5}},
		{[]float64{0.5, 0.3, 0.2}, []bool{true, true, true}, 12, []int{6, 4, 2}},
		{[]float64{0.5, 0.3, 0.2}, []bool{true, false, true}, 7, []int{5, 0, 2}},
		{[]float64{0.1, 0.1, 0.8}, []bool{true, true, true}, 3, []int{0, 0, 3}},
	} {
		got := quotas(c.h, c.present, c.nb)
		if !slices.Equal(got, c.want) {
			t.Errorf("quotas(%v, %v, %d) = %v, want %v", c.h, c.present, c.nb, got, c.want)
		}
	}
	if q := quotas([]float64{0, 1}, []bool{true, false}, 5); q != nil {
		t.Errorf("no weight on the present classes: %v, want nil", q)
	}
}

// shiftedProblem returns the six classes of lackingProblem in three
// complete, balanced sources and a target whose classes have the
// proportions 10:5:2:1:1:1 (with its labels, to score).
func shiftedProblem() (*dataset.Problem, []int) {
	rng := rand.New(rand.NewPCG(12, 12))
	means := classMeans(rng)
	target := testproblem.Domain(rng, means, []int{60, 30, 12, 6, 6, 6}, 1, 1.5)
	y := target.Y
	p := &dataset.Problem{Classes: 6, Target: dataset.Domain{Name: "target", X: target.X}}
	for l, shift := range []float64{0, 0.5, 1} {
		d := classDomain(rng, means, 40, shift, nil, true)
		d.Name = []string{"s1", "s2", "s3"}[l]
		p.Sources = append(p.Sources, d)
	}
	return p, y
}

// TestEstimateShift: on a target whose classes are far from equally
// frequent, Settings.EstimateShift estimates its proportions and DaDiL-R
// classifies it as well as the sources' classes are separated; with
// class-balanced atom batches, the mass of the rare classes moves onto
// the common ones (about 70% on such a problem).
func TestEstimateShift(t *testing.T) {
	p, y := shiftedProblem()
	priors, err := estimatePriors(p.Domains(), 6, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{10.0 / 20, 5.0 / 20, 2.0 / 20, 1.0 / 20, 1.0 / 20, 1.0 / 20}
	for k, h := range priors[3].Drawn {
		if math.Abs(h-want[k]) > 0.03 || priors[0].Estimate != nil {
			t.Fatalf("estimated proportions %+v, want about %v (and none for the sources)", priors, want)
		}
	}
	score := func(shift bool) float64 {
		m, acc := fitScoreR(t, p, &Settings{Seed: 1, Epochs: 40, EstimateShift: shift}, y)
		if h := m.Dict.History.TargetClasses; shift != (len(h) == 4 && h[3].Drawn != nil) {
			t.Fatalf("EstimateShift %v: History.TargetClasses %+v", shift, h)
		}
		return acc
	}
	with, without := score(true), score(false)
	t.Logf("DaDiL-R %.1f%% with EstimateShift, %.1f%% without", 100*with, 100*without)
	if with < 0.95 {
		t.Errorf("DaDiL-R %.1f%% with EstimateShift, want ≥ 95%%", 100*with)
	}
}

// TestEstimatePriorsError: the target's proportions are estimated when
// the estimator, tried on every source held out, errs by less than the
// shift it finds in the target, and left equal (nil) when a source far
// from the others (every feature shifted by 8), whose proportions the
// others' regression then misjudges, shows that its error can be larger.
func TestEstimatePriorsError(t *testing.T) {
	p, _ := shiftedProblem()
	priors, err := estimatePriors(p.Domains(), 6, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{10.0 / 20, 5.0 / 20, 2.0 / 20, 1.0 / 20, 1.0 / 20, 1.0 / 20}
	if priors[0].Estimate != nil || len(priors[3].Drawn) != 6 || len(priors[3].Estimate) != 6 {
		t.Fatalf("priors %+v: want none for the sources, the target's", priors)
	}
	u := []float64{1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6}
	if e, tv := priors[3].Error, totalVariation(priors[3].Estimate, u); !(e > 0) || math.Abs(totalVariation(priors[3].Drawn, u)-(tv-e)) > 1e-12 {
		t.Errorf("estimate %v at %g from equal proportions, error %g: proportions %v at %g, want %g", priors[3].Estimate, tv, e, priors[3].Drawn, totalVariation(priors[3].Drawn, u), tv-e)
	}
	for k, h := range priors[3].Drawn {
		if math.Abs(h-want[k]) > 0.03 {
			t.Fatalf("estimated proportions %v, want about %v", priors[3], want)
		}
	}
	far := p.Sources[2]
	far.X = mat.DenseCopyOf(far.X)
	r, d := far.X.Dims()
	for i := range r {
		for j := range d {
			far.X.Set(i, j, far.X.At(i, j)+8)
		}
	}
	p.Sources[2] = far
	if priors, err = estimatePriors(p.Domains(), 6, nil, 1); err != nil || priors[3].Drawn != nil || priors[3].Error <= 0 {
		t.Fatalf("a source far from the others: %v, %v; want no estimate", priors, err)
	}
}

// TestShrink: the shrunk proportions stay proportions, on the segment
// from u to h, at total variation from u reduced by the fraction dropped.
func TestShrink(t *testing.T) {
	u := []float64{0.25, 0.25, 0.25, 0.25}
	for _, c := range []struct {
		h    []float64
		keep float64
	}{
		{[]float64{0.7, 0.1, 0.1, 0.1}, 0.5},
		{[]float64{1, 0, 0, 0}, 0.1},
		{[]float64{0.25, 0.25, 0.25, 0.25}, 0.3},
		{[]float64{0, 0.5, 0.5, 0}, 1},
	} {
		tv := totalVariation(c.h, u)
		got := shrink(slices.Clone(c.h), u, c.keep)
		var sum float64
		for _, p := range got {
			if p < 0 {
				t.Errorf("shrink(%v, %g) = %v: negative share", c.h, c.keep, got)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-12 || math.Abs(totalVariation(got, u)-c.keep*tv) > 1e-12 {
			t.Errorf("shrink(%v, %g) = %v: sum %g, distance %g from u, want 1 and %g", c.h, c.keep, got, sum, totalVariation(got, u), c.keep*tv)
		}
	}
}

// TestEstimatePriorsScaleFree: the estimate does not depend on how the
// features were scaled, all domains alike (the regression's penalty sees
// them standardised).
func TestEstimatePriorsScaleFree(t *testing.T) {
	p, _ := shiftedProblem()
	want, err := estimatePriors(p.Domains(), 6, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	doms := p.Domains()
	for l := range doms {
		var X mat.Dense
		X.Apply(func(_, j int, v float64) float64 { return 0.01*v + float64(j) }, doms[l].X)
		doms[l].X = &X
	}
	got, err := estimatePriors(doms, 6, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for l := range want {
		w, g := want[l].Drawn, got[l].Drawn
		if (w == nil) != (g == nil) {
			t.Fatalf("domain %d: %v on the scaled features, %v on the original", l, got[l], want[l])
		}
		for y := range w {
			if math.Abs(g[y]-w[y]) > 1e-6 {
				t.Fatalf("domain %d: %v on the scaled features, %v on the original", l, got[l], want[l])
			}
		}
	}
}

// TestSharedProportions: the labeled domains' pooled class proportions,
// shrunk towards equal ones by how much the domains disagree; nil when
// they are balanced or disagree more than they share.
func TestSharedProportions(t *testing.T) {
	dom := func(counts ...int) dataset.Domain {
		var y []int
		for k, n := range counts {
			for range n {
				y = append(y, k)
			}
		}
		return dataset.Domain{X: mat.NewDense(len(y), 1, nil), Y: y}
	}
	unlabeled := dataset.Domain{X: mat.NewDense(3, 1, nil)}
	for _, c := range []struct {
		name    string
		classes int
		domains []dataset.Domain
		want    []float64
	}{
		{"balanced", 2, []dataset.Domain{dom(10, 10), dom(20, 20), unlabeled}, nil},
		{"balanced, three classes", 3, []dataset.Domain{dom(7, 7, 7), dom(3, 3, 3), unlabeled}, nil},
		{"the same imbalance", 2, []dataset.Domain{dom(90, 10), dom(45, 5), unlabeled}, []float64{0.9, 0.1}},
		{"opposite imbalances", 2, []dataset.Domain{dom(90, 10), dom(10, 90), unlabeled}, nil},
		// pooled 0.85/0.15 (t = 0.35); the domains 0.05 from it: 0.5 + (1 − 0.05/0.35)·0.35 = 0.8.
		{"similar imbalances", 2, []dataset.Domain{dom(80, 20), dom(90, 10), unlabeled}, []float64{0.8, 0.2}},
	} {
		got := SharedProportions(c.domains, c.classes)
		if (got == nil) != (c.want == nil) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
			continue
		}
		for y := range c.want {
			if math.Abs(got[y]-c.want[y]) > 1e-12 {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// TestSharedImbalance: where every domain has the same unequal class
// proportions, DaDiL draws the target's atom batches in the proportions
// the sources share (the default) and classifies it as well as the
// sources' classes are separated; class-balanced batches
// (BalancedTarget) move the mass of the rare classes onto the common ones.
func TestSharedImbalance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	means := classMeans(rng)
	domain := func(scale int, shift float64) dataset.Domain {
		return testproblem.Domain(rng, means, []int{10, 5, 2, 1, 1, 1}, scale, shift)
	}
	p := &dataset.Problem{Classes: 6}
	for _, shift := range []float64{0, 0.5, 1} {
		p.Sources = append(p.Sources, domain(12, shift))
	}
	p.Target = domain(6, 1.5)
	truth := p.Target.Y
	p.Target.Y = nil
	score := func(balanced bool) float64 {
		m, acc := fitScoreR(t, p, &Settings{Seed: 1, Epochs: 40, BalancedTarget: balanced}, truth)
		tc := m.Dict.History.TargetClasses
		if balanced != (tc == nil) || !balanced && (tc[3].Drawn == nil || tc[3].Estimate != nil) {
			t.Fatalf("BalancedTarget %v: TargetClasses %+v", balanced, tc)
		}
		return acc
	}
	shared, balanced := score(false), score(true)
	t.Logf("DaDiL-R %.1f%% with the shared proportions, %.1f%% with BalancedTarget", 100*shared, 100*balanced)
	if shared < 0.95 {
		t.Errorf("DaDiL-R %.1f%% with the shared proportions, want ≥ 95%%", 100*shared)
	}
	// A target whose classes are balanced departs from the shared
	// proportions: EstimateShift finds it.
	p.Target = dataset.Domain{Name: "balanced target"}
	var data []float64
	truth = nil
	for k := range 6 {
		for range 30 {
			for j := range 10 {
				data = append(data, means.At(k, j)+1.5+rng.NormFloat64())
			}
			truth = append(truth, k)
		}
	}
	p.Target.X = mat.NewDense(len(truth), 10, data)
	for _, s := range []Settings{{}, {EstimateShift: true}, {BalancedTarget: true}} {
		s.Seed, s.Epochs = 1, 40
		_, acc := fitScoreR(t, p, &s, truth)
		t.Logf("balanced target: DaDiL-R %.1f%%, EstimateShift %v, BalancedTarget %v", 100*acc, s.EstimateShift, s.BalancedTarget)
		if s.EstimateShift && acc < 0.95 {
			t.Errorf("balanced target: DaDiL-R %.1f%% with EstimateShift, want ≥ 95%%", 100*acc)
		}
	}
}

// fitScoreR fits the model of p with the settings s and returns it with
// DaDiL-R's accuracy on the target rows, whose classes are truth.
func fitScoreR(t *testing.T, p *dataset.Problem, s *Settings, truth []int) (*Model, float64) {
	t.Helper()
	m, err := FitModel(p, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := m.PredictR(p.Target.X)
	if err != nil {
		t.Fatal(err)
	}
	return m, accuracy(pred, truth)
}
