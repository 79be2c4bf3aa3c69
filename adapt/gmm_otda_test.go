package adapt

import (
	"errors"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/synth"
)

// gmmMethods returns GMM-OTDA and GMM-WBT in every variant: both rules,
// pooled or per-source mixtures, the weighted or random map, components
// given or chosen by BIC.
func gmmMethods(seed uint64) map[string]Method {
	bic := GMMComponents{BIC: true}
	return map[string]Method{
		"gmm-otda map pooled":        &GMMOTDA{Seed: seed},
		"gmm-otda map per source":    &GMMOTDA{PerSource: true, Seed: seed},
		"gmm-otda random map":        &GMMOTDA{Random: true, Seed: seed},
		"gmm-otda map BIC":           &GMMOTDA{Components: bic, Seed: seed},
		"gmm-otda labels pooled":     &GMMOTDA{Labels: true, Seed: seed},
		"gmm-otda labels per source": &GMMOTDA{Labels: true, PerSource: true, Seed: seed},
		"gmm-otda labels BIC":        &GMMOTDA{Labels: true, Components: bic, Seed: seed},
		"gmm-wbt map":                &GMMWBT{Seed: seed},
		"gmm-wbt random map":         &GMMWBT{Random: true, Seed: seed},
		"gmm-wbt map BIC":            &GMMWBT{Components: bic, Seed: seed},
		"gmm-wbt labels":             &GMMWBT{Labels: true, Seed: seed},
		"gmm-wbt labels BIC":         &GMMWBT{Labels: true, Components: bic, Seed: seed},
	}
}

// TestGMMMethodsOnSynthetic: on the demo problem, where a classifier of
// the pooled sources mislabels most of the target, every variant of both
// methods classifies the target well above chance (1/3) and above
// source-only.
func TestGMMMethodsOnSynthetic(t *testing.T) {
	src, tgt, truth := synthProblem(1)
	so := &SourceOnly{}
	if err := fit(so, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	p, _ := so.Predict(tgt)
	soAcc := accuracy(p, truth)
	methods := gmmMethods(1)
	for _, what := range slices.Sorted(maps.Keys(methods)) {
		m := methods[what]
		if _, err := m.Predict(tgt); err != ErrNotFitted {
			t.Errorf("%s: Predict before Fit: %v", what, err)
		}
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		p, err := m.Predict(tgt)
		if err != nil {
			t.Fatal(err)
		}
		acc := accuracy(p, truth)
		t.Logf("%s: accuracy %.3f (source-only %.3f)", what, acc, soAcc)
		if acc < 0.8 || acc < soAcc+0.2 {
			t.Errorf("%s: accuracy %.3f, source-only %.3f", what, acc, soAcc)
		}
		if _, err := m.Predict(mat.NewDense(2, 5, nil)); err == nil || !strings.HasPrefix(err.Error(), "adapt: "+m.Name()+": ") {
			t.Errorf("%s: Predict on 5 features: error %v", what, err)
		}
	}
}

// TestGMMMethodsDeterministic: a fit is bit-identical on one and two
// threads, on domains of more rows than one block of package gmm (8192),
// and the seed matters.
func TestGMMMethodsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("large domains")
	}
	l := synth.Default()
	l.PerClass = 2800 // 8400 rows per domain
	p := synth.Generate(l, 2)
	proba := func(procs int, m Method) *mat.Dense {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		if err := m.Fit(p); err != nil {
			t.Fatal(err)
		}
		P, err := m.(Prober).Proba(p.Target.X)
		if err != nil {
			t.Fatal(err)
		}
		return P
	}
	for _, name := range []string{"gmm-otda", "gmm-wbt"} {
		for _, labels := range []bool{false, true} {
			build := func(seed uint64) Method {
				m, _ := New(name, seed)
				switch x := m.(type) {
				case *GMMOTDA:
					x.Labels, x.PerSource, x.Components.PerClass = labels, labels, 2
				case *GMMWBT:
					x.Labels, x.Components.PerClass = labels, 2
				}
				return m
			}
			ref := proba(1, build(3))
			if got := proba(2, build(3)); !mat.Equal(ref, got) {
				t.Errorf("%s (labels %v): GOMAXPROCS 2 differs from 1", name, labels)
			}
			if got := proba(2, build(4)); mat.Equal(ref, got) {
				t.Errorf("%s (labels %v): seeds 3 and 4 give the same fit", name, labels)
			}
		}
	}
}

