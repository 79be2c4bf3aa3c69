package linalg

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

func randDense(rng *rand.Rand, r, c int) *mat.Dense {
	A := mat.NewDense(r, c, nil)
	for i := range A.RawMatrix().Data {
		A.RawMatrix().Data[i] = rng.NormFloat64()
	}
	return A
}

// TestMulABT compares with gonum's product and checks that the assembly
// kernel, the portable path, every blocking and any number of goroutines
// give bit-identical results.
func TestMulABT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {3, 4, 4}, {5, 7, 3}, {7, 9, 13}, {48, 64, 16}, {50, 70, 801}, {100, 130, 64}, {211, 67, 37}}
	for _, sh := range shapes {
		m, n, k := sh[0], sh[1], sh[2]
		A, B := randDense(rng, m, k), randDense(rng, n, k)
		var want mat.Dense
		want.Mul(A, B.T())
		C := mat.NewDense(m, n, nil)
		MulABT(C, A, B)
		if !mat.EqualApprox(C, &want, 1e-12*float64(k)) {
			t.Fatalf("%v: differs from gonum's product", sh)
		}
		// Every entry equals the canonical dot product exactly.
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				if v := dot(A.RawRowView(i), B.RawRowView(j)); C.At(i, j) != v {
					t.Fatalf("%v: C[%d][%d] = %v, canonical %v", sh, i, j, C.At(i, j), v)
				}
			}
		}
		// Every kernel, with one goroutine: identical.
		for path := range kernelPaths(t) {
			procs := runtime.GOMAXPROCS(1)
			C2 := mat.NewDense(m, n, nil)
			MulABT(C2, A, B)
			runtime.GOMAXPROCS(procs)
			if !mat.Equal(C, C2) {
				t.Fatalf("%v: the %s kernel differs", sh, path)
			}
		}
		// Strided views.
		big := randDense(rng, m+2, k+3)
		Av := big.Slice(1, m+1, 2, k+2).(*mat.Dense)
		Av.Copy(A)
		C3 := mat.NewDense(m+1, n+5, nil)
		Cv := C3.Slice(0, m, 3, n+3).(*mat.Dense)
		MulABT(Cv, Av, B)
		if !mat.Equal(Cv, C) {
			t.Fatalf("%v: strided views differ", sh)
		}
	}
}

// kernelPaths returns an iterator over the dot-product kernels this
// machine runs, each switched on in turn while its name is yielded, and
// restores the default afterwards.
func kernelPaths(t testing.TB) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		saved, saved512 := useAVX2, useAVX512
		defer func() {
			setAVX2(saved)
			setAVX512(saved512)
		}()
		paths := []struct {
			name         string
			avx2, avx512 bool
			available    bool
		}{
			{"AVX-512", true, true, saved512},
			{"AVX2", true, false, saved},
			{"portable", false, false, true},
		}
		for _, p := range paths {
			if !p.available {
				t.Logf("no %s kernel on this machine", p.name)
				continue
			}
			setAVX2(p.avx2)
			setAVX512(p.avx512)
			if k := dotKernel(); (k.cols == 8) != p.avx512 {
				t.Fatalf("%s: kernel of %d columns", p.name, k.cols)
			}
			if !yield(p.name) {
				return
			}
		}
	}
}

func TestGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range [][2]int{{1, 3}, {10, 5}, {97, 33}, {200, 800}} {
		A := randDense(rng, sh[0], sh[1])
		G := mat.NewDense(sh[0], sh[0], nil)
		Gram(G, A)
		C := mat.NewDense(sh[0], sh[0], nil)
		MulABT(C, A, A)
		for i := 0; i < sh[0]; i++ {
			for j := 0; j < sh[0]; j++ {
				if G.At(i, j) != G.At(j, i) {
					t.Fatalf("%v: not symmetric at (%d, %d)", sh, i, j)
				}
				if j >= i && G.At(i, j) != C.At(i, j) {
					t.Fatalf("%v: Gram differs from MulABT at (%d, %d)", sh, i, j)
				}
			}
		}
		for i := 0; i < sh[0]; i++ {
			if d := G.At(i, i); math.Abs(d-mat.Dot(A.RowView(i), A.RowView(i))) > 1e-10*d {
				t.Fatalf("diagonal %d", i)
			}
		}
	}
}

