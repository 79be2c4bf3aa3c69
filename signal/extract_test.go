package signal

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// noise returns n samples of standard normal noise.
func noise(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// TestExtractionAppend checks the rows of two recordings appended in turn
// against Features on the starts RandomStarts or SlidingStarts give, and
// their provenance.
func TestExtractionAppend(t *testing.T) {
	xs := [][]float64{noise(1, 900), noise(2, 700)}
	for _, tc := range []struct {
		name string
		ex   Extraction
		rate float64
	}{
		{"random", Extraction{Window: 64, Coeffs: 33, Windows: 7}, 0},
		{"random hann log", Extraction{Window: 128, Coeffs: 10, Windows: 3, Settings: Settings{Taper: Hann, Log: true}}, 0},
		{"hop, all", Extraction{Window: 100, Coeffs: 51, Hop: 50}, 0},
		{"hop, at most 4", Extraction{Window: 64, Coeffs: 5, Hop: 64, Windows: 4}, 0},
		{"hop mel db", Extraction{Window: 256, Coeffs: 12, Hop: 128, Settings: Settings{Mel: &Mel{Min: 20}, Decibels: true}}, 8000},
		{"random mel slaney", Extraction{Window: 256, Coeffs: 8, Windows: 5, Settings: Settings{Taper: Hann, Mel: &Mel{Scale: Slaney, Normalize: true}}}, 16000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rows Rows
			rng := rand.New(rand.NewPCG(9, 9))
			ref := rand.New(rand.NewPCG(9, 9))
			set := tc.ex.Settings
			if set.Mel != nil {
				m := *set.Mel
				m.Rate = tc.rate
				set.Mel = &m
			}
			var wantRec, wantStart []int
			var want []float64
			for i, x := range xs {
				if err := tc.ex.Append(&rows, i, x, tc.rate, rng); err != nil {
					t.Fatal(err)
				}
				var starts []int
				var err error
				if tc.ex.Hop > 0 {
					starts, err = SlidingStarts(len(x), tc.ex.Window, tc.ex.Hop, tc.ex.Windows)
				} else {
					starts, err = RandomStarts(ref, len(x), tc.ex.Window, tc.ex.Windows)
				}
				if err != nil {
					t.Fatal(err)
				}
				F, err := Features(x, starts, tc.ex.Window, tc.ex.Coeffs, &set)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, F.RawMatrix().Data...)
				for _, s := range starts {
					wantRec, wantStart = append(wantRec, i), append(wantStart, s)
				}
			}
			if rows.Cols != tc.ex.Coeffs || rows.Len() != len(wantStart) || len(rows.Data) != rows.Len()*rows.Cols {
				t.Fatalf("%d rows of %d columns in %d values, want %d of %d", rows.Len(), rows.Cols, len(rows.Data), len(wantStart), tc.ex.Coeffs)
			}
			if !slices.Equal(rows.Recording, wantRec) || !slices.Equal(rows.Start, wantStart) {
				t.Errorf("recordings %v starts %v, want %v %v", rows.Recording, rows.Start, wantRec, wantStart)
			}
			if !slices.Equal(rows.Data, want) {
				t.Error("rows differ from Features of their windows")
			}
			for i := range rows.Len() {
				if !slices.Equal(rows.Row(i), want[i*rows.Cols:(i+1)*rows.Cols]) {
					t.Fatalf("Row(%d) is not row %d", i, i)
				}
			}
		})
	}
}

// TestExtractionDeterministic: the same stream gives the same rows,
// whatever the number of goroutines; another seed other windows.
func TestExtractionDeterministic(t *testing.T) {
	x := noise(3, 5000)
	ex := Extraction{Window: 256, Coeffs: 129, Windows: 40, Settings: Settings{Taper: Hann}}
	extract := func(seed uint64) *Rows {
		var rows Rows
		for i := range 3 {
			if err := ex.Append(&rows, i, x[i*1000:], 0, Stream(seed, strings.Repeat("r", i))); err != nil {
				t.Fatal(err)
			}
		}
		return &rows
	}
	a := extract(5)
	procs := runtime.GOMAXPROCS(1)
	b := extract(5)
	runtime.GOMAXPROCS(procs)
	if !slices.Equal(a.Data, b.Data) || !slices.Equal(a.Start, b.Start) || !slices.Equal(a.Recording, b.Recording) {
		t.Error("the same seed gave other rows on one goroutine")
	}
	if c := extract(6); slices.Equal(a.Start, c.Start) {
		t.Error("another seed drew the same windows")
	}
}

