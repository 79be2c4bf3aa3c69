package mattest

import (
	"bytes"
	"slices"
	"testing"

	"github.com/dadil/dadil/matfile"
)

func TestEncodeReadsBack(t *testing.T) {
	x := []float64{1.5, -2, 3, 0.25, 7}
	f, err := matfile.Read(bytes.NewReader(Encode(Column("X001_DE_time", x), Var{Name: "m", Dims: []int{2, 2}, Data: []float64{1, 2, 3, 4}})))
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.Lookup("X001_DE_time")
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Vector()
	if err != nil || !slices.Equal(got, x) {
		t.Fatalf("vector %v, %v; want %v", got, err, x)
	}
	m, _ := f.Lookup("m")
	d, err := m.Matrix()
	if err != nil || d.At(0, 1) != 3 || d.At(1, 0) != 2 {
		t.Fatalf("matrix %v, %v: want column-major [1 3; 2 4]", d, err)
	}
}
