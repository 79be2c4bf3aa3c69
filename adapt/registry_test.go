package adapt

import (
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

func TestNew(t *testing.T) {
	names := Names()
	if len(names) != 17 || names[0] != "source-only" || names[12] != "dadil-e" || names[14] != "gmm-wbt" || names[len(names)-1] != "gmm-dadil-e" {
		t.Fatalf("Names() = %v", names)
	}
	names[0] = "changed"
	if Names()[0] != "source-only" {
		t.Error("Names returns the package's slice")
	}
	for _, name := range Names() {
		m, err := New(name, 7)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if m.Name() != name {
			t.Errorf("New(%q) is %q", name, m.Name())
		}
		if _, err := m.Predict(mat.NewDense(1, 2, nil)); err != ErrNotFitted {
			t.Errorf("%s: Predict before Fit: %v", name, err)
		}
		m2, _ := New(name, 7)
		if m == m2 {
			t.Errorf("New(%q) returned the same method twice", name)
		}
	}
	// The seed reaches the methods that draw at random.
	for name, seed := range map[string]func(Method) uint64{
		"wb":       func(m Method) uint64 { return m.(*WB).Bary.Seed },
		"wbt-reg":  func(m Method) uint64 { return m.(*WBT).Bary.Seed },
		"wjdot":    func(m Method) uint64 { return m.(*WJDOT).Seed },
		"wbr-e":    func(m Method) uint64 { return m.(*WBR).Settings.Seed },
		"dadil-r":  func(m Method) uint64 { return m.(*DaDiL).Settings.Seed },
		"gmm-otda": func(m Method) uint64 { return m.(*GMMOTDA).Seed },
		"gmm-wbt":  func(m Method) uint64 { return m.(*GMMWBT).Seed },
		"gmm-dadil": func(m Method) uint64 {
			g := m.(*GMMDaDiL)
			return min(g.Seed, g.Settings.Seed)
		},
	} {
		m, _ := New(name, 7)
		if got := seed(m); got != 7 {
			t.Errorf("%s: seed %d, want 7", name, got)
		}
	}
	if m, _ := New("jcpot", 1); !m.(*JCPOT).Map || m.(*JCPOT).Reg != 0.1 {
		t.Errorf("jcpot settings %+v", m)
	}
	_, err := New("dadil", 1)
	if err == nil || !strings.Contains(err.Error(), `unknown method "dadil"`) || !strings.Contains(err.Error(), "otda-emd") {
		t.Errorf("unknown method: error %v", err)
	}
}

func TestPredictors(t *testing.T) {
	src, tgt, truth := synthProblem(3)
	set := &dictionary.Settings{Atoms: 3, Epochs: 20, Seed: 3}
	for _, tc := range []struct {
		m     Method
		names []string
	}{
		{&SourceOnly{}, []string{"source-only"}},
		{NewDaDiLR(set), []string{"dadil-r", "dadil-e"}},
		{NewDaDiLE(set), []string{"dadil-e", "dadil-r"}},
		{&WBR{}, []string{"wbr-r", "wbr-e"}},
		{&WBR{Ensemble: true}, []string{"wbr-e", "wbr-r"}},
	} {
		// Before Fit every predictor says so.
		var names []string
		for _, p := range Predictors(tc.m) {
			names = append(names, p.Name)
			if _, err := p.Predict(tgt); err != ErrNotFitted {
				t.Errorf("%s: unfitted predictor %s: %v", tc.m.Name(), p.Name, err)
			}
		}
		if !slices.Equal(names, tc.names) {
			t.Errorf("Predictors(%s) = %v, want %v", tc.m.Name(), names, tc.names)
		}
		if err := fit(tc.m, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		ps := Predictors(tc.m)
		own, _ := tc.m.Predict(tgt)
		first, _ := ps[0].Predict(tgt)
		if !slices.Equal(own, first) {
			t.Errorf("%s: the first predictor is not the method's own", tc.m.Name())
		}
		if len(ps) == 1 {
			continue
		}
		// The sibling predicts as the model's other predictor does, and
		// well on this problem.
		var model *dictionary.Model
		switch x := tc.m.(type) {
		case *DaDiL:
			model = x.Model
		case *WBR:
			model = x.Model
		}
		want := model.PredictE
		if strings.HasSuffix(ps[1].Name, "-r") {
			want = model.PredictR
		}
		w, _ := want(tgt)
		got, err := ps[1].Predict(tgt)
		if err != nil || !slices.Equal(got, w) {
			t.Errorf("%s: sibling %s differs from the model's (%v)", tc.m.Name(), ps[1].Name, err)
		}
		if a := accuracy(got, truth); a < 0.9 {
			t.Errorf("%s: sibling %s accuracy %.3f", tc.m.Name(), ps[1].Name, a)
		}
	}
}

func TestValidatePredictors(t *testing.T) {
	src, _, _ := synthProblem(4)
	set := dictionary.Settings{Epochs: 15, Seed: 4}
	build := func(ensemble bool) func() Method {
		return func() Method {
			s := set
			return &DaDiL{Ensemble: ensemble, Settings: &s}
		}
	}
	var calls []int
	got, err := ValidatePredictors(problem(src, src[0].X, 3), build(false), func(k int, s []Scores) {
		calls = append(calls, k)
		if len(s) != 2 || len(s[0].HeldOut) != k+1 || len(s[1].HeldOut) != k+1 {
			t.Errorf("done(%d) sees %d predictors", k, len(s))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(calls, []int{0, 1, 2}) {
		t.Errorf("done called for %v", calls)
	}
	if len(got) != 2 || got[0].Predictor != "dadil-r" || got[1].Predictor != "dadil-e" {
		t.Fatalf("predictors %+v", got)
	}
	// One fit scored by both predictors gives what two separate
	// validations give: the fits are deterministic and E's dictionary is
	// R's.
	for i, ensemble := range []bool{false, true} {
		one, err := ValidateOnSources(problem(src, src[0].X, 3), build(ensemble))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one, got[i].HeldOut) {
			t.Errorf("%s: %v, separately %v", got[i].Predictor, got[i].HeldOut, one)
		}
		// Well above chance (1/3), though the last source, the farthest
		// shifted, is an extrapolation from the other two.
		if m := MeanAccuracy(one); m < 0.75 {
			t.Errorf("%s: mean held-out accuracy %.3f", got[i].Predictor, m)
		}
	}
	if _, err := ValidatePredictors(problem(src[:1], src[0].X, 3), build(false), nil); err == nil || !strings.Contains(err.Error(), "at least 2") {
		t.Errorf("one source: error %v", err)
	}
}

func TestSubsample(t *testing.T) {
	src := []dataset.Domain{line("a", 0, 1, 0, 1, 0, 1, 0, 1), line("b", 1, 0, 1)}
	tgt := mat.NewDense(6, 2, []float64{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5})
	q, _ := problem(src, tgt, 2).Subsample(4, 1)
	s, T := q.Sources, q.Target.X
	if s[1].X != src[1].X || len(s[1].Y) != 3 {
		t.Error("a domain within the cap was not returned as it is")
	}
	if r, _ := s[0].X.Dims(); r != 4 || len(s[0].Y) != 4 {
		t.Fatalf("source a: %d rows, %d labels; want 4", r, len(s[0].Y))
	}
	// The rows drawn are distinct rows of the domain, in order, with their
	// labels (line puts the row index in column 0; its label is index % 2).
	prev := -1.0
	for i := range 4 {
		x := s[0].X.At(i, 0)
		if x <= prev || x != float64(int(x)) || x > 7 || s[0].Y[i] != int(x)%2 {
			t.Errorf("row %d: x %v, label %d", i, x, s[0].Y[i])
		}
		prev = x
	}
	if r, _ := T.Dims(); r != 4 || T == tgt {
		t.Errorf("target: %d rows, want a copy of 4", r)
	}
	// Deterministic for a seed, and the seed matters.
	q2, _ := problem(src, tgt, 2).Subsample(4, 1)
	s2, T2 := q2.Sources, q2.Target.X
	if !mat.Equal(s[0].X, s2[0].X) || !mat.Equal(T, T2) {
		t.Error("same seed, other rows")
	}
	differ := false
	for seed := uint64(2); seed < 6 && !differ; seed++ {
		q3, _ := problem(src, tgt, 2).Subsample(4, seed)
		s3 := q3.Sources
		differ = !mat.Equal(s[0].X, s3[0].X)
	}
	if !differ {
		t.Error("four other seeds drew the same rows")
	}
}

func TestSubsampled(t *testing.T) {
	src := []dataset.Domain{line("a", 0, 1, 0, 1, 0, 1, 0, 1), line("b", 1, 0, 1)}
	tgt := mat.NewDense(6, 2, nil)
	rec := &recorder{class: 1}
	m := &Subsampled{Method: rec, MaxRows: 5, Seed: 3}
	if m.Name() != "recorder" {
		t.Errorf("name %q", m.Name())
	}
	if err := fit(m, src, tgt, 2); err != nil {
		t.Fatal(err)
	}
	if r, _ := rec.sources[0].X.Dims(); r != 5 || rec.sources[1].X != src[1].X {
		t.Errorf("the wrapped method saw %d rows of a", r)
	}
	if r, _ := rec.target.Dims(); r != 5 {
		t.Errorf("the wrapped method saw %d target rows", r)
	}
	// Predict classifies any rows with the wrapped method.
	p, err := m.Predict(mat.NewDense(9, 2, nil))
	if err != nil || len(p) != 9 || p[0] != 1 {
		t.Errorf("Predict: %v, %v", p, err)
	}
	if err := fit((&Subsampled{Method: rec}), src, tgt, 2); err == nil || !strings.Contains(err.Error(), "MaxRows") {
		t.Errorf("MaxRows 0: error %v", err)
	}
	if err := fit(m, src, mat.NewDense(2, 3, nil), 2); err == nil {
		t.Error("mismatched target accepted")
	}
	empty := &Subsampled{MaxRows: 5}
	if err := fit(empty, src, tgt, 2); err == nil || !strings.Contains(err.Error(), "no Method") {
		t.Errorf("no Method: error %v", err)
	}
	if _, err := empty.Predict(tgt); err != ErrNotFitted || empty.Name() != "subsampled" {
		t.Errorf("no Method: Predict error %v, name %q", err, empty.Name())
	}
	// A failure on a draw says so; a failure on whole domains does not.
	for _, tc := range []struct {
		maxRows  int
		wantDraw bool
	}{{1, true}, {100, false}} {
		wbr, _ := New("wbr-r", 1)
		sub := &Subsampled{Method: wbr, MaxRows: tc.maxRows, Seed: 1}
		one := []dataset.Domain{line("a", 0, 1, 0, 1), {Name: "b", X: mat.NewDense(1, 2, nil), Y: []int{0}}}
		err := fit(sub, one, tgt, 2)
		if err == nil || strings.Contains(err.Error(), "random draw of at most 1 rows") != tc.wantDraw {
			t.Errorf("MaxRows %d: error %v (want a mention of the draw: %v)", tc.maxRows, err, tc.wantDraw)
		}
	}
	// The predictors are the wrapped method's, sibling included.
	d := &Subsampled{Method: NewDaDiLE(nil), MaxRows: 10}
	ps := Predictors(d)
	if len(ps) != 2 || ps[0].Name != "dadil-e" || ps[1].Name != "dadil-r" {
		t.Errorf("Predictors of a subsampled DaDiL-E: %v", ps)
	}
	for _, name := range Names() {
		want := slices.Contains([]string{"otda-sinkhorn", "jcpot", "wb", "wbt-reg", "wjdot", "wbr-r", "wbr-e"}, name)
		if DenseTransport(name) != want {
			t.Errorf("DenseTransport(%q) = %v", name, !want)
		}
	}
}
