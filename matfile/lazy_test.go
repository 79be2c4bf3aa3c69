package matfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/bombtest"
)

// bombElem returns an miCOMPRESSED element whose miMATRIX element declares
// size bytes and whose stream holds content and then mib MiB of zeros.
func bombElem(t *testing.T, e enc, size int, content []byte, mib int) []byte {
	tag := e.bo.AppendUint32(nil, miMATRIX)
	tag = e.bo.AppendUint32(tag, uint32(size))
	return e.zlibElem(bombtest.Zlib(t, append(tag, content...), mib))
}

// TestLazyCompressed: compressed variables are decompressed only as far as
// they are used, and a used one only as far as its dimensions need.
func TestLazyCompressed(t *testing.T) {
	const mib = 2300 // 2.4 GB of zeros, about 2.3 MB compressed
	e := enc{bo: binary.LittleEndian}
	tagOf := func(typ uint32, n int) []byte { return e.bo.AppendUint32(e.bo.AppendUint32(nil, typ), uint32(n)) }
	head := func(name string, dims ...int) []byte {
		return slices.Concat(e.flags(mxDOUBLE, false, false, false), e.dimsElem(dims), e.elem(miINT8, []byte(name)))
	}
	// A 2.4 GB double array that nobody uses.
	c := append(head("bomb", mib<<17, 1), tagOf(miDOUBLE, mib<<20)...)
	bomb := bombElem(t, e, len(c)+mib<<20, c, mib)
	// A 2×2 array followed, inside its element, by 2.4 GB of zeros.
	c = slices.Concat(head("trailing", 2, 2), e.elem(miDOUBLE, e.encodeValues(miDOUBLE, []float64{1, 2, 3, 4})), tagOf(miUINT8, mib<<20))
	trailing := bombElem(t, e, len(c)+mib<<20, c, mib)
	// A 1 GiB array whose stream ends after 3 MiB.
	c = append(head("short", 1<<27, 1), tagOf(miDOUBLE, 1<<30)...)
	short := bombElem(t, e, len(c)+1<<30, c, 3)
	wantShort := fmt.Sprintf("truncated: the zlib stream holds %d bytes, the element needs %d", len(c)+3<<20, len(c)+1<<30)
	x := e.compressElem(e.matrixElem(testVar{name: "x", class: mxDOUBLE, dims: []int{2, 1}, re: []float64{1, 2}}))
	file := slices.Concat(header(e.bo, ""), bomb, trailing, short, x)

	const limit = 16 << 20
	var f *File
	var err error
	if a := bombtest.Allocated(func() { f, err = Read(bytes.NewReader(file)) }); err != nil || a > limit {
		t.Fatalf("Read of %d bytes: %v, allocated %d bytes", len(file), err, a)
	}
	if got := varNames(f); !slices.Equal(got, []string{"bomb", "trailing", "short", "x"}) {
		t.Fatalf("variables %v", got)
	}
	if v := f.Vars[0]; v.Class != "double" || !v.Numeric() || !slices.Equal(v.Dims, []int{mib << 17, 1}) {
		t.Fatalf("bomb listed as %s %v", v.Class, v.Dims)
	}
	var got []float64
	if a := bombtest.Allocated(func() { got, err = f.Vars[3].Vector() }); err != nil || !slices.Equal(got, []float64{1, 2}) || a > limit {
		t.Fatalf("x: %v, %v, allocated %d bytes", got, err, a)
	}
	var m *mat.Dense
	if a := bombtest.Allocated(func() { m, err = f.Vars[1].Matrix() }); err != nil || !slices.Equal(m.RawMatrix().Data, []float64{1, 3, 2, 4}) || a > limit {
		t.Fatalf("trailing: %v, %v, allocated %d bytes", m, err, a)
	}
	if a := bombtest.Allocated(func() { _, err = f.Vars[2].Vector() }); err == nil || a > limit {
		t.Fatalf("short: %v, allocated %d bytes", err, a)
	}
	if want := "matfile: compressed element at byte offset "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), wantShort) {
		t.Fatalf("short: %v", err)
	}
}
