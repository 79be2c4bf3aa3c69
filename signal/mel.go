package signal

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/clip"
)

// Mel asks a Spectrum for the energies of triangular frequency bands
// equally spaced on the mel scale instead of the magnitudes of the single
// coefficients: the front end of most audio classifiers (log-mel
// spectrograms). The bands are in hertz, so recordings sampled at different
// rates give comparable features when the bands fit below every rate's
// Nyquist frequency.
//
// With B bands, the edges f_0 < f_1 < … < f_{B+1} are equally spaced on the
// mel scale (Scale) between Min and Max, and band b = 1 … B has the
// triangular weight
//
//	H_b(f) = max(0, min((f − f_{b−1}) / (f_b − f_{b−1}), (f_{b+1} − f) / (f_{b+1} − f_b)))
//
// rising from 0 at f_{b−1} to 1 at its centre f_b and falling to 0 at
// f_{b+1}, or that weight times 2/(f_{b+1} − f_{b−1}) with Normalize, which
// gives every triangle unit area. Coefficient k of a window of N samples
// sits at f_k = k·Rate/N, and the band's energy is
//
//	E_b = Σ_k H_b(f_k) |X_k|²,   k = 0 … N/2,
//
// the power spectrum weighted by the band. The zero value's bands are
// torchaudio's defaults (MelSpectrogram with power 2, mel_scale "htk", norm
// None); Scale Slaney with Normalize are librosa's (htk=False,
// norm="slaney").
type Mel struct {
	// Rate is the sampling rate in hertz (samples per second).
	Rate float64
	// Min is the lower edge f_0 of the first band and Max the upper edge
	// f_{B+1} of the last, in hertz; Max = 0 stands for Rate/2, the
	// Nyquist frequency.
	Min, Max float64
	// Scale is the mel scale on which the edges are equally spaced.
	Scale MelScale
	// Normalize divides every band's weights by half its width in hertz,
	// (f_{b+1} − f_{b−1})/2 (Slaney's normalisation).
	Normalize bool
}

// MelScale is a mel scale: a map from frequencies in hertz to mels,
// roughly linear below 1 kHz and logarithmic above, as pitch is perceived.
type MelScale int

const (
	// HTK is m = 2595·log10(1 + f/700), the scale of O'Shaughnessy as HTK
	// and torchaudio (by default) use it.
	HTK MelScale = iota
	// Slaney is linear below 1 kHz, m = 3f/200, and logarithmic above,
	// m = 15 + 27·ln(f/1000)/ln(6.4): the scale of Slaney's Auditory
	// Toolbox, librosa's default.
	Slaney
)

// Constants of the Slaney scale: mels per hertz below 1 kHz, and the
// logarithmic step above (27 mel per factor 6.4).
const (
	slaneyLinear  = 3.0 / 200
	slaneyLogStep = 27 / 1.8562979903656263 // 27 / ln(6.4)
)

// Mel returns the mels of the frequency f in hertz.
func (s MelScale) Mel(f float64) float64 {
	if s == Slaney {
		if f < 1000 {
			return f * slaneyLinear
		}
		return 15 + slaneyLogStep*math.Log(f/1000)
	}
	return 2595 * math.Log10(1+f/700)
}

// Hz returns the frequency in hertz of m mels, the inverse of Mel.
func (s MelScale) Hz(m float64) float64 {
	if s == Slaney {
		if m < 15 {
			return m / slaneyLinear
		}
		return 1000 * math.Exp((m-15)/slaneyLogStep)
	}
	return 700 * (math.Pow(10, m/2595) - 1)
}

// String returns "htk" or "slaney".
func (s MelScale) String() string {
	switch s {
	case HTK:
		return "htk"
	case Slaney:
		return "slaney"
	}
	return fmt.Sprintf("MelScale(%d)", int(s))
}

// ParseMelScale returns the mel scale named "htk" or "slaney".
func ParseMelScale(name string) (MelScale, error) {
	switch name {
	case "htk":
		return HTK, nil
	case "slaney":
		return Slaney, nil
	}
	return 0, fmt.Errorf("signal: unknown mel scale %s (want htk or slaney)", clip.Quote(name))
}

// max returns the upper edge in hertz: Max, or Rate/2 when Max is 0.
func (m Mel) max() float64 {
	if m.Max == 0 {
		return m.Rate / 2
	}
	return m.Max
}

// Edges returns the B+2 band edges f_0 … f_{B+1} in hertz, equally spaced
// on the mel scale from Min to Max; band b = 1 … B has its centre at f_b.
// It does not validate m (MelFilters does).
func (m Mel) Edges(bands int) []float64 {
	lo, hi := m.Scale.Mel(m.Min), m.Scale.Mel(m.max())
	f := make([]float64, bands+2)
	for i := range f {
		f[i] = m.Scale.Hz(lo + (hi-lo)*float64(i)/float64(bands+1))
	}
	// The ends exactly as given, not as the round trip through the mel
	// scale leaves them.
	f[0], f[bands+1] = m.Min, m.max()
	return f
}

