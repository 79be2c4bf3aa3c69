package npy

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// check reports whether a is a consistent array: non-nil, with
// non-negative dimensions whose product is len(a.Data).
func (a *Array) check() error {
	if a == nil {
		return errors.New("nil Array")
	}
	n, err := shapeCount(a.Shape)
	if err != nil {
		return err
	}
	if n != len(a.Data) {
		return fmt.Errorf("array of shape %s needs %d values, Data has %d", formatShapeShort(a.Shape), n, len(a.Data))
	}
	return nil
}

// Matrix returns the array as a matrix. The array must have exactly two
// dimensions, both non-zero; the matrix has Shape[0] rows and Shape[1]
// columns.
//
// The returned matrix uses a.Data as its backing storage, as mat.NewDense
// does: changes to one are visible in the other.
func (a *Array) Matrix() (*mat.Dense, error) {
	if err := a.check(); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	if len(a.Shape) != 2 {
		return nil, fmt.Errorf("npy: want a 2-D array for a matrix, got shape %s (%d dimensions)", formatShapeShort(a.Shape), len(a.Shape))
	}
	r, c := a.Shape[0], a.Shape[1]
	if r == 0 || c == 0 {
		return nil, fmt.Errorf("npy: cannot make a matrix from an empty array of shape %s", formatShape(a.Shape))
	}
	return mat.NewDense(r, c, a.Data), nil
}

// Vector returns the elements of a one-dimensional array, that is one of
// shape (n,). Arrays with any other number of dimensions, including
// scalars and (n, 1) or (1, n) matrices, are an error.
//
// The returned slice is a.Data itself, not a copy.
func (a *Array) Vector() ([]float64, error) {
	if err := a.check(); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	if len(a.Shape) != 1 {
		return nil, fmt.Errorf("npy: want a 1-D array for a vector, got shape %s (%d dimensions)", formatShapeShort(a.Shape), len(a.Shape))
	}
	return a.Data, nil
}

// Bounds of the int range as float64. Both are exact powers of two; valid
// values v satisfy minIntFloat <= v < maxIntFloat.
const (
	minIntFloat = float64(math.MinInt)
	maxIntFloat = -minIntFloat
)

// Ints returns the elements of the array, in row-major order, converted to
// int. Every element must be an integer value representable as an int;
// otherwise the error names the first offending element's index and value.
// NaN and infinite values are always an error. An array read from 64-bit
// integers (DType i8 or u8) must hold values below 2⁵³ in magnitude: Data
// holds them rounded to float64, so 2⁵³ and 2⁵³ + 1 would become one.
func (a *Array) Ints() ([]int, error) {
	if err := a.check(); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	wide := strings.HasSuffix(a.DType, "i8") || strings.HasSuffix(a.DType, "u8")
	out := make([]int, len(a.Data))
	for i, v := range a.Data {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v):
			return nil, fmt.Errorf("npy: value at %s is %v, not an integer", a.position(i), v)
		case wide && math.Abs(v) >= 1<<53:
			return nil, fmt.Errorf("npy: value at %s is about %.17g, beyond 2^53: a 64-bit integer that large may have been rounded when read (use values within ±9007199254740991)", a.position(i), v)
		case v < minIntFloat || v >= maxIntFloat:
			return nil, fmt.Errorf("npy: value at %s is %v, outside the range of int", a.position(i), v)
		}
		out[i] = int(v)
	}
	return out, nil
}

// position describes the element at row-major index i for error messages:
// "index 7", or "index 7 (element [1 3])" for arrays of two or more
// dimensions.
func (a *Array) position(i int) string {
	s := "index " + strconv.Itoa(i)
	if len(a.Shape) < 2 || len(a.Shape) > 8 {
		return s
	}
	idx := make([]string, len(a.Shape))
	for k := len(a.Shape) - 1; k >= 0; k-- {
		d := a.Shape[k]
		idx[k] = strconv.Itoa(i % d)
		i /= d
	}
	return s + " (element [" + strings.Join(idx, " ") + "])"
}
