package dataset

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

func TestParseScaling(t *testing.T) {
	tests := []struct {
		in      string
		want    Scaling
		wantErr bool
	}{
		{"none", ScaleNone, false},
		{"minmax", ScaleMinMax, false},
		{" MinMax ", ScaleMinMax, false},
		{"standard", ScaleStandard, false},
		{"zscore", 0, true},
		{"", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseScaling(tc.in)
		if tc.wantErr {
			errContains(t, err, "dataset: unknown scaling")
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseScaling(%q) = %v, %v", tc.in, got, err)
		}
		if back, _ := ParseScaling(got.String()); back != got {
			t.Errorf("String round trip of %v", got)
		}
	}
	if s := Scaling(7).String(); s != "Scaling(7)" {
		t.Errorf("String of invalid: %q", s)
	}
}

func TestFitScaler(t *testing.T) {
	a := &File{Name: "a", X: newDense(2, 3,
		1, 5, 7,
		3, 5, -1)}
	b := &File{Name: "b", X: newDense(2, 3,
		2, 5, 3,
		6, 5, 3)}
	tests := []struct {
		kind          Scaling
		offset, scale []float64
	}{
		{ScaleNone, []float64{0, 0, 0}, []float64{1, 1, 1}},
		// Column 2 is constant: scale 1.
		{ScaleMinMax, []float64{1, 5, -1}, []float64{1.0 / 5, 1, 1.0 / 8}},
		// Means 3, 5, 3; population deviations sqrt(3.5), 0, sqrt(8).
		{ScaleStandard, []float64{3, 5, 3}, []float64{1 / math.Sqrt(3.5), 1, 1 / math.Sqrt(8)}},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			s, err := FitScaler(tc.kind, a, b)
			if err != nil {
				t.Fatal(err)
			}
			if s.Kind != tc.kind || !close(s.Offset, tc.offset) || !close(s.Scale, tc.scale) {
				t.Fatalf("got offset %v scale %v, want %v %v", s.Offset, s.Scale, tc.offset, tc.scale)
			}
			// Transformed data have the fitted properties over both
			// domains together.
			ta, err := s.TransformFile(a)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := s.TransformFile(b)
			if err != nil {
				t.Fatal(err)
			}
			all := mat.NewDense(4, 3, nil)
			all.Stack(ta.X, tb.X)
			for j := range 3 {
				col := mat.Col(nil, j, all)
				switch tc.kind {
				case ScaleMinMax:
					lo, hi := slices.Min(col), slices.Max(col)
					if j == 1 {
						if lo != 0 || hi != 0 {
							t.Errorf("constant column maps to [%v, %v]", lo, hi)
						}
					} else if lo != 0 || !scalar.EqualWithinAbs(hi, 1, 1e-15) || hi > 1 {
						t.Errorf("column %d spans [%v, %v]", j, lo, hi)
					}
				case ScaleStandard:
					var m, v float64
					for _, x := range col {
						m += x / 4
					}
					for _, x := range col {
						v += (x - m) * (x - m) / 4
					}
					wantV := 1.0
					if j == 1 {
						wantV = 0
					}
					if math.Abs(m) > 1e-15 || math.Abs(v-wantV) > 1e-14 {
						t.Errorf("column %d: mean %v variance %v", j, m, v)
					}
				}
			}
			if ta.Name != "a" || dense(a.X)[0] != 1 {
				t.Fatal("TransformFile changed its input or lost the name")
			}
		})
	}
}

// close reports whether a and b are equal within 1e-15 relative error.
func close(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return scalar.EqualWithinAbsOrRel(x, y, 1e-15, 1e-15) })
}

