package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/figure"
	"github.com/dadil/dadil/synth"
)

// demoCommand holds the flags of dadil demo.
type demoCommand struct {
	seed        uint64
	out, method string
	atoms       int
}

// parseDemo parses and checks the flags of dadil demo, before any work.
func parseDemo(args []string, e *env) (*demoCommand, error) {
	c := &demoCommand{}
	fs := newFlags("dadil demo", e)
	fs.Uint64Var(&c.seed, "seed", 1, "random seed (data, dictionary and classifiers)")
	fs.StringVar(&c.out, "out", "dadil-demo", "directory for the figures")
	fs.IntVar(&c.atoms, "atoms", 0, "number of atoms K (default: the number of sources)")
	fs.StringVar(&c.method, "method", fitDaDiL, "`dadil` (point-cloud atoms) or gmm (Gaussian-mixture atoms, GMM-DaDiL, drawn as ellipses)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil demo [--seed s] [--out DIR] [--atoms K] [--method dadil|gmm]")
		fmt.Fprintln(fs.Output(), "\nFits DaDiL end to end on a generated problem: three labeled sources and an unlabeled")
		fmt.Fprintln(fs.Output(), "target, each a shifted copy of three classes. Prints the target accuracy of source-only")
		fmt.Fprintln(fs.Output(), "training, WBR and DaDiL, and draws the domains, the atoms, the reconstructions, the")
		fmt.Fprintln(fs.Output(), "barycentric coordinates and the loss curve into DIR. With --method gmm, the same for")
		fmt.Fprintln(fs.Output(), "GMM-DaDiL (beside GMM-OTDA and GMM-WBT), its mixtures drawn as 1-σ and 2-σ ellipses.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if err := countFlag(fs, "atoms", c.atoms, "the number of sources"); err != nil {
		return nil, err
	}
	if c.out == "" {
		return nil, usageError{fmt.Errorf("--out: give a directory for the figures")}
	}
	if c.method != fitDaDiL && c.method != fitGMM {
		return nil, usageError{fmt.Errorf("--method %s: want dadil or gmm", clip.Quote(c.method))}
	}
	return c, checkOutputDir("--out", c.out, demoOutputs)
}

// demoRow is a method of the demo's table: its name and its predictor.
type demoRow struct {
	name string
	pred func(*mat.Dense) ([]int, error)
}

func runDemo(args []string, e *env) error {
	c, err := parseDemo(args, e)
	if err != nil {
		return err
	}
	start := time.Now()
	p := synth.Generate(synth.Default(), c.seed)
	if c.method == fitGMM {
		return c.runGMM(e, p, start)
	}
	rows, dadil, err := c.fit(p)
	if err != nil {
		return err
	}
	if err := c.printAccuracies(e.stdout, p, rows); err != nil {
		return err
	}
	d, m := dadil.Dict, dadil.Model
	fmt.Fprintf(e.stdout, "\nDaDiL: K = %d atoms, %d epochs (stopped by %s); target coordinates α_T = %.3f\n",
		len(d.Atoms), len(d.History.Loss), dictionary.StopReason(d.History.Stopped), m.Alpha)
	figs, err := demoFigures(p, d, m)
	if err != nil {
		return err
	}
	return c.writeFigures(e, figs, start)
}

// fit fits source-only, WBR and DaDiL-R on the problem, and returns the
// rows of the table and DaDiL.
func (c *demoCommand) fit(p *dataset.Problem) ([]demoRow, *adapt.DaDiL, error) {
	so := &adapt.SourceOnly{}
	wbr := &adapt.WBR{Settings: &dictionary.Settings{Seed: c.seed}}
	dadil := adapt.NewDaDiLR(&dictionary.Settings{Atoms: c.atoms, Seed: c.seed})
	for _, m := range []adapt.Method{so, wbr, dadil} {
		if err := m.Fit(p); err != nil {
			return nil, nil, err
		}
	}
	return []demoRow{
		{"source-only", so.Predict},
		{"WBR-R", wbr.Model.PredictR}, {"WBR-E", wbr.Model.PredictE},
		{"DaDiL-R", dadil.Model.PredictR}, {"DaDiL-E", dadil.Model.PredictE},
	}, dadil, nil
}

// printAccuracies prints the problem and the target accuracy of every row.
func (c *demoCommand) printAccuracies(w io.Writer, p *dataset.Problem, rows []demoRow) error {
	truth := p.Test.Y
	fmt.Fprintf(w, "Synthetic problem: 3 labeled sources and 1 unlabeled target, %d classes, %d points each (seed %d).\n\n", p.Classes, len(truth), c.seed)
	width := 12
	for _, r := range rows {
		width = max(width, len(r.name))
	}
	fmt.Fprintf(w, "%-*s %s\n", width, "method", "target accuracy")
	for _, r := range rows {
		pred, err := r.pred(p.Target.X)
		if err != nil {
			return err
		}
		acc, err := classify.Accuracy(pred, truth)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%-*s %6.2f%%\n", width, r.name, 100*acc)
	}
	return nil
}

// writeFigures writes the figures into --out atomically, and says so.
func (c *demoCommand) writeFigures(e *env, figs map[string]gridFig, start time.Time) error {
	files := map[string]func(string) error{}
	for name, f := range figs {
		files[name] = func(path string) error { return figure.SaveGrid(path, f.plots, f.w, f.h) }
	}
	if err := atomicfile.WriteDir(c.out, demoOutputs, files); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Figures in %s: %s (%.1f s in all)\n", c.out, strings.Join(demoOutputs, ", "), time.Since(start).Seconds())
	return nil
}

// gridFig is a figure of the demo: a grid of plots with cells w×h.
type gridFig struct {
	plots [][]*plot.Plot
	w, h  vg.Length
}

