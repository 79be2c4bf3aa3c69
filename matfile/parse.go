package matfile

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Data types of data elements (the miXXX constants of the format).
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15
	miUTF8       = 16
	miUTF16      = 17
	miUTF32      = 18
)

// Array classes (the mxXXX_CLASS constants of the format).
const (
	mxCELL     = 1
	mxSTRUCT   = 2
	mxOBJECT   = 3
	mxCHAR     = 4
	mxSPARSE   = 5
	mxDOUBLE   = 6
	mxSINGLE   = 7
	mxINT8     = 8
	mxUINT8    = 9
	mxINT16    = 10
	mxUINT16   = 11
	mxINT32    = 12
	mxUINT32   = 13
	mxINT64    = 14
	mxUINT64   = 15
	mxFUNCTION = 16
	mxOPAQUE   = 17
)

// Bits of the array flags word.
const (
	flagComplex = 0x0800
	flagGlobal  = 0x0400
	flagLogical = 0x0200
)

const (
	// headerLen is the length of the file header.
	headerLen = 128

	// headerTextLen is the length of its descriptive text.
	headerTextLen = 116

	// tagLen is the length of a data element tag.
	tagLen = 8

	// maxElems bounds the number of elements of an array. It is far
	// above anything a 32-bit byte count can hold, and keeps products of
	// dimensions far from overflow.
	maxElems = 1 << 40
)

// hdf5Magic is the signature at the start of an HDF5 file, or of its
// superblock after a 512-byte user block as in MATLAB v7.3 files.
const hdf5Magic = "\x89HDF\r\n\x1a\n"

// errV73 is returned for MATLAB v7.3 files.
var errV73 = errors.New("MATLAB v7.3 (HDF5) file: save it with -v7 (or -v6) to read it with this package")

// typeNames holds the names of the data types, for messages.
var typeNames = [...]string{
	miINT8: "miINT8", miUINT8: "miUINT8", miINT16: "miINT16", miUINT16: "miUINT16",
	miINT32: "miINT32", miUINT32: "miUINT32", miSINGLE: "miSINGLE", miDOUBLE: "miDOUBLE",
	miINT64: "miINT64", miUINT64: "miUINT64", miMATRIX: "miMATRIX", miCOMPRESSED: "miCOMPRESSED",
	miUTF8: "miUTF8", miUTF16: "miUTF16", miUTF32: "miUTF32",
}

// typeName returns the name of data type t.
func typeName(t uint32) string {
	if t < uint32(len(typeNames)) && typeNames[t] != "" {
		return typeNames[t]
	}
	return "unknown type " + strconv.FormatUint(uint64(t), 10)
}

// numericSize returns the size in bytes of one value of numeric storage
// type t, or 0 if t is not a numeric type.
func numericSize(t uint32) int {
	switch t {
	case miINT8, miUINT8:
		return 1
	case miINT16, miUINT16:
		return 2
	case miINT32, miUINT32, miSINGLE:
		return 4
	case miDOUBLE, miINT64, miUINT64:
		return 8
	}
	return 0
}

// classNames holds the names of the classes, as MATLAB's class function
// reports them where it applies.
var classNames = [...]string{
	mxCELL: "cell", mxSTRUCT: "struct", mxOBJECT: "object", mxCHAR: "char",
	mxSPARSE: "sparse", mxDOUBLE: "double", mxSINGLE: "single",
	mxINT8: "int8", mxUINT8: "uint8", mxINT16: "int16", mxUINT16: "uint16",
	mxINT32: "int32", mxUINT32: "uint32", mxINT64: "int64", mxUINT64: "uint64",
	mxFUNCTION: "function_handle", mxOPAQUE: "opaque",
}

// className returns the name of class c.
func className(c uint32) string {
	if c < uint32(len(classNames)) && classNames[c] != "" {
		return classNames[c]
	}
	return "unknown class " + strconv.FormatUint(uint64(c), 10)
}

// isNumericClass reports whether c is one of the numeric classes.
func isNumericClass(c uint32) bool {
	return c >= mxDOUBLE && c <= mxUINT64
}

