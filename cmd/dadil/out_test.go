//go:build linux

package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/proctest"
)

func TestMain(m *testing.M) {
	proctest.Main(map[string]func([]string) int{"dadil": helperDadil, "dadil-crash": helperCrash})
	os.Exit(m.Run())
}

// helperDadil runs the command line args[1:], killing itself with SIGKILL
// after the output folder's step args[0] ("" for none).
func helperDadil(args []string) int {
	if args[0] != "" {
		atomicfile.StepHook = func(step string) {
			if step == args[0] {
				proctest.KillSelf()
			}
		}
	}
	return run(args[1:], &env{stdout: os.Stdout, stderr: os.Stderr})
}

// fitArgs returns the arguments of a short dadil fit into out.
func fitArgs(src []string, tgt, out string, extra ...string) []string {
	args := []string{"fit", "--out", out, "--target", tgt, "--epochs", "4", "--quiet"}
	for _, s := range src {
		args = append(args, "--source", s)
	}
	return append(args, extra...)
}

// hiddenEntries returns the names in dir that start with a dot: the
// staging leftovers of runs.
func hiddenEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var h []string
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".") {
			h = append(h, e.Name())
		}
	}
	return h
}

// TestOutChecksFirst: an --out that cannot be written whole is refused
// before any work, as the command line's fault: the data file given does
// not exist, and the error is the --out one (the data were not read).
func TestOutChecksFirst(t *testing.T) {
	dir := t.TempDir()
	nope := filepath.Join(dir, "nope.csv")
	fit := []string{"fit", "--source", nope, "--target", nope}
	adapt := []string{"adapt", "--source", nope, "--target", nope}
	hull := []string{"analyze", "hull", "--source", nope, "--target", nope}
	cases := []struct {
		name  string
		cmd   []string
		setup func(out string)
		want  string
	}{
		{"report.json a folder", fit, func(out string) { os.MkdirAll(filepath.Join(out, "report.json"), 0o755) },
			"report.json is a folder, not a regular file: dadil writes this file itself"},
		{"predictions.csv a named pipe", fit, func(out string) { syscall.Mkfifo(filepath.Join(out, "predictions.csv"), 0o644) },
			"predictions.csv is a named pipe, not a regular file"},
		{"model.dadil a link", fit, func(out string) { os.Symlink(filepath.Join(dir, "elsewhere.dadil"), filepath.Join(out, "model.dadil")) },
			"model.dadil is a symbolic link: dadil writes this file itself, replacing the folder's files as one set, and does not write through links inside it"},
		{"a folder of the user's", fit, func(out string) { os.MkdirAll(filepath.Join(out, "plots"), 0o755) },
			"plots is a folder: dadil replaces its output folder as a whole and keeps only the files and symbolic links of others in it"},
		{"adapt: selected.csv a folder", adapt, func(out string) { os.MkdirAll(filepath.Join(out, "selected.csv"), 0o755) },
			"selected.csv is a folder, not a regular file"},
		{"analyze: a figure a named pipe", hull, func(out string) { syscall.Mkfifo(filepath.Join(out, "hull_draws.svg"), 0o644) },
			"hull_draws.svg is a named pipe, not a regular file"},
		{"demo: a figure a folder", []string{"demo"}, func(out string) { os.MkdirAll(filepath.Join(out, "loss.png"), 0o755) },
			"loss.png is a folder, not a regular file"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprint("out", i))
			os.Mkdir(out, 0o755)
			tc.setup(out)
			code, _, stderr := runCLI(append(slices.Clone(tc.cmd), "--out", out)...)
			if want := "--out " + out + ": " + out + "/"; code != 2 || !strings.Contains(stderr, want) || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q, %q", code, stderr, want, tc.want)
			}
		})
	}
}