// TestExtractionSharedStream: recordings appended with one stream take its
// draws in turn, as RandomStarts does on the recordings one after another.
func TestExtractionSharedStream(t *testing.T) {
	xs := [][]float64{noise(4, 300), noise(5, 1000), noise(6, 513)}
	ex := Extraction{Window: 64, Coeffs: 4}
	var rows Rows
	rng := Stream(1, "shared")
	ref := Stream(1, "shared")
	var want []int
	for i, x := range xs {
		ex.Windows = 5 + i
		if err := ex.Append(&rows, i, x, 0, rng); err != nil {
			t.Fatal(err)
		}
		s, _ := RandomStarts(ref, len(x), 64, ex.Windows)
		want = append(want, s...)
	}
	if !slices.Equal(rows.Start, want) {
		t.Errorf("starts %v, want %v", rows.Start, want)
	}
}

// TestExtractionTonePeak: a pure tone with m cycles per window, at any
// start, peaks at column m with |X_m| = A·N/2 (A·N/4 under the Hann
// taper), and Freq puts that column at the tone's frequency.
func TestExtractionTonePeak(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for range 30 {
		N := 16 << rng.IntN(6)
		m := 1 + rng.IntN(N/2-1)
		A := 0.1 + 10*rng.Float64()
		rate := float64(1000 + rng.IntN(47000))
		phase := 2 * math.Pi * rng.Float64()
		x := make([]float64, 5*N+rng.IntN(N))
		f0 := float64(m) * rate / float64(N)
		for t := range x {
			x[t] = A * math.Cos(2*math.Pi*f0*float64(t)/rate+phase)
		}
		for _, taper := range []Taper{Rectangular, Hann} {
			ex := Extraction{Window: N, Coeffs: N/2 + 1, Windows: 6, Settings: Settings{Taper: taper}}
			var rows Rows
			if err := ex.Append(&rows, 0, x, rate, Stream(uint64(N), "tone")); err != nil {
				t.Fatal(err)
			}
			want := A * float64(N) / 2
			if taper == Hann {
				want /= 2
			}
			for i := range rows.Len() {
				row := rows.Row(i)
				peak := floats.MaxIdx(row)
				if peak != m || math.Abs(row[peak]-want) > 1e-9*want {
					t.Fatalf("N=%d m=%d %v: window at %d peaks at %d with %v, want %d with %v", N, m, taper, rows.Start[i], peak, row[peak], m, want)
				}
			}
			if f := ex.Freq(rate); math.Abs(f[m]-f0) > 1e-9*f0 {
				t.Fatalf("Freq(%v)[%d] = %v, want %v", rate, m, f[m], f0)
			}
		}
	}
}

func TestExtractionFreq(t *testing.T) {
	ex := Extraction{Window: 8, Coeffs: 5}
	if f := ex.Freq(800); !slices.Equal(f, []float64{0, 100, 200, 300, 400}) {
		t.Errorf("coefficients at 800 Hz: %v", f)
	}
	if f := ex.Freq(0); f != nil {
		t.Errorf("unknown rate: %v, want nil", f)
	}
	mel := Extraction{Window: 512, Coeffs: 10, Settings: Settings{Mel: &Mel{Min: 30, Scale: Slaney}}}
	want := Mel{Rate: 16000, Min: 30, Scale: Slaney}.Edges(10)[1:11]
	if f := mel.Freq(16000); !slices.Equal(f, want) {
		t.Errorf("mel centres %v, want %v", f, want)
	}
	if mel.Mel.Rate != 0 {
		t.Error("Freq changed the settings' bands")
	}
}

// TestStream pins the stream of a seed and key: PCG seeded with the seed
// and the FNV-1a hash of the key, the window positions of dadil features
// fft and of the CWRU protocol.
func TestStream(t *testing.T) {
	h := fnv.New64a()
	h.Write([]byte("1750/3"))
	a, b := Stream(7, "1750/3"), rand.New(rand.NewPCG(7, h.Sum64()))
	for range 10 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("Stream is not PCG(seed, FNV-1a(key))")
		}
	}
	// The windows dadil features fft --seed 1 --window 100 --windows 5
	// draws from a first recording of 10000 samples.
	starts, _ := RandomStarts(Stream(1, "0"), 10000, 100, 5)
	if want := []int{8235, 2328, 3988, 6879, 3486}; !slices.Equal(starts, want) {
		t.Errorf("starts of seed 1, key \"0\": %v, want %v", starts, want)
	}
	if Stream(1, "0").Uint64() == Stream(1, "1").Uint64() {
		t.Error("two keys gave the same stream")
	}
}

