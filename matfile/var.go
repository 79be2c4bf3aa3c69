package matfile

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/clip"
)

// Numeric reports whether v is a numeric array: of class double, single,
// int8 to int64, uint8 to uint64 or logical. Complex arrays are numeric,
// although the accessors reject them.
func (v *Var) Numeric() bool {
	return v.typ != 0
}

// check returns an error unless v is a real numeric array.
func (v *Var) check() error {
	if !v.Numeric() {
		return fmt.Errorf("matfile: variable %s is %s, not a numeric array", clip.Name(v.Name), describeClass(v.Class))
	}
	if v.Complex {
		return fmt.Errorf("matfile: variable %s is a complex %s array; only real arrays are supported", clip.Name(v.Name), v.Class)
	}
	return nil
}

// describeClass returns a noun phrase for a non-numeric class.
func describeClass(class string) string {
	switch class {
	case "cell", "struct", "char", "sparse":
		return "a " + class + " array"
	case "function_handle":
		return "a function handle"
	case "object":
		return "an object"
	case "opaque":
		return "an opaque object (such as a string, table or datetime)"
	}
	return "of " + class
}

// Cells returns the cells of a cell array in column-major order, MATLAB's
// linear indexing: for a 2×3 cell array c, c{1,1}, c{2,1}, c{1,2}, … Each
// cell is named after the variable with its index from 1 in braces, "c{4}",
// which File.Lookup accepts. Cells holding numeric arrays are read (an
// empty cell is a 0×0 double array); cells holding anything else (char,
// struct, a cell array, …) are listed with their class and, where
// recorded, dimensions, and their accessors return an error: cells are
// read one level deep, and Cells of a cell inside a cell is an error.
//
// The cells are parsed, and for a compressed variable decompressed, on the
// first call; errors name the cell at fault. Variables that are not cell
// arrays are an error.
func (v *Var) Cells() ([]*Var, error) {
	if v.class != mxCELL {
		return nil, fmt.Errorf("matfile: variable %s is %s, not a cell array", clip.Name(v.Name), v.describe())
	}
	if v.lazy == nil {
		return nil, fmt.Errorf("matfile: variable %s is a cell array inside a cell array; only one level of cells is read", clip.Name(v.Name))
	}
	if err := v.load(); err != nil {
		return nil, err
	}
	return slices.Clone(v.lazy.cells), nil
}

// describe returns a noun phrase for the class of v.
func (v *Var) describe() string {
	switch {
	case v.Numeric() && v.Complex:
		return "a complex " + v.Class + " array"
	case v.Numeric():
		return "a " + v.Class + " array"
	}
	return describeClass(v.Class)
}

// Matrix returns a two-dimensional numeric array as a Dims[0]×Dims[1]
// matrix, converted to float64. Trailing dimensions equal to 1 are allowed;
// any other array of more than two dimensions is an error, as are empty,
// complex and non-numeric arrays. The matrix holds a fresh copy of the
// data, in gonum's row-major layout.
func (v *Var) Matrix() (*mat.Dense, error) {
	if err := v.check(); err != nil {
		return nil, err
	}
	for _, d := range v.Dims[2:] {
		if d != 1 {
			return nil, fmt.Errorf("matfile: variable %s has %d dimensions (%s); want a 2-D array for a matrix", clip.Name(v.Name), len(v.Dims), formatDims(v.Dims))
		}
	}
	r, c := v.Dims[0], v.Dims[1]
	if r == 0 || c == 0 {
		return nil, fmt.Errorf("matfile: variable %s is empty (%s); cannot make a matrix", clip.Name(v.Name), formatDims(v.Dims))
	}
	if err := v.load(); err != nil {
		return nil, err
	}
	colMajor := v.values()
	if c == 1 || r == 1 {
		return mat.NewDense(r, c, colMajor), nil
	}
	// The column-major data is the row-major data of the transpose.
	return mat.DenseCopyOf(mat.NewDense(c, r, colMajor).T()), nil
}

// Vector returns the elements of a numeric array with at most one
// dimension different from 1, such as an n×1 column, a 1×n row or a 1×1
// scalar, converted to float64. An empty array gives an empty slice.
// Complex and non-numeric arrays are an error.
func (v *Var) Vector() ([]float64, error) {
	if err := v.checkVector(); err != nil {
		return nil, err
	}
	return v.values(), nil
}

