package main

import (
	"flag"
	"fmt"
	"math"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/gmm"
	"github.com/dadil/dadil/internal/clip"
)

// gmmFlags are the GMM-DaDiL flags of dadil fit --method gmm and of the
// methods gmm-dadil and gmm-dadil-e of dadil adapt. Their defaults are the
// library's (adapt.GMMDaDiL, gmm.DictionarySettings).
type gmmFlags struct {
	fs                         *flag.FlagSet
	components, target, epochs int
	// dims is --gmm-dims: 0 keeps the features.
	dims              int
	varFloor, tol, lr float64
	// ensembleTr is --gmm-ensemble-transport; ensemble its value parsed
	// by check.
	ensembleTr string
	ensemble   dictionary.Transport
	// transportTr is --gmm-transport; transport its value parsed by
	// check.
	transportTr string
	transport   dictionary.Transport
}

// gmmFlagNames are the names of the GMM-DaDiL flags.
var gmmFlagNames = []string{"gmm-components", "gmm-target-components", "gmm-var-floor", "gmm-tol", "gmm-epochs", "gmm-lr", "gmm-ensemble-transport", "gmm-transport", "gmm-dims"}

func (g *gmmFlags) register(fs *flag.FlagSet) {
	g.fs = fs
	fs.IntVar(&g.components, "gmm-components", gmm.DefaultDictionaryComponentsPerClass, "GMM-DaDiL: components `n` per class of every atom and of every source's mixture (fewer for a class of fewer rows)")
	fs.IntVar(&g.target, "gmm-target-components", 0, "GMM-DaDiL: components `N` of the target's mixture (default: --gmm-components × the number of classes; at most the target's rows)")
	fs.Float64Var(&g.varFloor, "gmm-var-floor", adapt.DefaultGMMDaDiLVarFloor, "GMM-DaDiL: variance floor `f` of the domains' mixtures, relative to each feature's variance in the domain (in the class, for a source)")
	fs.Float64Var(&g.tol, "gmm-tol", adapt.DefaultGMMTol, "GMM-DaDiL: EM stops when an iteration raises the mean log-likelihood per row by less than `t`")
	fs.IntVar(&g.epochs, "gmm-epochs", gmm.DefaultDictionaryEpochs, "GMM-DaDiL: maximal number of epochs `N` (full-batch Adam steps)")
	fs.Float64Var(&g.lr, "gmm-lr", gmm.DefaultDictionaryLearningRate, "GMM-DaDiL: Adam learning rate `η` (for the means, scaled by the domains' spread)")
	fs.IntVar(&g.dims, "gmm-dims", 0, "GMM-DaDiL: principal directions `q` of all the domains' rows the mixtures live on, when there are more features (faster, often a little less accurate); 0 keeps the features")
	fs.StringVar(&g.transportTr, "gmm-transport", "auto", "GMM-DaDiL-R: what its classifier trains on besides the rows drawn from the target's reconstruction: none, sources (also as many rows of every source, moved by their class's shift between the source's and the target's reconstructions, half the weight) or `auto` (sources)")
	fs.StringVar(&g.ensembleTr, "gmm-ensemble-transport", "auto", "GMM-DaDiL-E: what each atom's classifier trains on: barycenter (rows drawn from the atom moved onto the target's reconstruction), none (from the atom as it is) or `auto` (barycenter)")
}

// check reports malformed values before any data is read.
func (g *gmmFlags) check() error {
	for _, c := range []struct {
		name, def string
		v         int
	}{
		{"gmm-components", fmt.Sprint(gmm.DefaultDictionaryComponentsPerClass), g.components},
		{"gmm-target-components", "--gmm-components × the number of classes", g.target},
		{"gmm-epochs", fmt.Sprint(gmm.DefaultDictionaryEpochs), g.epochs},
	} {
		if err := countFlag(g.fs, c.name, c.v, c.def); err != nil {
			return err
		}
	}
	if g.dims < 0 {
		return usageError{fmt.Errorf("--gmm-dims %d: need a number of directions, or 0 to keep the features", g.dims)}
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"gmm-var-floor", g.varFloor}, {"gmm-tol", g.tol}, {"gmm-lr", g.lr}} {
		if !(c.v > 0) || math.IsInf(c.v, 0) {
			return usageError{fmt.Errorf("--%s %g: need a positive number", c.name, c.v)}
		}
	}
	err := g.transport.UnmarshalText([]byte(g.transportTr))
	switch {
	case err != nil, g.transport != dictionary.TransportAuto && g.transport != dictionary.TransportNone && g.transport != dictionary.TransportSources:
		return usageError{fmt.Errorf("--gmm-transport %s: want auto, none or sources", clip.Quote(g.transportTr))}
	}
	err = g.ensemble.UnmarshalText([]byte(g.ensembleTr))
	switch {
	case err != nil, g.ensemble != dictionary.TransportAuto && g.ensemble != dictionary.TransportBarycenter && g.ensemble != dictionary.TransportNone:
		return usageError{fmt.Errorf("--gmm-ensemble-transport %s: want auto, barycenter or none", clip.Quote(g.ensembleTr))}
	}
	return nil
}

// given returns the GMM-DaDiL flags given on the command line.
func (g *gmmFlags) given() []string {
	var out []string
	for _, n := range gmmFlagNames {
		if flagSet(g.fs, n) {
			out = append(out, "--"+n)
		}
	}
	return out
}

// template returns the settings of the flags as an unfitted GMMDaDiL
// (adapt.Config.GMM): K atoms (0: one per source) and the plateau rule
// of the flag --plateau-tol's value plateau (0: none).
func (g *gmmFlags) template(atoms int, plateau float64) *adapt.GMMDaDiL {
	set := &gmm.DictionarySettings{Atoms: atoms, ComponentsPerClass: g.components, LearningRate: g.lr, Epochs: g.epochs, PlateauTol: plateau}
	if plateau == 0 {
		set.PlateauTol = -1
	}
	return &adapt.GMMDaDiL{Settings: set, TargetComponents: g.target, EM: &gmm.Settings{VarFloor: g.varFloor, Tol: g.tol}, EnsembleTransport: g.ensemble, Transport: g.transport, Dims: g.dims}
}

// method returns the GMM-DaDiL-R method of the flags (template), seeded
// by seed, whose classifier t trains on its reconstruction.
func (g *gmmFlags) method(atoms int, plateau float64, seed uint64, t classify.Trainer) *adapt.GMMDaDiL {
	m := g.template(atoms, plateau)
	m.Settings.Seed, m.Seed, m.Classifier = seed, seed, t
	return m
}
