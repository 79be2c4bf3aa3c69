package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// magic is the 6-byte prefix of every .npy file.
const magic = "\x93NUMPY"

// preambleLen is the length of the magic string plus the two version bytes.
const preambleLen = len(magic) + 2

// maxHeaderLen is the largest header, in bytes, that Read accepts and that
// Write produces. numpy itself refuses headers longer than 10000 bytes by
// default; the larger limit here only exists to bound memory use.
const maxHeaderLen = 1 << 20

// headerAlign is the alignment of the start of the array data that Write
// produces, as numpy does since version 1.14.
const headerAlign = 64

// growthDigits is the number of spare header bytes numpy reserves so that a
// file's shape can later be grown in place. Write reserves the same, so its
// output is byte-identical to numpy.save for float64 C-ordered arrays.
const growthDigits = 21

// typeKind is the numeric kind of a dtype.
type typeKind byte

const (
	kindFloat    typeKind = 'f'
	kindSigned   typeKind = 'i'
	kindUnsigned typeKind = 'u'
	kindBoolean  typeKind = 'b'
)

// dtype is a supported numpy scalar type.
type dtype struct {
	descr string           // as written in the header, e.g. "<f4"
	kind  typeKind         // 'f', 'i', 'u' or 'b'
	size  int              // item size in bytes: 1, 2, 4 or 8
	order binary.ByteOrder // byte order of multi-byte items
}

// header is the decoded header of a .npy file.
type header struct {
	major   byte
	dtype   dtype
	fortran bool
	shape   []int
	count   int   // number of elements, the product of shape
	nbytes  int64 // count * dtype.size
}

// unsupportedDtype returns the error for a descr that names a type this
// package cannot convert to float64.
func unsupportedDtype(v *pyValue) error {
	what := v.quoted()
	if v.kind == kindList {
		return fmt.Errorf("unsupported dtype %s (structured dtypes are not supported; want a float, integer or bool type)", what)
	}
	return fmt.Errorf("unsupported dtype %s (want a float, integer or bool type)", what)
}

// parseDtype interprets the 'descr' value of a header.
func parseDtype(v *pyValue) (dtype, error) {
	if v.kind != kindString {
		return dtype{}, unsupportedDtype(v)
	}
	s := v.str
	d := dtype{descr: s, order: binary.LittleEndian}
	bo := byte('=')
	if len(s) > 0 && strings.IndexByte("<>|=", s[0]) >= 0 {
		bo = s[0]
		s = s[1:]
	}
	if bo == '>' {
		d.order = binary.BigEndian
	}
	switch s {
	case "f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1":
	default:
		return dtype{}, unsupportedDtype(v)
	}
	d.kind = typeKind(s[0])
	d.size = int(s[1] - '0')
	return d, nil
}