// TestGMMMethodsBadInput: bad problems and settings are errors that begin
// "adapt: " and the method's name and say what is wrong, and a failed Fit
// leaves the method unfitted.
func TestGMMMethodsBadInput(t *testing.T) {
	src, tgt, _ := synthProblem(5)
	nan := mat.DenseCopyOf(tgt)
	nan.Set(3, 1, math.NaN())
	huge := mat.DenseCopyOf(src[1].X)
	huge.Set(2, 0, 1e200) // finite, but beyond what package gmm accepts
	big := []dataset.Domain{src[0], {Name: "huge", X: huge, Y: src[1].Y}}
	for _, name := range []string{"gmm-otda", "gmm-wbt"} {
		for _, tc := range []struct {
			what string
			set  func(GMMComponents) GMMComponents
			src  []dataset.Domain
			tgt  *mat.Dense
			want string
		}{
			{"NaN target", nil, src, nan, "NaN"},
			{"no sources", nil, nil, tgt, "no source"},
			{"negative PerClass", func(c GMMComponents) GMMComponents { c.PerClass = -1; return c }, src, tgt, "PerClass -1"},
			{"negative MaxPerClass", func(c GMMComponents) GMMComponents { c.MaxPerClass = -2; return c }, src, tgt, "MaxPerClass -2"},
			{"NaN VarFloor", func(c GMMComponents) GMMComponents { c.VarFloor = math.NaN(); return c }, src, tgt, "VarFloor = NaN"},
			{"huge feature", nil, big, tgt, "huge: class "},
		} {
			m, _ := New(name, 1)
			if x, ok := m.(*GMMOTDA); ok {
				x.PerSource = true // the error names the source
			}
			if tc.set != nil {
				switch x := m.(type) {
				case *GMMOTDA:
					x.Components = tc.set(x.Components)
				case *GMMWBT:
					x.Components = tc.set(x.Components)
				}
			}
			err := fit(m, tc.src, tc.tgt, 3)
			if err == nil || !strings.HasPrefix(err.Error(), "adapt: "+name+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %s: error %v, want %q", name, tc.what, err, tc.want)
			}
			if _, err := m.Predict(tgt); !errors.Is(err, ErrNotFitted) {
				t.Errorf("%s: %s: Predict after a failed Fit: %v", name, tc.what, err)
			}
		}
	}
	// The problem's name is in the message.
	p := problem(src, tgt, 3)
	p.Name = "demo"
	if err := (&GMMWBT{Components: GMMComponents{PerClass: -1}}).Fit(p); err == nil || !strings.HasPrefix(err.Error(), "adapt: gmm-wbt: demo: ") {
		t.Errorf("named problem: %v", err)
	}
}

// TestGMMMethodsSmallClasses: a class of fewer rows than
// GMMComponents.PerClass gets one component per row, in the sources and
// with fewer target rows than the target mixture's components.
func TestGMMMethodsSmallClasses(t *testing.T) {
	src, tgt, _ := synthProblem(7)
	// Keep 3 rows of class 2 in the first source.
	var keep []int
	n2 := 0
	for i, c := range src[0].Y {
		if c != 2 || n2 < 3 {
			keep = append(keep, i)
		}
		if c == 2 {
			n2++
		}
	}
	few := src[0]
	few.X = linalg.Rows(src[0].X, keep)
	few.Y = nil
	for _, i := range keep {
		few.Y = append(few.Y, src[0].Y[i])
	}
	src[0] = few
	for _, m := range []Method{&GMMOTDA{PerSource: true, Components: GMMComponents{PerClass: 8}}, &GMMWBT{Components: GMMComponents{PerClass: 8}}} {
		if err := fit(m, src, tgt.Slice(0, 20, 0, 2).(*mat.Dense), 3); err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		var srcK []int
		var tgtK int
		switch x := m.(type) {
		case *GMMOTDA:
			srcK, tgtK = components(x.Sources), x.Target.Components()
		case *GMMWBT:
			srcK, tgtK = components(x.Sources), x.Target.Components()
		}
		if srcK[0] != 8+8+3 || srcK[1] != 24 || tgtK != 20 {
			t.Errorf("%s: source mixtures of %v components, target of %d", m.Name(), srcK, tgtK)
		}
	}
}

