package modelfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/bombtest"
	"github.com/dadil/dadil/internal/sysmem"
)

// withBomb returns the model file orig with member name replaced by a
// .npy file of header hdr followed by mib MiB of zeros, deflated, its
// directory entry declaring exactly that size.
func withBomb(t *testing.T, orig []byte, name string, hdr []byte, mib int) []byte {
	t.Helper()
	return replace(t, orig, name, func(zw *zip.Writer) {
		bombtest.AddRaw(t, zw, name, bombtest.Deflate(t, hdr, mib), uint64(len(hdr)+mib<<20))
	})
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
	bomb := withBomb(t, good, "atom0_X.npy", bombtest.NPYHeader(rows, d), mib)
	// The same without the support size in the settings: the labels of
	// atom 0 then refuse it.
	man := readManifest(t, good)
	delete(man["settings"].(map[string]any), "Samples")
	mb, _ := json.Marshal(man)
	noSamples := withBomb(t, rewrite(t, good, "manifest.json", mb), "atom0_X.npy", bombtest.NPYHeader(rows, d), mib)
	// The points of a k-nearest-neighbour classifier, which may not
	// outnumber the largest atom's (with the sources' rows beside it) or
	// the target rows a transport step labels.
	knn := fittedWith(t, "knn")
	largest := pointsLimit(knn.Model.Dict)
	knnBomb := withBomb(t, encoded(t, knn), "r_X.npy", bombtest.NPYHeader(rows, d), mib)

	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"samples", bomb, fmt.Sprintf("atom0_X.npy declares %d points, more than the support size %d of the manifest's settings (Samples)", rows, n)},
		{"logits", noSamples, fmt.Sprintf("atom0_logits.npy has shape [%d 3], want (%d, 3)", n, rows)},
		{"knn points", knnBomb, fmt.Sprintf("r_X.npy declares %d points, more than the %d a classifier of this model trains on", rows, largest)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			a := bombtest.Allocated(func() { _, err = Read(tc.file) })
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if a > 16<<20 {
				t.Fatalf("allocated %d bytes", a)
			}
		})
	}
}

// TestBombConsistent: members whose headers agree with a consistent
// manifest are still read within bounds: a member whose stream inflates
// beyond the size its header and directory entry declare fails at that
// size, and a manifest that declares atoms larger than the memory limit
// is refused on the headers, before any data is decompressed.
func TestBombConsistent(t *testing.T) {
	const mib = 2300 // 2.4 GB of zeros, about 2.3 MB compressed
	f := testFile(t)
	good := encoded(t, f)
	rows, d := f.Model.Dict.Atoms[0].X.Dims()
	_, c := f.Model.Dict.Atoms[0].Logits.Dims()
	// atom0_X.npy: the header of the real shape and a directory entry of
	// that size, over a stream of 2.4 GB.
	hdr := bombtest.NPYHeader(rows, d)
	beyond := replace(t, good, "atom0_X.npy", func(zw *zip.Writer) {
		bombtest.AddRaw(t, zw, "atom0_X.npy", bombtest.Deflate(t, hdr, mib), uint64(len(hdr)+8*rows*d))
	})
	// A manifest whose support size allows 2.4 GB atoms, and atom 0's
	// points and logits as consistent bombs.
	huge := mib << 17 / d
	man := readManifest(t, good)
	man["settings"].(map[string]any)["Samples"] = huge
	mb, _ := json.Marshal(man)
	declared := withBomb(t, rewrite(t, good, "manifest.json", mb), "atom0_X.npy", bombtest.NPYHeader(huge, d), mib)
	declared = withBomb(t, declared, "atom0_logits.npy", bombtest.NPYHeader(huge, c), huge*c>>17)
	defer func(m func() sysmem.Limit) { memoryLimit = m }(memoryLimit)
	memoryLimit = func() sysmem.Limit { return sysmem.Limit{Bytes: 1 << 30, Source: "test"} }
	for _, tc := range []struct {
		name, want string
		file       []byte
	}{
		{"inflates beyond its size", fmt.Sprintf("atom0_X.npy: npy: the member inflates to more than the %d bytes its directory entry and header declare", len(hdr)+8*rows*d), beyond},
		{"declared beyond memory", "the arrays of the model file declare 5.6 GiB in all, more than the limit of 1.0 GiB (test)", declared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			a := bombtest.Allocated(func() { _, err = Read(tc.file) })
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if a > 16<<20 {
				t.Fatalf("allocated %d bytes", a)
			}
		})
	}
}
