package gmm

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestFitLabeledBalancedClasses(t *testing.T) {
	// Class 0 has 3 times the rows of class 1 and two components; class 2
	// has no rows.
	m := separated(3, 2)
	X, comp := draw(t, m, 1200, 4)
	y := make([]int, len(comp))
	for i, k := range comp {
		if k == 2 {
			y[i] = 1
		}
	}
	// Drop most rows of component 2 so that class 1 is the smaller one.
	var keep []int
	for i := range y {
		if y[i] == 0 || i%3 == 0 {
			keep = append(keep, i)
		}
	}
	Xk := mat.NewDense(len(keep), 2, nil)
	yk := make([]int, len(keep))
	for r, i := range keep {
		Xk.SetRow(r, X.RawRowView(i))
		yk[r] = y[i]
	}
	r, err := FitLabeled(Xk, yk, 3, &Settings{MaxComponents: 4, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	mix := r.Mixture
	if err := mix.Validate(); err != nil {
		t.Fatal(err)
	}
	if r.Class[2] != nil || r.First[2] != -1 {
		t.Errorf("class without rows: fit %v, first %d", r.Class[2], r.First[2])
	}
	if got := r.Class[0].Mixture.Components(); got != 2 {
		t.Errorf("class 0: %d components, want 2", got)
	}
	mass := make([]float64, 3)
	for k, w := range mix.Weights {
		row := mix.Labels.RawRowView(k)
		c := argmax(row)
		if row[c] != 1 || floatsSum(row) != 1 {
			t.Errorf("component %d: label %v is not one-hot", k, row)
		}
		mass[c] += w
	}
	if !near(mass[0], 0.5, 1e-12) || !near(mass[1], 0.5, 1e-12) || mass[2] != 0 {
		t.Errorf("class masses %v, want [0.5 0.5 0]", mass)
	}
	pred, err := mix.Predict(Xk)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pred {
		if pred[i] != yk[i] {
			t.Fatalf("row %d: predicted %d, want %d", i, pred[i], yk[i])
		}
	}
}

func floatsSum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

func TestFitLabeledErrors(t *testing.T) {
	X := mat.NewDense(4, 2, []float64{0, 0, 1, 1, 5, 5, 6, 6})
	_, err := FitLabeled(X, []int{0, 1, 0}, 2, nil)
	wantErr(t, err, "4 rows", "3 labels")
	_, err = FitLabeled(X, []int{0, 1, 2, 0}, 2, nil)
	wantErr(t, err, "y[2] = 2")
	_, err = FitLabeled(X, []int{0, 1, -1, 0}, 2, nil)
	wantErr(t, err, "y[2] = -1")
	_, err = FitLabeled(X, []int{0, 0, 0, 1}, 0, nil)
	wantErr(t, err, "classes = 0")
	_, err = FitLabeled(X, []int{0, 0, 0, 1}, 2, &Settings{Components: 2})
	wantErr(t, err, "class 1: 2 components for 1 rows")
	X.Set(0, 0, math.NaN())
	_, err = FitLabeled(X, []int{0, 0, 1, 1}, 2, nil)
	wantErr(t, err, "X[0][0]")
}

// TestFitLabeledBitIdenticalAcrossGOMAXPROCS: classes of one block each
// (fitted in parallel when more than one goroutine is allowed) and classes
// larger than a block (one at a time) give the same bits for any
// GOMAXPROCS and Workers.
func TestFitLabeledBitIdenticalAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, n := range []int{600, 3*blockRows + 100} {
		X, comp := draw(t, separated(6, 3), n, 5)
		y := make([]int, n)
		for i, k := range comp {
			y[i] = k % 3 // three classes of two components each
		}
		var ref *Mixture
		for _, c := range []struct{ procs, workers int }{{1, 0}, {4, 0}, {4, 1}, {2, 3}} {
			runtime.GOMAXPROCS(c.procs)
			r, err := FitLabeled(X, y, 3, &Settings{Components: 2, Seed: 7, Workers: c.workers})
			if err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = r.Mixture
				continue
			}
			m := r.Mixture
			if !slices.Equal(m.Weights, ref.Weights) || !sameBits(m.Means, ref.Means) || !sameBits(m.Std, ref.Std) || !sameBits(m.Labels, ref.Labels) {
				t.Errorf("%d rows, GOMAXPROCS %d, Workers %d: another mixture", n, c.procs, c.workers)
			}
		}
	}
}
