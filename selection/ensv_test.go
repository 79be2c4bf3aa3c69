package selection

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/synth"
)

// oneHot returns the n×c class probabilities that put row i in class y[i]
// with certainty.
func oneHot(c int, y ...int) *mat.Dense {
	P := mat.NewDense(len(y), c, nil)
	for i, k := range y {
		P.Set(i, k, 1)
	}
	return P
}

func TestEnsVScorePool(t *testing.T) {
	soft := mat.NewDense(3, 2, []float64{0.6, 0.4, 0.4, 0.6, 0.9, 0.1})
	for _, tc := range []struct {
		name   string
		probas []*mat.Dense
		want   []float64
	}{
		{"alone", []*mat.Dense{oneHot(3, 0, 2, 1)}, []float64{1}},
		{"identical", []*mat.Dense{oneHot(2, 0, 1, 1), oneHot(2, 0, 1, 1)}, []float64{1, 1}},
		// Two predictors agree everywhere, the third on one row of three.
		{"majority", []*mat.Dense{oneHot(2, 0, 1, 0), oneHot(2, 0, 1, 0), oneHot(2, 1, 0, 0)}, []float64{1, 1, 1.0 / 3}},
		// The ensemble averages probabilities, not votes: one confident
		// predictor outweighs two that hesitate.
		{"confidence", []*mat.Dense{soft, soft, oneHot(2, 1, 0, 1)}, []float64{1.0 / 3, 1.0 / 3, 2.0 / 3}},
	} {
		got, err := EnsV{}.ScorePool(tc.probas)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for m := range tc.want {
			if math.Abs(got[m]-tc.want[m]) > 1e-15 {
				t.Errorf("%s: scores %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
	// Balanced: a rare class the ensemble never prefers keeps the row
	// where it is four times as likely as on the others, and the
	// predictor that puts it in the common class recalls one of the
	// ensemble's two classes.
	rare := mat.NewDense(4, 2, []float64{0.9, 0.1, 0.9, 0.1, 0.9, 0.1, 0.6, 0.4})
	for _, tc := range []struct {
		s    EnsV
		name string
		want float64
	}{{EnsV{}, "ensv", 1}, {EnsV{Balanced: true}, "ensv-balanced", 0.5}} {
		got, err := tc.s.ScorePool([]*mat.Dense{rare})
		if err != nil || got[0] != tc.want || tc.s.Name() != tc.name {
			t.Errorf("%s: %v, %v, want %v", tc.s.Name(), got, err, tc.want)
		}
	}
	nan := oneHot(2, 0, 1)
	nan.Set(1, 0, math.NaN())
	for _, tc := range []struct {
		name   string
		probas []*mat.Dense
		want   string
	}{
		{"none", nil, "no predictors"},
		{"nil", []*mat.Dense{oneHot(2, 0), nil}, "predictor 2 has no class probabilities"},
		{"rows", []*mat.Dense{oneHot(2, 0, 1), oneHot(2, 0)}, "predictor 2 has 1×2 class probabilities, predictor 1 2×2"},
		{"classes", []*mat.Dense{oneHot(2, 0, 1), oneHot(3, 0, 1)}, "predictor 2 has 2×3"},
		{"nan", []*mat.Dense{oneHot(2, 0, 1), nan}, "predictor 2 has a class probability of NaN"},
	} {
		_, err := EnsV{}.ScorePool(tc.probas)
		if err == nil || !strings.HasPrefix(err.Error(), "selection: ensv: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestPool checks the two steps of a pooled scorer among others: Values
// leaves EnsV pending beside a scorer of single fits, Pool fills it in,
// and a predictor without probabilities gets an error, not a score. On
// the synthetic problem, OTDA agrees with the ensemble of itself, source-only and
// noise more than noise does.
func TestPool(t *testing.T) {
	p := synth.Generate(synth.Default(), 5)
	scorers := []Scorer{EnsV{}, Entropy{}}
	if !Pooled(scorers) || Pooled(scorers[1:]) {
		t.Fatal("Pooled")
	}
	var values [][]Value
	var probas []*mat.Dense
	for _, build := range []func() adapt.Method{otda, func() adapt.Method { return &adapt.SourceOnly{} }, bad} {
		c, _, err := fitted(p, build)
		if err != nil {
			t.Fatal(err)
		}
		v := Values(p, c, scorers)
		if v[0][0].Score != nil || v[0][0].Error != "" || v[0][0].Scorer != "ensv" || v[0][1].Score == nil {
			t.Fatalf("%s: values before Pool %+v", c.Method.Name(), v[0])
		}
		P := PoolProba(p, c, scorers)
		if len(P) != 1 || P[0] == nil || PoolProba(p, c, scorers[1:]) != nil {
			t.Fatalf("%s: PoolProba %v", c.Method.Name(), P)
		}
		values, probas = append(values, v...), append(probas, P...)
	}
	Pool(values, probas, scorers)
	ot, noise := values[0][0].Float(), values[2][0].Float()
	if !(ot > noise) || values[0][1].Score == nil {
		t.Errorf("after Pool: otda %v, noise %v (%+v)", ot, noise, values)
	}
	probas[1] = nil
	Pool(values, probas, scorers)
	if values[1][0].Score != nil || !strings.Contains(values[1][0].Error, "no class probabilities") || values[0][0].Score == nil {
		t.Errorf("a predictor without probabilities: %+v", values)
	}
	if _, err := (EnsV{}).Score(p, nil); err == nil || !strings.Contains(err.Error(), "selection.Pool") {
		t.Errorf("EnsV.Score: %v", err)
	}
}

// TestEnsVBalanced checks the balanced agreement and the trimmed
// ensemble of ensv-balanced against scores worked out by hand.
func TestEnsVBalanced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		probas []*mat.Dense
		plain  []float64
		want   []float64
	}{
		// A predictor that puts every row in the common class agrees
		// with 3 rows of 4, but recalls only one of the two classes.
		{"common class", []*mat.Dense{oneHot(2, 0, 0, 0, 1), oneHot(2, 0, 0, 0, 1), oneHot(2, 0, 0, 0, 0)},
			[]float64{1, 1, 0.75}, []float64{1, 1, 0.5}},
		// Plain, the ensemble puts every row in class 1 and prefers the
		// predictors that do. Balanced, the first ensemble is
		// (0, 0, 1, 0) and scores the predictors
		// (1/6, 1/2, 5/6, 1, 1/2) (balanced, computed by hand); the
		// first, below the median, leaves, and the trimmed ensemble of
		// the other four puts row 0 in class 1: (1, 0, 1, 0).
		{"trimmed", []*mat.Dense{
			oneHot(2, 0, 1, 0, 1), oneHot(2, 1, 1, 1, 1), oneHot(2, 1, 0, 1, 0),
			oneHot(2, 0, 0, 1, 0), oneHot(2, 1, 1, 1, 1)},
			[]float64{0.5, 1, 0.5, 0.25, 1}, []float64{0, 0.5, 1, 0.75, 0.5}},
	} {
		for _, s := range []EnsV{{}, {Balanced: true}} {
			got, err := s.ScorePool(tc.probas)
			want := tc.plain
			if s.Balanced {
				want = tc.want
			}
			if err != nil {
				t.Fatalf("%s, %s: %v", tc.name, s.Name(), err)
			}
			for m := range want {
				if math.Abs(got[m]-want[m]) > 1e-15 {
					t.Errorf("%s, %s: scores %v, want %v", tc.name, s.Name(), got, want)
					break
				}
			}
		}
	}
}
