package matfile

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// python is the interpreter used for the scipy cross-checks. It is given
// explicitly: the python3 on PATH may lack scipy.
const python = "/usr/bin/python3"

// needScipy skips the test unless scipy.io can be imported.
func needScipy(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping the scipy cross-check in short mode")
	}
	out, err := exec.Command(python, "-c", "import scipy.io").CombinedOutput()
	if err != nil {
		t.Skipf("skipping the scipy cross-check: %s cannot import scipy.io (%v: %s)", python, err, strings.TrimSpace(string(out)))
	}
}

// scipyScript writes MAT-files with scipy.io.savemat ("write DIR") or
// describes MAT-files read with scipy.io.loadmat ("read FILE..."), as JSON
// on standard output.
const scipyScript = `
import json, sys
import numpy as np
import scipy.io as sio

def describe(a):
    a = np.asarray(a)
    d = {"shape": list(a.shape), "dtype": a.dtype.name}
    if a.dtype.kind in "biuf":
        d["data"] = [float(x) for x in a.astype(np.float64).ravel(order="C")]
        if a.dtype.kind in "iu":
            d["ints"] = [str(int(x)) for x in a.ravel(order="C")]
    return d

if sys.argv[1] == "write":
    out = sys.argv[2]
    rng = np.random.default_rng(42)
    v = {}
    v["d"] = rng.standard_normal((5, 3))
    v["f"] = rng.standard_normal((4, 2)).astype(np.float32)
    for dt in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]:
        info = np.iinfo(dt)
        v[dt] = np.array([[info.min, info.max, 0, 7], [1, 2, 3, 4]], dtype=dt)
    v["b"] = np.array([[True, False, True]])
    v["row"] = np.arange(5.0)
    v["col"] = np.arange(4.0).reshape(4, 1)
    v["scalar"] = 3.5
    v["nd"] = np.arange(24.0).reshape(2, 3, 4)
    v["empty"] = np.zeros((0, 3))
    v["z"] = np.array([[1 + 2j, 3 - 1j]])
    v["s"] = "hello"
    c = np.empty((2,), dtype=object)
    c[0] = np.arange(3.0)
    c[1] = "x"
    v["c"] = c
    v["st"] = {"a": 1.0, "b": "text"}
    v["big"] = np.array([[2**62 + 1], [-(2**62) - 3]], dtype=np.int64)
    v["long_name_of_a_variable"] = np.array([[1.0, 2.0]])
    desc = {k: describe(x) for k, x in v.items() if k not in ("s", "c", "st", "z")}
    for comp in (False, True):
        sio.savemat(out + "/scipy_%d.mat" % comp, v, do_compression=comp, format="5", oned_as="row")
    json.dump(desc, sys.stdout)
else:
    res = {}
    for path in sys.argv[2:]:
        m = sio.loadmat(path, mat_dtype=True)
        res[path] = {k: describe(x) for k, x in m.items() if not k.startswith("__")}
    json.dump(res, sys.stdout)
`

// scipyDesc is the JSON description of one array.
type scipyDesc struct {
	Shape []int     `json:"shape"`
	DType string    `json:"dtype"`
	Data  []float64 `json:"data"`
	Ints  []string  `json:"ints"`
}

// runScipy runs scipyScript with args and decodes its output into v.
func runScipy(t *testing.T, v any, args ...string) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "script.py")
	if err := os.WriteFile(script, []byte(scipyScript), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, append([]string{script}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("decoding the python output: %v", err)
	}
}

