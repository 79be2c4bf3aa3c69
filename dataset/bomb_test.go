package dataset

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dadil/dadil/internal/bombtest"
	"github.com/dadil/dadil/matfile"
	"github.com/dadil/dadil/npy"
)

// bombMiB is the size of the bombs: 2.4 GB of zeros, about 2.3 MB
// compressed.
const bombMiB = 2300

// TestReadUnusedBombs: the readers decompress only the arrays they use, so
// an unused member or variable that would decompress to 2.4 GB costs
// nothing.
func TestReadUnusedBombs(t *testing.T) {
	dir := t.TempDir()
	x := []float64{1, 2, 3, 4, 5, 6}
	le := binary.LittleEndian

	// A .npz archive with X, y and junk.npy, a consistent .npy file of
	// 2.4 GB: its header says so, and so does its directory entry.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, a := range map[string]*npy.Array{"X": {Shape: []int{3, 2}, Data: x}, "y": {Shape: []int{3}, Data: []float64{1, 0, 1}}} {
		w, _ := zw.Create(name + ".npy")
		if err := npy.Write(w, a.Shape, a.Data); err != nil {
			t.Fatal(err)
		}
	}
	head := bombtest.NPYHeader(bombMiB << 17)
	bombtest.AddRaw(t, zw, "junk.npy", bombtest.Deflate(t, head, bombMiB), uint64(len(head)+bombMiB<<20))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	npzPath := writeFile(t, dir, "bomb.npz", buf.Bytes())
	// The bomb is a valid member: its header matches its size.
	if h, err := npy.ReadZipHeader(member(t, npzPath, "junk.npy")); err != nil || !slices.Equal(h.Shape, []int{bombMiB << 17}) {
		t.Fatalf("junk.npy: %v, %v", h, err)
	}

	// A .mat file with X and labels, compressed, and junk, a compressed
	// double array of 2.4 GB.
	content := slices.Concat(
		matElem(6, le.AppendUint32(le.AppendUint32(nil, 6), 0)),                   // flags: double
		matElem(5, le.AppendUint32(le.AppendUint32(nil, uint32(bombMiB<<17)), 1)), // dims
		matElem(1, []byte("junk")),
		le.AppendUint32(le.AppendUint32(nil, 9), uint32(bombMiB<<20))) // miDOUBLE
	prefix := slices.Concat(le.AppendUint32(le.AppendUint32(nil, 14), uint32(len(content)+bombMiB<<20)), content)
	stream := bombtest.Zlib(t, prefix, bombMiB)
	matPath := writeMAT(t, dir, "bomb.mat", true,
		matVar{name: "X", dims: []int{3, 2}, vals: colMajor(3, 2, x)},
		matVar{name: "labels", dims: []int{3, 1}, vals: []float64{1, 0, 1}})
	b, err := os.ReadFile(matPath)
	if err != nil {
		t.Fatal(err)
	}
	b = slices.Concat(b, le.AppendUint32(le.AppendUint32(nil, 15), uint32(len(stream))), stream)
	matPath = writeFile(t, dir, "bomb.mat", b)

	if f, err := matfile.Open(matPath); err != nil || len(f.Vars) != 3 || !slices.Equal(f.Vars[2].Dims, []int{bombMiB << 17, 1}) {
		t.Fatalf("bomb.mat: %v", err)
	}
	for _, path := range []string{npzPath, matPath} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var d *File
			a := bombtest.Allocated(func() { d, err = Read(path, nil) })
			if err != nil {
				t.Fatal(err)
			}
			if got := dense(d.X); !slices.Equal(got, x) || !slices.Equal(d.Labels, []int{1, 0, 1}) {
				t.Fatalf("got %v, %v", got, d.Labels)
			}
			if a > 16<<20 {
				t.Fatalf("allocated %d bytes reading %s", a, path)
			}
		})
	}
}

// member returns member name of the zip archive at path.
func member(t *testing.T, path, name string) *zip.File {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zr.Close() })
	for _, f := range zr.File {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no member %s", name)
	return nil
}
