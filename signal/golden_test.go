package signal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/golden"
	"github.com/dadil/dadil/internal/wavtest"
)

// TestDecodeGolden pins the samples, names and errors of the WAV "data"
// chunk decoder and the CSV reader on small generated inputs (every sample
// format, sized and unsized chunks, channel selectors, headers and bad
// rows) to testdata/decode.golden.
func TestDecodeGolden(t *testing.T) {
	var b strings.Builder
	stored := [][]float64{{-1000, 2000}, {3000, -4000}, {5, 7}}
	le := binary.LittleEndian
	for _, f := range []struct {
		bits  int
		float bool
	}{{8, false}, {16, false}, {24, false}, {32, false}, {32, true}, {64, true}} {
		s := stored
		if f.bits == 8 {
			s = [][]float64{{0, 255}, {100, 200}, {128, 3}}
		}
		good := wavtest.Encode(wavtest.Spec{Rate: 100, Channels: 2, Bits: f.bits, Float: f.float, Samples: s})
		// The data chunk's size is at byte 40, its samples from 44.
		unsized := bytes.Clone(good)
		le.PutUint32(unsized[40:], math.MaxUint32)
		for _, in := range []struct {
			name string
			b    []byte
		}{
			{"sized", good},
			{"unsized", unsized},
			{"unsized, extra byte", append(bytes.Clone(unsized), 1)},
			{"truncated", good[:len(good)-1]},
			{"header only", good[:44]},
		} {
			for _, ch := range []int{OnlyChannel, 1, 2, MeanChannel, 3} {
				x, info, err := DecodeWAV(bytes.NewReader(in.b), ch)
				fmt.Fprintf(&b, "wav %d-bit float %v, %s, channel %d: %v %+v %v\n", f.bits, f.float, in.name, ch, x, info, err)
			}
		}
	}
	nan := wavtest.Encode(wavtest.Spec{Rate: 100, Channels: 1, Bits: 64, Float: true, Samples: [][]float64{{1}, {math.Inf(-1)}}})
	x, info, err := DecodeWAV(bytes.NewReader(nan), 1)
	fmt.Fprintf(&b, "wav -Inf: %v %+v %v\n", x, info, err)
	for _, text := range []string{
		"", "1\n2\n", "\xef\xbb\xbfa,b\n1,2\n3,4\n", "a,b\n1,2\n3,4\n", "1,2\n3,4\n", "a,b\n",
		"a,b\n1,2\n3\n", "a,b\n1,x\n", "a\n1\nNaN\n", "a,\"b\n1,2\n", "1;2\n3;4\n",
	} {
		for _, sel := range []struct {
			variable string
			ch       int
		}{{"", OnlyChannel}, {"", 1}, {"", 2}, {"", MeanChannel}, {"", 5}, {"b", OnlyChannel}, {"c", OnlyChannel}, {"b", 1}} {
			rec, err := decodeCSV(strings.NewReader(text), sel.variable, sel.ch)
			fmt.Fprintf(&b, "csv %q, %q, channel %d: ", text, sel.variable, sel.ch)
			if err != nil {
				fmt.Fprintf(&b, "%v\n", err)
				continue
			}
			fmt.Fprintf(&b, "%q %v\n", rec.Signal, rec.Samples)
		}
	}
	golden.Check(t, "decode.golden", b.String())
}
