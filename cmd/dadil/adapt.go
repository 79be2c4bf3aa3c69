package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/par"
)

// adaptReport is DIR/report.json of dadil adapt.
type adaptReport struct {
	Sources  []string `json:"sources"`
	Target   string   `json:"target"`
	Classes  []int    `json:"classes"`
	Features int      `json:"features"`
	Scaling  string   `json:"scaling"`
	Seed     uint64   `json:"seed"`
	// MaxRows caps the rows of every domain for the transport-based
	// methods (adapt.DenseTransport); 0: no cap.
	MaxRows int `json:"max_rows"`
	// DaDiL holds the settings of dadil-r and dadil-e when they ran, with
	// the defaults resolved (K, n, n_b, ...).
	DaDiL *dictionary.Settings `json:"dadil_settings,omitempty"`
	Notes []string             `json:"notes,omitempty"`
	// UnknownTargetLabels lists target label values absent from the
	// sources; such rows can never be predicted right.
	UnknownTargetLabels []int          `json:"unknown_target_labels,omitempty"`
	Methods             []methodReport `json:"methods"`
}

// methodReport is one method's entry in adaptReport.
type methodReport struct {
	Method string `json:"method"`
	// Seconds is the fit (shared by the -R and -E siblings of a
	// dictionary method) plus the method's predictions of the target.
	Seconds float64 `json:"seconds"`
	// TargetAccuracy (percent) is there when the target file carries
	// labels; they are never used to fit.
	TargetAccuracy *float64 `json:"target_accuracy,omitempty"`
	// HeldOutSources (percent per source) and HeldOutMean are there with
	// --validate.
	HeldOutSources    []heldOutAccuracy `json:"held_out_sources,omitempty"`
	HeldOutMean       *float64          `json:"held_out_mean,omitempty"`
	ValidationSeconds float64           `json:"validation_seconds,omitempty"`
}

// heldOutAccuracy is a method's accuracy (percent) on one source held out
// as the target of the others.
type heldOutAccuracy struct {
	Source   string  `json:"source"`
	Accuracy float64 `json:"accuracy"`
}

// adaptFamilies groups the requested methods (names of adapt.New) into
// fits, in the order of adapt.Names: one method, or a dictionary method and
// its sibling (adapt.Predictors), which share one fit.
func adaptFamilies(want map[string]bool) [][]string {
	var fams [][]string
	seen := map[string]bool{}
	for _, name := range adapt.Names() {
		if !want[name] || seen[name] {
			continue
		}
		seen[name] = true
		f := []string{name}
		m, _ := adapt.New(name, 0)
		if ps := adapt.Predictors(m); len(ps) > 1 && want[ps[1].Name] {
			f = append(f, ps[1].Name)
			seen[ps[1].Name] = true
		}
		fams = append(fams, f)
	}
	return fams
}

// adaptOutcome is what one family's job produced.
type adaptOutcome struct {
	pred    [][]int // per member, class indices of the target rows
	reports []methodReport
	dadil   *dictionary.Settings // the fitted dictionary's settings, for DaDiL
	err     error
}

