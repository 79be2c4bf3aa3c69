package main

import (
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/figure"
	"github.com/dadil/dadil/synth"
)

func runDemo(args []string, e *env) error {
	fs := newFlags("dadil demo", e)
	seed := fs.Uint64("seed", 1, "random seed (data, dictionary and classifiers)")
	out := fs.String("out", "dadil-demo", "directory for the figures")
	atoms := fs.Int("atoms", 0, "number of atoms K (default: the number of sources)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil demo [--seed s] [--out DIR] [--atoms K]")
		fmt.Fprintln(fs.Output(), "\nFits DaDiL end to end on a generated problem: three labeled sources and an unlabeled")
		fmt.Fprintln(fs.Output(), "target, each a shifted copy of three classes. Prints the target accuracy of source-only")
		fmt.Fprintln(fs.Output(), "training, WBR and DaDiL, and draws the domains, the atoms, the reconstructions, the")
		fmt.Fprintln(fs.Output(), "barycentric coordinates and the loss curve into DIR.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *atoms < 0 {
		return usageError{fmt.Errorf("--atoms %d: need at least one atom", *atoms)}
	}
	if *out == "" {
		return usageError{fmt.Errorf("--out: give a directory for the figures")}
	}
	if err := checkOutputDir("--out", *out); err != nil {
		return err
	}
	start := time.Now()
	p := synth.Generate(synth.Default(), *seed)
	c := p.Classes
	truth := p.Test.Y
	so := &adapt.SourceOnly{}
	wbr := &adapt.WBR{Settings: &dictionary.Settings{Seed: *seed}}
	dadil := adapt.NewDaDiLR(&dictionary.Settings{Atoms: *atoms, Seed: *seed})
	for _, m := range []adapt.Method{so, wbr, dadil} {
		if err := m.Fit(p); err != nil {
			return err
		}
	}
	d, m := dadil.Dict, dadil.Model
	type row struct {
		name string
		pred func(*mat.Dense) ([]int, error)
	}
	rows := []row{
		{"source-only", so.Predict},
		{"WBR-R", wbr.Model.PredictR}, {"WBR-E", wbr.Model.PredictE},
		{"DaDiL-R", m.PredictR}, {"DaDiL-E", m.PredictE},
	}
	fmt.Fprintf(e.stdout, "Synthetic problem: 3 labeled sources and 1 unlabeled target, %d classes, %d points each (seed %d).\n\n", c, len(truth), *seed)
	fmt.Fprintf(e.stdout, "%-12s %s\n", "method", "target accuracy")
	for _, r := range rows {
		pred, err := r.pred(p.Target.X)
		if err != nil {
			return err
		}
		acc, err := classify.Accuracy(pred, truth)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%-12s %6.2f%%\n", r.name, 100*acc)
	}
	fmt.Fprintf(e.stdout, "\nDaDiL: K = %d atoms, %d epochs (stopped by %s); target coordinates α_T = %.3f\n",
		len(d.Atoms), len(d.History.Loss), dictionary.StopReason(d.History.Stopped), m.Alpha)

	// Figures.
	figs, err := demoFigures(p, d, m)
	if err != nil {
		return err
	}
	files := map[string]func(string) error{}
	for name, f := range figs {
		f := f
		files[name] = func(path string) error { return figure.SaveGrid(path, f.plots, f.w, f.h) }
	}
	if err := atomicfile.WriteDir(*out, files); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Figures in %s: domains.png, atoms.png, reconstructions.png, alpha.png, loss.png (%.1f s in all)\n", *out, time.Since(start).Seconds())
	return nil
}

type gridFig struct {
	plots [][]*plot.Plot
	w, h  vg.Length
}

func demoFigures(p *dataset.Problem, d *dictionary.Dictionary, m *dictionary.Model) (map[string]gridFig, error) {
	c := p.Classes
	cell := 9 * vg.Centimeter
	figs := map[string]gridFig{}
	// Domains: sources and the target (coloured by its hidden labels).
	var dom []*plot.Plot
	for _, s := range p.Sources {
		pl, err := figure.Scatter(s.Name, s.X, s.Y, nil, c)
		if err != nil {
			return nil, err
		}
		dom = append(dom, pl)
	}
	pt, err := figure.Scatter("target (true labels, hidden from training)", p.Test.X, p.Test.Y, nil, c)
	if err != nil {
		return nil, err
	}
	dom = append(dom, pt)
	figure.ShareAxes(dom...)
	figs["domains.png"] = gridFig{[][]*plot.Plot{dom[:2], dom[2:]}, cell, cell}

	// Atoms, coloured by the argmax of their soft labels.
	var at []*plot.Plot
	for k, a := range d.Atoms {
		pl, err := figure.Scatter(fmt.Sprintf("atom %d", k+1), a.X, nil, a.Labels(), c)
		if err != nil {
			return nil, err
		}
		at = append(at, pl)
	}
	figure.ShareAxes(at...)
	figs["atoms.png"] = gridFig{[][]*plot.Plot{at}, cell, cell}

	// Reconstructions B(α_ℓ; P) of every domain.
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
				return nil, err
			}
			r, Y = b.X, b.Y
		}
		pl, err := figure.Scatter("reconstruction of "+d.Names[l], r, nil, Y, c)
		if err != nil {
			return nil, err
		}
		rec = append(rec, pl)
	}
	figure.ShareAxes(rec...)
	figs["reconstructions.png"] = gridFig{[][]*plot.Plot{rec[:2], rec[2:]}, cell, cell}

	// Barycentric coordinates, grouped by domain.
	K := len(d.Atoms)
	series := make([]string, K)
	values := make([][]float64, K)
	for k := range series {
		series[k] = fmt.Sprintf("atom %d", k+1)
		values[k] = mat.Col(nil, k, d.Alpha)
	}
	pa, err := figure.Bars("barycentric coordinates α_ℓ", "weight", d.Names, series, values, 16*vg.Centimeter)
	if err != nil {
		return nil, err
	}
	figs["alpha.png"] = gridFig{[][]*plot.Plot{{pa}}, 16 * vg.Centimeter, 9 * vg.Centimeter}

	// Loss per epoch: total and per domain.
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
	pl, err := figure.Lines("DaDiL loss per epoch", "epoch", "mean batch loss", names, curves)
	if err != nil {
		return nil, err
	}
	figs["loss.png"] = gridFig{[][]*plot.Plot{{pl}}, 16 * vg.Centimeter, 9 * vg.Centimeter}
	return figs, nil
}
