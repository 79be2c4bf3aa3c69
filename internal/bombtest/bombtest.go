// Package bombtest builds decompression bombs for tests: streams that
// inflate to gigabytes of zeros, built in milliseconds and never stored,
// for checking that a reader refuses them or inflates no more than it
// uses; and it measures what a function allocates. Once the deflate window
// holds zeros, every further MiB of zeros compresses to the same bytes
// (about 1 KiB), which are repeated instead of compressed.
package bombtest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// Deflate returns a raw deflate stream (RFC 1951) of prefix followed by
// mib MiB of zero bytes; mib must be at least 3.
func Deflate(t testing.TB, prefix []byte, mib int) []byte {
	t.Helper()
	if mib < 3 {
		t.Fatalf("bombtest: a bomb of %d MiB, want at least 3", mib)
	}
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	fw.Write(prefix)
	zeros := make([]byte, 1<<20)
	var chunks [3][]byte
	for i := range chunks {
		mark := buf.Len()
		fw.Write(zeros)
		fw.Flush()
		chunks[i] = bytes.Clone(buf.Bytes()[mark:])
	}
	if !bytes.Equal(chunks[1], chunks[2]) {
		t.Fatal("bombtest: compressed MiBs of zeros differ")
	}
	for range mib - len(chunks) {
		buf.Write(chunks[2])
	}
	return append(buf.Bytes(), 1, 0, 0, 0xff, 0xff) // final empty stored block
}

// Zlib returns the data of Deflate as a zlib stream (RFC 1950), with its
// Adler-32 checksum.
func Zlib(t testing.TB, prefix []byte, mib int) []byte {
	t.Helper()
	z := append([]byte{0x78, 0xda}, Deflate(t, prefix, mib)...)
	// Zeros leave the first sum a and add n·a to the second.
	sum := adler32.Checksum(prefix)
	a, b := uint64(sum&0xffff), uint64(sum>>16)
	b = (b + uint64(mib)<<20%65521*a) % 65521
	return binary.BigEndian.AppendUint32(z, uint32(b<<16|a))
}

// NPYHeader returns the header of a version 1.0 .npy file of
// little-endian float64 of the given shape, without data: the prefix of a
// bomb that is a consistent .npy file.
func NPYHeader(shape ...int) []byte {
	dims := make([]string, len(shape))
	for i, n := range shape {
		dims[i] = fmt.Sprint(n)
	}
	s := strings.Join(dims, ", ")
	if len(shape) == 1 {
		s += ","
	}
	text := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }", s)
	text += strings.Repeat(" ", 63-(10+len(text))%64) + "\n"
	return append(binary.LittleEndian.AppendUint16([]byte("\x93NUMPY\x01\x00"), uint16(len(text))), text...)
}

// AddRaw adds to zw a deflated member name whose raw stream is raw and
// which declares size uncompressed bytes and no checksum.
func AddRaw(t testing.TB, zw *zip.Writer, name string, raw []byte, size uint64) {
	t.Helper()
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CompressedSize64: uint64(len(raw)), UncompressedSize64: size})
	if err == nil {
		_, err = w.Write(raw)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Allocated returns the bytes allocated while f runs (the growth of
// runtime.MemStats.TotalAlloc).
func Allocated(f func()) uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	f()
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc - before
}

// PeakHeap returns the largest growth of the live heap while f runs,
// sampled every millisecond with the collector run at every 5% of growth
// (set process-wide while f runs): the measure the memory estimates of
// packages dictionary and adapt are compared with.
func PeakHeap(f func()) int64 {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	heap := func() int64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	runtime.GC()
	base, peak := heap(), int64(0)
	stop, done := make(chan bool), make(chan bool)
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				peak = max(peak, heap())
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak - base
}
