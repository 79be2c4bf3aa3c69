package classify

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestFitErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	X := mat.NewDense(3, 2, []float64{0, 1, 2, 3, 4, 5})
	T := mat.NewDense(3, 2, []float64{1, 0, 0.5, 0.5, 0, 1})
	with := func(M *mat.Dense, i, j int, v float64) *mat.Dense {
		var C mat.Dense
		C.CloneFrom(M)
		C.Set(i, j, v)
		return &C
	}
	for _, tc := range []struct {
		name    string
		X, T    *mat.Dense
		weights []float64
		s       *Settings
		want    string
	}{
		{"nil X", nil, T, nil, nil, "features X are empty"},
		{"empty X", &mat.Dense{}, T, nil, nil, "features X are empty"},
		{"NaN feature", with(X, 1, 0, nan), T, nil, nil, "X[1, 0] = NaN is not finite"},
		{"infinite feature", with(X, 2, 1, -inf), T, nil, nil, "X[2, 1] = -Inf is not finite"},
		{"nil T", X, nil, nil, nil, "targets T are empty"},
		{"empty T", X, &mat.Dense{}, nil, nil, "targets T are empty"},
		{"rows mismatch", X, mat.NewDense(2, 2, []float64{1, 0, 0, 1}), nil, nil, "X has 3 rows but T has 2"},
		{"NaN target", X, with(T, 1, 1, nan), nil, nil, "T[1, 1] is NaN"},
		{"negative target", X, with(with(T, 0, 0, 1.5), 0, 1, -0.5), nil, nil, "T[0, 1] = -0.5 is negative"},
		{"infinite target", X, with(T, 2, 0, inf), nil, nil, "T[2, 0] is infinite"},
		{"row sum", X, with(T, 1, 1, 0.6), nil, nil, "row 1 of T sums to 1.1"},
		{"row sum just outside", X, with(T, 2, 1, 1+2e-6), nil, nil, "row 2 of T sums to"},
		{"weights length", X, T, []float64{1, 1}, nil, "X has 3 rows but there are 2 weights"},
		{"negative weight", X, T, []float64{1, -1, 1}, nil, "weight 1 = -1 is negative"},
		{"NaN weight", X, T, []float64{1, 1, nan}, nil, "weight 2 is NaN"},
		{"infinite weight", X, T, []float64{inf, 1, 1}, nil, "weight 0 is infinite"},
		{"zero weights", X, T, []float64{0, 0, 0}, nil, "weights sum to zero"},
		{"overflowing weights", X, T, []float64{1e308, 1e308, 1}, nil, "sum of the weights overflows"},
		{"tiny weights", X, T, []float64{5e-324, 0, 0}, nil, "too small to invert"},
		{"negative L2", X, T, nil, &Settings{L2: -1}, "Settings.L2 = -1"},
		{"NaN L2", X, T, nil, &Settings{L2: nan}, "Settings.L2 = NaN"},
		{"infinite L2", X, T, nil, &Settings{L2: inf}, "Settings.L2 = +Inf"},
		{"NoPenalty with L2", X, T, nil, &Settings{L2: 0.1, NoPenalty: true}, "NoPenalty is set but Settings.L2 = 0.1"},
		{"negative MaxIter", X, T, nil, &Settings{MaxIter: -1}, "Settings.MaxIter = -1"},
		{"negative GradTol", X, T, nil, &Settings{GradTol: -1e-3}, "Settings.GradTol = -0.001"},
		{"NaN GradTol", X, T, nil, &Settings{GradTol: nan}, "Settings.GradTol = NaN"},
		{"negative Workers", X, T, nil, &Settings{Workers: -2}, "Settings.Workers = -2"},
		{"overflow", mat.NewDense(4, 1, []float64{1e308, 1e308, 1e308, 1e308}), mat.NewDense(4, 2, []float64{1, 0, 1, 0, 1, 0, 1, 0}), nil, nil, "overflows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, r, err := Fit(tc.X, tc.T, tc.weights, tc.s)
			checkErr(t, err, tc.want)
			if m != nil || r != nil {
				t.Errorf("got a model or result with an error")
			}
		})
	}
	// Accepted edge cases: rows summing to 1 within 1e-6, zero weights
	// on some samples.
	for _, T := range []*mat.Dense{with(T, 2, 1, 1+9e-7), with(T, 0, 0, 1-9e-7)} {
		if _, _, err := Fit(X, T, []float64{0, 1, 2}, nil); err != nil {
			t.Errorf("rejected valid input: %v", err)
		}
	}
}

