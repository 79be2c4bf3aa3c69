package npy

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/bombtest"
)

func TestOpenNPZ(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.npz")
	b := buildZip(t, []zipMember{
		{"y.npy", zip.Deflate, makeNPY("<i8", false, "(2,)", encodeRaw("<i8", 8, []uint64{1, 2}))},
		{"X.npy", zip.Store, makeNPY("<f8", false, "(1, 2)", f64s(3, 4))},
		{"bad.npy", zip.Deflate, []byte("not npy")},
		{"noext", zip.Deflate, makeNPY("<f8", false, "()", f64s(5))},
	})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	z, err := OpenNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if got := z.Names(); !slices.Equal(got, []string{"y", "X", "bad", "noext"}) {
		t.Fatalf("names %v", got)
	}
	// A broken member does not keep the others from being read.
	for name, want := range map[string][]float64{"y": {1, 2}, "X": {3, 4}, "noext": {5}} {
		a, err := z.Array(name)
		if err != nil || !sameFloats(a.Data, want) {
			t.Errorf("%s: %v, %v", name, a, err)
		}
	}
	_, err = z.Array("bad")
	if want := fmt.Sprintf("npy: %s: member \"bad.npy\": not a .npy file", path); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("bad member: %v, want %q", err, want)
	}
	_, err = z.Array("Z")
	if want := fmt.Sprintf("npy: %s: no array \"Z\" (arrays: y, X, bad, noext)", path); err == nil || err.Error() != want {
		t.Errorf("missing array: %v, want %q", err, want)
	}
	if _, err := ReadNPZ(path); err == nil || !strings.Contains(err.Error(), `member "bad.npy"`) {
		t.Errorf("ReadNPZ: %v", err)
	}
}

// TestNPZBombs: members are decompressed only when read, and only as far
// as what their header and their directory entry both declare.
func TestNPZBombs(t *testing.T) {
	const mib = 2300 // 2.4 GB of zeros, about 2.3 MB compressed
	f8 := func(n int) []byte { return makeNPY("<f8", false, fmt.Sprintf("(%d,)", n), nil) }
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	// Members of 2.4 GB: one whose header and entry agree; one whose
	// header declares 16 bytes; one whose header declares 2.4 GB and
	// whose entry declares 16 bytes more than the header.
	good, small := f8(mib<<17), f8(2)
	bombtest.AddRaw(t, zw, "small.npy", bombtest.Deflate(t, small, mib), uint64(len(small)+mib<<20))
	bombtest.AddRaw(t, zw, "unused.npy", bombtest.Deflate(t, good, mib), uint64(len(good)+mib<<20))
	bombtest.AddRaw(t, zw, "short.npy", bombtest.Deflate(t, good, mib), uint64(len(good)+16))
	// A member beyond MaxArrayBytes: 2^31 elements, 16 GiB.
	huge := f8(1 << 31)
	bombtest.AddRaw(t, zw, "huge.npy", bombtest.Deflate(t, huge, 3), uint64(len(huge)+16<<30))
	w, _ := zw.Create("X.npy")
	w.Write(makeNPY("<f8", false, "(2,)", f64s(1, 2)))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bomb.npz")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	const limit = 16 << 20
	var z *NPZ
	var err error
	if a := bombtest.Allocated(func() { z, err = OpenNPZ(path) }); err != nil || a > limit {
		t.Fatalf("OpenNPZ: %v, allocated %d bytes", err, a)
	}
	defer z.Close()
	var x *Array
	if a := bombtest.Allocated(func() { x, err = z.Array("X") }); err != nil || !sameFloats(x.Data, []float64{1, 2}) || a > limit {
		t.Fatalf("X: %v, %v, allocated %d bytes", x, err, a)
	}
	for _, tc := range []struct{ name, want string }{
		{"small", `member "small.npy": trailing data: found 2411724784 bytes after the 16 bytes of array data for shape (2,) of <f8`},
		{"short", `member "short.npy": truncated data: shape (301465600,) of <f8 needs 2411724800 bytes, member has 16`},
		{"huge", `member "huge.npy": shape (2147483648,) of <f8 has 2147483648 elements, more than the 1073741824 (of 8 bytes as float64) that npy.MaxArrayBytes = 8589934592 allows`},
	} {
		if a := bombtest.Allocated(func() { _, err = z.Array(tc.name) }); err == nil || !strings.HasPrefix(err.Error(), "npy: "+path+": ") || !strings.Contains(err.Error(), tc.want) || a > limit {
			t.Errorf("%s: %v, allocated %d bytes; want %q", tc.name, err, a, tc.want)
		}
	}
	if a := bombtest.Allocated(func() { _, err = ReadNPZ(path) }); err == nil || !strings.Contains(err.Error(), `member "small.npy"`) || a > limit {
		t.Errorf("ReadNPZ: %v, allocated %d bytes", err, a)
	}

	// The header alone of the consistent member.
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var h *Header
	if a := bombtest.Allocated(func() { h, err = ReadZipHeader(zr.File[1]) }); err != nil || !slices.Equal(h.Shape, []int{mib << 17}) || h.DType != "<f8" || a > limit {
		t.Errorf("ReadZipHeader: %+v, %v, allocated %d bytes", h, err, a)
	}
	if _, err := ReadZipHeader(zr.File[3]); err == nil || !strings.HasPrefix(err.Error(), "npy: shape (2147483648,)") {
		t.Errorf("ReadZipHeader of huge: %v", err)
	}
}
