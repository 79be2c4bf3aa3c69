package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestWriteReadRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		shape []int
	}{
		{"scalar", []int{}},
		{"nil shape", nil},
		{"empty", []int{0}},
		{"one", []int{1}},
		{"vector", []int{7}},
		{"matrix", []int{3, 4}},
		{"3-D", []int{2, 3, 4}},
		{"empty matrix", []int{0, 4}},
		{"empty 3-D", []int{3, 0, 2}},
		{"unit dims", []int{1, 1, 5, 1}},
		{"large", []int{300, 301}}, // more than one write chunk
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, _ := shapeCount(tt.shape)
			data := make([]float64, n)
			for i := range data {
				data[i] = float64(i)*1.25 - 3
			}
			if n > 2 {
				data[1] = math.NaN()
				data[2] = math.Inf(-1)
			}
			var buf bytes.Buffer
			if err := Write(&buf, tt.shape, data); err != nil {
				t.Fatal(err)
			}
			b := buf.Bytes()
			if string(b[:8]) != magic+"\x01\x00" {
				t.Errorf("preamble %q", b[:8])
			}
			hlen := int(binary.LittleEndian.Uint16(b[8:]))
			if (10+hlen)%64 != 0 {
				t.Errorf("data offset %d is not a multiple of 64", 10+hlen)
			}
			if b[10+hlen-1] != '\n' {
				t.Errorf("header does not end with a newline: %q", b[10:10+hlen])
			}
			if len(b) != 10+hlen+8*n {
				t.Errorf("file length %d, want %d", len(b), 10+hlen+8*n)
			}
			for _, r := range []io.Reader{bytes.NewReader(b), onlyReader{bytes.NewReader(b)}} {
				a, err := Read(r)
				if err != nil {
					t.Fatal(err)
				}
				wantShape := tt.shape
				if wantShape == nil {
					wantShape = []int{}
				}
				if !sameInts(a.Shape, wantShape) || a.Shape == nil {
					t.Errorf("Shape = %#v, want %v", a.Shape, wantShape)
				}
				if !sameFloats(a.Data, data) {
					t.Errorf("Data differs")
				}
				if a.DType != "<f8" {
					t.Errorf("DType = %q", a.DType)
				}
			}
		})
	}
}

func TestWriteHeaderText(t *testing.T) {
	// The header matches numpy.save byte for byte.
	tests := []struct {
		shape []int
		want  string
	}{
		{[]int{}, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }"},
		{[]int{3}, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }" + strings.Repeat(" ", 20)},
		{[]int{12, 5}, "{'descr': '<f8', 'fortran_order': False, 'shape': (12, 5), }" + strings.Repeat(" ", 19)},
	}
	for _, tt := range tests {
		b, err := encodeHeader(tt.shape)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.TrimRight(string(b[10:]), " \n")
		if text != strings.TrimRight(tt.want, " ") {
			t.Errorf("shape %v: header %q, want %q", tt.shape, text, tt.want)
		}
		if !strings.HasPrefix(string(b[10:]), tt.want) {
			t.Errorf("shape %v: header %q lacks growth padding of %q", tt.shape, b[10:], tt.want)
		}
	}
}

func TestWriteVersion2(t *testing.T) {
	// A header longer than 65535 bytes needs version 2.0.
	shape := make([]int, 30000)
	for i := range shape {
		shape[i] = 1
	}
	shape[0] = 2
	var buf bytes.Buffer
	if err := Write(&buf, shape, []float64{1.5, -2}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if string(b[:8]) != magic+"\x02\x00" {
		t.Fatalf("preamble %q, want version 2.0", b[:8])
	}
	hlen := int(binary.LittleEndian.Uint32(b[8:]))
	if hlen <= math.MaxUint16 || (12+hlen)%64 != 0 {
		t.Errorf("header length %d", hlen)
	}
	a := mustRead(t, b)
	if !sameInts(a.Shape, shape) || !sameFloats(a.Data, []float64{1.5, -2}) {
		t.Errorf("round trip failed: %d dims, data %v", len(a.Shape), a.Data)
	}

	// Beyond the 1 MiB header limit, writing fails.
	huge := make([]int, 400000)
	for i := range huge {
		huge[i] = 1
	}
	err := Write(io.Discard, huge, []float64{0})
	if err == nil || !strings.Contains(err.Error(), "header longer than the 1048576-byte limit") {
		t.Errorf("err = %v", err)
	}
}

// failWriter accepts n bytes and then fails.
type failWriter struct{ n int }

var errWrite = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errWrite
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name  string
		shape []int
		data  []float64
		want  string
	}{
		{"too few values", []int{3, 4}, make([]float64, 10), "npy: shape (3, 4) needs 12 values, data has 10"},
		{"too many values", []int{2}, make([]float64, 3), "npy: shape (2,) needs 2 values, data has 3"},
		{"scalar needs one", nil, nil, "npy: shape () needs 1 values, data has 0"},
		{"negative", []int{2, -1}, nil, "npy: shape entry 1 is negative: -1"},
		{"overflow", []int{1 << 40, 1 << 40}, nil, "number of elements overflows"},
	}
	for _, tt := range tests {
		err := Write(io.Discard, tt.shape, tt.data)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	for _, n := range []int{0, 50, 200} {
		err := Write(&failWriter{n: n}, []int{100}, make([]float64, 100))
		if !errors.Is(err, errWrite) || !strings.HasPrefix(err.Error(), "npy: writing ") {
			t.Errorf("failing writer after %d bytes: err = %v", n, err)
		}
	}
}

