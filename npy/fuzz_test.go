package npy

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validFiles returns a few well-formed .npy files of different layouts.
func validFiles(t testing.TB) [][]byte {
	var files [][]byte
	for _, tc := range []struct {
		shape []int
		data  []float64
	}{
		{[]int{}, []float64{1.5}},
		{[]int{0}, nil},
		{[]int{3}, []float64{1, -2, 3}},
		{[]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		{[]int{2, 1, 2}, []float64{1, 2, 3, 4}},
	} {
		var buf bytes.Buffer
		if err := Write(&buf, tc.shape, tc.data); err != nil {
			t.Fatal(err)
		}
		files = append(files, buf.Bytes())
	}
	files = append(files,
		makeNPY(">i2", true, "(2, 2)", encodeRaw(">i2", 2, []uint64{1, 2, 3, 4})),
		makeNPY("|b1", false, "(3,)", []byte{0, 1, 1}),
		makeNPY("<f2", false, "(2,)", encodeRaw("<f2", 2, []uint64{0x3c00, 0x7bff})),
		makeNPY("<u8", false, "(1,)", encodeRaw("<u8", 8, []uint64{1 << 63})),
		rawNPY(2, 0, padHeader(2, dictText("<f4", false, "(1,)")), make([]byte, 4)),
		rawNPY(3, 0, "{'shape': (1,), 'descr': '|i1', 'fortran_order': False}\n", []byte{0x80}),
	)
	return files
}

// seedVariants returns f and damaged variants of it: truncated at several
// points, with trailing bytes, and with single bytes changed.
func seedVariants(f []byte) [][]byte {
	out := [][]byte{f}
	for _, n := range []int{0, 1, 6, 8, 9, 10, 20, len(f) / 2, len(f) - 1} {
		if n >= 0 && n < len(f) {
			out = append(out, f[:n])
		}
	}
	out = append(out, append(append([]byte{}, f...), 0))
	for _, i := range []int{6, 7, 8, 9, 12, 20, 40, len(f) - 2} {
		if i >= 0 && i < len(f) {
			g := append([]byte{}, f...)
			g[i] ^= 0x55
			out = append(out, g)
		}
	}
	return out
}

// checkArray fails the test unless a is consistent.
func checkArray(t *testing.T, a *Array) {
	t.Helper()
	if a == nil {
		t.Fatal("nil Array without error")
	}
	n, err := shapeCount(a.Shape)
	if err != nil {
		t.Fatalf("invalid shape %v: %v", a.Shape, err)
	}
	if n != len(a.Data) {
		t.Fatalf("len(Data) = %d, product of shape %v = %d", len(a.Data), a.Shape, n)
	}
	// The accessors must not panic either.
	a.Matrix()
	a.Vector()
	a.Ints()
}

func FuzzRead(f *testing.F) {
	for _, file := range validFiles(f) {
		for _, v := range seedVariants(file) {
			f.Add(v)
		}
	}
	f.Add([]byte(magic + "\x01\x00\x05\x00{}}}\n"))
	f.Add([]byte(magic + "\x01\x00\x40\x00{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999,), }\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Through a reader of unknown size (chunked) and of known size.
		a1, err1 := Read(onlyReader{bytes.NewReader(b)})
		a2, err2 := Read(bytes.NewReader(b))
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("known and unknown size disagree: %v vs %v", err1, err2)
		}
		if err1 != nil {
			if err1.Error() == "" || err1.Error()[:5] != "npy: " {
				t.Fatalf("bad error %q", err1)
			}
			return
		}
		checkArray(t, a1)
		checkArray(t, a2)
		if !sameInts(a1.Shape, a2.Shape) || !sameFloats(a1.Data, a2.Data) || a1.DType != a2.DType {
			t.Fatal("known and unknown size give different arrays")
		}
		// What was read can be written and read back.
		var buf bytes.Buffer
		if err := Write(&buf, a1.Shape, a1.Data); err != nil {
			if strings.Contains(err.Error(), "header longer than") {
				// Read accepts compact headers whose numpy-style
				// rewrite can exceed the limit.
				return
			}
			t.Fatalf("Write: %v", err)
		}
		a3, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if !sameInts(a3.Shape, a1.Shape) || !sameFloats(a3.Data, a1.Data) {
			t.Fatal("round trip changed the array")
		}
	})
}

func FuzzReadNPZ(f *testing.F) {
	files := validFiles(f)
	for i, method := range []uint16{zip.Store, zip.Deflate} {
		var members []zipMember
		for j, file := range files[:6] {
			members = append(members, zipMember{name: string(rune('a'+j)) + ".npy", method: method, data: file})
		}
		z := buildZip(f, members)
		f.Add(z)
		f.Add(z[:len(z)/2])
		f.Add(z[:len(z)-1])
		g := append([]byte{}, z...)
		g[40+i] ^= 0xff
		f.Add(g)
		single := buildZip(f, []zipMember{{"x.npy", method, files[3]}})
		for _, v := range seedVariants(single) {
			f.Add(v)
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "fuzz.npz")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		arrays, err := ReadNPZ(path)
		if err != nil && arrays != nil {
			t.Fatal("non-nil map with error")
		}
		for _, a := range arrays {
			checkArray(t, a)
		}
		// Member by member, the same arrays, and the same headers.
		z, zerr := OpenNPZ(path)
		if zerr != nil {
			if err == nil {
				t.Fatalf("OpenNPZ: %v; ReadNPZ succeeds", zerr)
			}
			return
		}
		defer z.Close()
		for i, name := range z.Names() {
			a, aerr := z.Array(name)
			if err == nil && (aerr != nil || !sameFloats(a.Data, arrays[name].Data)) {
				t.Fatalf("%s: %v; ReadNPZ read it", name, aerr)
			}
			if aerr != nil {
				continue
			}
			checkArray(t, a)
			h, herr := ReadZipHeader(z.zr.File[i])
			if herr != nil || !sameInts(h.Shape, a.Shape) || h.DType != a.DType {
				t.Fatalf("%s: header %v, %v; array %v %s", name, h, herr, a.Shape, a.DType)
			}
		}
	})
}
