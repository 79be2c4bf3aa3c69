package matfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// File is the content of a MAT-file.
type File struct {
	// Header is the descriptive text of the file header, with trailing
	// spaces and NUL bytes removed, for example
	// "MATLAB 5.0 MAT-file, Platform: PCWIN, Created on: ...".
	Header string

	// Vars holds the named top-level variables in file order, numeric
	// or not.
	Vars []*Var

	// path is the file the content was read from, for error messages;
	// empty for Read.
	path string
}

// Var is one variable of a MAT-file.
type Var struct {
	// Name is the variable name.
	Name string

	// Class is the MATLAB class: "double", "single", "int8", "uint8",
	// "int16", "uint16", "int32", "uint32", "int64", "uint64" and
	// "logical" for the numeric classes; "char", "cell", "struct",
	// "object", "sparse", "function_handle" or "opaque" for the others,
	// and "unknown class N" for class numbers the format does not define.
	Class string

	// Dims holds the dimensions, at least two; nil for opaque objects,
	// whose element records none.
	Dims []int

	// Complex reports whether the array has an imaginary part.
	Complex bool

	// order is the byte order of the file.
	order binary.ByteOrder

	// typ and imTyp are the storage types of the real and imaginary
	// parts: numeric mi types. They are zero for non-numeric variables.
	typ, imTyp uint32

	// re and im hold the raw real and imaginary data, in column-major
	// order; im is nil for real arrays.
	re, im []byte

	// n is the number of elements, the product of Dims.
	n int
}

// Open reads the MAT-file at path. Errors are prefixed with "matfile: "
// and the path.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("matfile: %w", err)
	}
	defer f.Close()
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	file, err := read(f, size)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("matfile: %w", err)
		}
		return nil, fmt.Errorf("matfile: %s: %w", path, err)
	}
	file.path = path
	return file, nil
}

// Read reads a MAT-file from r, which it consumes to EOF. The whole input
// is held in memory while it is parsed; the raw data of numeric variables
// stays in memory until the File is no longer used. Errors are prefixed
// with "matfile: ".
func Read(r io.Reader) (*File, error) {
	size := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok {
		// bytes.Reader, bytes.Buffer and strings.Reader report the
		// number of unread bytes exactly.
		size = int64(l.Len())
	}
	file, err := read(r, size)
	if err != nil {
		return nil, fmt.Errorf("matfile: %w", err)
	}
	return file, nil
}

// read reads all of r, whose length is size if size >= 0, and parses it.
// It reads the header first, so that a v7.3 file is rejected without
// reading the rest of it.
func read(r io.Reader, size int64) (*File, error) {
	var buf bytes.Buffer
	if size >= 0 && size <= maxPrealloc {
		// The extra MinRead bytes let ReadFrom see EOF without
		// growing the buffer.
		buf.Grow(int(size) + bytes.MinRead)
	}
	if _, err := io.CopyN(&buf, r, headerLen); err != nil && err != io.EOF {
		return nil, err
	}
	if buf.Len() == headerLen {
		if isV73Text(buf.Bytes()) {
			return nil, errV73
		}
		if _, err := buf.ReadFrom(r); err != nil {
			return nil, err
		}
	}
	return parse(buf.Bytes())
}

// maxPrealloc is the largest reported input size for which Read and Open
// allocate the whole buffer up front. Larger inputs grow the buffer as
// data arrives.
const maxPrealloc = 1 << 30

// Lookup returns the variable with the given name, numeric or not; if
// several have that name, the first. If there is none, the error lists the
// numeric variables the file holds.
func (f *File) Lookup(name string) (*Var, error) {
	for _, v := range f.Vars {
		if v.Name == name {
			return v, nil
		}
	}
	var names []string
	for _, v := range f.Vars {
		if v.Numeric() {
			names = append(names, v.Name)
		}
	}
	avail := "the file has no numeric variables"
	if len(names) > 0 {
		avail = "numeric variables: " + strings.Join(names, ", ")
	}
	prefix := "matfile: "
	if f.path != "" {
		prefix += f.path + ": "
	}
	return nil, fmt.Errorf("%sno variable %q (%s)", prefix, name, avail)
}