// dirEntries returns the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npy")
	if err := WriteFile(path, []int{2, 2}, []float64{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	a, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sameFloats(a.Data, []float64{1, 2, 3, 4}) {
		t.Errorf("Data = %v", a.Data)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}

	// Overwriting keeps the file's permissions.
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteVector(path, []float64{5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("after overwrite: mode %v, err %v", fi.Mode(), err)
	}
	a, err = ReadFile(path)
	if err != nil || !sameInts(a.Shape, []int{3}) || !sameFloats(a.Data, []float64{5, 6, 7}) {
		t.Errorf("after overwrite: %v, %v", a, err)
	}
	if names := dirEntries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v, want only x.npy", names)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npy")

	// A missing directory fails and creates nothing.
	missing := filepath.Join(dir, "no", "such", "dir", "x.npy")
	err := WriteFile(missing, []int{1}, []float64{1})
	if err == nil || !strings.HasPrefix(err.Error(), "npy: "+missing+": ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory was created: %v", err)
	}

	// A length mismatch fails before anything is written.
	err = WriteFile(path, []int{3, 4}, make([]float64, 11))
	if err == nil || !strings.Contains(err.Error(), "npy: "+path+": shape (3, 4) needs 12 values, data has 11") {
		t.Errorf("mismatch: err = %v", err)
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Errorf("after failed write, directory holds %v", names)
	}

	// An existing file survives failed writes unchanged.
	if err := WriteVector(path, []float64{1, 2}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		after, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(before, after) {
			t.Errorf("%s: file changed (err %v)", what, err)
		}
		if names := dirEntries(t, dir); len(names) != 1 || names[0] != "x.npy" {
			t.Errorf("%s: directory holds %v, want only x.npy", what, names)
		}
	}
	if err := WriteFile(path, []int{2}, []float64{1}); err == nil {
		t.Error("mismatch: no error")
	}
	check("mismatch")

	// A failure midway through writing removes the temporary file.
	boom := errors.New("boom")
	err = writeAtomic(path, func(w io.Writer) error {
		w.Write(make([]byte, 1<<17))
		return boom
	})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "npy: "+path+": ") {
		t.Errorf("midway failure: err = %v", err)
	}
	check("midway failure")

	// So does a panic.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		writeAtomic(path, func(w io.Writer) error {
			w.Write([]byte("partial"))
			panic("boom")
		})
	}()
	check("panic")

	// A panicking matrix, a matrix with a wrong length and a nil matrix.
	func() {
		defer func() { recover() }()
		WriteMatrix(path, panicMatrix{})
	}()
	check("panicking matrix")
	if err := WriteMatrix(path, nil); err == nil || !strings.Contains(err.Error(), "nil matrix") {
		t.Errorf("nil matrix: err = %v", err)
	}
	var nilDense *mat.Dense
	if err := WriteMatrix(path, nilDense); err == nil || !strings.Contains(err.Error(), "nil matrix") {
		t.Errorf("nil *mat.Dense: err = %v", err)
	}
	check("nil matrix")

	// A directory at path cannot be replaced.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteVector(sub, []float64{1}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: err = %v", err)
	}
	if err := WriteVector(sub+"/", []float64{1}); err == nil {
		t.Error("trailing slash: no error")
	}
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	check("directory")
}

// panicMatrix is a mat.Matrix whose At panics.
type panicMatrix struct{}

func (panicMatrix) Dims() (int, int)    { return 2, 2 }
func (panicMatrix) At(i, j int) float64 { panic("At") }
func (m panicMatrix) T() mat.Matrix     { return mat.Transpose{Matrix: m} }

func TestWriteMatrix(t *testing.T) {
	dir := t.TempDir()
	m := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	tests := []struct {
		name string
		m    mat.Matrix
		want []float64
	}{
		{"dense", m, []float64{1, 2, 3, 4, 5, 6}},
		{"transpose", m.T(), []float64{1, 4, 2, 5, 3, 6}},
		{"slice", m.Slice(0, 2, 1, 3), []float64{2, 3, 5, 6}},
		{"diagonal", mat.NewDiagDense(2, []float64{7, 8}), []float64{7, 0, 0, 8}},
		{"empty", &mat.Dense{}, []float64{}},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name+".npy")
		if err := WriteMatrix(path, tt.m); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		a, err := ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		r, c := tt.m.Dims()
		if !sameInts(a.Shape, []int{r, c}) || !sameFloats(a.Data, tt.want) {
			t.Errorf("%s: got %v %v, want (%d, %d) %v", tt.name, a.Shape, a.Data, r, c, tt.want)
		}
		if r > 0 {
			got, err := a.Matrix()
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(got, tt.m) {
				t.Errorf("%s: Matrix() = %v", tt.name, mat.Formatted(got))
			}
		}
	}
}
