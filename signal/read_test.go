package signal

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/mattest"
	"github.com/dadil/dadil/internal/wavtest"
	"github.com/dadil/dadil/npy"
)

// readFixtures writes one recording in every format to a temporary folder
// and returns its paths by name. Every two-channel recording holds
// channel 1 = 1, 2, 3, 4 and channel 2 = 10, 20, 30, 40 (scaled by 2⁻¹⁵ in
// the 16-bit WAV file).
func readFixtures(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	files := map[string]string{}
	write := func(name, text string) {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files[name] = p(name)
	}
	two := [][]float64{{1, 10}, {2, 20}, {3, 30}, {4, 40}}
	if err := os.WriteFile(p("stereo.wav"), wavtest.Encode(wavtest.Spec{Rate: 44100, Channels: 2, Bits: 16, Samples: two}), 0o644); err != nil {
		t.Fatal(err)
	}
	files["stereo.wav"] = p("stereo.wav")
	if err := os.WriteFile(p("mono.wav"), wavtest.Encode(wavtest.Spec{Rate: 12000, Channels: 1, Bits: 32, Float: true, Samples: wavtest.Mono([]float64{0.5, -0.25})}), 0o644); err != nil {
		t.Fatal(err)
	}
	files["mono.wav"] = p("mono.wav")
	for name, a := range map[string]*npy.Array{
		"vec.npy":   {Shape: []int{4}, Data: []float64{1, 2, 3, 4}},
		"row.npy":   {Shape: []int{1, 4}, Data: []float64{1, 2, 3, 4}},
		"two.npy":   {Shape: []int{4, 2}, Data: []float64{1, 10, 2, 20, 3, 30, 4, 40}},
		"cube.npy":  {Shape: []int{2, 2, 1}, Data: []float64{1, 2, 3, 4}},
		"empty.npy": {Shape: []int{0}, Data: nil},
		"nan.npy":   {Shape: []int{3}, Data: []float64{1, math.NaN(), 2}},
	} {
		if err := npy.WriteFile(p(name), a.Shape, a.Data); err != nil {
			t.Fatal(err)
		}
		files[name] = p(name)
	}
	if err := npy.WriteNPZ(p("one.npz"), map[string]*npy.Array{"sig": {Shape: []int{4, 2}, Data: []float64{1, 10, 2, 20, 3, 30, 4, 40}}}); err != nil {
		t.Fatal(err)
	}
	files["one.npz"] = p("one.npz")
	if err := npy.WriteNPZ(p("many.npz"), map[string]*npy.Array{"a": {Shape: []int{2}, Data: []float64{1, 2}}, "b": {Shape: []int{3}, Data: []float64{7, 8, 9}}}); err != nil {
		t.Fatal(err)
	}
	files["many.npz"] = p("many.npz")
	write("header.csv", "time, accel\n1,10\n2,20\n3,30\n4,40\n")
	write("bare.csv", "1,10\n2,20\n3,30\n4,40\n")
	write("single.csv", "1\n2\n3\n4\n")
	write("bom.csv", "\xef\xbb\xbf1\r\n2\r\n3\r\n4\r\n")
	write("bomhead.csv", "\xef\xbb\xbfaccel;x\n1\n2\n3\n4\n")
	write("ragged.csv", "a,b\n1,2\n3\n")
	write("text.csv", "a,b\n1,2\n3,x\n")
	write("headonly.csv", "a,b\n")
	write("void.csv", "")
	write("inf.csv", "v\n1\nInf\n")
	write("signal.txt", "1\n2\n")
	mattest.WriteFile(t, p("105.mat"), mattest.Column("X105_DE_time", []float64{1, 2, 3, 4}), mattest.Column("X105_FE_time", []float64{5, 6}))
	files["105.mat"] = p("105.mat")
	return files
}

