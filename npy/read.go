package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/dadil/dadil/internal/clip"
)

// Array is a numeric array read from a .npy file, converted to float64, in
// row-major (C) order.
//
// The number of elements is the product of Shape; a zero-length Shape
// describes a scalar, which has one element. Values are converted exactly,
// except that 64-bit integers whose magnitude exceeds 2^53 are rounded to
// the nearest float64. NaN and infinite values are passed through
// unchanged; callers that cannot handle them must check for them.
type Array struct {
	// Shape holds the length of each dimension. A scalar has len(Shape) == 0.
	Shape []int

	// Data holds the elements in row-major order:
	// len(Data) is the product of Shape.
	Data []float64

	// DType is the descr of the file the array was read from,
	// for example "<f4", ">i8", "|u1" or "|b1".
	DType string
}

// chunkSize is the number of bytes of array data read or written at a
// time. It is a multiple of every supported item size.
const chunkSize = 1 << 16

// firstChunkSize is the size of the first chunk of data read from input
// of unknown size. Later chunks double in size up to chunkSize.
const firstChunkSize = 1 << 12

// source is a stream holding one .npy file.
type source struct {
	r io.Reader

	// size is the number of bytes r holds, or -1 if it is not known.
	size int64

	// trusted reports whether size is reliable enough to allocate the
	// whole array up front. An untrusted size, such as the uncompressed
	// size recorded in a zip archive, is only used to reject impossible
	// headers early.
	trusted bool

	// noun names the container in messages: "file" or "member".
	noun string

	// limit, if positive, bounds the array's size as float64: see
	// MaxArrayBytes.
	limit int64
}

// Read reads a .npy file from r and converts its elements to float64.
//
// Read consumes r up to EOF: any data after the array is an error. A short
// input that claims a huge shape fails with a truncation error without a
// large allocation: memory is allocated as data arrives, or, if r is a
// *bytes.Reader, *bytes.Buffer or *strings.Reader, only after the size of
// the remaining input has been checked. Errors are prefixed with "npy: ".
func Read(r io.Reader) (*Array, error) {
	src := source{r: r, size: -1, noun: "file"}
	switch r := r.(type) {
	case *bytes.Reader:
		src.size, src.trusted = int64(r.Len()), true
	case *bytes.Buffer:
		src.size, src.trusted = int64(r.Len()), true
	case *strings.Reader:
		src.size, src.trusted = int64(r.Len()), true
	}
	a, err := readArray(src)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return a, nil
}

// ReadFile reads the .npy file at path and converts its elements to float64.
// Errors are prefixed with "npy: " and the path.
func ReadFile(path string) (*Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	defer f.Close()
	src := source{r: f, size: -1, noun: "file"}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		src.size = fi.Size()
		src.trusted = true
	}
	a, err := readArray(src)
	if err != nil {
		return nil, fileError(path, err)
	}
	return a, nil
}

// fileError prefixes err with "npy: " and path. The path is not repeated
// for errors from the os package, which already carry it.
func fileError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return fmt.Errorf("npy: %s: %s: %w", path, pe.Op, pe.Err)
	}
	return fmt.Errorf("npy: %s: %w", path, err)
}

// readError describes a read error other than a premature end of input.
func readError(what string, err error) error {
	return fmt.Errorf("reading %s: %w", what, err)
}

// isEOF reports whether err means the input ended early.
func isEOF(err error) bool {
	return err == io.EOF || err == io.ErrUnexpectedEOF
}

// readArray reads one complete .npy file from src.
func readArray(src source) (*Array, error) {
	h, _, err := readCheckedHeader(src)
	if err != nil {
		return nil, err
	}
	need := h.nbytes

	// Unless the size is known to be right, allocate as data arrives, in
	// chunks that start small and grow, so that input much shorter than
	// its header claims is rejected cheaply.
	capacity, chunk := h.count, int64(chunkSize)
	if !src.trusted {
		capacity, chunk = min(h.count, firstChunkSize/h.dtype.size), firstChunkSize
	}
	data := make([]float64, 0, capacity)
	var buf []byte
	for got := int64(0); got < need; {
		n := int(min(need-got, chunk))
		if len(buf) < n {
			buf = make([]byte, n)
		}
		k, err := io.ReadFull(src.r, buf[:n])
		if err != nil {
			if isEOF(err) {
				return nil, truncatedData(h, src.noun, got+int64(k))
			}
			return nil, readError("data", err)
		}
		start := len(data)
		data = slices.Grow(data, n/h.dtype.size)[:start+n/h.dtype.size]
		if err := decode(data[start:], buf[:n], h.dtype, start); err != nil {
			return nil, err
		}
		got += int64(n)
		chunk = min(2*chunk, chunkSize)
	}

	// The input must end here. Count what follows, up to a limit.
	const trailLimit = chunkSize
	extra, err := io.CopyN(io.Discard, src.r, trailLimit)
	if errors.Is(err, zip.ErrFormat) && src.size >= 0 {
		// archive/zip refuses to read past the recorded size.
		return nil, fmt.Errorf("the %s inflates to more than the %d bytes its directory entry and header declare", src.noun, src.size)
	}
	if err != nil && err != io.EOF {
		return nil, readError("past the end of the data", err)
	}
	if extra > 0 {
		return nil, trailingData(h, extra, extra == trailLimit)
	}

	if h.fortran {
		data = fortranToC(data, h.shape)
	}
	return &Array{Shape: h.shape, Data: data, DType: h.dtype.descr}, nil
}

