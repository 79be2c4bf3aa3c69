package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/par"
	"github.com/dadil/dadil/modelfile"
	"github.com/dadil/dadil/selection"
	"gonum.org/v1/gonum/mat"
)

// adaptReport is DIR/report.json of dadil adapt.
type adaptReport struct {
	reportHeader
	Seed uint64 `json:"seed"`
	// MaxRows caps the rows of every domain for the transport-based
	// methods (adapt.DenseTransport); 0: no cap.
	MaxRows int `json:"max_rows"`
	// DaDiL holds the settings of dadil-r and dadil-e when they ran, with
	// the defaults resolved (K, n, n_b, ...).
	DaDiL *dictionary.Settings `json:"dadil_settings,omitempty"`
	// DaDiLTargetClasses gives the class proportions DaDiL drew the
	// target's atom batches in, absent when class-balanced without
	// --estimate-shift (as dadil fit's target_classes).
	DaDiLTargetClasses *dictionary.TargetClasses `json:"dadil_target_classes,omitempty"`
	// GMM holds the settings of gmm-dadil and gmm-dadil-e when they ran.
	GMM   *modelfile.GMMSettings `json:"gmm_dadil_settings,omitempty"`
	Notes []string               `json:"notes,omitempty"`
	// UnknownTargetLabels lists target label values absent from the
	// sources; such rows can never be predicted right.
	UnknownTargetLabels []int          `json:"unknown_target_labels,omitempty"`
	Methods             []methodReport `json:"methods"`
	// Selected names, with --select, the method each scorer chooses (its
	// highest score), in the order of the scorers; Method is empty when
	// the scorer failed for every method.
	Selected []selectedMethod `json:"selected,omitempty"`
	// SelectAmong lists, with --select-among, the methods the scorers
	// scored and chose among; the others have no selection.
	SelectAmong []string `json:"select_among,omitempty"`
}

// selectedMethod is a scorer's choice.
type selectedMethod struct {
	Scorer string `json:"scorer"`
	Method string `json:"method,omitempty"`
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
	// HeldOutSources (percent per source), HeldOutMean and
	// HeldOutBalancedMean (their accuracies' and balanced accuracies'
	// means) are there with --validate.
	HeldOutSources      []heldOutAccuracy `json:"held_out_sources,omitempty"`
	HeldOutMean         *float64          `json:"held_out_mean,omitempty"`
	HeldOutBalancedMean *float64          `json:"held_out_balanced_mean,omitempty"`
	ValidationSeconds   float64           `json:"validation_seconds,omitempty"`
	// Selection holds, with --select, every scorer's score of the method
	// (higher is better), in the order of the scorers.
	Selection []selection.Value `json:"selection,omitempty"`
}

// heldOutAccuracy is a method's accuracy and balanced accuracy (percent)
// on one source held out as the target of the others.
type heldOutAccuracy struct {
	Source   string  `json:"source"`
	Accuracy float64 `json:"accuracy"`
	Balanced float64 `json:"balanced_accuracy"`
}

// adaptOutcome is what one fit's job produced: the predictions and
// reports of its members (a method, or a dictionary method and its
// sibling, adapt.Group).
type adaptOutcome struct {
	pred    [][]int      // per member, class indices of the target rows
	proba   []*mat.Dense // per member, for the pooled scorers
	reports []methodReport
	dadil   *dictionary.Settings      // the fitted dictionary's settings, for DaDiL
	classes *dictionary.TargetClasses // and the target's batch proportions (Model.TargetClasses)
	gmm     *modelfile.GMMSettings    // and for GMM-DaDiL
	err     error
}

// adaptCommand holds the flags of dadil adapt.
type adaptCommand struct {
	fs                   *flag.FlagSet
	data                 dataFlags
	dict                 dictFlags
	gmm                  gmmFlags
	methods, out, choose string
	among                string
	validate, quiet      bool
	maxRows              int
	workers              int
	want                 []string // the requested methods, in the order of adapt.Names
	scorers              []selection.Scorer
	scored               selection.Among // --select-among; nil: every method
	trainer              classify.Trainer
}