// TestDot: Dot equals the entries of MulABT bit for bit, on every kernel
// path and for lengths with and without a remainder mod 4.
func TestDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for avx := range kernelPaths(t) {
		for _, k := range []int{1, 4, 7, 800, 803} {
			A := randDense(rng, 7, k)
			B := randDense(rng, 5, k)
			C := mat.NewDense(7, 5, nil)
			MulABT(C, A, B)
			for i := 0; i < 7; i++ {
				for j := 0; j < 5; j++ {
					if got := Dot(A.RawRowView(i), B.RawRowView(j)); got != C.At(i, j) {
						t.Fatalf("%s kernel, k=%d (%d, %d): Dot %v, MulABT %v", avx, k, i, j, got, C.At(i, j))
					}
				}
			}
		}
	}
}

// TestSqDistsAndAddClamped: the AVX2 kernels give bit for bit the
// portable loops' values and maximum, with negatives clamped to +0, NaN
// kept (and ignored by the maximum) and infinities, for lengths with and
// without a remainder mod 4.
func TestSqDistsAndAddClamped(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	saved := useAVX2
	defer setAVX2(saved)
	special := []float64{math.NaN(), math.Inf(1), -1e-300, 0}
	for _, n := range []int{0, 1, 3, 4, 5, 8, 13, 64, 203} {
		norms := make([]float64, n)
		dots := make([]float64, n)
		for i := range norms {
			norms[i] = rng.ExpFloat64()
			// Some dot products make the distance slightly negative.
			dots[i] = (norms[i] + 0.7) / 2 * (1 + 1e-15*rng.NormFloat64())
			if rng.IntN(3) == 0 {
				dots[i] = rng.NormFloat64()
			}
			if rng.IntN(11) == 0 {
				dots[i] = special[rng.IntN(len(special))]
			}
		}
		var got [2][]float64
		var max [2]float64
		for i, avx := range []bool{true, false} {
			setAVX2(avx)
			got[i] = make([]float64, n)
			max[i] = SqDists(got[i], norms, dots, 0.7)
			AddClamped(got[i], -0.01)
		}
		for j := range got[0] {
			a, b := got[0][j], got[1][j]
			if math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("n=%d entry %d: AVX2 %v, Go %v", n, j, a, b)
			}
			if a < 0 || math.Signbit(a) {
				t.Fatalf("n=%d entry %d: %v is negative", n, j, a)
			}
		}
		if math.Float64bits(max[0]) != math.Float64bits(max[1]) || math.IsNaN(max[0]) {
			t.Fatalf("n=%d: maximum %v (AVX2), %v (Go)", n, max[0], max[1])
		}
	}
}

// TestFirstNonFinite finds the first NaN or infinity at every position
// of slices of several lengths, on both kernel paths, and −1 for finite
// slices holding the largest finite values.
func TestFirstNonFinite(t *testing.T) {
	saved := useAVX2
	defer setAVX2(saved)
	for _, avx := range []bool{true, false} {
		setAVX2(avx)
		for _, n := range []int{0, 1, 3, 4, 7, 8, 17} {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(i) - 3
			}
			if n > 2 {
				x[1], x[2] = math.MaxFloat64, -math.MaxFloat64
			}
			if got := FirstNonFinite(x); got != -1 {
				t.Fatalf("avx=%v n=%d: %d for a finite slice", avx, n, got)
			}
			for pos := range n {
				for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
					y := append([]float64(nil), x...)
					y[pos] = bad
					if pos+2 < n {
						y[n-1] = math.NaN() // a later one does not count
					}
					if got := FirstNonFinite(y); got != pos {
						t.Fatalf("avx=%v n=%d: %v at %d found at %d", avx, n, bad, pos, got)
					}
				}
			}
		}
	}
}

// TestFirstNonFiniteEntry finds the first non-finite entry of a matrix in
// row-major order, also in a strided view (the padding is not read).
func TestFirstNonFiniteEntry(t *testing.T) {
	A := mat.NewDense(3, 5, nil)
	if _, _, ok := FirstNonFiniteEntry(A); !ok {
		t.Fatal("a zero matrix has a non-finite entry")
	}
	A.Set(2, 1, math.Inf(-1))
	A.Set(1, 4, math.NaN())
	if i, j, ok := FirstNonFiniteEntry(A); ok || i != 1 || j != 4 {
		t.Errorf("found (%d, %d, %v), want (1, 4)", i, j, ok)
	}
	view := A.Slice(0, 3, 0, 3).(*mat.Dense) // hides (1, 4)
	if i, j, ok := FirstNonFiniteEntry(view); ok || i != 2 || j != 1 {
		t.Errorf("view: found (%d, %d, %v), want (2, 1)", i, j, ok)
	}
	// FirstEntryAbove: ±bound passes, beyond it does not.
	B := mat.NewDense(2, 3, []float64{1, -2, 2, 0, -2.5, 2})
	if i, j, ok := FirstEntryAbove(B, 2); ok || i != 1 || j != 1 {
		t.Errorf("FirstEntryAbove(B, 2) = (%d, %d, %v), want (1, 1)", i, j, ok)
	}
	if _, _, ok := FirstEntryAbove(B, 2.5); !ok {
		t.Error("FirstEntryAbove(B, 2.5) found an entry beyond 2.5")
	}
}

