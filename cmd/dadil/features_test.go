package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/flactest"
	"github.com/dadil/dadil/internal/mattest"
	"github.com/dadil/dadil/internal/wavtest"
	"github.com/dadil/dadil/npy"
	"github.com/dadil/dadil/signal"
	"gonum.org/v1/gonum/mat"
)

// cwruFixture writes CWRU-like recordings for domains × 2 classes into
// dir/sig and a file map dir/map.csv; classes differ by their main
// frequency, domains shift it slightly.
func cwruFixture(t *testing.T, dir string, domains []string, n int) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "sig"), 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	lines := []string{"# test map", "file,label,class,domain,variable"}
	id := 200
	for k, label := range []int{4, 7} {
		for d, dom := range domains {
			id++
			x := make([]float64, n)
			f := 0.03*float64(k+1) + 0.003*float64(d)
			for i := range x {
				x[i] = math.Sin(2*math.Pi*f*float64(i)) + 0.5*rng.NormFloat64()
			}
			name := fmt.Sprintf("X%d_DE_time", id)
			mattest.WriteFile(t, filepath.Join(dir, "sig", fmt.Sprintf("%d.mat", id)), mattest.Column(name, x))
			lines = append(lines, fmt.Sprintf("sig/%d.mat,%d,class %d,%s,%s", id, label, label, dom, name))
		}
	}
	mp := filepath.Join(dir, "map.csv")
	if err := os.WriteFile(mp, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return mp
}

