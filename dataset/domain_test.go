package dataset

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// line returns a domain of len(y) rows whose first column is the row index.
func line(name string, y ...int) Domain {
	X := mat.NewDense(len(y), 2, nil)
	for i := range y {
		X.Set(i, 0, float64(i))
		X.Set(i, 1, float64(len(name)))
	}
	return Domain{Name: name, X: X, Y: y}
}

func testProblem() *Problem {
	return &Problem{
		Name: "p", Classes: 2,
		Sources: []Domain{line("a", 0, 1, 0, 1, 0, 1, 0, 1), line("b", 1, 0, 1), line("", 0, 0, 1)},
		Target:  Domain{X: mat.NewDense(6, 2, []float64{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5})},
	}
}

func TestProblemDomains(t *testing.T) {
	p := testProblem()
	ds := p.Domains()
	if len(ds) != 4 || p.TargetIndex() != 3 {
		t.Fatalf("%d domains, target index %d", len(ds), p.TargetIndex())
	}
	if ds[3].Name != "target" || ds[3].Labeled() || ds[3].X != p.Target.X {
		t.Errorf("target %+v", ds[3])
	}
	if ds[0].X != p.Sources[0].X || !ds[0].Labeled() {
		t.Error("sources are not passed on as they are")
	}
	p.Target.Name = "webcam"
	if p.Domains()[3].Name != "webcam" {
		t.Error("the target's own name is not kept")
	}
}

