package npy

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/atomicfile"
)

// Write writes data, the elements of an array with the given shape in
// row-major order, to w as a .npy file of little-endian float64 ('<f8') in
// C order. It uses format version 1.0, or 2.0 if the header does not fit in
// version 1.0, and pads the header so the data starts at a multiple of 64
// bytes, as numpy does. A nil or empty shape writes a scalar, which needs
// exactly one value.
//
// The product of shape must equal len(data). NaN and infinite values are
// written as they are. Errors are prefixed with "npy: ".
func Write(w io.Writer, shape []int, data []float64) error {
	hdr, err := prepare(shape, data)
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	if err := writeNPY(w, hdr, data); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}

// WriteFile writes data, the elements of an array with the given shape in
// row-major order, to the file at path in the format produced by Write.
//
// The write is atomic: the file is written to a temporary file in the same
// directory, synced to stable storage and renamed to path. On error, no
// file at path is created or changed and the temporary file is removed. A
// new file gets permissions 0644; an existing file keeps its permissions.
// Errors are prefixed with "npy: " and the path.
func WriteFile(path string, shape []int, data []float64) error {
	hdr, err := prepare(shape, data)
	if err != nil {
		return fmt.Errorf("npy: %s: %w", path, err)
	}
	return writeAtomic(path, func(w io.Writer) error {
		return writeNPY(w, hdr, data)
	})
}

// WriteMatrix writes m to the file at path as a 2-D .npy array of shape
// (r, c), where r and c are the dimensions of m. The write is atomic, as
// described for WriteFile.
func WriteMatrix(path string, m mat.Matrix) error {
	if d, ok := m.(*mat.Dense); m == nil || (ok && d == nil) {
		return fmt.Errorf("npy: %s: nil matrix", path)
	}
	r, c := m.Dims()
	var data []float64
	if rm, ok := m.(mat.RawMatrixer); ok {
		if raw := rm.RawMatrix(); raw.Rows == r && raw.Cols == c && raw.Stride == c && len(raw.Data) >= r*c {
			data = raw.Data[:r*c]
		}
	}
	if data == nil {
		data = make([]float64, r*c)
		for i := range r {
			for j := range c {
				data[i*c+j] = m.At(i, j)
			}
		}
	}
	return WriteFile(path, []int{r, c}, data)
}

// WriteVector writes v to the file at path as a 1-D .npy array of shape
// (len(v),). The write is atomic, as described for WriteFile.
func WriteVector(path string, v []float64) error {
	return WriteFile(path, []int{len(v)}, v)
}

// prepare validates shape against data and returns the encoded header.
func prepare(shape []int, data []float64) ([]byte, error) {
	n, err := shapeCount(shape)
	if err != nil {
		return nil, err
	}
	if n != len(data) {
		return nil, fmt.Errorf("shape %s needs %d values, data has %d", formatShapeShort(shape), n, len(data))
	}
	if n > math.MaxInt64/8 {
		return nil, fmt.Errorf("shape %s is too large", formatShapeShort(shape))
	}
	return encodeHeader(shape)
}

// writeNPY writes a complete .npy file: the encoded header hdr, then data
// as little-endian float64.
func writeNPY(w io.Writer, hdr []byte, data []float64) error {
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("writing header: %w", err)
	}
	buf := make([]byte, min(8*len(data), chunkSize))
	for len(data) > 0 {
		n := min(len(data), len(buf)/8)
		for i, v := range data[:n] {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
		}
		if _, err := w.Write(buf[:8*n]); err != nil {
			return fmt.Errorf("writing data: %w", err)
		}
		data = data[n:]
	}
	return nil
}

// writeAtomic creates or replaces the file at path with the bytes written
// by fill, through internal/atomicfile: path is either unchanged or
// complete, also when fill panics. A file that is replaced keeps its
// permissions. Returned errors are prefixed with "npy: " and path.
func writeAtomic(path string, fill func(io.Writer) error) error {
	if _, base := filepath.Split(path); base == "" {
		return fmt.Errorf("npy: %s: path names a directory", path)
	}
	if err := atomicfile.WriteFunc(path, 0o644, fill); err != nil {
		if strings.HasPrefix(err.Error(), path) {
			return fmt.Errorf("npy: %w", err) // it names the file
		}
		return fileError(path, err)
	}
	return nil
}
