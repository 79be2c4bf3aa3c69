package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/dadil/dadil/analyze"
	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/figure"
)

// analyzeFlags are the flags every dadil analyze command shares: the data
// (user files as for dadil fit, or a benchmark), the dictionary's
// hyper-parameters and the output.
type analyzeFlags struct {
	name     string
	fs       *flag.FlagSet
	trainer  classify.Trainer // of --classifier, set by problems
	data     dataFlags
	dict     dictFlags
	out      string
	bench    string
	benchDir string
	features string
	targets  string
	folds    string
	workers  int
	noter    // remarks for the user, also kept in the JSON
}

func newAnalyzeFlags(name string, e *env) *analyzeFlags {
	a := &analyzeFlags{name: name, fs: newFlags("dadil analyze "+name, e), noter: noter{e: e}}
	fs := a.fs
	fs.StringVar(&a.out, "out", "", "output `DIR`: figures (PNG and SVG), "+name+".json and "+name+".md")
	a.data.register(fs)
	a.dict.register(fs)
	fs.StringVar(&a.bench, "bench", "", "analyse a benchmark instead of --source/--target files: `office-caltech10` (its protocol's min-max scaled features, whatever --scale, and λ = 0.001 unless --l2 is given)")
	fs.StringVar(&a.benchDir, "data", "", "benchmark folder `DIR` (with --bench)")
	fs.StringVar(&a.features, "features", "surf", "benchmark features: surf or decaf (with --bench)")
	fs.StringVar(&a.targets, "targets", "W,A,D,C", "benchmark target domains (with --bench)")
	fs.StringVar(&a.folds, "folds", "1", "benchmark test folds (with --bench)")
	fs.IntVar(&a.workers, "workers", 0, "fits run at once (0: one per core); results do not depend on it")
	fs.BoolVar(&a.quiet, "quiet", false, "no progress output")
	return a
}

func (a *analyzeFlags) usage(what string, lines ...string) {
	a.fs.Usage = func() {
		w := a.fs.Output()
		fmt.Fprintf(w, "usage: dadil analyze %s --out DIR (--source PATH ... --target PATH | --bench office-caltech10 --data DIR) [flags]\n\n", a.name)
		fmt.Fprintln(w, what)
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintln(w)
		a.fs.PrintDefaults()
	}
}

// problems parses the flags and builds the problems with their dictionary
// settings.
func (a *analyzeFlags) problems(args []string) ([]*dataset.Problem, dictionary.Settings, error) {
	if err := parse(a.fs, args); err != nil {
		return nil, dictionary.Settings{}, err
	}
	if a.out == "" {
		return nil, dictionary.Settings{}, usageError{errors.New("--out is required")}
	}
	if err := checkOutputDir("--out", a.out, a.outputs()); err != nil {
		return nil, dictionary.Settings{}, err
	}
	if err := a.dict.check(); err != nil {
		return nil, dictionary.Settings{}, err
	}
	if err := checkWorkers(a.workers); err != nil {
		return nil, dictionary.Settings{}, err
	}
	if sources := len(a.data.sources); a.bench != "" || sources > 0 {
		if a.bench != "" {
			sources = 3
		}
		if err := a.dict.checkEarly(sources); err != nil {
			return nil, dictionary.Settings{}, err
		}
	}
	if a.bench == "" {
		if a.benchDir != "" {
			return nil, dictionary.Settings{}, usageError{errors.New("--data goes with --bench; give user files with --source and --target")}
		}
		if err := a.data.check(); err != nil {
			return nil, dictionary.Settings{}, err
		}
		l, err := a.data.load(a.dict.paper, a.note)
		if err != nil {
			return nil, dictionary.Settings{}, err
		}
		if l.Test == nil {
			a.note("the target %s has no labels: accuracies are not reported", a.data.target)
		}
		set, err := a.settings(l.Classes, l.Scaler.Kind)
		return []*dataset.Problem{l.Problem}, set, err
	}
	if len(a.data.sources) > 0 || a.data.target != "" {
		return nil, dictionary.Settings{}, usageError{errors.New("give either --bench or --source/--target, not both")}
	}
	if a.bench != "office-caltech10" {
		return nil, dictionary.Settings{}, usageError{fmt.Errorf("--bench %s: the benchmark analyses run on office-caltech10", clip.Quote(a.bench))}
	}
	if a.benchDir == "" {
		return nil, dictionary.Settings{}, usageError{errors.New("--bench needs --data DIR")}
	}
	var folds []int
	for _, f := range splitList(a.folds) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, dictionary.Settings{}, usageError{fmt.Errorf("--folds: %s is not a number", clip.Quote(f))}
		}
		folds = append(folds, v)
	}
	o, err := bench.LoadOfficeCaltech(a.benchDir, a.features)
	if err != nil {
		return nil, dictionary.Settings{}, err
	}
	var ps []*dataset.Problem
	for _, t := range splitList(a.targets) {
		for _, f := range folds {
			p, err := o.Split(t, f)
			if err != nil {
				return nil, dictionary.Settings{}, usageError{err}
			}
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil, dictionary.Settings{}, usageError{errors.New("no target or fold given")}
	}
	set, err := a.settings(o.Classes.Len(), dataset.ScaleMinMax)
	return ps, set, err
}

