package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/dadil/dadil/analyze"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/figure"
)

// sweepReport is DIR/sweep.json.
type sweepReport struct {
	Analysis string `json:"analysis"`
	settingsReport
	Runs []analyze.SweepRun `json:"runs"`
}

// sweepCommand holds the flags of dadil analyze sweep.
type sweepCommand struct {
	*analyzeFlags
	sweepAtoms, sweepSamples, sweepBatches string
	neighbours                             int
	atoms, samples, batches                []int // the values to try, from the lists
}

// newSweepCommand registers the flags of dadil analyze sweep.
func newSweepCommand(e *env) *sweepCommand {
	c := &sweepCommand{analyzeFlags: newAnalyzeFlags("sweep", e)}
	c.fs.StringVar(&c.sweepAtoms, "sweep-atoms", "3,4,5,6,7,8", "values of `K` to try (the others fixed at --samples and --batch)")
	c.fs.StringVar(&c.sweepSamples, "sweep-samples", "500,1000,2000", "values of `n` to try (rounded to multiples of the number of classes)")
	c.fs.StringVar(&c.sweepBatches, "sweep-batches", "50,100,200", "values of `n_b` to try")
	c.fs.IntVar(&c.neighbours, "neighbours", 5, "nearest neighbours of the density score")
	c.usage("Accuracy of DaDiL-R and DaDiL-E as K, n and n_b vary one at a time (paper Tables 7, 9, 11), the\n" +
		"sparsity of the barycentric coordinates per K (Table 8) and the density of the atoms' supports per n\n" +
		"(Table 10). An empty list (e.g. --sweep-batches '') skips that sweep.")
	return c
}

// check checks the flags of the sweep, once the problems are loaded, and
// rounds the values of n to multiples of the classes (with a note).
func (c *sweepCommand) check(classes int) error {
	var err error
	if c.atoms, err = parseInts("sweep-atoms", c.sweepAtoms); err != nil {
		return err
	}
	if c.samples, err = parseInts("sweep-samples", c.sweepSamples); err != nil {
		return err
	}
	for i, n := range c.samples {
		c.samples[i] = roundSamples("--sweep-samples", n, classes, c.note)
	}
	if c.batches, err = parseInts("sweep-batches", c.sweepBatches); err != nil {
		return err
	}
	if len(c.atoms)+len(c.samples)+len(c.batches) == 0 {
		return usageError{fmt.Errorf("nothing to sweep: --sweep-atoms, --sweep-samples and --sweep-batches are all empty")}
	}
	if c.neighbours < 1 {
		return usageError{fmt.Errorf("--neighbours %d: the density score needs at least 1 nearest neighbour", c.neighbours)}
	}
	return nil
}

func runAnalyzeSweep(args []string, e *env) error {
	c := newSweepCommand(e)
	start := time.Now()
	ps, set, err := c.problems(args)
	if err != nil {
		return err
	}
	if err := c.check(ps[0].Classes); err != nil {
		return err
	}
	c.dict.swept = map[string]string{"atoms": "sweep-atoms", "samples": "sweep-samples", "batch": "sweep-batches"}
	if err := c.checkFits(ps, c.sweepSettings(set), len(ps)*(len(c.atoms)+len(c.samples)+len(c.batches)), false); err != nil {
		return err
	}
	defer useMemoryLimit(memoryLimit(c.dict.maxBytes))()
	runs, err := analyze.Sweep(ps, &analyze.SweepSettings{
		Dictionary: set, Atoms: c.atoms, Samples: c.samples, Batches: c.batches, Neighbours: c.neighbours,
		Classifier: c.trainer, Workers: c.workers, Progress: c.progress(e),
	})
	if err != nil {
		return err
	}
	out := newOutput()
	rep := sweepReport{Analysis: "sweep", settingsReport: c.report(ps, set, start), Runs: runs}
	if err := out.json("sweep.json", rep); err != nil {
		return err
	}
	var md markdown
	md.h(1, "DaDiL hyper-parameter sweep")
	md.p("Problems: %s. Base settings: K = %s, n = %s, n_b = %s, seed %d; one hyper-parameter varies at a time. Accuracies in %% (DaDiL-R / DaDiL-E) on the scored target rows.",
		strings.Join(names(ps), ", "), baseOf(runs, "K", set.Atoms), baseOf(runs, "n", set.Samples), baseOf(runs, "n_b", set.Batch), set.Seed)
	if err := c.render(&md, out, ps, runs); err != nil {
		return err
	}
	return c.finish(e, out, &md, start)
}

