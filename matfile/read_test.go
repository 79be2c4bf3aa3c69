package matfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/bombtest"
)

// layouts returns every combination of byte order, compression and small
// element use.
func layouts() []layout {
	var ls []layout
	for _, bo := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, compress := range []bool{false, true} {
			for _, noSmall := range []bool{false, true} {
				ls = append(ls, layout{order: bo, compress: compress, noSmall: noSmall})
			}
		}
	}
	return ls
}

func (l layout) String() string {
	return fmt.Sprintf("%v/compress=%v/noSmall=%v", l.order, l.compress, l.noSmall)
}

func TestRoundTripNumeric(t *testing.T) {
	shapes := [][]int{{3, 4}, {1, 1}, {5, 1}, {1, 3}, {2, 3, 1}, {1, 2}}
	for _, l := range layouts() {
		for _, nc := range numericClasses {
			for _, downcast := range []bool{false, true} {
				for _, dims := range shapes {
					name := fmt.Sprintf("%v/%s/downcast=%v/%s", l, nc.name, downcast, formatDims(dims))
					t.Run(name, func(t *testing.T) {
						n, _ := count(dims)
						vals := sampleValues(n, nc.lo, nc.hi, nc.fraction, nc.class == mxSINGLE)
						tv := testVar{name: "v", class: nc.class, dims: dims, re: vals, downcast: downcast}
						f := mustRead(t, buildMAT(l, tv))
						checkVar(t, f, "v", nc.name, dims, vals)
					})
				}
			}
		}
	}
}

// checkVar checks that f has a variable name of the given class and
// dimensions holding the column-major values vals, through every
// accessor that applies.
func checkVar(t *testing.T, f *File, name, class string, dims []int, vals []float64) {
	t.Helper()
	v, err := f.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if v.Class != class || !slices.Equal(v.Dims, dims) || v.Complex {
		t.Fatalf("got class %s dims %v complex %v, want %s %v false", v.Class, v.Dims, v.Complex, class, dims)
	}
	if !v.Numeric() {
		t.Fatal("not numeric")
	}
	m, err := v.Matrix()
	if err != nil {
		t.Fatalf("Matrix: %v", err)
	}
	r, c := m.Dims()
	if r != dims[0] || c != dims[1] {
		t.Fatalf("Matrix is %d×%d, want %v", r, c, dims)
	}
	if got, want := mat.DenseCopyOf(m).RawMatrix().Data, rowMajor(r, c, vals); !sameFloats(got, want) {
		t.Fatalf("Matrix data %v, want %v", got, want)
	}
	long := 0
	for _, d := range dims {
		if d != 1 {
			long++
		}
	}
	vec, err := v.Vector()
	if long > 1 {
		if err == nil {
			t.Fatal("Vector of a matrix succeeded")
		}
		return
	}
	if err != nil {
		t.Fatalf("Vector: %v", err)
	}
	if !sameFloats(vec, vals) {
		t.Fatalf("Vector %v, want %v", vec, vals)
	}
	ints, err := v.Ints()
	integral := true
	for _, x := range vals {
		integral = integral && x == math.Trunc(x) && math.Abs(x) < 1<<62
	}
	if !integral {
		if err == nil {
			t.Fatal("Ints of fractions succeeded")
		}
		return
	}
	if err != nil {
		t.Fatalf("Ints: %v", err)
	}
	for i, x := range vals {
		if float64(ints[i]) != x {
			t.Fatalf("Ints[%d] = %d, want %v", i, ints[i], x)
		}
	}
}

