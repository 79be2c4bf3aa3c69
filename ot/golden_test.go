package ot

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/golden"
)

// TestSinkhornLpl1Golden pins SinkhornLpl1's results, serial and split
// between goroutines, and its error messages to testdata/lpl1.golden.
func TestSinkhornLpl1Golden(t *testing.T) {
	var b strings.Builder
	C, labels := lpl1Problem(3, 4, 9, 1.5, 0.5)
	n, m := C.Dims()
	a := make([]float64, n)
	for i := range a {
		a[i] = (1 + float64(i%3)) / 24
	}
	for _, tc := range []struct {
		name        string
		a           []float64
		regE, regCl float64
		s           *SinkhornLpl1Settings
	}{
		{"defaults", nil, 0.05, 0.5, nil},
		{"weighted a, p = 0.3", a, 0.03, 1, &SinkhornLpl1Settings{P: 0.3, Eps: 1e-6, OuterIter: 5}},
		{"regCl = 0", nil, 0.05, 0, &SinkhornLpl1Settings{OuterIter: 7}},
		{"capped", nil, 0.01, 2, &SinkhornLpl1Settings{Sinkhorn: &SinkhornSettings{MaxIter: 5, Tol: 1e-12}}},
	} {
		res, err := SinkhornLpl1(tc.a, nil, C, labels, tc.regE, tc.regCl, tc.s)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: cost %v, marginal error %v, %d iterations, converged %v\nF %v\nG %v\nplan %v\n",
			tc.name, res.Cost, res.MarginalError, res.Iterations, res.Converged, res.F, res.G, res.Plan.RawMatrix().Data)
	}
	big, bigLabels := lpl1Problem(9, 100, 300, 1.5, 0.5)
	for _, w := range []int{1, 3} {
		res, err := SinkhornLpl1(nil, nil, big, bigLabels, 0.02, 0.5, &SinkhornLpl1Settings{OuterIter: 3, Sinkhorn: &SinkhornSettings{Workers: w}})
		if err != nil {
			t.Fatal(err)
		}
		rows := make([]float64, 300)
		for i := range rows {
			rows[i] = mat.Sum(res.Plan.RowView(i))
		}
		fmt.Fprintf(&b, "300×300, %d workers: cost %v, marginal error %v, %d iterations, converged %v\nF %v\nG %v\nrow sums %v\n",
			w, res.Cost, res.MarginalError, res.Iterations, res.Converged, res.F[:10], res.G[:10], rows)
	}
	bad := append([]int(nil), labels...)
	bad[2] = -1
	for _, tc := range []struct {
		labels      []int
		a, b        []float64
		regE, regCl float64
		s           *SinkhornLpl1Settings
	}{
		{labels, nil, nil, 0, 1, nil},
		{labels, nil, nil, 0.1, math.Inf(1), nil},
		{labels, nil, nil, 0.1, 1, &SinkhornLpl1Settings{P: 1.5}},
		{labels, nil, nil, 0.1, 1, &SinkhornLpl1Settings{Eps: -1}},
		{labels, nil, nil, 0.1, 1, &SinkhornLpl1Settings{OuterIter: -1}},
		{labels, nil, nil, 0.1, 1, &SinkhornLpl1Settings{Sinkhorn: &SinkhornSettings{Workers: -1}}},
		{labels[1:], nil, nil, 0.1, 1, nil},
		{bad, nil, nil, 0.1, 1, nil},
		{labels, Uniform(n + 1), nil, 0.1, 1, nil},
		{labels, nil, nil, 1e-320, 1, nil},
		{labels, nil, nil, 1e-15, 1, nil},
		{labels, scaledUniform(n, 1e-300), scaledUniform(m, 1e-300), 0.1, 1, nil},
	} {
		_, err := SinkhornLpl1(tc.a, tc.b, C, tc.labels, tc.regE, tc.regCl, tc.s)
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	golden.Check(t, "lpl1.golden", b.String())
}
