package signal

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
)

// Extraction holds the settings of feature extraction from recordings: the
// windows cut from each recording and the spectrum that represents each.
//
// From a recording x_0 … x_{n−1}, window j holds the N = Window samples
// x_{s_j} … x_{s_j+N−1}. With Hop = 0 the starts s_j are drawn
// independently and uniformly from 0 … n−N (RandomStarts), Windows of
// them; with Hop > 0 they are s_j = j·Hop for j = 0, 1, … while the
// window fits (SlidingStarts), at most Windows of them when Windows > 0.
// Window j becomes the row of Coeffs features Spectrum.Magnitudes gives
// with Settings: the magnitudes |X_0| … |X_{Coeffs−1}| of its discrete
// Fourier transform, or with Mel the energies of Coeffs mel bands, after
// the taper and followed by Log or Decibels.
//
// The zero Settings with Window 4096, Coeffs 2048 and Windows 800 are the
// paper's CWRU preprocessing.
type Extraction struct {
	// Window is the number N of samples per window.
	Window int
	// Coeffs is the number of features per window: magnitudes kept (at
	// most N/2+1), or mel bands with Mel.
	Coeffs int
	// Settings are the taper, the mel bands, Log and Decibels. The rate
	// of Mel is not used: the bands of a recording are placed at the
	// sampling rate Append is given for it.
	Settings
	// Hop, when positive, cuts windows every Hop samples from the start
	// of a recording; 0 draws their positions at random.
	Hop int
	// Windows is the number of windows drawn at random from a recording,
	// or with Hop the most cut from one (0: all that fit).
	Windows int
}

// Rows are feature rows and where each comes from: row i, the slice
// Data[i·Cols : (i+1)·Cols], holds the features of the window of recording
// Recording[i] that starts at its sample Start[i]. The zero value is empty
// rows, to which Extraction.Append adds.
type Rows struct {
	Cols      int
	Data      []float64
	Recording []int
	Start     []int
}

// Len returns the number of rows.
func (r *Rows) Len() int { return len(r.Start) }

// Row returns row i, a slice of r.Data.
func (r *Rows) Row(i int) []float64 { return r.Data[i*r.Cols : (i+1)*r.Cols] }

// Append adds to dst the rows of the windows of the recording x, sampled
// at rate hertz (0 if unknown), with rec as their Recording. With Hop = 0
// the Windows positions are drawn from rng in turn (RandomStarts), so that
// recordings appended one after another with the same rng take successive
// draws of its stream; with Hop > 0 rng is not used and may be nil. The
// mel bands of Settings are placed at rate.
//
// Rows are computed in parallel, each from its window alone, so that the
// result does not depend on the number of goroutines; dst's rows before
// are left as they are. It is an error, and dst is unchanged, if x is
// shorter than a window or holds NaN or infinite values, if Hop or Windows
// is negative, if Hop and Windows are both 0 (no window), if the settings
// are not valid at rate (see NewSpectrum and MelFilters), if the positions
// are to be drawn without rng, or if dst holds rows of another width than
// Coeffs.
func (e *Extraction) Append(dst *Rows, rec int, x []float64, rate float64, rng *rand.Rand) error {
	if dst.Len() > 0 && dst.Cols != e.Coeffs {
		return fmt.Errorf("signal: rows of %d features, extraction of %d", dst.Cols, e.Coeffs)
	}
	starts, err := e.starts(len(x), rng)
	if err != nil {
		return err
	}
	set := e.at(rate)
	if err := checkWindows(x, starts, e.Window, e.Coeffs, &set); err != nil {
		return err
	}
	n := len(dst.Data)
	dst.Data = slices.Grow(dst.Data, len(starts)*e.Coeffs)[:n+len(starts)*e.Coeffs]
	spectra(dst.Data[n:], x, starts, e.Window, e.Coeffs, &set)
	dst.Cols = e.Coeffs
	for _, s := range starts {
		dst.Recording = append(dst.Recording, rec)
		dst.Start = append(dst.Start, s)
	}
	return nil
}

// starts returns the window positions in a recording of n samples.
func (e *Extraction) starts(n int, rng *rand.Rand) ([]int, error) {
	switch {
	case e.Hop < 0:
		return nil, fmt.Errorf("signal: hop of %d samples (want at least 1, or 0 for random positions)", e.Hop)
	case e.Hop > 0:
		return SlidingStarts(n, e.Window, e.Hop, e.Windows)
	}
	return RandomStarts(rng, n, e.Window, e.Windows)
}

// at returns the settings of the spectrum of a recording sampled at rate
// hertz: Settings with the mel bands at rate.
func (e *Extraction) at(rate float64) Settings {
	s := e.Settings
	if s.Mel != nil {
		m := *s.Mel
		m.Rate = rate
		s.Mel = &m
	}
	return s
}

// Check returns the error Append would return for a recording sampled at
// rate hertz because of the settings alone (see NewSpectrum), if any.
func (e *Extraction) Check(rate float64) error {
	set := e.at(rate)
	_, err := NewSpectrum(e.Window, e.Coeffs, &set)
	return err
}

// Freq returns the frequency in hertz of every column for a recording
// sampled at rate hertz: f_k = k·rate/N for coefficient k, or with Mel the
// centre f_b of band b (see Mel.Edges), for the bands at rate. It returns
// nil if rate is not positive.
func (e *Extraction) Freq(rate float64) []float64 {
	if !(rate > 0) {
		return nil
	}
	if set := e.at(rate); set.Mel != nil {
		return set.Mel.Edges(e.Coeffs)[1 : e.Coeffs+1]
	}
	f := make([]float64, e.Coeffs)
	for k := range f {
		f[k] = float64(k) * rate / float64(e.Window)
	}
	return f
}

// Stream returns the random source named key for seed: a PCG generator
// (math/rand/v2) seeded with seed and the 64-bit FNV-1a hash of key. The
// streams of different keys are distinct for a seed, so that the windows
// of every recording (or group of recordings) can be drawn from a stream
// of their own, whatever the others draw.
func Stream(seed uint64, key string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}