func TestFitScalerEdgeCases(t *testing.T) {
	tiny := &File{Name: "tiny", X: newDense(2, 1, 0, 5e-324)}
	huge := &File{Name: "huge", X: newDense(2, 1, -1e308, 1e308)}
	big := &File{Name: "big", X: newDense(3, 1, 1e307, 1e308, 1.7e308)}
	one := &File{Name: "one", X: newDense(1, 2, 4, -2)}

	// A range whose inverse overflows gets scale 1.
	s, err := FitScaler(ScaleMinMax, tiny)
	if err != nil || s.Scale[0] != 1 {
		t.Fatalf("tiny range: %v, %v", s, err)
	}
	s, err = FitScaler(ScaleStandard, tiny)
	if err != nil || s.Scale[0] != 1 {
		t.Fatalf("tiny deviation: %v, %v", s, err)
	}
	// A single row is constant.
	for _, kind := range []Scaling{ScaleMinMax, ScaleStandard} {
		s, err = FitScaler(kind, one)
		if err != nil || !slices.Equal(s.Scale, []float64{1, 1}) || !slices.Equal(s.Offset, []float64{4, -2}) {
			t.Fatalf("%v of one row: %+v, %v", kind, s, err)
		}
	}
	// A sum that overflows still gives a finite mean and deviation.
	s, err = FitScaler(ScaleStandard, big)
	if err != nil || linalg.FirstNonFinite(s.Offset) >= 0 || linalg.FirstNonFinite(s.Scale) >= 0 || s.Scale[0] <= 0 {
		t.Fatalf("big values: %+v, %v", s, err)
	}
	if want := (1e307 + 1e308 + 1.7e308) / 3 * (1 - 1e-15); s.Offset[0] < want*(1-1e-12) {
		t.Fatalf("mean %v", s.Offset[0])
	}

	tests := []struct {
		name    string
		kind    Scaling
		domains []*File
		want    string
	}{
		{"range overflow", ScaleMinMax, []*File{huge}, "dataset: feature 1: range [-1e+308, 1e+308] does not fit in a float64"},
		{"deviation overflow", ScaleStandard, []*File{{X: newDense(3, 1, -1.7e308, 1.7e308, 1.7e308)}}, "dataset: feature 1: deviations from the mean do not fit in a float64"},
		{"invalid kind", Scaling(9), []*File{one}, "dataset: invalid scaling 9"},
		{"no domains", ScaleMinMax, nil, "dataset: no domains"},
		{"incompatible", ScaleMinMax, []*File{one, tiny}, "feature dimensions differ: one has 2 features, tiny has 1"},
		{"NaN", ScaleStandard, []*File{one, {Name: "bad", X: newDense(1, 2, 1, math.NaN())}}, "dataset: bad: features: row 1, column 2 is NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FitScaler(tc.kind, tc.domains...)
			errContains(t, err, tc.want)
		})
	}
}

func TestTransform(t *testing.T) {
	s := &Scaler{Kind: ScaleMinMax, Offset: []float64{1, 2}, Scale: []float64{0.5, 2}}
	x := newDense(2, 2, 1, 2, 3, 5)
	want := []float64{0, 0, 1, 6}

	var dst mat.Dense
	if err := s.Transform(&dst, x); err != nil || !slices.Equal(dense(&dst), want) {
		t.Fatalf("empty dst: %v, %v", dense(&dst), err)
	}
	same := mat.NewDense(2, 2, nil)
	if err := s.Transform(same, x); err != nil || !slices.Equal(dense(same), want) {
		t.Fatalf("sized dst: %v", err)
	}
	// A view with a stride larger than its width.
	wide := mat.NewDense(2, 4, []float64{1, 2, 9, 9, 3, 5, 9, 9})
	view := wide.Slice(0, 2, 0, 2).(*mat.Dense)
	if err := s.Transform(view, view); err != nil || !slices.Equal(dense(view), want) || wide.At(0, 2) != 9 {
		t.Fatalf("in place on a view: %v, %v", dense(wide), err)
	}

	tests := []struct {
		name string
		s    *Scaler
		dst  *mat.Dense
		x    *mat.Dense
		want string
	}{
		{"wrong width", s, &mat.Dense{}, newDense(1, 3, 1, 2, 3), "dataset: the scaler was fitted for 2 features, the data have 3"},
		{"wrong dst", s, mat.NewDense(3, 2, nil), x, "dataset: Transform: destination is 3×2, the data 2×2"},
		{"nil dst", s, nil, x, "dataset: Transform: nil destination"},
		{"empty x", s, &mat.Dense{}, &mat.Dense{}, "dataset: Transform: no data"},
		{"inconsistent scaler", &Scaler{Offset: []float64{1}, Scale: []float64{1, 2}}, &mat.Dense{}, x, "dataset: invalid Scaler: 1 offsets and 2 scales"},
		{"nil scaler", nil, &mat.Dense{}, x, "dataset: nil Scaler"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errContains(t, tc.s.Transform(tc.dst, tc.x), tc.want)
		})
	}
	_, err := s.TransformFile(&File{Path: "w.mat", X: newDense(1, 3, 1, 2, 3)})
	errContains(t, err, "the scaler was fitted for 2 features, the data have 3 (domain w.mat)")
	_, err = s.TransformFile(nil)
	errContains(t, err, "nil domain")
}