func TestProblemCheck(t *testing.T) {
	if err := testProblem().Check(); err != nil {
		t.Fatal(err)
	}
	nan := mat.NewDense(6, 2, nil)
	nan.Set(3, 1, math.NaN())
	for _, tc := range []struct {
		name string
		edit func(p *Problem)
		want string
	}{
		{"nil", nil, "no problem"},
		{"no sources", func(p *Problem) { p.Sources = nil }, "no source"},
		{"classes", func(p *Problem) { p.Classes = 1 }, "1 classes"},
		{"empty target", func(p *Problem) { p.Target.X = nil }, "target has no rows"},
		{"labeled target", func(p *Problem) { p.Target.Y = make([]int, 6) }, "belong in Problem.Test"},
		{"NaN target", func(p *Problem) { p.Target.X = nan }, "target: feature (3, 1) is NaN"},
		{"dims", func(p *Problem) { p.Sources[1].X = mat.NewDense(3, 5, nil) }, "b has 5 features, the target 2"},
		{"labels", func(p *Problem) { p.Sources[0].Y = p.Sources[0].Y[:4] }, "a has 8 rows but 4 labels"},
		{"range", func(p *Problem) { p.Sources[2].Y[1] = 7 }, "source 2: label 7 of row 1"},
		{"unlabeled source", func(p *Problem) { p.Sources[1].Y = nil }, "b has 3 rows but 0 labels"},
		{"test dims", func(p *Problem) { p.Test = &Domain{X: mat.NewDense(2, 3, nil), Y: []int{0, 1}} }, "test rows have 3 features"},
		{"test labels", func(p *Problem) { p.Test = &Domain{X: mat.NewDense(2, 2, nil), Y: []int{0}} }, "2 test rows but 1 test labels"},
		{"test range", func(p *Problem) { p.Test = &Domain{X: mat.NewDense(2, 2, nil), Y: []int{0, -2}} }, "test label -2"},
	} {
		var p *Problem
		if tc.edit != nil {
			p = testProblem()
			tc.edit(p)
		}
		err := p.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dataset: ") {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	// A test label of −1 (a class the sources lack) is allowed.
	p := testProblem()
	p.Test = &Domain{X: mat.NewDense(2, 2, nil), Y: []int{-1, 1}}
	if err := p.Check(); err != nil {
		t.Errorf("test label −1: %v", err)
	}
}

func TestProblemHoldOut(t *testing.T) {
	p := testProblem()
	q := p.HoldOut(1)
	if q.Name != "p, b held out" || q.Classes != 2 || len(q.Sources) != 2 {
		t.Fatalf("held-out problem %q with %d sources", q.Name, len(q.Sources))
	}
	if q.Sources[0].X != p.Sources[0].X || q.Sources[1].X != p.Sources[2].X {
		t.Error("the other sources are not kept in order")
	}
	if q.Target.X != p.Sources[1].X || q.Target.Labeled() || q.Test.X != p.Sources[1].X || !slices.Equal(q.Test.Y, p.Sources[1].Y) {
		t.Error("the held-out source is not the unlabeled target and the test rows")
	}
	if err := q.Check(); err != nil {
		t.Error(err)
	}
	// The result does not alias p's slice of sources.
	q.Sources[0] = Domain{Name: "changed"}
	if p.Sources[0].Name != "a" || p.HoldOut(2).Target.Name != "source 2" {
		t.Error("HoldOut aliases the sources, or an unnamed source is not named by its place")
	}
}

func TestPool(t *testing.T) {
	X, y := testProblem().PoolSources()
	if r, _ := X.Dims(); r != 14 || len(y) != 14 || X.At(8, 0) != 0 || X.At(8, 1) != 1 || y[8] != 1 {
		t.Errorf("pooled %d rows, labels %v", r, y)
	}
	if _, y := Pool([]Domain{{X: mat.NewDense(2, 1, nil)}}); y != nil {
		t.Error("unlabeled domains pool to labels")
	}
}

func TestProblemSubsample(t *testing.T) {
	p := testProblem()
	p.Test = &Domain{X: p.Target.X, Y: []int{0, 1, 0, 1, 0, 1}}
	q, drew := p.Subsample(4, 1)
	if !drew || q.Sources[1].X != p.Sources[1].X || q.Test != p.Test {
		t.Error("a domain within the cap, or the test rows, were not kept as they are")
	}
	if r := q.Sources[0].Rows(); r != 4 || len(q.Sources[0].Y) != 4 {
		t.Fatalf("source a: %d rows, %d labels; want 4", r, len(q.Sources[0].Y))
	}
	// The rows drawn are distinct rows of the domain, in order, with their
	// labels (the row index is in column 0; its label is index % 2).
	prev := -1.0
	for i := range 4 {
		x := q.Sources[0].X.At(i, 0)
		if x <= prev || x != float64(int(x)) || x > 7 || q.Sources[0].Y[i] != int(x)%2 {
			t.Errorf("row %d: x %v, label %d", i, x, q.Sources[0].Y[i])
		}
		prev = x
	}
	if q.Target.Rows() != 4 || q.Target.X == p.Target.X {
		t.Errorf("target: %d rows, want a copy of 4", q.Target.Rows())
	}
	// Deterministic for a seed, and the seed matters.
	q2, _ := p.Subsample(4, 1)
	if !mat.Equal(q.Sources[0].X, q2.Sources[0].X) || !mat.Equal(q.Target.X, q2.Target.X) {
		t.Error("same seed, other rows")
	}
	differ := false
	for seed := uint64(2); seed < 6 && !differ; seed++ {
		q3, _ := p.Subsample(4, seed)
		differ = !mat.Equal(q.Sources[0].X, q3.Sources[0].X)
	}
	if !differ {
		t.Error("four other seeds drew the same rows")
	}
	if _, drew := p.Subsample(100, 1); drew {
		t.Error("a cap above every domain drew rows")
	}
}

// writeCSVFile writes a CSV domain with columns x1, x2 and, when labels is
// not nil, label.
func writeCSVFile(t *testing.T, dir, name string, rows [][2]float64, labels []int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("x1,x2")
	if labels != nil {
		b.WriteString(",label")
	}
	b.WriteString("\n")
	for i, r := range rows {
		b.WriteString(strconv.FormatFloat(r[0], 'g', -1, 64) + "," + strconv.FormatFloat(r[1], 'g', -1, 64))
		if labels != nil {
			b.WriteString("," + strconv.Itoa(labels[i]))
		}
		b.WriteString("\n")
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	pts := [][2]float64{{0, 0}, {1, 2}, {2, 4}, {3, 6}}
	s1 := writeCSVFile(t, dir, "s1.csv", pts, []int{10, 20, 10, 20})
	s2 := writeCSVFile(t, dir, "s2.csv", pts, []int{10, 10, 10, 10})
	tgt := writeCSVFile(t, dir, "t.csv", pts, []int{20, 30, 30, 10})
	var notes []string
	l, err := Load([]string{s1, s2}, tgt, &LoadOptions{Scaling: ScaleMinMax, Note: func(m string) { notes = append(notes, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	if l.Name != "t.csv" || l.Classes != 2 || !slices.Equal(l.Labels.Values, []int{10, 20}) || l.Scaler.Kind != ScaleMinMax {
		t.Errorf("problem %q, %d classes %v, scaling %v", l.Name, l.Classes, l.Labels.Values, l.Scaler.Kind)
	}
	if l.Sources[0].Name != s1 || l.Target.Name != tgt || !slices.Equal(l.Sources[0].Y, []int{0, 1, 0, 1}) {
		t.Errorf("sources %+v, target %q", l.Sources[0], l.Target.Name)
	}
	if l.Target.X.At(3, 1) != 1 || l.Target.X.At(0, 0) != 0 {
		t.Errorf("target not min-max scaled: %v", mat.Formatted(l.Target.X))
	}
	if l.Test == nil || !slices.Equal(l.Test.Y, []int{1, -1, -1, 0}) || !slices.Equal(l.Unknown, []int{30}) {
		t.Errorf("test labels %v, unknown %v", l.Test, l.Unknown)
	}
	if !slices.Equal(l.Features, []string{"x1", "x2"}) {
		t.Errorf("features %v", l.Features)
	}
	want := []string{"source " + s2 + " has no rows of class [20]", "carries labels", "target labels [30] do not occur"}
	if len(notes) != len(want) {
		t.Fatalf("notes %q", notes)
	}
	for i, w := range want {
		if !strings.Contains(notes[i], w) {
			t.Errorf("note %q, want %q", notes[i], w)
		}
	}
	// An unlabeled target has no test rows.
	u := writeCSVFile(t, dir, "u.csv", pts, nil)
	if l, err := Load([]string{s1}, u, nil); err != nil || l.Test != nil || l.Unknown != nil {
		t.Errorf("unlabeled target: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	pts := [][2]float64{{0, 0}, {1, 2}, {2, 4}, {3, 1e150}}
	s1 := writeCSVFile(t, dir, "s1.csv", pts, []int{10, 20, 10, 20})
	u := writeCSVFile(t, dir, "u.csv", pts, nil)
	for _, tc := range []struct {
		name     string
		sources  []string
		target   string
		opt      *LoadOptions
		argument bool
		want     string
	}{
		{"same file", []string{s1, filepath.Join(dir, ".", "s1.csv")}, u, nil, true, "are the same file: give every domain once"},
		{"source as target", []string{s1}, s1, nil, true, "are the same file"},
		{"unlabeled source", []string{u}, s1, nil, false, "source " + u + " has no labels"},
		{"unscaled overflow", []string{s1}, u, &LoadOptions{Scaling: ScaleNone}, true, "row 4, feature 2 is 1e+150"},
		{"missing file", []string{filepath.Join(dir, "none.csv")}, u, nil, false, "none.csv"},
	} {
		_, err := Load(tc.sources, tc.target, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrArgument) != tc.argument {
			t.Errorf("%s: error %v, want %q (argument error: %v)", tc.name, err, tc.want, tc.argument)
		}
	}
}

func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// No header: the label is column 4. Column 3 is missing in all of t's
	// rows, column 2 once in s1 and once in t.
	s1 := write("s1.data", "1,2,5,0\n3,?,7,1\n5,6,9,0\n")
	s2 := write("s2.data", "0,4,1,1\r\n2,8,3,0\r\n")
	tgt := write("t.data", "1,,?,1\n2,NA,NaN,0\n")
	read := ReadOptions{NoHeader: true, LabelColumn: "4"}
	// Without a policy, a missing value is an error naming its place.
	if _, err := Load([]string{s1, s2}, tgt, &LoadOptions{Read: read}); err == nil || !strings.Contains(err.Error(), `s1.data: line 2, column "2": "?" is a missing value`) {
		t.Errorf("no policy: %v", err)
	}
	var notes []string
	note := func(m string) { notes = append(notes, m) }
	l, err := Load([]string{s1, s2}, tgt, &LoadOptions{Read: read, Missing: MissingImpute, Note: note})
	if err != nil {
		t.Fatal(err)
	}
	im := l.Imputer
	// Column 2's source mean is (2+6+4+8)/4 = 5, column 3's (5+7+9+1+3)/5 = 5.
	if im == nil || im.Features != 3 || !slices.Equal(im.Keep, []int{0, 1, 2}) || !slices.Equal(im.Fill, []float64{11. / 5, 5, 5}) {
		t.Fatalf("imputer %+v", im)
	}
	if r, c := l.Target.X.Dims(); r != 2 || c != 3 || l.Sources[0].Rows() != 3 {
		t.Errorf("target %d×%d", r, c)
	}
	if len(notes) != 3 || !strings.Contains(notes[0], "s1.data: 1 missing values, imputed") || !strings.Contains(notes[1], "t.data: 4 missing values") {
		t.Errorf("notes %q", notes)
	}
	// Drop: columns 2 and 3 go.
	notes = nil
	l, err = Load([]string{s1, s2}, tgt, &LoadOptions{Read: read, Missing: MissingDrop, Note: note})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.Imputer.Keep, []int{0}) || l.Target.X.RawMatrix().Cols != 1 || !strings.Contains(notes[2], "2 of 3 features dropped (2, 3)") {
		t.Errorf("drop: keep %v, notes %q", l.Imputer.Keep, notes)
	}
	// A column no source observes is dropped under impute too; every
	// column missing somewhere leaves nothing under drop.
	s3 := write("s3.data", "1,?,0\n2,?,1\n")
	t3 := write("t3.data", "?,1\n2,2\n")
	read3 := ReadOptions{NoHeader: true, LabelColumn: "3"}
	if l, err := Load([]string{s3}, t3, &LoadOptions{Read: read3, Missing: MissingImpute}); err != nil || !slices.Equal(l.Imputer.Keep, []int{0}) {
		t.Errorf("unobserved column: %v", err)
	}
	if _, err := Load([]string{s3}, t3, &LoadOptions{Read: read3, Missing: MissingDrop}); err == nil || !strings.Contains(err.Error(), "no feature is left") {
		t.Errorf("nothing left: %v", err)
	}
	// Files without missing values need no imputer.
	if l, err := Load([]string{s2}, write("t4.data", "1,2,3,0\n"), &LoadOptions{Read: read, Missing: MissingImpute}); err != nil || l.Imputer != nil {
		t.Errorf("complete files: imputer %v, %v", l.Imputer, err)
	}
	for _, s := range []string{"error", "impute", "drop"} {
		if m, err := ParseMissing(s); err != nil || m.String() != s {
			t.Errorf("ParseMissing(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseMissing("zero"); err == nil {
		t.Error("ParseMissing accepts zero")
	}
}