// components returns the numbers of components of the mixtures.
func components(mix []*gmm.Mixture) []int {
	var K []int
	for _, m := range mix {
		K = append(K, m.Components())
	}
	return K
}

// TestGMMMethodsTranslation: when the target is the pooled sources
// translated by t, the target mixture is the source mixture translated,
// its components are matched to their translates, and the map moves
// every source row (GMM-OTDA) and every barycenter component (GMM-WBT)
// by t, up to the small differences between fitting each class alone
// and the target's classes together.
func TestGMMMethodsTranslation(t *testing.T) {
	shift := [2]float64{4.5, -1}
	src, tgt, truth := translatedProblem(1, 40, shift, 0)
	Xs, _ := dataset.Pool(src)
	set := GMMComponents{PerClass: 1}
	for _, per := range []bool{false, true} {
		m := &GMMOTDA{PerSource: per, Components: set, Seed: 1}
		if err := fit(m, src, tgt, 2); err != nil {
			t.Fatal(err)
		}
		n, _ := Xs.Dims()
		var worst float64
		for i := range n {
			for j := range 2 {
				worst = max(worst, math.Abs(m.Mapped.At(i, j)-Xs.At(i, j)-shift[j]))
			}
		}
		t.Logf("per source %v: largest error of the map %.3g", per, worst)
		// Pooled, the mixtures are translates: the map is the translation.
		// Per source, each source's class components differ a little from
		// the pooled target's, so rows move by t up to that difference,
		// and by t on average.
		if bound := map[bool]float64{false: 1e-6, true: 0.5}[per]; worst > bound {
			t.Errorf("per source %v: a mapped row is %.3g from its source row + t", per, worst)
		}
		for j := range 2 {
			if d := math.Abs(colMean(m.Mapped, j) - colMean(Xs, j) - shift[j]); d > 0.02 {
				t.Errorf("per source %v: mean displacement of feature %d is %.3g from t", per, j, d)
			}
		}
		checkAccuracy(t, m, tgt, truth)
	}

	w := &GMMWBT{Components: set, Seed: 1}
	if err := fit(w, src, tgt, 2); err != nil {
		t.Fatal(err)
	}
	B := w.Barycenter.Mixture
	var moved mat.Dense
	if err := (&gmm.Map{Source: B, Target: w.Target, Plan: w.Plan}).Mean(&moved, B.Means); err != nil {
		t.Fatal(err)
	}
	for k := range B.Components() {
		for j := range 2 {
			if d := math.Abs(moved.At(k, j) - B.Means.At(k, j) - shift[j]); d > 0.05 {
				t.Errorf("barycenter component %d, feature %d moved by %.3f, want %.3f", k, j, moved.At(k, j)-B.Means.At(k, j), shift[j])
			}
		}
	}
	checkAccuracy(t, w, tgt, truth)
}

// colMean returns the mean of column j of X.
func colMean(X *mat.Dense, j int) float64 {
	n, _ := X.Dims()
	return mat.Sum(X.ColView(j)) / float64(n)
}

// checkAccuracy fails unless m labels at least 99% of the rows right.
func checkAccuracy(t *testing.T, m Method, X *mat.Dense, truth []int) {
	t.Helper()
	p, err := m.Predict(X)
	if err != nil {
		t.Fatal(err)
	}
	if acc := accuracy(p, truth); acc < 0.99 {
		t.Errorf("%s: accuracy %.4f", m.Name(), acc)
	}
}

// TestGMMMethodsClassifier: Config's classifier reaches the mapping rule,
// and the methods are not subsampled.
func TestGMMMethodsClassifier(t *testing.T) {
	src, tgt, truth := synthProblem(6)
	cfg := &Config{Seed: 6, Classifier: &classify.KNN{}, MaxRows: 50}
	for _, name := range []string{"gmm-otda", "gmm-wbt"} {
		m, err := cfg.New(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(*Subsampled); ok {
			t.Errorf("%s is subsampled", name)
		}
		var c classify.Trainer
		switch x := m.(type) {
		case *GMMOTDA:
			c = x.Classifier
		case *GMMWBT:
			c = x.Classifier
		}
		if _, ok := c.(*classify.KNN); !ok {
			t.Errorf("%s: classifier %T", name, c)
		}
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		p, _ := m.Predict(tgt)
		if acc := accuracy(p, truth); acc < 0.8 {
			t.Errorf("%s with k-NN: accuracy %.3f", name, acc)
		}
	}
}