// TestScipyWritten reads files written by scipy.io.savemat, compressed
// and not, and compares every variable with scipy's own description.
func TestScipyWritten(t *testing.T) {
	needScipy(t)
	dir := t.TempDir()
	var want map[string]scipyDesc
	runScipy(t, &want, "write", dir)

	classOf := map[string]string{"d": "double", "f": "single", "b": "logical", "row": "double", "col": "double",
		"scalar": "double", "nd": "double", "empty": "double", "big": "int64", "long_name_of_a_variable": "double"}
	for _, dt := range []string{"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"} {
		classOf[dt] = dt
	}
	for _, comp := range []int{0, 1} {
		t.Run(fmt.Sprintf("compressed=%d", comp), func(t *testing.T) {
			f, err := Open(filepath.Join(dir, fmt.Sprintf("scipy_%d.mat", comp)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(f.Header, "MATLAB 5.0 MAT-file") {
				t.Errorf("header %q", f.Header)
			}
			for name, d := range want {
				v, err := f.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				dims := d.Shape
				switch len(dims) {
				case 0:
					dims = []int{1, 1}
				case 1:
					dims = []int{1, dims[0]}
				}
				if v.Class != classOf[name] || !slices.Equal(v.Dims, dims) || v.Complex {
					t.Errorf("%s: class %s dims %v complex %v, want %s %v", name, v.Class, v.Dims, v.Complex, classOf[name], dims)
					continue
				}
				if len(dims) > 2 || d.Data == nil || len(d.Data) == 0 {
					continue
				}
				m, err := v.Matrix()
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if got := m.RawMatrix().Data; !sameFloats(got, d.Data) {
					t.Errorf("%s: got %v, want %v", name, got, d.Data)
				}
				if d.Ints != nil && (dims[0] == 1 || dims[1] == 1) {
					got, err := v.Ints()
					if err != nil {
						t.Errorf("%s: Ints: %v", name, err)
						continue
					}
					for i, s := range d.Ints {
						if strconv.Itoa(got[i]) != s {
							t.Errorf("%s: Ints[%d] = %d, want %s", name, i, got[i], s)
						}
					}
				}
			}
			// The non-numeric and complex variables are listed.
			for name, class := range map[string]string{"s": "char", "c": "cell", "st": "struct", "z": "double"} {
				v, err := f.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				if v.Class != class || v.Complex != (name == "z") {
					t.Errorf("%s: class %s complex %v", name, v.Class, v.Complex)
				}
				if _, err := v.Matrix(); err == nil {
					t.Errorf("%s: Matrix succeeded", name)
				}
			}
		})
	}
}

// TestScipyReadsTestWriter checks the test writer against scipy.io.loadmat,
// so that the round-trip tests rest on files another reader accepts: both
// byte orders, compressed or not, small elements or not, downcast storage
// and every numeric class.
func TestScipyReadsTestWriter(t *testing.T) {
	needScipy(t)
	dir := t.TempDir()
	type want struct {
		dims []int
		vals []float64 // column-major
	}
	wants := map[string]want{}
	var paths []string
	var files [][]byte
	for i, l := range layouts() {
		e := enc{bo: l.order, noSmall: l.noSmall}
		var vars []testVar
		for _, nc := range numericClasses {
			for _, downcast := range []bool{false, true} {
				dims := []int{3, 2}
				vals := sampleValues(6, nc.lo, nc.hi, nc.fraction, nc.class == mxSINGLE)
				name := fmt.Sprintf("%s_%v", nc.name, downcast)
				vars = append(vars, testVar{name: name, class: nc.class, dims: dims, re: vals, downcast: downcast})
				wants[name] = want{dims, vals}
			}
		}
		vars = append(vars,
			testVar{name: "mask", class: mxUINT8, dims: []int{1, 3}, re: []float64{1, 0, 1}, logical: true},
			e.cellOfChar("names", "ab", "c"),
			e.charVar("s", "hi"),
		)
		wants["mask"] = want{[]int{1, 3}, []float64{1, 0, 1}}
		path := filepath.Join(dir, fmt.Sprintf("w%d.mat", i))
		b := buildMAT(l, vars...)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
		files = append(files, b)
	}
	var got map[string]map[string]scipyDesc
	runScipy(t, &got, append([]string{"read"}, paths...)...)
	for i, path := range paths {
		l := layouts()[i]
		t.Run(l.String(), func(t *testing.T) {
			arrays := got[path]
			if len(arrays) != len(wants)+2 {
				t.Fatalf("scipy read %d variables, want %d", len(arrays), len(wants)+2)
			}
			for name, w := range wants {
				d := arrays[name]
				if !slices.Equal(d.Shape, w.dims) {
					t.Errorf("%s: scipy shape %v, want %v", name, d.Shape, w.dims)
					continue
				}
				if want := rowMajor(w.dims[0], w.dims[1], w.vals); !sameFloats(d.Data, want) {
					t.Errorf("%s: scipy read %v, want %v", name, d.Data, want)
				}
			}
			// And this package reads the same file the same way.
			f := mustRead(t, files[i])
			for name := range wants {
				v, err := f.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				m, err := v.Matrix()
				if err != nil {
					t.Fatal(err)
				}
				if !sameFloats(m.RawMatrix().Data, arrays[name].Data) {
					t.Errorf("%s: got %v, scipy %v", name, m.RawMatrix().Data, arrays[name].Data)
				}
			}
		})
	}
}
