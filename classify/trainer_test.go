package classify

import (
	"cmp"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// blobs returns n points per class of c Gaussian blobs in d dimensions,
// centres sep apart along the first axes, and their labels.
func blobs(rng *rand.Rand, n, c, d int, sep, noise float64) (*mat.Dense, []int) {
	X := mat.NewDense(n*c, d, nil)
	y := make([]int, n*c)
	for k := range c {
		for i := range n {
			r := k*n + i
			y[r] = k
			for j := range d {
				v := noise * rng.NormFloat64()
				if j == k%d {
					v += sep
				}
				X.Set(r, j, v)
			}
		}
	}
	return X, y
}

func TestStratifiedFolds(t *testing.T) {
	class := []int{0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2}
	folds := StratifiedFolds(class, 3, 7)
	var all []int
	for f, fold := range folds {
		if !slices.IsSorted(fold) {
			t.Errorf("fold %d not sorted: %v", f, fold)
		}
		if len(fold) < 4 || len(fold) > 5 {
			t.Errorf("fold %d has %d rows", f, len(fold))
		}
		count := map[int]int{}
		for _, i := range fold {
			count[class[i]]++
		}
		if count[0] < 1 || count[1] != 1 || count[2] != 2 {
			t.Errorf("fold %d is not stratified: %v", f, count)
		}
		all = append(all, fold...)
	}
	slices.Sort(all)
	for i, v := range all {
		if v != i {
			t.Fatalf("the folds are not a partition: %v", all)
		}
	}
	if !slices.EqualFunc(folds, StratifiedFolds(class, 3, 7), slices.Equal) {
		t.Error("the same seed dealt other folds")
	}
}

// TestSoftmaxCV: the penalty chosen follows the data: strong on few noisy
// points in many dimensions, weak on well separated, plentiful points; the
// choice and the model do not depend on the number of goroutines.
func TestSoftmaxCV(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	Xn, yn := blobs(rng, 10, 3, 60, 0.6, 1)
	Xs, ys := blobs(rng, 100, 3, 4, 6, 1)
	cv := &SoftmaxCV{Seed: 3}
	noisy, scores, err := cv.Select(Xn, OneHot(yn, 3), nil)
	if err != nil || len(scores) != len(DefaultL2Grid) {
		t.Fatal(err, scores)
	}
	sep, _, err := cv.Select(Xs, OneHot(ys, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(noisy > sep) {
		t.Errorf("penalty %g on noisy data, %g on separated data: want more on the noisy", noisy, sep)
	}
	m, err := cv.Train(Xs, OneHot(ys, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	pred, _ := m.Predict(Xs)
	if acc, _ := Accuracy(pred, ys); acc < 0.99 {
		t.Errorf("accuracy %.3f on separated blobs", acc)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	again, err := cv.Train(Xs, OneHot(ys, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(m.(*Softmax).W, again.(*Softmax).W) {
		t.Error("one goroutine gave another model")
	}
	runtime.GOMAXPROCS(4)
	// Too few rows for the folds: the default penalty.
	if l, _, err := cv.Select(Xs.Slice(0, 4, 0, 4).(*mat.Dense), OneHot(ys[:4], 3), nil); err != nil || l != DefaultL2 {
		t.Errorf("4 rows: %g, %v", l, err)
	}
	for _, bad := range []*SoftmaxCV{{L2s: []float64{}}, {L2s: []float64{-1}}, {L2s: []float64{math.Inf(1)}}, {Folds: 1}} {
		if _, _, err := bad.Select(Xs, OneHot(ys, 3), nil); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestKNN: the neighbours are those of a brute-force search, k comes from
// leave-one-out, and soft targets and weights vote.
func TestKNN(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	X, y := blobs(rng, 30, 3, 5, 3, 1)
	m, err := (&KNN{K: 4}).Train(X, OneHot(y, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	nb := m.(*Neighbours)
	Q, _ := blobs(rng, 5, 3, 5, 3, 1)
	got := nb.neighbours(Q, 4, false)
	for i := range 15 {
		d := make([]float64, 90)
		idx := make([]int, 90)
		for j := range 90 {
			var s float64
			for q := range 5 {
				e := Q.At(i, q) - X.At(j, q)
				s += e * e
			}
			d[j], idx[j] = s, j
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(d[a], d[b]) })
		if !slices.Equal(got[i], idx[:4]) {
			t.Errorf("row %d: neighbours %v, brute force %v", i, got[i], idx[:4])
		}
	}
	auto, err := (&KNN{}).Train(X, OneHot(y, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := auto.(*Neighbours).K; !slices.Contains(DefaultKGrid, k) {
		t.Errorf("k = %d is not on the grid", k)
	}
	// A single training point of weight 0 among three does not vote.
	one := mat.NewDense(3, 1, []float64{0, 1, 2})
	T := mat.NewDense(3, 2, []float64{1, 0, 0, 1, 0.5, 0.5})
	w, err := (&KNN{K: 3}).Train(one, T, []float64{1, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	var P mat.Dense
	if err := w.Proba(&P, mat.NewDense(1, 1, []float64{1})); err != nil {
		t.Fatal(err)
	}
	if math.Abs(P.At(0, 0)-0.75) > 1e-15 || math.Abs(P.At(0, 1)-0.25) > 1e-15 {
		t.Errorf("probabilities %v, want [0.75 0.25]", mat.Formatted(&P))
	}
	if _, err := (&KNN{K: -1}).Train(one, T, nil); err == nil {
		t.Error("K = -1 accepted")
	}
}

// TestSoftmaxTrainer: the trainer is Fit.
func TestSoftmaxTrainer(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	X, y := blobs(rng, 20, 2, 3, 2, 1)
	c, err := (&SoftmaxTrainer{}).Train(X, OneHot(y, 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := FitLabels(X, y, 2, nil, nil)
	if !mat.Equal(c.(*Softmax).W, want.W) {
		t.Error("SoftmaxTrainer differs from FitLabels")
	}
}