// parseVersion checks the version bytes of the preamble.
func parseVersion(major, minor byte) error {
	if (major == 1 || major == 2 || major == 3) && minor == 0 {
		return nil
	}
	return fmt.Errorf("unsupported format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
}

// headerLenSize returns the size of the header length field for a format
// major version.
func headerLenSize(major byte) int {
	if major == 1 {
		return 2
	}
	return 4
}

// parseHeader decodes the header text of a file with the given major
// version.
func parseHeader(text []byte, major byte) (*header, error) {
	if major >= 3 && !utf8.Valid(text) {
		return nil, errors.New("header is not valid UTF-8")
	}
	dict, err := parseHeaderDict(string(text))
	if err != nil {
		return nil, err
	}
	var descr, fortran, shape *pyValue
	for i := range dict.keys {
		k := &dict.keys[i]
		if k.kind != kindString {
			return nil, fmt.Errorf("header has a non-string key %s", k.quoted())
		}
		var slot **pyValue
		switch k.str {
		case "descr":
			slot = &descr
		case "fortran_order":
			slot = &fortran
		case "shape":
			slot = &shape
		default:
			return nil, fmt.Errorf("header has unexpected key %s", k.quoted())
		}
		if *slot != nil {
			return nil, fmt.Errorf("header has duplicate key %s", k.quoted())
		}
		*slot = &dict.items[i]
	}
	for _, m := range []struct {
		v    *pyValue
		name string
	}{{descr, "descr"}, {fortran, "fortran_order"}, {shape, "shape"}} {
		if m.v == nil {
			return nil, fmt.Errorf("header is missing key '%s'", m.name)
		}
	}

	h := &header{major: major}
	if h.dtype, err = parseDtype(descr); err != nil {
		return nil, err
	}
	if fortran.kind != kindBool {
		return nil, fmt.Errorf("fortran_order must be True or False, got %s", fortran.quoted())
	}
	h.fortran = fortran.bool
	if h.shape, err = parseShape(shape); err != nil {
		return nil, err
	}
	if h.count, err = shapeCount(h.shape); err != nil {
		return nil, err
	}
	if h.count > math.MaxInt64/h.dtype.size {
		return nil, fmt.Errorf("shape %s of %s is too large: its size in bytes overflows", formatShapeShort(h.shape), h.dtype.descr)
	}
	h.nbytes = int64(h.count) * int64(h.dtype.size)
	return h, nil
}

// parseShape interprets the 'shape' value of a header.
func parseShape(v *pyValue) ([]int, error) {
	if v.kind != kindTuple {
		return nil, fmt.Errorf("shape must be a tuple of integers, got %s", v.quoted())
	}
	shape := make([]int, len(v.items))
	for i := range v.items {
		it := &v.items[i]
		if it.kind != kindInt {
			return nil, fmt.Errorf("shape entry %d is %s, not an integer", i, it.quoted())
		}
		if strings.HasPrefix(it.str, "-") && strings.Trim(it.str, "-0") != "" {
			return nil, fmt.Errorf("shape entry %d is negative: %s", i, it.quoted())
		}
		n, err := strconv.ParseInt(strings.TrimPrefix(it.str, "-"), 10, 0)
		if err != nil {
			return nil, fmt.Errorf("shape entry %d is too large: %s", i, it.quoted())
		}
		shape[i] = int(n)
	}
	return shape, nil
}

// shapeCount returns the number of elements of an array with the given
// shape, or an error if any dimension is negative or the product overflows
// int.
func shapeCount(shape []int) (int, error) {
	n := 1
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape entry %d is negative: %d", i, d)
		}
		if d == 0 {
			n = 0
		}
	}
	if n == 0 {
		return 0, nil
	}
	for _, d := range shape {
		if n > math.MaxInt/d {
			return 0, fmt.Errorf("shape %s is too large: the number of elements overflows", formatShapeShort(shape))
		}
		n *= d
	}
	return n, nil
}

// formatShape formats shape as a Python tuple, as numpy does: (), (3,),
// (2, 5).
func formatShape(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// formatShapeShort is formatShape for error messages: shapes with very many
// dimensions are abbreviated.
func formatShapeShort(shape []int) string {
	if len(shape) <= 8 {
		return formatShape(shape)
	}
	return fmt.Sprintf("%s ... %d dimensions)", strings.TrimSuffix(formatShape(shape[:4]), ")")+",", len(shape))
}

// encodeHeader returns the complete preamble and header that Write emits
// for a little-endian float64 array in C order with the given shape: the
// version 1.0 format if the header fits, otherwise version 2.0.
func encodeHeader(shape []int) ([]byte, error) {
	var b strings.Builder
	b.WriteString("{'descr': '<f8', 'fortran_order': False, 'shape': ")
	b.WriteString(formatShape(shape))
	b.WriteString(", }")
	if len(shape) > 0 {
		if pad := growthDigits - len(strconv.Itoa(shape[0])); pad > 0 {
			b.WriteString(strings.Repeat(" ", pad))
		}
	}
	text := b.String()
	for _, major := range []byte{1, 2} {
		lenSize := headerLenSize(major)
		hlen := len(text) + 1 // the final '\n'
		pad := headerAlign - (preambleLen+lenSize+hlen)%headerAlign
		total := hlen + pad
		if major == 1 && total > math.MaxUint16 {
			continue
		}
		if total > maxHeaderLen {
			break
		}
		out := make([]byte, 0, preambleLen+lenSize+total)
		out = append(out, magic...)
		out = append(out, major, 0)
		if major == 1 {
			out = binary.LittleEndian.AppendUint16(out, uint16(total))
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(total))
		}
		out = append(out, text...)
		for range pad {
			out = append(out, ' ')
		}
		out = append(out, '\n')
		return out, nil
	}
	return nil, fmt.Errorf("shape with %d dimensions needs a header longer than the %d-byte limit", len(shape), maxHeaderLen)
}
