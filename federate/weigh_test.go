package federate

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/synth"
)

// weighAtoms returns K atoms of 3×2 points and 3×2 logits, atom k's
// values v·(k+1)+off.
func weighAtoms(K int, off float64) []dictionary.Atom {
	a := make([]dictionary.Atom, K)
	for k := range a {
		x, z := make([]float64, 6), make([]float64, 6)
		for i := range x {
			x[i] = float64(i*(k+1)) + off
			z[i] = -float64(i*(k+1)) - off
		}
		a[k] = dictionary.Atom{X: mat.NewDense(3, 2, x), Logits: mat.NewDense(3, 2, z)}
	}
	return a
}

func TestWeighMoves(t *testing.T) {
	for _, c := range []struct {
		name  string
		alpha []float64
	}{
		{"uniform", []float64{0.25, 0.25, 0.25, 0.25}},
		{"one-hot", []float64{0, 1, 0, 0}},
		{"mixed", []float64{0.1, 0.2, 0.3, 0.4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			from, moved := weighAtoms(4, 0), weighAtoms(4, 1)
			local := weighAtoms(4, 1)
			WeighMoves(moved, from, c.alpha)
			if !atomsEqual(from, weighAtoms(4, 0)) {
				t.Fatal("WeighMoves modified the round's atoms")
			}
			for k := range moved {
				w := 4 * c.alpha[k]
				for _, m := range [][3]*mat.Dense{{moved[k].X, from[k].X, local[k].X}, {moved[k].Logits, from[k].Logits, local[k].Logits}} {
					got, f, l := m[0].RawMatrix().Data, m[1].RawMatrix().Data, m[2].RawMatrix().Data
					for i := range got {
						// The move of the features is +1, of the logits −1.
						if want := f[i] + w*(l[i]-f[i]); got[i] != want {
							t.Fatalf("atom %d value %d: %g, want %g", k, i, got[i], want)
						}
					}
				}
			}
		})
	}
}

// TestSiteWeighsMoves runs one round in which one source site trains, the
// coordinator taking its atoms as they are (η_s = 1), or keeping the
// round's atoms (η_s = 10⁻³⁰⁰): with Config.WeighMoves the site sends the
// round's atoms plus K·α_k times its move of atom k, α its coordinates
// after its local epochs.
func TestSiteWeighsMoves(t *testing.T) {
	url := startServer(t, "secret")
	p := synth.Generate(synth.Default(), 1)
	run := func(lr float64, weigh bool) (*Result, []*SiteResult) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cfg := testConfig(1)
		cfg.Fraction, cfg.Seed = 0.25, 6 // seed 6 chooses a source in round 1
		cfg.Server = Server{Optimizer: ServerSGD, LR: lr}
		cfg.WeighMoves = weigh
		res, sites, err := RunProblem(ctx, url, "secret", p, cfg, SiteConfig{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res, sites
	}
	from, _ := run(1e-300, true)
	plain, _ := run(1, false)
	weighed, sites := run(1, true)
	ans := weighed.Rounds[0].Answered
	if len(ans) != 1 || ans[0] == weighed.Targets[0] || !slices.Equal(ans, plain.Rounds[0].Answered) {
		t.Fatalf("sites answering: %v and %v, want the same source", ans, plain.Rounds[0].Answered)
	}
	alpha := sites[ans[0]].Alpha
	if atomsEqual(plain.Atoms, weighed.Atoms) {
		t.Fatal("the weighed moves are the plain ones")
	}
	K := float64(len(alpha))
	for k := range alpha {
		for _, m := range [][3]*mat.Dense{{weighed.Atoms[k].X, from.Atoms[k].X, plain.Atoms[k].X}, {weighed.Atoms[k].Logits, from.Atoms[k].Logits, plain.Atoms[k].Logits}} {
			got, f, l := m[0].RawMatrix().Data, m[1].RawMatrix().Data, m[2].RawMatrix().Data
			for i := range got {
				if want := f[i] + K*alpha[k]*(l[i]-f[i]); math.Abs(got[i]-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("atom %d value %d: %g, want %g (α %v)", k, i, got[i], want, alpha)
				}
			}
		}
	}
}