// sweepSettings returns the settings of the sweep's fits: base with each
// value of K, n and n_b in turn.
func (c *sweepCommand) sweepSettings(base dictionary.Settings) []dictionary.Settings {
	var sets []dictionary.Settings
	for _, sw := range []struct {
		vals []int
		set  func(s *dictionary.Settings, v int)
	}{
		{c.atoms, func(s *dictionary.Settings, v int) { s.Atoms, s.ExtraAtoms = v, 0 }},
		{c.samples, func(s *dictionary.Settings, v int) { s.Samples = v }},
		{c.batches, func(s *dictionary.Settings, v int) { s.Batch = v }},
	} {
		for _, v := range sw.vals {
			s := base
			sw.set(&s, v)
			sets = append(sets, s)
		}
	}
	return sets
}

// sweepParam is one swept hyper-parameter: its name in the runs, what it
// is, and the paper's table of its accuracies.
type sweepParam struct{ param, title, table string }

// render adds a section per sweep to the report, and the figures.
func (c *sweepCommand) render(md *markdown, out *output, ps []*dataset.Problem, runs []analyze.SweepRun) error {
	accRow := make([][]*plot.Plot, 2)
	for _, sw := range []sweepParam{
		{"K", "number of atoms K", "Table 7"},
		{"n", "atom support size n", "Table 9"},
		{"n_b", "batch size n_b", "Table 11"},
	} {
		sel := selectRuns(runs, sw.param)
		if len(sel) == 0 {
			continue
		}
		vals := valuesOf(sel)
		head := accuracyTable(md, sw, ps, sel, vals)
		for m, name := range []string{"DaDiL-R", "DaDiL-E"} {
			pl, err := accuracyPlot(name, sw.param, ps, sel, vals, m == 1)
			if err != nil {
				return err
			}
			accRow[m] = append(accRow[m], pl)
		}
		var err error
		switch sw.param {
		case "K":
			err = sparsitySection(md, out, head, ps, sel, vals)
		case "n":
			err = c.densitySection(md, out, head, ps, sel, vals)
		}
		if err != nil {
			return err
		}
	}
	out.figure("sweep_accuracy", accRow, 11*vg.Centimeter, 8*vg.Centimeter)
	md.h(2, "Figures")
	md.image("accuracy against each hyper-parameter", "sweep_accuracy.png")
	return nil
}

// accuracyTable writes the accuracies of one sweep, a row per value and a
// column per problem, and returns the table's head.
func accuracyTable(md *markdown, sw sweepParam, ps []*dataset.Problem, sel []analyze.SweepRun, vals []int) []string {
	md.h(2, "Accuracy against %s (paper %s)", sw.title, sw.table)
	head := []string{sw.param}
	for _, p := range ps {
		head = append(head, p.Name)
	}
	var rows [][]string
	for _, v := range vals {
		row := []string{strconv.Itoa(v)}
		for _, p := range ps {
			r := findRun(sel, p.Name, v)
			row = append(row, pct(r.AccuracyR)+" / "+pct(r.AccuracyE))
		}
		rows = append(rows, row)
	}
	md.table(head, rows)
	return head
}

// accuracyPlot draws the accuracy of DaDiL-R (of DaDiL-E if e) against
// the swept param, a line per problem.
func accuracyPlot(name, param string, ps []*dataset.Problem, sel []analyze.SweepRun, vals []int, e bool) (*plot.Plot, error) {
	x := make([]float64, len(vals))
	for i, v := range vals {
		x[i] = float64(v)
	}
	var series []string
	var ys [][]float64
	for _, p := range ps {
		y := make([]float64, len(vals))
		for i, v := range vals {
			r := findRun(sel, p.Name, v)
			y[i] = float64(r.AccuracyR)
			if e {
				y[i] = float64(r.AccuracyE)
			}
		}
		series = append(series, p.Name)
		ys = append(ys, y)
	}
	return figure.Band(name+" accuracy against "+param, param, "accuracy (%)", series, x, ys, ys, ys, false)
}

