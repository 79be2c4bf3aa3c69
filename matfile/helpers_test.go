package matfile

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

// This file holds a small MAT v5 writer used to build test fixtures.

// testVar describes a variable for the test writer. Numeric variables
// give re (and im) in column-major order; other classes give the raw
// content after the name with rest.
type testVar struct {
	name  string
	class uint32 // mx class
	dims  []int

	re, im []float64 // column-major values of numeric classes

	// store is the storage type of the data; 0 means the natural type
	// of the class, or with downcast the smallest integer type that
	// holds every value exactly, as MATLAB chooses.
	store    uint32
	downcast bool

	logical, global bool

	// rest is appended after the name for non-numeric classes.
	rest []byte
}

// byteOrder is binary.LittleEndian or binary.BigEndian.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// layout says how the writer lays out a file.
type layout struct {
	order    byteOrder // nil means little-endian
	compress bool      // wrap each variable in miCOMPRESSED
	noSmall  bool      // never use the small data element format
	text     string    // header text; "" means a default
}

// enc encodes data elements in a byte order.
type enc struct {
	bo      byteOrder
	noSmall bool
}

// elem encodes one data element: its tag, data and padding. Elements of 1
// to 4 bytes use the small data element format unless e.noSmall.
func (e enc) elem(typ uint32, data []byte) []byte {
	var out []byte
	if len(data) >= 1 && len(data) <= 4 && !e.noSmall {
		out = e.bo.AppendUint32(out, uint32(len(data))<<16|typ)
		out = append(out, data...)
		return append(out, make([]byte, 4-len(data))...)
	}
	out = e.bo.AppendUint32(out, typ)
	out = e.bo.AppendUint32(out, uint32(len(data)))
	out = append(out, data...)
	return append(out, make([]byte, (8-len(data)%8)%8)...)
}

// naturalType returns the storage type MATLAB uses for class c without
// downcasting.
func naturalType(c uint32) uint32 {
	switch c {
	case mxDOUBLE:
		return miDOUBLE
	case mxSINGLE:
		return miSINGLE
	case mxINT8:
		return miINT8
	case mxUINT8:
		return miUINT8
	case mxINT16:
		return miINT16
	case mxUINT16:
		return miUINT16
	case mxINT32:
		return miINT32
	case mxUINT32:
		return miUINT32
	case mxINT64:
		return miINT64
	case mxUINT64:
		return miUINT64
	}
	return 0
}

// smallestType returns the smallest integer storage type that holds every
// value of vals exactly, or 0 if there is none.
func smallestType(vals ...[]float64) uint32 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, vs := range vals {
		for _, v := range vs {
			if v != math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v) {
				return 0
			}
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	switch {
	case lo >= 0 && hi <= math.MaxUint8:
		return miUINT8
	case lo >= math.MinInt8 && hi <= math.MaxInt8:
		return miINT8
	case lo >= 0 && hi <= math.MaxUint16:
		return miUINT16
	case lo >= math.MinInt16 && hi <= math.MaxInt16:
		return miINT16
	case lo >= 0 && hi <= math.MaxUint32:
		return miUINT32
	case lo >= math.MinInt32 && hi <= math.MaxInt32:
		return miINT32
	}
	return 0
}

// encodeValues encodes vals as storage type typ.
func (e enc) encodeValues(typ uint32, vals []float64) []byte {
	var out []byte
	for _, v := range vals {
		switch typ {
		case miINT8:
			out = append(out, byte(int8(v)))
		case miUINT8:
			out = append(out, byte(v))
		case miINT16:
			out = e.bo.AppendUint16(out, uint16(int16(v)))
		case miUINT16:
			out = e.bo.AppendUint16(out, uint16(v))
		case miINT32:
			out = e.bo.AppendUint32(out, uint32(int32(v)))
		case miUINT32:
			out = e.bo.AppendUint32(out, uint32(v))
		case miSINGLE:
			out = e.bo.AppendUint32(out, math.Float32bits(float32(v)))
		case miDOUBLE:
			out = e.bo.AppendUint64(out, math.Float64bits(v))
		case miINT64:
			out = e.bo.AppendUint64(out, uint64(int64(v)))
		case miUINT64:
			out = e.bo.AppendUint64(out, uint64(v))
		default:
			panic("encodeValues: bad type")
		}
	}
	return out
}