func TestRead(t *testing.T) {
	f := readFixtures(t)
	const s16 = 1.0 / 32768
	for _, tc := range []struct {
		file   string
		opt    ReadOptions
		want   []float64
		signal string
		rate   int
	}{
		{"stereo.wav", ReadOptions{Channel: 1}, []float64{s16, 2 * s16, 3 * s16, 4 * s16}, "channel 1 of 2", 44100},
		{"stereo.wav", ReadOptions{Channel: 2}, []float64{10 * s16, 20 * s16, 30 * s16, 40 * s16}, "channel 2 of 2", 44100},
		{"stereo.wav", ReadOptions{Channel: MeanChannel}, []float64{5.5 * s16, 11 * s16, 16.5 * s16, 22 * s16}, "mean of 2 channels", 44100},
		{"mono.wav", ReadOptions{}, []float64{0.5, -0.25}, "", 12000},
		{"vec.npy", ReadOptions{}, []float64{1, 2, 3, 4}, "", 0},
		{"row.npy", ReadOptions{}, []float64{1, 2, 3, 4}, "", 0},
		{"two.npy", ReadOptions{Channel: 2}, []float64{10, 20, 30, 40}, "channel 2 of 2", 0},
		{"two.npy", ReadOptions{Channel: MeanChannel}, []float64{5.5, 11, 16.5, 22}, "mean of 2 channels", 0},
		{"one.npz", ReadOptions{Channel: 1}, []float64{1, 2, 3, 4}, "sig, channel 1 of 2", 0},
		{"many.npz", ReadOptions{Variable: "b"}, []float64{7, 8, 9}, "b", 0},
		{"header.csv", ReadOptions{Variable: "accel"}, []float64{10, 20, 30, 40}, "accel", 0},
		{"header.csv", ReadOptions{Channel: 1}, []float64{1, 2, 3, 4}, "time", 0},
		{"header.csv", ReadOptions{Channel: MeanChannel}, []float64{5.5, 11, 16.5, 22}, "mean of 2 channels", 0},
		{"bare.csv", ReadOptions{Channel: 2}, []float64{10, 20, 30, 40}, "channel 2 of 2", 0},
		{"single.csv", ReadOptions{}, []float64{1, 2, 3, 4}, "", 0},
		{"bom.csv", ReadOptions{}, []float64{1, 2, 3, 4}, "", 0},
		{"bomhead.csv", ReadOptions{Variable: "accel;x"}, []float64{1, 2, 3, 4}, "accel;x", 0},
		{"105.mat", ReadOptions{}, []float64{1, 2, 3, 4}, "X105_DE_time", 0},
		{"105.mat", ReadOptions{Sensor: "FE"}, []float64{5, 6}, "X105_FE_time", 0},
	} {
		rec, err := Read(f[tc.file], &tc.opt)
		if err != nil {
			t.Errorf("%s %+v: %v", tc.file, tc.opt, err)
			continue
		}
		if !slices.Equal(rec.Samples, tc.want) || rec.Signal != tc.signal || rec.Rate != tc.rate {
			t.Errorf("%s %+v: %v %q %d Hz, want %v %q %d Hz", tc.file, tc.opt, rec.Samples, rec.Signal, rec.Rate, tc.want, tc.signal, tc.rate)
		}
	}
}

