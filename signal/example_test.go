package signal_test

import (
	"fmt"
	"math"
	"math/rand/v2"

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
	F, err := signal.Features(x, starts, 200, 101)
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