// isV73Text reports whether the header text of head says the file is a
// v7.3 file: "MATLAB 7.3 MAT-file, ...".
func isV73Text(head []byte) bool {
	return bytes.HasPrefix(head, []byte("MATLAB 7.3"))
}

// parse parses a whole MAT-file.
func parse(b []byte) (*File, error) {
	order, err := parseHeader(b)
	if err != nil {
		return nil, err
	}
	f := &File{Header: strings.TrimRight(string(b[:headerTextLen]), " \x00")}
	p := parser{order: order}
	off := headerLen
	for off < len(b) {
		if len(b)-off < tagLen && allZero(b[off:]) {
			// Padding after the last element.
			break
		}
		e, err := p.element(b, off, -1)
		if err != nil {
			return nil, err
		}
		var v *Var
		switch e.typ {
		case miMATRIX:
			v, err = p.matrix(e.data, off+tagLen, -1)
		case miCOMPRESSED:
			v, err = p.compressed(e.data, off)
		default:
			err = fmt.Errorf("element at byte offset %d has type %s; the top level of a MAT-file holds only miMATRIX and miCOMPRESSED elements", off, typeName(e.typ))
		}
		if err != nil {
			return nil, err
		}
		if v != nil && v.Name != "" {
			f.Vars = append(f.Vars, v)
		}
		off = e.next
	}
	return f, nil
}

// parseHeader checks the file header and returns the byte order of the
// file.
func parseHeader(b []byte) (binary.ByteOrder, error) {
	if len(b) >= len(hdf5Magic) && string(b[:len(hdf5Magic)]) == hdf5Magic {
		return nil, errV73
	}
	if len(b) < headerLen {
		return nil, fmt.Errorf("not a MATLAB level-5 MAT-file: %d bytes, shorter than the 128-byte header", len(b))
	}
	if isV73Text(b) {
		return nil, errV73
	}
	// An HDF5 superblock after a 512-byte user block also marks a v7.3
	// file; it is only looked for when the header is not a level-5 one,
	// so that level-5 data that happens to hold the signature is read.
	hdf5 := len(b) >= 512+len(hdf5Magic) && string(b[512:512+len(hdf5Magic)]) == hdf5Magic
	var order binary.ByteOrder
	switch string(b[126:128]) {
	case "IM":
		order = binary.LittleEndian
	case "MI":
		order = binary.BigEndian
	default:
		if hdf5 {
			return nil, errV73
		}
		hint := ""
		if bytes.IndexByte(b[:4], 0) >= 0 {
			hint = "; it may be a level-4 MAT-file: save it with -v7"
		}
		return nil, fmt.Errorf("not a MATLAB level-5 MAT-file: no endian indicator (\"IM\" or \"MI\") at byte offset 126, found %q%s", b[126:128], hint)
	}
	switch v := order.Uint16(b[124:]); {
	case v == 0x0100:
	case v == 0x0200 || hdf5:
		return nil, errV73
	default:
		return nil, fmt.Errorf("unsupported MAT-file version 0x%04x in the header (want 0x0100)", v)
	}
	return order, nil
}

// allZero reports whether every byte of b is zero.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// parser parses data elements of one file.
type parser struct {
	order binary.ByteOrder
}

// element is one data element.
type element struct {
	typ  uint32
	data []byte // exactly the declared bytes, without padding
	next int    // offset of the next element
}

// where describes byte offset off for messages. comp is the offset of the
// enclosing compressed element in the file, or -1 if off is a file offset.
func where(off, comp int) string {
	if comp < 0 {
		return "byte offset " + strconv.Itoa(off)
	}
	return fmt.Sprintf("byte offset %d of the data decompressed from the element at byte offset %d", off, comp)
}

// element reads the data element that starts at b[off:]; see elementAt.
func (p *parser) element(b []byte, off, comp int) (element, error) {
	return p.elementAt(b, off, 0, comp)
}

