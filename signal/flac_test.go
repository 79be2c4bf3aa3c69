package signal

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/flactest"
	"github.com/dadil/dadil/internal/wavtest"
)

// flacSamples returns frames × C random integers of b bits.
func flacSamples(rng *rand.Rand, frames, C, b int) [][]int32 {
	s := make([][]int32, frames)
	lim := int64(1) << (b - 1)
	for t := range s {
		s[t] = make([]int32, C)
		for c := range s[t] {
			s[t][c] = int32(rng.Int64N(2*lim) - lim)
		}
	}
	return s
}

// TestDecodeFLAC reads back what the encoder wrote, for several channel
// counts, sample sizes and block sizes, with every channel selector: each
// sample v of b bits as v / 2^(b−1), and the mean of the channels.
func TestDecodeFLAC(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	dir := t.TempDir()
	for _, tc := range []struct{ C, bits, frames, block int }{
		{1, 16, 10000, 4096}, {2, 24, 3000, 1152}, {3, 8, 500, 192}, {1, 12, 4096, 4096}, {8, 20, 300, 256},
	} {
		s := flacSamples(rng, tc.frames, tc.C, tc.bits)
		path := filepath.Join(dir, "x.flac")
		flactest.WriteFile(t, path, flactest.Spec{Rate: 22050, Bits: tc.bits, Samples: s, Block: tc.block})
		scale := math.Ldexp(1, -(tc.bits - 1))
		chans := []int{OnlyChannel}
		if tc.C > 1 {
			chans = []int{1, tc.C, MeanChannel}
		}
		for _, ch := range chans {
			x, info, err := ReadFLAC(path, ch)
			if err != nil {
				t.Fatalf("%+v channel %d: %v", tc, ch, err)
			}
			if info != (FLACInfo{Rate: 22050, Channels: tc.C, Bits: tc.bits, Frames: tc.frames}) {
				t.Fatalf("%+v: info %+v", tc, info)
			}
			for i, v := range x {
				var want float64
				switch ch {
				case OnlyChannel:
					want = float64(s[i][0]) * scale
				case MeanChannel:
					for _, u := range s[i] {
						want += float64(u) * scale
					}
					want /= float64(tc.C)
				default:
					want = float64(s[i][ch-1]) * scale
				}
				if v != want {
					t.Fatalf("%+v channel %d frame %d: %v, want %v", tc, ch, i, v, want)
				}
			}
		}
		if tc.C > 1 {
			if _, _, err := ReadFLAC(path, OnlyChannel); err == nil || !strings.Contains(err.Error(), "choose one") {
				t.Errorf("%+v: no channel chosen: %v", tc, err)
			}
		}
	}
}

// TestFLACMatchesWAV: the same 16-bit recording read from a FLAC and a WAV
// file gives the same signal.
func TestFLACMatchesWAV(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	dir := t.TempDir()
	s := flacSamples(rng, 2000, 2, 16)
	frames := make([][]float64, len(s))
	for i, fr := range s {
		frames[i] = []float64{float64(fr[0]), float64(fr[1])}
	}
	fp, wp := filepath.Join(dir, "a.flac"), filepath.Join(dir, "a.wav")
	flactest.WriteFile(t, fp, flactest.Spec{Rate: 8000, Bits: 16, Samples: s})
	wavtest.WriteFile(t, wp, wavtest.Spec{Rate: 8000, Channels: 2, Bits: 16, Samples: frames})
	for _, ch := range []int{1, 2, MeanChannel} {
		a, err := Read(fp, &ReadOptions{Channel: ch})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Read(wp, &ReadOptions{Channel: ch})
		if err != nil {
			t.Fatal(err)
		}
		if a.Rate != 8000 || a.Signal != b.Signal || len(a.Samples) != len(b.Samples) {
			t.Fatalf("channel %d: FLAC %d Hz %q, %d samples; WAV %q, %d", ch, a.Rate, a.Signal, len(a.Samples), b.Signal, len(b.Samples))
		}
		for i := range a.Samples {
			if a.Samples[i] != b.Samples[i] {
				t.Fatalf("channel %d sample %d: FLAC %v, WAV %v", ch, i, a.Samples[i], b.Samples[i])
			}
		}
	}
}

func TestReadFLACOptions(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.flac")
	flactest.WriteFile(t, p, flactest.Spec{Rate: 8000, Bits: 16, Samples: flacSamples(rand.New(rand.NewPCG(1, 1)), 100, 2, 16)})
	for _, tc := range []struct {
		o    ReadOptions
		want string
	}{
		{ReadOptions{Variable: "left", Channel: 1}, "FLAC channels have no names"},
		{ReadOptions{}, "the file has 2 channels: choose one"},
		{ReadOptions{Sensor: "DE", Channel: 1}, "applies to MATLAB files only"},
	} {
		if _, err := Read(p, &tc.o); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%+v: error %v, want one naming the file and containing %q", tc.o, err, tc.want)
		}
	}
}

