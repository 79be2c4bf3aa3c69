package npy

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/bombtest"
)

func TestReadDtypes(t *testing.T) {
	neg := func(v int64) uint64 { return uint64(v) }
	tests := []struct {
		descr string
		size  int
		raw   []uint64
		want  []float64
	}{
		{"f8", 8, []uint64{math.Float64bits(0), math.Float64bits(-1.5), math.Float64bits(math.MaxFloat64), math.Float64bits(math.SmallestNonzeroFloat64), math.Float64bits(math.Inf(-1))},
			[]float64{0, -1.5, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(-1)}},
		{"f4", 4, []uint64{uint64(math.Float32bits(0.25)), uint64(math.Float32bits(-3)), uint64(math.Float32bits(math.MaxFloat32)), 1, uint64(math.Float32bits(0.1))},
			[]float64{0.25, -3, math.MaxFloat32, math.SmallestNonzeroFloat32, float64(float32(0.1))}},
		{"f2", 2, []uint64{0x3c00, 0xc100, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x8000, 0x7c00, 0xfc00, 0x3555},
			[]float64{1, -2.5, 65504, 0x1p-24, 1023 * 0x1p-24, 0x1p-14, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 0.333251953125}},
		{"i1", 1, []uint64{neg(-128), 127, 0, neg(-1)}, []float64{-128, 127, 0, -1}},
		{"i2", 2, []uint64{neg(-32768), 32767, neg(-2)}, []float64{-32768, 32767, -2}},
		{"i4", 4, []uint64{neg(math.MinInt32), math.MaxInt32, neg(-7)}, []float64{math.MinInt32, math.MaxInt32, -7}},
		{"i8", 8, []uint64{neg(math.MinInt64), math.MaxInt64, neg(-9), 1<<53 + 1},
			[]float64{math.MinInt64, math.MaxInt64, -9, 1 << 53}},
		{"u1", 1, []uint64{0, 200, 255}, []float64{0, 200, 255}},
		{"u2", 2, []uint64{65535, 1}, []float64{65535, 1}},
		{"u4", 4, []uint64{math.MaxUint32, 3}, []float64{math.MaxUint32, 3}},
		{"u8", 8, []uint64{math.MaxUint64, 5}, []float64{math.MaxUint64, 5}},
		{"b1", 1, []uint64{0, 1, 1, 0}, []float64{0, 1, 1, 0}},
	}
	for _, tt := range tests {
		orders := []string{"<", ">", "="}
		if tt.size == 1 {
			orders = []string{"|", "<", ">"}
		}
		for _, o := range orders {
			descr := o + tt.descr
			t.Run(descr, func(t *testing.T) {
				shape := "(" + strconv.Itoa(len(tt.raw)) + ",)"
				b := makeNPY(descr, false, shape, encodeRaw(descr, tt.size, tt.raw))
				a := mustRead(t, b)
				if a.DType != descr {
					t.Errorf("DType = %q, want %q", a.DType, descr)
				}
				if len(a.Shape) != 1 || a.Shape[0] != len(tt.raw) {
					t.Errorf("Shape = %v, want [%d]", a.Shape, len(tt.raw))
				}
				if !sameFloats(a.Data, tt.want) {
					t.Errorf("Data = %v, want %v", a.Data, tt.want)
				}
			})
		}
	}
}

func TestReadNaN(t *testing.T) {
	for _, tc := range []struct {
		descr string
		size  int
		raw   uint64
	}{
		{"<f8", 8, math.Float64bits(math.NaN())},
		{">f4", 4, uint64(math.Float32bits(float32(math.NaN())))},
		{"<f2", 2, 0x7e00},
		{">f2", 2, 0xfe01},
	} {
		a := mustRead(t, makeNPY(tc.descr, false, "(1,)", encodeRaw(tc.descr, tc.size, []uint64{tc.raw})))
		if !math.IsNaN(a.Data[0]) {
			t.Errorf("%s: got %v, want NaN", tc.descr, a.Data[0])
		}
	}
}

