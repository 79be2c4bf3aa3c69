package signal_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/gonum/floats"

	"github.com/dadil/dadil/signal"
)

// A vibration signal with a 50 Hz component, sampled at 1 kHz: windows of
// 200 samples drawn at random starts, each represented by the magnitudes
// of its first 101 Fourier coefficients. The peak is at bin 50·200/1000 = 10.
func Example() {
	x := make([]float64, 5000)
	for t := range x {
		x[t] = math.Sin(2 * math.Pi * 50 * float64(t) / 1000)
	}
	starts, err := signal.RandomStarts(rand.New(rand.NewPCG(1, 0)), len(x), 200, 3)
	if err != nil {
		panic(err)
	}
	F, err := signal.Features(x, starts, 200, 101, nil)
	if err != nil {
		panic(err)
	}
	for i := range 3 {
		row := F.RawRowView(i)
		peak := 0
		for k, v := range row {
			if v > row[peak] {
				peak = k
			}
		}
		fmt.Printf("window %d: peak at bin %d, |X| = %.0f\n", i, peak, row[peak])
	}
	// Output:
	// window 0: peak at bin 10, |X| = 100
	// window 1: peak at bin 10, |X| = 100
	// window 2: peak at bin 10, |X| = 100
}

// A two-channel recording in a CSV file: Read takes one column by its
// header, and SlidingStarts cuts it into half-overlapping windows.
func ExampleRead() {
	dir, err := os.MkdirTemp("", "signal")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run1.csv")
	text := "time,accel\n"
	for t := range 16 {
		text += fmt.Sprintf("%d,%g\n", t, math.Cos(math.Pi*float64(t)/2))
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		panic(err)
	}
	rec, err := signal.Read(path, &signal.ReadOptions{Variable: "accel"})
	if err != nil {
		panic(err)
	}
	starts, err := signal.SlidingStarts(len(rec.Samples), 8, 4, 0)
	if err != nil {
		panic(err)
	}
	F, err := signal.Features(rec.Samples, starts, 8, 5, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d samples, windows at %v\n", rec.Signal, len(rec.Samples), starts)
	fmt.Printf("first window's magnitudes: %.1f\n", F.RawRowView(0))
	// Output:
	// accel: 16 samples, windows at [0 4 8]
	// first window's magnitudes: [0.0 0.0 4.0 0.0 0.0]
}

// A log-mel spectrogram, the front end of audio classifiers: a 1 kHz tone
// sampled at 16 kHz, cut into half-overlapping Hann-tapered windows of 512
// samples, each represented by the decibels of the energies of 40 bands on
// the mel scale. The loudest band is the one centred nearest 1 kHz.
func ExampleMel() {
	const rate = 16000
	x := make([]float64, rate/2)
	for t := range x {
		x[t] = 0.1 * math.Sin(2*math.Pi*1000*float64(t)/rate)
	}
	starts, err := signal.SlidingStarts(len(x), 512, 256, 0)
	if err != nil {
		panic(err)
	}
	mel := &signal.Mel{Rate: rate}
	F, err := signal.Features(x, starts, 512, 40, &signal.Settings{Taper: signal.Hann, Mel: mel, Decibels: true})
	if err != nil {
		panic(err)
	}
	row := F.RawRowView(0)
	loud := 0
	for b, v := range row {
		if v > row[loud] {
			loud = b
		}
	}
	centres := mel.Edges(40)[1:41]
	fmt.Printf("%d windows × %d bands\n", len(starts), len(row))
	fmt.Printf("loudest band %d, centred at %.0f Hz: %.1f dB\n", loud, centres[loud], row[loud])
	// Output:
	// 30 windows × 40 bands
	// loudest band 13, centred at 955 Hz: 21.5 dB
}

// Two recordings sampled at 1 kHz, a 50 Hz and a 120 Hz tone: two windows
// of 200 samples drawn at random from each, each window's stream named
// after its recording, and the frequency of every row's peak.
func ExampleExtraction() {
	const rate = 1000
	var recordings [][]float64
	for _, f := range []float64{50, 120} {
		x := make([]float64, 3000)
		for t := range x {
			x[t] = math.Sin(2 * math.Pi * f * float64(t) / rate)
		}
		recordings = append(recordings, x)
	}
	ex := signal.Extraction{Window: 200, Coeffs: 101, Windows: 2}
	var rows signal.Rows
	for i, x := range recordings {
		if err := ex.Append(&rows, i, x, rate, signal.Stream(1, strconv.Itoa(i))); err != nil {
			panic(err)
		}
	}
	freq := ex.Freq(rate)
	for i := range rows.Len() {
		peak := floats.MaxIdx(rows.Row(i))
		fmt.Printf("recording %d, window at %4d: peak at %.0f Hz\n", rows.Recording[i], rows.Start[i], freq[peak])
	}
	// Output:
	// recording 0, window at 2329: peak at 50 Hz
	// recording 0, window at  658: peak at 50 Hz
	// recording 1, window at 2412: peak at 120 Hz
	// recording 1, window at   45: peak at 120 Hz
}
