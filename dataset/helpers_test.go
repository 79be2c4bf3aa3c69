package dataset

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// This file holds a minimal MAT v5 writer for fixtures (package matfile
// has a complete one in its tests) and other test helpers.

// matVar is a variable for writeMAT.
type matVar struct {
	name string
	dims []int
	vals []float64 // column-major

	// store is the storage type: 9 (miDOUBLE, the default) or 2
	// (miUINT8, as MATLAB compresses small integers).
	store uint32

	// cell makes a cell array of empty doubles instead of a numeric one,
	// or, if cells is not nil, of the arrays of cells (whose names are
	// not written).
	cell  bool
	cells []matVar
}

// matElem encodes a little-endian data element with its padding.
func matElem(typ uint32, data []byte) []byte {
	le := binary.LittleEndian
	out := le.AppendUint32(le.AppendUint32(nil, typ), uint32(len(data)))
	out = append(out, data...)
	return append(out, make([]byte, (8-len(data)%8)%8)...)
}

// matMatrix encodes an miMATRIX element of class double (6) or cell (1).
func matMatrix(v matVar) []byte {
	le := binary.LittleEndian
	class := uint32(6)
	if v.cell {
		class = 1
	}
	var dims []byte
	for _, d := range v.dims {
		dims = le.AppendUint32(dims, uint32(int32(d)))
	}
	b := matElem(6, le.AppendUint32(le.AppendUint32(nil, class), 0))
	b = append(b, matElem(5, dims)...)
	b = append(b, matElem(1, []byte(v.name))...)
	if v.cell {
		for k := range v.dims[0] * v.dims[1] {
			c := matVar{dims: []int{0, 0}}
			if v.cells != nil {
				c = v.cells[k]
				c.name = ""
			}
			b = append(b, matMatrix(c)...)
		}
		return matElem(14, b)
	}
	var data []byte
	typ := v.store
	if typ == 0 {
		typ = 9
	}
	for _, x := range v.vals {
		if typ == 2 {
			data = append(data, byte(x))
		} else {
			data = le.AppendUint64(data, math.Float64bits(x))
		}
	}
	b = append(b, matElem(typ, data)...)
	return matElem(14, b)
}

// writeMAT writes a little-endian MAT-file holding vars to dir/name and
// returns its path. With compress every variable is zlib-compressed.
func writeMAT(t *testing.T, dir, name string, compress bool, vars ...matVar) string {
	t.Helper()
	text := "MATLAB 5.0 MAT-file, dataset tests"
	b := []byte(text + strings.Repeat(" ", 116-len(text)) + "        \x00\x01IM")
	for _, v := range vars {
		el := matMatrix(v)
		if compress {
			var z bytes.Buffer
			zw := zlib.NewWriter(&z)
			zw.Write(el)
			zw.Close()
			el = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 15), uint32(z.Len()))
			el = append(el, z.Bytes()...)
		}
		b = append(b, el...)
	}
	return writeFile(t, dir, name, b)
}

// writeFile writes b to dir/name and returns the path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// colMajor returns the column-major order of a row-major r×c matrix.
func colMajor(r, c int, rowMajor []float64) []float64 {
	out := make([]float64, len(rowMajor))
	for i := range r {
		for j := range c {
			out[j*r+i] = rowMajor[i*c+j]
		}
	}
	return out
}

// dense returns the data of m in row-major order.
func dense(m *mat.Dense) []float64 {
	return mat.DenseCopyOf(m).RawMatrix().Data
}

// errContains fails the test unless err is non-nil and contains want.
func errContains(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got error %v, want one containing %q", err, want)
	}
}

// newDense returns an r×c matrix of the row-major values.
func newDense(r, c int, vals ...float64) *mat.Dense {
	return mat.NewDense(r, c, vals)
}