func TestHalfToFloat64Exhaustive(t *testing.T) {
	// Compare every binary16 value with the textbook formula, which is
	// exact in float64 because it only involves small integers and powers
	// of two.
	for h := range 1 << 16 {
		got := halfToFloat64(uint16(h))
		sign := 1.0
		if h&0x8000 != 0 {
			sign = -1
		}
		exp, frac := h>>10&0x1f, float64(h&0x3ff)
		var want float64
		switch exp {
		case 0:
			want = sign * frac / 1024 * math.Pow(2, -14)
		case 0x1f:
			if frac == 0 {
				want = math.Inf(int(sign))
			} else {
				want = math.NaN()
			}
		default:
			want = sign * (1 + frac/1024) * math.Pow(2, float64(exp-15))
		}
		if !sameFloats([]float64{got}, []float64{want}) {
			t.Fatalf("halfToFloat64(%#04x) = %v, want %v", h, got, want)
		}
	}
}

func TestReadShapes(t *testing.T) {
	tests := []struct {
		shape string
		want  []int
		n     int
	}{
		{"()", []int{}, 1},
		{"(0,)", []int{0}, 0},
		{"(3,)", []int{3}, 3},
		{"(2, 3)", []int{2, 3}, 6},
		{"(2,3,)", []int{2, 3}, 6},
		{"( 2 , 1 , 2 )", []int{2, 1, 2}, 4},
		{"(0, 5)", []int{0, 5}, 0},
		{"(3L, 2L)", []int{3, 2}, 6}, // Python 2 long integers
		{"(0, 9223372036854775807)", []int{0, math.MaxInt64}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.shape, func(t *testing.T) {
			data := make([]float64, tt.n)
			for i := range data {
				data[i] = float64(i)
			}
			a := mustRead(t, makeNPY("<f8", false, tt.shape, f64s(data...)))
			if !sameInts(a.Shape, tt.want) {
				t.Errorf("Shape = %v, want %v", a.Shape, tt.want)
			}
			if !sameFloats(a.Data, data) {
				t.Errorf("Data = %v, want %v", a.Data, data)
			}
		})
	}
}

func TestReadFortran(t *testing.T) {
	// 2-D: the matrix [[1 2 3] [4 5 6]] in column-major order.
	a := mustRead(t, makeNPY("<f8", true, "(2, 3)", f64s(1, 4, 2, 5, 3, 6)))
	if want := []float64{1, 2, 3, 4, 5, 6}; !sameFloats(a.Data, want) {
		t.Errorf("2-D Fortran: Data = %v, want %v", a.Data, want)
	}

	// 3-D: element (i, j, k) has value 100i + 10j + k.
	shape := []int{2, 3, 4}
	var fdata, cdata []float64
	for k := range 4 {
		for j := range 3 {
			for i := range 2 {
				fdata = append(fdata, float64(100*i+10*j+k))
			}
		}
	}
	for i := range 2 {
		for j := range 3 {
			for k := range 4 {
				cdata = append(cdata, float64(100*i+10*j+k))
			}
		}
	}
	a = mustRead(t, makeNPY(">i2", true, "(2, 3, 4)", encodeRaw(">i2", 2, toRaw(fdata))))
	if !sameInts(a.Shape, shape) || !sameFloats(a.Data, cdata) {
		t.Errorf("3-D Fortran: got %v %v, want %v %v", a.Shape, a.Data, shape, cdata)
	}

	// Dimensions of length 1 and 1-D arrays are unaffected.
	a = mustRead(t, makeNPY("<f8", true, "(1, 2, 1, 3, 1)", f64s(1, 4, 2, 5, 3, 6)))
	if want := []float64{1, 2, 3, 4, 5, 6}; !sameFloats(a.Data, want) {
		t.Errorf("Fortran with unit dims: Data = %v, want %v", a.Data, want)
	}
	a = mustRead(t, makeNPY("<f8", true, "(3,)", f64s(1, 2, 3)))
	if want := []float64{1, 2, 3}; !sameFloats(a.Data, want) {
		t.Errorf("1-D Fortran: Data = %v, want %v", a.Data, want)
	}
	a = mustRead(t, makeNPY("<f8", true, "(0, 3)", nil))
	if len(a.Data) != 0 {
		t.Errorf("empty Fortran: Data = %v", a.Data)
	}
}

