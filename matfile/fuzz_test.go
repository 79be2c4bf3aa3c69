package matfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/bombtest"
)

// seedFiles returns well-formed files covering the format's features.
func seedFiles() [][]byte {
	var files [][]byte
	for _, l := range layouts() {
		e := enc{bo: l.order, noSmall: l.noSmall}
		files = append(files,
			buildMAT(l,
				testVar{name: "fts", class: mxDOUBLE, dims: []int{3, 2}, re: []float64{1, 0, 2, 5, 255, 7}, downcast: true},
				testVar{name: "labels", class: mxDOUBLE, dims: []int{3, 1}, re: []float64{1, 2, 2}, downcast: true},
			),
			buildMAT(l,
				testVar{name: "z", class: mxSINGLE, dims: []int{1, 2}, re: []float64{1.5, 2}, im: []float64{0, 1}},
				e.cellOfChar("imgNames", "a", "bc"),
				testVar{name: "m", class: mxUINT8, dims: []int{2, 1}, re: []float64{1, 0}, logical: true},
			),
			cellFile(l),
		)
	}
	for _, nc := range numericClasses {
		files = append(files, buildMAT(layout{}, testVar{name: nc.name, class: nc.class, dims: []int{2, 1, 2},
			re: sampleValues(4, nc.lo, nc.hi, nc.fraction, nc.class == mxSINGLE)}))
	}
	e := enc{bo: binary.LittleEndian}
	files = append(files,
		buildMAT(layout{}, e.structVar("st"), e.charVar("s", "text")),
		append(buildMAT(layout{compress: true}), e.compressElem(e.opaqueElem("str"))...),
	)
	return files
}

// variants returns f and damaged copies of it: truncated, extended and
// with single bytes changed.
func variants(f []byte) [][]byte {
	out := [][]byte{f}
	for _, n := range []int{0, 100, 127, 128, 130, 136, 140, 150, len(f) / 2, len(f) - 1} {
		if n >= 0 && n < len(f) {
			out = append(out, f[:n])
		}
	}
	out = append(out, append(slices.Clone(f), 0, 0, 0))
	for _, i := range []int{124, 126, 128, 131, 132, 135, 136, 140, 144, 148, 152, 160, 170, len(f) - 2} {
		if i >= 0 && i < len(f) {
			g := slices.Clone(f)
			g[i] ^= 0x81
			out = append(out, g)
		}
	}
	return out
}

// maxInflate bounds the deflate expansion ratio (about 1032:1).
const maxInflate = 1100

func FuzzRead(f *testing.F) {
	for _, file := range seedFiles() {
		for _, v := range variants(file) {
			f.Add(v)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var f1 *File
		var err1 error
		alloc := bombtest.Allocated(func() { f1, err1 = Read(bytes.NewReader(b)) })
		// Memory is bounded by the input, expanded at most maxInflate
		// times by decompression and doubled by buffer growth.
		if limit := uint64(3*maxInflate*len(b) + 4<<20); alloc > limit {
			t.Fatalf("Read of %d bytes allocated %d bytes (limit %d)", len(b), alloc, limit)
		}
		f2, err2 := Read(onlyReader{bytes.NewReader(b)})
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("known and unknown size disagree: %v vs %v", err1, err2)
		}
		if err1 != nil {
			if !strings.HasPrefix(err1.Error(), "matfile: ") || err1.Error() != err2.Error() {
				t.Fatalf("bad errors %q, %q", err1, err2)
			}
			if f1 != nil {
				t.Fatal("non-nil File with error")
			}
			return
		}
		if len(f1.Vars) != len(f2.Vars) {
			t.Fatal("known and unknown size give different files")
		}
		for _, v := range f1.Vars {
			checkConsistent(t, v)
		}
	})
}

// checkConsistent fails the test unless v is consistent, and calls every
// accessor, which must not panic.
func checkConsistent(t *testing.T, v *Var) {
	t.Helper()
	if v.Name == "" || v.Class == "" {
		t.Fatalf("variable %q of class %q", v.Name, v.Class)
	}
	if err := v.load(); err != nil {
		// Data that cannot be read: every accessor fails.
		if !strings.HasPrefix(err.Error(), "matfile: ") {
			t.Fatalf("bad error %q", err)
		}
		if _, err := v.Vector(); err == nil && v.n > 0 {
			t.Fatalf("%s: Vector succeeds after %v", v.Name, err)
		}
		return
	}
	if v.Numeric() {
		n, ok := count(v.Dims)
		if !ok || n != v.n || len(v.Dims) < 2 || len(v.re) != n*numericSize(v.typ) {
			t.Fatalf("%s: dims %v, n %d, %d bytes of %s", v.Name, v.Dims, v.n, len(v.re), typeName(v.typ))
		}
		if v.Complex && len(v.im) != n*numericSize(v.imTyp) {
			t.Fatalf("%s: imaginary part of %d bytes of %s", v.Name, len(v.im), typeName(v.imTyp))
		}
	}
	for _, d := range v.Dims {
		if d < 0 {
			t.Fatalf("%s: dims %v", v.Name, v.Dims)
		}
	}
	if m, err := v.Matrix(); err == nil {
		r, c := m.Dims()
		if r != v.Dims[0] || c != v.Dims[1] {
			t.Fatalf("%s: %d×%d matrix for dims %v", v.Name, r, c, v.Dims)
		}
	} else if !strings.HasPrefix(err.Error(), "matfile: ") {
		t.Fatalf("bad error %q", err)
	}
	if x, err := v.Vector(); err == nil && len(x) != v.n {
		t.Fatalf("%s: vector of %d for %d elements", v.Name, len(x), v.n)
	}
	if x, err := v.Ints(); err == nil && len(x) != v.n {
		t.Fatalf("%s: %d ints for %d elements", v.Name, len(x), v.n)
	}
	cells, err := v.Cells()
	switch {
	case err != nil && !strings.HasPrefix(err.Error(), "matfile: "):
		t.Fatalf("bad error %q", err)
	case err == nil && v.Class != "cell":
		t.Fatalf("%s: cells of a %s array", v.Name, v.Class)
	case err == nil && (len(v.Dims) < 2 || len(cells) != mustCount(v.Dims)):
		t.Fatalf("%s: %d cells for dims %v", v.Name, len(cells), v.Dims)
	}
	for k, c := range cells {
		if want := fmt.Sprintf("%s{%d}", v.Name, k+1); c.Name != want {
			t.Fatalf("cell named %q, want %q", c.Name, want)
		}
		checkConsistent(t, c)
	}
}

// mustCount returns the product of dims, which must not overflow.
func mustCount(dims []int) int {
	n, _ := count(dims)
	return n
}

// TestSeedFilesRead checks that the undamaged seed files read and are
// consistent.
func TestSeedFilesRead(t *testing.T) {
	for _, b := range seedFiles() {
		f := mustRead(t, b)
		if len(f.Vars) == 0 {
			t.Fatal("seed without variables")
		}
		for _, v := range f.Vars {
			checkConsistent(t, v)
		}
	}
}
