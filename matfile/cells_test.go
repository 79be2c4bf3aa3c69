package matfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cellFile returns a file with cell arrays of every kind the reader
// handles, and a numeric variable after them.
func cellFile(l layout) []byte {
	if l.order == nil {
		l.order = binary.LittleEndian
	}
	e := enc{bo: l.order, noSmall: l.noSmall}
	num := func(class uint32, dims []int, vals ...float64) []byte {
		return e.matrixElem(testVar{class: class, dims: dims, re: vals, downcast: class == mxDOUBLE})
	}
	return buildMAT(l,
		cellVar("feature", []int{1, 3},
			num(mxDOUBLE, []int{3, 2}, 1.5, 2, 3, 4, 5, 6),
			num(mxDOUBLE, []int{0, 0}),
			num(mxUINT8, []int{3, 1}, 1, 0, 1)),
		cellVar("grid", []int{2, 2},
			num(mxINT16, []int{1, 1}, 11), num(mxINT16, []int{1, 1}, 21),
			num(mxINT16, []int{1, 1}, 12), num(mxINT16, []int{1, 1}, 22)),
		cellVar("mixed", []int{1, 5},
			e.matrixElem(e.charVar("", "ab")),
			e.matrixElem(e.cellOfChar("", "x")),
			e.matrixElem(e.structVar("")),
			e.elem(miMATRIX, nil), // an empty element
			e.matrixElem(testVar{class: mxUINT8, dims: []int{1, 2}, re: []float64{1, 0}, logical: true})),
		cellVar("none", []int{0, 0}),
		testVar{name: "after", class: mxDOUBLE, dims: []int{1, 2}, re: []float64{7, 8}},
	)
}

func TestCells(t *testing.T) {
	for _, l := range layouts() {
		t.Run(l.String(), func(t *testing.T) {
			f := mustRead(t, cellFile(l))
			if got, want := varNames(f), []string{"feature", "grid", "mixed", "none", "after"}; !slices.Equal(got, want) {
				t.Fatalf("variables %v, want %v", got, want)
			}
			v, _ := f.Lookup("feature")
			if v.Class != "cell" || !slices.Equal(v.Dims, []int{1, 3}) || v.Numeric() {
				t.Fatalf("feature: class %s dims %v", v.Class, v.Dims)
			}
			if _, err := v.Matrix(); err == nil || err.Error() != "matfile: variable feature is a cell array, not a numeric array" {
				t.Fatalf("Matrix of a cell array: %v", err)
			}
			cells, err := v.Cells()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range cells {
				names = append(names, c.Name)
			}
			if want := []string{"feature{1}", "feature{2}", "feature{3}"}; !slices.Equal(names, want) {
				t.Fatalf("cells %v, want %v", names, want)
			}
			checkVar(t, f, "feature{1}", "double", []int{3, 2}, []float64{1.5, 2, 3, 4, 5, 6})
			for _, name := range []string{"feature{2}", "mixed{4}"} {
				// Empty cells, as MATLAB writes them and as an empty
				// element.
				c, err := f.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				if x, err := c.Vector(); err != nil || len(x) != 0 || c.Class != "double" || !slices.Equal(c.Dims, []int{0, 0}) {
					t.Fatalf("%s: %v, %v, class %s, dims %v", name, x, err, c.Class, c.Dims)
				}
			}
			checkVar(t, f, "feature{3}", "uint8", []int{3, 1}, []float64{1, 0, 1})
			// Column-major order: grid{2} is row 2 of column 1.
			for k, want := range []float64{11, 21, 12, 22} {
				checkVar(t, f, fmt.Sprintf("grid{%d}", k+1), "int16", []int{1, 1}, []float64{want})
			}
			checkVar(t, f, "mixed{5}", "logical", []int{1, 2}, []float64{1, 0})
			checkVar(t, f, "after", "double", []int{1, 2}, []float64{7, 8})

			// Cells that are not numeric are listed; their accessors
			// fail, and cells are read one level deep.
			mixed, _ := f.Lookup("mixed")
			cells, err = mixed.Cells()
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []struct {
				class string
				dims  []int
			}{{"char", []int{1, 2}}, {"cell", []int{1, 1}}, {"struct", []int{1, 1}}} {
				if c := cells[i]; c.Class != want.class || !slices.Equal(c.Dims, want.dims) || c.Numeric() {
					t.Errorf("%s: class %s dims %v", c.Name, c.Class, c.Dims)
				}
			}
			if _, err := cells[0].Vector(); err == nil || err.Error() != "matfile: variable mixed{1} is a char array, not a numeric array" {
				t.Errorf("Vector of a char cell: %v", err)
			}
			if _, err := cells[1].Cells(); err == nil || err.Error() != "matfile: variable mixed{2} is a cell array inside a cell array; only one level of cells is read" {
				t.Errorf("Cells of a nested cell: %v", err)
			}
			none, _ := f.Lookup("none")
			if cells, err := none.Cells(); err != nil || len(cells) != 0 {
				t.Errorf("empty cell array: %v, %v", cells, err)
			}
		})
	}
}

