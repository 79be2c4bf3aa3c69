package signal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/wavtest"
)

func TestDecodeWAVFormats(t *testing.T) {
	// Two channels of three frames, stored values and their decoded values.
	for _, tc := range []struct {
		name       string
		bits       int
		float, ext bool
		stored     [][]float64
		want       [][]float64
	}{
		{"u8", 8, false, false, [][]float64{{0, 255}, {128, 129}, {64, 192}}, [][]float64{{-1, 127.0 / 128}, {0, 1.0 / 128}, {-0.5, 0.5}}},
		{"s16", 16, false, false, [][]float64{{-32768, 32767}, {0, 1}, {-16384, 16384}}, [][]float64{{-1, 32767.0 / 32768}, {0, 1.0 / 32768}, {-0.5, 0.5}}},
		{"s24", 24, false, false, [][]float64{{-8388608, 8388607}, {0, -1}, {4194304, -4194304}}, [][]float64{{-1, 8388607.0 / 8388608}, {0, -1.0 / 8388608}, {0.5, -0.5}}},
		{"s32", 32, false, false, [][]float64{{math.MinInt32, math.MaxInt32}, {0, -2}, {1 << 30, -(1 << 30)}}, [][]float64{{-1, float64(math.MaxInt32) / (1 << 31)}, {0, -2.0 / (1 << 31)}, {0.5, -0.5}}},
		{"f32", 32, true, false, [][]float64{{0.25, -1.5}, {0, 3}, {0.125, -0.125}}, [][]float64{{0.25, -1.5}, {0, 3}, {0.125, -0.125}}},
		{"f64", 64, true, false, [][]float64{{0.1, -1e-300}, {0, 7}, {2, -2}}, [][]float64{{0.1, -1e-300}, {0, 7}, {2, -2}}},
		{"extensible s24", 24, false, true, [][]float64{{-8388608, 8388607}, {0, -1}, {4194304, -4194304}}, [][]float64{{-1, 8388607.0 / 8388608}, {0, -1.0 / 8388608}, {0.5, -0.5}}},
		{"extensible f32", 32, true, true, [][]float64{{0.25, -1.5}, {0, 3}, {0.125, -0.125}}, [][]float64{{0.25, -1.5}, {0, 3}, {0.125, -0.125}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := wavtest.Spec{Rate: 8000, Channels: 2, Bits: tc.bits, Float: tc.float, Extensible: tc.ext, Samples: tc.stored,
				// An odd-sized chunk (with its pad byte) before the data,
				// another after it.
				Before: []wavtest.Chunk{{ID: "LIST", Data: []byte("INFOabc")}}, After: []wavtest.Chunk{{ID: "id3 ", Data: []byte{1, 2, 3, 4}}}}
			b := wavtest.Encode(spec)
			for _, sel := range []struct {
				ch   int
				want func(fr []float64) float64
			}{
				{1, func(fr []float64) float64 { return fr[0] }},
				{2, func(fr []float64) float64 { return fr[1] }},
				{MeanChannel, func(fr []float64) float64 { return (fr[0] + fr[1]) / 2 }},
			} {
				x, info, err := DecodeWAV(bytes.NewReader(b), sel.ch)
				if err != nil {
					t.Fatalf("channel %d: %v", sel.ch, err)
				}
				wantInfo := WAVInfo{Rate: 8000, Channels: 2, Bits: tc.bits, Float: tc.float, Frames: 3}
				if info != wantInfo {
					t.Errorf("info %+v, want %+v", info, wantInfo)
				}
				for f, fr := range tc.want {
					if x[f] != sel.want(fr) {
						t.Errorf("channel %d, frame %d: %v, want %v", sel.ch, f, x[f], sel.want(fr))
					}
				}
			}
			if _, _, err := DecodeWAV(bytes.NewReader(b), OnlyChannel); err == nil || !strings.Contains(err.Error(), "the file has 2 channels: choose one (1 … 2) or their mean") {
				t.Errorf("OnlyChannel on a stereo file: %v", err)
			}
			// One channel: OnlyChannel and channel 1 agree.
			mono := spec
			mono.Channels = 1
			mono.Samples = nil
			for _, fr := range tc.stored {
				mono.Samples = append(mono.Samples, fr[:1])
			}
			for _, ch := range []int{OnlyChannel, 1, MeanChannel} {
				x, _, err := DecodeWAV(bytes.NewReader(wavtest.Encode(mono)), ch)
				if err != nil {
					t.Fatal(err)
				}
				for f, fr := range tc.want {
					if x[f] != fr[0] {
						t.Errorf("mono, selector %d, frame %d: %v, want %v", ch, f, x[f], fr[0])
					}
				}
			}
		})
	}
}