// readCheckedHeader reads the preamble and header of a .npy file, as
// readHeader, and checks the size of the data it declares against the
// size of src, if known, and against src.limit.
func readCheckedHeader(src source) (*header, int64, error) {
	h, offset, err := readHeader(src)
	if err != nil {
		return nil, 0, err
	}
	if src.size >= 0 {
		avail := src.size - offset
		if avail < h.nbytes {
			return nil, 0, truncatedData(h, src.noun, avail)
		}
		if avail > h.nbytes {
			return nil, 0, trailingData(h, avail-h.nbytes, false)
		}
	}
	if src.limit > 0 && int64(h.count) > src.limit/8 {
		return nil, 0, fmt.Errorf("shape %s of %s has %d elements, more than the %d (of 8 bytes as float64) that npy.MaxArrayBytes = %d allows", formatShapeShort(h.shape), h.dtype.descr, h.count, src.limit/8, src.limit)
	}
	return h, offset, nil
}

// readHeader reads the preamble and header of a .npy file. It returns the
// header and the offset of the array data.
func readHeader(src source) (*header, int64, error) {
	var pre [preambleLen + 4]byte
	n, err := io.ReadFull(src.r, pre[:preambleLen])
	if err != nil && !isEOF(err) {
		return nil, 0, readError("preamble", err)
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("not a .npy file: the %s is empty", src.noun)
	}
	if got := pre[:min(n, len(magic))]; !bytes.HasPrefix([]byte(magic), got) {
		return nil, 0, fmt.Errorf("not a .npy file: bad magic %s, want %q", clip.Bytes(got), magic)
	}
	if n < preambleLen {
		return nil, 0, fmt.Errorf("truncated preamble: the %s has %d bytes, a .npy file has at least %d", src.noun, n, preambleLen+2)
	}
	major, minor := pre[len(magic)], pre[len(magic)+1]
	if err := parseVersion(major, minor); err != nil {
		return nil, 0, err
	}
	lenSize := headerLenSize(major)
	lenField := pre[preambleLen : preambleLen+lenSize]
	if n, err := io.ReadFull(src.r, lenField); err != nil {
		if isEOF(err) {
			return nil, 0, fmt.Errorf("truncated preamble: the %s ends %d bytes into the %d-byte header length of format %d.0", src.noun, n, lenSize, major)
		}
		return nil, 0, readError("header length", err)
	}
	var hlen int64
	if lenSize == 2 {
		hlen = int64(binary.LittleEndian.Uint16(lenField))
	} else {
		hlen = int64(binary.LittleEndian.Uint32(lenField))
	}
	offset := int64(preambleLen+lenSize) + hlen
	if hlen > maxHeaderLen {
		return nil, 0, fmt.Errorf("header length %d exceeds the limit of %d bytes", hlen, maxHeaderLen)
	}
	if src.size >= 0 {
		if avail := src.size - int64(preambleLen+lenSize); hlen > avail {
			return nil, 0, fmt.Errorf("truncated header: the header length field says %d bytes, the %s has %d", hlen, src.noun, avail)
		}
	}
	// Copy rather than allocate hlen bytes up front: the buffer grows
	// with the data actually present.
	var text bytes.Buffer
	if got, err := io.CopyN(&text, src.r, hlen); err != nil {
		if isEOF(err) {
			return nil, 0, fmt.Errorf("truncated header: the header length field says %d bytes, the %s has %d", hlen, src.noun, got)
		}
		return nil, 0, readError("header", err)
	}
	h, err := parseHeader(text.Bytes(), major)
	if err != nil {
		return nil, 0, err
	}
	return h, offset, nil
}

// truncatedData returns the error for array data shorter than the header
// requires.
func truncatedData(h *header, noun string, have int64) error {
	return fmt.Errorf("truncated data: shape %s of %s needs %d bytes, %s has %d", formatShapeShort(h.shape), h.dtype.descr, h.nbytes, noun, have)
}