func TestStorageTypes(t *testing.T) {
	// A double array may be stored in any numeric type; values are
	// converted from the storage type.
	tests := []struct {
		store uint32
		vals  []float64
	}{
		{miINT8, []float64{-128, 127, 0, -1}},
		{miUINT8, []float64{0, 255, 1, 2}},
		{miINT16, []float64{-32768, 32767, 0, 5}},
		{miUINT16, []float64{0, 65535, 7, 8}},
		{miINT32, []float64{math.MinInt32, math.MaxInt32, 0, 1}},
		{miUINT32, []float64{0, math.MaxUint32, 3, 4}},
		{miSINGLE, []float64{0.5, -1.25, float64(float32(3e38)), 1}},
		{miDOUBLE, []float64{0.1, -1e300, math.Inf(1), math.NaN()}},
		{miINT64, []float64{-(1 << 53), 1 << 53, 0, 1}},
		{miUINT64, []float64{0, 1 << 53, 1 << 60, 1}},
	}
	for _, l := range layouts() {
		for _, tc := range tests {
			for _, class := range []uint32{mxDOUBLE, mxSINGLE, mxINT32} {
				t.Run(fmt.Sprintf("%v/%s/%s", l, typeName(tc.store), className(class)), func(t *testing.T) {
					tv := testVar{name: "x", class: class, dims: []int{2, 2}, re: tc.vals, store: tc.store}
					f := mustRead(t, buildMAT(l, tv))
					v := f.Vars[0]
					if v.Class != className(class) || v.typ != tc.store {
						t.Fatalf("class %s storage %s", v.Class, typeName(v.typ))
					}
					m, err := v.Matrix()
					if err != nil {
						t.Fatal(err)
					}
					if got := m.RawMatrix().Data; !sameFloats(got, rowMajor(2, 2, tc.vals)) {
						t.Fatalf("got %v, want %v", got, rowMajor(2, 2, tc.vals))
					}
				})
			}
		}
	}
}

func TestInts64Exact(t *testing.T) {
	e := enc{bo: binary.LittleEndian}
	mk := func(typ uint32, raw ...uint64) []byte {
		var d []byte
		for _, x := range raw {
			d = e.bo.AppendUint64(d, x)
		}
		var b []byte
		b = append(b, e.flags(mxINT64, false, false, false)...)
		b = append(b, e.dimsElem([]int{len(raw), 1})...)
		b = append(b, e.elem(miINT8, []byte("big"))...)
		b = append(b, e.elem(typ, d)...)
		return append(header(e.bo, ""), e.elem(miMATRIX, b)...)
	}
	tests := []struct {
		name    string
		file    []byte
		want    []int
		wantErr string
	}{
		{"int64", mk(miINT64, 1<<62+1, uint64(math.MaxUint64-2)), []int{1<<62 + 1, -3}, ""},
		{"uint64", mk(miUINT64, 1<<63-1, 5), []int{math.MaxInt64, 5}, ""},
		{"uint64 too big", mk(miUINT64, 5, 1<<63), nil, "element 2 is 9223372036854775808, outside the range of int"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mustRead(t, tc.file).Vars[0].Ints()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, %v, want %v", got, err, tc.want)
			}
		})
	}
}