// elementAt reads the data element that starts at b[off:], which is at
// offset base+off for messages. The element, but not necessarily its
// padding, must fit in b.
func (p *parser) elementAt(b []byte, off, base, comp int) (element, error) {
	rem := len(b) - off
	if rem < tagLen {
		return element{}, fmt.Errorf("truncated: element at %s needs an 8-byte tag, %d bytes remain", where(base+off, comp), rem)
	}
	w := p.order.Uint32(b[off:])
	if n := int(w >> 16); n != 0 {
		// Small data element: the byte count is in the upper half of
		// the type field and the data in the second half of the tag.
		if n > 4 {
			return element{}, fmt.Errorf("element at %s: small data element declares %d bytes, at most 4 fit", where(base+off, comp), n)
		}
		return element{typ: w & 0xffff, data: b[off+4 : off+4+n], next: off + tagLen}, nil
	}
	n := p.order.Uint32(b[off+4:])
	if uint64(n) > uint64(rem-tagLen) {
		return element{}, fmt.Errorf("truncated: element at %s declares %d bytes, %d remain", where(base+off, comp), n, rem-tagLen)
	}
	e := element{typ: w, data: b[off+tagLen : off+tagLen+int(n)], next: off + tagLen + int(n)}
	if w != miCOMPRESSED {
		// Other elements are padded to a multiple of 8 bytes; MATLAB
		// does not pad compressed ones. Missing padding at the end of
		// the input is tolerated.
		e.next = min(e.next+(8-int(n)%8)%8, len(b))
	}
	return e, nil
}

// compressed decompresses the miCOMPRESSED element at file offset off,
// whose compressed data is data, and parses the miMATRIX element it holds.
func (p *parser) compressed(data []byte, off int) (*Var, error) {
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("compressed element at byte offset %d: corrupt zlib stream: %v", off, err)
	}
	var tag [tagLen]byte
	if n, err := io.ReadFull(zr, tag[:]); err != nil {
		return nil, fmt.Errorf("compressed element at byte offset %d: %s", off, zlibError(err, n, tagLen))
	}
	w := p.order.Uint32(tag[:])
	typ, size := w, int64(p.order.Uint32(tag[4:]))
	if w>>16 != 0 {
		typ, size = w&0xffff, 0
	}
	if typ != miMATRIX {
		what := "an miCOMPRESSED element"
		if typ != miCOMPRESSED {
			what = "an element of type " + typeName(typ)
		}
		return nil, fmt.Errorf("compressed element at byte offset %d holds %s, want miMATRIX", off, what)
	}
	if uint64(size) > uint64(math.MaxInt) {
		return nil, fmt.Errorf("compressed element at byte offset %d: the element declares %d bytes, too many for this platform", off, size)
	}
	body, err := readN(zr, int(size))
	if err != nil {
		return nil, fmt.Errorf("compressed element at byte offset %d: %s", off, zlibError(err, len(body), int(size)))
	}
	// Read to the end of the stream, which checks its checksum. MATLAB
	// writes nothing after the element; anything else is ignored, up to
	// a limit.
	if _, err := io.Copy(io.Discard, io.LimitReader(zr, 1<<20)); err != nil {
		return nil, fmt.Errorf("compressed element at byte offset %d: corrupt zlib stream after the element: %v", off, err)
	}
	return p.matrix(body, tagLen, off)
}

// zlibError describes err, returned after n of the want bytes of a
// compressed element were read.
func zlibError(err error, n, want int) string {
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return fmt.Sprintf("truncated: the zlib stream holds %d bytes, the element needs %d", n, want)
	}
	return "corrupt zlib stream: " + err.Error()
}

// readChunk is the initial buffer size of readN.
const readChunk = 1 << 16

