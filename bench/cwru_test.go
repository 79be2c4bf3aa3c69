package bench

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/mattest"
	"github.com/dadil/dadil/internal/testdata"
	"github.com/dadil/dadil/mlp"
	"github.com/dadil/dadil/signal"
)

func TestCWRUFilesEmbedded(t *testing.T) {
	files := CWRUFiles()
	if len(files) != 30 {
		t.Fatalf("%d files, want 30 (10 classes × 3 loads)", len(files))
	}
	perClass := map[int][]string{}
	for _, f := range files {
		if !slices.Contains(CWRUDomains, f.Domain) {
			t.Errorf("%s: domain %q not in %v", f.Path, f.Domain, CWRUDomains)
		}
		if !strings.HasSuffix(f.Variable, "_DE_time") {
			t.Errorf("%s: variable %q is not a drive-end signal", f.Path, f.Variable)
		}
		perClass[f.Label] = append(perClass[f.Label], f.Domain)
	}
	for l := 0; l <= 9; l++ {
		got := slices.Sorted(slices.Values(perClass[l]))
		want := slices.Sorted(slices.Values(CWRUDomains))
		if !slices.Equal(got, want) {
			t.Errorf("class %d has domains %v, want one file per domain %v", l, got, want)
		}
	}
}

func TestParseCWRUFilesErrors(t *testing.T) {
	const head = "file,label,class,domain,variable\n"
	huge := strings.Repeat("9", 16<<20)
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "# only a comment\n", "empty file map"},
		{"header", "path,label,class,domain,variable\n", "header"},
		{"no rows", head, "lists no files"},
		{"label", head + "a.mat,one,x,1772,X_DE_time\n", `line 2: label "one" is not an integer`},
		{"empty field", head + "a.mat,1,x,,X_DE_time\n", "line 2: empty domain"},
		{"fields", head + "a.mat,1,x,1772\n", "line 2: 4 fields, want 5 (file,label,class,domain,variable)"},
		{"short header", "file,label,class,domain\na.mat,1,x,1772\n", `header "file,label,class,domain", want "file,label,class,domain,variable"`},
		{"wide header", "file,label,class,domain,variable,extra\n", `want "file,label,class,domain,variable"`},
		{"duplicate", head + "a.mat,1,x,1772,A_DE_time\na.mat,1,x,1750,A_DE_time\n", "line 3: file a.mat is already listed on line 2"},
		{"same file", head + "d/a.mat,1,x,1772,A_DE_time\n./d//a.mat,1,x,1750,A_DE_time\n", "line 3: file ./d//a.mat is already listed on line 2"},
		{"two names", head + "a.mat,1,x,1772,A_DE_time\nb.mat,1,y,1750,B_DE_time\n", `label 1 is called both "x" and "y"`},
		// Fields of any size are quoted cut (clip), and a malformed record
		// is reported at its first line.
		{"huge label", head + "a.mat," + huge + ",x,1772,X\n", `line 2: label "` + huge[:40] + `"… (16777216 bytes) is not an integer`},
		{"huge class", head + "a.mat,1," + huge + ",1772,X\n", `line 2: class "` + huge[:40] + `"… (16777216 bytes) is longer than 256 bytes`},
		{"huge path", head + huge + ",1,x,1772,X\n", `line 2: file "` + huge[:40] + `"… (16777216 bytes) is longer than 4096 bytes`},
		{"huge header", huge + "\n", `header "` + huge[:40] + `"… (16777216 bytes), want`},
		{"stray quote", head + "a.mat,1,x,1772,X\nb.mat,\"2,y,1772,X\n" + strings.Repeat("c.mat,3,z,1772,X\n", 5) + "d.mat,4\"q,w,1772,X\n",
			"line 3: malformed CSV: the record starting on this line runs on to line 9, column 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCWRUFiles("map.csv", strings.NewReader(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "map.csv") {
				t.Fatalf("error %.300v, want one naming map.csv and containing %q", err, tc.want)
			}
			if len(err.Error()) > 600 {
				t.Fatalf("a message of %d bytes", len(err.Error()))
			}
		})
	}
}

