package signal

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/mattest"
)

// naive returns |Σ_t x_t e^{−2πikt/N}| for k < m by direct summation.
func naive(x []float64, m int) []float64 {
	n := len(x)
	out := make([]float64, m)
	for k := range out {
		var s complex128
		for t, v := range x {
			s += complex(v, 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(k*t%n)/float64(n)))
		}
		out[k] = cmplx.Abs(s)
	}
	return out
}

func TestMagnitudesMatchDirectDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, m int }{{2, 2}, {8, 5}, {12, 3}, {64, 33}, {100, 20}, {4096, 2048}} {
		x := make([]float64, tc.n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		s, err := NewSpectrum(tc.n, tc.m, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Magnitudes(nil, x)
		want := naive(x, tc.m)
		for k := range want {
			if math.Abs(got[k]-want[k]) > 1e-9*float64(tc.n) {
				t.Fatalf("N=%d: |X_%d| = %v, direct sum %v", tc.n, k, got[k], want[k])
			}
		}
	}
}

func TestMagnitudesOfCosine(t *testing.T) {
	// A cosine at bin k0 with amplitude A has |X_k0| = A·N/2 and nothing
	// elsewhere; a constant c has |X_0| = c·N.
	const n, k0, amp, c = 256, 17, 3.0, 0.5
	x := make([]float64, n)
	for i := range x {
		x[i] = c + amp*math.Cos(2*math.Pi*k0*float64(i)/n+0.3)
	}
	s, _ := NewSpectrum(n, n/2+1, nil)
	m := s.Magnitudes(nil, x)
	for k, v := range m {
		want := 0.0
		switch k {
		case 0:
			want = c * n
		case k0:
			want = amp * n / 2
		}
		if math.Abs(v-want) > 1e-9 {
			t.Errorf("|X_%d| = %v, want %v", k, v, want)
		}
	}
}

func TestNewSpectrumErrors(t *testing.T) {
	for _, tc := range []struct {
		window, coeffs int
		msg            string
	}{
		{1, 1, "want 2 … 16777216"},
		{4096, 0, "0 coefficients"},
		{4096, 2050, "1 … 2049"},
	} {
		if _, err := NewSpectrum(tc.window, tc.coeffs, nil); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("NewSpectrum(%d, %d) = %v, want an error containing %q", tc.window, tc.coeffs, err, tc.msg)
		}
	}
}

func TestRandomStarts(t *testing.T) {
	a, err := RandomStarts(rand.New(rand.NewPCG(3, 4)), 10, 4, 1000)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, s := range a {
		if s < 0 || s > 6 {
			t.Fatalf("start %d outside 0 … 6", s)
		}
		seen[s] = true
	}
	if len(seen) != 7 {
		t.Errorf("1000 draws hit %d of the 7 possible starts", len(seen))
	}
	b, _ := RandomStarts(rand.New(rand.NewPCG(3, 4)), 10, 4, 1000)
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed, different starts")
		}
	}
	if _, err := RandomStarts(rand.New(rand.NewPCG(1, 1)), 100, 4096, 1); err == nil || !strings.Contains(err.Error(), "shorter than a window") {
		t.Errorf("short signal: %v", err)
	}
	if s, err := RandomStarts(rand.New(rand.NewPCG(1, 1)), 4096, 4096, 3); err != nil || s[0] != 0 || s[2] != 0 {
		t.Errorf("signal of exactly one window: %v, %v", s, err)
	}
}

func TestFeatures(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, 500)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	starts := []int{0, 436, 17, 17, 200}
	for _, set := range []*Settings{nil, {Taper: Hann}, {Log: true}, {Taper: Hann, Log: true}} {
		F, err := Features(x, starts, 64, 10, set)
		if err != nil {
			t.Fatal(err)
		}
		if r, c := F.Dims(); r != 5 || c != 10 {
			t.Fatalf("features %d×%d, want 5×10", r, c)
		}
		s, _ := NewSpectrum(64, 10, set)
		for i, st := range starts {
			want := s.Magnitudes(nil, x[st:st+64])
			for k, w := range want {
				if F.At(i, k) != w {
					t.Fatalf("%+v: row %d column %d: %v, want %v", set, i, k, F.At(i, k), w)
				}
			}
		}
	}
	bad := append([]float64(nil), x...)
	bad[300] = math.NaN()
	for _, tc := range []struct {
		x      []float64
		starts []int
		msg    string
	}{
		{x, []int{437}, "must start in 0 … 436"},
		{x, []int{-1}, "must start in"},
		{x, nil, "no windows"},
		{bad, []int{0}, "sample 300 is NaN"},
	} {
		if _, err := Features(tc.x, tc.starts, 64, 10, nil); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Features(%v) = %v, want an error containing %q", tc.starts, err, tc.msg)
		}
	}
}

