package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/npy"
	"github.com/dadil/dadil/ot"
)

// runCLI runs the command line and returns its exit status and streams.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &env{stdout: &o, stderr: &e})
	return code, o.String(), e.String()
}

// badInput is a command line that must fail with an error containing want.
type badInput struct {
	name string
	args []string
	want string
}

// checkBadInput runs cmd followed by the arguments of every case, each as a
// subtest, and checks that it exits non-zero with an error containing the
// case's text on stderr and, if out is not "", that nothing exists at out.
func checkBadInput(t *testing.T, cmd []string, out string, cases []badInput) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(append(append([]string(nil), cmd...), tc.args...)...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q, want an error containing %q", code, stderr, tc.want)
			}
			if out == "" {
				return
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// lastJSON decodes the last line of out.
func lastJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var v map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
		t.Fatalf("last line %q is not JSON: %v", lines[len(lines)-1], err)
	}
	return v
}

// rawNPY writes a .npy file with an arbitrary header and payload.
func rawNPY(t *testing.T, path, descr string, fortran bool, shape string, payload []byte) {
	t.Helper()
	order := "False"
	if fortran {
		order = "True"
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, order, shape)
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(payload)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func testProblem(t *testing.T, dir string) (C *mat.Dense, cPath, aPath, bPath string) {
	t.Helper()
	C = mat.NewDense(3, 4, []float64{
		1, 2, 3, 4,
		4, 1, 2, 3,
		3, 4, 1, 2,
	})
	cPath = filepath.Join(dir, "C.npy")
	aPath = filepath.Join(dir, "a.npy")
	bPath = filepath.Join(dir, "b.npy")
	if err := npy.WriteMatrix(cPath, C); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteVector(aPath, []float64{0.2, 0.3, 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteVector(bPath, []float64{0.25, 0.25, 0.25, 0.25}); err != nil {
		t.Fatal(err)
	}
	return
}

func TestOTEMDJSON(t *testing.T) {
	dir := t.TempDir()
	C, cPath, aPath, bPath := testProblem(t, dir)
	plan := filepath.Join(dir, "P.npy")
	code, out, errOut := runCLI("ot", "emd", "--cost", cPath, "--a", aPath, "--b", bPath, "--plan", plan, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	v := lastJSON(t, out)
	want, err := ot.EMD([]float64{0.2, 0.3, 0.5}, nil, C)
	if err != nil {
		t.Fatal(err)
	}
	if v["cost"].(float64) != want.Cost || v["n"].(float64) != 3 || v["m"].(float64) != 4 {
		t.Errorf("JSON %v, want cost %v n 3 m 4", v, want.Cost)
	}
	for _, k := range []string{"seconds", "iterations"} {
		if _, ok := v[k]; !ok {
			t.Errorf("JSON lacks %q: %v", k, v)
		}
	}
	if _, ok := v["converged"]; ok {
		t.Errorf("EMD JSON has converged: %v", v)
	}
	arr, err := npy.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	P, err := arr.Matrix()
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(P, want.Plan.Dense(), 0) {
		t.Errorf("plan file differs from the plan")
	}
	// Uniform weights by default, human summary without --json.
	code, out, _ = runCLI("ot", "emd", "--cost", cPath)
	if code != 0 || !strings.Contains(out, "EMD 3×4: cost") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

func TestOTSinkhornJSON(t *testing.T) {
	dir := t.TempDir()
	_, cPath, _, _ := testProblem(t, dir)
	plan := filepath.Join(dir, "P.npy")
	code, out, errOut := runCLI("ot", "sinkhorn", "--cost", cPath, "--reg", "0.5", "--plan", plan, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	v := lastJSON(t, out)
	if v["converged"] != true || v["n"].(float64) != 3 || v["m"].(float64) != 4 {
		t.Errorf("JSON %v", v)
	}
	arr, err := npy.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(arr.Data) != 12 {
		t.Errorf("plan has %d entries", len(arr.Data))
	}
	var sum float64
	for _, x := range arr.Data {
		sum += x
	}
	if math.Abs(sum-1) > 1e-8 {
		t.Errorf("plan mass %g", sum)
	}
}

// TestOTFloat32Fortran reads a float32, Fortran-ordered cost matrix.
func TestOTFloat32Fortran(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "C32F.npy")
	// 2×3 matrix [[0 5 9] [5 0 9]] in column-major order.
	vals := []float32{0, 5, 5, 0, 9, 9}
	var payload bytes.Buffer
	binary.Write(&payload, binary.LittleEndian, vals)
	rawNPY(t, path, "<f4", true, "(2, 3)", payload.Bytes())
	code, out, errOut := runCLI("ot", "emd", "--cost", path, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	v := lastJSON(t, out)
	// Optimal: row 0 → col 0 (1/3), row 1 → col 1 (1/3), and col 2 (1/3)
	// from both rows at cost 9: total 9/3 = 3.
	if c := v["cost"].(float64); math.Abs(c-3) > 1e-12 || v["m"].(float64) != 3 {
		t.Errorf("JSON %v, want cost 3 and m 3", v)
	}
}

func TestOTBadInput(t *testing.T) {
	dir := t.TempDir()
	_, cPath, aPath, _ := testProblem(t, dir)
	trunc := filepath.Join(dir, "trunc.npy")
	full, _ := os.ReadFile(cPath)
	os.WriteFile(trunc, full[:len(full)-5], 0o644)
	garbage := filepath.Join(dir, "garbage.npy")
	os.WriteFile(garbage, []byte("not a numpy file at all"), 0o644)
	str := filepath.Join(dir, "str.npy")
	rawNPY(t, str, "<U4", false, "(2, 2)", make([]byte, 64))
	cube := filepath.Join(dir, "cube.npy")
	npy.WriteFile(cube, []int{2, 2, 2}, make([]float64, 8))
	nan := filepath.Join(dir, "nan.npy")
	npy.WriteMatrix(nan, mat.NewDense(2, 2, []float64{0, math.NaN(), 1, 0}))
	aBad := filepath.Join(dir, "abad.npy")
	npy.WriteVector(aBad, []float64{0.5, 0.5})
	aNeg := filepath.Join(dir, "aneg.npy")
	npy.WriteVector(aNeg, []float64{1.5, -0.25, -0.25})
	plan := filepath.Join(dir, "out", "P.npy")
	big := filepath.Join(dir, "big.npy")
	Cbig, err := gaussianProblem(40, 3, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	npy.WriteMatrix(big, Cbig)
	huge := filepath.Join(dir, "huge.npy")
	npy.WriteMatrix(huge, mat.NewDense(2, 2, []float64{0, 1e300, 1e300, 0}))
	plan2 := filepath.Join(dir, "P2.npy")

	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no cost", []string{"ot", "emd"}, 2, "--cost is required"},
		{"missing file", []string{"ot", "emd", "--cost", filepath.Join(dir, "nope.npy")}, 1, "nope.npy"},
		{"truncated", []string{"ot", "emd", "--cost", trunc}, 1, "truncated"},
		{"garbage", []string{"ot", "emd", "--cost", garbage}, 1, "garbage.npy"},
		{"dtype", []string{"ot", "emd", "--cost", str}, 1, "unsupported dtype"},
		{"3-D cost", []string{"ot", "emd", "--cost", cube}, 1, "cube.npy"},
		{"NaN cost", []string{"ot", "emd", "--cost", nan}, 1, "NaN"},
		{"a length", []string{"ot", "emd", "--cost", cPath, "--a", aBad}, 1, "2 entries but the cost matrix"},
		{"b is a", []string{"ot", "emd", "--cost", cPath, "--b", aPath}, 1, "3 entries but the cost matrix"},
		{"negative a", []string{"ot", "emd", "--cost", cPath, "--a", aNeg}, 1, "negative"},
		{"sinkhorn no reg", []string{"ot", "sinkhorn", "--cost", cPath}, 2, "--reg"},
		{"sinkhorn neg reg", []string{"ot", "sinkhorn", "--cost", cPath, "--reg", "-1"}, 1, "reg"},
		{"sinkhorn max-iter 0", []string{"ot", "sinkhorn", "--cost", cPath, "--reg", "1", "--max-iter", "0"}, 2, "--max-iter 0: need a positive number; leave the flag out for the default (1000)"},
		{"demo atoms 0", []string{"demo", "--atoms", "0", "--out", filepath.Join(dir, "demo")}, 2, "--atoms 0: need a positive number; leave the flag out"},
		// Checked before solving, as the command line's fault.
		{"plan dir missing", []string{"ot", "emd", "--cost", cPath, "--plan", plan}, 2, "--plan: " + plan + ": cannot create a file beside it"},
		{"plan dir missing, sinkhorn", []string{"ot", "sinkhorn", "--cost", cPath, "--reg", "1", "--plan", plan}, 2, "--plan: " + plan + ": cannot create a file beside it"},
		{"unknown flag", []string{"ot", "emd", "--bogus"}, 2, "bogus"},
		{"unknown command", []string{"ot", "nope"}, 2, "unknown command"},
		{"pivot limit", []string{"ot", "emd", "--cost", big, "--max-pivots", "3"}, 1, "pivot limit"},
		{"sinkhorn beyond float64", []string{"ot", "sinkhorn", "--cost", huge, "--reg", "0.1", "--plan", plan2, "--json"}, 1, "too small for costs spread over"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q lacks %q", errOut, tc.want)
			}
			if strings.Contains(out, "{") {
				t.Errorf("a failing run printed JSON: %q", out)
			}
		})
	}
	for _, p := range []string{plan, plan2} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("plan file %s exists after a failure: %v", p, err)
		}
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := runCLI("help")
	if code != 0 || !strings.Contains(out, "dadil ot emd") || !strings.Contains(out, "dadil bench emd") {
		t.Errorf("help: exit %d, %q", code, out)
	}
	if code, _, _ := runCLI(); code != 2 {
		t.Errorf("no arguments: exit %d, want 2", code)
	}
	// "dadil help CMD" is CMD's own help.
	for _, args := range [][]string{{"help", "fit"}, {"help", "bench", "cwru"}} {
		code, out, errOut := runCLI(args...)
		if want := "usage: dadil " + strings.Join(args[1:], " "); code != 0 || !strings.Contains(out+errOut, want) {
			t.Errorf("%v: exit %d, output %q, want %q", args, code, out+errOut, want)
		}
	}
}

func TestOTDemo(t *testing.T) {
	code, out, errOut := runCLI("ot", "demo", "--n", "60", "--d", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "EMD (exact)") || !strings.Contains(out, "Sinkhorn") {
		t.Errorf("output %q", out)
	}
}

func TestBenchEMDWithoutPOT(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "b.json")
	code, out, errOut := runCLI("bench", "emd", "--sizes", "20,30", "--repeat", "1", "--pot", "none", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "| 20 |") || !strings.Contains(out, "| 30 |") {
		t.Errorf("table %q", out)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Results []benchEMDRow `json:"results"`
	}
	if err := json.Unmarshal(b, &v); err != nil || len(v.Results) != 2 || v.Results[0].N != 20 || v.Results[1].Pivots <= 0 {
		t.Errorf("JSON %s (%v)", b, err)
	}
	if code, _, _ := runCLI("bench", "emd", "--sizes", "x"); code != 2 {
		t.Errorf("bad --sizes: exit %d", code)
	}
}