// checkVector returns an error unless v is a real numeric vector, whose
// data it then loads.
func (v *Var) checkVector() error {
	if err := v.check(); err != nil {
		return err
	}
	if v.n == 0 {
		return v.load()
	}
	long := 0
	for _, d := range v.Dims {
		if d != 1 {
			long++
		}
	}
	if long > 1 {
		return fmt.Errorf("matfile: variable %s is a %s array; want a vector (n×1, 1×n or 1×1)", clip.Name(v.Name), formatDims(v.Dims))
	}
	return v.load()
}

// Bounds of the int range as float64. Both are exact powers of two; valid
// values f satisfy minIntFloat <= f < maxIntFloat.
const (
	minIntFloat = float64(math.MinInt)
	maxIntFloat = -minIntFloat
)

// Ints returns the elements of a vector, as Vector does, converted to int.
// Every element must be an integer that an int can hold; otherwise the
// error names the first offending element (counting from 1) and its value.
// Values stored as 64-bit integers are converted exactly.
func (v *Var) Ints() ([]int, error) {
	if err := v.checkVector(); err != nil {
		return nil, err
	}
	out := make([]int, v.n)
	switch v.typ {
	case miINT64:
		for i := range out {
			x := int64(v.order.Uint64(v.re[8*i:]))
			if int64(int(x)) != x {
				return nil, fmt.Errorf("matfile: variable %s: element %d is %d, outside the range of int", clip.Name(v.Name), i+1, x)
			}
			out[i] = int(x)
		}
	case miUINT64:
		for i := range out {
			x := v.order.Uint64(v.re[8*i:])
			if x > math.MaxInt {
				return nil, fmt.Errorf("matfile: variable %s: element %d is %d, outside the range of int", clip.Name(v.Name), i+1, x)
			}
			out[i] = int(x)
		}
	default:
		for i, f := range v.values() {
			switch {
			case math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f):
				return nil, fmt.Errorf("matfile: variable %s: element %d is %v, not an integer", clip.Name(v.Name), i+1, f)
			case f < minIntFloat || f >= maxIntFloat:
				return nil, fmt.Errorf("matfile: variable %s: element %d is %v, outside the range of int", clip.Name(v.Name), i+1, f)
			}
			out[i] = int(f)
		}
	}
	return out, nil
}

// values returns the real part of a numeric array converted to float64,
// in column-major order.
func (v *Var) values() []float64 {
	dst := make([]float64, v.n)
	decode(dst, v.re, v.typ, v.order)
	if v.Class == "logical" {
		for i, f := range dst {
			if f != 0 {
				dst[i] = 1
			}
		}
	}
	return dst
}

// decode converts len(dst) values of numeric storage type typ and byte
// order bo from raw, which must hold enough bytes.
func decode(dst []float64, raw []byte, typ uint32, bo binary.ByteOrder) {
	switch typ {
	case miINT8:
		for i := range dst {
			dst[i] = float64(int8(raw[i]))
		}
	case miUINT8:
		for i := range dst {
			dst[i] = float64(raw[i])
		}
	case miINT16:
		for i := range dst {
			dst[i] = float64(int16(bo.Uint16(raw[2*i:])))
		}
	case miUINT16:
		for i := range dst {
			dst[i] = float64(bo.Uint16(raw[2*i:]))
		}
	case miINT32:
		for i := range dst {
			dst[i] = float64(int32(bo.Uint32(raw[4*i:])))
		}
	case miUINT32:
		for i := range dst {
			dst[i] = float64(bo.Uint32(raw[4*i:]))
		}
	case miSINGLE:
		for i := range dst {
			dst[i] = float64(math.Float32frombits(bo.Uint32(raw[4*i:])))
		}
	case miDOUBLE:
		for i := range dst {
			dst[i] = math.Float64frombits(bo.Uint64(raw[8*i:]))
		}
	case miINT64:
		for i := range dst {
			dst[i] = float64(int64(bo.Uint64(raw[8*i:])))
		}
	case miUINT64:
		for i := range dst {
			dst[i] = float64(bo.Uint64(raw[8*i:]))
		}
	}
}
