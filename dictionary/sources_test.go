package dictionary

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
)

// TestMoveSource: rows at small offsets e_i from a source's counterparts
// Σ_k α_ℓ,k T_k(j) move onto the target's points Σ_k α_T,k T_k(j) with
// their offsets centred over their class (e_i − mean e), and rows of a
// class the reconstruction lacks are left out.
func TestMoveSource(t *testing.T) {
	// Two atoms' images of four reconstruction points in 2-D; points 0, 1
	// are of class 0, points 2, 3 of class 1.
	images := []*mat.Dense{
		mat.NewDense(4, 2, []float64{0, 0, 1, 0, 5, 5, 6, 5}),
		mat.NewDense(4, 2, []float64{0, 2, 1, 3, 4, 8, 7, 9}),
	}
	byClass := [][]int{{0, 1}, {2, 3}, nil}
	alpha, alphaT := []float64{0.8, 0.2}, []float64{0.3, 0.7}
	at := func(a []float64, j int) []float64 {
		p := make([]float64, 2)
		for k, T := range images {
			floats.AddScaled(p, a[k], T.RawRowView(j))
		}
		return p
	}
	// The source's rows: its counterparts of points 3, 0, 2, 1 offset by
	// e (class 1's offsets have mean (0.05, 0.05), class 0's (0.1, 0)),
	// and a row of class 2, which the reconstruction lacks.
	order := []int{3, 0, 2, 1}
	e := [][]float64{{0.1, 0.1}, {0.1, 0}, {0, 0}, {0.1, 0}}
	mean := [][]float64{{0.1, 0}, {0.05, 0.05}}
	X := mat.NewDense(5, 2, nil)
	y := []int{1, 0, 1, 0, 2}
	for i, j := range order {
		x := at(alpha, j)
		floats.Add(x, e[i])
		X.SetRow(i, x)
	}
	X.SetRow(4, []float64{9, 9})
	got, err := moveSource(X, y, images, alpha, alphaT, byClass)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Y, y[:4]) {
		t.Fatalf("labels %v, want %v (the class-2 row left out)", got.Y, y[:4])
	}
	for i, j := range order {
		want := at(alphaT, j)
		floats.Add(want, e[i])
		floats.Sub(want, mean[y[i]])
		if !floats.EqualApprox(got.X.RawRowView(i), want, 1e-12) {
			t.Errorf("row %d moved to %v, want the target's point %d plus its centred offset, %v", i, got.X.RawRowView(i), j, want)
		}
	}
	none, err := moveSource(X.Slice(4, 5, 0, 2).(*mat.Dense), y[4:], images, alpha, alphaT, byClass)
	if err != nil || none.X != nil {
		t.Errorf("only rows of a class the reconstruction lacks: %v, %v", none.X, err)
	}
}

// TestFitModelSources: with TransportSources, DaDiL-R's classifier trains
// on the reconstruction and the sources' rows moved along the dictionary
// (more points than the reconstruction's), classifies the synthetic target
// as well as on the reconstruction alone, is the same for any GOMAXPROCS,
// and NewModel, which has no source rows, trains on the reconstruction
// alone; the transport is refused for DaDiL-E.
func TestFitModelSources(t *testing.T) {
	_, p := synthDomains(6)
	set := Settings{Atoms: 3, Epochs: 5, PlateauTol: -1, Seed: 6, Transport: TransportSources}
	m, err := FitModel(p, &set, nil)
	if err != nil {
		t.Fatal(err)
	}
	none := set
	none.Transport = TransportNone
	base, err := FitModel(p, &none, nil)
	if err != nil {
		t.Fatal(err)
	}
	score := func(m *Model) float64 {
		pred, err := m.PredictR(p.Test.X)
		if err != nil {
			t.Fatal(err)
		}
		return accuracy(pred, p.Test.Y)
	}
	if a, b := score(m), score(base); a < 0.95 || a < b-0.02 {
		t.Errorf("DaDiL-R with the moved sources: %.3f, on the reconstruction alone %.3f", a, b)
	}
	if mat.Equal(m.R.(*classify.Softmax).W, base.R.(*classify.Softmax).W) {
		t.Error("the moved sources do not change DaDiL-R's classifier")
	}
	prev := runtime.GOMAXPROCS(1)
	m1, err := FitModel(p, &set, nil)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(m1.R.(*classify.Softmax).W, m.R.(*classify.Softmax).W) {
		t.Error("DaDiL-R with the moved sources differs between GOMAXPROCS 1 and the default")
	}
	alone, err := NewModel(m.Dict, p.TargetIndex(), nil, 6)
	if err != nil {
		t.Fatal(err)
	}
	want, err := NewModel(base.Dict, p.TargetIndex(), nil, 6)
	if err != nil {
		t.Fatal(err)
	}
	if rows := alone.Reconstruction.X.RawMatrix().Rows; rows != want.Reconstruction.X.RawMatrix().Rows {
		t.Fatalf("NewModel's reconstruction has %d points", rows)
	}
	h, _, err := classify.Fit(alone.Reconstruction.X, alone.Reconstruction.Y, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(alone.R.(*classify.Softmax).W, h.W) {
		t.Error("NewModel with TransportSources does not train on the reconstruction alone")
	}
	// With TransportRows = 20, a k-nearest-neighbour DaDiL-R keeps the
	// reconstruction's points and 20 rows of each source, weighed half and
	// half.
	few := set
	few.TransportRows = 20
	mk, err := FitModel(p, &few, &classify.KNN{})
	if err != nil {
		t.Fatal(err)
	}
	nn := mk.R.(*classify.Neighbours)
	n := mk.Reconstruction.X.RawMatrix().Rows
	if rows := nn.X.RawMatrix().Rows; rows != n+20*len(p.Sources) {
		t.Errorf("DaDiL-R keeps %d points, want %d + 20·%d", rows, n, len(p.Sources))
	}
	if nn.W == nil || math.Abs(floats.Sum(nn.W[:n])-floats.Sum(nn.W[n:])) > 1e-12 {
		t.Errorf("weights %v: want the reconstruction's and the moved rows' halves equal", nn.W)
	}
	// TrainingR is that set: the kNN's points, 20 rows from every source
	// after the reconstruction's points, the weights summing to 1.
	ts := mk.TrainingR
	if ts == nil || !mat.Equal(ts.X, nn.X) || len(ts.Source) != n+20*len(p.Sources) || len(ts.Weights) != len(ts.Source) {
		t.Fatalf("TrainingR is not the set the kNN keeps")
	}
	for i, l := range ts.Source {
		if want := -1; i >= n {
			want = (i - n) / 20
			if l != want {
				t.Fatalf("point %d from source %d, want %d", i, l, want)
			}
		} else if l != want {
			t.Fatalf("reconstruction point %d from source %d", i, l)
		}
	}
	if s := floats.Sum(ts.Weights); math.Abs(s-1) > 1e-12 {
		t.Errorf("TrainingR's weights sum to %v", s)
	}
	if alone.TrainingR == nil || alone.TrainingR.X != alone.Reconstruction.X || alone.TrainingR.Weights != nil {
		t.Error("NewModel's TrainingR is not the reconstruction alone")
	}
	bad := set
	bad.EnsembleTransport = TransportSources
	if _, err := FitModel(p, &bad, nil); err == nil {
		t.Error("TransportSources accepted for DaDiL-E")
	}
}