func TestAccessorErrors(t *testing.T) {
	e := enc{bo: binary.LittleEndian}
	vars := []testVar{
		{name: "m", class: mxDOUBLE, dims: []int{2, 2}, re: []float64{1, 2, 3, 4}},
		{name: "nd", class: mxDOUBLE, dims: []int{2, 1, 2}, re: []float64{1, 2, 3, 4}},
		{name: "empty", class: mxDOUBLE, dims: []int{0, 3}},
		{name: "frac", class: mxDOUBLE, dims: []int{3, 1}, re: []float64{1, 2.5, 3}},
		{name: "nan", class: mxDOUBLE, dims: []int{1, 2}, re: []float64{1, math.NaN()}},
		{name: "huge", class: mxDOUBLE, dims: []int{1, 1}, re: []float64{1e300}},
		{name: "z", class: mxDOUBLE, dims: []int{1, 2}, re: []float64{1, 2}, im: []float64{3, 4}},
		e.cellOfChar("imgNames", "a", "bc"),
		e.charVar("s", "héllo"),
		e.structVar("st"),
		{name: "sp", class: mxSPARSE, dims: []int{3, 3}},
		{name: "fh", class: mxFUNCTION, dims: []int{1, 1}},
		{name: "odd", class: 42, dims: []int{1, 1}},
	}
	f := mustRead(t, buildMAT(layout{}, vars...))
	tests := []struct {
		name, method, want string
	}{
		{"m", "Vector", "matfile: variable m is a 2x2 array; want a vector (n×1, 1×n or 1×1)"},
		{"m", "Ints", "matfile: variable m is a 2x2 array; want a vector"},
		{"nd", "Matrix", "matfile: variable nd has 3 dimensions (2x1x2); want a 2-D array for a matrix"},
		{"empty", "Matrix", "matfile: variable empty is empty (0x3); cannot make a matrix"},
		{"frac", "Ints", "matfile: variable frac: element 2 is 2.5, not an integer"},
		{"nan", "Ints", "matfile: variable nan: element 2 is NaN, not an integer"},
		{"huge", "Ints", "matfile: variable huge: element 1 is 1e+300, outside the range of int"},
		{"z", "Matrix", "matfile: variable z is a complex double array; only real arrays are supported"},
		{"z", "Vector", "complex"},
		{"imgNames", "Matrix", "matfile: variable imgNames is a cell array, not a numeric array"},
		{"imgNames", "Ints", "matfile: variable imgNames is a cell array, not a numeric array"},
		{"s", "Vector", "matfile: variable s is a char array, not a numeric array"},
		{"st", "Matrix", "matfile: variable st is a struct array, not a numeric array"},
		{"sp", "Matrix", "matfile: variable sp is a sparse array, not a numeric array"},
		{"fh", "Matrix", "matfile: variable fh is a function handle, not a numeric array"},
		{"odd", "Matrix", "matfile: variable odd is of unknown class 42, not a numeric array"},
	}
	for _, tc := range tests {
		t.Run(tc.name+"/"+tc.method, func(t *testing.T) {
			v, err := f.Lookup(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			switch tc.method {
			case "Matrix":
				_, err = v.Matrix()
			case "Vector":
				_, err = v.Vector()
			case "Ints":
				_, err = v.Ints()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want %q", err, tc.want)
			}
		})
	}

	// The empty array is still a vector of no elements.
	v, _ := f.Lookup("empty")
	if vec, err := v.Vector(); err != nil || len(vec) != 0 {
		t.Fatalf("Vector of empty: %v, %v", vec, err)
	}
}

func TestNonNumericVariables(t *testing.T) {
	for _, l := range layouts() {
		t.Run(l.String(), func(t *testing.T) {
			e := enc{bo: l.order, noSmall: l.noSmall}
			b := buildMAT(l,
				testVar{name: "before", class: mxDOUBLE, dims: []int{1, 2}, re: []float64{1, 2}},
				e.cellOfChar("imgNames", "amazon_back_pack_frame_0001", "amazon_bike_frame_0002"),
				e.charVar("title", "Ünïcode"),
				e.structVar("opts"),
			)
			op := e.opaqueElem("str")
			if l.compress {
				op = e.compressElem(op)
			}
			b = append(b, op...)
			b = append(b, buildMAT(l, testVar{name: "after", class: mxUINT8, dims: []int{2, 1}, re: []float64{7, 8}})[headerLen:]...)
			f := mustRead(t, b)
			if got, want := varNames(f), []string{"before", "imgNames", "title", "opts", "str", "after"}; !slices.Equal(got, want) {
				t.Fatalf("variables %v, want %v", got, want)
			}
			classes := []string{"double", "cell", "char", "struct", "opaque", "uint8"}
			dims := [][]int{{1, 2}, {2, 1}, {1, 7}, {1, 1}, nil, {2, 1}}
			for i, v := range f.Vars {
				if v.Class != classes[i] || !slices.Equal(v.Dims, dims[i]) {
					t.Errorf("%s: class %s dims %v, want %s %v", v.Name, v.Class, v.Dims, classes[i], dims[i])
				}
				if v.Numeric() != (i == 0 || i == 5) {
					t.Errorf("%s: Numeric() = %v", v.Name, v.Numeric())
				}
			}
			got, err := f.Vars[5].Ints()
			if err != nil || !slices.Equal(got, []int{7, 8}) {
				t.Fatalf("after: %v, %v", got, err)
			}
		})
	}
}

func TestLogicalAndGlobal(t *testing.T) {
	for _, l := range layouts() {
		t.Run(l.String(), func(t *testing.T) {
			b := buildMAT(l,
				testVar{name: "mask", class: mxUINT8, dims: []int{2, 2}, re: []float64{1, 0, 0, 1}, logical: true},
				testVar{name: "g", class: mxDOUBLE, dims: []int{1, 1}, re: []float64{2.5}, global: true},
			)
			f := mustRead(t, b)
			checkVar(t, f, "mask", "logical", []int{2, 2}, []float64{1, 0, 0, 1})
			checkVar(t, f, "g", "double", []int{1, 1}, []float64{2.5})
		})
	}
}

func TestComplexSkipsImaginaryPart(t *testing.T) {
	// A complex variable is listed, and the variables after it are read.
	for _, l := range layouts() {
		t.Run(l.String(), func(t *testing.T) {
			b := buildMAT(l,
				testVar{name: "z", class: mxDOUBLE, dims: []int{1, 3}, re: []float64{1, 2, 3}, im: []float64{0, -1, 0.5}},
				testVar{name: "y", class: mxINT16, dims: []int{1, 1}, re: []float64{-4}},
			)
			f := mustRead(t, b)
			if !f.Vars[0].Complex || !f.Vars[0].Numeric() {
				t.Fatal("z not complex numeric")
			}
			checkVar(t, f, "y", "int16", []int{1, 1}, []float64{-4})
		})
	}
}

func TestLookup(t *testing.T) {
	e := enc{bo: binary.LittleEndian}
	b := buildMAT(layout{},
		testVar{name: "fts", class: mxDOUBLE, dims: []int{1, 1}, re: []float64{1}},
		e.cellOfChar("imgNames", "a"),
		testVar{name: "labels", class: mxDOUBLE, dims: []int{1, 1}, re: []float64{1}},
	)
	f := mustRead(t, b)
	_, err := f.Lookup("feas")
	want := `matfile: no variable "feas" (numeric variables: fts, labels)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}

	// Through Open, errors name the file.
	path := filepath.Join(t.TempDir(), "x.mat")
	if err := os.WriteFile(path, buildMAT(layout{}, e.cellOfChar("c", "a")), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Lookup("X")
	want = fmt.Sprintf(`matfile: %s: no variable "X" (the file has no numeric variables)`, path)
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestHeader(t *testing.T) {
	text := "MATLAB 5.0 MAT-file, Platform: PCWIN, Created on: Fri Oct 28 16:23:26 2011"
	for _, bo := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		f := mustRead(t, buildMAT(layout{order: bo, text: text}))
		if f.Header != text || len(f.Vars) != 0 {
			t.Fatalf("%v: header %q, %d vars", bo, f.Header, len(f.Vars))
		}
	}
	// NUL padding and a zero subsystem offset, as in the DeCAF files.
	b := buildMAT(layout{})
	for i := 10; i < 124; i++ {
		b[i] = 0
	}
	if f := mustRead(t, b); f.Header != string(b[:10]) {
		t.Fatalf("header %q", f.Header)
	}
}

func TestHeaderErrors(t *testing.T) {
	good := buildMAT(layout{}, testVar{name: "x", class: mxDOUBLE, dims: []int{1, 1}, re: []float64{1}})
	set := func(off int, s string) []byte {
		b := slices.Clone(good)
		copy(b[off:], s)
		return b
	}
	v73 := append(header(binary.LittleEndian, "MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 2024 HDF5 schema 1.00 ."), make([]byte, 512)...)
	v73[124], v73[125] = 0, 2
	copy(v73[512:], hdf5Magic)
	// An HDF5 file with a user block whose header is not a level-5 one.
	hdf5At512 := slices.Clone(v73)
	copy(hdf5At512, "Some other user block text")
	copy(hdf5At512[124:], "\x00\x00\x00\x00")
	version2 := set(124, "\x00\x02")
	// A level-4 file: a 20-byte header (type 0 = little-endian double
	// matrix, 2 rows, 1 column, real, name length 2), the name and data.
	v4 := binary.LittleEndian.AppendUint32(nil, 0)
	for _, x := range []uint32{2, 1, 0, 2} {
		v4 = binary.LittleEndian.AppendUint32(v4, x)
	}
	v4 = append(v4, "x\x00"...)
	v4 = append(v4, make([]byte, 16)...)
	v4long := append(slices.Clone(v4), make([]byte, 200)...)

	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "matfile: not a MATLAB level-5 MAT-file: 0 bytes, shorter than the 128-byte header"},
		{"short", good[:127], "shorter than the 128-byte header"},
		{"v7.3 text", v73, "matfile: MATLAB v7.3 (HDF5) file: save it with -v7"},
		{"v7.3 text only header", v73[:128], "MATLAB v7.3 (HDF5) file: save it with -v7"},
		{"hdf5 at 512", hdf5At512, "MATLAB v7.3 (HDF5) file: save it with -v7"},
		{"hdf5 at 0", []byte(hdf5Magic + "rest"), "MATLAB v7.3 (HDF5) file: save it with -v7"},
		{"version 0x0200", version2, "MATLAB v7.3 (HDF5) file: save it with -v7"},
		{"level 4 short", v4, "matfile: not a MATLAB level-5 MAT-file"},
		{"level 4", v4long, `not a MATLAB level-5 MAT-file: no endian indicator ("IM" or "MI") at byte offset 126, found "\x00\x00"; it may be a level-4 MAT-file: save it with -v7`},
		{"bad endian", set(126, "XY"), `no endian indicator ("IM" or "MI") at byte offset 126, found "XY"`},
		{"bad version", set(124, "\x00\x07"), "matfile: unsupported MAT-file version 0x0700 in the header (want 0x0100)"},
		{"wrong order version", set(124, "\x01\x00"), "unsupported MAT-file version 0x0001"},
		{"text", []byte(strings.Repeat("hello world\n", 20)), "not a MATLAB level-5 MAT-file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.b))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestHDF5SignatureInData(t *testing.T) {
	// A level-5 file whose data happen to hold the HDF5 signature at
	// byte offset 512 is read.
	// The data start after the header (128 bytes), the matrix tag (8),
	// flags (16), dimensions (16), name (8) and data tag (8).
	vals := make([]float64, 400)
	for i, c := range []byte(hdf5Magic) {
		vals[512-184+i] = float64(c)
	}
	b := buildMAT(layout{}, testVar{name: "u", class: mxUINT8, dims: []int{400, 1}, re: vals})
	if string(b[512:520]) != hdf5Magic {
		t.Fatalf("signature not at 512: %q", b[512:520])
	}
	f := mustRead(t, b)
	checkVar(t, f, "u", "uint8", []int{400, 1}, vals)
}

func TestElementErrors(t *testing.T) {
	e := enc{bo: binary.LittleEndian}
	hdr := header(e.bo, "")
	x := testVar{name: "x", class: mxDOUBLE, dims: []int{2, 2}, re: []float64{1, 2, 3, 4}}
	good := e.matrixElem(x)
	file := func(elems ...[]byte) []byte {
		return slices.Concat(append([][]byte{hdr}, elems...)...)
	}
	// content assembles an miMATRIX element from sub-elements.
	content := func(subs ...[]byte) []byte { return e.elem(miMATRIX, slices.Concat(subs...)) }
	flags := e.flags(mxDOUBLE, false, false, false)
	dims := e.dimsElem([]int{2, 2})
	name := e.elem(miINT8, []byte("x"))
	data := e.elem(miDOUBLE, e.encodeValues(miDOUBLE, x.re))

	lying := slices.Clone(good)
	binary.LittleEndian.PutUint32(lying[4:], 1<<31)
	lyingData := slices.Clone(good)
	// The data tag is the fourth sub-element, after flags (16 bytes),
	// dims (16) and a small name (8).
	binary.LittleEndian.PutUint32(lyingData[8+40+4:], 0xfffffff0)

	// A compressed element whose inner element declares 1 GiB.
	bigInner := e.bo.AppendUint32(nil, miMATRIX)
	bigInner = e.bo.AppendUint32(bigInner, 1<<30)
	bigInner = append(bigInner, good[8:]...)
	// A compressed element whose stream is cut short.
	z := zlibBytes(good)
	cut := e.bo.AppendUint32(nil, miCOMPRESSED)
	cut = e.bo.AppendUint32(cut, uint32(len(z)/2))
	cut = append(cut, z[:len(z)/2]...)
	// Corrupt deflate data: flip bits in the middle of the stream.
	bad := slices.Clone(z)
	for i := 2; i < len(bad)-4; i++ {
		bad[i] ^= 0xa5
	}
	corrupt := e.bo.AppendUint32(nil, miCOMPRESSED)
	corrupt = e.bo.AppendUint32(corrupt, uint32(len(bad)))
	corrupt = append(corrupt, bad...)
	// A wrong checksum.
	badSum := slices.Clone(z)
	badSum[len(badSum)-1] ^= 1
	sum := e.bo.AppendUint32(nil, miCOMPRESSED)
	sum = e.bo.AppendUint32(sum, uint32(len(badSum)))
	sum = append(sum, badSum...)

	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"lying top-level size", file(lying), "matfile: truncated: element at byte offset 128 declares 2147483648 bytes, 80 remain"},
		{"lying data size", file(lyingData), "variable x: real part: truncated: element at byte offset 176 declares 4294967280 bytes, 32 remain"},
		{"partial tag", file(good, []byte{1, 2, 3}), "truncated: element at byte offset 216 needs an 8-byte tag, 3 bytes remain"},
		{"top-level double", file(e.elem(miDOUBLE, make([]byte, 8))), "element at byte offset 128 has type miDOUBLE; the top level of a MAT-file holds only miMATRIX and miCOMPRESSED elements"},
		{"unknown top-level type", file(e.elem(99, make([]byte, 8))), "has type unknown type 99"},
		{"small element too long", file(content(flags, dims, e.bo.AppendUint32(nil, 6<<16|miINT8), []byte("abcd"), data)), "element at byte offset 168: small data element declares 6 bytes, at most 4 fit"},
		{"flags type", file(content(e.elem(miINT32, make([]byte, 8)), dims, name, data)), "array flags at byte offset 136: want 8 bytes of miUINT32, found 8 bytes of miINT32"},
		{"flags short", file(content(e.elem(miUINT32, make([]byte, 4)))), "array flags at byte offset 136: want 8 bytes of miUINT32, found 4 bytes of miUINT32"},
		{"one dim", file(content(flags, e.dimsElem([]int{4}), name, data)), "dimensions at byte offset 152: want at least 2 values of miINT32, found 4 bytes of miINT32"},
		{"dims type", file(content(flags, e.elem(miUINT8, make([]byte, 8)), name, data)), "dimensions at byte offset 152: want at least 2 values of miINT32, found 8 bytes of miUINT8"},
		{"negative dim", file(content(flags, e.dimsElem([]int{2, -2}), name, data)), "dimensions at byte offset 152: dimension 2 is negative (-2)"},
		{"dims overflow", file(content(flags, e.dimsElem([]int{math.MaxInt32, math.MaxInt32, math.MaxInt32}), name, data)), "variable x: dimensions 2147483647x2147483647x2147483647 are too large"},
		{"dims mismatch", file(content(flags, e.dimsElem([]int{2, 3}), name, data)), "variable x: dimensions 2x3 need 6 values, the real part at byte offset 176 holds 32 bytes of miDOUBLE"},
		{"partial value", file(content(flags, dims, name, e.elem(miDOUBLE, make([]byte, 31)))), "dimensions 2x2 need 4 values, the real part at byte offset 176 holds 31 bytes of miDOUBLE"},
		{"name type", file(content(flags, dims, e.elem(miDOUBLE, make([]byte, 8)), data)), "array name at byte offset 168: want miINT8 text, found 8 bytes of miDOUBLE"},
		{"missing data", file(content(flags, dims, name)), "variable x: missing real part (the array element ends at byte offset 176)"},
		{"missing imaginary", file(content(e.flags(mxDOUBLE, true, false, false), dims, name, data)), "variable x: missing imaginary part"},
		{"char data type", file(content(flags, dims, name, e.elem(miUTF8, make([]byte, 4)))), "variable x: real part at byte offset 176 has type miUTF8, not a numeric type"},
		{"unknown data type", file(content(flags, dims, name, e.elem(10, make([]byte, 32)))), "has type unknown type 10, not a numeric type"},
		{"nested matrix as data", file(content(flags, dims, name, good)), "has type miMATRIX, not a numeric type"},
		{"lying compressed size", file(e.compressElem(bigInner)), "compressed element at byte offset 128: truncated: the zlib stream holds 80 bytes, the element needs 1073741824"},
		{"cut zlib stream", file(cut), "compressed element at byte offset 128: truncated: the zlib stream holds"},
		{"corrupt zlib", file(corrupt), "compressed element at byte offset 128: "},
		{"bad zlib header", file(e.bo.AppendUint32(e.bo.AppendUint32(nil, miCOMPRESSED), 8), []byte("notzlib!")), "compressed element at byte offset 128: corrupt zlib stream: zlib: invalid header"},
		{"bad checksum", file(sum), "compressed element at byte offset 128: corrupt zlib stream: zlib: invalid checksum"},
		{"nested compression", file(e.compressElem(e.compressElem(good))), "compressed element at byte offset 128 holds an miCOMPRESSED element, want miMATRIX"},
		{"compressed double", file(e.compressElem(e.elem(miDOUBLE, make([]byte, 8)))), "compressed element at byte offset 128 holds an element of type miDOUBLE, want miMATRIX"},
		{"compressed short", file(e.compressElem([]byte{14, 0, 0})), "compressed element at byte offset 128: truncated: the zlib stream holds 3 bytes, the element needs 8"},
		{"inside compressed", file(e.compressElem(content(flags, e.dimsElem([]int{2, -1}), name, data))), "dimensions at byte offset 24 of the data decompressed from the element at byte offset 128: dimension 2 is negative (-1)"},
	}
	// Errors in the data of a compressed variable, which Read does not
	// decompress, are reported when the data is first used.
	atUse := map[string]bool{"lying compressed size": true, "bad checksum": true}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Read(bytes.NewReader(tc.b))
			if atUse[tc.name] {
				if err != nil {
					t.Fatalf("Read: %v; want the error on use", err)
				}
				err = useAll(f)
			} else if f != nil {
				t.Fatal("non-nil File with error")
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "matfile: ") {
				t.Fatalf("error %q lacks the prefix", err)
			}
		})
	}
}

// useAll loads the data of every numeric variable of f, and the cells of
// every cell array, and returns the first error.
func useAll(f *File) error {
	for _, v := range f.Vars {
		if err := v.load(); err != nil {
			return err
		}
	}
	return nil
}

func TestTolerated(t *testing.T) {
	e := enc{bo: binary.LittleEndian}
	x := testVar{name: "x", class: mxDOUBLE, dims: []int{1, 1}, re: []float64{1}}
	good := e.matrixElem(x)
	hdr := header(e.bo, "")
	// An unpadded last element: the name "abcde" is 5 bytes, padded to 8
	// inside the element; strip padding of a top-level uint8 element.
	u8 := e.matrixElem(testVar{name: "u", class: mxUINT8, dims: []int{1, 5}, re: []float64{1, 2, 3, 4, 5}})
	binary.LittleEndian.PutUint32(u8[4:], uint32(len(u8)-8-3)) // data ends 3 bytes before the padding
	u8 = u8[:len(u8)-3]
	tests := []struct {
		name  string
		b     []byte
		names []string
	}{
		{"trailing zero padding", slices.Concat(hdr, good, make([]byte, 7)), []string{"x"}},
		{"empty matrix element", slices.Concat(hdr, e.elem(miMATRIX, nil), good), []string{"x"}},
		{"unnamed variable", slices.Concat(hdr, e.matrixElem(testVar{class: mxUINT8, dims: []int{1, 3}, re: []float64{1, 2, 3}}), good), []string{"x"}},
		{"empty compressed matrix", slices.Concat(hdr, e.compressElem(e.elem(miMATRIX, nil)), good), []string{"x"}},
		{"unpadded last element", slices.Concat(hdr, good, u8), []string{"x", "u"}},
		{"zlib trailing data", slices.Concat(hdr, e.compressElem(append(slices.Clone(good), "junk"...))), []string{"x"}},
		{"trailing sub-elements", slices.Concat(hdr, e.elem(miMATRIX, append(e.matrixContent(x), e.elem(miINT8, []byte("extra"))...))), []string{"x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := mustRead(t, tc.b)
			if got := varNames(f); !slices.Equal(got, tc.names) {
				t.Fatalf("variables %v, want %v", got, tc.names)
			}
		})
	}
}

func TestTruncatedEverywhere(t *testing.T) {
	for _, l := range layouts() {
		t.Run(l.String(), func(t *testing.T) {
			e := enc{bo: l.order, noSmall: l.noSmall}
			b := buildMAT(l,
				testVar{name: "feas", class: mxDOUBLE, dims: []int{3, 2}, re: []float64{1, 2, 3, 4, 5, 6}},
				e.cellOfChar("names", "abc", "de"),
				testVar{name: "labels", class: mxDOUBLE, dims: []int{3, 1}, re: []float64{1, 2, 3}, downcast: true},
			)
			full := mustRead(t, b)
			for n := range len(b) {
				f, err := Read(bytes.NewReader(b[:n]))
				if err == nil {
					// Only cuts at element boundaries (or inside final
					// padding) can succeed, with fewer variables.
					if len(f.Vars) > len(full.Vars) {
						t.Fatalf("cut at %d: %d variables", n, len(f.Vars))
					}
					continue
				}
				if !strings.HasPrefix(err.Error(), "matfile: ") {
					t.Fatalf("cut at %d: error %q lacks the prefix", n, err)
				}
				if n >= headerLen && !strings.Contains(err.Error(), "truncated") {
					t.Fatalf("cut at %d: error %q does not say truncated", n, err)
				}
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.mat")
	b := buildMAT(layout{compress: true}, testVar{name: "x", class: mxDOUBLE, dims: []int{2, 1}, re: []float64{1, 2}})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	checkVar(t, f, "x", "double", []int{2, 1}, []float64{1, 2})

	_, err = Open(filepath.Join(dir, "missing.mat"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "matfile: open ") {
		t.Fatalf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.mat")
	if err := os.WriteFile(bad, b[:len(b)-5], 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(bad)
	if err == nil || !strings.HasPrefix(err.Error(), "matfile: "+bad+": truncated") {
		t.Fatalf("truncated file: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.HasPrefix(err.Error(), "matfile: ") {
		t.Fatalf("directory: %v", err)
	}
}

// onlyReader hides every method but Read, so Read cannot learn the size.
type onlyReader struct{ r *bytes.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestReadUnknownSize(t *testing.T) {
	b := buildMAT(layout{}, testVar{name: "x", class: mxDOUBLE, dims: []int{100, 30}, re: make([]float64, 3000)})
	f, err := Read(onlyReader{bytes.NewReader(b)})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Vars) != 1 || !slices.Equal(f.Vars[0].Dims, []int{100, 30}) {
		t.Fatalf("got %v", varNames(f))
	}
}

func TestMatrixIsCopy(t *testing.T) {
	f := mustRead(t, buildMAT(layout{}, testVar{name: "x", class: mxDOUBLE, dims: []int{2, 2}, re: []float64{1, 2, 3, 4}}))
	m1, _ := f.Vars[0].Matrix()
	m1.Set(0, 0, 99)
	m2, _ := f.Vars[0].Matrix()
	if m2.At(0, 0) != 1 || m2.At(0, 1) != 3 || m2.At(1, 0) != 2 {
		t.Fatalf("got %v", mat.Formatted(m2))
	}
}

func TestAllocationBounded(t *testing.T) {
	// Files that declare far more data than they hold fail without
	// allocating for the declared size.
	e := enc{bo: binary.LittleEndian}
	x := testVar{name: "x", class: mxDOUBLE, dims: []int{2, 2}, re: []float64{1, 2, 3, 4}}
	good := e.matrixElem(x)
	huge := func(n uint32) []byte {
		el := slices.Clone(good)
		binary.LittleEndian.PutUint32(el[4:], n)
		return el
	}
	tests := []struct {
		name string
		b    []byte
	}{
		{"top-level", slices.Concat(header(e.bo, ""), huge(math.MaxUint32))},
		{"compressed", slices.Concat(header(e.bo, ""), e.compressElem(huge(math.MaxUint32)))},
		{"compressed dims", slices.Concat(header(e.bo, ""), e.compressElem(e.matrixElem(testVar{name: "y", class: mxDOUBLE, dims: []int{1 << 30, 1 << 30}})))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			allocs := bombtest.Allocated(func() {
				var f *File
				if f, err = Read(bytes.NewReader(tc.b)); err == nil {
					err = useAll(f)
				}
			})
			if err == nil {
				t.Fatal("no error")
			}
			if allocs > 1<<20 {
				t.Fatalf("allocated %d bytes per Read", allocs)
			}
		})
	}
}