// TestFeaturesFFTThenFit extracts the spectra of three domains with dadil
// features fft and adapts across them with dadil fit.
func TestFeaturesFFTThenFit(t *testing.T) {
	dir := t.TempDir()
	mp := cwruFixture(t, dir, []string{"a", "b", "c"}, 4000)
	var npz []string
	for _, dom := range []string{"a", "b", "c"} {
		out := filepath.Join(dir, dom+".npz")
		code, stdout, stderr := runCLI("features", "fft", "--files", mp, "--domain", dom, "--window", "256", "--coeffs", "64", "--windows", "60", "--seed", "3", "--out", out)
		if code != 0 {
			t.Fatalf("features fft: exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "120 windows × 64 magnitudes from 2 recordings (labeled") {
			t.Errorf("stdout %q", stdout)
		}
		npz = append(npz, out)
	}
	arrs, err := npy.ReadNPZ(npz[0])
	if err != nil {
		t.Fatal(err)
	}
	X, y, start := arrs["X"], arrs["y"], arrs["start"]
	if X == nil || y == nil || start == nil || arrs["file"] == nil {
		t.Fatalf("arrays %v, want X, y, file, start", sortedKeys(arrs))
	}
	if len(X.Shape) != 2 || X.Shape[0] != 120 || X.Shape[1] != 64 || len(y.Data) != 120 {
		t.Fatalf("X %v, y %d", X.Shape, len(y.Data))
	}
	for i, v := range y.Data {
		if want := []float64{4, 7}[i/60]; v != want {
			t.Fatalf("y[%d] = %v, want %v", i, v, want)
		}
		if s := start.Data[i]; s < 0 || s > 4000-256 || s != math.Trunc(s) {
			t.Fatalf("start[%d] = %v outside the recording", i, s)
		}
	}
	for _, v := range X.Data {
		if v < 0 || math.IsNaN(v) {
			t.Fatalf("magnitude %v", v)
		}
	}
	// The same seed gives the same file.
	again := filepath.Join(dir, "again.npz")
	if code, _, stderr := runCLI("features", "fft", "--files", mp, "--domain", "a", "--window", "256", "--coeffs", "64", "--windows", "60", "--seed", "3", "--out", again); code != 0 {
		t.Fatal(stderr)
	}
	b1, _ := os.ReadFile(npz[0])
	b2, _ := os.ReadFile(again)
	if string(b1) != string(b2) {
		t.Error("features fft is not deterministic for a seed")
	}

	out := filepath.Join(dir, "model")
	code, stdout, stderr := runCLI("fit", "--source", npz[0], "--source", npz[1], "--target", npz[2], "--scale", "standard", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("fit: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "target accuracy: DaDiL-R") {
		t.Errorf("fit stdout %q", stdout)
	}
	pred, err := os.ReadFile(filepath.Join(out, "predictions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	lines := strings.Split(strings.TrimSpace(string(pred)), "\n")[1:]
	for i, l := range lines {
		f := strings.Split(l, ",")
		if want := []string{"4", "7"}[i/60]; f[1] != want {
			wrong++
		}
	}
	if len(lines) != 120 || wrong > 6 {
		t.Errorf("%d predictions, %d wrong (DaDiL-R on separable spectra)", len(lines), wrong)
	}
}

func TestFeaturesFFTBadInput(t *testing.T) {
	dir := t.TempDir()
	mp := cwruFixture(t, dir, []string{"a", "b"}, 1000)
	rec := filepath.Join(dir, "sig", "201.mat")
	out := filepath.Join(dir, "f.npz")
	folderNPZ := filepath.Join(dir, "folder.npz")
	os.Mkdir(folderNPZ, 0o755)
	checkBadInput(t, []string{"features", "fft"}, out, []badInput{
		{"no out", []string{"--input", rec}, "--out is required"},
		{"not npz", []string{"--input", rec, "--out", filepath.Join(dir, "f.csv")}, "is a .npz archive"},
		{"missing folder", []string{"--input", rec, "--out", filepath.Join(dir, "no", "f.npz")}, "cannot create a file beside it"},
		{"no input", []string{"--out", out}, "give the recordings"},
		{"both", []string{"--input", rec, "--files", mp, "--domain", "a", "--out", out}, "not both"},
		{"labels", []string{"--input", rec, "--input", rec, "--label", "1", "--out", out}, "1 --label for 2 --input"},
		{"label", []string{"--input", rec, "--label", "x", "--out", out}, `--label "x"`},
		{"domain", []string{"--files", mp, "--domain", "q", "--out", out}, `--domain "q"`},
		{"short", []string{"--input", rec, "--window", "2048", "--coeffs", "64", "--out", out}, "201.mat"},
		{"variable", []string{"--input", rec, "--variable", "X999_DE_time", "--out", out}, "X999_DE_time"},
		{"coeffs", []string{"--input", rec, "--window", "64", "--coeffs", "64", "--out", out}, "64"},
		{"missing file", []string{"--input", filepath.Join(dir, "nope.mat"), "--out", out}, "nope.mat"},
		{"same recording twice", []string{"--input", rec, "--label", "1", "--input", filepath.Join(dir, "sig", ".", "201.mat"), "--label", "2", "--out", out}, "are the same file: give every recording once"},
		{"windows beyond memory", []string{"--input", rec, "--windows", "100000000", "--out", out}, "2048 columns make 1.5 TiB of features, more than the limit of "},
		{"out is a folder", []string{"--input", rec, "--out", folderNPZ}, "is a folder, not a regular file"},
		{"domain with input", []string{"--input", rec, "--domain", "a", "--out", out}, "with --input they have no meaning"},
	})
}

func TestBenchCWRUBadInput(t *testing.T) {
	dir := t.TempDir()
	mp := cwruFixture(t, dir, []string{"1772", "1750", "1730"}, 3000)
	js := filepath.Join(dir, "r.json")
	checkBadInput(t, []string{"bench", "cwru"}, js, []badInput{
		{"no data", nil, "--data is required"},
		{"json folder", []string{"--data", dir, "--files", mp, "--json", filepath.Join(dir, "no", "r.json")}, "cannot create a file beside it"},
		{"map", []string{"--data", dir, "--files", filepath.Join(dir, "nomap.csv")}, "nomap.csv"},
		{"paper map on other data", []string{"--data", dir, "--json", js}, "classes with recordings"},
		{"short", []string{"--data", dir, "--files", mp, "--json", js}, "fewer than a window of 4096"},
		{"target", []string{"--data", dir, "--files", mp, "--window", "256", "--coeffs", "64", "--targets", "1800", "--json", js}, `"1800"`},
		{"method", []string{"--data", dir, "--files", mp, "--window", "256", "--coeffs", "64", "--methods", "dadil", "--json", js}, "dadil"},
		{"seeds", []string{"--data", dir, "--seeds", "0"}, "--seeds"},
		{"scaling", []string{"--data", dir, "--files", mp, "--window", "256", "--coeffs", "64", "--scale", "log", "--json", js}, "log"},
		{"paper scaling", []string{"--data", dir, "--files", mp, "--window", "256", "--coeffs", "64", "--paper-scale", "rank", "--json", js}, "rank"},
		{"train", []string{"--data", dir, "--files", mp, "--window", "256", "--coeffs", "64", "--windows", "10", "--train", "10", "--json", js}, "training windows"},
		{"weight decay", []string{"--data", dir, "--files", mp, "--encoder-weight-decay", "-1", "--json", js}, "--encoder-weight-decay"},
	})
}

func TestBenchCWRUEncoderBadInput(t *testing.T) {
	dir := t.TempDir()
	mp := cwruFixture(t, dir, []string{"1772", "1750", "1730"}, 3000)
	js := filepath.Join(dir, "r.json")
	small := []string{"--data", dir, "--files", mp, "--window", "256", "--coeffs", "64", "--windows", "40", "--train", "30", "--json", js}
	checkBadInput(t, []string{"bench", "cwru-encoder"}, js, []badInput{
		{"no data", nil, "--data is required"},
		{"json folder", []string{"--data", dir, "--files", mp, "--json", filepath.Join(dir, "no", "r.json")}, "cannot create a file beside it"},
		{"seeds", []string{"--data", dir, "--seeds", "0"}, "--seeds"},
		{"epochs", []string{"--data", dir, "--epochs", "5,x"}, `--epochs: "x"`},
		{"zero epochs", []string{"--data", dir, "--epochs", "0"}, `--epochs: "0"`},
		{"decay", []string{"--data", dir, "--weight-decay", "0,-0.1"}, `--weight-decay: "-0.1"`},
		{"nan decay", []string{"--data", dir, "--weight-decay", "NaN"}, `--weight-decay: "NaN"`},
		{"empty", []string{"--data", dir, "--weight-decay", ","}, "at least one value"},
		{"twice", append([]string{"--epochs", "2,2"}, small...), "listed twice"},
		{"target", append([]string{"--targets", "1800"}, small...), `"1800"`},
		{"short", []string{"--data", dir, "--files", mp, "--json", js}, "fewer than a window of 4096"},
	})
}

// TestBenchCWRUEncoderJSON scores two encoder settings on fixture recordings.
func TestBenchCWRUEncoderJSON(t *testing.T) {
	dir := t.TempDir()
	mp := cwruFixture(t, dir, []string{"1772", "1750", "1730"}, 3000)
	js := filepath.Join(dir, "r.json")
	code, stdout, stderr := runCLI("bench", "cwru-encoder", "--data", dir, "--files", mp, "--window", "256", "--coeffs", "64",
		"--windows", "40", "--train", "30", "--epochs", "3", "--weight-decay", "0,0.01", "--targets", "1750,1730", "--seeds", "1", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"over 1 seed (base seed 1)", "| Encoder | 1750 | 1730 | Avg |", "| epochs=3 wd=0 |", "| epochs=3 wd=0.01 |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "[4/4] encoder epochs=3 wd=0.01 for 1730 seed 1 done") {
		t.Errorf("progress:\n%s", stderr)
	}
	v := readJSON(t, js)
	if v["benchmark"] != "cwru-encoder" {
		t.Errorf("benchmark %v", v["benchmark"])
	}
	rs, _ := v["results"].([]any)
	if len(rs) != 4 {
		t.Fatalf("%d results, want 2 encoders × 2 targets", len(rs))
	}
	for _, r := range rs {
		m := r.(map[string]any)
		if a := m["accuracy"].(float64); a < 0 || a > 100 || m["fold"].(float64) != 1 {
			t.Errorf("result %v", m)
		}
	}
}

// TestBenchCWRUJSON runs dadil bench cwru end to end on fixture recordings.
func TestBenchCWRUJSON(t *testing.T) {
	dir := t.TempDir()
	mp := cwruFixture(t, dir, []string{"1772", "1750", "1730"}, 3000)
	js := filepath.Join(dir, "r.json")
	code, stdout, stderr := runCLI("bench", "cwru", "--data", dir, "--files", mp, "--window", "256", "--coeffs", "64",
		"--windows", "40", "--train", "30", "--encoder-epochs", "3", "--methods", "mlp,source-only,dadil-r",
		"--targets", "1730", "--seeds", "2", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "| dadil-r |") || !strings.Contains(stdout, "1730") {
		t.Errorf("table:\n%s", stdout)
	}
	if !strings.Contains(stderr, "encoder for 1730 seed 2: epoch 3/3") || !strings.Contains(stderr, "[6/6]") {
		t.Errorf("progress:\n%s", stderr)
	}
	v := readJSON(t, js)
	if v["benchmark"] != "cwru" {
		t.Errorf("benchmark %v", v["benchmark"])
	}
	rs, _ := v["results"].([]any)
	if len(rs) != 6 {
		t.Fatalf("%d results, want 3 methods × 2 seeds", len(rs))
	}
	for _, r := range rs {
		m := r.(map[string]any)
		if m["target"] != "1730" || m["accuracy"].(float64) < 0 || m["accuracy"].(float64) > 100 || m["seconds"].(float64) < 0 {
			t.Errorf("result %v", m)
		}
		if f := m["fold"].(float64); f != 1 && f != 2 {
			t.Errorf("seed %v", f)
		}
	}
}

// TestBenchCWRUHeldOutSources validates without the target on fixture
// recordings (bench's tests check that the target is never read).
func TestBenchCWRUHeldOutSources(t *testing.T) {
	dir := t.TempDir()
	mp := cwruFixture(t, dir, []string{"1772", "1750", "1730"}, 3000)
	js := filepath.Join(dir, "r.json")
	code, stdout, stderr := runCLI("bench", "cwru", "--data", dir, "--files", mp, "--window", "256", "--coeffs", "64",
		"--windows", "40", "--train", "30", "--encoder-epochs", "3", "--methods", "mlp,dadil-r",
		"--targets", "1730", "--seeds", "1", "--held-out-sources", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "held-out-source validation, without the target") || !strings.Contains(stdout, "| dadil-r |") {
		t.Errorf("table:\n%s", stdout)
	}
	if !strings.Contains(stderr, "on the sources of 1730 seed 1, 1750 held out") || !strings.Contains(stderr, "[4/4]") {
		t.Errorf("progress:\n%s", stderr)
	}
	v := readJSON(t, js)
	if v["validation"] != "held-out-sources" {
		t.Errorf("validation %v", v["validation"])
	}
	rs, _ := v["results"].([]any)
	if len(rs) != 4 {
		t.Fatalf("%d results, want 2 methods × 2 held-out sources", len(rs))
	}
	held := map[string]int{}
	for _, r := range rs {
		m := r.(map[string]any)
		held[fmt.Sprint(m["held_out"])]++
		if m["target"] != "1730" {
			t.Errorf("result %v", m)
		}
	}
	if held["1772"] != 2 || held["1750"] != 2 {
		t.Errorf("held-out sources %v", held)
	}
}

// readJSON decodes the JSON object in the file path.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// TestFeaturesFFTMissingClass checks that --files applies the rule of dadil
// bench cwru: a class none of whose recordings is present is left out with a
// note, a class with some of them missing is an error naming them.
func TestFeaturesFFTMissingClass(t *testing.T) {
	dir := t.TempDir()
	mp := cwruFixture(t, dir, []string{"a", "b"}, 1000)
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	// Class 9 lists two recordings, neither of them present.
	absent := filepath.Join(dir, "absent.csv")
	extra := "sig/98.mat,9,normal,a,X098_DE_time\nsig/99.mat,9,normal,b,X099_DE_time\n"
	if err := os.WriteFile(absent, append(b, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "a.npz")
	code, _, stderr := runCLI("features", "fft", "--files", absent, "--domain", "a", "--window", "256", "--coeffs", "64", "--windows", "10", "--out", out)
	if code != 0 || !strings.Contains(stderr, "class 9 (normal)") || !strings.Contains(stderr, "left out") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	arrs, err := npy.ReadNPZ(out)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[float64]int{}
	for _, v := range arrs["y"].Data {
		labels[v]++
	}
	if len(labels) != 2 || labels[4] != 10 || labels[7] != 10 {
		t.Errorf("labels %v, want 10 windows of classes 4 and 7", labels)
	}
	// Class 4 with the recording of domain b missing: an error, whichever
	// domain is extracted, and no output.
	if err := os.Remove(filepath.Join(dir, "sig", "202.mat")); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "a2.npz")
	code, _, stderr = runCLI("features", "fft", "--files", mp, "--domain", "a", "--window", "256", "--coeffs", "64", "--windows", "10", "--out", out2)
	if code != 1 || !strings.Contains(stderr, "sig/202.mat missing") {
		t.Errorf("partial class: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Error("a failed extraction wrote its output")
	}
}

// TestFeaturesFFTAudio extracts sliding-window spectra from stereo WAV
// files: one channel, at a fixed hop, equal to the library's features of
// the decoded channel, with each class's tone at its bin.
func TestFeaturesFFTAudio(t *testing.T) {
	dir := t.TempDir()
	const rate, n, window, hop = 8000, 4000, 256, 128
	rng := rand.New(rand.NewPCG(2, 2))
	var paths []string
	for k, tone := range []float64{500, 1500} {
		var frames [][]float64
		for i := 0; i < n; i++ {
			noise := math.Round(3000 * rng.NormFloat64())
			frames = append(frames, []float64{noise, math.Round(12000*math.Sin(2*math.Pi*tone*float64(i)/rate)) + noise/10})
		}
		p := filepath.Join(dir, fmt.Sprintf("class%d.wav", k))
		wavtest.WriteFile(t, p, wavtest.Spec{Rate: rate, Channels: 2, Bits: 16, Samples: frames})
		paths = append(paths, p)
	}
	out := filepath.Join(dir, "audio.npz")
	args := []string{"features", "fft", "--input", paths[0], "--label", "0", "--input", paths[1], "--label", "1",
		"--channel", "2", "--window", "256", "--coeffs", "129", "--hop", "128", "--out", out}
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	per := (n-window)/hop + 1
	if !strings.Contains(stdout, fmt.Sprintf("%d windows × 129 magnitudes from 2 recordings (labeled; window 256, hop 128)", 2*per)) ||
		!strings.Contains(stdout, "sampling rate 8000 Hz: coefficient k is at k × 31.25 Hz") {
		t.Errorf("stdout %q", stdout)
	}
	arrs, err := npy.ReadNPZ(out)
	if err != nil {
		t.Fatal(err)
	}
	X, y, start := arrs["X"], arrs["y"], arrs["start"]
	if X.Shape[0] != 2*per || X.Shape[1] != 129 {
		t.Fatalf("X %v, want %d × 129", X.Shape, 2*per)
	}
	if fr := arrs["freq"]; fr == nil || len(fr.Data) != 129 || fr.Data[1] != 31.25 || fr.Data[128] != 4000 {
		t.Errorf("freq %v, want k × 31.25 Hz", fr)
	}
	for k, p := range paths {
		rec, err := signal.Read(p, &signal.ReadOptions{Channel: 2})
		if err != nil {
			t.Fatal(err)
		}
		starts, err := signal.SlidingStarts(len(rec.Samples), window, hop, 0)
		if err != nil {
			t.Fatal(err)
		}
		F, err := signal.Features(rec.Samples, starts, window, 129, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []int{500 * window / rate, 1500 * window / rate}[k]
		for i, s := range starts {
			r := k*per + i
			if start.Data[r] != float64(s) || y.Data[r] != float64(k) {
				t.Fatalf("row %d: start %v label %v, want %d, %d", r, start.Data[r], y.Data[r], s, k)
			}
			row := X.Data[r*129 : (r+1)*129]
			peak := 0
			for j, v := range row {
				if v != F.At(i, j) {
					t.Fatalf("row %d, coefficient %d: %v, library %v", r, j, v, F.At(i, j))
				}
				if v > row[peak] {
					peak = j
				}
			}
			if peak != want {
				t.Fatalf("row %d: peak at bin %d, want %d", r, peak, want)
			}
		}
	}
	// --taper hann --log: the library's features with the same settings.
	logged := filepath.Join(dir, "logged.npz")
	code, stdout, stderr = runCLI("features", "fft", "--input", paths[1], "--channel", "2", "--window", "256", "--coeffs", "129", "--hop", "128", "--taper", "hann", "--log", "--out", logged)
	if code != 0 || !strings.Contains(stdout, "(unlabeled; window 256, hop 128, hann taper, log magnitudes)") {
		t.Fatalf("--taper hann --log: exit %d, %q %q", code, stdout, stderr)
	}
	la, err := npy.ReadNPZ(logged)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := signal.Read(paths[1], &signal.ReadOptions{Channel: 2})
	if err != nil {
		t.Fatal(err)
	}
	starts, _ := signal.SlidingStarts(len(rec.Samples), window, hop, 0)
	F, err := signal.Features(rec.Samples, starts, window, 129, &signal.Settings{Taper: signal.Hann, Log: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range la["X"].Data {
		if v != F.RawMatrix().Data[i] {
			t.Fatalf("--taper hann --log: entry %d is %v, library %v", i, v, F.RawMatrix().Data[i])
		}
	}
	// --windows caps the windows per recording when given with --hop; the
	// mean of the channels is another signal.
	capped := filepath.Join(dir, "capped.npz")
	if code, stdout, stderr := runCLI("features", "fft", "--input", paths[0], "--channel", "mean", "--window", "256", "--coeffs", "8", "--hop", "256", "--windows", "5", "--out", capped); code != 0 || !strings.Contains(stdout, "5 windows × 8 magnitudes from 1 recordings (unlabeled") {
		t.Errorf("capped: exit %d, %q %q", code, stdout, stderr)
	}
	// Recordings at different rates get a note.
	fast := filepath.Join(dir, "fast.wav")
	wavtest.WriteFile(t, fast, wavtest.Spec{Rate: 16000, Channels: 1, Bits: 16, Samples: wavtest.Mono(make([]float64, 600))})
	mixed := filepath.Join(dir, "mixed.npz")
	code, _, stderr = runCLI("features", "fft", "--input", fast, "--input", paths[0], "--channel", "1", "--window", "256", "--coeffs", "8", "--out", mixed)
	if code != 0 || !strings.Contains(stderr, "note: the recordings have different sampling rates (8000 Hz, 16000 Hz): coefficient k is a different frequency in each") {
		t.Errorf("mixed rates: exit %d, stderr %q", code, stderr)
	}
}

// TestFeaturesFFTMel writes mel band energies: the library's for each
// recording's rate, the band centres in freq, and recordings without a rate
// of their own (here .npy) at --rate.
func TestFeaturesFFTMel(t *testing.T) {
	dir := t.TempDir()
	const rate, n, window, hop = 8000, 3000, 256, 128
	x := make([]float64, n)
	for i := range x {
		x[i] = 0.5*math.Sin(2*math.Pi*440*float64(i)/rate) + 0.1*math.Sin(2*math.Pi*2500*float64(i)/rate)
	}
	wav := filepath.Join(dir, "tone.wav")
	wavtest.WriteFile(t, wav, wavtest.Spec{Rate: rate, Channels: 1, Bits: 32, Float: true, Samples: wavtest.Mono(x)})
	vec := filepath.Join(dir, "tone.npy")
	if err := npy.WriteVector(vec, x); err != nil {
		t.Fatal(err)
	}
	rec, err := signal.Read(wav, nil)
	if err != nil {
		t.Fatal(err)
	}
	starts, _ := signal.SlidingStarts(n, window, hop, 0)
	mel := &signal.Mel{Rate: rate, Min: 50}
	set := &signal.Settings{Taper: signal.Hann, Mel: mel, Decibels: true}
	fromWAV, err := signal.Features(rec.Samples, starts, window, 24, set)
	if err != nil {
		t.Fatal(err)
	}
	fromNPY, err := signal.Features(x, starts, window, 24, set)
	if err != nil {
		t.Fatal(err)
	}
	librosa := &signal.Mel{Rate: rate, Min: 50, Scale: signal.Slaney, Normalize: true}
	slaney, err := signal.Features(rec.Samples, starts, window, 24, &signal.Settings{Taper: signal.Hann, Mel: librosa, Decibels: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		want  *mat.Dense
		mel   *signal.Mel
		bands string
	}{
		{"wav", []string{"--input", wav}, fromWAV, mel, "(htk scale)"},
		{"npy at --rate", []string{"--input", vec, "--rate", "8000"}, fromNPY, mel, "(htk scale)"},
		{"wav at its own --rate", []string{"--input", wav, "--rate", "8000"}, fromWAV, mel, "(htk scale)"},
		{"librosa's bands", []string{"--input", wav, "--mel-scale", "slaney", "--mel-norm", "slaney"}, slaney, librosa, "(slaney scale, unit area)"},
	} {
		centres := tc.mel.Edges(24)[1:25]
		out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".npz")
		args := append([]string{"features", "fft", "--window", "256", "--hop", "128", "--taper", "hann", "--db", "--mel", "24", "--fmin", "50", "--out", out}, tc.args...)
		code, stdout, stderr := runCLI(args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
		}
		if !strings.Contains(stdout, fmt.Sprintf("%d windows × 24 mel band energies from 1 recordings (unlabeled; window 256, hop 128, hann taper, decibels)", len(starts))) ||
			!strings.Contains(stdout, "mel bands "+tc.bands+" from 50 to 4000 Hz, centres") {
			t.Errorf("%s: stdout %q", tc.name, stdout)
		}
		arrs, err := npy.ReadNPZ(out)
		if err != nil {
			t.Fatal(err)
		}
		X := arrs["X"]
		if X.Shape[0] != len(starts) || X.Shape[1] != 24 {
			t.Fatalf("%s: X %v", tc.name, X.Shape)
		}
		for i, v := range X.Data {
			if w := tc.want.RawMatrix().Data[i]; v != w {
				t.Fatalf("%s: entry %d is %v, library %v", tc.name, i, v, w)
			}
		}
		if fr := arrs["freq"]; fr == nil || !slices.Equal(fr.Data, centres) {
			t.Errorf("%s: freq %v, want the band centres %v", tc.name, fr, centres)
		}
		// The strongest band of every window holds the 440 Hz tone.
		for i := range X.Shape[0] {
			row := X.Data[i*24 : (i+1)*24]
			b := 0
			for j, v := range row {
				if v > row[b] {
					b = j
				}
			}
			if e := tc.mel.Edges(24); !(e[b] < 440 && 440 < e[b+2]) {
				t.Fatalf("%s: window %d peaks in band %d (%.0f–%.0f Hz), not around 440 Hz", tc.name, i, b, e[b], e[b+2])
			}
		}
	}
	// Recordings at two rates: the bands must fit below both Nyquist
	// frequencies (--fmax), and then they are the same in both.
	fast := filepath.Join(dir, "fast.wav")
	wavtest.WriteFile(t, fast, wavtest.Spec{Rate: 16000, Channels: 1, Bits: 16, Samples: wavtest.Mono(make([]float64, 1000))})
	out := filepath.Join(dir, "mixed.npz")
	code, stdout, stderr := runCLI("features", "fft", "--input", wav, "--input", fast, "--window", "256", "--mel", "10", "--fmax", "3000", "--out", out)
	if code != 0 || !strings.Contains(stderr, "note: the recordings have different sampling rates (8000 Hz, 16000 Hz): the mel bands are the same frequencies in each, but a window of 256 samples lasts a different time") ||
		!strings.Contains(stdout, "mel bands (htk scale) from 0 to 3000 Hz") {
		t.Errorf("mixed rates: exit %d, %q %q", code, stdout, stderr)
	}
}

// TestFeaturesFFTRecordingMap takes WAV and NumPy recordings from a file
// map whose variable column is empty (each file's default signal): the
// rows of the chosen domain, labeled from the map, equal to the library's
// features of each file.
func TestFeaturesFFTRecordingMap(t *testing.T) {
	dir := t.TempDir()
	const rate, n = 4000, 1200
	text := "file,label,class,domain,variable\n"
	var want [][]float64 // the recordings of domain "street", in map order
	for i, tc := range []struct {
		path, domain string
		label        int
	}{
		{"street/a.wav", "street", 3}, {"park/a.wav", "park", 3},
		{"street/b.npy", "street", 5}, {"park/b.wav", "park", 5},
	} {
		x := make([]float64, n)
		for j := range x {
			x[j] = 0.2 * math.Sin(2*math.Pi*float64(300+200*i)*float64(j)/rate)
		}
		p := filepath.Join(dir, filepath.FromSlash(tc.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, ".npy") {
			if err := npy.WriteVector(p, x); err != nil {
				t.Fatal(err)
			}
		} else {
			wavtest.WriteFile(t, p, wavtest.Spec{Rate: rate, Channels: 1, Bits: 64, Float: true, Samples: wavtest.Mono(x)})
		}
		text += fmt.Sprintf("%s,%d,c%d,%s,\n", tc.path, tc.label, tc.label, tc.domain)
		if tc.domain == "street" {
			want = append(want, x)
		}
	}
	mp := filepath.Join(dir, "clips.csv")
	if err := os.WriteFile(mp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "street.npz")
	code, stdout, stderr := runCLI("features", "fft", "--files", mp, "--domain", "street", "--window", "256", "--hop", "256", "--mel", "16", "--rate", "4000", "--db", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	per := n / 256
	if !strings.Contains(stdout, fmt.Sprintf("%d windows × 16 mel band energies from 2 recordings (labeled", 2*per)) {
		t.Errorf("stdout %q", stdout)
	}
	arrs, err := npy.ReadNPZ(out)
	if err != nil {
		t.Fatal(err)
	}
	X, y := arrs["X"], arrs["y"]
	starts, _ := signal.SlidingStarts(n, 256, 256, 0)
	for f, x := range want {
		F, err := signal.Features(x, starts, 256, 16, &signal.Settings{Mel: &signal.Mel{Rate: rate}, Decibels: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range per {
			r := f*per + i
			if y.Data[r] != float64([]int{3, 5}[f]) {
				t.Fatalf("row %d: label %v", r, y.Data[r])
			}
			for b := range 16 {
				if got := X.Data[r*16+b]; got != F.At(i, b) {
					t.Fatalf("row %d band %d: %v, library %v", r, b, got, F.At(i, b))
				}
			}
		}
	}
}

// TestFeaturesFFTFLAC: a stereo FLAC recording's channel, at the rate its
// header gives, through the log-mel front end: the library's features.
func TestFeaturesFFTFLAC(t *testing.T) {
	dir := t.TempDir()
	const rate, n = 16000, 5000
	s := make([][]int32, n)
	for i := range s {
		v := int32(math.Round(9000 * math.Sin(2*math.Pi*700*float64(i)/rate)))
		s[i] = []int32{v, v / 3}
	}
	p := filepath.Join(dir, "rec.flac")
	flactest.WriteFile(t, p, flactest.Spec{Rate: rate, Bits: 16, Samples: s})
	out := filepath.Join(dir, "rec.npz")
	code, stdout, stderr := runCLI("features", "fft", "--input", p, "--channel", "2", "--window", "512", "--hop", "256", "--taper", "hann", "--mel", "20", "--db", "--out", out)
	if code != 0 || !strings.Contains(stdout, "windows × 20 mel band energies from 1 recordings") || !strings.Contains(stdout, "from 0 to 8000 Hz") {
		t.Fatalf("exit %d: %q %q", code, stdout, stderr)
	}
	rec, err := signal.Read(p, &signal.ReadOptions{Channel: 2})
	if err != nil {
		t.Fatal(err)
	}
	starts, _ := signal.SlidingStarts(n, 512, 256, 0)
	F, err := signal.Features(rec.Samples, starts, 512, 20, &signal.Settings{Taper: signal.Hann, Mel: &signal.Mel{Rate: rate}, Decibels: true})
	if err != nil {
		t.Fatal(err)
	}
	arrs, err := npy.ReadNPZ(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(arrs["X"].Data, F.RawMatrix().Data) {
		t.Error("features fft of a FLAC file differ from the library's")
	}
}

func TestFeaturesFFTAudioBadInput(t *testing.T) {
	dir := t.TempDir()
	stereo := filepath.Join(dir, "stereo.wav")
	frames := make([][]float64, 300)
	for i := range frames {
		frames[i] = []float64{float64(i), -float64(i)}
	}
	wavtest.WriteFile(t, stereo, wavtest.Spec{Rate: 100, Channels: 2, Bits: 16, Samples: frames})
	cut := filepath.Join(dir, "cut.wav")
	b := wavtest.Encode(wavtest.Spec{Rate: 100, Channels: 1, Bits: 16, Samples: wavtest.Mono(make([]float64, 300))})
	if err := os.WriteFile(cut, b[:len(b)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	mat := filepath.Join(dir, "105.mat")
	mattest.WriteFile(t, mat, mattest.Column("X105_DE_time", make([]float64, 300)))
	fast := filepath.Join(dir, "fast.wav")
	wavtest.WriteFile(t, fast, wavtest.Spec{Rate: 200, Channels: 1, Bits: 16, Samples: wavtest.Mono(make([]float64, 300))})
	out := filepath.Join(dir, "f.npz")
	small := []string{"--window", "64", "--coeffs", "8", "--out", out}
	checkBadInput(t, []string{"features", "fft"}, out, []badInput{
		{"no channel", append([]string{"--input", stereo}, small...), "stereo.wav: the file has 2 channels: choose one (1 … 2) or their mean"},
		{"channel 3", append([]string{"--input", stereo, "--channel", "3"}, small...), "channel 3 requested, but the file has 2"},
		{"sensor for wav", append([]string{"--input", stereo, "--channel", "DE"}, small...), "--channel DE for " + stereo + ": want a channel number"},
		{"channel 0", append([]string{"--input", stereo, "--channel", "0"}, small...), "want a channel number (1, 2, …) or mean"},
		{"number for mat", append([]string{"--input", mat, "--channel", "1"}, small...), "is a MATLAB file"},
		{"truncated", append([]string{"--input", stereo, "--channel", "1", "--input", cut}, small...), "cut.wav: the file is truncated"},
		{"hop", append([]string{"--input", stereo, "--channel", "1", "--hop", "-2"}, small...), "--hop -2: need a positive number"},
		{"hop 0", append([]string{"--input", stereo, "--channel", "1", "--hop", "0"}, small...), "--hop 0: need a positive number; leave the flag out for the default (windows at random positions)"},
		{"mel 0", []string{"--input", stereo, "--channel", "1", "--mel", "0", "--out", out}, "--mel 0: need a positive number; leave the flag out"},
		{"seed with hop", append([]string{"--input", stereo, "--channel", "1", "--hop", "32", "--seed", "4"}, small...), "--seed has no meaning with --hop"},
		{"short", []string{"--input", stereo, "--channel", "1", "--window", "512", "--coeffs", "8", "--hop", "10", "--out", out}, "signal: " + stereo + ": channel 1 of 2: signal of 300 samples is shorter than a window of 512"},
		{"format", append([]string{"--input", filepath.Join(dir, "x.ogg")}, small...), `unknown recording format ".ogg"`},
		{"taper", append([]string{"--input", stereo, "--channel", "1", "--taper", "hamming"}, small...), `--taper: unknown taper "hamming" (want none or hann)`},
		{"log and db", append([]string{"--input", stereo, "--channel", "1", "--log", "--db"}, small...), "--log and --db exclude each other"},
		{"mel and coeffs", append([]string{"--input", stereo, "--channel", "1", "--mel", "8"}, small...), "--coeffs and --mel exclude each other"},
		{"negative mel", []string{"--input", stereo, "--channel", "1", "--mel", "-3", "--out", out}, "--mel -3: need a positive number"},
		{"huge mel", []string{"--input", stereo, "--channel", "1", "--window", "64", "--mel", "1000000000000", "--rate", "100", "--out", out}, "1000000000000 mel bands for a window of 64 samples (want 1 … 33"},
		{"huge window", []string{"--input", stereo, "--channel", "1", "--window", "1000000000", "--coeffs", "8", "--out", out}, "--window 1000000000: at most 16777216 samples"},
		{"fmax without mel", append([]string{"--input", stereo, "--channel", "1", "--fmax", "30"}, small...), "give them with --mel"},
		{"mel-norm without mel", append([]string{"--input", stereo, "--channel", "1", "--mel-norm", "slaney"}, small...), "give them with --mel"},
		{"mel scale", []string{"--input", stereo, "--channel", "1", "--mel", "4", "--mel-scale", "bark", "--out", out}, `--mel-scale: unknown mel scale "bark" (want htk or slaney)`},
		{"mel norm", []string{"--input", stereo, "--channel", "1", "--mel", "4", "--mel-norm", "area", "--out", out}, `--mel-norm "area": want none or slaney`},
		{"zero rate", []string{"--input", stereo, "--channel", "1", "--mel", "4", "--rate", "0", "--out", out}, "--rate 0: want a sampling rate in Hz above 0"},
		{"mel without rate", []string{"--input", fast, "--input", mat, "--mel", "4", "--out", out}, "--mel needs the sampling rate, and " + mat + " does not carry one (only WAV and FLAC files do): give --rate HZ"},
		{"rate against header", []string{"--input", stereo, "--channel", "1", "--rate", "200", "--out", out}, "--rate 200: " + stereo + " is sampled at 100 Hz, as its header says"},
		{"above nyquist", []string{"--input", stereo, "--channel", "1", "--window", "64", "--mel", "4", "--fmax", "60", "--out", out}, "signal: " + stereo + ": channel 1 of 2: mel bands up to 60 Hz, above the Nyquist frequency 50 Hz of a 100 Hz sampling rate"},
		{"above nyquist at --rate", []string{"--input", mat, "--window", "64", "--mel", "4", "--rate", "100", "--fmax", "60", "--out", out}, "--rate 100: mel bands up to 60 Hz, above the Nyquist frequency 50 Hz"},
		{"too many bands", []string{"--input", stereo, "--channel", "1", "--window", "16", "--mel", "4", "--fmin", "40", "--out", out}, "holds no Fourier coefficient of a 16-sample window at 100 Hz (one every 6.25 Hz): use fewer bands"},
		{"mixed rates without fmax", []string{"--input", stereo, "--channel", "1", "--input", fast, "--window", "64", "--mel", "4", "--out", out}, "--mel: " + stereo + " is sampled at 100 Hz and " + fast + " at 200 Hz: give --fmax (at most 50 Hz)"},
	})
}