// TestOutReadOnlyParent: as an unprivileged user (a helper process runs
// as nobody when the test runs as root), an --out whose parent is
// read-only is refused before the data are read.
func TestOutReadOnlyParent(t *testing.T) {
	base := proctest.OpenDir(t)
	parent := filepath.Join(base, "ro")
	out := filepath.Join(parent, "out")
	if err := os.MkdirAll(out, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(out, 0o777)
	os.Chmod(parent, 0o555)
	nope := filepath.Join(base, "nope.csv")
	cmd := proctest.Command(t, "dadil", "", "fit", "--source", nope, "--target", nope, "--out", out)
	proctest.Unprivileged(t, cmd)
	stderr, err := cmd.CombinedOutput()
	want := "--out " + out + ": " + out + ": cannot create the new folder beside it, in " + parent + ": permission denied"
	if err == nil || !strings.Contains(string(stderr), want) {
		t.Errorf("%v, %s; want %q", err, stderr, want)
	}
}

// TestFitOutReplacesTheSet: a second fit into a folder replaces the
// first's outputs as a set: files it does not write this time (the
// reconstruction) disappear, replaced files keep their permissions, the
// user's files and links stay, a link that is --out is followed and kept,
// and nothing is left beside the folder.
func TestFitOutReplacesTheSet(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, false)
	parent := filepath.Join(dir, "runs")
	real := filepath.Join(parent, "real")
	if code, _, stderr := runCLI(fitArgs(src, tgt, real, "--export-reconstruction")...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"model.dadil", "report.json"} {
		os.Chmod(filepath.Join(real, f), 0o600)
	}
	os.WriteFile(filepath.Join(real, "notes.txt"), []byte("mine"), 0o644)
	os.Symlink("notes.txt", filepath.Join(real, "notes.link"))
	link := filepath.Join(dir, "out")
	os.Symlink(real, link)
	if code, _, stderr := runCLI(fitArgs(src, tgt, link, "--seed", "2")...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	es, _ := os.ReadDir(real)
	var names []string
	for _, e := range es {
		fi, _ := e.Info()
		names = append(names, fmt.Sprintf("%s %v", e.Name(), fi.Mode()))
	}
	want := []string{"model.dadil -rw-------", "notes.link Lrwxrwxrwx", "notes.txt -rw-r--r--", "predictions.csv -rw-r--r--", "report.json -rw-------"}
	if !slices.Equal(names, want) {
		t.Errorf("the folder holds %q, want %q", names, want)
	}
	if rep := readReport(t, real); rep.Settings.Seed != 2 {
		t.Errorf("report of seed %d", rep.Settings.Seed)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("--out, a link, was replaced: %v", err)
	}
	if h := hiddenEntries(t, parent); len(h) > 0 {
		t.Errorf("left beside the folder: %v", h)
	}
}

// TestFitKilled kills dadil fit (SIGKILL, in a helper process) just before
// and just after it publishes its folder over an earlier run's: the
// folder holds one run's three files, never a mix, and the next run into
// it cleans what the killed one left.
func TestFitKilled(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, false)
	ref := map[string]map[string][]byte{} // seed → file → bytes
	for _, seed := range []string{"1", "2"} {
		out := filepath.Join(dir, "ref"+seed)
		if code, _, stderr := runCLI(fitArgs(src, tgt, out, "--seed", seed)...); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		ref[seed] = fitFiles(t, out)
	}
	for _, tc := range []struct{ step, want string }{{atomicfile.StepLinked, "1"}, {atomicfile.StepPublished, "2"}} {
		t.Run(tc.step, func(t *testing.T) {
			parent := filepath.Join(dir, tc.step)
			out := filepath.Join(parent, "out")
			if code, _, stderr := runCLI(fitArgs(src, tgt, out, "--seed", "1")...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			err := proctest.Command(t, "dadil", append([]string{tc.step}, fitArgs(src, tgt, out, "--seed", "2")...)...).Run()
			if !proctest.Killed(err) {
				t.Fatalf("not killed: %v", err)
			}
			got := fitFiles(t, out)
			if len(got) < 5 {
				t.Fatalf("model.dadil holds no arrays")
			}
			for f, b := range got {
				if !bytes.Equal(b, ref[tc.want][f]) {
					t.Errorf("%s is not that of seed %s", f, tc.want)
				}
			}
			if len(hiddenEntries(t, parent)) == 0 {
				t.Errorf("the killed run left nothing beside the folder")
			}
			if code, _, stderr := runCLI(fitArgs(src, tgt, out, "--seed", "2")...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if h := hiddenEntries(t, parent); len(h) > 0 {
				t.Errorf("left after the next run: %v", h)
			}
		})
	}
}

// fitFiles returns the arrays of model.dadil (its manifest holds the time
// it was made), predictions.csv and the settings of report.json in out.
func fitFiles(t *testing.T, out string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	b, err := os.ReadFile(filepath.Join(out, "predictions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	files["predictions.csv"] = b
	files["report settings"] = []byte(fmt.Sprint(readReport(t, out).Settings))
	z, err := zip.OpenReader(filepath.Join(out, "model.dadil"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name == "manifest.json" {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		files["model.dadil/"+f.Name] = b
	}
	return files
}