// settings returns the dictionary settings of the flags and sets the
// classifier, for features scaled by kind.
func (a *analyzeFlags) settings(classes int, kind dataset.Scaling) (dictionary.Settings, error) {
	set, err := a.dict.settings(a.fs, classes, a.note)
	if err != nil {
		return set, err
	}
	a.trainer, err = a.dict.trainer(kind)
	return set, err
}

// progress returns a progress callback writing to stderr unless quiet.
func (a *analyzeFlags) progress(e *env) func(done, total int, what string) {
	if a.quiet {
		return nil
	}
	start := time.Now()
	bar := newCountBar(e, "dadil analyze "+a.name)
	return func(done, total int, what string) {
		if bar.show(done, total, what) {
			return
		}
		el := time.Since(start)
		eta := time.Duration(float64(el) / float64(done) * float64(total-done))
		fmt.Fprintf(e.stderr, "[%d/%d] %s; %s elapsed, ETA %s\n", done, total, what, el.Round(time.Second), eta.Round(time.Second))
	}
}

// output collects the files of an analysis and writes them atomically.
type output struct {
	files map[string]func(string) error
}

func newOutput() *output { return &output{files: map[string]func(string) error{}} }

// figure adds name.png and name.svg: a grid of plots with cells w×h.
func (o *output) figure(name string, grid [][]*plot.Plot, w, h vg.Length) {
	for _, ext := range []string{".png", ".svg"} {
		o.files[name+ext] = func(p string) error { return figure.SaveGrid(p, grid, w, h) }
	}
}

func (o *output) bytes(name string, b []byte) {
	o.files[name] = func(p string) error { return os.WriteFile(p, b, 0o644) }
}

func (o *output) json(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	o.bytes(name, append(b, '\n'))
	return nil
}

// outputs are the names of the files the analysis writes in --out, which
// it replaces as one set: NAME.md, NAME.json and the figures NAME_*.png
// and NAME_*.svg; the files of other analyses in the folder are kept.
func (a *analyzeFlags) outputs() []string {
	return []string{a.name + ".md", a.name + ".json", a.name + "_*.png", a.name + "_*.svg"}
}

// finish writes the report and every file of the analysis into --out
// (atomically) and prints the report.
func (a *analyzeFlags) finish(e *env, out *output, md *markdown, start time.Time) error {
	out.bytes(a.name+".md", md.Bytes())
	if err := atomicfile.WriteDir(a.out, a.outputs(), out.files); err != nil {
		return err
	}
	fmt.Fprint(e.stdout, md.String())
	if !a.quiet {
		fmt.Fprintf(e.stderr, "wrote %s (%.0f s)\n", a.out, time.Since(start).Seconds())
	}
	return nil
}

// markdown builds a Markdown document.
type markdown struct{ bytes.Buffer }

func (m *markdown) h(level int, format string, a ...any) {
	fmt.Fprintf(m, "%s %s\n\n", strings.Repeat("#", level), fmt.Sprintf(format, a...))
}

func (m *markdown) p(format string, a ...any) { fmt.Fprintf(m, format+"\n\n", a...) }

func (m *markdown) table(head []string, rows [][]string) {
	m.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		m.WriteString("---|")
	}
	m.WriteString("\n")
	for _, r := range rows {
		m.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	m.WriteString("\n")
}

func (m *markdown) image(alt, file string) { fmt.Fprintf(m, "![%s](%s)\n\n", alt, file) }

// pct formats a score in percent, or "–" when undefined.
func pct(s analyze.Score) string {
	f := float64(s)
	if f != f {
		return "–"
	}
	return fmt.Sprintf("%.2f", f)
}

// parseInts parses a comma-separated list of positive integers for flag.
func parseInts(flag, list string) ([]int, error) {
	var out []int
	for _, f := range splitList(list) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, usageError{fmt.Errorf("--%s: %s is not a positive integer", flag, clip.Quote(f))}
		}
		out = append(out, v)
	}
	return out, nil
}

// settingsReport is the part of the JSON that says how the analysis ran.
type settingsReport struct {
	Source   string              `json:"source"` // "files" or the benchmark
	Problems []string            `json:"problems"`
	Settings dictionary.Settings `json:"settings"`
	Notes    []string            `json:"notes,omitempty"`
	Seconds  float64             `json:"seconds"`
}

func (a *analyzeFlags) report(ps []*dataset.Problem, set dictionary.Settings, start time.Time) settingsReport {
	r := settingsReport{Source: "files", Settings: set, Notes: a.notes, Seconds: time.Since(start).Seconds()}
	if a.bench != "" {
		r.Source = a.bench + " " + a.features
	}
	for _, p := range ps {
		r.Problems = append(r.Problems, p.Name)
	}
	return r
}