func runAdapt(args []string, e *env) error {
	fs := newFlags("dadil adapt", e)
	var data dataFlags
	data.register(fs)
	methods := fs.String("methods", "all", "comma-separated `LIST` of methods ("+strings.Join(adapt.Names(), ", ")+"), or all")
	out := fs.String("out", "", "also write predictions.csv and report.json to `DIR`")
	validate := fs.Bool("validate", false, "also score every method without target labels: each source in turn is held out as the target of the others (one more fit per source and method)")
	maxRows := fs.Int("max-rows", 2000, "fit the transport-based methods (otda-sinkhorn, jcpot, wb, wbt-reg, wjdot, wbr-r, wbr-e) on at most `N` rows of every domain, drawn at random; 0: all rows")
	workers := fs.Int("workers", 0, "methods fitted at once (0: one per core); results do not depend on it")
	quiet := fs.Bool("quiet", false, "no progress output")
	var df dictFlags
	df.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil adapt --source PATH [--source PATH ...] --target PATH [--methods LIST] [--validate] [--out DIR] [flags]")
		fmt.Fprintln(fs.Output(), "\nAdapts to the target with every requested method and compares them in a Markdown table:")
		fmt.Fprintln(fs.Output(), "accuracy on the target when its file carries labels (never used to fit), the held-out-source")
		fmt.Fprintln(fs.Output(), "validation scores with --validate (no target labels), seconds per method. Every method has the")
		fmt.Fprintln(fs.Output(), "settings of adapt.New, seeded by --seed; the DaDiL flags (--atoms, --paper, ...) set dadil-r")
		fmt.Fprintln(fs.Output(), "and dadil-e, as in dadil fit.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := data.check(); err != nil {
		return err
	}
	if err := df.check(); err != nil {
		return err
	}
	if err := checkWorkers(*workers); err != nil {
		return err
	}
	want, err := requestedMethods(*methods)
	if err != nil {
		return usageError{err}
	}
	if *out != "" {
		if err := checkOutputDir("--out", *out); err != nil {
			return err
		}
	}
	if *maxRows < 0 {
		return usageError{fmt.Errorf("--max-rows %d: want a positive number of rows, or 0 for all", *maxRows)}
	}
	if err := data.checkValidate(*validate); err != nil {
		return err
	}
	nt := &noter{e: e, quiet: *quiet}
	note := nt.note
	ld, err := data.load(note)
	if err != nil {
		return err
	}
	classes := ld.classes.Len()
	set, err := df.settings(fs, classes, note)
	if err != nil {
		return err
	}
	sources := ld.adaptSources()
	build := func(name string) func() adapt.Method {
		return func() adapt.Method {
			m, _ := adapt.New(name, df.seed)
			if d, ok := m.(*adapt.DaDiL); ok {
				s := set
				d.Settings = &s
			}
			if *maxRows > 0 && adapt.DenseTransport(name) {
				m = &adapt.Subsampled{Method: m, MaxRows: *maxRows, Seed: df.seed}
			}
			return m
		}
	}
	if *maxRows > 0 {
		var capped []string
		for _, n := range adapt.Names() {
			if want[n] && adapt.DenseTransport(n) {
				capped = append(capped, n)
			}
		}
		largest := 0
		for _, d := range ld.domains {
			largest = max(largest, d.X.RawMatrix().Rows)
		}
		if len(capped) > 0 && largest > *maxRows {
			note("%s fit on at most %d rows of every domain, drawn at random (--max-rows; the largest domain has %d; 0 uses every row)", strings.Join(capped, ", "), *maxRows, largest)
		}
	}
	rep := &adaptReport{
		Sources: ld.sourcePaths, Target: data.target, Classes: ld.classes.Values,
		Scaling: ld.scaling.String(), Seed: df.seed, MaxRows: *maxRows, UnknownTargetLabels: ld.unknown,
	}
	_, rep.Features = ld.target.X.Dims()

	fams := adaptFamilies(want)
	outs := make([]adaptOutcome, len(fams))
	start := time.Now()
	done := 0
	progress := benchProgress(e)
	// The dictionary methods, last in the table and the slowest, start
	// first.
	job := func(i int) int { return len(fams) - 1 - i }
	par.ForEach(len(fams), *workers, func(i int) {
		i = job(i)
		outs[i] = adaptJob(fams[i], build(fams[i][0]), sources, ld, *validate)
	}, func(i int) {
		done++
		if !*quiet {
			progress(done, len(fams), strings.Join(fams[job(i)], "/"), time.Since(start))
		}
	})
	var preds [][]int
	var names []string
	for i, o := range outs {
		if o.err != nil {
			return fmt.Errorf("%s: %w", strings.Join(fams[i], "/"), o.err)
		}
		preds = append(preds, o.pred...)
		names = append(names, fams[i]...)
		if o.dadil != nil {
			rep.DaDiL = o.dadil
		}
		rep.Methods = append(rep.Methods, o.reports...)
	}
	rep.Notes = nt.notes
	fmt.Fprint(e.stdout, adaptTable(rep))
	if *out == "" {
		return nil
	}
	var csv bytes.Buffer
	csv.WriteString("row," + strings.Join(names, ",") + "\n")
	for r := range preds[0] {
		fmt.Fprintf(&csv, "%d", r)
		for _, p := range preds {
			fmt.Fprintf(&csv, ",%d", ld.classes.Decode(p[r]))
		}
		csv.WriteByte('\n')
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	err = writeDirAtomic(*out, map[string]func(string) error{
		"predictions.csv": func(p string) error { return os.WriteFile(p, csv.Bytes(), 0o644) },
		"report.json":     func(p string) error { return os.WriteFile(p, append(js, '\n'), 0o644) },
	})
	if err == nil && !*quiet {
		fmt.Fprintf(e.stderr, "wrote %s\n", *out)
	}
	return err
}

// requestedMethods resolves --methods among adapt.Names.
func requestedMethods(list string) (map[string]bool, error) {
	names := splitList(list)
	want := map[string]bool{}
	if len(names) == 1 && names[0] == "all" {
		names = adapt.Names()
	}
	if len(names) == 0 {
		return nil, errors.New("--methods is empty")
	}
	for _, n := range names {
		if n == "all" {
			return nil, errors.New("--methods: \"all\" stands alone (it means every method)")
		}
		if !slices.Contains(adapt.Names(), n) {
			return nil, fmt.Errorf("--methods: unknown method %q (known: %s, all)", n, strings.Join(adapt.Names(), ", "))
		}
		want[n] = true
	}
	return want, nil
}

// adaptJob fits one family (a method, or a method and its sibling) on the
// sources and the target, predicts the target, scores it when its labels
// are known, and validates on the sources when asked.
func adaptJob(members []string, build func() adapt.Method, sources []adapt.Domain, ld *userData, validate bool) adaptOutcome {
	var o adaptOutcome
	t0 := time.Now()
	m := build()
	if o.err = m.Fit(sources, ld.target.X, ld.classes.Len()); o.err != nil {
		return o
	}
	fitSecs := time.Since(t0).Seconds()
	if d, ok := m.(*adapt.DaDiL); ok {
		o.dadil = &d.Dict.Settings
	}
	ps := adapt.Predictors(m)
	for i := range members {
		t1 := time.Now()
		p, err := ps[i].Predict(ld.target.X)
		if err != nil {
			o.err = err
			return o
		}
		r := methodReport{Method: members[i], Seconds: fitSecs + time.Since(t1).Seconds()}
		if ld.truth != nil {
			acc, err := classify.Accuracy(p, ld.truth)
			if err != nil {
				o.err = err
				return o
			}
			acc *= 100
			r.TargetAccuracy = &acc
		}
		o.pred = append(o.pred, p)
		o.reports = append(o.reports, r)
	}
	if !validate {
		return o
	}
	t0 = time.Now()
	scores, err := adapt.ValidatePredictors(sources, ld.classes.Len(), build, nil)
	if err != nil {
		o.err = err
		return o
	}
	secs := time.Since(t0).Seconds()
	for i := range members {
		r := &o.reports[i]
		h := scores[i].HeldOut
		for _, s := range h {
			r.HeldOutSources = append(r.HeldOutSources, heldOutAccuracy{Source: s.Source, Accuracy: 100 * s.Accuracy})
		}
		mean := 100 * adapt.MeanAccuracy(h)
		r.HeldOutMean = &mean
		r.ValidationSeconds = secs
	}
	return o
}

// shortNames names files for a table's columns: by base name without
// extension, or, for files whose short names would collide (a/s.csv and
// b/s.csv), by their paths as given.
func shortNames(paths []string) []string {
	out := make([]string, len(paths))
	count := map[string]int{}
	for i, p := range paths {
		out[i] = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		count[out[i]]++
	}
	for i, p := range paths {
		if count[out[i]] > 1 {
			out[i] = p
		}
	}
	return out
}

// adaptTable formats the report as a Markdown table: one row per method,
// the target accuracy when known, the held-out-source scores when
// validated (one column per source, named by its file), and the seconds.
func adaptTable(rep *adaptReport) string {
	var b strings.Builder
	ms := rep.Methods
	hasTarget := len(ms) > 0 && ms[0].TargetAccuracy != nil
	hasHeld := len(ms) > 0 && ms[0].HeldOutMean != nil
	b.WriteString("| method |")
	if hasTarget {
		b.WriteString(" target accuracy (%) |")
	}
	if hasHeld {
		b.WriteString(" held-out sources, mean (%) |")
		for _, name := range shortNames(rep.Sources) {
			b.WriteString(" " + name + " held out |")
		}
	}
	b.WriteString(" seconds |\n|---|")
	cols := 1
	if hasTarget {
		cols++
	}
	if hasHeld {
		cols += 1 + len(rep.Sources)
	}
	b.WriteString(strings.Repeat("---:|", cols) + "\n")
	for _, m := range ms {
		fmt.Fprintf(&b, "| %s |", m.Method)
		if hasTarget {
			fmt.Fprintf(&b, " %.2f |", *m.TargetAccuracy)
		}
		if hasHeld {
			fmt.Fprintf(&b, " %.2f |", *m.HeldOutMean)
			for _, h := range m.HeldOutSources {
				fmt.Fprintf(&b, " %.2f |", h.Accuracy)
			}
		}
		fmt.Fprintf(&b, " %.1f |\n", m.Seconds)
	}
	return b.String()
}