// readN reads exactly n bytes from r. It allocates memory as data
// arrives, doubling the buffer, so a stream much shorter than n costs
// little. At EOF before n bytes it returns io.ErrUnexpectedEOF and what
// was read.
func readN(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, readChunk))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(n-len(buf), cap(buf)))
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			if len(buf) < n {
				return buf, io.ErrUnexpectedEOF
			}
			break
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// matrix parses the content b of an miMATRIX element whose first
// sub-element is at offset base (see where for comp). It returns nil for
// an empty element.
func (p *parser) matrix(b []byte, base, comp int) (*Var, error) {
	if len(b) == 0 {
		return nil, nil
	}
	at := func(off int) string { return where(base+off, comp) }

	// Array flags.
	e, err := p.elementAt(b, 0, base, comp)
	if err != nil {
		return nil, err
	}
	if e.typ != miUINT32 || len(e.data) != 8 {
		return nil, fmt.Errorf("array flags at %s: want 8 bytes of miUINT32, found %d bytes of %s", at(0), len(e.data), typeName(e.typ))
	}
	flags := p.order.Uint32(e.data)
	class := flags & 0xff
	v := &Var{Class: className(class), Complex: flags&flagComplex != 0, order: p.order}
	if flags&flagLogical != 0 && isNumericClass(class) {
		v.Class = "logical"
	}
	off := e.next

	if class != mxOPAQUE {
		// Dimensions. Opaque objects have none.
		e, err = p.elementAt(b, off, base, comp)
		if err != nil {
			return nil, err
		}
		if e.typ != miINT32 || len(e.data)%4 != 0 || len(e.data) < 8 {
			return nil, fmt.Errorf("dimensions at %s: want at least 2 values of miINT32, found %d bytes of %s", at(off), len(e.data), typeName(e.typ))
		}
		v.Dims = make([]int, len(e.data)/4)
		for i := range v.Dims {
			d := int32(p.order.Uint32(e.data[4*i:]))
			if d < 0 {
				return nil, fmt.Errorf("dimensions at %s: dimension %d is negative (%d)", at(off), i+1, d)
			}
			v.Dims[i] = int(d)
		}
		off = e.next
	}

	// Name.
	e, err = p.elementAt(b, off, base, comp)
	if err != nil {
		return nil, err
	}
	if e.typ != miINT8 && e.typ != miUINT8 && e.typ != miUTF8 {
		return nil, fmt.Errorf("array name at %s: want miINT8 text, found %d bytes of %s", at(off), len(e.data), typeName(e.typ))
	}
	v.Name = string(e.data)
	off = e.next

	if !isNumericClass(class) {
		// The rest of the element is skipped.
		return v, nil
	}
	n, ok := count(v.Dims)
	if !ok {
		return nil, fmt.Errorf("variable %s: dimensions %s are too large", v.Name, formatDims(v.Dims))
	}
	v.n = n

	// Real part, then imaginary part.
	for part := range 2 {
		if part == 1 && !v.Complex {
			break
		}
		name := [2]string{"real part", "imaginary part"}[part]
		if off >= len(b) {
			return nil, fmt.Errorf("variable %s: missing %s (the array element ends at %s)", v.Name, name, at(off))
		}
		e, err = p.elementAt(b, off, base, comp)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %s: %w", v.Name, name, err)
		}
		size := numericSize(e.typ)
		if size == 0 {
			return nil, fmt.Errorf("variable %s: %s at %s has type %s, not a numeric type", v.Name, name, at(off), typeName(e.typ))
		}
		if len(e.data)%size != 0 || len(e.data)/size != n {
			return nil, fmt.Errorf("variable %s: dimensions %s need %d values, the %s at %s holds %d bytes of %s",
				v.Name, formatDims(v.Dims), n, name, at(off), len(e.data), typeName(e.typ))
		}
		// The real and imaginary parts may use different storage
		// types.
		if part == 0 {
			v.typ, v.re = e.typ, e.data
		} else {
			v.imTyp, v.im = e.typ, e.data
		}
		off = e.next
	}
	return v, nil
}

// count returns the product of dims, and false if it exceeds maxElems.
func count(dims []int) (int, bool) {
	if slices.Contains(dims, 0) {
		return 0, true
	}
	n := 1
	for _, d := range dims {
		if d > maxElems/n {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// formatDims formats dimensions MATLAB's way, for example "958x800".
func formatDims(dims []int) string {
	if len(dims) == 0 {
		return "(none)"
	}
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "x")
}
