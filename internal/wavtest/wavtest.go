// Package wavtest writes WAV files for tests that need fixtures: integer
// PCM of 8 to 32 bits and IEEE float of 32 or 64 bits, in the plain or the
// WAVE_FORMAT_EXTENSIBLE layout, with extra chunks where a test wants them.
package wavtest

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
)

// Chunk is a RIFF chunk written besides "fmt " and "data".
type Chunk struct {
	ID   string // four characters
	Data []byte
}

// Spec describes a WAV file.
type Spec struct {
	Rate, Channels, Bits int
	Float, Extensible    bool
	// Samples[f][c] is the value stored for channel c in frame f: an
	// integer for PCM (unsigned for 8 bits), a float otherwise.
	Samples [][]float64
	// Before and After are chunks written before and after "data".
	Before, After []Chunk
}

// Encode returns the bytes of the WAV file s describes.
func Encode(s Spec) []byte {
	le := binary.LittleEndian
	bytesPer := s.Bits / 8
	var data []byte
	for _, fr := range s.Samples {
		for _, v := range fr {
			switch {
			case s.Float && s.Bits == 32:
				data = le.AppendUint32(data, math.Float32bits(float32(v)))
			case s.Float:
				data = le.AppendUint64(data, math.Float64bits(v))
			case bytesPer == 1:
				data = append(data, byte(int(v)))
			case bytesPer == 2:
				data = le.AppendUint16(data, uint16(int16(v)))
			case bytesPer == 3:
				u := uint32(int32(v))
				data = append(data, byte(u), byte(u>>8), byte(u>>16))
			default:
				data = le.AppendUint32(data, uint32(int32(v)))
			}
		}
	}
	code := uint16(1) // PCM
	if s.Float {
		code = 3
	}
	tag := code
	if s.Extensible {
		tag = 0xFFFE
	}
	var fmtc []byte
	fmtc = le.AppendUint16(fmtc, tag)
	fmtc = le.AppendUint16(fmtc, uint16(s.Channels))
	fmtc = le.AppendUint32(fmtc, uint32(s.Rate))
	fmtc = le.AppendUint32(fmtc, uint32(s.Rate*s.Channels*bytesPer))
	fmtc = le.AppendUint16(fmtc, uint16(s.Channels*bytesPer))
	fmtc = le.AppendUint16(fmtc, uint16(s.Bits))
	if s.Extensible {
		fmtc = le.AppendUint16(fmtc, 22)
		fmtc = le.AppendUint16(fmtc, uint16(s.Bits))
		fmtc = le.AppendUint32(fmtc, 0)
		fmtc = le.AppendUint16(fmtc, code)
		fmtc = append(fmtc, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71)
	}
	chunks := []Chunk{{"fmt ", fmtc}}
	chunks = append(chunks, s.Before...)
	chunks = append(chunks, Chunk{"data", data})
	chunks = append(chunks, s.After...)
	body := []byte("WAVE")
	for _, c := range chunks {
		body = append(body, c.ID...)
		body = le.AppendUint32(body, uint32(len(c.Data)))
		body = append(body, c.Data...)
		if len(c.Data)%2 == 1 {
			body = append(body, 0)
		}
	}
	out := []byte("RIFF")
	out = le.AppendUint32(out, uint32(len(body)))
	return append(out, body...)
}

// WriteFile writes the WAV file s describes to path, failing tb on error.
func WriteFile(tb testing.TB, path string, s Spec) {
	tb.Helper()
	if err := os.WriteFile(path, Encode(s), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// Mono returns the samples of a one-channel Spec from x.
func Mono(x []float64) [][]float64 {
	out := make([][]float64, len(x))
	for i, v := range x {
		out[i] = []float64{v}
	}
	return out
}