func TestReadErrors(t *testing.T) {
	f := readFixtures(t)
	for _, tc := range []struct {
		file string
		opt  ReadOptions
		want string
	}{
		{"stereo.wav", ReadOptions{}, "the file has 2 channels: choose one (1 … 2) or their mean"},
		{"stereo.wav", ReadOptions{Channel: 3}, "channel 3 requested, but the file has 2"},
		{"stereo.wav", ReadOptions{Variable: "left"}, "WAV channels have no names"},
		{"stereo.wav", ReadOptions{Sensor: "DE"}, `the CWRU sensor "DE" applies to MATLAB files only`},
		{"two.npy", ReadOptions{}, "the file has 2 channels"},
		{"vec.npy", ReadOptions{Variable: "x"}, `a .npy file holds one array`},
		{"cube.npy", ReadOptions{}, "shape [2 2 1]: a signal is a 1-D array, or a 2-D array of frames × channels"},
		{"empty.npy", ReadOptions{}, "shape [0]: no samples"},
		{"nan.npy", ReadOptions{}, "sample 2 (counting from 1) is NaN"},
		{"many.npz", ReadOptions{}, "the archive holds 2 arrays (a, b): name the signal's"},
		{"many.npz", ReadOptions{Variable: "c"}, `no array "c" (the archive holds a, b)`},
		{"one.npz", ReadOptions{}, "array sig: the file has 2 channels"},
		{"header.csv", ReadOptions{}, "the file has 2 columns (time, accel): choose one by its name or number, or their mean"},
		{"header.csv", ReadOptions{Variable: "x"}, `no column "x" (the header names time, accel)`},
		{"header.csv", ReadOptions{Variable: "accel", Channel: 1}, "not both"},
		{"bare.csv", ReadOptions{Variable: "x"}, `column "x": the file has no header row`},
		{"bare.csv", ReadOptions{}, "the file has 2 channels"},
		{"ragged.csv", ReadOptions{Channel: 1}, "line 3: a different number of columns than the first row"},
		{"text.csv", ReadOptions{Channel: 2}, `line 3: column 2: "x" is not a number`},
		{"headonly.csv", ReadOptions{Channel: 1}, "no data rows: the file has only the header"},
		{"void.csv", ReadOptions{}, "empty file"},
		{"inf.csv", ReadOptions{}, "v: sample 2 (counting from 1) is +Inf"},
		{"signal.txt", ReadOptions{}, `unknown recording format ".txt" (want .mat, .wav, .flac, .npy, .npz or .csv)`},
		{"105.mat", ReadOptions{Channel: 2}, "channel numbers and the mean of channels apply to WAV, NumPy and CSV files"},
		{"105.mat", ReadOptions{Sensor: "BA"}, `no variable`},
		{"mono.wav", ReadOptions{Channel: -3}, "invalid channel -3"},
	} {
		_, err := Read(f[tc.file], &tc.opt)
		if err == nil || !strings.HasPrefix(err.Error(), "signal: ") || !strings.Contains(err.Error(), filepath.Base(f[tc.file])) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: error %v, want one naming the file and containing %q", tc.file, tc.opt, err, tc.want)
		}
	}
	if _, err := Read(filepath.Join(t.TempDir(), "gone.wav"), nil); err == nil || !strings.Contains(err.Error(), "gone.wav") {
		t.Errorf("missing file: %v", err)
	}
}

func TestSlidingStarts(t *testing.T) {
	for _, tc := range []struct {
		n, window, hop, limit int
		want                  []int
		err                   string
	}{
		{10, 4, 2, 0, []int{0, 2, 4, 6}, ""},
		{10, 4, 4, 0, []int{0, 4}, ""},
		{10, 4, 3, 0, []int{0, 3, 6}, ""},
		{10, 4, 1, 2, []int{0, 1}, ""},
		{4, 4, 7, 0, []int{0}, ""},
		{3, 4, 1, 0, nil, "signal of 3 samples is shorter than a window of 4"},
		{10, 4, 0, 0, nil, "hop of 0 samples"},
		{10, 0, 1, 0, nil, "window of 0 samples"},
		{10, 4, 1, -1, nil, "limit of -1 windows"},
	} {
		got, err := SlidingStarts(tc.n, tc.window, tc.hop, tc.limit)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: error %v, want %q", tc, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v, %v", tc, got, err)
		}
	}
}

func FuzzDecodeCSV(f *testing.F) {
	f.Add("a,b\n1,2\n3,4\n", "b", 0)
	f.Add("1\n2\n", "", 0)
	f.Add("1,2\n3\n", "", 1)
	f.Add("x,y\n1,2\n", "", -1)
	f.Add("\"1\",2\n", "", 2)
	f.Fuzz(func(t *testing.T, text, variable string, ch int) {
		rec, err := decodeCSV(strings.NewReader(text), variable, ch)
		if err != nil {
			return
		}
		if len(rec.Samples) == 0 {
			t.Fatalf("no samples and no error for %q", text)
		}
	})
}