func TestCellLookupErrors(t *testing.T) {
	f := mustRead(t, cellFile(layout{compress: true}))
	tests := []struct {
		name, want string
		notFound   bool
	}{
		{"feature{4}", "matfile: variable feature has 3 cells; there is no feature{4}", false},
		{"after{1}", "matfile: variable after is a double array, not a cell array", false},
		{"nosuch{1}", `matfile: no variable "nosuch{1}" (numeric variables: after)`, true},
		{"feature{0}", `matfile: no variable "feature{0}"`, true},
		{"feature{+1}", `matfile: no variable "feature{+1}"`, true},
		{"feature{1", `matfile: no variable "feature{1"`, true},
		{"{1}", `matfile: no variable "{1}"`, true},
		{"feature{99999999999999999999}", `matfile: no variable`, true},
	}
	for _, tc := range tests {
		_, err := f.Lookup(tc.name)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || errors.Is(err, ErrNotFound) != tc.notFound {
			t.Errorf("Lookup(%q): %v, want %q (not found: %v)", tc.name, err, tc.want, tc.notFound)
		}
	}
	after, _ := f.Lookup("after")
	if _, err := after.Cells(); err == nil || err.Error() != "matfile: variable after is a double array, not a cell array" {
		t.Errorf("Cells of a double array: %v", err)
	}
}

func TestCellErrors(t *testing.T) {
	e := enc{bo: binary.LittleEndian}
	num := e.matrixElem(testVar{class: mxDOUBLE, dims: []int{1, 1}, re: []float64{1}})
	tests := []struct {
		name string
		v    testVar
		want string
	}{
		{"too many cells", cellVar("c", []int{1, 1000}, num), "variable c: dimensions 1x1000 need 1000 cells of at least 8 bytes each, 64 bytes remain"},
		{"huge dimensions", cellVar("c", []int{1 << 30, 1 << 30, 1 << 30}, num), "variable c: dimensions 1073741824x1073741824x1073741824 are too large"},
		{"too many for the reader", cellVar("c", []int{1 << 20, 2}, num), "variable c: 2097152 cells, more than the 1048576 this package reads"},
		{"not a matrix", cellVar("c", []int{1, 1}, e.elem(miDOUBLE, make([]byte, 8))), "variable c{1}: element at byte offset 176 is 8 bytes of miDOUBLE, want an miMATRIX element"},
		{"missing cell", cellVar("c", []int{2, 1}, num, e.elem(miINT8, []byte("x"))), "variable c{2}: element at byte offset 240 is 1 bytes of miINT8, want an miMATRIX element"},
		{"bad dims", cellVar("c", []int{1, 1}, e.elem(miMATRIX, slices.Concat(e.flags(mxDOUBLE, false, false, false), e.dimsElem([]int{1, -1})))), "variable c{1}: dimensions at byte offset 200: dimension 2 is negative (-1)"},
		{"data mismatch", cellVar("c", []int{1, 1}, e.matrixElem(testVar{class: mxDOUBLE, dims: []int{2, 2}, re: []float64{1, 2, 3}})), "variable c{1}: dimensions 2x2 need 4 values, the real part at byte offset 224 holds 24 bytes of miDOUBLE"},
		{"missing data", cellVar("c", []int{1, 1}, e.elem(miMATRIX, slices.Concat(e.flags(mxDOUBLE, false, false, false), e.dimsElem([]int{1, 1}), e.elem(miINT8, nil)))), "variable c{1}: missing real part"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		for _, l := range []layout{{order: e.bo}, {order: e.bo, compress: true}} {
			t.Run(tc.name+"/"+l.String(), func(t *testing.T) {
				// The error comes when the cells are used, from Cells
				// and Lookup alike, naming the file.
				path := filepath.Join(dir, "c.mat")
				if err := os.WriteFile(path, buildMAT(l, tc.v), 0o600); err != nil {
					t.Fatal(err)
				}
				f, err := Open(path)
				if err != nil {
					t.Fatal(err)
				}
				// Offsets differ in the decompressed data: compare
				// the message up to the first one.
				want := tc.want
				if i := strings.Index(want, " at byte offset"); l.compress && i >= 0 {
					want = want[:i]
				}
				_, err = f.Vars[0].Cells()
				if err == nil || !strings.HasPrefix(err.Error(), "matfile: "+path+": ") || !strings.Contains(err.Error(), want) {
					t.Fatalf("Cells: %v, want %q", err, want)
				}
				if _, err2 := f.Lookup("c{1}"); err2 == nil || err2.Error() != err.Error() {
					t.Fatalf("Lookup: %v, want %v", err2, err)
				}
			})
		}
	}
}

func TestCellsCompressedTruncated(t *testing.T) {
	// A compressed cell array whose stream is cut: Read lists it, Cells
	// fails.
	e := enc{bo: binary.LittleEndian}
	v := cellVar("c", []int{1, 2}, e.matrixElem(testVar{class: mxDOUBLE, dims: []int{50, 1}, re: make([]float64, 50)}), e.matrixElem(e.charVar("", "abc")))
	z := zlibBytes(e.matrixElem(v))
	f := mustRead(t, append(header(e.bo, ""), e.zlibElem(z[:60])...))
	if f.Vars[0].Class != "cell" {
		t.Fatalf("class %s", f.Vars[0].Class)
	}
	_, err := f.Vars[0].Cells()
	if err == nil || !strings.HasPrefix(err.Error(), "matfile: compressed element at byte offset 128: truncated: the zlib stream holds ") {
		t.Fatalf("got %v", err)
	}
	// The error is kept: a second call returns it again.
	if _, err2 := f.Vars[0].Cells(); err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("second call: %v", err2)
	}
}
