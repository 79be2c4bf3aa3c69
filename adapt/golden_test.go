package adapt

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/golden"
)

// TestJCPOTGolden pins JCPOT's proportions, iterations and target
// probabilities under each rule, and its errors, to
// testdata/jcpot.golden.
func TestJCPOTGolden(t *testing.T) {
	src, tgt, _ := jwTargetShiftProblem(2, []float64{0.5, 0.2, 0.3}, 30)
	var b strings.Builder
	for _, m := range []*JCPOT{
		{}, {Reweight: true}, {Map: true, Reg: 0.1}, {Weights: []float64{2, 0, 1}, MaxIter: 40},
		{Reg: 1e-5, MaxIter: 50}, {Reg: 0.05, MaxIter: 3, Tol: 1e-300},
		{Reg: -1}, {MaxIter: -1}, {Weights: []float64{1}},
	} {
		err := fit(m, src, tgt, 3)
		fmt.Fprintf(&b, "Reg %g, MaxIter %d, Tol %g, Weights %v, Reweight %v, Map %v: %v\n",
			m.Reg, m.MaxIter, m.Tol, m.Weights, m.Reweight, m.Map, err)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "proportions %v, %d iterations, converged %v\n", m.Proportions, m.Iterations, m.Converged)
		P, err := m.Proba(tgt)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "proba %v\n", P.RawMatrix().Data)
	}
	golden.Check(t, "jcpot.golden", b.String())
}

// TestTCAProjectionGolden pins tcaProjection through each factor of the
// Gram matrix (Cholesky, eigendecomposition, pivoted Cholesky) and its
// error on constant data to testdata/tca.golden.
func TestTCAProjectionGolden(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	full := func(ns, nt, D int) (*mat.Dense, *mat.Dense) {
		off := make([]float64, D)
		off[0] = 1
		return tcaGaussRows(rng, ns, D, make([]float64, D)), tcaGaussRows(rng, nt, D, off)
	}
	deficient := func(ns, nt, D int) (*mat.Dense, *mat.Dense) {
		Xs, Xt := full(ns, nt, D)
		for _, X := range []*mat.Dense{Xs, Xt} {
			r, D := X.Dims()
			X.SetCol(1, mat.Col(nil, 0, X))
			X.SetCol(D-1, make([]float64, r))
		}
		return Xs, Xt
	}
	saved := pivotedMinDim
	defer func() { pivotedMinDim = saved }()
	var b strings.Builder
	for _, tc := range []struct {
		name   string
		Xs, Xt *mat.Dense
		k      int
		mu     float64
		pivot  int
	}{
		{"full rank", nil, nil, 3, 1, saved},
		{"full rank, n < D", nil, nil, 4, 0.5, saved},
		{"deficient, eigendecomposition", nil, nil, 4, 1, saved},
		{"deficient, pivoted", nil, nil, 4, 2, 0},
		{"constant", mat.NewDense(4, 3, nil), mat.NewDense(3, 3, nil), 2, 1, saved},
	} {
		switch tc.name {
		case "full rank":
			tc.Xs, tc.Xt = full(30, 20, 6)
		case "full rank, n < D":
			tc.Xs, tc.Xt = full(6, 5, 14)
		case "deficient, eigendecomposition", "deficient, pivoted":
			tc.Xs, tc.Xt = deficient(25, 20, 7)
		}
		pivotedMinDim = tc.pivot
		P, err := tcaProjection(tc.Xs, tc.Xt, tc.k, tc.mu)
		fmt.Fprintf(&b, "%s: %v\n", tc.name, err)
		if err == nil {
			r, c := P.Dims()
			fmt.Fprintf(&b, "%d×%d %v\n", r, c, P.RawMatrix().Data)
		}
	}
	golden.Check(t, "tca.golden", b.String())
}

// TestWJDOTGolden pins WJDOT's source weights, losses, classifier and
// target probabilities, full batch and mini-batch, for both losses, to
// testdata/wjdot.golden.
func TestWJDOTGolden(t *testing.T) {
	src, tgt, _ := jwTargetShiftProblem(4, []float64{0.5, 0.2, 0.3}, 20)
	var b strings.Builder
	for _, m := range []*WJDOT{
		{MaxIter: 6},
		{MaxIter: 6, Loss: WJDOTCrossEntropy, Beta: 0.5},
		{MaxIter: 5, BatchSize: 17, Seed: 3},
		{MaxIter: 5, BatchSize: 25, Seed: 4, Loss: WJDOTCrossEntropy, ClassifierSteps: 2, StepAlpha: 0.5},
	} {
		if err := fit(m, src, tgt, 3); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "MaxIter %d, Loss %v, Beta %g, BatchSize %d, Seed %d, ClassifierSteps %d, StepAlpha %g:\n",
			m.MaxIter, m.Loss, m.Beta, m.BatchSize, m.Seed, m.ClassifierSteps, m.StepAlpha)
		fmt.Fprintf(&b, "alpha %v\nlosses %v\nW %v\nB %v\n", m.Alpha, m.Losses, m.Model.W.RawMatrix().Data, m.Model.B)
		P, err := m.Proba(tgt)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "proba %v\n", P.RawMatrix().Data)
	}
	golden.Check(t, "wjdot.golden", b.String())
}
