package bench

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/selection"
	"github.com/dadil/dadil/synth"
)

// value returns a selection value of the scorer, none for NaN.
func value(scorer string, v float64) selection.Value {
	if math.IsNaN(v) {
		return selection.Value{Scorer: scorer, Error: "failed"}
	}
	return selection.Value{Scorer: scorer, Score: &v}
}

func TestSummarizeSelection(t *testing.T) {
	nan := math.NaN()
	res := func(set, target, method string, score, a, b float64) SuiteResult {
		return SuiteResult{Set: set, Target: target, Method: method, Score: score, Selection: []selection.Value{value("a", a), value("b", b)}}
	}
	results := []SuiteResult{
		// Set x, target 1: a picks m2 (60, gap −20), b picks m1 (80).
		res("x", "1", "m1", 80, 0.1, 5),
		res("x", "1", "m2", 60, 0.9, 1),
		// Set x, target 2: a ties and takes the first, m1 (50, gap −20);
		// b scores nothing.
		res("x", "2", "m1", 50, 0.5, nan),
		res("x", "2", "m2", 70, 0.5, nan),
		// Set y: both pick m2, the best.
		res("y", "1", "m1", 10, 0, 0),
		res("y", "1", "m2", 30, 1, 1),
	}
	s := SummarizeSelection(results, []string{"x", "y"}, []string{"a", "b"})
	want := map[string][]float64{
		"oracle": {75, 30}, "random": {65, 20}, "best": {65, 30}, // x: m1 and m2 tie at 65
		"a picked": {55, 30}, "a gap": {-20, 0},
		"b picked": {80, 30}, "b gap": {0, 0},
	}
	got := map[string][]float64{
		"oracle": s.Oracle, "random": s.Random, "best": s.Best,
		"a picked": s.Picked[0], "a gap": s.Gap[0],
		"b picked": s.Picked[1], "b gap": s.Gap[1],
	}
	for k, w := range want {
		for j := range w {
			if got[k][j] != w[j] {
				t.Errorf("%s: %v, want %v", k, got[k], w)
			}
		}
	}
	if !slices.Equal(s.BestMethod, []string{"m1", "m2"}) {
		t.Errorf("best methods %v, want [m1 m2]", s.BestMethod)
	}
	if s.Missed[0][0] != 0 || s.Missed[1][0] != 1 || s.Missed[1][1] != 0 {
		t.Errorf("missed %v", s.Missed)
	}
	md := s.Markdown()
	for _, line := range []string{
		"| choice | x | y | mean over sets |",
		"| oracle (target labels) | 75.00 (+0.00) | 30.00 (+0.00) | 52.50 (+0.00) |",
		"| a | 55.00 (-20.00) | 30.00 (+0.00) | 42.50 (-10.00) |",
		"| b | 80.00 (+0.00) [1 missed] | 30.00 (+0.00) | 55.00 (+0.00) |",
		"| best method of the set (target labels) | 65.00 (-10.00) | 30.00 (+0.00) | 47.50 (-5.00) |",
		"| at random (expected) | 65.00 (-10.00) | 20.00 (-10.00) | 42.50 (-10.00) |",
		"Best method of the set: x m1, y m2.",
	} {
		if !strings.Contains(md, line+"\n") {
			t.Errorf("no line %q in\n%s", line, md)
		}
	}
}

