// Package signal turns sampled signals, such as the vibration recordings of
// bearing fault diagnosis or audio, into feature vectors for domain adaptation: windows
// of consecutive samples drawn at random positions, and the magnitudes of
// their discrete Fourier transforms.
//
// This is the preprocessing of the CWRU experiment of DaDiL (Montesuma,
// Ngolè Mboula & Souloumiac, ECAI 2023, appendix "Dataset Description"): from
// each recording, windows of 4096 consecutive samples are drawn at random
// starts, and each window is represented by its first 2048 Fourier
// coefficients. The paper does not say whether the coefficients are complex
// or magnitudes; a real feature vector needs one or the other, and the
// magnitude is the usual choice (Zhang et al., "A new deep learning model for
// fault diagnosis with good anti-noise and domain adaptation ability on raw
// vibration signals", Sensors 17(2), 2017, whom the paper follows).
//
// # Spectrum
//
// For a window x_0 … x_{N−1} the discrete Fourier transform is
//
//	X_k = Σ_{t=0}^{N−1} x_t e^{−2πikt/N},   k = 0 … N−1,
//
// unnormalised, and the feature vector is (|X_0|, …, |X_{m−1}|) for the
// first m ≤ N/2+1 coefficients (for a real signal X_{N−k} is the complex
// conjugate of X_k, so the first N/2+1 hold all the information). Spectrum
// computes it with the real FFT of gonum's dsp/fourier package. Settings
// add what audio front ends use: a Hann taper on the window before the
// transform, log(1 + |X_k|) or decibels in place of |X_k|, and (Mel) the
// energies of triangular bands on the mel scale in place of the single
// coefficients, which with the taper and decibels is the log-mel
// spectrogram of audio classifiers (torchaudio's MelSpectrogram and
// AmplitudeToDB, on frames that are not centred; HTK's or Slaney's mel
// scale and band normalisation, as torchaudio's and librosa's defaults).
// MelFilters returns the bands' weights.
//
// # Windows
//
// RandomStarts draws window start positions uniformly from 0 … n−N with a
// caller-supplied *rand.Rand (math/rand/v2), so the windows are reproducible
// for a seed; SlidingStarts cuts them at a fixed stride instead, as audio
// front ends do. Features stacks the spectra of the windows of a signal as
// the rows of a matrix, in parallel, with a result that does not depend on
// the number of goroutines.
//
// Extraction puts these together for recordings: its settings say how
// windows are cut from a recording (at random or at a stride, how many)
// and how each becomes a row, and Append adds the rows of one recording
// to Rows, which keep every row's recording and start sample; Freq gives
// the frequency of every column. The window positions are drawn from a
// caller-supplied stream, such as Stream(seed, key): dadil features fft
// draws each recording's windows from the stream of its index, the CWRU
// protocol of package bench those of all recordings of a class from one
// stream.
//
// # Recordings
//
// Read reads a signal from a MATLAB level-5 file (.mat, as the CWRU data
// come; ReadMAT and ReadChannel find the CWRU variables), a WAV file (.wav:
// 8-, 16-, 24- and 32-bit integer PCM scaled to [−1, 1), 32- and 64-bit
// float; DecodeWAV), a FLAC file (.flac, integers scaled likewise;
// DecodeFLAC), a NumPy array (.npy, .npz) or CSV text (.csv), one
// channel of a multi-channel recording or the mean of its channels.
//
// Errors returned by this package are prefixed with "signal: ".
package signal