// flags encodes the array flags sub-element.
func (e enc) flags(class uint32, complex, global, logical bool) []byte {
	f := class
	if complex {
		f |= flagComplex
	}
	if global {
		f |= flagGlobal
	}
	if logical {
		f |= flagLogical
	}
	var d []byte
	d = e.bo.AppendUint32(d, f)
	d = e.bo.AppendUint32(d, 0)
	return e.elem(miUINT32, d)
}

// dimsElem encodes the dimensions sub-element.
func (e enc) dimsElem(dims []int) []byte {
	var d []byte
	for _, x := range dims {
		d = e.bo.AppendUint32(d, uint32(int32(x)))
	}
	return e.elem(miINT32, d)
}

// matrixContent encodes the content of the miMATRIX element of v.
func (e enc) matrixContent(v testVar) []byte {
	var b []byte
	b = append(b, e.flags(v.class, v.im != nil, v.global, v.logical)...)
	b = append(b, e.dimsElem(v.dims)...)
	b = append(b, e.elem(miINT8, []byte(v.name))...)
	if naturalType(v.class) == 0 {
		return append(b, v.rest...)
	}
	typ := v.store
	if typ == 0 && v.downcast {
		typ = smallestType(v.re, v.im)
	}
	if typ == 0 {
		typ = naturalType(v.class)
	}
	b = append(b, e.elem(typ, e.encodeValues(typ, v.re))...)
	if v.im != nil {
		b = append(b, e.elem(typ, e.encodeValues(typ, v.im))...)
	}
	return b
}

// matrixElem encodes v as an miMATRIX element.
func (e enc) matrixElem(v testVar) []byte {
	return e.elem(miMATRIX, e.matrixContent(v))
}

// compressElem wraps element el in an miCOMPRESSED element, unpadded as
// MATLAB writes it.
func (e enc) compressElem(el []byte) []byte {
	return e.zlibElem(zlibBytes(el))
}

// zlibElem returns an miCOMPRESSED element holding the zlib stream z.
func (e enc) zlibElem(z []byte) []byte {
	var out []byte
	out = e.bo.AppendUint32(out, miCOMPRESSED)
	out = e.bo.AppendUint32(out, uint32(len(z)))
	return append(out, z...)
}

// zlibBytes compresses b.
func zlibBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// header returns a 128-byte file header.
func header(bo byteOrder, text string) []byte {
	if text == "" {
		text = "MATLAB 5.0 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 00:00:00 2024 by matfile tests"
	}
	h := []byte(text + strings.Repeat(" ", headerTextLen-len(text)))
	h = append(h, "        "...) // subsystem data offset: none
	h = bo.AppendUint16(h, 0x0100)
	return bo.AppendUint16(h, 'M'<<8|'I')
}

// buildMAT returns a MAT-file holding vars.
func buildMAT(l layout, vars ...testVar) []byte {
	if l.order == nil {
		l.order = binary.LittleEndian
	}
	e := enc{bo: l.order, noSmall: l.noSmall}
	b := header(l.order, l.text)
	for _, v := range vars {
		el := e.matrixElem(v)
		if l.compress {
			el = e.compressElem(el)
		}
		b = append(b, el...)
	}
	return b
}

// charContent returns the content after the name of a char array holding
// s, stored as miUTF16 as MATLAB does for non-ASCII text.
func (e enc) charContent(s string) []byte {
	var d []byte
	for _, r := range s {
		d = e.bo.AppendUint16(d, uint16(r))
	}
	return e.elem(miUTF16, d)
}

// charVar returns a 1×n char variable.
func (e enc) charVar(name, s string) testVar {
	return testVar{name: name, class: mxCHAR, dims: []int{1, len([]rune(s))}, rest: e.charContent(s)}
}

// cellOfChar returns an n×1 cell variable of char rows, like imgNames in
// the Caltech-Office *_imgs.mat files.
func (e enc) cellOfChar(name string, strs ...string) testVar {
	var cells [][]byte
	for _, s := range strs {
		cells = append(cells, e.matrixElem(e.charVar("", s)))
	}
	return cellVar(name, []int{len(strs), 1}, cells...)
}

