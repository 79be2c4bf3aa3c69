package npy

import (
	"archive/zip"
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNPZRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npz")
	arrays := map[string]*Array{
		"x":      {Shape: []int{2, 3}, Data: []float64{1, 2, 3, 4, 5, math.NaN()}},
		"b":      {Shape: []int{4}, Data: []float64{-1, 0, 1, math.Inf(1)}, DType: "<i4"},
		"scalar": {Shape: []int{}, Data: []float64{3.5}},
		"empty":  {Shape: []int{0, 2}},
		"y.npy":  {Shape: []int{1}, Data: []float64{9}},
	}
	if err := WriteNPZ(path, arrays); err != nil {
		t.Fatal(err)
	}
	got, err := ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	// "y.npy" is stored as "y.npy.npy" and read back as "y.npy", as numpy does.
	if len(got) != len(arrays) {
		t.Errorf("got %d arrays, want %d", len(got), len(arrays))
	}
	for name, want := range arrays {
		a := got[name]
		if a == nil {
			t.Errorf("array %q missing", name)
			continue
		}
		wantShape := want.Shape
		if !sameInts(a.Shape, wantShape) || !sameFloats(a.Data, append([]float64{}, want.Data...)) || a.DType != "<f8" {
			t.Errorf("array %q: got %v %v %q, want %v %v", name, a.Shape, a.Data, a.DType, want.Shape, want.Data)
		}
	}

	// Members are deflated, in sorted order, and the output is deterministic.
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Method != zip.Deflate {
			t.Errorf("member %q has method %d, want deflate", f.Name, f.Method)
		}
	}
	zr.Close()
	if want := []string{"b.npy", "empty.npy", "scalar.npy", "x.npy", "y.npy.npy"}; !slices.Equal(names, want) {
		t.Errorf("members %v, want %v", names, want)
	}
	first, _ := os.ReadFile(path)
	path2 := filepath.Join(dir, "b.npz")
	if err := WriteNPZ(path2, arrays); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(path2)
	if !bytes.Equal(first, second) {
		t.Error("WriteNPZ output is not deterministic")
	}

	// An empty archive is fine.
	if err := WriteNPZ(path, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadNPZ(path); err != nil || len(got) != 0 {
		t.Errorf("empty archive: %v, %v", got, err)
	}
}

// zipMember is one member of a hand-built archive.
type zipMember struct {
	name   string
	method uint16
	data   []byte
}