// synthCWRU writes a CWRU-like data folder: for each of the domains and
// classes one recording of n samples whose spectrum has a class-specific
// peak (shifted slightly by the domain, like a change of shaft speed) in
// noise. It returns the folder and the file map.
func synthCWRU(t *testing.T, domains []string, classes, n int) (string, []CWRUFile) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sig"), 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var files []CWRUFile
	id := 100
	for k := range classes {
		for d, dom := range domains {
			id++
			freq := 0.02*float64(k+1) + 0.002*float64(d)
			x := make([]float64, n)
			for i := range x {
				x[i] = math.Sin(2*math.Pi*freq*float64(i)) + 0.3*math.Sin(2*math.Pi*(freq*3.1)*float64(i)) + 0.5*rng.NormFloat64()
			}
			f := CWRUFile{
				Path: fmt.Sprintf("sig/%d.mat", id), Label: k + 1, Class: fmt.Sprintf("fault %d", k+1),
				Domain: dom, Variable: fmt.Sprintf("X%d_DE_time", id),
			}
			mattest.WriteFile(t, filepath.Join(dir, filepath.FromSlash(f.Path)), mattest.Column(f.Variable, x))
			files = append(files, f)
		}
	}
	return dir, files
}

func TestLoadCWRU(t *testing.T) {
	doms := []string{"a", "b", "c"}
	dir, files := synthCWRU(t, doms, 3, 2000)
	c, err := LoadCWRU(dir, files, 256)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Domains, doms) || !slices.Equal(c.Labels, []int{1, 2, 3}) || len(c.Dropped) != 0 {
		t.Fatalf("domains %v labels %v dropped %v", c.Domains, c.Labels, c.Dropped)
	}

	// A class none of whose files exists is dropped, as "normal" is when
	// 98.mat, 99.mat and 100.mat are absent.
	absent := append(slices.Clone(files),
		CWRUFile{Path: "normal/98.mat", Label: 0, Class: "normal", Domain: "a", Variable: "X098_DE_time"},
		CWRUFile{Path: "normal/99.mat", Label: 0, Class: "normal", Domain: "b", Variable: "X099_DE_time"},
		CWRUFile{Path: "normal/100.mat", Label: 0, Class: "normal", Domain: "c", Variable: "X100_DE_time"},
	)
	c, err = LoadCWRU(dir, absent, 256)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Dropped, []string{"0 (normal)"}) || !slices.Equal(c.Labels, []int{1, 2, 3}) {
		t.Fatalf("dropped %v labels %v, want class 0 dropped", c.Dropped, c.Labels)
	}

	// An empty variable is the file's drive-end signal.
	blank := slices.Clone(files)
	for i := range blank {
		blank[i].Variable = ""
	}
	cb, err := LoadCWRU(dir, blank, 256)
	if err != nil {
		t.Fatal(err)
	}
	for d := range cb.rec {
		for k := range cb.rec[d] {
			for j, r := range cb.rec[d][k] {
				if !slices.Equal(r.x, c.rec[d][k][j].x) {
					t.Fatalf("domain %d class %d recording %d: the default variable's signal differs from the named one's", d, k, j)
				}
			}
		}
	}
	if _, err := LoadCWRU(dir, blank, 4096); err == nil || !strings.Contains(err.Error(), "variable X101_DE_time has 2000 samples") {
		t.Errorf("short default signal: error %v, want one naming the variable", err)
	}

	t.Run("errors", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			edit  func(t *testing.T, files []CWRUFile) []CWRUFile
			want  []string
			short int
		}{
			{"missing file", func(t *testing.T, fs []CWRUFile) []CWRUFile {
				fs[4].Path = "sig/nope.mat"
				return fs
			}, []string{"sig/nope.mat missing", "class 2 (fault 2)"}, 0},
			{"no variable", func(t *testing.T, fs []CWRUFile) []CWRUFile {
				fs[1].Variable = "X999_DE_time"
				return fs
			}, []string{files[1].Path, "X999_DE_time"}, 0},
			{"short signal", nil, []string{"fewer than a window of 4096"}, 4096},
			{"class without a domain", func(t *testing.T, fs []CWRUFile) []CWRUFile {
				return slices.Delete(fs, 5, 6) // class 2 in domain c
			}, []string{"class 2 (fault 2) has no file for domain c"}, 0},
			{"one class", func(t *testing.T, fs []CWRUFile) []CWRUFile {
				return fs[:3]
			}, []string{"1 classes"}, 0},
			{"not a MAT-file", func(t *testing.T, fs []CWRUFile) []CWRUFile {
				if err := os.WriteFile(filepath.Join(dir, "sig", "junk.mat"), []byte("MATLAB 7.3 MAT-file, this is not"), 0o644); err != nil {
					t.Fatal(err)
				}
				fs[0].Path = "sig/junk.mat"
				return fs
			}, []string{"sig/junk.mat"}, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				fs := slices.Clone(files)
				if tc.edit != nil {
					fs = tc.edit(t, fs)
				}
				w := 256
				if tc.short > 0 {
					w = tc.short
				}
				_, err := LoadCWRU(dir, fs, w)
				if err == nil {
					t.Fatal("no error")
				}
				for _, s := range tc.want {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
			})
		}
	})
}