// melBank holds the nonzero weights of every band: band b weighs the
// coefficients first[b], first[b]+1, … by w[b][0], w[b][1], ….
type melBank struct {
	first []int
	w     [][]float64
}

// newMelBank returns the bands of m for windows of window samples; it is an
// error if m is not valid or if a band holds no coefficient.
func newMelBank(bands, window int, m Mel) (*melBank, error) {
	if bands < 1 || bands > window/2+1 {
		return nil, fmt.Errorf("signal: %d mel bands for a window of %d samples (want 1 … %d, its number of coefficients)", bands, window, window/2+1)
	}
	if m.Scale != HTK && m.Scale != Slaney {
		return nil, fmt.Errorf("signal: unknown mel scale %v", m.Scale)
	}
	if !(m.Rate > 0) || math.IsInf(m.Rate, 0) {
		return nil, fmt.Errorf("signal: mel bands need the sampling rate: got %v Hz", m.Rate)
	}
	nyq := m.Rate / 2
	hi := m.max()
	switch {
	case math.IsNaN(m.Min) || math.IsNaN(m.Max) || m.Min < 0:
		return nil, fmt.Errorf("signal: mel bands from %v Hz to %v Hz (want 0 ≤ min < max)", m.Min, hi)
	case hi > nyq:
		return nil, fmt.Errorf("signal: mel bands up to %g Hz, above the Nyquist frequency %g Hz of a %g Hz sampling rate", hi, nyq, m.Rate)
	case m.Min >= hi:
		return nil, fmt.Errorf("signal: mel bands from %g Hz to %g Hz (want min < max)", m.Min, hi)
	}
	f := m.Edges(bands)
	step := m.Rate / float64(window)
	bank := &melBank{first: make([]int, bands), w: make([][]float64, bands)}
	for b := 1; b <= bands; b++ {
		lo, c, up := f[b-1], f[b], f[b+1]
		// Coefficients strictly inside (f_{b−1}, f_{b+1}) are the only
		// ones with a positive weight.
		k0 := int(math.Floor(lo/step)) + 1
		var w []float64
		for k := max(k0, 0); k <= window/2; k++ {
			fk := float64(k) * step
			if fk >= up {
				break
			}
			w = append(w, max(0, min((fk-lo)/(c-lo), (up-fk)/(up-c))))
		}
		// Trim zero weights at the ends (rounding at the edges).
		for len(w) > 0 && w[len(w)-1] == 0 {
			w = w[:len(w)-1]
		}
		for len(w) > 0 && w[0] == 0 {
			w = w[1:]
			k0++
		}
		if len(w) == 0 {
			return nil, fmt.Errorf("signal: mel band %d of %d (%.4g–%.4g Hz) holds no Fourier coefficient of a %d-sample window at %g Hz (one every %.4g Hz): use fewer bands, a higher minimum frequency or longer windows", b, bands, lo, up, window, m.Rate, step)
		}
		if m.Normalize {
			for i := range w {
				w[i] *= 2 / (up - lo)
			}
		}
		bank.first[b-1] = max(k0, 0)
		bank.w[b-1] = w
	}
	return bank, nil
}

// energies sets dst[b] = Σ_k H_b(f_k) |X_k|² from the coefficients X.
func (bank *melBank) energies(dst []float64, X []complex128) {
	for b, w := range bank.w {
		var e float64
		for i, h := range w {
			z := X[bank.first[b]+i]
			e += h * (real(z)*real(z) + imag(z)*imag(z))
		}
		dst[b] = e
	}
}

// MelFilters returns the bands × (window/2+1) matrix of the weights
// H_b(f_k) of Mel's triangular bands for the coefficients k = 0 … window/2
// of windows of window samples: the band energies of a power spectrum p are
// H·p. It is an error unless rate > 0, 0 ≤ Min < Max ≤ Rate/2 and every
// band holds at least one coefficient (with too many bands for the window,
// the narrow low-frequency bands fall between two coefficients).
func MelFilters(bands, window int, m Mel) (*mat.Dense, error) {
	if window < 2 {
		return nil, fmt.Errorf("signal: window of %d samples (want at least 2)", window)
	}
	bank, err := newMelBank(bands, window, m)
	if err != nil {
		return nil, err
	}
	H := mat.NewDense(bands, window/2+1, nil)
	for b, w := range bank.w {
		copy(H.RawRowView(b)[bank.first[b]:], w)
	}
	return H, nil
}