// TestRunSuiteSelect runs the suite on the synthetic problem (every domain
// in turn the target) with two scorers: every result carries their values,
// the same at every run, and OTDA's are finite.
func TestRunSuiteSelect(t *testing.T) {
	set := synthSuiteSet()
	entropy, _ := selection.New("entropy", 1)
	circular, _ := selection.New("circular", 1)
	opt := SuiteOptions{Methods: []string{"source-only", "otda-emd"}, Config: adapt.Config{Seed: 1}, Scorers: []selection.Scorer{entropy, selection.EnsV{}, circular}}
	run := func() []SuiteResult {
		r, err := RunSuite([]*SuiteSet{set}, opt)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(), run()
	if len(a) != 8 {
		t.Fatalf("%d results, want 8", len(a))
	}
	for i, r := range a {
		if r.Seed != 1 {
			t.Errorf("%s on %s: seed %d, want the config's 1", r.Method, r.Target, r.Seed)
		}
		if len(r.Selection) != 3 || r.Selection[0].Scorer != "entropy" || r.Selection[1].Scorer != "ensv" || r.Selection[2].Scorer != "circular" {
			t.Fatalf("%s on %s: selection %+v", r.Method, r.Target, r.Selection)
		}
		for k, v := range r.Selection {
			if v.Score == nil || *v.Score != *b[i].Selection[k].Score {
				t.Errorf("%s on %s: %s %+v, then %+v", r.Method, r.Target, v.Scorer, v, b[i].Selection[k])
			}
		}
	}
	// EnsV pools the methods of the same target: alone, a method would
	// score 1; source-only and OTDA disagree on some target rows.
	below := 0
	for _, r := range a {
		if v := *r.Selection[1].Score; v < 1 {
			below++
		}
	}
	if below == 0 {
		t.Error("ensv scores every method 1, as if scored alone")
	}
	s := SummarizeSelection(a, []string{"synthetic"}, []string{"entropy", "ensv", "circular"})
	for i := range s.Scorers {
		if g := s.Gap[i][0]; !(g <= 0) || s.Missed[i][0] != 0 {
			t.Errorf("%s: gap %v, missed %d", s.Scorers[i], g, s.Missed[i][0])
		}
	}
}

// TestRunSuiteSelectAmong: with SelectAmong, the other methods are not
// scored and the pooled scorers score the chosen ones as a run of those
// methods alone does; the summary picks among them and says so.
func TestRunSuiteSelectAmong(t *testing.T) {
	set := synthSuiteSet()
	among := []string{"source-only", "otda-emd"}
	opt := SuiteOptions{Methods: []string{"source-only", "sa", "otda-emd"}, Config: adapt.Config{Seed: 1}, Scorers: []selection.Scorer{selection.EnsV{}}, SelectAmong: among}
	a, err := RunSuite([]*SuiteSet{set}, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Methods, opt.SelectAmong = among, nil
	b, err := RunSuite([]*SuiteSet{set}, opt)
	if err != nil {
		t.Fatal(err)
	}
	alone := map[[2]string]float64{}
	for _, r := range b {
		alone[[2]string{r.Target, r.Method}] = *r.Selection[0].Score
	}
	for _, r := range a {
		if r.Method == "sa" {
			if r.Selection != nil {
				t.Errorf("sa on %s scored: %+v", r.Target, r.Selection)
			}
			continue
		}
		if len(r.Selection) != 1 || r.Selection[0].Score == nil || *r.Selection[0].Score != alone[[2]string{r.Target, r.Method}] {
			t.Errorf("%s on %s: %+v, alone %v", r.Method, r.Target, r.Selection, alone[[2]string{r.Target, r.Method}])
		}
	}
	s := SummarizeSelection(a, []string{"synthetic"}, []string{"ensv"})
	if !slices.Equal(s.Among, among) {
		t.Errorf("among %v, want %v", s.Among, among)
	}
	var sum float64
	for _, r := range a {
		if r.Method != "sa" {
			sum += r.Score
		}
	}
	if want := sum / float64(len(a)*2/3); math.Abs(s.RandomAmong[0]-want) > 1e-9 {
		t.Errorf("a pick at random among the scored methods %v, want their mean %v", s.RandomAmong, want)
	}
	if !strings.Contains(s.Markdown(), "The scorers pick among source-only, otda-emd") {
		t.Errorf("the summary does not say which methods the scorers pick among:\n%s", s.Markdown())
	}
	if SummarizeSelection(b, []string{"synthetic"}, []string{"ensv"}).Among != nil {
		t.Error("Among set when every method is scored")
	}
}

// TestRunSuiteStandard: a set's problems are prepared with the scaling
// asked for, and SuiteOptions.Standard runs every target as the default
// does.
func TestRunSuiteStandard(t *testing.T) {
	l := synth.Default()
	l.PerClass = 30
	p := synth.Generate(l, 2)
	set := &SuiteSet{Name: "synthetic"}
	for _, d := range append(p.Sources, *p.Test) {
		X := mat.DenseCopyOf(d.X)
		r, _ := X.Dims()
		for i := range r {
			X.Set(i, 0, 1000*X.At(i, 0)) // a feature of a much larger spread
		}
		set.Domains = append(set.Domains, &dataset.File{Name: d.Name, X: X, Labels: d.Y})
	}
	mm, err := set.ProblemScaled(0, dataset.ScaleMinMax)
	if err != nil {
		t.Fatal(err)
	}
	st, err := set.ProblemScaled(0, dataset.ScaleStandard)
	if err != nil {
		t.Fatal(err)
	}
	if mm.Scaler.Kind != dataset.ScaleMinMax || st.Scaler.Kind != dataset.ScaleStandard {
		t.Fatalf("scalers %v and %v", mm.Scaler.Kind, st.Scaler.Kind)
	}
	opt := SuiteOptions{Methods: []string{"source-only"}, Config: adapt.Config{Seed: 1}}
	a, err := RunSuite([]*SuiteSet{set}, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Standard = true
	b, err := RunSuite([]*SuiteSet{set}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) || len(a) != len(set.Domains) {
		t.Fatalf("%d and %d results for %d targets", len(a), len(b), len(set.Domains))
	}
}

// TestRunSuiteExtraAtoms: with SuiteOptions.ExtraAtoms, DaDiL's results
// carry the number of atoms chosen for their target, the one
// selection.ExtraAtoms chooses on that problem; other methods carry none.
func TestRunSuiteExtraAtoms(t *testing.T) {
	set := synthSuiteSet()
	cfg := adapt.Config{Seed: 1, Dictionary: &dictionary.Settings{Epochs: 2, PlateauTol: -1}}
	opt := SuiteOptions{Methods: []string{"source-only", "dadil-r"}, Config: cfg, ExtraAtoms: []int{0, 1}}
	res, err := RunSuite([]*SuiteSet{set}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2*len(set.Domains) {
		t.Fatalf("%d results, want %d", len(res), 2*len(set.Domains))
	}
	for _, r := range res {
		if r.Method != "dadil-r" {
			if r.ExtraAtoms != nil {
				t.Errorf("%s on %s: extra atoms %d", r.Method, r.Target, *r.ExtraAtoms)
			}
			continue
		}
		t0 := slices.IndexFunc(set.Domains, func(f *dataset.File) bool { return f.Name == r.Target })
		l, err := set.Problem(t0)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := selection.ExtraAtoms(l.Problem, cfg, []int{0, 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.ExtraAtoms == nil || *r.ExtraAtoms != ch.Extra {
			t.Errorf("dadil-r on %s: extra atoms %v, want %d", r.Target, r.ExtraAtoms, ch.Extra)
		}
	}
}

// synthSuiteSet is the synthetic problem (40 rows per class) as a suite
// set, every domain in turn the target.
func synthSuiteSet() *SuiteSet {
	l := synth.Default()
	l.PerClass = 40
	p := synth.Generate(l, 1)
	set := &SuiteSet{Name: "synthetic"}
	for _, d := range append(p.Sources, *p.Test) {
		set.Domains = append(set.Domains, &dataset.File{Name: d.Name, X: d.X, Labels: d.Y})
	}
	return set
}

// TestSeedsSummarisedTogether: results of two seeds merge into one
// summary whose means are over the seeds and targets, each seed's
// experiment keeps its own oracle, and a result given twice is refused.
func TestSeedsSummarisedTogether(t *testing.T) {
	run := func(seed uint64, m1, m2 float64) []SuiteResult {
		return []SuiteResult{
			{Seed: seed, Set: "x", Target: "1", Method: "m1", Score: m1},
			{Seed: seed, Set: "x", Target: "1", Method: "m2", Score: m2},
		}
	}
	all, err := MergeSuiteResults(run(1, 80, 60), run(2, 50, 70))
	if err != nil {
		t.Fatal(err)
	}
	sum := Summarize(all, []string{"x"}, []string{"m1", "m2"})
	if sum.Mean[0][0] != 65 || sum.Mean[1][0] != 65 || sum.Rank[0][0] != 1.5 {
		t.Errorf("means %v, ranks %v; want 65 and 65, tied", sum.Mean, sum.Rank)
	}
	// The oracle picks m1 at seed 1 and m2 at seed 2: (80 + 70)/2.
	if s := SummarizeSelection(all, []string{"x"}, nil); s.Oracle[0] != 75 {
		t.Errorf("oracle %v, want 75 (each seed's best)", s.Oracle[0])
	}
	if _, err := MergeSuiteResults(run(1, 80, 60), run(1, 80, 60)); err == nil || !strings.Contains(err.Error(), "two results of m1 on x → 1 with seed 1") {
		t.Errorf("the same run twice: %v", err)
	}
}