func smallCWRUProtocol() *CWRUProtocol {
	return &CWRUProtocol{
		Window: 256, Coeffs: 128, Windows: 40, Train: 30,
		Encoder: &mlp.Settings{Hidden: []int{32, 16}, Epochs: 15, Batch: 32, LearningRate: 3e-3},
	}
}

func TestCWRUSpectra(t *testing.T) {
	doms := []string{"a", "b", "c"}
	dir, files := synthCWRU(t, doms, 3, 3000)
	c, err := LoadCWRU(dir, files, 256)
	if err != nil {
		t.Fatal(err)
	}
	p := smallCWRUProtocol()
	s1, err := c.Spectra("b", 5, p)
	if err != nil {
		t.Fatal(err)
	}
	if r, cols := s1.X.Dims(); r != 3*40 || cols != 128 {
		t.Fatalf("spectra %d×%d, want 120×128", r, cols)
	}
	if len(s1.Train) != 3*30 || len(s1.Test) != 3*10 || len(s1.Y) != 120 {
		t.Fatalf("%d train, %d test, %d labels", len(s1.Train), len(s1.Test), len(s1.Y))
	}
	for _, i := range s1.Test {
		if slices.Contains(s1.Train, i) {
			t.Fatalf("row %d is both train and test", i)
		}
	}
	s2, _ := c.Spectra("b", 5, p)
	if !mat.Equal(s1.X, s2.X) {
		t.Error("the same seed drew different windows")
	}
	s3, _ := c.Spectra("b", 6, p)
	if mat.Equal(s1.X, s3.X) {
		t.Error("another seed drew the same windows")
	}
	if _, err := c.Spectra("z", 5, p); err == nil || !strings.Contains(err.Error(), `"z"`) {
		t.Errorf("unknown domain: %v", err)
	}
	bad := *p
	bad.Train = 40
	if _, err := c.Spectra("b", 5, &bad); err == nil || !strings.Contains(err.Error(), "training windows") {
		t.Errorf("train = windows: %v", err)
	}
}