// cellVar returns a cell variable of the given dimensions whose cells, in
// column-major order, are the given elements, such as matrixElem of an
// unnamed testVar, as MATLAB writes them.
func cellVar(name string, dims []int, cells ...[]byte) testVar {
	return testVar{name: name, class: mxCELL, dims: dims, rest: slices.Concat(cells...)}
}

// structVar returns a 1×1 struct variable with a double field "a" and a
// char field "b".
func (e enc) structVar(name string) testVar {
	var rest []byte
	var fl []byte
	fl = e.bo.AppendUint32(fl, 32)
	rest = append(rest, e.elem(miINT32, fl)...)
	names := make([]byte, 64)
	copy(names, "a")
	copy(names[32:], "b")
	rest = append(rest, e.elem(miINT8, names)...)
	rest = append(rest, e.matrixElem(testVar{class: mxDOUBLE, dims: []int{1, 1}, re: []float64{1}})...)
	rest = append(rest, e.matrixElem(e.charVar("", "x"))...)
	return testVar{name: name, class: mxSTRUCT, dims: []int{1, 1}, rest: rest}
}

// opaqueElem returns an miMATRIX element of class opaque, which has no
// dimensions sub-element: flags, name, type system, class name, data.
func (e enc) opaqueElem(name string) []byte {
	var b []byte
	b = append(b, e.flags(mxOPAQUE, false, false, false)...)
	b = append(b, e.elem(miINT8, []byte(name))...)
	b = append(b, e.elem(miINT8, []byte("MCOS"))...)
	b = append(b, e.elem(miINT8, []byte("string"))...)
	b = append(b, e.matrixElem(testVar{class: mxUINT32, dims: []int{6, 1}, re: []float64{0xdd000000, 2, 1, 1, 1, 1}})...)
	return e.elem(miMATRIX, b)
}

// numericClasses lists the numeric classes with a value range each class
// can hold exactly.
var numericClasses = []struct {
	class    uint32
	name     string
	lo, hi   float64
	fraction bool // whether the class holds fractions
}{
	{mxDOUBLE, "double", -1e300, 1e300, true},
	{mxSINGLE, "single", -1e30, 1e30, true},
	{mxINT8, "int8", math.MinInt8, math.MaxInt8, false},
	{mxUINT8, "uint8", 0, math.MaxUint8, false},
	{mxINT16, "int16", math.MinInt16, math.MaxInt16, false},
	{mxUINT16, "uint16", 0, math.MaxUint16, false},
	{mxINT32, "int32", math.MinInt32, math.MaxInt32, false},
	{mxUINT32, "uint32", 0, math.MaxUint32, false},
	{mxINT64, "int64", -(1 << 53), 1 << 53, false},
	{mxUINT64, "uint64", 0, 1 << 53, false},
}

// sampleValues returns n column-major values in [lo, hi], including both
// ends, that a class with the given range holds exactly, rounded to
// float32 if single.
func sampleValues(n int, lo, hi float64, fraction, single bool) []float64 {
	vals := make([]float64, n)
	for i := range vals {
		switch i % 4 {
		case 0:
			vals[i] = lo
		case 1:
			vals[i] = hi
		case 2:
			vals[i] = float64(i)
		default:
			vals[i] = max(lo, -float64(i))
		}
		if fraction && i%5 == 3 {
			vals[i] = float64(i) + 0.5
		}
	}
	if single {
		for i := range vals {
			vals[i] = float64(float32(vals[i]))
		}
	}
	return vals
}

// rowMajor returns the row-major order of the column-major r×c values.
func rowMajor(r, c int, colMajor []float64) []float64 {
	out := make([]float64, len(colMajor))
	for j := range c {
		for i := range r {
			out[i*c+j] = colMajor[j*r+i]
		}
	}
	return out
}

// mustRead reads b or fails the test.
func mustRead(t *testing.T, b []byte) *File {
	t.Helper()
	f, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return f
}

// varNames returns the names of f's variables.
func varNames(f *File) []string {
	var s []string
	for _, v := range f.Vars {
		s = append(s, v.Name)
	}
	return s
}

// sameFloats reports whether a and b hold the same values, NaN equal to
// NaN.
func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool {
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	})
}