func toRaw(vals []float64) []uint64 {
	raw := make([]uint64, len(vals))
	for i, v := range vals {
		raw[i] = uint64(int64(v))
	}
	return raw
}

func TestReadHeaderVariants(t *testing.T) {
	data := f64s(1, 2, 3, 4, 5, 6)
	want := []float64{1, 2, 3, 4, 5, 6}
	tests := []struct {
		name   string
		major  byte
		header string
	}{
		{"v1", 1, padHeader(1, dictText("<f8", false, "(2, 3)"))},
		{"v2", 2, padHeader(2, dictText("<f8", false, "(2, 3)"))},
		{"v3", 3, padHeader(3, dictText("<f8", false, "(2, 3)"))},
		{"keys reordered", 1, "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f8'}\n"},
		{"keys reordered 2", 2, "{'fortran_order': False, 'shape': (2, 3), 'descr': '<f8', }    \n"},
		{"double quotes", 1, `{"descr": "<f8", "fortran_order": False, "shape": (2, 3)}` + "\n"},
		{"no padding", 1, "{'descr':'<f8','fortran_order':False,'shape':(2,3)}\n"},
		{"no newline", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}"},
		{"newlines inside", 1, "{\n 'descr': '<f8',\n 'fortran_order': False,\n 'shape': (2,\n 3),\n}\n"},
		{"16-byte alignment", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }   \n"},
		{"v3 utf-8 padding", 3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}\t\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustRead(t, rawNPY(tt.major, 0, tt.header, data))
			if !sameInts(a.Shape, []int{2, 3}) || !sameFloats(a.Data, want) || a.DType != "<f8" {
				t.Errorf("got %v %v %q", a.Shape, a.Data, a.DType)
			}
		})
	}
}