// TestCWRUSpectraRecordingsInTurn checks the windows of classes with
// several recordings against the protocol written out: the class's stream
// PCG(seed, FNV-1a("domain/label")) draws the starts of its recordings one
// after another, ⌈(Windows − r)/R⌉ of recording r, whose i-th window is
// the class's window r + i·R.
func TestCWRUSpectraRecordingsInTurn(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	rec := func(n int) recording {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return recording{path: fmt.Sprintf("rec%d.mat", n), x: x}
	}
	c := &CWRU{Domains: []string{"a", "b"}, Labels: []int{3, 5}, rec: [][][]recording{
		{{rec(300), rec(400)}, {rec(500)}},
		{{rec(700)}, {rec(350), rec(600), rec(450)}},
	}}
	p := &CWRUProtocol{Window: 64, Coeffs: 20, Windows: 11, Train: 6}
	for d, dom := range c.Domains {
		s, err := c.Spectra(dom, 9, p)
		if err != nil {
			t.Fatal(err)
		}
		want := mat.NewDense(len(c.Labels)*p.Windows, p.Coeffs, nil)
		for k, label := range c.Labels {
			h := fnv.New64a()
			h.Write([]byte(dom + "/" + strconv.Itoa(label)))
			stream := rand.New(rand.NewPCG(9, h.Sum64()))
			recs := c.rec[d][k]
			for r, rec := range recs {
				count := (p.Windows - r + len(recs) - 1) / len(recs)
				starts, err := signal.RandomStarts(stream, len(rec.x), p.Window, count)
				if err != nil {
					t.Fatal(err)
				}
				F, err := signal.Features(rec.x, starts, p.Window, p.Coeffs, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range count {
					want.SetRow(k*p.Windows+r+i*len(recs), F.RawRowView(i))
				}
			}
		}
		if !mat.Equal(s.X, want) {
			t.Errorf("domain %s: spectra differ from the protocol's windows", dom)
		}
		if got := len(s.Recordings); got != len(c.rec[d][0])+len(c.rec[d][1]) {
			t.Errorf("domain %s: %d recordings listed", dom, got)
		}
	}
}

// TestRunCWRUSynthetic runs the whole pipeline on synthetic recordings whose
// classes differ by their spectral peaks: every method must classify the
// target well, and the results must not depend on the number of workers.
func TestRunCWRUSynthetic(t *testing.T) {
	dir, files := synthCWRU(t, []string{"a", "b", "c"}, 3, 3000)
	c, err := LoadCWRU(dir, files, 256)
	if err != nil {
		t.Fatal(err)
	}
	opt := CWRUOptions{
		Methods: []string{"mlp", "source-only", "otda-emd", "dadil-r", "dadil-e"},
		Targets: []string{"c"}, Seeds: 1, Seed: 3, Protocol: smallCWRUProtocol(),
	}
	opt.Workers = 1
	r1, err := RunCWRU(c, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Workers = 3
	r3, err := RunCWRU(c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(r1) != len(opt.Methods) || len(r3) != len(r1) {
		t.Fatalf("%d and %d results, want %d", len(r1), len(r3), len(opt.Methods))
	}
	SortResults(r1, opt.Methods, opt.Targets)
	SortResults(r3, opt.Methods, opt.Targets)
	for i := range r1 {
		if r1[i].Method != r3[i].Method || r1[i].Accuracy != r3[i].Accuracy {
			t.Errorf("workers 1: %s %.2f%%; workers 3: %s %.2f%%", r1[i].Method, r1[i].Accuracy, r3[i].Method, r3[i].Accuracy)
		}
		if r1[i].Target != "c" || r1[i].Fold != 1 {
			t.Errorf("result %+v: want target c, seed 1", r1[i])
		}
		if r1[i].Accuracy < 90 {
			t.Errorf("%s: %.2f%% on well-separated synthetic classes", r1[i].Method, r1[i].Accuracy)
		}
	}
	if _, err := RunCWRU(c, CWRUOptions{Targets: []string{"d"}, Protocol: smallCWRUProtocol()}); err == nil || !strings.Contains(err.Error(), `"d"`) {
		t.Errorf("unknown target: %v", err)
	}
	if _, err := RunCWRU(c, CWRUOptions{Methods: []string{"dadil-x"}, Protocol: smallCWRUProtocol()}); err == nil || !strings.Contains(err.Error(), "dadil-x") {
		t.Errorf("unknown method: %v", err)
	}
}

// TestCWRUPaperScaling: the paper-setting rows get their own scaling of
// the same encoded features (standard by default), the others the
// protocol's Scaling (min-max by default).
func TestCWRUPaperScaling(t *testing.T) {
	dir, files := synthCWRU(t, []string{"a", "b", "c"}, 3, 3000)
	c, err := LoadCWRU(dir, files, 256)
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.Prepare("c", 5, smallCWRUProtocol(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.PaperProblem == e.Problem {
		t.Fatal("min-max and standard scaling share one split")
	}
	// Over the rows the scalers were fitted on (sources and target
	// training rows), min-max spans [0, 1] and standard has mean 0 and
	// standard deviation 1 in every non-constant column.
	stack := func(s *dataset.Problem) *mat.Dense {
		var m *mat.Dense
		for _, X := range append([]*mat.Dense{s.Target.X}, s.Sources[0].X, s.Sources[1].X) {
			if m == nil {
				m = mat.DenseCopyOf(X)
				continue
			}
			var st mat.Dense
			st.Stack(m, X)
			m = &st
		}
		return m
	}
	mm, sd := stack(e.Problem), stack(e.PaperProblem)
	_, d := mm.Dims()
	checked := 0
	for j := 0; j < d; j++ {
		col := mat.Col(nil, j, sd)
		mean, std := stat.MeanStdDev(col, nil)
		lo, hi := floats.Min(mat.Col(nil, j, mm)), floats.Max(mat.Col(nil, j, mm))
		if hi == lo {
			continue // a dead unit
		}
		checked++
		if lo != 0 || math.Abs(hi-1) > 1e-12 {
			t.Errorf("column %d: min-max range [%g, %g]", j, lo, hi)
		}
		n := float64(len(col))
		if math.Abs(mean) > 1e-9 || math.Abs(std*math.Sqrt((n-1)/n)-1) > 1e-9 {
			t.Errorf("column %d: standardised mean %g, std %g", j, mean, std)
		}
	}
	if checked == 0 {
		t.Fatal("no live column to check")
	}
	p := smallCWRUProtocol()
	p.PaperScaling = "minmax"
	if e, err = c.Prepare("c", 5, p, nil); err != nil || e.PaperProblem != e.Problem {
		t.Errorf("equal scalings: %v, shared split %v", err, e != nil && e.PaperProblem == e.Problem)
	}
	p.PaperScaling = "log"
	if _, err := c.Prepare("c", 5, p, nil); err == nil || !strings.Contains(err.Error(), "log") {
		t.Errorf("bad paper scaling: %v", err)
	}
}

// TestRunCWRUHeldOutSources validates without the target: the target's
// recordings are removed, each source is held out in turn, and the
// encoder trained on the other source alone classifies it well above
// chance (1/3).
func TestRunCWRUHeldOutSources(t *testing.T) {
	dir, files := synthCWRU(t, []string{"a", "b", "c"}, 3, 3000)
	c, err := LoadCWRU(dir, files, 256)
	if err != nil {
		t.Fatal(err)
	}
	c.rec[2] = nil // the target "c": any access would panic
	opt := CWRUOptions{
		Methods: []string{"mlp", "source-only"}, Targets: []string{"c"}, Seeds: 1, Seed: 3,
		Protocol: smallCWRUProtocol(), HeldOutSources: true,
	}
	res, err := RunCWRU(c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 {
		t.Fatalf("%d results, want 2 methods × 2 held-out sources", len(res))
	}
	seed := c.drawSeed(3, "c", 1)
	for _, r := range res {
		if r.Target != "c" || (r.HeldOut != "a" && r.HeldOut != "b") || r.Fold != 1 {
			t.Errorf("result %+v", r)
		}
		if r.Accuracy < 60 {
			t.Errorf("%s with %s held out: %.2f%%", r.Method, r.HeldOut, r.Accuracy)
		}
	}
	e, err := c.PrepareHeldOut("c", "a", seed, smallCWRUProtocol(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.Target != "a" || len(e.Problem.Sources) != 1 || e.Problem.Sources[0].Name != "b" {
		t.Errorf("held-out experiment: target %s, sources %d", e.Target, len(e.Problem.Sources))
	}
	if _, err := c.PrepareHeldOut("c", "c", seed, smallCWRUProtocol(), nil); err == nil || !strings.Contains(err.Error(), "is the target") {
		t.Errorf("held out = target: %v", err)
	}
	if _, err := c.PrepareHeldOut("z", "a", seed, smallCWRUProtocol(), nil); err == nil || !strings.Contains(err.Error(), `"z"`) {
		t.Errorf("unknown target: %v", err)
	}
}

// TestCWRUSmokeReal runs the benchmark on the real CWRU recordings with
// fewer windows and encoder epochs, for one target and seed.
func TestCWRUSmokeReal(t *testing.T) {
	root := testdata.Dir(t, "cwru/12k_DE")
	if testing.Short() {
		t.Skip("-short: skipping the CWRU smoke run")
	}
	c, err := LoadCWRU(filepath.Join(root, "cwru"), CWRUFiles(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Labels) < 9 {
		t.Fatalf("%d classes, want at least the 9 fault classes", len(c.Labels))
	}
	enc := CWRUEncoder()
	enc.Epochs = 2
	methods := []string{"mlp", "dadil-r", "dadil-e"}
	rs, err := RunCWRU(c, CWRUOptions{
		Methods: methods, Targets: []string{"1772"}, Seeds: 1, Seed: 1,
		Protocol: &CWRUProtocol{Windows: 120, Train: 90, Encoder: enc},
	})
	if err != nil {
		t.Fatal(err)
	}
	acc := map[string]float64{}
	for _, r := range rs {
		acc[r.Method] = r.Accuracy
		t.Logf("%s on 1772: %.2f%% (%.1f s)", r.Method, r.Accuracy, r.Seconds)
	}
	for _, m := range []string{"dadil-r", "dadil-e"} {
		if acc[m] < 95 {
			t.Errorf("%s: %.2f%% on target 1772, want ≥ 95%%", m, acc[m])
		}
	}
}

// FuzzParseCWRUFiles checks that parseCWRUFiles never panics, names the file
// in its errors, and accepts only maps whose rows are complete, list each
// file once and give every label one class name.
func FuzzParseCWRUFiles(f *testing.F) {
	f.Add([]byte("file,label,class,domain,variable\n1772/IR007.mat,1,IR007,1772,X106_DE_time\n"))
	f.Add([]byte("# c\nfile,label,class,domain,variable\na,1,x,1,v\nb,2,y,1,v\n"))
	f.Add([]byte("file,label,class,domain,variable\na,\"1\",x,1,v\n"))
	f.Add([]byte("file,label,class,domain,variable\na,1,x,1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := parseCWRUFiles("map.csv", bytes.NewReader(b))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "bench: map.csv: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(files) == 0 {
			t.Fatal("no files and no error")
		}
		paths := map[string]bool{}
		names := map[int]string{}
		for _, fl := range files {
			if fl.Path == "" || fl.Class == "" || fl.Domain == "" || fl.Variable == "" {
				t.Fatalf("incomplete row accepted: %+v", fl)
			}
			if fl.Path != path.Clean(fl.Path) {
				t.Fatalf("path %q not cleaned", fl.Path)
			}
			if paths[fl.Path] {
				t.Fatalf("file %s listed twice", fl.Path)
			}
			paths[fl.Path] = true
			if n, ok := names[fl.Label]; ok && n != fl.Class {
				t.Fatalf("label %d named %q and %q", fl.Label, n, fl.Class)
			}
			names[fl.Label] = fl.Class
		}
	})
}
