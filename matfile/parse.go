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

	"github.com/dadil/dadil/internal/clip"
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

// parse parses a whole MAT-file. Compressed variables are listed from the
// first bytes of their stream; see lazy.
func parse(b []byte) (*File, error) {
	order, err := parseHeader(b)
	if err != nil {
		return nil, err
	}
	f := &File{Header: strings.TrimRight(string(b[:headerTextLen]), " \x00")}
	top := src{order: order, b: b, off: headerLen, comp: -1}
	var zr io.Reader // one zlib reader, reset for every compressed element
	for top.off < len(b) {
		if len(b)-top.off < tagLen && allZero(b[top.off:]) {
			// Padding after the last element.
			break
		}
		off := top.off
		e, err := top.tag(len(b))
		if err != nil {
			return nil, err
		}
		data, err := top.data(e, len(b))
		if err != nil {
			return nil, err
		}
		var v *Var
		switch e.typ {
		case miMATRIX:
			v, err = f.matrix(&src{order: order, b: data, base: off + tagLen, comp: -1})
		case miCOMPRESSED:
			if zr, err = resetZlib(zr, data, off); err == nil {
				v, err = f.listCompressed(order, zr, data, off)
			}
		default:
			err = fmt.Errorf("element at byte offset %d has type %s; the top level of a MAT-file holds only miMATRIX and miCOMPRESSED elements", off, typeName(e.typ))
		}
		if err != nil {
			return nil, err
		}
		if v != nil && v.Name != "" {
			f.Vars = append(f.Vars, v)
		}
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
		return nil, fmt.Errorf("not a MATLAB level-5 MAT-file: no endian indicator (\"IM\" or \"MI\") at byte offset 126, found %s%s", clip.Bytes(b[126:128]), hint)
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

// where describes byte offset off for messages. comp is the offset of the
// enclosing compressed element in the file, or -1 if off is a file offset.
func where(off, comp int) string {
	if comp < 0 {
		return "byte offset " + strconv.Itoa(off)
	}
	return fmt.Sprintf("byte offset %d of the data decompressed from the element at byte offset %d", off, comp)
}

// src reads data elements one after the other: from memory (the file, or
// the content of an miMATRIX element), or from the zlib stream of an
// miCOMPRESSED element, which is decompressed only as far as it is read.
// Offsets count from the start of b or of the stream; callers pass the
// end of the enclosing element, and every byte count is checked against
// it before anything is read or allocated.
type src struct {
	order binary.ByteOrder
	b     []byte    // the bytes, when in memory
	zr    io.Reader // the decompressed stream, when b is nil
	off   int       // offset of the next unread byte

	// base and comp place offsets for messages: offset off is at
	// where(base+off, comp).
	base, comp int

	// size is the declared size of a stream's content, for messages.
	size int
}

// element is the tag of a data element, with its data for small
// elements.
type element struct {
	typ   uint32
	n     int    // the declared number of data bytes
	small []byte // the data of a small data element, nil otherwise
}

// at describes offset off of s for messages.
func (s *src) at(off int) string {
	return where(s.base+off, s.comp)
}

// tag reads the tag of the data element at s.off, which must end by end.
func (s *src) tag(end int) (element, error) {
	at, rem := s.off, end-s.off
	if rem < tagLen {
		return element{}, fmt.Errorf("truncated: element at %s needs an 8-byte tag, %d bytes remain", s.at(at), rem)
	}
	t, err := s.read(tagLen)
	if err != nil {
		return element{}, err
	}
	w := s.order.Uint32(t)
	if n := int(w >> 16); n != 0 {
		// Small data element: the byte count is in the upper half of
		// the type field and the data in the second half of the tag.
		if n > 4 {
			return element{}, fmt.Errorf("element at %s: small data element declares %d bytes, at most 4 fit", s.at(at), n)
		}
		return element{typ: w & 0xffff, n: n, small: t[4 : 4+n]}, nil
	}
	n := s.order.Uint32(t[4:])
	if uint64(n) > uint64(rem-tagLen) {
		return element{}, fmt.Errorf("truncated: element at %s declares %d bytes, %d remain", s.at(at), n, rem-tagLen)
	}
	return element{typ: w, n: int(n)}, nil
}

// data reads the data of element e, whose tag was just read, and skips
// its padding: elements other than miCOMPRESSED are padded to a multiple
// of 8 bytes (MATLAB does not pad compressed ones). Missing padding at end
// is tolerated.
func (s *src) data(e element, end int) ([]byte, error) {
	if e.small != nil {
		return e.small, nil
	}
	d, err := s.read(e.n)
	if err != nil || e.typ == miCOMPRESSED {
		return d, err
	}
	return d, s.skip(min((8-e.n%8)%8, end-s.off))
}

// read returns the next n bytes, which the caller has checked the
// enclosing element holds. From a stream, memory is allocated as data
// arrives.
func (s *src) read(n int) ([]byte, error) {
	if s.zr == nil {
		d := s.b[s.off : s.off+n]
		s.off += n
		return d, nil
	}
	d, err := readN(s.zr, n)
	s.off += len(d)
	if err != nil {
		return nil, s.streamError(err)
	}
	return d, nil
}

// skip skips n bytes, decompressing them from a stream.
func (s *src) skip(n int) error {
	if s.zr == nil {
		s.off += n
		return nil
	}
	k, err := io.CopyN(io.Discard, s.zr, int64(n))
	s.off += int(k)
	if err != nil {
		return s.streamError(err)
	}
	return nil
}

// streamError is an error of the zlib stream itself: truncation or
// corrupt data. It already says where it happened, so it is not wrapped
// with the sub-element being read.
type streamError struct{ msg string }

func (e *streamError) Error() string { return e.msg }

// isStreamError reports whether err is a *streamError.
func isStreamError(err error) bool {
	var se *streamError
	return errors.As(err, &se)
}

// streamError describes err, returned by the stream of s after s.off
// bytes of the element's content.
func (s *src) streamError(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &streamError{fmt.Sprintf("compressed element at byte offset %d: %s", s.comp, zlibError(err, s.off, s.size))}
}

// resetZlib returns a zlib reader of data, the compressed data of the
// element at file offset off: zr reset, or a new reader if zr is nil.
func resetZlib(zr io.Reader, data []byte, off int) (io.Reader, error) {
	var err error
	if zr == nil {
		zr, err = zlib.NewReader(bytes.NewReader(data))
	} else {
		err = zr.(zlib.Resetter).Reset(bytes.NewReader(data), nil)
	}
	if err != nil {
		return zr, fmt.Errorf("compressed element at byte offset %d: corrupt zlib stream: %v", off, err)
	}
	return zr, nil
}

// openCompressed reads, from zr, the tag of the miMATRIX element that the
// miCOMPRESSED element at file offset off holds. It returns a source
// positioned at the start of the element's content, whose size is
// s.size.
func openCompressed(order binary.ByteOrder, zr io.Reader, off int) (*src, error) {
	var tag [tagLen]byte
	if n, err := io.ReadFull(zr, tag[:]); err != nil {
		return nil, fmt.Errorf("compressed element at byte offset %d: %s", off, zlibError(err, n, tagLen))
	}
	w := order.Uint32(tag[:])
	typ, size := w, int64(order.Uint32(tag[4:]))
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
	return &src{order: order, zr: zr, base: tagLen, comp: off, size: int(size)}, nil
}

// drainLimit bounds what finish decompresses after the data it needs:
// the rest of the element, then what follows it in the stream.
const drainLimit = 1 << 20

// finish reads the rest of a stream whose element ends at end, up to
// drainLimit bytes, and then to the end of the stream, which checks its
// checksum. A stream that ends before the element does is truncated.
// MATLAB writes nothing after the data of a variable, nor after the
// element; a rest longer than drainLimit is left unread and unchecked.
func (s *src) finish(end int) error {
	rest := end - s.off
	if err := s.skip(min(rest, drainLimit)); err != nil || rest > drainLimit {
		return err
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(s.zr, drainLimit)); err != nil {
		return &streamError{fmt.Sprintf("compressed element at byte offset %d: corrupt zlib stream after the element: %v", s.comp, err)}
	}
	return nil
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

// matrix parses the content of an uncompressed miMATRIX element, all of
// s.b. Numeric data is read now (it is in memory already); the cells of a
// cell array are parsed on first use. It returns nil for an empty element.
func (f *File) matrix(s *src) (*Var, error) {
	end := len(s.b)
	if end == 0 {
		return nil, nil
	}
	v, re, err := s.header(end, "")
	if err != nil {
		return nil, err
	}
	switch {
	case v.typ != 0:
		err = s.body(v, re, end)
	case v.class == mxCELL:
		rest := *s
		v.lazy = &lazy{file: f, mem: &rest, end: end}
	}
	return v, err
}

// listCompressed lists the variable of the miCOMPRESSED element at file
// offset off, whose compressed data is data, read through zr: it
// decompresses only the header of the variable (see header). The data of
// a numeric array and the cells of a cell array are decompressed on first
// use. It returns nil for an empty element.
func (f *File) listCompressed(order binary.ByteOrder, zr io.Reader, data []byte, off int) (*Var, error) {
	s, err := openCompressed(order, zr, off)
	if err != nil {
		return nil, err
	}
	if s.size == 0 {
		return nil, s.finish(0)
	}
	v, _, err := s.header(s.size, "")
	if err != nil {
		return nil, err
	}
	if v.typ != 0 || v.class == mxCELL {
		v.lazy = &lazy{file: f, z: data, zoff: off}
	}
	return v, nil
}

// Bounds of the sub-elements of an array header, far above what MATLAB
// writes (names of at most 63 characters, a few dimensions), which keep
// what a small compressed element can make the reader allocate small
// whatever it declares; and of the number of cells of a cell array, each
// of which costs a Var.
const (
	maxDims    = 1 << 12
	maxNameLen = 1 << 12
	maxCells   = 1 << 20
)

// header parses the start of the content of an miMATRIX element, at
// s.off, up to end: the array flags, the dimensions, the name and, for
// numeric classes, the tag of the real part, which it checks against the
// dimensions and returns. label, if not empty, replaces the name (it
// names a cell, "c{2}") and prefixes errors.
func (s *src) header(end int, label string) (*Var, element, error) {
	v, err := s.arrayHeader(end)
	if err != nil {
		if label != "" && !isStreamError(err) {
			err = fmt.Errorf("variable %s: %w", clip.Name(label), err)
		}
		return nil, element{}, err
	}
	if label != "" {
		v.Name = label
	}
	if !isNumericClass(v.class) {
		// The rest of the element is not parsed here.
		return v, element{}, nil
	}
	n, ok := count(v.Dims)
	if !ok {
		return nil, element{}, fmt.Errorf("variable %s: dimensions %s are too large", clip.Name(v.Name), formatDims(v.Dims))
	}
	v.n = n
	re, err := s.partTag(v, 0, end)
	if err != nil {
		return nil, element{}, err
	}
	v.typ = re.typ
	return v, re, nil
}

// arrayHeader parses the array flags, dimensions and name at s.off.
func (s *src) arrayHeader(end int) (*Var, error) {
	at := s.off
	e, err := s.tag(end)
	if err != nil {
		return nil, err
	}
	if e.typ != miUINT32 || e.n != 8 {
		return nil, fmt.Errorf("array flags at %s: want 8 bytes of miUINT32, found %d bytes of %s", s.at(at), e.n, typeName(e.typ))
	}
	d, err := s.data(e, end)
	if err != nil {
		return nil, err
	}
	flags := s.order.Uint32(d)
	class := flags & 0xff
	v := &Var{Class: className(class), Complex: flags&flagComplex != 0, order: s.order, class: class}
	if flags&flagLogical != 0 && isNumericClass(class) {
		v.Class = "logical"
	}

	if class != mxOPAQUE {
		// Dimensions. Opaque objects have none.
		at = s.off
		if e, err = s.tag(end); err != nil {
			return nil, err
		}
		if e.typ != miINT32 || e.n%4 != 0 || e.n < 8 {
			return nil, fmt.Errorf("dimensions at %s: want at least 2 values of miINT32, found %d bytes of %s", s.at(at), e.n, typeName(e.typ))
		}
		if e.n/4 > maxDims {
			return nil, fmt.Errorf("dimensions at %s: %d dimensions, more than the %d this package reads", s.at(at), e.n/4, maxDims)
		}
		if d, err = s.data(e, end); err != nil {
			return nil, err
		}
		v.Dims = make([]int, len(d)/4)
		for i := range v.Dims {
			x := int32(s.order.Uint32(d[4*i:]))
			if x < 0 {
				return nil, fmt.Errorf("dimensions at %s: dimension %d is negative (%d)", s.at(at), i+1, x)
			}
			v.Dims[i] = int(x)
		}
	}

	// Name.
	at = s.off
	if e, err = s.tag(end); err != nil {
		return nil, err
	}
	if e.typ != miINT8 && e.typ != miUINT8 && e.typ != miUTF8 {
		return nil, fmt.Errorf("array name at %s: want miINT8 text, found %d bytes of %s", s.at(at), e.n, typeName(e.typ))
	}
	if e.n > maxNameLen {
		return nil, fmt.Errorf("array name at %s: %d bytes, longer than the %d this package reads", s.at(at), e.n, maxNameLen)
	}
	if d, err = s.data(e, end); err != nil {
		return nil, err
	}
	v.Name = string(d)
	return v, nil
}

// partNames name the real (0) and imaginary (1) parts in messages.
var partNames = [2]string{"real part", "imaginary part"}

// partTag reads the tag of the real or imaginary part of numeric array v
// and checks it against the dimensions.
func (s *src) partTag(v *Var, part, end int) (element, error) {
	name := partNames[part]
	if s.off >= end {
		return element{}, fmt.Errorf("variable %s: missing %s (the array element ends at %s)", clip.Name(v.Name), name, s.at(s.off))
	}
	at := s.off
	e, err := s.tag(end)
	if err != nil {
		if isStreamError(err) {
			return element{}, err
		}
		return element{}, fmt.Errorf("variable %s: %s: %w", clip.Name(v.Name), name, err)
	}
	size := numericSize(e.typ)
	if size == 0 {
		return element{}, fmt.Errorf("variable %s: %s at %s has type %s, not a numeric type", clip.Name(v.Name), name, s.at(at), typeName(e.typ))
	}
	if e.n%size != 0 || e.n/size != v.n {
		return element{}, fmt.Errorf("variable %s: dimensions %s need %d values, the %s at %s holds %d bytes of %s",
			v.Name, formatDims(v.Dims), v.n, name, s.at(at), e.n, typeName(e.typ))
	}
	return e, nil
}

// body reads the data of numeric array v after its header: the real part,
// whose tag re was read by header, and the imaginary part of a complex
// array. The real and imaginary parts may use different storage types.
func (s *src) body(v *Var, re element, end int) error {
	d, err := s.data(re, end)
	if err != nil {
		return err
	}
	v.re = d
	if !v.Complex {
		return nil
	}
	im, err := s.partTag(v, 1, end)
	if err != nil {
		return err
	}
	if v.im, err = s.data(im, end); err != nil {
		return err
	}
	v.imTyp = im.typ
	return nil
}

// cells parses the cells of cell array v, which follow its header at
// s.off up to end: each an miMATRIX element, numeric arrays read, other
// classes listed but not parsed (the reader never descends further). An
// empty element is an empty (0×0) double array.
func (s *src) cells(v *Var, end int) ([]*Var, error) {
	n, ok := count(v.Dims)
	if !ok {
		return nil, fmt.Errorf("variable %s: dimensions %s are too large", clip.Name(v.Name), formatDims(v.Dims))
	}
	if n > maxCells {
		return nil, fmt.Errorf("variable %s: %d cells, more than the %d this package reads", clip.Name(v.Name), n, maxCells)
	}
	if rem := end - s.off; n > rem/tagLen {
		return nil, fmt.Errorf("variable %s: dimensions %s need %d cells of at least %d bytes each, %d bytes remain at %s", clip.Name(v.Name), formatDims(v.Dims), n, tagLen, rem, s.at(s.off))
	}
	// The slice grows as cells arrive: a stream may hold far fewer
	// bytes than it declares.
	cells := make([]*Var, 0, min(n, 1024))
	for k := range n {
		label := fmt.Sprintf("%s{%d}", v.Name, k+1)
		at := s.off
		e, err := s.tag(end)
		if err != nil {
			if !isStreamError(err) {
				err = fmt.Errorf("variable %s: %w", clip.Name(label), err)
			}
			return nil, err
		}
		if e.typ != miMATRIX || e.small != nil {
			return nil, fmt.Errorf("variable %s: element at %s is %d bytes of %s, want an miMATRIX element", clip.Name(label), s.at(at), e.n, typeName(e.typ))
		}
		c := &Var{Name: label, Class: "double", Dims: []int{0, 0}, order: s.order, class: mxDOUBLE, typ: miDOUBLE}
		if cend := s.off + e.n; e.n > 0 {
			var re element
			if c, re, err = s.header(cend, label); err != nil {
				return nil, err
			}
			if c.typ != 0 {
				if err := s.body(c, re, cend); err != nil {
					return nil, err
				}
			}
			// Trailing sub-elements, or the content of a cell that is
			// not numeric.
			if err := s.skip(cend - s.off); err != nil {
				return nil, err
			}
		}
		if err := s.skip(min((8-e.n%8)%8, end-s.off)); err != nil {
			return nil, err
		}
		cells = append(cells, c)
	}
	return cells, nil
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
