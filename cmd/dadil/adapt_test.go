package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/modelfile"
	"github.com/dadil/dadil/synth"
	"gonum.org/v1/gonum/mat"
)

// adaptArgs returns the arguments of dadil adapt on the synthetic files.
func adaptArgs(src []string, tgt string, extra ...string) []string {
	args := []string{"adapt", "--target", tgt, "--quiet"}
	for _, s := range src {
		args = append(args, "--source", s)
	}
	return append(args, extra...)
}

func readAdaptReport(t *testing.T, dir string) *adaptReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep adaptReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

func readPredictions(t *testing.T, dir string) [][]string {
	t.Helper()
	return readCSVRows(t, filepath.Join(dir, "predictions.csv"))
}

// readCSVRows reads every row of a CSV file, header included.
func readCSVRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestAdapt(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	out := filepath.Join(dir, "out")
	methods := "dadil-e,source-only,otda-emd,dadil-r,wbr-r"
	code, stdout, stderr := runCLI(adaptArgs(src, tgt, "--methods", methods, "--out", out, "--samples", "99", "--validate")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Methods come in table order, whatever the order asked.
	order := []string{"source-only", "otda-emd", "wbr-r", "dadil-r", "dadil-e"}
	rep := readAdaptReport(t, out)
	var got []string
	for _, m := range rep.Methods {
		got = append(got, m.Method)
	}
	if !slices.Equal(got, order) {
		t.Fatalf("report methods %v, want %v", got, order)
	}
	if rep.DaDiL == nil || rep.DaDiL.Samples != 99 || rep.DaDiL.Atoms != 3 || rep.Seed != 1 || rep.Features != 2 || !slices.Equal(rep.Classes, []int{10, 20, 30}) {
		t.Errorf("report header %+v", rep)
	}
	// predictions.csv: a column per method with the user's labels, and the
	// report's accuracies are those of these columns.
	rows := readPredictions(t, out)
	if !slices.Equal(rows[0], append([]string{"row"}, order...)) {
		t.Fatalf("predictions header %v", rows[0])
	}
	truth := synthTruth(t, tgt)
	if len(rows)-1 != len(truth) {
		t.Fatalf("%d prediction rows for %d target rows", len(rows)-1, len(truth))
	}
	acc := map[string]float64{}
	for j, name := range order {
		right := 0
		for i, r := range rows[1:] {
			if r[0] != strconv.Itoa(i) {
				t.Fatalf("row %d numbered %s", i, r[0])
			}
			if r[j+1] == truth[i] {
				right++
			}
		}
		acc[name] = 100 * float64(right) / float64(len(truth))
		m := rep.Methods[j]
		if m.TargetAccuracy == nil {
			t.Errorf("%s: no report accuracy, predictions give %v", name, acc[name])
		} else if math.Abs(*m.TargetAccuracy-acc[name]) > 1e-9 {
			t.Errorf("%s: report accuracy %v, predictions give %v", name, *m.TargetAccuracy, acc[name])
		}
		if m.Seconds <= 0 || len(m.HeldOutSources) != 3 || m.HeldOutMean == nil || m.ValidationSeconds <= 0 {
			t.Errorf("%s: report %+v", name, m)
		}
		var mean, bal float64
		for k, h := range m.HeldOutSources {
			if h.Source != src[k] || h.Accuracy < 0 || h.Accuracy > 100 || h.Balanced < 0 || h.Balanced > 100 {
				t.Errorf("%s: held-out score %+v", name, h)
			}
			mean += h.Accuracy / 3
			bal += h.Balanced / 3
		}
		if m.HeldOutMean != nil && abs(*m.HeldOutMean-mean) > 1e-9 {
			t.Errorf("%s: held-out mean %v, scores average %v", name, *m.HeldOutMean, mean)
		}
		if m.HeldOutBalancedMean == nil || abs(*m.HeldOutBalancedMean-bal) > 1e-9 {
			t.Errorf("%s: held-out balanced mean %v, scores average %v", name, m.HeldOutBalancedMean, bal)
		}
	}
	// The shifted synthetic target defeats source-only; DaDiL adapts.
	if acc["dadil-r"] < 95 || acc["dadil-e"] < 95 || acc["source-only"] > 60 {
		t.Errorf("accuracies %v", acc)
	}
	// The table on stdout: header, rule, one row per method.
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2+len(order) || !strings.Contains(lines[0], "target accuracy") || !strings.Contains(lines[0], "s1 held out") {
		t.Fatalf("table:\n%s", stdout)
	}
	for j, name := range order {
		want := "| " + name + " | " + strconv.FormatFloat(acc[name], 'f', 2, 64) + " |"
		if !strings.HasPrefix(lines[2+j], want) {
			t.Errorf("table row %q, want prefix %q", lines[2+j], want)
		}
	}

	// The same run on one worker gives the same predictions, and DaDiL
	// the same as dadil fit with the same flags.
	out1 := filepath.Join(dir, "out1")
	if code, _, stderr := runCLI(adaptArgs(src, tgt, "--methods", methods, "--out", out1, "--samples", "99", "--workers", "1")...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !slices.EqualFunc(rows, readPredictions(t, out1), slices.Equal) {
		t.Error("predictions depend on --workers")
	}
	fitOut := filepath.Join(dir, "fit")
	fitArgs := []string{"fit", "--out", fitOut, "--target", tgt, "--samples", "99", "--quiet"}
	for _, s := range src {
		fitArgs = append(fitArgs, "--source", s)
	}
	if code, _, stderr := runCLI(fitArgs...); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, stderr)
	}
	fit := readPredictions(t, fitOut)
	for i := range fit[1:] {
		if fit[i+1][1] != rows[i+1][4] || fit[i+1][2] != rows[i+1][5] {
			t.Fatalf("row %d: dadil fit predicts %v, dadil adapt %v", i, fit[i+1], rows[i+1])
		}
	}
}