// TestReadErrors checks that every kind of malformed input gives an error
// with a distinctive message, through readers of known and unknown size.
func TestReadErrors(t *testing.T) {
	good := makeNPY("<f8", false, "(2, 3)", f64s(1, 2, 3, 4, 5, 6))
	hdr := func(dict string) []byte { return rawNPY(1, 0, dict+"\n", nil) }
	withData := func(dict string, data []byte) []byte { return rawNPY(1, 0, dict+"\n", data) }

	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "not a .npy file: the file is empty"},
		{"bad magic", []byte("PK\x03\x04 this is a zip file"), "not a .npy file: bad magic"},
		{"bad magic short", []byte("\x93NUMP!"), "not a .npy file: bad magic"},
		{"text", []byte("hello"), "not a .npy file"},
		{"magic only", []byte(magic), "truncated preamble"},
		{"no header length", []byte(magic + "\x01\x00\x10"), "truncated preamble"},
		{"no header length v2", []byte(magic + "\x02\x00\x10\x00"), "truncated preamble"},
		{"version 0.0", rawNPY(0, 0, "{}", nil), "unsupported format version 0.0"},
		{"version 1.1", rawNPY(1, 1, "{}", nil), "unsupported format version 1.1"},
		{"version 4.0", rawNPY(4, 0, "{}", nil), "unsupported format version 4.0"},
		{"header too long", []byte(magic + "\x02\x00\xff\xff\xff\x7f{'descr'"), "header length 2147483647 exceeds the limit"},
		{"header truncated", good[:40], "truncated header"},
		{"header truncated v2", rawNPY(2, 0, "{'descr': '<f8'", nil)[:20], "truncated header"},
		{"header not dict", hdr("['descr', '<f8']"), "header is not a dict literal"},
		{"header empty", hdr(""), "header is empty"},
		{"header spaces", hdr("      "), "header is empty"},
		{"header unclosed", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)"), "missing '}'"},
		{"header unclosed tuple", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3}"), "expected ',' or ')'"},
		{"header unterminated string", hdr("{'descr: '<f8'}"), "expected ':'"},
		{"header unterminated string 2", rawNPY(1, 0, "{'descr': '<f8", nil), "unterminated string"},
		{"header newline in string", hdr("{'descr': '<f8"), "newline in string"},
		{"header missing colon", hdr("{'descr' '<f8'}"), "expected ':'"},
		{"header missing comma", hdr("{'descr': '<f8' 'shape': ()}"), "expected ',' or '}'"},
		{"header trailing text", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': ()} x"), "unexpected text after the dict"},
		{"header two dicts", hdr("{}{}"), "unexpected text after the dict"},
		{"header call", hdr("{'descr': dtype('<f8'), 'fortran_order': False, 'shape': ()}"), "unexpected name \"dtype\""},
		{"header bad escape", hdr(`{'descr': '<f\8', 'fortran_order': False, 'shape': ()}`), "unsupported escape"},
		{"header float", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (2.0,)}"), "only decimal integers"},
		{"header hex", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (0x2,)}"), "only decimal integers"},
		{"header lone sign", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (-,)}"), "malformed number"},
		{"header deep nesting", hdr("{'descr': " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}"), "nesting deeper than 64"},
		{"header bad byte", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': ()\x00}"), "found \"\\x00}"},
		{"header bad value byte", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': \x00}"), "unexpected \"\\x00}"},
		{"header v3 bad utf-8", rawNPY(3, 0, "{'descr': '\xff<f8', 'fortran_order': False, 'shape': ()}\n", f64s(1)), "header is not valid UTF-8"},
		{"missing descr", hdr("{'fortran_order': False, 'shape': ()}"), "header is missing key 'descr'"},
		{"missing fortran_order", hdr("{'descr': '<f8', 'shape': ()}"), "header is missing key 'fortran_order'"},
		{"missing shape", hdr("{'descr': '<f8', 'fortran_order': False}"), "header is missing key 'shape'"},
		{"extra key", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (), 'x': 1}"), "header has unexpected key 'x'"},
		{"duplicate key", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (), 'descr': '<f4'}"), "header has duplicate key 'descr'"},
		{"non-string key", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (), 1: 2}"), "header has a non-string key 1"},
		{"fortran_order int", hdr("{'descr': '<f8', 'fortran_order': 0, 'shape': ()}"), "fortran_order must be True or False, got 0"},
		{"fortran_order string", hdr("{'descr': '<f8', 'fortran_order': 'False', 'shape': ()}"), "fortran_order must be True or False, got 'False'"},
		{"fortran_order None", hdr("{'descr': '<f8', 'fortran_order': None, 'shape': ()}"), "fortran_order must be True or False, got None"},
		{"shape list", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': [2, 3]}"), "shape must be a tuple of integers, got [2, 3]"},
		{"shape int", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': 6}"), "shape must be a tuple of integers, got 6"},
		{"shape parenthesised int", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (6)}"), "shape must be a tuple of integers, got (6)"},
		{"shape string entry", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (2, '3')}"), "shape entry 1 is '3', not an integer"},
		{"shape bool entry", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (True,)}"), "shape entry 0 is True, not an integer"},
		{"shape nested", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': ((2,),)}"), "shape entry 0 is (2,), not an integer"},
		{"shape negative", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (2, -3)}"), "shape entry 1 is negative: -3"},
		{"shape huge entry", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}"), "shape entry 0 is too large"},
		{"shape overflow", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"), "number of elements overflows"},
		{"shape bytes overflow", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}"), "size in bytes overflows"},
		{"dtype unicode", hdr("{'descr': '<U10', 'fortran_order': False, 'shape': ()}"), "unsupported dtype '<U10' (want a float, integer or bool type)"},
		{"dtype bytes", hdr("{'descr': '|S5', 'fortran_order': False, 'shape': ()}"), "unsupported dtype '|S5'"},
		{"dtype object", hdr("{'descr': '|O', 'fortran_order': False, 'shape': ()}"), "unsupported dtype '|O'"},
		{"dtype complex", hdr("{'descr': '<c16', 'fortran_order': False, 'shape': ()}"), "unsupported dtype '<c16'"},
		{"dtype datetime", hdr("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': ()}"), "unsupported dtype '<M8[ns]'"},
		{"dtype timedelta", hdr("{'descr': '<m8', 'fortran_order': False, 'shape': ()}"), "unsupported dtype '<m8'"},
		{"dtype longdouble", hdr("{'descr': '<f16', 'fortran_order': False, 'shape': ()}"), "unsupported dtype '<f16'"},
		{"dtype void", hdr("{'descr': '|V8', 'fortran_order': False, 'shape': ()}"), "unsupported dtype '|V8'"},
		{"dtype empty", hdr("{'descr': '', 'fortran_order': False, 'shape': ()}"), "unsupported dtype ''"},
		{"dtype structured", hdr("{'descr': [('a', '<f8'), ('b', '<i4')], 'fortran_order': False, 'shape': ()}"), "unsupported dtype [('a', '<f8'), ('b', '<i4')] (structured dtypes are not supported"},
		{"dtype non-ASCII", hdr("{'descr': '<\xff8', 'fortran_order': False, 'shape': ()}"), `unsupported dtype "'<\xff8'" (want`},
		{"dtype int", hdr("{'descr': 8, 'fortran_order': False, 'shape': ()}"), "unsupported dtype 8"},
		{"truncated data", withData(dictText("<f8", false, "(100, 5)"), make([]byte, 1232)), "truncated data: shape (100, 5) of <f8 needs 4000 bytes, file has 1232"},
		{"truncated data partial item", good[:len(good)-3], "truncated data: shape (2, 3) of <f8 needs 48 bytes, file has 45"},
		{"no data", withData(dictText(">i4", false, "(2,)"), nil), "truncated data: shape (2,) of >i4 needs 8 bytes, file has 0"},
		{"huge claim", withData(dictText("<f8", false, "(1000000000000,)"), make([]byte, 16)), "needs 8000000000000 bytes, file has 16"},
		{"huge claim many dims", withData(dictText("|u1", false, "(1000000, 1000000, 1000000)"), []byte{1}), "truncated data: shape (1000000, 1000000, 1000000) of |u1 needs 1000000000000000000 bytes, file has 1"},
		{"trailing data", append(append([]byte{}, good...), 0), "trailing data: found 1 bytes after the 48 bytes of array data"},
		{"trailing data scalar", withData(dictText("<f8", false, "()"), make([]byte, 16)), "trailing data: found 8 bytes after the 8 bytes"},
		{"trailing data empty", withData(dictText("<f8", false, "(0,)"), []byte("x")), "trailing data"},
		{"invalid bool", withData(dictText("|b1", false, "(3,)"), []byte{0, 1, 2}), "invalid bool value 0x02 at index 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unknown, known := readBoth(t, tt.in)
			for _, err := range []error{unknown, known} {
				if err == nil {
					t.Fatalf("no error, want %q", tt.want)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "npy: ") {
					t.Errorf("error %q lacks the \"npy: \" prefix", msg)
				}
				if !strings.Contains(msg, tt.want) {
					t.Errorf("error %q does not contain %q", msg, tt.want)
				}
			}
		})
	}
}

func TestReadKnownSizeReaders(t *testing.T) {
	b := makeNPY("<i4", false, "(2,)", encodeRaw("<i4", 4, []uint64{7, 8}))
	for _, r := range []io.Reader{bytes.NewReader(b), bytes.NewBuffer(b), strings.NewReader(string(b))} {
		a, err := Read(r)
		if err != nil || !sameFloats(a.Data, []float64{7, 8}) {
			t.Errorf("%T: %v, %v", r, a, err)
		}
	}
	// The size of a partly consumed reader is what remains.
	r := bytes.NewReader(append([]byte("xyz"), b...))
	r.Seek(3, io.SeekStart)
	if _, err := Read(r); err != nil {
		t.Errorf("partly consumed reader: %v", err)
	}
}

func TestReadHugeClaimIsCheap(t *testing.T) {
	// A tiny input claiming a petabyte must fail without allocating it.
	b := makeNPY("<f8", false, "(125000000000000,)", make([]byte, 100))
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := Read(onlyReader{bytes.NewReader(b)}); err == nil {
			t.Fatal("no error")
		}
	})
	if allocs > 100 {
		t.Errorf("%v allocations for a 100-byte input", allocs)
	}
	var err error
	d := bombtest.Allocated(func() { _, err = Read(onlyReader{bytes.NewReader(b)}) })
	if err == nil || !strings.Contains(err.Error(), "truncated data") {
		t.Fatalf("err = %v", err)
	}
	if d > 4<<20 {
		t.Errorf("allocated %d bytes for a 100-byte input", d)
	}
}

// errReader returns data, then err.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadIOError(t *testing.T) {
	boom := errors.New("boom")
	good := makeNPY("<f8", false, "(2, 3)", f64s(1, 2, 3, 4, 5, 6))
	for _, n := range []int{0, 3, 9, 11, 40, len(good) - 8, len(good)} {
		_, err := Read(&errReader{data: good[:n], err: boom})
		if !errors.Is(err, boom) {
			t.Errorf("cut at %d: err = %v, want it to wrap boom", n, err)
		}
	}
}

func TestReadSlowReader(t *testing.T) {
	// One byte per Read call must work (io.ReadFull semantics).
	data := make([]float64, 20000)
	for i := range data {
		data[i] = float64(i) / 7
	}
	var buf bytes.Buffer
	if err := Write(&buf, []int{100, 200}, data); err != nil {
		t.Fatal(err)
	}
	a, err := Read(io.MultiReader(oneByteReader{bytes.NewReader(buf.Bytes())}))
	if err != nil {
		t.Fatal(err)
	}
	if !sameFloats(a.Data, data) {
		t.Error("data mismatch")
	}
}

type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.npy")
	if err := os.WriteFile(path, makeNPY("<U10", false, "()", nil), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	want := "npy: " + path + ": unsupported dtype '<U10' (want a float, integer or bool type)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}

	if err := os.WriteFile(path, makeNPY("<f8", false, "(100, 5)", make([]byte, 1232)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(path)
	want = "npy: " + path + ": truncated data: shape (100, 5) of <f8 needs 4000 bytes, file has 1232"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}

	missing := filepath.Join(dir, "missing.npy")
	_, err = ReadFile(missing)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "npy: "+missing+": open: ") {
		t.Errorf("err = %v, want a wrapped fs.ErrNotExist naming the path once", err)
	}

	_, err = ReadFile(dir)
	if err == nil || !strings.HasPrefix(err.Error(), "npy: "+dir+": ") {
		t.Errorf("reading a directory: err = %v", err)
	}

	if err := os.WriteFile(path, makeNPY("<f4", true, "(2, 2)", encodeRaw("<f4", 4, []uint64{
		uint64(math.Float32bits(1)), uint64(math.Float32bits(3)), uint64(math.Float32bits(2)), uint64(math.Float32bits(4)),
	})), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sameFloats(a.Data, []float64{1, 2, 3, 4}) || a.DType != "<f4" {
		t.Errorf("got %v %q", a.Data, a.DType)
	}
}
