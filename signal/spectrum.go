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

	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/linalg"
)

// Taper is a window function by which a window of samples is multiplied
// before its transform.
type Taper int

const (
	// Rectangular leaves the samples as they are: the paper's CWRU
	// preprocessing.
	Rectangular Taper = iota
	// Hann multiplies sample t of N by w_t = ½ − ½cos(2πt/N) = sin²(πt/N)
	// (the periodic Hann window of spectral analysis), which confines the
	// energy of a tone between bins to its neighbouring bins instead of
	// spreading it over the whole spectrum.
	Hann
)

// String returns "none" or "hann".
func (t Taper) String() string {
	switch t {
	case Rectangular:
		return "none"
	case Hann:
		return "hann"
	}
	return fmt.Sprintf("Taper(%d)", int(t))
}

// ParseTaper returns the taper named "none" (or "rectangular") or "hann".
func ParseTaper(name string) (Taper, error) {
	switch name {
	case "none", "rectangular":
		return Rectangular, nil
	case "hann":
		return Hann, nil
	}
	return 0, fmt.Errorf("signal: unknown taper %s (want none or hann)", clip.Quote(name))
}

// Settings are the options of a spectrum. The zero value (and a nil
// *Settings) is the paper's CWRU preprocessing: no taper, magnitudes.
type Settings struct {
	// Taper is applied to every window before its transform.
	Taper Taper
	// Mel, when not nil, replaces the magnitudes |X_k| by the energies of
	// triangular bands on the mel scale (see Mel); the number of features
	// (coeffs) is then the number of bands.
	Mel *Mel
	// Log replaces every feature v (a magnitude or a band energy) by
	// log(1 + v), which compresses the dynamic range of audio spectra. It
	// depends on the signal's scale: values well above 1 are compressed,
	// those well below 1 stay nearly linear.
	Log bool
	// Decibels replaces every feature by the decibels of its power,
	// 10·log10(max(p, 10⁻¹⁰)) with p = |X_k|² (so 20·log10|X_k|) or p the
	// band energy: the log-mel spectrogram of audio front ends
	// (torchaudio's AmplitudeToDB with its floor, without top_db). Log
	// and Decibels exclude each other.
	Decibels bool
}

// decibelFloor is the power below which Decibels gives −100 dB.
const decibelFloor = 1e-10

// Spectrum computes the magnitudes of the first Coeffs discrete Fourier
// coefficients of windows of Window samples, or the energies of Coeffs mel
// bands (Settings.Mel). A Spectrum holds scratch space: it is not safe for
// concurrent use (make one per goroutine).
type Spectrum struct {
	window, coeffs int
	fft            *fourier.FFT
	coef           []complex128
	taper, buf     []float64 // weights (nil: rectangular) and the tapered window
	mel            *melBank  // nil: magnitudes
	log, db        bool
}

// MaxWindow is the longest window NewSpectrum accepts, 2²⁴ samples (about
// 6 minutes at 48 kHz); its transform's buffers then take about 1 GB.
const MaxWindow = 1 << 24

// NewSpectrum returns a Spectrum for windows of window samples keeping the
// first coeffs magnitudes, or coeffs mel bands, with the options s (nil:
// the defaults). It is an error unless 2 ≤ window ≤ MaxWindow and 1 ≤
// coeffs ≤ window/2+1 (without Mel), if Log and Decibels are both set, or
// if the bands are not valid (see MelFilters).
func NewSpectrum(window, coeffs int, s *Settings) (*Spectrum, error) {
	if window < 2 || window > MaxWindow {
		return nil, fmt.Errorf("signal: window of %d samples (want 2 … %d)", window, MaxWindow)
	}
	var set Settings
	if s != nil {
		set = *s
	}
	if set.Mel == nil && (coeffs < 1 || coeffs > window/2+1) {
		return nil, fmt.Errorf("signal: %d coefficients for a window of %d samples (want 1 … %d: a real signal's spectrum is symmetric)", coeffs, window, window/2+1)
	}
	if set.Log && set.Decibels {
		return nil, fmt.Errorf("signal: Log and Decibels exclude each other")
	}
	if set.Taper != Rectangular && set.Taper != Hann {
		return nil, fmt.Errorf("signal: unknown taper %v", set.Taper)
	}
	// Everything that can be checked is checked before the transform's
	// buffers are allocated.
	var bank *melBank
	if set.Mel != nil {
		var err error
		if bank, err = newMelBank(coeffs, window, *set.Mel); err != nil {
			return nil, err
		}
	}
	sp := &Spectrum{window: window, coeffs: coeffs, fft: fourier.NewFFT(window), coef: make([]complex128, window/2+1), mel: bank, log: set.Log, db: set.Decibels}
	if set.Taper == Hann {
		sp.taper = make([]float64, window)
		for t := range sp.taper {
			v := math.Sin(math.Pi * float64(t) / float64(window))
			sp.taper[t] = v * v
		}
		sp.buf = make([]float64, window)
	}
	return sp, nil
}