// sparsitySection writes the sparsity of the target's coordinates against
// K (paper Table 8) and its figure.
func sparsitySection(md *markdown, out *output, head []string, ps []*dataset.Problem, sel []analyze.SweepRun, vals []int) error {
	md.h(2, "Sparsity of the target's coordinates against K (paper Table 8)")
	md.p("Sparsity score 100 (1 − ‖α‖₀ / K) in %%; ‖α‖₀ counts coordinates above %g. Every domain's score is in sweep.json.", analyze.SparsityTol)
	target := map[string]int{}
	for _, p := range ps {
		target[p.Name] = p.TargetIndex()
	}
	values := scoreTable(md, head, sel, ps, vals, "%.1f", func(r analyze.SweepRun) float64 { return r.Sparsity[target[r.Problem]] })
	pl, err := figure.Bars("sparsity of α_T against K", "sparsity score (%)", intNames("K = ", vals), names(ps), values, 16*vg.Centimeter)
	if err != nil {
		return err
	}
	pl.Y.Min, pl.Y.Max = 0, 100 // the score's range, legend room above the largest, 100 (1 − 1/K)
	out.figure("sweep_sparsity", [][]*plot.Plot{{pl}}, 16*vg.Centimeter, 9*vg.Centimeter)
	md.image("sparsity against K", "sweep_sparsity.png")
	return nil
}

// densitySection writes the density of the atoms' supports against n
// (paper Table 10) and its figure.
func (c *sweepCommand) densitySection(md *markdown, out *output, head []string, ps []*dataset.Problem, sel []analyze.SweepRun, vals []int) error {
	md.h(2, "Density of the atoms' supports against n (paper Table 10)")
	md.p("Mean squared distance of every support point to its %d nearest neighbours in its atom (in the units of the scaled features).", c.neighbours)
	values := scoreTable(md, head, sel, ps, vals, "%.4g", func(r analyze.SweepRun) float64 { return r.Density })
	pl, err := figure.Bars("support density against n", "density score", intNames("n = ", vals), names(ps), values, 16*vg.Centimeter)
	if err != nil {
		return err
	}
	out.figure("sweep_density", [][]*plot.Plot{{pl}}, 16*vg.Centimeter, 9*vg.Centimeter)
	md.image("density against n", "sweep_density.png")
	return nil
}

// scoreTable writes a table of score(run) with a row per value and a
// column per problem, and returns the scores by problem.
func scoreTable(md *markdown, head []string, sel []analyze.SweepRun, ps []*dataset.Problem, vals []int, format string, score func(analyze.SweepRun) float64) [][]float64 {
	values := make([][]float64, len(ps))
	var rows [][]string
	for _, v := range vals {
		row := []string{strconv.Itoa(v)}
		for i, p := range ps {
			s := score(findRun(sel, p.Name, v))
			row = append(row, fmt.Sprintf(format, s))
			values[i] = append(values[i], s)
		}
		rows = append(rows, row)
	}
	md.table(head, rows)
	return values
}

func selectRuns(runs []analyze.SweepRun, param string) []analyze.SweepRun {
	var out []analyze.SweepRun
	for _, r := range runs {
		if r.Param == param {
			out = append(out, r)
		}
	}
	return out
}

// valuesOf returns the distinct values of runs, in order of appearance.
func valuesOf(runs []analyze.SweepRun) []int {
	var vals []int
	seen := map[int]bool{}
	for _, r := range runs {
		if !seen[r.Value] {
			seen[r.Value] = true
			vals = append(vals, r.Value)
		}
	}
	return vals
}

func findRun(runs []analyze.SweepRun, problem string, value int) analyze.SweepRun {
	for _, r := range runs {
		if r.Problem == problem && r.Value == value {
			return r
		}
	}
	return analyze.SweepRun{}
}

func names(ps []*dataset.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func intNames(prefix string, vals []int) []string {
	var out []string
	for _, v := range vals {
		out = append(out, prefix+strconv.Itoa(v))
	}
	return out
}

// baseOf returns the value of param in the runs that do not sweep it (the
// base setting), or the setting given when every run sweeps it.
func baseOf(runs []analyze.SweepRun, param string, given int) string {
	for _, r := range runs {
		if r.Param != param {
			switch param {
			case "K":
				return strconv.Itoa(r.Atoms)
			case "n":
				return strconv.Itoa(r.Samples)
			default:
				return strconv.Itoa(r.Batch)
			}
		}
	}
	if given == 0 {
		return "default"
	}
	return strconv.Itoa(given)
}
