package modelfile

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// zerosBomb returns a raw deflate stream of prefix followed by mib MiB of
// zeros (mib >= 3), built by repeating the compressed form of one MiB of
// zeros, which is the same for every MiB after the first.
func zerosBomb(prefix []byte, mib int) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(prefix)
	w.Write(make([]byte, 2<<20))
	w.Flush()
	mark := buf.Len()
	w.Write(make([]byte, 1<<20))
	w.Flush()
	chunk := bytes.Clone(buf.Bytes()[mark:])
	buf.Write(bytes.Repeat(chunk, mib-3))
	return append(buf.Bytes(), 1, 0, 0, 0xff, 0xff) // final empty stored block
}

// withBomb returns the model file orig with member name replaced by a
// .npy file of header hdr followed by mib MiB of zeros, deflated, its
// directory entry declaring exactly that size.
func withBomb(t *testing.T, orig []byte, name string, hdr []byte, mib int) []byte {
	t.Helper()
	return replace(t, orig, name, func(zw *zip.Writer) {
		raw := zerosBomb(hdr, mib)
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate,
			CompressedSize64: uint64(len(raw)), UncompressedSize64: uint64(len(hdr) + mib<<20)})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(raw)
	})
}

// npyHeader returns the header of a version 1.0 .npy file of float64 of
// shape (rows, cols), without data.
func npyHeader(rows, cols int) []byte {
	text := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols)
	text += strings.Repeat(" ", 63-(10+len(text))%64) + "\n"
	return append(binary.LittleEndian.AppendUint16([]byte("\x93NUMPY\x01\x00"), uint16(len(text))), text...)
}

// TestBomb: a member whose header declares far more than the manifest
// allows is refused on its header, before its data is decompressed.
func TestBomb(t *testing.T) {
	const mib = 2300 // 2.4 GB of zeros, about 2.3 MB compressed
	f := testFile(t)
	var buf bytes.Buffer
	if err := write(&buf, f); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	_, d := f.Model.Dict.Atoms[0].X.Dims()
	n := f.Model.Dict.Settings.Samples
	if rows, _ := f.Model.Dict.Atoms[0].X.Dims(); n != rows {
		t.Fatalf("settings say %d points, atom 0 has %d", n, rows)
	}
	if (mib<<17)%d != 0 {
		t.Fatalf("%d features do not divide the bomb", d)
	}
	// atom0_X.npy: a consistent header, shape (rows, d), and 2.4 GB of
	// zeros, as its directory entry declares.
	rows := mib << 17 / d
	bomb := withBomb(t, good, "atom0_X.npy", npyHeader(rows, d), mib)
	// The same without the support size in the settings: the labels of
	// atom 0 then refuse it.
	man := readManifest(t, good)
	delete(man["settings"].(map[string]any), "Samples")
	mb, _ := json.Marshal(man)
	noSamples := withBomb(t, rewrite(t, good, "manifest.json", mb), "atom0_X.npy", npyHeader(rows, d), mib)

	// The bomb is valid: a small one decompresses to its prefix and zeros.
	if got, err := io.ReadAll(flate.NewReader(bytes.NewReader(zerosBomb([]byte("prefix"), 4)))); err != nil || !bytes.Equal(got, append([]byte("prefix"), make([]byte, 4<<20)...)) {
		t.Fatalf("zerosBomb: %d bytes, %v", len(got), err)
	}

	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"samples", bomb, fmt.Sprintf("atom0_X.npy declares %d points, more than the support size %d of the manifest's settings (Samples)", rows, n)},
		{"logits", noSamples, fmt.Sprintf("atom0_logits.npy has shape [%d 3], want (%d, 3)", n, rows)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			_, err := Read(tc.file)
			runtime.ReadMemStats(&ms)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if a := ms.TotalAlloc - before; a > 16<<20 {
				t.Fatalf("allocated %d bytes", a)
			}
		})
	}
}
