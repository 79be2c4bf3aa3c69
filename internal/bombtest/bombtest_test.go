package bombtest_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"io"
	"slices"
	"testing"

	"github.com/dadil/dadil/internal/bombtest"
	"github.com/dadil/dadil/npy"
)

// The bombs are valid: small ones decompress to their prefix and zeros,
// with the right checksum.
func TestBombs(t *testing.T) {
	want := func(mib int) []byte { return append([]byte("prefix"), make([]byte, mib<<20)...) }
	for _, mib := range []int{3, 4, 5} {
		got, err := io.ReadAll(flate.NewReader(bytes.NewReader(bombtest.Deflate(t, []byte("prefix"), mib))))
		if err != nil || !bytes.Equal(got, want(mib)) {
			t.Errorf("Deflate of %d MiB: %d bytes, %v", mib, len(got), err)
		}
		zr, err := zlib.NewReader(bytes.NewReader(bombtest.Zlib(t, []byte("prefix"), mib)))
		if err != nil {
			t.Fatal(err)
		}
		// zlib checks the checksum at the end of the stream.
		if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, want(mib)) {
			t.Errorf("Zlib of %d MiB: %d bytes, %v", mib, len(got), err)
		}
	}
}

// NPYHeader and AddRaw make a .npy member whose header and directory
// entry agree, as the readers of package npy check.
func TestNPYMember(t *testing.T) {
	for _, shape := range [][]int{{3 << 17}, {1 << 16, 6}} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		hdr := bombtest.NPYHeader(shape...)
		if len(hdr)%64 != 0 {
			t.Errorf("header of %d bytes", len(hdr))
		}
		bombtest.AddRaw(t, zw, "a.npy", bombtest.Deflate(t, hdr, 3), uint64(len(hdr)+3<<20))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		h, err := npy.ReadZipHeader(zr.File[0])
		if err != nil || !slices.Equal(h.Shape, shape) || h.DType != "<f8" {
			t.Errorf("%v: header %+v, %v", shape, h, err)
		}
		a, err := npy.ReadZipMember(zr.File[0])
		if err != nil || len(a.Data) != 3<<17 {
			t.Errorf("%v: member %v", shape, err)
		}
	}
}

func TestAllocated(t *testing.T) {
	var keep []byte
	if a := bombtest.Allocated(func() { keep = make([]byte, 8<<20) }); a < 8<<20 || a > 9<<20 {
		t.Errorf("allocated %d bytes for 8 MiB", a)
	}
	_ = keep
}
