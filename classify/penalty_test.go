package classify

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
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
			chosen, anchor := slices.Index(got.Grid, got.L2), slices.Index(got.Grid, DefaultL2)
			floor := got.Score[best] - got.SE[best]
			switch {
			case got.Anchor != DefaultL2:
				t.Fatalf("anchor %g, want DefaultL2", got.Anchor)
			case chosen < 0 || got.Score[chosen] < floor:
				t.Fatalf("chose λ = %g (score %g), best %g (score %g ± %g)", got.L2, got.Score[chosen], got.Grid[best], got.Score[best], got.SE[best])
			case got.Score[anchor] >= floor && chosen != anchor:
				t.Fatalf("the anchor scores %g, within one SE of the best (%g ± %g), but λ = %g was chosen", got.Score[anchor], got.Score[best], got.SE[best], got.L2)
			case got.Score[anchor] < floor:
				for j := range chosen {
					if got.Score[j] >= floor {
						t.Fatalf("λ = %g (score %g) is within one SE of the best and larger than the choice %g", got.Grid[j], got.Score[j], got.L2)
					}
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
