// Package flactest writes FLAC files for tests, with the encoder of
// github.com/mewkiz/flac (the library the signal package decodes with).
package flactest

import (
	"os"
	"testing"

	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
	"github.com/mewkiz/flac/meta"
)

// Spec is a FLAC stream: Samples[t][c] is channel c of frame t, an integer
// of Bits bits.
type Spec struct {
	Rate, Bits int
	Samples    [][]int32
	// Block is the number of frames per FLAC frame (default 4096).
	Block int
}

// WriteFile writes s to path; the encoder records the sample count and the
// MD5 signature of the audio in the header.
func WriteFile(tb testing.TB, path string, s Spec) {
	tb.Helper()
	C := len(s.Samples[0])
	block := s.Block
	if block == 0 {
		block = 4096
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	info := &meta.StreamInfo{
		BlockSizeMin: uint16(min(block, len(s.Samples))), BlockSizeMax: uint16(block),
		SampleRate: uint32(s.Rate), NChannels: uint8(C), BitsPerSample: uint8(s.Bits),
	}
	enc, err := flac.NewEncoder(f, info)
	if err != nil {
		tb.Fatal(err)
	}
	for t0 := 0; t0 < len(s.Samples); t0 += block {
		n := min(block, len(s.Samples)-t0)
		fr := &frame.Frame{Header: frame.Header{
			HasFixedBlockSize: true, BlockSize: uint16(n), SampleRate: uint32(s.Rate),
			Channels: frame.Channels(C - 1), BitsPerSample: uint8(s.Bits),
		}}
		for c := range C {
			sub := &frame.Subframe{SubHeader: frame.SubHeader{Pred: frame.PredVerbatim}, NSamples: n, Samples: make([]int32, n)}
			for i := range n {
				sub.Samples[i] = s.Samples[t0+i][c]
			}
			fr.Subframes = append(fr.Subframes, sub)
		}
		if err := enc.WriteFrame(fr); err != nil {
			tb.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		tb.Fatal(err)
	}
}