func TestExtractionErrors(t *testing.T) {
	x := noise(7, 300)
	bad := slices.Clone(x)
	bad[200] = math.Inf(1)
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
	for _, tc := range []struct {
		name string
		ex   Extraction
		x    []float64
		rate float64
		rng  *rand.Rand
		msg  string
	}{
		{"short", Extraction{Window: 512, Coeffs: 4, Windows: 3}, x, 0, rng(), "signal of 300 samples is shorter than a window of 512"},
		{"short with hop", Extraction{Window: 512, Coeffs: 4, Hop: 10}, x, 0, nil, "shorter than a window of 512"},
		{"infinite sample", Extraction{Window: 64, Coeffs: 4, Windows: 3}, bad, 0, rng(), "sample 200 is +Inf"},
		{"no random source", Extraction{Window: 64, Coeffs: 4, Windows: 3}, x, 0, nil, "no random source"},
		{"negative hop", Extraction{Window: 64, Coeffs: 4, Hop: -1}, x, 0, rng(), "hop of -1 samples"},
		{"negative windows", Extraction{Window: 64, Coeffs: 4, Hop: 8, Windows: -2}, x, 0, nil, "limit of -2 windows"},
		{"no windows", Extraction{Window: 64, Coeffs: 4}, x, 0, rng(), "no windows"},
		{"coefficients", Extraction{Window: 4, Coeffs: 4, Windows: 1}, x, 0, rng(), "4 coefficients for a window of 4 samples"},
		{"log and decibels", Extraction{Window: 64, Coeffs: 4, Windows: 1, Settings: Settings{Log: true, Decibels: true}}, x, 0, rng(), "exclude each other"},
		{"mel without rate", Extraction{Window: 64, Coeffs: 4, Windows: 1, Settings: Settings{Mel: &Mel{Rate: 8000}}}, x, 0, rng(), "mel bands need the sampling rate: got 0 Hz"},
		{"mel above nyquist", Extraction{Window: 64, Coeffs: 4, Hop: 64, Settings: Settings{Mel: &Mel{Max: 5000}}}, x, 8000, nil, "above the Nyquist frequency 4000 Hz"},
		{"other width", Extraction{Window: 64, Coeffs: 5, Hop: 64}, x, 0, nil, "rows of 4 features, extraction of 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := Rows{Cols: 4, Data: []float64{1, 2, 3, 4}, Recording: []int{0}, Start: []int{0}}
			err := tc.ex.Append(&rows, 1, tc.x, tc.rate, tc.rng)
			if err == nil || !strings.HasPrefix(err.Error(), "signal: ") || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want one containing %q", err, tc.msg)
			}
			if rows.Len() != 1 || len(rows.Data) != 4 || rows.Cols != 4 {
				t.Errorf("a failed Append changed the rows: %+v", rows)
			}
		})
	}
}

func TestExtractionCheck(t *testing.T) {
	for _, tc := range []struct {
		ex   Extraction
		rate float64
		msg  string // "" for none
	}{
		{Extraction{Window: 64, Coeffs: 33}, 0, ""},
		{Extraction{Window: 64, Coeffs: 34}, 0, "34 coefficients"},
		{Extraction{Window: 1, Coeffs: 1}, 0, "window of 1 samples"},
		{Extraction{Window: 64, Coeffs: 4, Settings: Settings{Mel: &Mel{}}}, 100, ""},
		{Extraction{Window: 64, Coeffs: 4, Settings: Settings{Mel: &Mel{Rate: 100}}}, 0, "need the sampling rate"},
		{Extraction{Window: 64, Coeffs: 4, Settings: Settings{Mel: &Mel{Max: 60}}}, 100, "above the Nyquist frequency 50 Hz"},
	} {
		err := tc.ex.Check(tc.rate)
		if tc.msg == "" && err != nil || tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%+v at %v Hz: %v, want %q", tc.ex, tc.rate, err, tc.msg)
		}
	}
}