// parseAdapt parses and checks the flags of dadil adapt, before any work.
func parseAdapt(args []string, e *env) (*adaptCommand, error) {
	c := &adaptCommand{fs: newFlags("dadil adapt", e)}
	fs := c.fs
	c.data.register(fs)
	fs.StringVar(&c.methods, "methods", "all", "comma-separated `LIST` of methods ("+strings.Join(adapt.Names(), ", ")+"), or all")
	fs.StringVar(&c.out, "out", "", "also write predictions.csv and report.json to `DIR`")
	fs.BoolVar(&c.validate, "validate", false, "also score every method without target labels: each source in turn is held out as the target of the others (one more fit per source and method)")
	fs.StringVar(&c.choose, "select", "", selectUsage+"; --out also writes selected.csv, the predictions of the method the first scorer chooses")
	fs.StringVar(&c.among, "select-among", "", "with --select, score and choose among these methods only (comma-separated `LIST`, run with the others); the table still compares them all")
	fs.IntVar(&c.maxRows, "max-rows", 2000, "fit the transport-based methods (otda-sinkhorn, jcpot, wb, wbt-reg, wjdot, wbr-r, wbr-e) on at most `N` rows of every domain, drawn at random; 0: all rows")
	fs.IntVar(&c.workers, "workers", 0, "methods fitted at once (0: one per core); results do not depend on it")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress output")
	c.dict.register(fs)
	c.gmm.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil adapt --source PATH [--source PATH ...] --target PATH [--methods LIST] [--validate] [--select LIST] [--out DIR] [flags]")
		fmt.Fprintln(fs.Output(), "\nAdapts to the target with every requested method and compares them in a Markdown table:")
		fmt.Fprintln(fs.Output(), "accuracy on the target when its file carries labels (never used to fit), the held-out-source")
		fmt.Fprintln(fs.Output(), "validation scores with --validate and the label-free scores of --select, the method each scorer")
		fmt.Fprintln(fs.Output(), "chooses in bold (no target labels), seconds per method. Every method has the")
		fmt.Fprintln(fs.Output(), "settings of adapt.New, seeded by --seed; the DaDiL flags (--atoms, --paper, ...) set dadil-r")
		fmt.Fprintln(fs.Output(), "and dadil-e, as in dadil fit, and the --gmm-… flags gmm-dadil and gmm-dadil-e.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	return c, c.check()
}

// check reports malformed flags.
func (c *adaptCommand) check() error {
	if err := c.data.check(); err != nil {
		return err
	}
	if err := c.dict.allowAutoAtoms(len(c.data.sources)); err != nil {
		return err
	}
	if err := c.dict.check(); err != nil {
		return err
	}
	if err := c.gmm.check(); err != nil {
		return err
	}
	if err := checkWorkers(c.workers); err != nil {
		return err
	}
	var err error
	if c.want, err = requestedMethods(c.methods); err != nil {
		return usageError{err}
	}
	if c.out != "" {
		if err := checkOutputDir("--out", c.out, adaptOutputs); err != nil {
			return err
		}
	}
	if c.maxRows < 0 {
		return usageError{fmt.Errorf("--max-rows %d: want a positive number of rows, or 0 for all", c.maxRows)}
	}
	if c.scorers, err = requestedScorers(c.choose, c.dict.seed); err != nil {
		return usageError{err}
	}
	if c.scored, err = parseAmong(c.among, c.scorers, c.want); err != nil {
		return err
	}
	if err := c.data.checkValidate(c.validate); err != nil {
		return err
	}
	if holdsOut(c.scorers) && len(c.data.sources) < 2 {
		return usageError{errors.New("--select held-out and held-out-balanced hold a source out, so they need at least 2 --source")}
	}
	if slices.Contains(c.want, "dadil-r") || slices.Contains(c.want, "dadil-e") {
		return c.dict.checkEarly(len(c.data.sources))
	}
	return nil
}

// checkMemory refuses, once the problem is read, more atoms than labeled
// rows and methods whose fits would exceed the memory limit; note
// receives the dictionary's scale warning.
func (c *adaptCommand) checkMemory(p *dataset.Problem, set dictionary.Settings, note func(string, ...any)) error {
	var heads []string
	for _, g := range adapt.Group(c.want) {
		heads = append(heads, g[0])
	}
	if slices.Contains(heads, "dadil-r") || slices.Contains(heads, "dadil-e") {
		if err := c.dict.checkFit(p, []dictionary.Settings{set}, 1, 0, note); err != nil {
			return err
		}
	}
	cfg := &adapt.Config{Seed: c.dict.seed, Dictionary: &set, MaxRows: c.maxRows}
	return checkMethodsMemory(c.fs, heads, cfg, p, c.workers, memoryLimit(c.dict.maxBytes))
}

func runAdapt(args []string, e *env) error {
	c, err := parseAdapt(args, e)
	if err != nil {
		return err
	}
	nt := &noter{e: e, quiet: c.quiet}
	ld, err := c.data.load(c.dict.paper, nt.note)
	if err != nil {
		return err
	}
	set, err := c.dict.settings(c.fs, ld.Classes, nt.note)
	if err != nil {
		return err
	}
	c.noteMaxRows(ld.Problem, nt.note)
	if err := c.checkMemory(ld.Problem, c.dict.worstAtoms(set), nt.note); err != nil {
		return err
	}
	defer useMemoryLimit(memoryLimit(c.dict.maxBytes))()
	if c.trainer, err = c.dict.trainer(ld.Scaler.Kind); err != nil {
		return err
	}
	if slices.Contains(c.want, "dadil-r") || slices.Contains(c.want, "dadil-e") {
		if err := c.dict.chooseAtoms(ld.Problem, &set, c.trainer, nt.note); err != nil {
			return err
		}
	}
	rep := &adaptReport{
		reportHeader: c.data.header(ld, c.trainer.Name()),
		Seed:         c.dict.seed, MaxRows: c.maxRows, UnknownTargetLabels: ld.Unknown,
	}
	fits := adapt.Group(c.want)
	outs := c.run(e, fits, ld.Problem, set)
	var preds [][]int
	var names []string
	var probas []*mat.Dense // per method, for the pooled scorers
	for i, o := range outs {
		if o.err != nil {
			return fmt.Errorf("%s: %w", strings.Join(fits[i], "/"), o.err)
		}
		preds = append(preds, o.pred...)
		probas = append(probas, o.proba...)
		names = append(names, fits[i]...)
		if o.dadil != nil {
			rep.DaDiL = o.dadil
		}
		if o.classes != nil {
			rep.DaDiLTargetClasses = o.classes
			nt.note("DaDiL: %s", targetClassesLine(o.classes))
		}
		if o.gmm != nil {
			rep.GMM = o.gmm
			if tc := o.gmm.Dictionary.TargetClasses; tc != nil {
				nt.note("GMM-DaDiL: %s", gmmTargetClassesLine(tc))
			}
		}
		rep.Methods = append(rep.Methods, o.reports...)
	}
	poolAdapt(rep.Methods, probas, c.scorers)
	rep.Selected, rep.SelectAmong = choose(rep.Methods, c.scorers, nt.note), c.scored
	rep.Notes = nt.notes
	fmt.Fprint(e.stdout, adaptTable(rep))
	if c.out == "" {
		return nil
	}
	err = writeAdapt(c.out, rep, names, preds, ld.Labels)
	if err == nil && !c.quiet {
		fmt.Fprintf(e.stderr, "wrote %s\n", c.out)
	}
	return err
}

// builder returns the constructor of the method called name: adapt.New
// seeded by --seed, DaDiL with the dictionary settings set, and the
// transport-based methods capped at --max-rows rows per domain.
func (c *adaptCommand) builder(name string, set dictionary.Settings) func() adapt.Method {
	cfg := &adapt.Config{Seed: c.dict.seed, Dictionary: &set, MaxRows: c.maxRows, Classifier: c.trainer,
		GMM: c.gmm.template(0, gmm.DefaultDictionaryPlateauTol)}
	return cfg.Builder(name)
}

// noteMaxRows says which methods --max-rows caps, when a domain is larger.
func (c *adaptCommand) noteMaxRows(p *dataset.Problem, note func(string, ...any)) {
	if c.maxRows == 0 {
		return
	}
	var capped []string
	for _, n := range c.want {
		if adapt.DenseTransport(n) {
			capped = append(capped, n)
		}
	}
	largest := 0
	for _, d := range p.Domains() {
		largest = max(largest, d.Rows())
	}
	if len(capped) > 0 && largest > c.maxRows {
		note("%s fit on at most %d rows of every domain, drawn at random (--max-rows; the largest domain has %d; 0 uses every row)", strings.Join(capped, ", "), c.maxRows, largest)
	}
}

// run fits every group of methods, in parallel; the dictionary methods,
// last in the table and the slowest, start first.
func (c *adaptCommand) run(e *env, fits [][]string, p *dataset.Problem, set dictionary.Settings) []adaptOutcome {
	outs := make([]adaptOutcome, len(fits))
	start := time.Now()
	done := 0
	progress := benchProgress(e)
	job := func(i int) int { return len(fits) - 1 - i }
	par.ForEach(len(fits), c.workers, func(i int) {
		i = job(i)
		outs[i] = adaptJob(fits[i], c.builder(fits[i][0], set), p, c.validate, c.scored.Scorers(c.scorers, fits[i]))
		c.unscore(&outs[i])
	}, func(i int) {
		done++
		if !c.quiet {
			progress(done, len(fits), strings.Join(fits[job(i)], "/"), time.Since(start))
		}
	})
	return outs
}

// unscore removes the scores of the outcome's methods that the scorers do
// not score, and gives every method its (possibly nil) probabilities for
// the pooled scorers, in the reports' order.
func (c *adaptCommand) unscore(o *adaptOutcome) {
	o.proba = append(o.proba, make([]*mat.Dense, len(o.reports)-len(o.proba))...)
	for i := range o.reports {
		if !c.scored.Scores(o.reports[i].Method) {
			o.reports[i].Selection, o.proba[i] = nil, nil
		}
	}
}

// adaptOutputs are the files dadil adapt writes in --out, replaced as one
// set (selected.csv of an earlier run with --select disappears from a run
// without).
var adaptOutputs = []string{"predictions.csv", "report.json", "selected.csv"}

// writeAdapt writes predictions.csv (a column per method, in the user's
// label values) and report.json to dir, atomically, and selected.csv (the
// column of the method the first scorer chose) with --select.
func writeAdapt(dir string, rep *adaptReport, names []string, preds [][]int, labels *dataset.Classes) error {
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	csv := predictionsCSV(names, preds, labels)
	files := map[string]func(string) error{
		"predictions.csv": func(p string) error { return os.WriteFile(p, csv, 0o644) },
		"report.json":     func(p string) error { return os.WriteFile(p, append(js, '\n'), 0o644) },
	}
	if len(rep.Selected) > 0 && rep.Selected[0].Method != "" {
		i := slices.Index(names, rep.Selected[0].Method)
		sel := predictionsCSV([]string{"prediction"}, preds[i:i+1], labels)
		files["selected.csv"] = func(p string) error { return os.WriteFile(p, sel, 0o644) }
	}
	return atomicfile.WriteDir(dir, adaptOutputs, files)
}

// predictionsCSV returns a CSV file of a row index column and a column of
// predictions (in the user's label values) per name.
func predictionsCSV(names []string, preds [][]int, labels *dataset.Classes) []byte {
	var csv bytes.Buffer
	csv.WriteString("row," + strings.Join(names, ",") + "\n")
	for r := range preds[0] {
		fmt.Fprintf(&csv, "%d", r)
		for _, p := range preds {
			fmt.Fprintf(&csv, ",%d", labels.Decode(p[r]))
		}
		csv.WriteByte('\n')
	}
	return csv.Bytes()
}

// requestedMethods resolves --methods among adapt.Names, in their order.
func requestedMethods(list string) ([]string, error) {
	names, err := listFlag("--methods", "method", list, adapt.Names())
	if err != nil {
		return nil, err
	}
	var want []string
	for _, n := range adapt.Names() {
		if slices.Contains(names, n) {
			want = append(want, n)
		}
	}
	return want, nil
}

// listFlag resolves a flag's comma-separated list of names (what names
// one) among known: all of them for "all", else the names given, in their
// order.
func listFlag(flag, what, list string, known []string) ([]string, error) {
	names := splitList(list)
	if len(names) == 1 && names[0] == "all" {
		return known, nil
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s is empty", flag)
	}
	for _, n := range names {
		if n == "all" {
			return nil, fmt.Errorf("%s: \"all\" stands alone (it means every %s)", flag, what)
		}
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("%s: unknown %s %s (known: %s, all)", flag, what, clip.Quote(n), strings.Join(known, ", "))
		}
	}
	return names, nil
}

