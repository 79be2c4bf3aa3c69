package npy

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// python is the interpreter used to cross-check with numpy. The python3 on
// PATH may lack numpy, so the system interpreter is used explicitly.
const python = "/usr/bin/python3"

// requireNumpy skips the test unless python can import numpy.
func requireNumpy(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping numpy cross-check in short mode")
	}
	if out, err := exec.Command(python, "-c", "import numpy").CombinedOutput(); err != nil {
		t.Skipf("numpy is unavailable (%s -c 'import numpy': %v %s)", python, err, bytes.TrimSpace(out))
	}
}

// runPython runs script with dir as its argument and returns its output.
func runPython(t *testing.T, dir, script string) string {
	t.Helper()
	path := filepath.Join(dir, "script.py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, path, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	return string(out)
}

// numpyFiles writes arrays with numpy into the directory argv[1] and prints
// one line per array: the file name, the npz member name or "-", the shape
// and the values in C order as float64, all as float.hex strings.
const numpyFiles = `
import sys, os
import numpy as np
d = sys.argv[1]
arrays = {
    'f4_fortran': np.asfortranarray((np.arange(12, dtype=np.float32) / np.float32(3)).reshape(3, 4)),
    'f8_fortran3': np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4) * 0.1),
    'i2_big': np.array([[1, -2, 300], [-32768, 32767, 0]], dtype='>i2'),
    'bool': np.array([True, False, True, True]),
    'f2': np.array([1.0, -2.5, 65504, 2.0**-24, 6.1e-05, np.inf, -0.0, 0.1], dtype=np.float16),
    'f2_big': np.array([[0.5, -1.0], [3.0, 1e-3]], dtype='>f2'),
    'u8': np.array([0, 1, 2**53, 2**64 - 1], dtype=np.uint64),
    'i8_big': np.array([-2**63, 2**63 - 1, -5], dtype='>i8'),
    'u1': np.arange(256, dtype=np.uint8).reshape(16, 16),
    'i1': np.array([-128, 127, 0], dtype=np.int8),
    'u2': np.array([65535, 7], dtype='>u2'),
    'u4': np.array([4294967295, 7], dtype='<u4'),
    'i4_big': np.array([[-2**31], [2**31 - 1]], dtype='>i4'),
    'f4_big': np.array([1.5, -np.inf, 3.4e38], dtype='>f4'),
    'scalar': np.float64(2.75),
    'empty': np.zeros((0, 3)),
    'nan': np.array([np.nan, 1.0]),
}
def line(fname, member, a):
    vals = ' '.join(float(v).hex() for v in np.asarray(a).astype(np.float64).ravel(order='C'))
    shape = ','.join(str(s) for s in np.shape(a))
    print(fname, member, shape or '-', vals or '-')
for name, a in arrays.items():
    np.save(os.path.join(d, name + '.npy'), a)
    line(name + '.npy', '-', a)
small = {k: arrays[k] for k in ['f4_fortran', 'i2_big', 'bool', 'f2', 'scalar', 'empty']}
np.savez(os.path.join(d, 'plain.npz'), **small)
np.savez_compressed(os.path.join(d, 'compressed.npz'), **small)
for fname in ['plain.npz', 'compressed.npz']:
    for k, a in small.items():
        line(fname, k, a)
`

type expected struct {
	file, member string
	shape        []int
	values       []float64
}

func parseExpected(t *testing.T, out string) []expected {
	t.Helper()
	var exps []expected
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			t.Fatalf("bad line %q", sc.Text())
		}
		e := expected{file: f[0], member: f[1], shape: []int{}}
		if f[2] != "-" {
			for _, s := range strings.Split(f[2], ",") {
				n, err := strconv.Atoi(s)
				if err != nil {
					t.Fatal(err)
				}
				e.shape = append(e.shape, n)
			}
		}
		if f[3] != "-" {
			for _, s := range f[3:] {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatalf("value %q: %v", s, err)
				}
				e.values = append(e.values, v)
			}
		}
		exps = append(exps, e)
	}
	return exps
}

