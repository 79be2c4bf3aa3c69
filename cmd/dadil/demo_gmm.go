package main

import (
	"fmt"
	"time"

	"gonum.org/v1/plot"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/figure"
)

// runGMM is dadil demo --method gmm: source-only, GMM-OTDA, GMM-WBT and
// GMM-DaDiL (R, E and the MAP rule) on the problem p, and the figures of
// GMM-DaDiL, its mixtures drawn as ellipses.
func (c *demoCommand) runGMM(e *env, p *dataset.Problem, start time.Time) error {
	so := &adapt.SourceOnly{}
	otda := &adapt.GMMOTDA{Seed: c.seed}
	wbt := &adapt.GMMWBT{Seed: c.seed}
	g := &adapt.GMMDaDiL{Settings: &gmm.DictionarySettings{Atoms: c.atoms, Seed: c.seed}, Seed: c.seed}
	for _, m := range []adapt.Method{so, otda, wbt, g} {
		if err := m.Fit(p); err != nil {
			return err
		}
	}
	rows := []demoRow{{"source-only", so.Predict}, {"GMM-OTDA", otda.Predict}, {"GMM-WBT", wbt.Predict},
		{"GMM-DaDiL-R", gmmPredictor(g, "r")}, {"GMM-DaDiL-E", gmmPredictor(g, "e")}, {"GMM-DaDiL-MAP", gmmPredictor(g, "map")}}
	if err := c.printAccuracies(e.stdout, p, rows); err != nil {
		return err
	}
	d := g.Dict
	fmt.Fprintf(e.stdout, "\nGMM-DaDiL: K = %d atoms of %d components, %d epochs (stopped by %s); target coordinates α_T = %.3f\n",
		len(d.Atoms), d.Atoms[0].Components(), d.Epochs, dictionary.StopReason(d.Status), d.Alpha.RawRowView(len(p.Sources)))
	figs, err := gmmDemoFigures(p, g)
	if err != nil {
		return err
	}
	return c.writeFigures(e, figs, start)
}

// gmmDemoFigures draws the domains with their mixtures, the atoms, the
// reconstructions over the domains' rows, the barycentric coordinates and
// the loss curve of a fitted GMM-DaDiL, by file name.
func gmmDemoFigures(p *dataset.Problem, g *adapt.GMMDaDiL) (map[string]gridFig, error) {
	var names []string
	for _, dom := range p.Domains() {
		names = append(names, dom.Name)
	}
	mixtures := append(append([]*gmm.Mixture(nil), g.Sources...), g.Target)
	return drawFigures([]namedFigure{
		{"domains.png", func() (gridFig, error) {
			return mixturesFigure(p, mixtures, func(l int) string { return names[l] + " and its mixture" })
		}},
		{"atoms.png", func() (gridFig, error) { return gmmAtomsFigure(g.Dict.Atoms, p.Classes) }},
		{"reconstructions.png", func() (gridFig, error) {
			return mixturesFigure(p, g.Dict.Reconstructions, func(l int) string { return "reconstruction of " + names[l] })
		}},
		{"alpha.png", func() (gridFig, error) { return alphaFigure(names, g.Dict.Alpha) }},
		{"loss.png", func() (gridFig, error) {
			return linesFigure("GMM-DaDiL loss per epoch", "MW₂² to the domains, summed", []string{"total"}, [][]float64{g.Dict.Loss})
		}},
	})
}

// mixturesFigure draws, for every domain ℓ, its rows (the target's with
// their hidden labels) and the mixture ms[ℓ] over them, titled title(ℓ).
func mixturesFigure(p *dataset.Problem, ms []*gmm.Mixture, title func(int) string) (gridFig, error) {
	doms := append(append([]dataset.Domain(nil), p.Sources...), *p.Test)
	var pls []*plot.Plot
	for l, dom := range doms {
		pl, err := figure.Scatter(title(l), dom.X, dom.Y, nil, p.Classes)
		if err != nil {
			return gridFig{}, err
		}
		if err := figure.Mixture(pl, ms[l]); err != nil {
			return gridFig{}, err
		}
		pls = append(pls, pl)
	}
	figure.ShareAxes(pls...)
	return gridFig{[][]*plot.Plot{pls[:2], pls[2:]}, demoCell, demoCell}, nil
}

// gmmAtomsFigure draws the atoms' components, coloured by the argmax of
// their soft labels.
func gmmAtomsFigure(atoms []*gmm.Mixture, classes int) (gridFig, error) {
	var pls []*plot.Plot
	for k, a := range atoms {
		pl, err := figure.Scatter(fmt.Sprintf("atom %d", k+1), a.Means, nil, a.Labels, classes)
		if err != nil {
			return gridFig{}, err
		}
		if err := figure.Mixture(pl, a); err != nil {
			return gridFig{}, err
		}
		pls = append(pls, pl)
	}
	figure.ShareAxes(pls...)
	return gridFig{[][]*plot.Plot{pls}, demoCell, demoCell}, nil
}