// demoOutputs are the figures dadil demo writes in --out.
var demoOutputs = []string{"domains.png", "atoms.png", "reconstructions.png", "alpha.png", "loss.png"}

// demoCell is the side of a scatter plot of the demo's figures.
const demoCell = 9 * vg.Centimeter

// demoFigures draws the domains, the atoms, the reconstructions, the
// barycentric coordinates and the loss curves, by file name.
func demoFigures(p *dataset.Problem, d *dictionary.Dictionary, m *dictionary.Model) (map[string]gridFig, error) {
	return drawFigures([]namedFigure{
		{"domains.png", func() (gridFig, error) { return domainsFigure(p) }},
		{"atoms.png", func() (gridFig, error) { return atomsFigure(d, p.Classes) }},
		{"reconstructions.png", func() (gridFig, error) { return reconstructionsFigure(d, m, p.Classes) }},
		{"alpha.png", func() (gridFig, error) { return alphaFigure(d.Names, d.Alpha) }},
		{"loss.png", func() (gridFig, error) { return lossFigure(d) }},
	})
}

// namedFigure is a figure of the demo and the function that draws it.
type namedFigure struct {
	name string
	draw func() (gridFig, error)
}

// drawFigures draws the figures, by file name.
func drawFigures(list []namedFigure) (map[string]gridFig, error) {
	figs := map[string]gridFig{}
	for _, f := range list {
		g, err := f.draw()
		if err != nil {
			return nil, err
		}
		figs[f.name] = g
	}
	return figs, nil
}

// domainsFigure draws the sources and the target, coloured by its hidden
// labels.
func domainsFigure(p *dataset.Problem) (gridFig, error) {
	var dom []*plot.Plot
	for _, s := range p.Sources {
		pl, err := figure.Scatter(s.Name, s.X, s.Y, nil, p.Classes)
		if err != nil {
			return gridFig{}, err
		}
		dom = append(dom, pl)
	}
	pt, err := figure.Scatter("target (true labels, hidden from training)", p.Test.X, p.Test.Y, nil, p.Classes)
	if err != nil {
		return gridFig{}, err
	}
	dom = append(dom, pt)
	figure.ShareAxes(dom...)
	return gridFig{[][]*plot.Plot{dom[:2], dom[2:]}, demoCell, demoCell}, nil
}

// atomsFigure draws the atoms, coloured by the argmax of their soft
// labels.
func atomsFigure(d *dictionary.Dictionary, classes int) (gridFig, error) {
	var at []*plot.Plot
	for k, a := range d.Atoms {
		pl, err := figure.Scatter(fmt.Sprintf("atom %d", k+1), a.X, nil, a.Labels(), classes)
		if err != nil {
			return gridFig{}, err
		}
		at = append(at, pl)
	}
	figure.ShareAxes(at...)
	return gridFig{[][]*plot.Plot{at}, demoCell, demoCell}, nil
}

// reconstructionsFigure draws the reconstructions B(α_ℓ; P) of every
// domain, the target's that of the model.
func reconstructionsFigure(d *dictionary.Dictionary, m *dictionary.Model, classes int) (gridFig, error) {
	N, _ := d.Alpha.Dims()
	var rec []*plot.Plot
	for l := 0; l < N; l++ {
		var r *mat.Dense
		var Y *mat.Dense
		if l == m.Target {
			r, Y = m.Reconstruction.X, m.Reconstruction.Y
		} else {
			b, err := d.Reconstruct(mat.Row(nil, l, d.Alpha), uint64(l))
			if err != nil {
				return gridFig{}, err
			}
			r, Y = b.X, b.Y
		}
		pl, err := figure.Scatter("reconstruction of "+d.Names[l], r, nil, Y, classes)
		if err != nil {
			return gridFig{}, err
		}
		rec = append(rec, pl)
	}
	figure.ShareAxes(rec...)
	return gridFig{[][]*plot.Plot{rec[:2], rec[2:]}, demoCell, demoCell}, nil
}

// alphaFigure draws the barycentric coordinates α (a row per domain),
// grouped by domain.
func alphaFigure(names []string, alpha *mat.Dense) (gridFig, error) {
	_, K := alpha.Dims()
	series := make([]string, K)
	values := make([][]float64, K)
	for k := range series {
		series[k] = fmt.Sprintf("atom %d", k+1)
		values[k] = mat.Col(nil, k, alpha)
	}
	pa, err := figure.Bars("barycentric coordinates α_ℓ", "weight", names, series, values, 16*vg.Centimeter)
	if err != nil {
		return gridFig{}, err
	}
	return gridFig{[][]*plot.Plot{{pa}}, 16 * vg.Centimeter, 9 * vg.Centimeter}, nil
}

// lossFigure draws DaDiL's loss per epoch: total and per domain.
func lossFigure(d *dictionary.Dictionary) (gridFig, error) {
	N, _ := d.Alpha.Dims()
	names := []string{"total (1/N Σ)"}
	curves := [][]float64{d.History.Loss}
	for l := 0; l < N; l++ {
		s := make([]float64, len(d.History.DomainLoss))
		for e := range s {
			s[e] = d.History.DomainLoss[e][l]
		}
		names = append(names, d.Names[l])
		curves = append(curves, s)
	}
	return linesFigure("DaDiL loss per epoch", "mean batch loss", names, curves)
}

// linesFigure draws curves against the epoch.
func linesFigure(title, ylabel string, names []string, curves [][]float64) (gridFig, error) {
	pl, err := figure.Lines(title, "epoch", ylabel, names, curves)
	if err != nil {
		return gridFig{}, err
	}
	return gridFig{[][]*plot.Plot{{pl}}, 16 * vg.Centimeter, 9 * vg.Centimeter}, nil
}
