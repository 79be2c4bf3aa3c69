package ot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/golden"
)

// TestEMDGolden pins EMDSolver.Solve's plans, costs, duals and pivot counts
// (one solver reused across problems of every kind, zero weights and
// rounding residuals included) and its error messages to testdata/emd.golden.
func TestEMDGolden(t *testing.T) {
	var b strings.Builder
	type problem struct {
		name string
		a, b []float64
		C    mat.Matrix
	}
	problems := []problem{
		{"1×1", nil, nil, mat.NewDense(1, 1, []float64{3})},
		{"1×m", []float64{2}, []float64{0.5, 1, 0.5}, mat.NewDense(1, 3, []float64{1, 2, 3})},
		{"n×1", []float64{0.2, 0.3, 0.5}, nil, mat.NewDense(3, 1, []float64{1, 2, 3})},
		{"all-zero cost", nil, nil, mat.NewDense(4, 6, nil)},
		{"zero weights", []float64{0, 0.5, 0, 0.5}, []float64{0.25, 0, 0.75}, mat.NewDense(4, 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3})},
		{"negative costs", nil, nil, mat.NewDense(3, 3, []float64{-1, 2, -3, 4, -5, 6, -7, 8, -9})},
		{"unnormalised", []float64{2, 3}, []float64{1, 1, 3}, mat.NewDense(2, 3, []float64{1, 0, 2, 3, 1, 0})},
		{"sum mismatch within 1e-9", []float64{0.5, 0.5}, []float64{0.5, 0.5 + 4e-10}, mat.NewDense(2, 2, []float64{0, 1, 1, 0})},
		{"column left to a residual", []float64{0.5, 0.5}, []float64{1, 1e-17}, mat.NewDense(2, 2, []float64{0, 1, 0, 2})},
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, kind := range []string{"uniform", "zeros", "integer", "duplicate", "random"} {
		for _, sz := range [][2]int{{7, 9}, {30, 25}} {
			a, bw, C := randomProblem(rng, sz[0], sz[1], kind)
			problems = append(problems, problem{fmt.Sprintf("%s %d×%d", kind, sz[0], sz[1]), a, bw, C})
		}
	}
	var s EMDSolver
	var r EMDResult
	for _, p := range problems {
		if err := s.Solve(&r, p.a, p.b, p.C); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		fmt.Fprintf(&b, "%s: cost %v, %d pivots, plan %d×%d\nrow %v\ncol %v\nmass %v\nU %v\nV %v\n",
			p.name, r.Cost, r.Pivots, r.Plan.N, r.Plan.M, r.Plan.Row, r.Plan.Col, r.Plan.Mass, r.U, r.V)
	}

	c22 := mat.NewDense(2, 2, []float64{0, 1, 1, 0})
	_, _, big := randomProblem(rng, 40, 40, "random")
	for _, tc := range []struct {
		maxPivots int
		dst       *EMDResult
		a, b      []float64
		C         mat.Matrix
	}{
		{0, nil, nil, nil, c22},
		{-1, &r, nil, nil, c22},
		{0, &r, nil, nil, nil},
		{0, &r, []float64{1}, nil, c22},
		{0, &r, []float64{1.5, -0.5}, nil, c22},
		{0, &r, nil, []float64{math.NaN(), 1}, c22},
		{0, &r, []float64{0, 0}, nil, c22},
		{0, &r, []float64{0.5, 0.5}, []float64{0.5, 0.6}, c22},
		{0, &r, nil, nil, mat.NewDense(2, 2, []float64{0, math.NaN(), 1, 0})},
		{0, &r, nil, nil, mat.NewDense(2, 2, []float64{0, 1, math.Inf(-1), 0})},
		{5, &r, nil, nil, big},
	} {
		s.MaxPivots = tc.maxPivots
		fmt.Fprintf(&b, "error: %v\n", s.Solve(tc.dst, tc.a, tc.b, tc.C))
	}
	golden.Check(t, "emd.golden", b.String())
}
