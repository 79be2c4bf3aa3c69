package ot

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// naiveSqEuclidean computes ‖x_i − y_j‖² by direct summation.
func naiveSqEuclidean(X, Y mat.Matrix) *mat.Dense {
	n, d := X.Dims()
	m, _ := Y.Dims()
	C := mat.NewDense(n, m, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			var s float64
			for k := 0; k < d; k++ {
				t := X.At(i, k) - Y.At(j, k)
				s += t * t
			}
			C.Set(i, j, s)
		}
	}
	return C
}

func TestSqEuclideanMatchesNaive(t *testing.T) {
	for _, tc := range []struct{ n, m, d int }{
		{1, 1, 1}, {5, 7, 3}, {40, 33, 10}, {64, 100, 64}, {3, 200, 800},
	} {
		rng := skRand(uint64(tc.n*tc.m + tc.d))
		X, Y := skPoints(rng, tc.n, tc.d, 0), skPoints(rng, tc.m, tc.d, 0.3)
		var C mat.Dense
		if err := SqEuclidean(&C, X, Y); err != nil {
			t.Fatal(err)
		}
		want := naiveSqEuclidean(X, Y)
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.m; j++ {
				got, w := C.At(i, j), want.At(i, j)
				if !(got >= 0) || math.Abs(got-w) > 1e-10*w {
					t.Fatalf("%v: C[%d,%d] = %.17g, want %.17g", tc, i, j, got, w)
				}
			}
		}
	}
}

func TestSqEuclideanSelfAndNonNegative(t *testing.T) {
	rng := skRand(2)
	X := skPoints(rng, 50, 7, 1e3) // far from the origin: cancellation
	var C mat.Dense
	if err := SqEuclidean(&C, X, X); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if C.At(i, i) != 0 {
			t.Errorf("C[%d,%d] = %g, want 0", i, i, C.At(i, i))
		}
	}
	// A copy of X is not recognised as X: the diagonal is only near zero,
	// but never negative.
	Xc := mat.DenseCopyOf(X)
	if err := SqEuclidean(&C, X, Xc); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		for j := 0; j < 50; j++ {
			v := C.At(i, j)
			if v < 0 || math.IsNaN(v) {
				t.Fatalf("C[%d,%d] = %g", i, j, v)
			}
			if i == j && v > 1e-9 {
				t.Errorf("C[%d,%d] = %g, want ≈ 0", i, i, v)
			}
		}
	}
}

func TestSqEuclideanDst(t *testing.T) {
	rng := skRand(4)
	X, Y := skPoints(rng, 6, 3, 0), skPoints(rng, 4, 3, 0)
	want := naiveSqEuclidean(X, Y)
	near := func(A mat.Matrix) bool { return mat.EqualApprox(A, want, 1e-12) }

	// Zero value, resized.
	var C mat.Dense
	if err := SqEuclidean(&C, X, Y); err != nil || !near(&C) {
		t.Fatalf("zero-value dst: %v", err)
	}
	// Reused with the right shape, including a strided view.
	C2 := mat.NewDense(6, 4, nil)
	C2.Apply(func(_, _ int, _ float64) float64 { return math.NaN() }, C2)
	if err := SqEuclidean(C2, X, Y); err != nil || !near(C2) {
		t.Fatalf("reused dst: %v", err)
	}
	big := mat.NewDense(10, 10, nil)
	view := big.Slice(1, 7, 2, 6).(*mat.Dense)
	if err := SqEuclidean(view, X, Y); err != nil || !near(view) {
		t.Fatalf("view dst: %v", err)
	}
	if big.At(0, 0) != 0 || big.At(7, 6) != 0 {
		t.Error("wrote outside the view")
	}
	// Reset makes it empty again.
	C2.Reset()
	if err := SqEuclidean(C2, X, X); err != nil {
		t.Fatal(err)
	}
	if r, c := C2.Dims(); r != 6 || c != 6 {
		t.Errorf("after Reset: %d×%d", r, c)
	}
	// Non-Dense inputs.
	var Yt mat.Dense
	Yt.CloneFrom(Y.T())
	var C3 mat.Dense
	if err := SqEuclidean(&C3, X, Yt.T()); err != nil || !near(&C3) {
		t.Fatalf("transposed input: %v", err)
	}
}

