package classify

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

func TestProbaPredict(t *testing.T) {
	m := &Softmax{
		W:       mat.NewDense(3, 2, []float64{1, 0, 0, 1, -1, -1}),
		B:       []float64{0, 0.5, 0},
		Classes: 3,
		Dim:     2,
	}
	X := mat.NewDense(5, 2, []float64{
		0, 0,
		2, 0,
		0, 2,
		-3, -3,
		1000, 0, // would overflow exp without the shift
	})
	var P mat.Dense
	if err := m.Proba(&P, X); err != nil {
		t.Fatal(err)
	}
	pred, err := m.Predict(X)
	if err != nil {
		t.Fatal(err)
	}
	wantPred := []int{1, 0, 1, 2, 0}
	for i := range 5 {
		z := make([]float64, 3)
		for k := range 3 {
			z[k] = m.B[k] + floats.Dot(m.W.RawRowView(k), X.RawRowView(i))
		}
		zmax := floats.Max(z)
		var se float64
		for _, v := range z {
			se += math.Exp(v - zmax)
		}
		for k := range 3 {
			want := math.Exp(z[k]-zmax) / se
			if got := P.At(i, k); math.Abs(got-want) > 1e-15 || math.IsNaN(got) {
				t.Errorf("P[%d, %d] = %g, want %g", i, k, got, want)
			}
		}
		if s := floats.Sum(P.RawRowView(i)); math.Abs(s-1) > 1e-15 {
			t.Errorf("row %d of P sums to %g", i, s)
		}
		if pred[i] != wantPred[i] || pred[i] != floats.MaxIdx(P.RawRowView(i)) {
			t.Errorf("row %d: predicted %d, want %d (probabilities %v)", i, pred[i], wantPred[i], P.RawRowView(i))
		}
	}
	// A non-empty dst of the right shape is reused, views included.
	big := mat.NewDense(7, 5, nil)
	view := big.Slice(1, 6, 1, 4).(*mat.Dense)
	if err := m.Proba(view, X); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(view, &P) {
		t.Errorf("Proba into a view differs")
	}
	if big.At(0, 0) != 0 || big.At(6, 4) != 0 || big.At(1, 0) != 0 || big.At(1, 4) != 0 {
		t.Errorf("Proba wrote outside the view")
	}
}

func TestPredictTies(t *testing.T) {
	X := mat.NewDense(2, 1, []float64{0, 1})
	for _, tc := range []struct {
		W, B []float64
		want []int
	}{
		{[]float64{0, 0, 0}, []float64{0, 0, 0}, []int{0, 0}},
		{[]float64{0, 0, 0}, []float64{1, 2, 2}, []int{1, 1}},
		{[]float64{0, 1, 1}, []float64{0, 0, 0}, []int{0, 1}},
	} {
		m := &Softmax{W: mat.NewDense(3, 1, tc.W), B: tc.B, Classes: 3, Dim: 1}
		pred, err := m.Predict(X)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pred {
			if pred[i] != tc.want[i] {
				t.Errorf("W=%v B=%v: predictions %v, want %v", tc.W, tc.B, pred, tc.want)
				break
			}
		}
	}
}

// TestModelStrides checks that models and features held in views (row
// stride larger than the number of columns) work.
func TestModelStrides(t *testing.T) {
	rng := newRand(17)
	_, X, labels := clusters(rng, 80, 4, 3, 3)
	wide := mat.NewDense(80, 9, nil)
	view := wide.Slice(0, 80, 2, 6).(*mat.Dense)
	view.Copy(X)
	m1, r1, err := FitLabels(X, labels, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2, r2, err := FitLabels(view, labels, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *r1 != *r2 || !sameModel(m1, m2) {
		t.Errorf("training on a view differs")
	}
	Wbig := mat.NewDense(3, 7, nil)
	Wv := Wbig.Slice(0, 3, 1, 5).(*mat.Dense)
	Wv.Copy(m1.W)
	m3 := &Softmax{W: Wv, B: m1.B, Classes: 3, Dim: 4}
	var P1, P3 mat.Dense
	if err := m1.Proba(&P1, X); err != nil {
		t.Fatal(err)
	}
	if err := m3.Proba(&P3, view); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(&P1, &P3) {
		t.Errorf("Proba with strided W and X differs")
	}
}
