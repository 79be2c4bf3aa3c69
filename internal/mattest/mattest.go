// Package mattest writes small MATLAB level-5 MAT-files for tests that need
// fixtures: uncompressed, little-endian double arrays, the layout of the
// CWRU bearing data files.
package mattest

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
)

// Var is a double array: Dims (at least two) and the values in MATLAB's
// column-major order.
type Var struct {
	Name string
	Dims []int
	Data []float64
}

// Column returns an n×1 variable holding x.
func Column(name string, x []float64) Var { return Var{Name: name, Dims: []int{len(x), 1}, Data: x} }

// Encode returns the bytes of a MAT-file holding vars.
func Encode(vars ...Var) []byte {
	h := make([]byte, 128)
	copy(h, "MATLAB 5.0 MAT-file, Platform: GLNXA64, Created by: dadil tests")
	for i := 64; i < 116; i++ {
		h[i] = ' '
	}
	binary.LittleEndian.PutUint16(h[124:], 0x0100)
	copy(h[126:], "IM")
	out := h
	for _, v := range vars {
		var body []byte
		flags := make([]byte, 8)
		flags[0] = 6 // mxDOUBLE_CLASS
		body = append(body, elem(6, flags)...)
		dims := make([]byte, 4*len(v.Dims))
		for i, d := range v.Dims {
			binary.LittleEndian.PutUint32(dims[4*i:], uint32(d))
		}
		body = append(body, elem(5, dims)...)
		body = append(body, elem(1, []byte(v.Name))...)
		data := make([]byte, 8*len(v.Data))
		for i, x := range v.Data {
			binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(x))
		}
		body = append(body, elem(9, data)...)
		out = append(out, elem(14, body)...)
	}
	return out
}

// elem encodes a data element with an 8-byte tag, padded to 8 bytes.
func elem(typ uint32, data []byte) []byte {
	tag := make([]byte, 8, 8+len(data)+7)
	binary.LittleEndian.PutUint32(tag, typ)
	binary.LittleEndian.PutUint32(tag[4:], uint32(len(data)))
	tag = append(tag, data...)
	for len(tag)%8 != 0 {
		tag = append(tag, 0)
	}
	return tag
}

// WriteFile writes a MAT-file holding vars to path, failing tb on error.
func WriteFile(tb testing.TB, path string, vars ...Var) {
	tb.Helper()
	if err := os.WriteFile(path, Encode(vars...), 0o644); err != nil {
		tb.Fatal(err)
	}
}