// synthTruth reads the label column of a synthetic CSV file.
func synthTruth(t *testing.T, path string) []string {
	t.Helper()
	var y []string
	for _, r := range readCSVRows(t, path)[1:] {
		y = append(y, r[len(r)-1])
	}
	return y
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestAdaptUnlabeledTarget(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, false)
	code, stdout, stderr := runCLI(adaptArgs(src, tgt, "--methods", "source-only,sa")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Without target labels nor --validate, the table has seconds only.
	want := "| method | seconds |\n|---|---:|\n| source-only |"
	if !strings.HasPrefix(stdout, want) || strings.Contains(stdout, "accuracy") {
		t.Errorf("table:\n%s", stdout)
	}
}

func TestAdaptErrors(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("x1,x2,label\n1,Inf,10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown method", adaptArgs(src, tgt, "--methods", "sa,dadil"), 2, `unknown method "dadil"`},
		{"all among others", adaptArgs(src, tgt, "--methods", "all,sa"), 2, `"all" stands alone`},
		{"empty methods", adaptArgs(src, tgt, "--methods", ","), 2, "--methods is empty"},
		{"validate one source", adaptArgs(src[:1], tgt, "--validate"), 2, "at least 2 --source"},
		{"no target", []string{"adapt", "--source", src[0]}, 2, "--target is required"},
		{"negative max-rows", adaptArgs(src, tgt, "--max-rows", "-1"), 2, "--max-rows -1"},
		{"out under a file", adaptArgs(src, tgt, "--out", filepath.Join(tgt, "run")), 2, "is not a directory"},
		{"Inf in a source", adaptArgs([]string{src[0], bad}, tgt, "--methods", "sa", "--out", out), 1, "bad.csv"},
		{"missing target", adaptArgs(src, filepath.Join(dir, "none.csv"), "--out", out), 1, "none.csv"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.name, code, stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run created %s", out)
	}
}

func TestAdaptMaxRows(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	run := func(maxRows string) (*adaptReport, [][]string) {
		out := filepath.Join(dir, "out"+maxRows)
		code, _, stderr := runCLI(adaptArgs(src, tgt, "--methods", "sa,wb", "--max-rows", maxRows, "--out", out)...)
		if code != 0 {
			t.Fatalf("--max-rows %s: exit %d: %s", maxRows, code, stderr)
		}
		return readAdaptReport(t, out), readPredictions(t, out)
	}
	// The synthetic domains have 300 rows: a cap of 50 applies to WB only,
	// says so, and changes its fit; SA keeps every row.
	capped, pc := run("50")
	whole, pw := run("0")
	if capped.MaxRows != 50 || whole.MaxRows != 0 {
		t.Errorf("max_rows %d and %d", capped.MaxRows, whole.MaxRows)
	}
	notes := strings.Join(capped.Notes, " ")
	if !strings.Contains(notes, "wb fit on at most 50 rows") || strings.Contains(notes, "sa,") || strings.Contains(strings.Join(whole.Notes, " "), "at most") {
		t.Errorf("notes %q and %q", capped.Notes, whole.Notes)
	}
	sameSA, sameWB := true, true
	for i := 1; i < len(pc); i++ {
		sameSA = sameSA && pc[i][1] == pw[i][1]
		sameWB = sameWB && pc[i][2] == pw[i][2]
	}
	if !sameSA || sameWB {
		t.Errorf("capping changed SA: %v, WB: %v; want false, true", !sameSA, !sameWB)
	}
}

func TestShortNames(t *testing.T) {
	for _, tc := range []struct {
		paths, want []string
	}{
		{[]string{"d/s0.csv", "d/s1.npz"}, []string{"s0", "s1"}},
		{[]string{"a/s.csv", "b/s.csv", "c/t.csv"}, []string{"a/s.csv", "b/s.csv", "t"}},
		{[]string{"a/s.csv", "b/s.npz"}, []string{"a/s.csv", "b/s.npz"}},
	} {
		if got := shortNames(tc.paths); !slices.Equal(got, tc.want) {
			t.Errorf("shortNames(%q) = %q, want %q", tc.paths, got, tc.want)
		}
	}
}

// TestAdaptSelect runs every scorer: each method gets every score, in
// the order asked, the held-out scorer agrees with --validate (whose
// fits it shares), the choices are marked in the table and selected.csv
// holds the first scorer's choice; the accuracies are those of a run
// without --select.
func TestAdaptSelect(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	out, plain := filepath.Join(dir, "out"), filepath.Join(dir, "plain")
	methods := "source-only,otda-emd,wbr-r,wbr-e"
	scorers := []string{"mixval", "held-out", "iwv", "dev", "entropy", "ensv", "snd", "circular", "ensv-balanced", "held-out-balanced"}
	code, stdout, stderr := runCLI(adaptArgs(src, tgt, "--methods", methods, "--out", out, "--validate", "--select", strings.Join(scorers, ","))...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(adaptArgs(src, tgt, "--methods", methods, "--out", plain, "--validate")...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep, base := readAdaptReport(t, out), readAdaptReport(t, plain)
	if len(rep.Selected) != len(scorers) || base.Selected != nil {
		t.Fatalf("selected %+v and %+v", rep.Selected, base.Selected)
	}
	for j, s := range rep.Selected {
		if s.Scorer != scorers[j] || s.Method == "" {
			t.Errorf("choice %d: %+v", j, s)
		}
	}
	for i, m := range rep.Methods {
		if *m.TargetAccuracy != *base.Methods[i].TargetAccuracy || *m.HeldOutMean != *base.Methods[i].HeldOutMean || base.Methods[i].Selection != nil {
			t.Errorf("%s: accuracies differ with --select", m.Method)
		}
		if len(m.Selection) != len(scorers) {
			t.Fatalf("%s: %d scores", m.Method, len(m.Selection))
		}
		for j, v := range m.Selection {
			if v.Scorer != scorers[j] || v.Score == nil || v.Error != "" {
				t.Errorf("%s: value %d %+v", m.Method, j, v)
			}
		}
		if held := 100 * *m.Selection[1].Score; abs(held-*m.HeldOutMean) > 1e-9 {
			t.Errorf("%s: held-out scorer %v, --validate %v", m.Method, held, *m.HeldOutMean)
		}
		if bal := 100 * *m.Selection[9].Score; abs(bal-*m.HeldOutBalancedMean) > 1e-9 {
			t.Errorf("%s: held-out-balanced scorer %v, --validate %v", m.Method, bal, *m.HeldOutBalancedMean)
		}
	}
	// selected.csv is the first scorer's method's column of predictions.csv.
	rows := readPredictions(t, out)
	col := slices.Index(rows[0], rep.Selected[0].Method)
	sel := readCSVRows(t, filepath.Join(out, "selected.csv"))
	if col < 1 || len(sel) != len(rows) || !slices.Equal(sel[0], []string{"row", "prediction"}) {
		t.Fatalf("selected.csv header %v, %d rows", sel[0], len(sel))
	}
	for i := 1; i < len(rows); i++ {
		if sel[i][0] != rows[i][0] || sel[i][1] != rows[i][col] {
			t.Fatalf("selected.csv row %d: %v, predictions %v", i, sel[i], rows[i])
		}
	}
	// The table: a column per scorer, one bold value in each, and the
	// choices below.
	if !strings.Contains(stdout, "| "+strings.Join(scorers, " | ")+" | seconds |") || !strings.Contains(stdout, "Chosen without target labels") {
		t.Errorf("table:\n%s", stdout)
	}
	if n := strings.Count(stdout, "**") / 2; n < len(scorers) {
		t.Errorf("%d bold values for %d scorers:\n%s", n, len(scorers), stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{adaptArgs(src[:1], tgt, "--select", "entropy,held-out"), "--select held-out and held-out-balanced hold a source out"},
		{adaptArgs(src[:1], tgt, "--select", "held-out-balanced"), "--select held-out and held-out-balanced hold a source out"},
		{adaptArgs(src, tgt, "--select", "oracle"), `unknown scorer "oracle"`},
		{adaptArgs(src, tgt, "--select", "snd,snd"), "snd is given twice"},
		{adaptArgs(src, tgt, "--select", "all,snd"), `"all" stands alone`},
		{adaptArgs(src, tgt, "--select-among", "sa"), "--select-among needs --select"},
		{adaptArgs(src, tgt, "--methods", "sa", "--select", "ensv", "--select-among", "sa,tca"), "--select-among: tca is not among the methods run"},
	} {
		if code, _, stderr := runCLI(tc.args...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestAdaptSelectAmong: with --select-among, the other methods run and
// are compared but carry no score; the pooled scorer scores the chosen
// ones as a run of them alone does, and chooses among them.
func TestAdaptSelectAmong(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	among, alone := filepath.Join(dir, "among"), filepath.Join(dir, "alone")
	code, stdout, stderr := runCLI(adaptArgs(src, tgt, "--methods", "source-only,sa,otda-emd", "--select", "ensv,entropy", "--select-among", "source-only,otda-emd", "--out", among)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(adaptArgs(src, tgt, "--methods", "source-only,otda-emd", "--select", "ensv,entropy", "--out", alone)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep, base := readAdaptReport(t, among), readAdaptReport(t, alone)
	if len(rep.Methods) != 3 || !slices.Equal(rep.SelectAmong, []string{"source-only", "otda-emd"}) || base.SelectAmong != nil {
		t.Fatalf("%d methods, among %v and %v", len(rep.Methods), rep.SelectAmong, base.SelectAmong)
	}
	scored := 0
	for _, m := range rep.Methods {
		if m.Method == "sa" {
			if m.Selection != nil || m.TargetAccuracy == nil {
				t.Errorf("sa: selection %+v, accuracy %v", m.Selection, m.TargetAccuracy)
			}
			continue
		}
		for _, b := range base.Methods {
			if b.Method == m.Method {
				scored++
				for j := range m.Selection {
					if *m.Selection[j].Score != *b.Selection[j].Score {
						t.Errorf("%s: %s %v, alone %v", m.Method, m.Selection[j].Scorer, *m.Selection[j].Score, *b.Selection[j].Score)
					}
				}
			}
		}
	}
	if scored != 2 || !slices.Equal(rep.Selected, base.Selected) {
		t.Errorf("choices %+v, alone %+v", rep.Selected, base.Selected)
	}
	if !strings.Contains(stdout, "Chosen without target labels among source-only, otda-emd") {
		t.Errorf("table:\n%s", stdout)
	}
}

// TestAdaptSharedProportions: where every domain keeps all of its first
// class but a third of its second and a ninth of its third, DaDiL draws
// the target's atom batches in the proportions the sources share and
// GMM-DaDiL weighs the target's reconstruction in them; dadil adapt says
// so in notes and reports them, and --balanced-target turns both off.
func TestAdaptSharedProportions(t *testing.T) {
	dir := t.TempDir()
	p := synth.Generate(synth.Default(), 1)
	thin := func(d dataset.Domain) dataset.Domain {
		var rows []int
		seen := [3]int{}
		for i, y := range d.Y {
			if seen[y]%[]int{1, 3, 9}[y] == 0 {
				rows = append(rows, i)
			}
			seen[y]++
		}
		out := dataset.Domain{X: mat.NewDense(len(rows), 2, nil)}
		for j, i := range rows {
			out.X.SetRow(j, d.X.RawRowView(i))
			out.Y = append(out.Y, d.Y[i])
		}
		return out
	}
	args := []string{"adapt", "--methods", "dadil-r,gmm-dadil", "--epochs", "5", "--gmm-epochs", "5", "--out", filepath.Join(dir, "out")}
	for i, s := range p.Sources {
		path := filepath.Join(dir, fmt.Sprintf("s%d.csv", i+1))
		writeCSV(t, path, thin(s), true, nil)
		args = append(args, "--source", path)
	}
	tgt := filepath.Join(dir, "t.csv")
	writeCSV(t, tgt, thin(*p.Test), false, nil)
	args = append(args, "--target", tgt)
	code, _, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, note := range []string{"note: DaDiL: target class proportions shared by the sources", "note: GMM-DaDiL: target class proportions shared by the sources"} {
		if !strings.Contains(stderr, note) {
			t.Errorf("no %q in %q", note, stderr)
		}
	}
	rep := readSharedReport(t, filepath.Join(dir, "out", "report.json"))
	if rep.TC == nil || len(rep.TC.Drawn) != 3 || !(rep.TC.Drawn[0] > rep.TC.Drawn[1] && rep.TC.Drawn[1] > rep.TC.Drawn[2]) {
		t.Errorf("dadil_target_classes %+v, want proportions falling from the first class to the third", rep.TC)
	}
	if g := rep.GMM.Dictionary.TargetClasses; !slices.Equal(g, rep.TC.Drawn) {
		t.Errorf("GMM-DaDiL's TargetClasses %v, want DaDiL's %v", g, rep.TC.Drawn)
	}
	code, _, stderr = runCLI(append(args, "--balanced-target")...)
	if code != 0 {
		t.Fatalf("--balanced-target: exit %d: %s", code, stderr)
	}
	rep = readSharedReport(t, filepath.Join(dir, "out", "report.json"))
	if strings.Contains(stderr, "shared by the sources") || rep.TC != nil || rep.GMM.Dictionary.TargetClasses != nil {
		t.Errorf("--balanced-target: shared proportions used: %q, %+v, %v", stderr, rep.TC, rep.GMM.Dictionary.TargetClasses)
	}
}

// sharedReport is what TestAdaptSharedProportions reads of a report.
type sharedReport struct {
	TC  *dictionary.TargetClasses `json:"dadil_target_classes"`
	GMM modelfile.GMMSettings     `json:"gmm_dadil_settings"`
}

func readSharedReport(t *testing.T, path string) sharedReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep sharedReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestAdaptAutoAtoms: dadil adapt --atoms auto fits DaDiL with the K it
// chose and notes the choice; dadil analyze refuses it.
func TestAdaptAutoAtoms(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	out := filepath.Join(dir, "out")
	code, _, stderr := runCLI(adaptArgs(src, tgt, "--methods", "source-only,dadil-r", "--atoms", "auto", "--epochs", "3", "--plateau-tol", "0", "--out", out)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep := readAdaptReport(t, out)
	notes := strings.Join(rep.Notes, " ")
	if !strings.Contains(notes, "--atoms auto: DaDiL-R's balanced accuracy on the held-out sources is ") {
		t.Fatalf("notes %q lack the choice", notes)
	}
	if rep.DaDiL == nil || (rep.DaDiL.Atoms != len(src) && rep.DaDiL.Atoms != len(src)+1) ||
		!strings.Contains(notes, fmt.Sprintf(": K = %d", rep.DaDiL.Atoms)) {
		t.Fatalf("DaDiL settings %+v, notes %q: want the chosen K", rep.DaDiL, notes)
	}
	if code, _, stderr := runCLI("analyze", "sweep", "--out", filepath.Join(dir, "sweep"), "--atoms", "auto"); code != 2 || !strings.Contains(stderr, "--atoms auto: only dadil fit, dadil adapt and dadil bench suite choose K") {
		t.Fatalf("analyze sweep --atoms auto: exit %d, %s", code, stderr)
	}
}