// TestFLACReferenceEncoder decodes what the reference encoder (the flac
// tool of Xiph.Org, Debian's flac package) makes of WAV files, with its
// linear prediction and stereo decorrelation, in 16 and 24 bits: the
// signal the WAV file gives, every channel; 32-bit files are refused with
// a clear error. Skips without the tool.
func TestFLACReferenceEncoder(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the reference-encoder cross-check in short mode")
	}
	tool, err := exec.LookPath("flac")
	if err != nil {
		t.Skip("skipping the reference-encoder cross-check: no flac tool on the PATH (Debian's flac package)")
	}
	rng := rand.New(rand.NewPCG(8, 8))
	dir := t.TempDir()
	for _, tc := range []struct{ C, bits int }{{2, 16}, {1, 24}, {3, 16}, {2, 32}} {
		frames := make([][]float64, 6000)
		amp := math.Ldexp(0.4, tc.bits-1)
		for i := range frames {
			frames[i] = make([]float64, tc.C)
			for c := range frames[i] {
				// Correlated channels, so that stereo decorrelation is used.
				frames[i][c] = math.Round(amp*math.Sin(float64(i)/(9+float64(c))) + amp/50*rng.NormFloat64())
			}
		}
		wp := filepath.Join(dir, fmt.Sprintf("r%d_%d.wav", tc.C, tc.bits))
		fp := strings.TrimSuffix(wp, ".wav") + ".flac"
		wavtest.WriteFile(t, wp, wavtest.Spec{Rate: 44100, Channels: tc.C, Bits: tc.bits, Samples: frames, Extensible: tc.C > 2})
		if out, err := exec.Command(tool, "--silent", "--force", "-8", "--channel-map=none", "-o", fp, wp).CombinedOutput(); err != nil {
			if tc.bits == 32 {
				t.Logf("the flac tool does not encode 32-bit samples (%v: %s)", err, bytes.TrimSpace(out))
				continue
			}
			t.Fatalf("flac: %v: %s", err, out)
		}
		if tc.bits == 32 {
			if _, _, err := ReadFLAC(fp, 1); err == nil || !strings.Contains(err.Error(), "32-bit FLAC streams are not supported (at most 24 bits): convert the file to WAV") {
				t.Errorf("32 bits: error %v", err)
			}
			continue
		}
		for c := 1; c <= tc.C; c++ {
			want, _, err := ReadWAV(wp, c)
			if err != nil {
				t.Fatal(err)
			}
			got, info, err := ReadFLAC(fp, c)
			if err != nil {
				t.Fatalf("%d channels of %d bits: %v", tc.C, tc.bits, err)
			}
			if info.Rate != 44100 || info.Bits != tc.bits || info.Channels != tc.C {
				t.Fatalf("info %+v", info)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d channels of %d bits, channel %d: the FLAC decoding differs from the WAV file", tc.C, tc.bits, c)
			}
		}
	}
}

func TestDecodeFLACErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	dir := t.TempDir()
	path := filepath.Join(dir, "ok.flac")
	flactest.WriteFile(t, path, flactest.Spec{Rate: 16000, Bits: 16, Samples: flacSamples(rng, 9000, 2, 16), Block: 1024})
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(at int) []byte {
		b := bytes.Clone(good)
		b[at] ^= 0x5a
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		ch   int
		want string
	}{
		{"not flac", []byte("RIFF....WAVEfmt "), 1, "not a FLAC file"},
		{"empty", nil, 1, "not a FLAC file"},
		{"magic only", good[:4], 1, "truncated: it ends inside its header"},
		{"cut in the header", good[:20], 1, "truncated: it ends inside its header"},
		{"header only", good[:42], 1, "truncated"},
		{"cut in a frame", good[:len(good)-100], 1, "truncated"},
		{"cut between frames", good[:len(good)/2], 1, "truncated"},
		{"corrupt audio", flip(len(good) / 2), 1, "frame after sample"},
		{"channel 3 of 2", good, 3, "channel 3 requested, but the file has 2"},
	} {
		_, _, err := DecodeFLAC(bytes.NewReader(tc.data), tc.ch)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "signal: ") {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func FuzzDecodeFLAC(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 7))
	dir := f.TempDir()
	for i, tc := range []struct{ C, bits, frames int }{{1, 16, 300}, {2, 8, 200}, {3, 24, 50}} {
		p := filepath.Join(dir, string(rune('a'+i))+".flac")
		flactest.WriteFile(f, p, flactest.Spec{Rate: 8000, Bits: tc.bits, Samples: flacSamples(rng, tc.frames, tc.C, tc.bits), Block: 128})
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 1)
		f.Add(b, MeanChannel)
	}
	f.Fuzz(func(t *testing.T, b []byte, ch int) {
		x, info, err := DecodeFLAC(bytes.NewReader(b), ch)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "signal: ") {
				t.Fatalf("error without the package prefix: %v", err)
			}
			return
		}
		if len(x) == 0 || info.Frames != len(x) {
			t.Fatalf("%d samples, info %+v", len(x), info)
		}
		for i, v := range x {
			if !(v >= -1 && v < 1) {
				t.Fatalf("sample %d = %v outside [-1, 1)", i, v)
			}
		}
	})
}