// TestFirstAbove finds the first entry above a bound in absolute value (or
// NaN) at every position, on both kernel paths; entries equal to ±bound
// pass.
func TestFirstAbove(t *testing.T) {
	saved := useAVX2
	defer setAVX2(saved)
	const bound = 2.5
	for _, avx := range []bool{true, false} {
		setAVX2(avx)
		for _, n := range []int{0, 1, 3, 4, 7, 8, 17} {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(i%5) - 2.5
			}
			if got := FirstAbove(x, bound); got != -1 {
				t.Fatalf("avx=%v n=%d: %d for %v", avx, n, got, x)
			}
			for pos := range n {
				for _, bad := range []float64{math.NaN(), math.Nextafter(bound, 3), -3, math.Inf(1)} {
					y := append([]float64(nil), x...)
					y[pos] = bad
					if pos+2 < n {
						y[n-1] = 1e300 // a later one does not count
					}
					if got := FirstAbove(y, bound); got != pos {
						t.Fatalf("avx=%v n=%d: %v at %d found at %d", avx, n, bad, pos, got)
					}
				}
			}
		}
	}
}

func TestShapePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for mismatched shapes")
		}
	}()
	MulABT(mat.NewDense(2, 2, nil), mat.NewDense(2, 3, nil), mat.NewDense(2, 4, nil))
}

// BenchmarkGram1600x800 and BenchmarkMulABT1000x1000x800 time each
// kernel this machine runs (sub-benchmarks AVX-512, AVX2, portable).
func BenchmarkGram1600x800(b *testing.B) {
	A := randDense(rand.New(rand.NewPCG(5, 6)), 1600, 800)
	G := mat.NewDense(1600, 1600, nil)
	for path := range kernelPaths(b) {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				Gram(G, A)
			}
			b.ReportMetric(float64(1600*1601/2*800*2)/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkMulABT1000x1000x800(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	A, B := randDense(rng, 1000, 800), randDense(rng, 1000, 800)
	C := mat.NewDense(1000, 1000, nil)
	for path := range kernelPaths(b) {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				MulABT(C, A, B)
			}
			b.ReportMetric(float64(1000*1000*800*2)/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
		})
	}
}

