package classify

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// TestChoosePenaltyRule: on problems whose validation sets are shifted
// copies of the training classes, the choice obeys the one-standard-error
// rule (its score is within one SE of the best, and no larger penalty's
// is), its model is Fit's at that penalty bit for bit, the scores are
// balanced accuracies, and the choice is the same for any Workers.
func TestChoosePenaltyRule(t *testing.T) {
	for _, c := range []struct {
		name          string
		n, d, classes int
		sep, shift    float64
	}{
		{"separable, no shift", 300, 5, 3, 6, 0},
		{"overlapping, shifted", 300, 10, 2, 2, 1.5},
		{"many features", 120, 60, 4, 4, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := newRand(uint64(c.n + c.d))
			means, X, y := clusters(rng, c.n, c.d, c.classes, c.sep)
			var val []Labeled
			for v := range 2 {
				shifted := mat.DenseCopyOf(means)
				for j := range c.d {
					shifted.Set(v%c.classes, j, shifted.At(v%c.classes, j)+c.shift*rng.NormFloat64()/math.Sqrt(float64(c.d)))
				}
				Xv, yv := drawClusters(rng, shifted, 200, 1.5)
				val = append(val, Labeled{X: Xv, Y: yv})
			}
			T := OneHot(y, c.classes)
			got, err := ChoosePenalty(X, T, nil, val, nil, &Settings{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.IsSortedFunc(got.Grid, func(a, b float64) int { return -cmpFloat(a, b) }) || len(got.Grid) != len(DefaultL2Grid) {
				t.Fatalf("grid %v: want DefaultL2Grid, largest first", got.Grid)
			}
			best := 0
			for j := range got.Grid {
				if got.Score[j] < 0 || got.Score[j] > 1 || got.SE[j] < 0 {
					t.Fatalf("λ = %g: score %g, SE %g", got.Grid[j], got.Score[j], got.SE[j])
				}
				if got.Score[j] > got.Score[best] {
					best = j
				}
			}
			chosen := slices.Index(got.Grid, got.L2)
			bas := make([][]float64, len(got.Grid))
			for j, l2 := range got.Grid {
				m, _, err := Fit(X, T, nil, &Settings{L2: l2, Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				bas[j] = setScores(t, m, val)
			}
			within := func(j int) bool { // D(λ_j) ≤ SE(λ_j), recomputed
				var d []float64
				for v := range val {
					d = append(d, bas[best][v]-bas[j][v])
				}
				mean, sd := stat.MeanStdDev(d, nil)
				if se := sd / math.Sqrt(float64(len(d))); math.Abs(se-got.SE[j]) > 1e-12 {
					t.Fatalf("λ = %g: SE %g, want the standard error of the paired deficits %g", got.Grid[j], got.SE[j], se)
				}
				return mean <= got.SE[j]
			}
			anchor := slices.Index(got.Grid, DefaultL2)
			if got.Anchor != DefaultL2 || within(anchor) && chosen != anchor {
				t.Fatalf("anchor %g within one SE of the best: %v, but chose λ = %g", got.Anchor, within(anchor), got.L2)
			}
			for j := range got.Grid {
				if w := within(j); !within(anchor) && (j < chosen && w || j == chosen && !w) {
					t.Fatalf("chose λ = %g; λ = %g within one SE of the best: %v (scores %v, SE %v)", got.L2, got.Grid[j], w, got.Score, got.SE)
				}
			}
			t.Logf("scores %.3f, SE %.3f: chose λ = %g", got.Score, got.SE, got.L2)
			want, _, err := Fit(X, T, nil, &Settings{L2: got.L2, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(want.W, got.Model.W) || !slices.Equal(want.B, got.Model.B) {
				t.Fatal("the chosen model differs from Fit's at its penalty")
			}
			ba, err := validationScore(got.Model, val)
			if err != nil || ba != got.Score[chosen] {
				t.Fatalf("score %g, recomputed %g (%v)", got.Score[chosen], ba, err)
			}
			par, err := ChoosePenalty(X, T, nil, val, nil, &Settings{Workers: 4})
			if err != nil {
				t.Fatal(err)
			}
			if par.L2 != got.L2 || !slices.Equal(par.Score, got.Score) || !mat.Equal(par.Model.W, got.Model.W) {
				t.Fatal("the choice depends on Workers")
			}
		})
	}
}

// validationScore recomputes the mean balanced accuracy of m on val with
// BalancedAccuracy.
func validationScore(m *Softmax, val []Labeled) (float64, error) {
	var s float64
	for _, d := range val {
		p, err := m.Predict(d.X)
		if err != nil {
			return 0, err
		}
		ba, err := BalancedAccuracy(p, d.Y)
		if err != nil {
			return 0, err
		}
		s += ba / float64(len(val))
	}
	return s, nil
}

// setScores returns m's balanced accuracy on every set of val.
func setScores(t *testing.T, m *Softmax, val []Labeled) []float64 {
	var ba []float64
	for _, d := range val {
		p, err := m.Predict(d.X)
		if err != nil {
			t.Fatal(err)
		}
		b, err := BalancedAccuracy(p, d.Y)
		if err != nil {
			t.Fatal(err)
		}
		ba = append(ba, b)
	}
	return ba
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestBalancedAccuracyVariance: the variance of a balanced accuracy is
// (1/C²) Σ_c r_c (1 − r_c) / n_c.
func TestBalancedAccuracyVariance(t *testing.T) {
	pred := []int{0, 0, 1, 1, 1, 2, 2, 2, 2, 0}
	truth := []int{0, 0, 0, 1, 1, 2, 2, 2, 2, 2}
	// recalls 2/3, 2/2, 4/5
	ba, v := balancedAccuracyVar(pred, truth)
	wantBA := (2.0/3 + 1 + 4.0/5) / 3
	wantV := (2.0/3*(1.0/3)/3 + 0 + 0.8*0.2/5) / 9
	if math.Abs(ba-wantBA) > 1e-15 || math.Abs(v-wantV) > 1e-15 {
		t.Fatalf("got %g ± var %g, want %g ± var %g", ba, v, wantBA, wantV)
	}
	if b, err := BalancedAccuracy(pred, truth); err != nil || b != ba {
		t.Fatalf("BalancedAccuracy gives %g (%v), balancedAccuracyVar %g", b, err, ba)
	}
}

func TestChoosePenaltyErrors(t *testing.T) {
	rng := newRand(3)
	_, X, y := clusters(rng, 40, 3, 2, 3)
	T := OneHot(y, 2)
	good := []Labeled{{X: X, Y: y}}
	for _, c := range []struct {
		name string
		val  []Labeled
		grid []float64
		want string
	}{
		{"no validation", nil, nil, "no validation set"},
		{"empty set", []Labeled{{X: X, Y: y}, {}}, nil, "validation set 1 is empty"},
		{"rows and labels", []Labeled{{X: X, Y: y[:5]}}, nil, "validation set 0 has 40 rows and 5 labels"},
		{"bad grid", good, []float64{1e-3, -1}, "penalty -1 is not a positive number"},
		{"empty grid", good, []float64{}, "an empty grid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ChoosePenalty(X, T, nil, c.val, c.grid, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "classify: ChoosePenalty: ") {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestChoosePenaltyOneSet: with a single validation set, the standard
// error is the sampling error of the best balanced accuracy.
func TestChoosePenaltyOneSet(t *testing.T) {
	rng := newRand(5)
	_, X, y := clusters(rng, 60, 3, 2, 1)
	got, err := ChoosePenalty(X, OneHot(y, 2), nil, []Labeled{{X: X, Y: y}}, []float64{1e-5, 1e-1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Grid, []float64{1e-1, DefaultL2, 1e-5}) || got.Anchor != DefaultL2 {
		t.Fatalf("grid %v, anchor %g: want the anchor DefaultL2 added, largest first", got.Grid, got.Anchor)
	}
	pred, err := got.Model.Predict(X)
	if err != nil {
		t.Fatal(err)
	}
	ba, v := balancedAccuracyVar(pred, y)
	j := slices.Index(got.Grid, got.L2)
	if ba != got.Score[j] || v == 0 {
		t.Fatalf("score %g, want %g", got.Score[j], ba)
	}
	best := floats.MaxIdx(got.Score)
	mb, _, _ := Fit(X, OneHot(y, 2), nil, &Settings{L2: got.Grid[best]})
	pb, _ := mb.Predict(X)
	_, vb := balancedAccuracyVar(pb, y)
	for k := range got.Grid {
		if math.Abs(got.SE[k]-math.Sqrt(vb)) > 1e-15 {
			t.Fatalf("λ = %g: SE %g, want the sampling error of the best score %g", got.Grid[k], got.SE[k], math.Sqrt(vb))
		}
	}
	within := func(k int) bool { return got.Score[k] >= got.Score[best]-got.SE[k] }
	if a := slices.Index(got.Grid, DefaultL2); within(a) != (j == a) || !within(j) {
		t.Fatalf("chose λ = %g: scores %v, SE %v", got.L2, got.Score, got.SE)
	}
}

// TestChoosePenaltyAnchor: the anchor is s.L2, added to a grid that lacks
// it, and sorted with the rest.
func TestChoosePenaltyAnchor(t *testing.T) {
	rng := newRand(5)
	_, X, y := clusters(rng, 60, 3, 2, 3)
	got, err := ChoosePenalty(X, OneHot(y, 2), nil, []Labeled{{X: X, Y: y}}, []float64{1e-5, 1e-1}, &Settings{L2: 3e-3})
	if err != nil {
		t.Fatal(err)
	}
	if got.Anchor != 3e-3 || !slices.Equal(got.Grid, []float64{1e-1, 3e-3, 1e-5}) {
		t.Fatalf("anchor %g, grid %v", got.Anchor, got.Grid)
	}
}
