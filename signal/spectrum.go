package signal

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"
)

// Spectrum computes the magnitudes of the first Coeffs discrete Fourier
// coefficients of windows of Window samples. A Spectrum holds scratch space:
// it is not safe for concurrent use (make one per goroutine).
type Spectrum struct {
	window, coeffs int
	fft            *fourier.FFT
	coef           []complex128
}

// NewSpectrum returns a Spectrum for windows of window samples keeping the
// first coeffs magnitudes. It is an error unless window ≥ 2 and
// 1 ≤ coeffs ≤ window/2+1.
func NewSpectrum(window, coeffs int) (*Spectrum, error) {
	if window < 2 {
		return nil, fmt.Errorf("signal: window of %d samples (want at least 2)", window)
	}
	if coeffs < 1 || coeffs > window/2+1 {
		return nil, fmt.Errorf("signal: %d coefficients for a window of %d samples (want 1 … %d: a real signal's spectrum is symmetric)", coeffs, window, window/2+1)
	}
	return &Spectrum{window: window, coeffs: coeffs, fft: fourier.NewFFT(window), coef: make([]complex128, window/2+1)}, nil
}

// Window returns the window length N.
func (s *Spectrum) Window() int { return s.window }

// Coeffs returns the number m of magnitudes kept.
func (s *Spectrum) Coeffs() int { return s.coeffs }

// Magnitudes sets dst[k] = |X_k| = |Σ_t x_t e^{−2πikt/N}| for k < m and
// returns dst; x must hold N samples. If dst is nil a slice is allocated;
// otherwise it must have length m.
func (s *Spectrum) Magnitudes(dst, x []float64) []float64 {
	if len(x) != s.window {
		panic(fmt.Sprintf("signal: window of %d samples, Spectrum wants %d", len(x), s.window))
	}
	if dst == nil {
		dst = make([]float64, s.coeffs)
	}
	if len(dst) != s.coeffs {
		panic(fmt.Sprintf("signal: destination of length %d, want %d", len(dst), s.coeffs))
	}
	s.fft.Coefficients(s.coef, x)
	for k := range dst {
		dst[k] = cmplx.Abs(s.coef[k])
	}
	return dst
}

// RandomStarts returns count start positions of windows of window samples
// in a signal of n samples, drawn independently and uniformly from
// 0 … n−window with rng. It is an error if the signal is shorter than a
// window or count is negative.
func RandomStarts(rng *rand.Rand, n, window, count int) ([]int, error) {
	if window < 1 {
		return nil, fmt.Errorf("signal: window of %d samples", window)
	}
	if n < window {
		return nil, fmt.Errorf("signal: signal of %d samples is shorter than a window of %d", n, window)
	}
	if count < 0 {
		return nil, fmt.Errorf("signal: %d windows", count)
	}
	starts := make([]int, count)
	for i := range starts {
		starts[i] = rng.IntN(n - window + 1)
	}
	return starts, nil
}

// SlidingStarts returns the start positions 0, hop, 2·hop, … of the
// windows of window samples that fit in a signal of n samples: frames at a
// fixed stride, as audio front ends cut them (hop = window gives adjacent
// windows, hop < window overlapping ones). At most limit positions are
// returned when limit > 0. It is an error if the signal is shorter than a
// window or hop < 1.
func SlidingStarts(n, window, hop, limit int) ([]int, error) {
	if window < 1 {
		return nil, fmt.Errorf("signal: window of %d samples", window)
	}
	if hop < 1 {
		return nil, fmt.Errorf("signal: hop of %d samples (want at least 1)", hop)
	}
	if n < window {
		return nil, fmt.Errorf("signal: signal of %d samples is shorter than a window of %d", n, window)
	}
	count := (n-window)/hop + 1
	if limit > 0 {
		count = min(count, limit)
	}
	starts := make([]int, count)
	for i := range starts {
		starts[i] = i * hop
	}
	return starts, nil
}

// Features returns the len(starts)×coeffs matrix whose row i is the spectrum
// magnitude vector of the window x[starts[i] : starts[i]+window]. Rows are
// computed in parallel; each row depends only on its window, so the result
// does not depend on the number of goroutines. It is an error if a window
// does not fit in x, if the window or coefficient count is invalid (see
// NewSpectrum), if there are no windows, or if x holds NaN or infinite
// values.
func Features(x []float64, starts []int, window, coeffs int) (*mat.Dense, error) {
	if _, err := NewSpectrum(window, coeffs); err != nil {
		return nil, err
	}
	if len(starts) == 0 {
		return nil, fmt.Errorf("signal: no windows")
	}
	for i, s := range starts {
		if s < 0 || s > len(x)-window {
			return nil, fmt.Errorf("signal: window %d starts at %d: a window of %d samples must start in 0 … %d for a signal of %d samples", i, s, window, len(x)-window, len(x))
		}
	}
	if i := nonFinite(x); i >= 0 {
		return nil, fmt.Errorf("signal: sample %d is %v", i, x[i])
	}
	out := mat.NewDense(len(starts), coeffs, nil)
	raw := out.RawMatrix()
	workers := min(runtime.GOMAXPROCS(0), len(starts))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sp, _ := NewSpectrum(window, coeffs)
			for i := w; i < len(starts); i += workers {
				sp.Magnitudes(raw.Data[i*raw.Stride:i*raw.Stride+coeffs], x[starts[i]:starts[i]+window])
			}
		}()
	}
	wg.Wait()
	return out, nil
}

// nonFinite returns the index of the first NaN or infinite value of x, or −1.
func nonFinite(x []float64) int {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i
		}
	}
	return -1
}