// TestAddScaledRows compares with successive floats.AddScaled calls, which
// it must reproduce bit for bit on both paths.
func TestAddScaledRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	saved := useAVX2
	defer setAVX2(saved)
	for _, n := range []int{1, 3, 4, 7, 16, 17, 35, 200, 803} {
		for _, terms := range []int{0, 1, 3, 8, 11} {
			dst0 := randDense(rng, 1, n).RawMatrix().Data
			w := randDense(rng, 1, terms+1).RawMatrix().Data
			xs := make([][]float64, terms)
			for i := range xs {
				xs[i] = randDense(rng, 1, n+i).RawMatrix().Data // longer rows are fine
			}
			want := append([]float64(nil), dst0...)
			for i, x := range xs {
				floats.AddScaled(want, w[i], x[:n])
			}
			for _, avx := range []bool{false, true} {
				setAVX2(avx)
				got := append([]float64(nil), dst0...)
				AddScaledRows(got, w, xs)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("n=%d terms=%d avx=%v: entry %d is %v, AddScaled gives %v", n, terms, avx, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestAddScaledRows4 compares with four AddScaledRows calls, which it
// must reproduce bit for bit on both paths.
func TestAddScaledRows4(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	saved := useAVX2
	defer setAVX2(saved)
	for _, n := range []int{0, 1, 3, 4, 7, 8, 12, 17, 35, 200, 803} {
		for _, terms := range []int{0, 1, 3, 8, 16} {
			var dst0 [4][]float64
			for j := range dst0 {
				dst0[j] = randDense(rng, 1, n+1).RawMatrix().Data[:n]
			}
			w := randDense(rng, 1, 4*terms+1).RawMatrix().Data
			xs := make([][]float64, terms)
			for i := range xs {
				xs[i] = randDense(rng, 1, n+i+1).RawMatrix().Data // longer rows are fine
			}
			var want [4][]float64
			for j := range want {
				want[j] = append([]float64(nil), dst0[j]...)
				wj := make([]float64, terms)
				for i := range wj {
					wj[i] = w[4*i+j]
				}
				AddScaledRows(want[j], wj, xs)
			}
			for _, avx := range []bool{false, true} {
				setAVX2(avx)
				var got [4][]float64
				for j := range got {
					got[j] = append([]float64(nil), dst0[j]...)
				}
				AddScaledRows4(&got, w, xs)
				for j := range got {
					for i := range got[j] {
						if math.Float64bits(got[j][i]) != math.Float64bits(want[j][i]) {
							t.Fatalf("n=%d terms=%d avx=%v: dst[%d][%d] is %v, AddScaledRows gives %v", n, terms, avx, j, i, got[j][i], want[j][i])
						}
					}
				}
			}
		}
	}
}

// TestKernelName names the kernel each path switches on.
func TestKernelName(t *testing.T) {
	want := map[string]string{"AVX-512": "AVX-512 6×8", "AVX2": "AVX2 3×4", "portable": "portable 3×4"}
	for path := range kernelPaths(t) {
		if got := KernelName(); got != want[path] {
			t.Errorf("%s kernel: KernelName() = %q, want %q", path, got, want[path])
		}
	}
}

func TestOnSimplex(t *testing.T) {
	for _, tc := range []struct {
		x   []float64
		ok  bool
		bad int
	}{
		{[]float64{1}, true, -1},
		{[]float64{0.25, 0.75, 0}, true, -1},
		{[]float64{0.5, 0.5 + 5e-10}, true, -1},
		{[]float64{0.5, 0.5 + 2e-9}, false, -1},
		{[]float64{5, -4}, false, 1},
		{[]float64{0.5, math.NaN()}, false, 1},
		{[]float64{math.Inf(1), 0}, false, 0},
		{nil, false, -1},
	} {
		ok, bad, sum := OnSimplex(tc.x, SimplexTol)
		want := math.NaN()
		if tc.bad < 0 {
			want = 0
			for _, v := range tc.x {
				want += v
			}
		}
		if ok != tc.ok || bad != tc.bad || !(sum == want || math.IsNaN(sum) && math.IsNaN(want)) {
			t.Errorf("OnSimplex(%v) = %v, %d, %g; want %v, %d, %g", tc.x, ok, bad, sum, tc.ok, tc.bad, want)
		}
	}
}

// TestCentre: the result sums to 0 and keeps the differences between
// entries.
func TestCentre(t *testing.T) {
	for _, v := range [][]float64{{1}, {1, 2, 3}, {-4, 0.5, 7, 1e3}} {
		c := append([]float64(nil), v...)
		Centre(c)
		var sum float64
		for i, x := range c {
			sum += x
			if d := (x - c[0]) - (v[i] - v[0]); math.Abs(d) > 1e-12 {
				t.Errorf("%v: entry %d moved by %g relative to entry 0", v, i, d)
			}
		}
		if math.Abs(sum) > 1e-12 {
			t.Errorf("%v: centred entries sum to %g", v, sum)
		}
	}
}

// TestSoftmax: the result is on the simplex, keeps the order of the
// logits, does not overflow for large ones, and may overwrite z.
func TestSoftmax(t *testing.T) {
	for _, z := range [][]float64{{0}, {1, 2, 3}, {1000, 999, -1000}, {-5, -5}} {
		p := make([]float64, len(z))
		Softmax(p, z)
		if ok, _, sum := OnSimplex(p, 1e-12); !ok {
			t.Fatalf("softmax(%v) = %v, sum %g", z, p, sum)
		}
		for i := 1; i < len(z); i++ {
			if (z[i] > z[i-1]) != (p[i] > p[i-1]) {
				t.Errorf("softmax(%v) = %v changes the order", z, p)
			}
		}
		in := append([]float64(nil), z...)
		Softmax(in, in)
		for i := range p {
			if in[i] != p[i] {
				t.Errorf("softmax(%v) in place gives %v, not %v", z, in, p)
			}
		}
	}
}