// buildZip returns a zip archive holding members. Members with a method
// other than Store and Deflate are written raw.
func buildZip(t testing.TB, members []zipMember) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		var (
			w   io.Writer
			err error
		)
		if m.method == zip.Store || m.method == zip.Deflate {
			w, err = zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: m.method})
		} else {
			w, err = zw.CreateRaw(&zip.FileHeader{
				Name: m.name, Method: m.method, CRC32: crc32.ChecksumIEEE(m.data),
				CompressedSize64: uint64(len(m.data)), UncompressedSize64: uint64(len(m.data)),
			})
		}
		if err == nil {
			_, err = w.Write(m.data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadNPZStoredAndMixed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.npz")
	b := buildZip(t, []zipMember{
		{"ints.npy", zip.Store, makeNPY(">i2", false, "(3,)", encodeRaw(">i2", 2, []uint64{1, 0xffff, 300}))},
		{"flags.npy", zip.Deflate, makeNPY("|b1", false, "(2,)", []byte{1, 0})},
		{"f.npy", zip.Store, makeNPY("<f4", true, "(2, 2)", encodeRaw("<f4", 4, []uint64{
			uint64(math.Float32bits(1)), uint64(math.Float32bits(3)), uint64(math.Float32bits(2)), uint64(math.Float32bits(4))}))},
		{"noext", zip.Store, makeNPY("<f8", false, "()", f64s(2))},
	})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{"ints": {1, -1, 300}, "flags": {1, 0}, "f": {1, 2, 3, 4}, "noext": {2}}
	for name, w := range want {
		if a := got[name]; a == nil || !sameFloats(a.Data, w) {
			t.Errorf("%q: got %v, want %v", name, a, w)
		}
	}
	if got["ints"].DType != ">i2" {
		t.Errorf("DType %q", got["ints"].DType)
	}
}

func TestReadNPZErrors(t *testing.T) {
	dir := t.TempDir()
	good := makeNPY("<f8", false, "(2,)", f64s(1, 2))

	corrupt := buildZip(t, []zipMember{{"a.npy", zip.Store, good}})
	i := bytes.LastIndex(corrupt, f64s(2))
	corrupt[i] ^= 1 // flip a bit in the stored data: CRC mismatch

	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"not zip", []byte("definitely not a zip file"), "zip: not a valid zip file"},
		{"empty file", nil, "zip: not a valid zip file"},
		{"npy not npz", good, "not a readable .npz archive (truncated, or not a ZIP file)"},
		{"member not npy", buildZip(t, []zipMember{{"a.npy", zip.Store, good}, {"readme.txt", zip.Deflate, []byte("hello")}}), `member "readme.txt": not a .npy file`},
		{"member truncated", buildZip(t, []zipMember{{"a.npy", zip.Deflate, good[:len(good)-4]}}), `member "a.npy": truncated data: shape (2,) of <f8 needs 16 bytes, member has 12`},
		{"member trailing", buildZip(t, []zipMember{{"a.npy", zip.Deflate, append(append([]byte{}, good...), 1, 2)}}), `member "a.npy": trailing data: found 2 bytes`},
		{"member bad dtype", buildZip(t, []zipMember{{"s.npy", zip.Store, makeNPY("<U3", false, "(2,)", make([]byte, 24))}}), `member "s.npy": unsupported dtype '<U3'`},
		{"duplicate", buildZip(t, []zipMember{{"a.npy", zip.Store, good}, {"a", zip.Store, good}}), `member "a": duplicate array name "a"`},
		{"unsupported method", buildZip(t, []zipMember{{"a.npy", 99, good}}), `member "a.npy": unsupported compression method 99`},
		{"checksum", corrupt, `member "a.npy": reading past the end of the data: zip: checksum error`},
		{"directory member", buildZip(t, []zipMember{{"d/", zip.Store, nil}}), `member "d/": not a .npy file: the member is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".npz")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadNPZ(path)
			if err == nil || got != nil {
				t.Fatalf("ReadNPZ = %v, %v; want error", got, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "npy: "+path+": ") || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want prefix %q and %q", msg, "npy: "+path+": ", tt.want)
			}
		})
	}

	missing := filepath.Join(dir, "missing.npz")
	if _, err := ReadNPZ(missing); !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "npy: "+missing+": open: ") {
		t.Errorf("missing: err = %v", err)
	}
}

func TestWriteNPZErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npz")
	good := &Array{Shape: []int{1}, Data: []float64{1}}
	tests := []struct {
		name   string
		arrays map[string]*Array
		want   string
	}{
		{"empty name", map[string]*Array{"": good}, "array name is empty"},
		{"parent folder", map[string]*Array{"../../evil": good}, `array name "../../evil" would be a member path outside`},
		{"absolute", map[string]*Array{"/etc/x": good}, "outside"},
		{"backslash", map[string]*Array{`..\x`: good}, "outside"},
		{"nil array", map[string]*Array{"a": good, "b": nil}, `array "b": nil Array`},
		{"inconsistent", map[string]*Array{"a": {Shape: []int{2, 2}, Data: []float64{1}}}, `array "a": array of shape (2, 2) needs 4 values, Data has 1`},
		{"negative", map[string]*Array{"a": {Shape: []int{-1}}}, `array "a": shape entry 0 is negative`},
	}
	for _, tt := range tests {
		err := WriteNPZ(path, tt.arrays)
		if err == nil || !strings.HasPrefix(err.Error(), "npy: "+path+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
		if names := dirEntries(t, dir); len(names) != 0 {
			t.Errorf("%s: directory holds %v", tt.name, names)
		}
	}
	missing := filepath.Join(dir, "nope", "a.npz")
	if err := WriteNPZ(missing, map[string]*Array{"a": good}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: err = %v", err)
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v", names)
	}
}

func TestReadZipMember(t *testing.T) {
	var npyFile bytes.Buffer
	if err := Write(&npyFile, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	good := npyFile.Bytes()
	var archive bytes.Buffer
	zw := zip.NewWriter(&archive)
	for name, data := range map[string][]byte{"good.npy": good, "short.npy": good[:len(good)-8], "long.npy": append(slices.Clone(good), 0)} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(archive.Bytes()), int64(archive.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		a, err := ReadZipMember(f)
		switch f.Name {
		case "good.npy":
			if err != nil || !slices.Equal(a.Shape, []int{2, 3}) || !slices.Equal(a.Data, []float64{1, 2, 3, 4, 5, 6}) {
				t.Errorf("good member: %v, %v", a, err)
			}
		default:
			if err == nil || !strings.HasPrefix(err.Error(), "npy: ") {
				t.Errorf("%s: error %v", f.Name, err)
			}
		}
	}
}
