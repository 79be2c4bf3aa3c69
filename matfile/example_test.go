package matfile_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/matfile"
)

// tinyMAT assembles, by hand, a little-endian level-5 MAT-file holding a
// 2×3 double matrix x (column-major on disk) and a 1×1 uint16 scalar rpm
// stored in a small data element, as save -v6 would write them.
func tinyMAT() []byte {
	le := binary.LittleEndian
	text := "MATLAB 5.0 MAT-file, example"
	b := []byte(text + strings.Repeat(" ", 116-len(text)))
	b = append(b, "        "...)                         // no subsystem data
	b = le.AppendUint16(b, 0x0100)                       // version
	b = append(b, 'I', 'M')                              // little-endian
	elem := func(typ uint32, data []byte) (out []byte) { // tag, data, padding
		out = le.AppendUint32(le.AppendUint32(out, typ), uint32(len(data)))
		return append(append(out, data...), make([]byte, (8-len(data)%8)%8)...)
	}
	u32 := func(v ...uint32) (out []byte) {
		for _, x := range v {
			out = le.AppendUint32(out, x)
		}
		return out
	}
	var x []byte
	for _, v := range []float64{1, 4, 2, 5, 3, 6} { // columns (1,4), (2,5), (3,6)
		x = le.AppendUint64(x, math.Float64bits(v))
	}
	b = append(b, elem(14, bytes.Join([][]byte{
		elem(6, u32(6, 0)),   // miUINT32 array flags: class double
		elem(5, u32(2, 3)),   // miINT32 dimensions: 2×3
		elem(1, []byte("x")), // miINT8 name
		elem(9, x),           // miDOUBLE data
	}, nil))...)
	b = append(b, elem(14, bytes.Join([][]byte{
		elem(6, u32(11, 0)),    // class uint16
		elem(5, u32(1, 1)),     // 1×1
		elem(1, []byte("rpm")), // name
		u32(2<<16|4, 1772),     // small element: 2 bytes of miUINT16
	}, nil))...)
	return b
}

func Example() {
	f, err := matfile.Read(bytes.NewReader(tinyMAT()))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Header)
	for _, v := range f.Vars {
		fmt.Println(v.Name, v.Class, v.Dims)
	}

	x, err := f.Vars[0].Matrix()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v\n", mat.Formatted(x))

	rpm, err := f.Lookup("rpm")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rpm.Ints())

	_, err = f.Lookup("feas")
	fmt.Println(err)
	_, err = f.Vars[0].Vector()
	fmt.Println(err)

	// Output:
	// MATLAB 5.0 MAT-file, example
	// x double [2 3]
	// rpm uint16 [1 1]
	// ⎡1  2  3⎤
	// ⎣4  5  6⎦
	// [1772] <nil>
	// matfile: no variable "feas" (numeric variables: x, rpm)
	// matfile: variable x is a 2x3 array; want a vector (n×1, 1×n or 1×1)
}