// trailingData returns the error for extra bytes after the array data.
func trailingData(h *header, extra int64, atLeast bool) error {
	more := ""
	if atLeast {
		more = " at least"
	}
	return fmt.Errorf("trailing data: found%s %d bytes after the %d bytes of array data for shape %s of %s", more, extra, h.nbytes, formatShapeShort(h.shape), h.dtype.descr)
}

// decode converts the items in src to float64 and stores them in dst;
// len(dst) must be len(src)/dt.size. offset is the index of dst[0] in the
// whole array, used in error messages.
func decode(dst []float64, src []byte, dt dtype, offset int) error {
	bo := dt.order
	switch {
	case dt.kind == kindFloat && dt.size == 8:
		for i := range dst {
			dst[i] = math.Float64frombits(bo.Uint64(src[8*i:]))
		}
	case dt.kind == kindFloat && dt.size == 4:
		for i := range dst {
			dst[i] = float64(math.Float32frombits(bo.Uint32(src[4*i:])))
		}
	case dt.kind == kindFloat && dt.size == 2:
		for i := range dst {
			dst[i] = halfToFloat64(bo.Uint16(src[2*i:]))
		}
	case dt.kind == kindSigned && dt.size == 8:
		for i := range dst {
			dst[i] = float64(int64(bo.Uint64(src[8*i:])))
		}
	case dt.kind == kindSigned && dt.size == 4:
		for i := range dst {
			dst[i] = float64(int32(bo.Uint32(src[4*i:])))
		}
	case dt.kind == kindSigned && dt.size == 2:
		for i := range dst {
			dst[i] = float64(int16(bo.Uint16(src[2*i:])))
		}
	case dt.kind == kindSigned && dt.size == 1:
		for i := range dst {
			dst[i] = float64(int8(src[i]))
		}
	case dt.kind == kindUnsigned && dt.size == 8:
		for i := range dst {
			dst[i] = float64(bo.Uint64(src[8*i:]))
		}
	case dt.kind == kindUnsigned && dt.size == 4:
		for i := range dst {
			dst[i] = float64(bo.Uint32(src[4*i:]))
		}
	case dt.kind == kindUnsigned && dt.size == 2:
		for i := range dst {
			dst[i] = float64(bo.Uint16(src[2*i:]))
		}
	case dt.kind == kindUnsigned && dt.size == 1:
		for i := range dst {
			dst[i] = float64(src[i])
		}
	case dt.kind == kindBoolean && dt.size == 1:
		for i := range dst {
			switch src[i] {
			case 0:
				dst[i] = 0
			case 1:
				dst[i] = 1
			default:
				return fmt.Errorf("invalid bool value 0x%02x at index %d (want 0 or 1)", src[i], offset+i)
			}
		}
	default:
		// parseDtype only returns the types above.
		return fmt.Errorf("internal error: no decoder for dtype %q", dt.descr)
	}
	return nil
}

// halfToFloat64 converts an IEEE 754 binary16 value to float64. Every
// binary16 value, including subnormals, infinities and signed zeros, is
// represented exactly.
func halfToFloat64(h uint16) float64 {
	exp := int(h>>10) & 0x1f
	frac := h & 0x3ff
	var f float64
	switch exp {
	case 0: // zero or subnormal: frac × 2^-24
		f = math.Ldexp(float64(frac), -24)
	case 0x1f:
		if frac == 0 {
			f = math.Inf(1)
		} else {
			f = math.NaN()
		}
	default: // normal: 1.frac × 2^(exp-15)
		f = math.Ldexp(float64(frac|0x400), exp-25)
	}
	if h&0x8000 != 0 {
		f = math.Copysign(f, -1)
	}
	return f
}

// fortranToC reorders data, the elements of an array with the given shape
// in column-major (Fortran) order, into row-major (C) order.
func fortranToC(data []float64, shape []int) []float64 {
	// Dimensions of length 1 do not affect the order; dropping them keeps
	// the index arithmetic below proportional to the number of elements
	// even for shapes such as (1, 1, ..., 1, n).
	var dims []int
	for _, d := range shape {
		if d != 1 {
			dims = append(dims, d)
		}
	}
	if len(dims) < 2 || len(data) == 0 {
		return data
	}
	nd := len(dims)
	stride := make([]int, nd) // Fortran-order strides
	s := 1
	for k, d := range dims {
		stride[k] = s
		s *= d
	}
	idx := make([]int, nd)
	out := make([]float64, len(data))
	f := 0
	for c := range out {
		out[c] = data[f]
		// Advance idx in C order, the last index fastest, tracking the
		// Fortran-order offset f.
		for k := nd - 1; k >= 0; k-- {
			idx[k]++
			f += stride[k]
			if idx[k] < dims[k] {
				break
			}
			f -= stride[k] * dims[k]
			idx[k] = 0
		}
	}
	return out
}