func TestReadMAT(t *testing.T) {
	dir := t.TempDir()
	x := []float64{0.1, -0.2, 0.3, 0.4}
	id := filepath.Join(dir, "106.mat")
	mattest.WriteFile(t, id, mattest.Column("X106_DE_time", x), mattest.Column("X106_FE_time", []float64{9, 9}))
	other := filepath.Join(dir, "IR007_1.mat")
	mattest.WriteFile(t, other, mattest.Column("X105_DE_time", []float64{9}), mattest.Column("X106_DE_time", x))
	for _, tc := range []struct {
		path, variable string
		want           []float64
		msg            string
	}{
		{id, "", x, ""},
		{id, "X106_FE_time", []float64{9, 9}, ""},
		{other, "X106_DE_time", x, ""},
		{other, "", nil, "several variables end in \"_DE_time\" (X105_DE_time, X106_DE_time)"},
		{id, "X999_DE_time", nil, "106.mat"},
		{filepath.Join(dir, "absent.mat"), "x", nil, "absent.mat"},
	} {
		got, err := ReadMAT(tc.path, tc.variable)
		if tc.msg != "" {
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("ReadMAT(%s, %q) = %v, want an error containing %q", filepath.Base(tc.path), tc.variable, err, tc.msg)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) || got[0] != tc.want[0] {
			t.Errorf("ReadMAT(%s, %q) = %v, %v; want %v", filepath.Base(tc.path), tc.variable, got, err, tc.want)
		}
	}
	nan := filepath.Join(dir, "7.mat")
	mattest.WriteFile(t, nan, mattest.Column("X007_DE_time", []float64{1, math.Inf(1)}))
	if _, err := ReadMAT(nan, ""); err == nil || !strings.Contains(err.Error(), "7.mat: variable X007_DE_time: sample 2 (counting from 1) is +Inf") {
		t.Errorf("infinite sample: %v", err)
	}
	// Another channel, found by name in a file not named by its id.
	fe := filepath.Join(dir, "load1.mat")
	mattest.WriteFile(t, fe, mattest.Column("X200_DE_time", x), mattest.Column("X200_FE_time", []float64{7, 8}))
	if got, name, err := ReadChannel(fe, "", "FE"); err != nil || name != "X200_FE_time" || len(got) != 2 || got[1] != 8 {
		t.Errorf("ReadChannel(load1.mat, FE) = %v, %q, %v", got, name, err)
	}
	empty := filepath.Join(dir, "8.mat")
	mattest.WriteFile(t, empty, mattest.Var{Name: "X008_DE_time", Dims: []int{0, 1}})
	if _, err := ReadMAT(empty, ""); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty signal: %v", err)
	}
}

// A cosine at bin k0 under the periodic Hann window has |X_k0| = A·N/4,
// |X_k0±1| = A·N/8 and nothing elsewhere; Log takes log(1 + |X_k|) of
// those.
func TestHannTaperOfCosine(t *testing.T) {
	const n, k0, amp = 64, 9, 2.0
	x := make([]float64, n)
	for i := range x {
		x[i] = amp * math.Cos(2*math.Pi*k0*float64(i)/n+0.7)
	}
	for _, log := range []bool{false, true} {
		s, err := NewSpectrum(n, n/2+1, &Settings{Taper: Hann, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range s.Magnitudes(nil, x) {
			want := 0.0
			switch k {
			case k0:
				want = amp * n / 4
			case k0 - 1, k0 + 1:
				want = amp * n / 8
			}
			if log {
				want = math.Log1p(want)
			}
			if math.Abs(v-want) > 1e-12*n {
				t.Errorf("log %v: bin %d: %v, want %v", log, k, v, want)
			}
		}
	}
	// The unwindowed transform leaves x unchanged: the taper works on a
	// copy.
	if x[0] != amp*math.Cos(0.7) {
		t.Errorf("x[0] changed to %v", x[0])
	}
}

func TestParseTaper(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Taper
		err  string
	}{
		{"none", Rectangular, ""},
		{"rectangular", Rectangular, ""},
		{"hann", Hann, ""},
		{"hamming", 0, `unknown taper "hamming" (want none or hann)`},
	} {
		got, err := ParseTaper(tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v", tc.name, got, err)
		}
		if back, _ := ParseTaper(got.String()); back != got {
			t.Errorf("%v does not parse back from %q", got, got.String())
		}
	}
	if _, err := NewSpectrum(8, 5, &Settings{Taper: Taper(7)}); err == nil || !strings.Contains(err.Error(), "unknown taper Taper(7)") {
		t.Errorf("NewSpectrum with an unknown taper: %v", err)
	}
}