// adaptJob fits one group (a method, or a method and its sibling) on the
// problem, predicts the target, scores it when its labels are known, and
// validates on the sources and scores it with the scorers when asked.
func adaptJob(members []string, build func() adapt.Method, p *dataset.Problem, validate bool, scorers []selection.Scorer) adaptOutcome {
	var o adaptOutcome
	t0 := time.Now()
	m := build()
	if o.err = m.Fit(p); o.err != nil {
		return o
	}
	fitSecs := time.Since(t0).Seconds()
	switch d := m.(type) {
	case *adapt.DaDiL:
		o.dadil, o.classes = &d.Dict.Settings, d.Model.TargetClasses()
	case *adapt.GMMDaDiL:
		s := modelfile.GMMSettingsOf(d)
		o.gmm = &s
	}
	ps := adapt.Predictors(m)
	for i := range members {
		t1 := time.Now()
		pred, err := ps[i].Predict(p.Target.X)
		if err != nil {
			o.err = err
			return o
		}
		r := methodReport{Method: members[i], Seconds: fitSecs + time.Since(t1).Seconds()}
		if p.Test != nil {
			acc, err := classify.Accuracy(pred, p.Test.Y)
			if err != nil {
				o.err = err
				return o
			}
			acc *= 100
			r.TargetAccuracy = &acc
		}
		o.pred = append(o.pred, pred)
		o.reports = append(o.reports, r)
	}
	c := &selection.Candidate{Method: m, Build: build, Predictors: len(members)}
	if validate {
		if o.err = validateJob(&o, c, p); o.err != nil {
			return o
		}
	}
	for i, v := range selection.Values(p, c, scorers) {
		o.reports[i].Selection = v
	}
	o.proba = selection.PoolProba(p, c, scorers)
	return o
}

