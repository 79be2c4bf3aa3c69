package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// dictText returns a header dict in numpy's layout.
func dictText(descr string, fortran bool, shape string) string {
	f := "False"
	if fortran {
		f = "True"
	}
	return "{'descr': '" + descr + "', 'fortran_order': " + f + ", 'shape': " + shape + ", }"
}

// padHeader pads dict with spaces and a final newline so that the data of
// a file of the given major version starts at a multiple of 64 bytes.
func padHeader(major byte, dict string) string {
	prefix := preambleLen + headerLenSize(major)
	n := len(dict) + 1
	pad := (headerAlign - (prefix+n)%headerAlign) % headerAlign
	return dict + strings.Repeat(" ", pad) + "\n"
}

// rawNPY assembles a .npy file from a version, the exact header text and
// the data bytes.
func rawNPY(major, minor byte, header string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	b.WriteByte(major)
	b.WriteByte(minor)
	if major == 1 {
		binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint32(len(header)))
	}
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

// makeNPY builds a version 1.0 file with a numpy-style header.
func makeNPY(descr string, fortran bool, shape string, data []byte) []byte {
	return rawNPY(1, 0, padHeader(1, dictText(descr, fortran, shape)), data)
}

// encodeRaw encodes each value's low size bytes in the byte order given by
// descr's first character ('>' is big-endian, anything else little).
func encodeRaw(descr string, size int, raw []uint64) []byte {
	var bo binary.AppendByteOrder = binary.LittleEndian
	if strings.HasPrefix(descr, ">") {
		bo = binary.BigEndian
	}
	out := make([]byte, 0, size*len(raw))
	for _, v := range raw {
		switch size {
		case 1:
			out = append(out, byte(v))
		case 2:
			out = bo.AppendUint16(out, uint16(v))
		case 4:
			out = bo.AppendUint32(out, uint32(v))
		case 8:
			out = bo.AppendUint64(out, v)
		}
	}
	return out
}

// f64s encodes float64 values as '<f8'.
func f64s(vals ...float64) []byte {
	raw := make([]uint64, len(vals))
	for i, v := range vals {
		raw[i] = math.Float64bits(v)
	}
	return encodeRaw("<f8", 8, raw)
}

// sameFloats reports whether a and b are equal element by element, treating
// NaNs as equal to each other and distinguishing -0 from +0.
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.IsNaN(a[i]) && math.IsNaN(b[i]) {
			continue
		}
		if a[i] != b[i] || math.Signbit(a[i]) != math.Signbit(b[i]) {
			return false
		}
	}
	return true
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// mustRead reads b and fails the test on error.
func mustRead(t *testing.T, b []byte) *Array {
	t.Helper()
	a, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return a
}

// readNoPanic calls Read on b through a reader of unknown size and through
// a bytes.Reader (known size), failing the test on panic, and returns the
// error of the unknown-size read and of the known-size read.
func readBoth(t *testing.T, b []byte) (unknown, known error) {
	t.Helper()
	_, unknown = Read(onlyReader{bytes.NewReader(b)})
	_, known = Read(bytes.NewReader(b))
	return unknown, known
}

// onlyReader hides every method but Read, so the size is unknown.
type onlyReader struct{ r *bytes.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
