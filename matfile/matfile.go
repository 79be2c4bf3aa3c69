package matfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/dadil/dadil/internal/clip"
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

	// class is the class number (mxCELL, mxDOUBLE, …).
	class uint32

	// typ and imTyp are the storage types of the real and imaginary
	// parts: numeric mi types. They are zero for non-numeric variables.
	typ, imTyp uint32

	// re and im hold the raw real and imaginary data, in column-major
	// order; im is nil for real arrays.
	re, im []byte

	// n is the number of elements, the product of Dims.
	n int

	// lazy holds what is parsed on first use, or is nil.
	lazy *lazy
}

// lazy is what Read leaves to be parsed on first use: the data of a
// compressed numeric array, whose header alone Read decompresses, and the
// cells of a cell array.
type lazy struct {
	once  sync.Once
	err   error
	cells []*Var

	// file names the file in errors.
	file *File

	// mem is the source of an uncompressed variable, positioned after
	// its header, and end the end of its element.
	mem *src
	end int

	// z is the compressed data of the miCOMPRESSED element at file
	// offset zoff that holds a compressed variable.
	z    []byte
	zoff int
}

// load parses, once, what Read left for later; see lazy. It sets the data
// of a compressed numeric array and the cells of a cell array.
func (v *Var) load() error {
	l := v.lazy
	if l == nil {
		return nil
	}
	l.once.Do(func() {
		if err := v.parseLazy(); err != nil {
			l.err = fmt.Errorf("%s%w", l.file.prefix(), err)
		}
	})
	return l.err
}

// parseLazy does the work of load.
func (v *Var) parseLazy() error {
	l := v.lazy
	var (
		s   src
		end = l.end
		re  element
	)
	if l.mem != nil {
		s = *l.mem
	} else {
		// Decompress the element again, from its start: the header
		// is the one Read parsed, and the data follows it.
		zr, err := resetZlib(nil, l.z, l.zoff)
		if err != nil {
			return err
		}
		zs, err := openCompressed(v.order, zr, l.zoff)
		if err != nil {
			return err
		}
		s, end = *zs, zs.size
		if _, re, err = s.header(end, ""); err != nil {
			return err
		}
	}
	var err error
	if v.class == mxCELL {
		l.cells, err = s.cells(v, end)
	} else {
		err = s.body(v, re, end)
	}
	if err == nil && s.zr != nil {
		err = s.finish(end)
	}
	return err
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
// is held in memory until the File is no longer used: uncompressed data is
// used in place, and compressed variables are decompressed from it when
// their data is first used (see the package documentation). Errors are
// prefixed with "matfile: ".
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

// ErrNotFound is matched, with errors.Is, by the error of Lookup for a
// name the file does not hold.
var ErrNotFound = errors.New("matfile: no such variable")

// notFound is the error of Lookup for a missing variable.
type notFound struct{ msg string }

func (e *notFound) Error() string        { return e.msg }
func (e *notFound) Is(target error) bool { return target == ErrNotFound }

// Lookup returns the variable with the given name, numeric or not; if
// several have that name, the first. A name with a cell index in braces,
// MATLAB's notation "c{3}", returns that cell of cell array c (see
// Var.Cells), counting from 1 in column-major order. If the file holds no
// such variable, the error matches ErrNotFound and lists the numeric
// variables the file holds; an index past the last cell, or a variable c
// that is not a cell array, is another error.
func (f *File) Lookup(name string) (*Var, error) {
	for _, v := range f.Vars {
		if v.Name == name {
			return v, nil
		}
	}
	if base, k, ok := cellRef(name); ok {
		for _, v := range f.Vars {
			if v.Name != base {
				continue
			}
			cells, err := v.Cells()
			if err != nil {
				return nil, err
			}
			if k > len(cells) {
				return nil, fmt.Errorf("%svariable %s has %d cells; there is no %s", f.prefix(), clip.Name(base), len(cells), clip.Name(name))
			}
			return cells[k-1], nil
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
		avail = "numeric variables: " + clip.List(names, 12)
	}
	return nil, &notFound{fmt.Sprintf("%sno variable %s (%s)", f.prefix(), clip.Quote(name), avail)}
}

// cellRef splits a cell reference "c{3}" into the variable name and the
// index, which must be a positive decimal number.
func cellRef(name string) (base string, k int, ok bool) {
	i := strings.IndexByte(name, '{')
	if i <= 0 || !strings.HasSuffix(name, "}") {
		return "", 0, false
	}
	digits := name[i+1 : len(name)-1]
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", 0, false
	}
	k, err := strconv.Atoi(digits)
	if err != nil || k < 1 {
		return "", 0, false
	}
	return name[:i], k, true
}

// prefix returns the prefix of the errors about f: "matfile: " and the
// path, if f was read by Open.
func (f *File) prefix() string {
	if f.path != "" {
		return "matfile: " + f.path + ": "
	}
	return "matfile: "
}