func TestNumpyFilesRead(t *testing.T) {
	requireNumpy(t)
	dir := t.TempDir()
	exps := parseExpected(t, runPython(t, dir, numpyFiles))
	npz := map[string]map[string]*Array{}
	for _, e := range exps {
		var a *Array
		if e.member == "-" {
			var err error
			a, err = ReadFile(filepath.Join(dir, e.file))
			if err != nil {
				t.Errorf("%s: %v", e.file, err)
				continue
			}
		} else {
			if npz[e.file] == nil {
				m, err := ReadNPZ(filepath.Join(dir, e.file))
				if err != nil {
					t.Errorf("%s: %v", e.file, err)
					continue
				}
				npz[e.file] = m
			}
			a = npz[e.file][e.member]
			if a == nil {
				t.Errorf("%s: member %q missing", e.file, e.member)
				continue
			}
		}
		if !sameInts(a.Shape, e.shape) || !sameFloats(a.Data, e.values) {
			t.Errorf("%s %s (%s): got %v %v, want %v %v", e.file, e.member, a.DType, a.Shape, a.Data, e.shape, e.values)
		}
	}
	if len(exps) < 20 {
		t.Errorf("only %d arrays checked", len(exps))
	}
	t.Logf("checked %d numpy arrays", len(exps))
}

// numpyCheck loads the files written by TestNumpyFilesWrite, compares them
// with the expected arrays and with numpy.save's output byte for byte.
const numpyCheck = `
import sys, os, io
import numpy as np
d = sys.argv[1]
want = {
    'vec': np.array([1.5, -2.0, np.inf, 0.1]),
    'mat': np.arange(12, dtype=np.float64).reshape(3, 4) / 7,
    'cube': np.arange(24, dtype=np.float64).reshape(2, 3, 4),
    'scalar': np.array(4.25),
    'empty': np.zeros((0,)),
}
for name, w in want.items():
    path = os.path.join(d, name + '.npy')
    a = np.load(path)
    assert a.dtype == np.float64, (name, a.dtype)
    assert a.shape == w.shape, (name, a.shape, w.shape)
    assert np.array_equal(a, w), (name, a, w)
    buf = io.BytesIO()
    np.save(buf, w)
    with open(path, 'rb') as f:
        got = f.read()
    assert got == buf.getvalue(), (name, got[:128], buf.getvalue()[:128])
    print('ok', name)
with np.load(os.path.join(d, 'all.npz')) as z:
    assert sorted(z.files) == sorted(want), z.files
    for name, w in want.items():
        assert z[name].shape == w.shape and np.array_equal(z[name], w), name
    print('ok npz')
`

func TestNumpyFilesWrite(t *testing.T) {
	requireNumpy(t)
	dir := t.TempDir()
	mat12 := make([]float64, 12)
	for i := range mat12 {
		mat12[i] = float64(i) / 7
	}
	cube := make([]float64, 24)
	for i := range cube {
		cube[i] = float64(i)
	}
	arrays := map[string]*Array{
		"vec":    {Shape: []int{4}, Data: []float64{1.5, -2, math.Inf(1), 0.1}},
		"mat":    {Shape: []int{3, 4}, Data: mat12},
		"cube":   {Shape: []int{2, 3, 4}, Data: cube},
		"scalar": {Shape: []int{}, Data: []float64{4.25}},
		"empty":  {Shape: []int{0}, Data: []float64{}},
	}
	for name, a := range arrays {
		if err := WriteFile(filepath.Join(dir, name+".npy"), a.Shape, a.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteNPZ(filepath.Join(dir, "all.npz"), arrays); err != nil {
		t.Fatal(err)
	}
	out := runPython(t, dir, numpyCheck)
	if got := strings.Count(out, "ok "); got != len(arrays)+1 {
		t.Errorf("numpy check output:\n%s", out)
	}
}