// Window returns the window length N.
func (s *Spectrum) Window() int { return s.window }

// Coeffs returns the number m of features: magnitudes kept, or mel bands.
func (s *Spectrum) Coeffs() int { return s.coeffs }

// Magnitudes sets dst[k] = |X_k| = |Σ_t w_t x_t e^{−2πikt/N}| for k < m
// (w the taper's weights, 1 without one), or with Settings.Mel the band
// energies dst[b] = Σ_k H_b(f_k)|X_k|², then applies Settings.Log or
// Settings.Decibels, and returns dst; x must hold N samples. If dst is nil a
// slice is allocated; otherwise it must have length m.
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
	if s.taper != nil {
		for t, w := range s.taper {
			s.buf[t] = w * x[t]
		}
		x = s.buf
	}
	s.fft.Coefficients(s.coef, x)
	switch {
	case s.mel != nil:
		s.mel.energies(dst, s.coef)
		switch {
		case s.log:
			for b, e := range dst {
				dst[b] = math.Log1p(e)
			}
		case s.db:
			for b, e := range dst {
				dst[b] = 10 * math.Log10(max(e, decibelFloor))
			}
		}
	case s.db:
		for k := range dst {
			z := s.coef[k]
			dst[k] = 10 * math.Log10(max(real(z)*real(z)+imag(z)*imag(z), decibelFloor))
		}
	default:
		for k := range dst {
			dst[k] = cmplx.Abs(s.coef[k])
			if s.log {
				dst[k] = math.Log1p(dst[k])
			}
		}
	}
	return dst
}

// MaxWindows bounds the number of windows RandomStarts draws from one
// signal.
const MaxWindows = 1 << 26

// RandomStarts returns count start positions of windows of window samples
// in a signal of n samples, drawn independently and uniformly from
// 0 … n−window with rng. It is an error if the signal is shorter than a
// window, count is negative or above MaxWindows, or rng is nil.
func RandomStarts(rng *rand.Rand, n, window, count int) ([]int, error) {
	if rng == nil {
		return nil, fmt.Errorf("signal: no random source")
	}
	if count > MaxWindows {
		return nil, fmt.Errorf("signal: %d windows, more than %d", count, MaxWindows)
	}
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
// returned when limit > 0 (0 means all). It is an error if the signal is
// shorter than a window, hop < 1 or limit < 0.
func SlidingStarts(n, window, hop, limit int) ([]int, error) {
	if window < 1 {
		return nil, fmt.Errorf("signal: window of %d samples", window)
	}
	if hop < 1 {
		return nil, fmt.Errorf("signal: hop of %d samples (want at least 1)", hop)
	}
	if limit < 0 {
		return nil, fmt.Errorf("signal: limit of %d windows (want 0 for all, or a positive number)", limit)
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
// magnitude vector (or the mel band energies) of the window
// x[starts[i] : starts[i]+window], with the options s (nil: the defaults;
// see Spectrum.Magnitudes). Rows are computed
// in parallel; each row depends only on its window, so the result does not
// depend on the number of goroutines. It is an error if a window does not
// fit in x, if the window, coefficient count or settings are invalid (see
// NewSpectrum), if there are no windows, or if x holds NaN or infinite
// values.
func Features(x []float64, starts []int, window, coeffs int, s *Settings) (*mat.Dense, error) {
	if err := checkWindows(x, starts, window, coeffs, s); err != nil {
		return nil, err
	}
	out := mat.NewDense(len(starts), coeffs, nil)
	spectra(out.RawMatrix().Data, x, starts, window, coeffs, s)
	return out, nil
}

// checkWindows returns the error of Features for its arguments, if any.
func checkWindows(x []float64, starts []int, window, coeffs int, s *Settings) error {
	if len(starts) == 0 {
		return fmt.Errorf("signal: no windows")
	}
	// The windows first: a window longer than the signal is an error
	// before any buffer of its size is allocated.
	for i, s := range starts {
		if s < 0 || s > len(x)-window {
			return fmt.Errorf("signal: window %d starts at %d: a window of %d samples must start in 0 … %d for a signal of %d samples", i, s, window, len(x)-window, len(x))
		}
	}
	if _, err := NewSpectrum(window, coeffs, s); err != nil {
		return err
	}
	if i := linalg.FirstNonFinite(x); i >= 0 {
		return fmt.Errorf("signal: sample %d is %v", i, x[i])
	}
	return nil
}

// spectra sets dst[i·coeffs : (i+1)·coeffs] to the spectrum of the window
// x[starts[i] : starts[i]+window] for every i, in parallel; the arguments
// are those checkWindows accepts.
func spectra(dst, x []float64, starts []int, window, coeffs int, s *Settings) {
	workers := min(runtime.GOMAXPROCS(0), len(starts))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sp, _ := NewSpectrum(window, coeffs, s)
			for i := w; i < len(starts); i += workers {
				sp.Magnitudes(dst[i*coeffs:(i+1)*coeffs], x[starts[i]:starts[i]+window])
			}
		}()
	}
	wg.Wait()
}