func TestCostErrors(t *testing.T) {
	X := mat.NewDense(3, 2, nil)
	Y := mat.NewDense(4, 3, nil)
	Y2 := mat.NewDense(4, 2, nil)
	sq := func(x, y []float64) float64 { return 0 }
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"dimension", SqEuclidean(&mat.Dense{}, X, Y), "dimension mismatch: X has d=2 columns, Y has 3"},
		{"wrong dst", SqEuclidean(mat.NewDense(3, 3, nil), X, Y2), "destination matrix is 3×3, want 3×4"},
		{"dst is X", SqEuclidean(X, X, mat.NewDense(2, 2, nil)), "destination matrix is X"},
		{"dst is Y", SqEuclidean(Y2, mat.NewDense(4, 2, nil), Y2), "destination matrix is Y"},
		{"nil dst", SqEuclidean(nil, X, Y2), "destination matrix is nil"},
		{"nil X", SqEuclidean(&mat.Dense{}, nil, Y2), "point matrix is nil"},
		{"empty X", SqEuclidean(&mat.Dense{}, &mat.Dense{}, Y2), "empty point matrix"},
		{"pairwise nil cost", Pairwise(&mat.Dense{}, X, Y, nil), "cost function is nil"},
		{"pairwise wrong dst", Pairwise(mat.NewDense(4, 3, nil), X, Y, sq), "destination matrix is 4×3, want 3×4"},
		{"pairwise empty Y", Pairwise(&mat.Dense{}, X, &mat.Dense{}, sq), "empty point matrix"},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if msg := tc.err.Error(); !strings.HasPrefix(msg, "ot: ") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: error %q, want it to contain %q", tc.name, msg, tc.want)
		}
	}
}

func TestSqEuclideanNonFinite(t *testing.T) {
	X := mat.NewDense(2, 2, []float64{0, 0, math.NaN(), 1})
	Y := mat.NewDense(2, 2, []float64{1, 1, math.Inf(1), 0})
	var C mat.Dense
	if err := SqEuclidean(&C, X, Y); err != nil {
		t.Fatal(err)
	}
	if v := C.At(0, 0); v != 2 && !math.IsNaN(v) {
		t.Errorf("C[0,0] = %g, want 2 or NaN", v)
	}
	for _, ij := range [][2]int{{0, 1}, {1, 0}, {1, 1}} {
		if v := C.At(ij[0], ij[1]); !(math.IsNaN(v) || math.IsInf(v, 1)) {
			t.Errorf("C%v = %g, want NaN or +Inf", ij, v)
		}
	}
}

func TestPairwise(t *testing.T) {
	rng := skRand(6)
	for _, tc := range []struct{ n, m, dx, dy int }{{7, 5, 3, 3}, {200, 150, 4, 2}} {
		X, Y := skPoints(rng, tc.n, tc.dx, 0), skPoints(rng, tc.m, tc.dy, 0)
		var calls atomic.Int64
		l1 := func(x, y []float64) float64 {
			calls.Add(1)
			if len(x) != tc.dx || len(y) != tc.dy {
				panic("wrong row lengths")
			}
			var s float64
			for k := range min(len(x), len(y)) {
				s += math.Abs(x[k] - y[k])
			}
			return s
		}
		var C mat.Dense
		if err := Pairwise(&C, X, Y, l1); err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got != int64(tc.n*tc.m) {
			t.Errorf("%d calls, want %d", got, tc.n*tc.m)
		}
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.m; j++ {
				if got, want := C.At(i, j), l1(X.RawRowView(i), Y.RawRowView(j)); got != want {
					t.Fatalf("C[%d,%d] = %g, want %g", i, j, got, want)
				}
			}
		}
	}
	// With the squared Euclidean cost it agrees with SqEuclidean.
	X, Y := skPoints(rng, 30, 5, 0), skPoints(rng, 20, 5, 1)
	var P, S mat.Dense
	sq := func(x, y []float64) float64 {
		var s float64
		for k := range x {
			s += (x[k] - y[k]) * (x[k] - y[k])
		}
		return s
	}
	if err := Pairwise(&P, X, Y, sq); err != nil {
		t.Fatal(err)
	}
	if err := SqEuclidean(&S, X, Y); err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(&P, &S, 1e-12) {
		t.Error("Pairwise with the squared Euclidean cost differs from SqEuclidean")
	}
}

func BenchmarkSqEuclidean(b *testing.B) {
	for _, bc := range []struct{ n, m, d int }{{1000, 1000, 64}, {200, 200, 800}} {
		rng := skRand(1)
		X, Y := skPoints(rng, bc.n, bc.d, 0), skPoints(rng, bc.m, bc.d, 0)
		b.Run(fmt.Sprintf("%dx%dx%d", bc.n, bc.m, bc.d), func(b *testing.B) {
			var C mat.Dense
			for b.Loop() {
				if err := SqEuclidean(&C, X, Y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
