package adapt

import (
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
)

// TestGMMDaDiLSources: with Transport TransportSources (the default)
// GMM-DaDiL-R's classifier changes, still classifies the demo's target well, is the
// same for any GOMAXPROCS, and, as a k-nearest-neighbour classifier,
// keeps the drawn rows and TransportRows rows of every source, each half
// of the weight; every moved row of class c is its source row shifted by
// the class's shift between the reconstructions.
func TestGMMDaDiLSources(t *testing.T) {
	src, tgt, truth := synthProblem(1)
	build := func(tr dictionary.Transport, c classify.Trainer, rows int) *GMMDaDiL {
		m := &GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: 1}, Seed: 1, Transport: tr, Classifier: c, TransportRows: rows}
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m, base := build(dictionary.TransportSources, nil, 0), build(dictionary.TransportNone, nil, 0)
	wantPredictorsAbove(t, m, tgt, truth, 0.85)
	if mat.Equal(m.R.(*classify.Softmax).W, base.R.(*classify.Softmax).W) {
		t.Error("the moved sources do not change GMM-DaDiL-R's classifier")
	}
	if def := build(dictionary.TransportAuto, nil, 0); !mat.Equal(def.R.(*classify.Softmax).W, m.R.(*classify.Softmax).W) {
		t.Error("the default GMM-DaDiL-R is not the one beside the moved sources")
	}
	// By default every source gives as many rows as are drawn from the
	// reconstruction, SamplesPerClass per class.
	few := &GMMDaDiL{Settings: &gmm.DictionarySettings{Seed: 1}, Seed: 1, SamplesPerClass: 50, Classifier: &classify.KNN{}}
	if err := fit(few, src, tgt, 3); err != nil {
		t.Fatal(err)
	}
	if rows := few.R.(*classify.Neighbours).X.RawMatrix().Rows; rows != 150*(1+len(src)) {
		t.Errorf("GMM-DaDiL-R with 50 rows per class keeps %d points, want 150 drawn + 150 of each of %d sources", rows, len(src))
	}
	prev := runtime.GOMAXPROCS(1)
	m1 := build(dictionary.TransportSources, nil, 0)
	runtime.GOMAXPROCS(prev)
	if !mat.Equal(m1.R.(*classify.Softmax).W, m.R.(*classify.Softmax).W) {
		t.Error("GMM-DaDiL-R with the moved sources differs between GOMAXPROCS 1 and the default")
	}
	k := build(dictionary.TransportSources, &classify.KNN{}, 20)
	nn := k.R.(*classify.Neighbours)
	n := DefaultGMMSamplesPerClass * 3
	if rows := nn.X.RawMatrix().Rows; rows != n+20*len(src) {
		t.Fatalf("GMM-DaDiL-R keeps %d points, want %d + 20·%d", rows, n, len(src))
	}
	if nn.W == nil || math.Abs(floats.Sum(nn.W[:n])-floats.Sum(nn.W[n:])) > 1e-12 {
		t.Errorf("weights: want the drawn rows' and the moved rows' halves equal")
	}
	// Each moved row minus the class's shift is a row of its source.
	S := len(src)
	var MT mat.Dense
	if _, err := k.Dict.Reconstructions[S].ClassMeans(&MT); err != nil {
		t.Fatal(err)
	}
	for l := range S {
		var ML mat.Dense
		if _, err := k.Dict.Reconstructions[l].ClassMeans(&ML); err != nil {
			t.Fatal(err)
		}
		for i := n + 20*l; i < n+20*(l+1); i++ {
			c := classify.Argmax(mat.NewDense(1, 3, nn.T.RawRowView(i)))[0]
			x := mat.Row(nil, i, nn.X)
			floats.Sub(x, MT.RawRowView(c))
			floats.Add(x, ML.RawRowView(c))
			found := false
			for r := range src[l].Y {
				if src[l].Y[r] == c && floats.EqualApprox(x, src[l].X.RawRowView(r), 1e-9) {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("moved row %d of source %d (class %d) is no source row shifted by the class's shift", i, l, c)
			}
		}
	}
}