func TestDecodeWAVErrors(t *testing.T) {
	stereo := wavtest.Spec{Rate: 100, Channels: 2, Bits: 16, Samples: [][]float64{{1, 2}, {3, 4}}}
	good := wavtest.Encode(stereo)
	le := binary.LittleEndian
	// patch returns a copy of b with p written at offset off.
	patch := func(b []byte, off int, p ...byte) []byte {
		c := bytes.Clone(b)
		copy(c[off:], p)
		return c
	}
	u16 := func(v uint16) []byte { return le.AppendUint16(nil, v) }
	nanWAV := wavtest.Encode(wavtest.Spec{Rate: 100, Channels: 1, Bits: 32, Float: true, Samples: [][]float64{{0}, {math.NaN()}}})
	// The fmt chunk starts at byte 12 (its fields at 20), the data chunk
	// header at 36 and its samples at 44.
	for _, tc := range []struct {
		name string
		b    []byte
		ch   int
		want string
	}{
		{"empty", nil, 1, "not a WAV file: the file ends before the 12-byte RIFF header"},
		{"not riff", []byte("hello world, this is text"), 1, `not a WAV file: it starts with "hell", not "RIFF"`},
		{"rifx", patch(good, 0, 'R', 'I', 'F', 'X'), 1, "big-endian (RIFX)"},
		{"rf64 without ds64", patch(patch(good, 0, 'R', 'F', '6', '4'), 40, 0xff, 0xff, 0xff, 0xff), 1, `an RF64 file without a "ds64" chunk before its "data" chunk`},
		{"ds64 in riff", append(append(bytes.Clone(good[:12]), rf64Chunk(8)...), good[12:]...), 1, `a "ds64" chunk in a RIFF file`},
		{"avi", patch(good, 8, 'A', 'V', 'I', ' '), 1, `a RIFF file of type "AVI ", not "WAVE"`},
		{"header only", good[:12], 1, `no "fmt " chunk`},
		{"no data", good[:36], 1, `no "data" chunk: the file is truncated`},
		{"data first", append(append([]byte{}, good[:12]...), good[36:]...), 1, `the "data" chunk comes before the "fmt " chunk`},
		{"short fmt", patch(good, 16, 8, 0, 0, 0), 1, `"fmt " chunk of 8 bytes (want 16 to 65536)`},
		{"truncated fmt", good[:30], 1, `truncated "fmt " chunk: the file ends before 16 bytes`},
		{"a-law", patch(good, 20, u16(wavALaw)...), 1, "A-law encoded samples are not supported"},
		{"mu-law", patch(good, 20, u16(wavMuLaw)...), 1, "μ-law encoded samples are not supported"},
		{"adpcm", patch(good, 20, u16(0x11)...), 1, "WAV format code 0x11 is not supported"},
		{"12 bits", patch(good, 34, u16(12)...), 1, "12-bit integer samples (want 8, 16, 24 or 32)"},
		{"16-bit float", patch(patch(good, 20, u16(wavFloat)...), 34, u16(16)...), 1, "16-bit floating-point samples (want 32 or 64)"},
		{"no channels", patch(good, 22, u16(0)...), 1, "0 channels"},
		{"bad block", patch(good, 32, u16(3)...), 1, "frames of 3 bytes for 2 channels of 16 bits (want 4)"},
		{"truncated data", good[:len(good)-2], 1, `the file is truncated: its "data" chunk has 6 of its 8 bytes`},
		{"partial frame", patch(good, 40, 6, 0, 0, 0), 1, `"data" chunk of 6 bytes is not a whole number of 4-byte frames`},
		{"empty data", patch(good[:44], 40, 0, 0, 0, 0), 1, `no samples (empty "data" chunk)`},
		{"channel 3", good, 3, "channel 3 requested, but the file has 2"},
		{"selector", good, -5, "invalid channel -5"},
		{"nan", nanWAV, 1, "frame 2 (counting from 1) is NaN"},
		{"unsized, partial frame", append(patch(good, 40, 0xff, 0xff, 0xff, 0xff), 9), 1, `the file ends inside a frame: the "data" chunk of unknown size (a stream never finalised) holds 9 bytes, not a whole number of 4-byte frames`},
		{"unsized, empty", patch(good[:44], 40, 0xff, 0xff, 0xff, 0xff), 1, `no samples`},
		{"truncated chunk", append(bytes.Clone(good[:36]), 'L', 'I', 'S', 'T', 100, 0, 0, 0, 1, 2), 1, `chunk "LIST" of 100 bytes: the file ends before 100 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := DecodeWAV(bytes.NewReader(tc.b), tc.ch)
			if err == nil || !strings.HasPrefix(err.Error(), "signal: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// RF64: the data size comes from the "ds64" chunk, and a chunk after
	// the data is not read as samples.
	rf := append([]byte("RF64\xff\xff\xff\xffWAVE"), rf64Chunk(8)...)
	rf = append(rf, good[12:40]...)
	rf = append(rf, 0xff, 0xff, 0xff, 0xff)
	rf = append(rf, good[44:]...)
	rf = append(rf, 'L', 'I', 'S', 'T', 2, 0, 0, 0, 9, 9)
	if x, info, err := DecodeWAV(bytes.NewReader(rf), 1); err != nil || info.Frames != 2 || x[0] != 1.0/32768 || x[1] != 3.0/32768 {
		t.Errorf("RF64: %v, %+v, %v", x, info, err)
	}
	// A data size of 2³²−1 (a stream never finalised) runs to the end of
	// the file.
	unsized := patch(good, 40, 0xff, 0xff, 0xff, 0xff)
	x, info, err := DecodeWAV(bytes.NewReader(unsized), 2)
	if err != nil || info.Frames != 2 || x[0] != 2.0/32768 || x[1] != 4.0/32768 {
		t.Errorf("unsized data chunk: %v, %+v, %v", x, info, err)
	}
	// ReadWAV names the file.
	path := filepath.Join(t.TempDir(), "cut.wav")
	if err := os.WriteFile(path, good[:len(good)-2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadWAV(path, 1); err == nil || !strings.HasPrefix(err.Error(), "signal: "+path+": the file is truncated") {
		t.Errorf("ReadWAV: %v", err)
	}
	if _, _, err := ReadWAV(filepath.Join(t.TempDir(), "missing.wav"), 1); err == nil || !strings.Contains(err.Error(), "missing.wav") {
		t.Errorf("ReadWAV of a missing file: %v", err)
	}
}

// A 16-bit recording of a tone: the spectrum of every window peaks at the
// tone's bin, f·N/rate.
func TestWAVTonePeaks(t *testing.T) {
	const rate, tone, n, window = 8000, 500, 8000, 256
	var samples [][]float64
	for i := 0; i < n; i++ {
		samples = append(samples, []float64{math.Round(20000 * math.Sin(2*math.Pi*tone*float64(i)/rate))})
	}
	x, info, err := DecodeWAV(bytes.NewReader(wavtest.Encode(wavtest.Spec{Rate: rate, Channels: 1, Bits: 16, Samples: samples})), OnlyChannel)
	if err != nil {
		t.Fatal(err)
	}
	if info.Frames != n || len(x) != n {
		t.Fatalf("%d frames, %d samples, want %d", info.Frames, len(x), n)
	}
	starts, err := SlidingStarts(len(x), window, window/2, 0)
	if err != nil {
		t.Fatal(err)
	}
	F, err := Features(x, starts, window, window/2+1, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := tone * window / rate
	for i := range starts {
		row := F.RawRowView(i)
		peak := 0
		for k, v := range row {
			if v > row[peak] {
				peak = k
			}
		}
		if peak != want {
			t.Fatalf("window %d: peak at bin %d, want %d", i, peak, want)
		}
	}
}

// TestWAVScipy cross-checks DecodeWAV with scipy.io.wavfile on files it
// writes, in every sample type it writes.
func TestWAVScipy(t *testing.T) {
	const python = "/usr/bin/python3"
	if testing.Short() {
		t.Skip("skipping the scipy cross-check in short mode")
	}
	if out, err := exec.Command(python, "-c", "import scipy.io.wavfile").CombinedOutput(); err != nil {
		t.Skipf("skipping the scipy cross-check: %s cannot import scipy.io.wavfile (%v: %s)", python, err, strings.TrimSpace(string(out)))
	}
	dir := t.TempDir()
	script := `
import json, sys
import numpy as np
from scipy.io import wavfile
rng = np.random.default_rng(7)
out = {}
x = rng.uniform(-1, 1, size=(50, 3))
for name, dt, scale, offset in [("u8", np.uint8, 128, 128), ("i16", np.int16, 32768, 0),
                                 ("i32", np.int32, 2**31, 0), ("f32", np.float32, 1, 0), ("f64", np.float64, 1, 0)]:
    if np.dtype(dt).kind == "f":
        a = x.astype(dt)
    else:
        info = np.iinfo(dt)
        a = np.clip(np.round(x * scale) + offset, info.min, info.max).astype(dt)
    wavfile.write(sys.argv[1] + "/" + name + ".wav", 11025, a)
    # The values as [-1, 1) floats, channel by channel.
    v = (a.astype(np.float64) - offset) / scale
    out[name] = v.T.tolist()
json.dump(out, sys.stdout)
`
	out, err := exec.Command(python, "-c", script, dir).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var want map[string][][]float64
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != 5 {
		t.Fatalf("python wrote %d files, want 5", len(want))
	}
	for name, chans := range want {
		for c, wc := range chans {
			x, info, err := ReadWAV(filepath.Join(dir, name+".wav"), c+1)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if info.Rate != 11025 || info.Channels != 3 || info.Frames != 50 {
				t.Fatalf("%s: %+v", name, info)
			}
			for i, v := range wc {
				tol := 0.0
				if name == "f32" {
					tol = 1e-7 // float32 in JSON through float64
				}
				if math.Abs(x[i]-v) > tol {
					t.Fatalf("%s channel %d frame %d: %v, scipy %v", name, c+1, i, x[i], v)
				}
			}
		}
	}
}

func FuzzDecodeWAV(f *testing.F) {
	f.Add(wavtest.Encode(wavtest.Spec{Rate: 100, Channels: 2, Bits: 16, Samples: [][]float64{{1, -2}, {3, 4}}}), 1)
	f.Add(wavtest.Encode(wavtest.Spec{Rate: 100, Channels: 1, Bits: 24, Extensible: true, Samples: [][]float64{{1}, {-7}}}), 0)
	f.Add(wavtest.Encode(wavtest.Spec{Rate: 100, Channels: 3, Bits: 32, Float: true, Samples: [][]float64{{1, 2, 3}}, Before: []wavtest.Chunk{{ID: "LIST", Data: []byte("x")}}}), -1)
	f.Add(wavtest.Encode(wavtest.Spec{Rate: 100, Channels: 1, Bits: 8, Samples: [][]float64{{0}, {255}}}), 1)
	riff := wavtest.Encode(wavtest.Spec{Rate: 100, Channels: 1, Bits: 16, Samples: [][]float64{{1}, {2}}})
	rf := append(append([]byte("RF64\xff\xff\xff\xffWAVE"), rf64Chunk(4)...), riff[12:40]...)
	f.Add(append(append(rf, 0xff, 0xff, 0xff, 0xff), riff[44:]...), 0)
	f.Fuzz(func(t *testing.T, b []byte, ch int) {
		x, info, err := DecodeWAV(bytes.NewReader(b), ch)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "signal: ") {
				t.Fatalf("error without the package prefix: %v", err)
			}
			return
		}
		if len(x) == 0 || len(x) != info.Frames {
			t.Fatalf("%d samples, info %+v", len(x), info)
		}
		for i, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) || (!info.Float && (v < -1 || v >= 1)) {
				t.Fatalf("sample %d = %v (%+v)", i, v, info)
			}
		}
	})
}

// rf64Chunk returns a "ds64" chunk declaring a data chunk of dataSize
// bytes.
func rf64Chunk(dataSize uint64) []byte {
	le := binary.LittleEndian
	c := []byte("ds64")
	c = le.AppendUint32(c, 28)
	c = le.AppendUint64(c, 0) // RIFF size: not used
	c = le.AppendUint64(c, dataSize)
	c = le.AppendUint64(c, 0) // sample count: not used
	return le.AppendUint32(c, 0)
}

// BenchmarkReadWAV reads two minutes of 16-bit stereo audio at 48 kHz
// (23 MB), one channel of it.
func BenchmarkReadWAV(b *testing.B) {
	const frames = 2 * 60 * 48000
	s := make([][]float64, frames)
	for i := range s {
		v := math.Round(8000 * math.Sin(float64(i)/7))
		s[i] = []float64{v, -v}
	}
	path := filepath.Join(b.TempDir(), "long.wav")
	wavtest.WriteFile(b, path, wavtest.Spec{Rate: 48000, Channels: 2, Bits: 16, Samples: s})
	b.SetBytes(int64(frames * 4))
	b.ResetTimer()
	for b.Loop() {
		x, _, err := ReadWAV(path, 2)
		if err != nil || len(x) != frames {
			b.Fatalf("%d samples, %v", len(x), err)
		}
	}
}