func TestFitLabelsErrors(t *testing.T) {
	X := mat.NewDense(3, 2, []float64{0, 1, 2, 3, 4, 5})
	for _, tc := range []struct {
		name    string
		X       *mat.Dense
		labels  []int
		classes int
		weights []float64
		s       *Settings
		want    string
	}{
		{"nil X", nil, []int{0, 1, 0}, 2, nil, nil, "features X are empty"},
		{"NaN feature", mat.NewDense(1, 1, []float64{math.NaN()}), []int{0}, 2, nil, nil, "X[0, 0] = NaN"},
		{"no classes", X, []int{0, 0, 0}, 0, nil, nil, "0 classes; need at least 1"},
		{"labels length", X, []int{0, 1}, 2, nil, nil, "X has 3 rows but there are 2 labels"},
		{"label too large", X, []int{0, 2, 1}, 2, nil, nil, "label 2 of row 1 is outside [0, 2)"},
		{"negative label", X, []int{0, 1, -1}, 2, nil, nil, "label -1 of row 2 is outside [0, 2)"},
		{"weights", X, []int{0, 1, 0}, 2, []float64{1, 1, -1}, nil, "weight 2 = -1 is negative"},
		{"settings", X, []int{0, 1, 0}, 2, nil, &Settings{Workers: -1}, "Settings.Workers = -1"},
		{"too many classes", X, []int{0, 1, 0}, 1 << 40, nil, nil, "more than MaxParams"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, r, err := FitLabels(tc.X, tc.labels, tc.classes, tc.weights, tc.s)
			checkErr(t, err, tc.want)
			if m != nil || r != nil {
				t.Errorf("got a model or result with an error")
			}
		})
	}
}

func TestModelErrors(t *testing.T) {
	good := &Softmax{W: mat.NewDense(2, 3, nil), B: []float64{0, 0}, Classes: 2, Dim: 3}
	X := mat.NewDense(4, 3, nil)
	for _, tc := range []struct {
		name string
		m    *Softmax
		X    *mat.Dense
		dst  *mat.Dense
		want string
	}{
		{"nil model", nil, X, &mat.Dense{}, "nil model"},
		{"no classes", &Softmax{W: good.W, B: nil, Classes: 0, Dim: 3}, X, &mat.Dense{}, "0 classes, 3 features"},
		{"nil W", &Softmax{B: good.B, Classes: 2, Dim: 3}, X, &mat.Dense{}, "W is empty"},
		{"bias length", &Softmax{W: good.W, B: []float64{0}, Classes: 2, Dim: 3}, X, &mat.Dense{}, "len(B) = 1 but there are 2 classes"},
		{"W shape", &Softmax{W: mat.NewDense(3, 2, nil), B: good.B, Classes: 2, Dim: 3}, X, &mat.Dense{}, "W is 3×2, want 2×3"},
		{"nil X", good, nil, &mat.Dense{}, "features X are empty"},
		{"X columns", good, mat.NewDense(4, 2, nil), &mat.Dense{}, "X has 2 columns but the model has 3 features"},
		{"X NaN", good, mat.NewDense(1, 3, []float64{0, math.NaN(), 0}), &mat.Dense{}, "X[0, 1] = NaN"},
		{"nil dst", good, X, nil, "nil destination"},
		{"dst shape", good, X, mat.NewDense(4, 3, nil), "dst is 4×3, want 4×2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.Proba(tc.dst, tc.X)
			checkErr(t, err, tc.want)
			if tc.dst != nil && tc.dst.IsEmpty() == false && tc.name != "dst shape" {
				t.Errorf("dst resized despite the error")
			}
			if tc.dst == nil || tc.name == "dst shape" {
				return
			}
			pred, err := tc.m.Predict(tc.X)
			checkErr(t, err, tc.want)
			if pred != nil {
				t.Errorf("Predict returned %v with an error", pred)
			}
		})
	}
}

func TestAccuracy(t *testing.T) {
	for _, tc := range []struct {
		pred, truth []int
		want        float64
		err         string
	}{
		{[]int{0, 1, 2, 1}, []int{0, 1, 1, 1}, 0.75, ""},
		{[]int{3}, []int{3}, 1, ""},
		{[]int{0, 1}, []int{1, 0}, 0, ""},
		{[]int{0, 1}, []int{0}, 0, "2 predictions but 1 true labels"},
		{nil, nil, 0, "no predictions"},
	} {
		got, err := Accuracy(tc.pred, tc.truth)
		if tc.err != "" {
			checkErr(t, err, tc.err)
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Accuracy(%v, %v) = %g, %v; want %g", tc.pred, tc.truth, got, err, tc.want)
		}
	}
}

// checkErr fails unless err is a classify error containing want.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("no error, want one containing %q", want)
	case !strings.HasPrefix(err.Error(), "classify: "):
		t.Errorf("error %q lacks the classify: prefix", err)
	case !strings.Contains(err.Error(), want):
		t.Errorf("error %q does not contain %q", err, want)
	}
}