func TestTransformFileCopies(t *testing.T) {
	d := &File{Name: "d", Path: "d.csv", X: newDense(2, 1, 1, 3), Labels: []int{5, 6}}
	s, err := FitScaler(ScaleMinMax, d)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.TransformFile(d)
	if err != nil {
		t.Fatal(err)
	}
	out.Labels[0] = 99
	out.X.Set(0, 0, 42)
	if d.Labels[0] != 5 || d.X.At(0, 0) != 1 || out.Name != "d" || out.Path != "d.csv" {
		t.Fatal("TransformFile shares storage with its input")
	}
}

func TestScalerJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(20, 3, nil)
	for i := range 20 {
		for j := range 3 {
			x.Set(i, j, rng.NormFloat64()*float64(j+1))
		}
	}
	s, err := FitScaler(ScaleStandard, &File{X: x})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Scaler
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Kind != ScaleStandard || !slices.Equal(back.Offset, s.Offset) || !slices.Equal(back.Scale, s.Scale) {
		t.Fatalf("round trip: %s", b)
	}
	if err := json.Unmarshal([]byte(`{"Kind":"zscore"}`), &back); err == nil {
		t.Fatal("unknown kind accepted")
	}
	if _, err := json.Marshal(Scaler{Kind: 5}); err == nil {
		t.Fatal("invalid kind marshalled")
	}
}

func TestScalerInverse(t *testing.T) {
	f := &File{X: newDense(3, 2, 1, 10, 2, 30, 4, 20)}
	for _, kind := range []Scaling{ScaleNone, ScaleMinMax, ScaleStandard} {
		s, err := FitScaler(kind, f)
		if err != nil {
			t.Fatal(err)
		}
		var Xs, back mat.Dense
		if err := s.Transform(&Xs, f.X); err != nil {
			t.Fatal(err)
		}
		if err := s.Inverse(&back, &Xs); err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(&back, f.X, 1e-12) {
			t.Errorf("%v: Inverse(Transform(X)) = %v", kind, mat.Formatted(&back))
		}
	}
}

// TestScalerInverseSpread: the spread of scaled rows, mapped back, is the
// spread of the rows in their own units (the population standard
// deviation of every feature, which the offsets do not change).
func TestScalerInverseSpread(t *testing.T) {
	f := &File{X: newDense(3, 2, 1, 10, 2, 30, 4, 20)}
	std := func(X *mat.Dense) *mat.Dense {
		r, c := X.Dims()
		out := mat.NewDense(1, c, nil)
		for j := range c {
			col := mat.Col(nil, j, X)
			var m, v float64
			for _, x := range col {
				m += x / float64(r)
			}
			for _, x := range col {
				v += (x - m) * (x - m) / float64(r)
			}
			out.Set(0, j, math.Sqrt(v))
		}
		return out
	}
	for _, kind := range []Scaling{ScaleNone, ScaleMinMax, ScaleStandard} {
		s, err := FitScaler(kind, f)
		if err != nil {
			t.Fatal(err)
		}
		var Xs, back mat.Dense
		if err := s.Transform(&Xs, f.X); err != nil {
			t.Fatal(err)
		}
		if err := s.InverseSpread(&back, std(&Xs)); err != nil {
			t.Fatal(err)
		}
		if want := std(f.X); !mat.EqualApprox(&back, want, 1e-12) {
			t.Errorf("%v: InverseSpread = %v, want %v", kind, mat.Formatted(&back), mat.Formatted(want))
		}
	}
	s := &Scaler{Offset: []float64{0}, Scale: []float64{2}}
	if err := s.InverseSpread(&mat.Dense{}, mat.NewDense(1, 2, nil)); err == nil || !strings.Contains(err.Error(), "fitted for 1 features") {
		t.Errorf("wrong width: %v", err)
	}
}