// validateJob adds held-out-source validation to the reports of a group;
// the fits stay in c for the held-out scorer.
func validateJob(o *adaptOutcome, c *selection.Candidate, p *dataset.Problem) error {
	t0 := time.Now()
	scores, err := c.HeldOut(p)
	if err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	for i := range o.reports {
		r := &o.reports[i]
		h := scores[i].HeldOut
		for _, s := range h {
			r.HeldOutSources = append(r.HeldOutSources, heldOutAccuracy{Source: s.Source, Accuracy: 100 * s.Accuracy, Balanced: 100 * s.Balanced})
		}
		mean, bal := 100*adapt.MeanAccuracy(h), 100*adapt.MeanBalanced(h)
		r.HeldOutMean, r.HeldOutBalancedMean = &mean, &bal
		r.ValidationSeconds = secs
	}
	return nil
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
// validated (one column per source, named by its file), the scorers'
// values with the chosen methods' in bold, and the seconds; then, with
// scorers, a line of their choices.
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
	for _, s := range rep.Selected {
		b.WriteString(" " + s.Scorer + " |")
	}
	b.WriteString(" seconds |\n|---|")
	cols := 1 + len(rep.Selected)
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
		for j, s := range rep.Selected {
			if m.Selection == nil {
				b.WriteString(" |") // not scored (--select-among)
				continue
			}
			b.WriteString(selectionCell(m.Selection[j], s.Method == m.Method))
		}
		fmt.Fprintf(&b, " %.1f |\n", m.Seconds)
	}
	if len(rep.Selected) > 0 {
		var picks []string
		for _, s := range rep.Selected {
			if s.Method == "" {
				s.Method = "none (no score)"
			}
			picks = append(picks, s.Scorer+" → "+s.Method)
		}
		among := ""
		if rep.SelectAmong != nil {
			among = " among " + strings.Join(rep.SelectAmong, ", ")
		}
		fmt.Fprintf(&b, "\nChosen without target labels%s (highest score, in bold): %s.\n", among, strings.Join(picks, ", "))
	}
	return b.String()
}

// poolAdapt fills in the values of the pooled scorers of the methods'
// reports, every method scored with the others (but those --select-among
// leaves out, whose values are nil); probas are the methods'
// (selection.PoolProba), in the reports' order.
func poolAdapt(ms []methodReport, probas []*mat.Dense, scorers []selection.Scorer) {
	if !selection.Pooled(scorers) {
		return
	}
	values := make([][]selection.Value, len(ms))
	for i := range ms {
		values[i] = ms[i].Selection
	}
	selection.Pool(values, probas, scorers)
}
