package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/federate"
	"github.com/dadil/dadil/synth"
)

// runFederateDemo is dadil federate demo: a coordinator and one site per
// domain of the generated problem, as goroutines with their own
// connections to an embedded NATS server on the loopback interface, beside
// the centralised fit with the same settings.
func runFederateDemo(args []string, e *env) error {
	fs := newFlags("dadil federate demo", e)
	var rf roundFlags
	var dataSeed uint64
	var maxPayload int
	var quiet bool
	rf.register(fs)
	fs.Uint64Var(&dataSeed, "data-seed", 1, "seed of the generated problem")
	fs.IntVar(&maxPayload, "max-payload", 0, "largest NATS message, in `bytes` (default 1 MiB)")
	fs.BoolVar(&quiet, "quiet", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil federate demo [--rounds R] [--local-epochs E] [--fraction C] [--aggregation avg|random] [flags]")
		fmt.Fprintln(fs.Output(), "\nRuns federated DaDiL on the generated problem of dadil demo (three sources, one target),")
		fmt.Fprintln(fs.Output(), "one site per domain over a NATS server on 127.0.0.1, and the centralised DaDiL fit with")
		fmt.Fprintln(fs.Output(), "the same settings (scaling, R·E epochs, atoms started on the sources' rows, or N(0, I) with")
		fmt.Fprintln(fs.Output(), "--start gaussian); prints both target accuracies.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := rf.config(fs)
	if err != nil {
		return err
	}
	if err := checkMaxPayload(maxPayload); err != nil {
		return err
	}
	p := synth.Generate(synth.Default(), dataSeed)
	srv, err := federate.StartServer(federate.ServerConfig{Token: "demo", MaxPayload: int32(maxPayload)})
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	cfg.Subject = federate.DefaultSubject
	if !quiet {
		cfg.Progress = func(st federate.RoundStats) { fmt.Fprintln(e.stderr, roundLine(st)) }
		cfg.Log = func(format string, a ...any) { fmt.Fprintf(e.stderr, format+"\n", a...) }
	}
	start := time.Now()
	res, sites, err := federate.RunProblem(context.Background(), srv.ClientURL(), "demo", p, cfg, federate.SiteConfig{})
	if err != nil {
		return err
	}
	fedTime := time.Since(start)
	tg := sites[len(sites)-1]
	var out, in int64
	for _, st := range res.Rounds {
		out += st.BytesOut
		in += st.BytesIn
	}
	set := cfg.Settings
	set.Epochs, set.PlateauTol, set.Seed = cfg.Rounds*cfg.LocalEpochs, -1, cfg.Seed
	if cfg.Start == federate.StartGaussian {
		set.Init, set.FeatureScale = dictionary.InitGaussian, dictionary.ScaleNone
	}
	start = time.Now()
	accR, accE, err := centralised(p, cfg.Scaling, &set)
	if err != nil {
		return err
	}
	cenTime := time.Since(start)
	w := e.stdout
	fmt.Fprintf(w, "federated DaDiL: %d sites, %d rounds of %d local epochs, C = %g, %v aggregation\n", len(res.Sites), cfg.Rounds, cfg.LocalEpochs, cfg.Fraction, cfg.Aggregation)
	fmt.Fprintf(w, "  bytes per round (mean): %s sent to the sites, %s received from them\n", byteSize(out/int64(cfg.Rounds)), byteSize(in/int64(cfg.Rounds)))
	fmt.Fprintf(w, "%-32s %8s %8s %8s\n", "target accuracy (%)", "DaDiL-R", "DaDiL-E", "seconds")
	fmt.Fprintf(w, "%-32s %8.2f %8.2f %8.2f\n", "federated", 100*tg.AccuracyR, 100*tg.AccuracyE, fedTime.Seconds())
	fmt.Fprintf(w, "%-32s %8.2f %8.2f %8.2f\n", fmt.Sprintf("centralised (%d epochs)", set.Epochs), 100*accR, 100*accE, cenTime.Seconds())
	return nil
}

// centralised fits DaDiL on the whole problem, scaled over all its
// domains, and returns the target accuracies of DaDiL-R and DaDiL-E.
func centralised(p *dataset.Problem, kind dataset.Scaling, set *dictionary.Settings) (float64, float64, error) {
	p, err := scaledProblem(p, kind)
	if err != nil {
		return 0, 0, err
	}
	m, err := dictionary.FitModel(p, set, nil)
	if err != nil {
		return 0, 0, err
	}
	var acc [2]float64
	for i, pred := range []func(X *mat.Dense) ([]int, error){m.PredictR, m.PredictE} {
		y, err := pred(p.Target.X)
		if err != nil {
			return 0, 0, err
		}
		for r, k := range y {
			if k == p.Test.Y[r] {
				acc[i]++
			}
		}
		acc[i] /= float64(len(y))
	}
	return acc[0], acc[1], nil
}

// scaledProblem returns p with every domain scaled by the scaling of kind
// fitted on all of them together.
func scaledProblem(p *dataset.Problem, kind dataset.Scaling) (*dataset.Problem, error) {
	var files []*dataset.File
	for _, d := range p.Domains() {
		files = append(files, &dataset.File{Name: d.Name, X: d.X})
	}
	sc, err := dataset.FitScaler(kind, files...)
	if err != nil {
		return nil, err
	}
	q := *p
	q.Sources = slices.Clone(p.Sources)
	for i := range q.Sources {
		var X mat.Dense
		if err := sc.Transform(&X, p.Sources[i].X); err != nil {
			return nil, err
		}
		q.Sources[i].X = &X
	}
	var X mat.Dense
	if err := sc.Transform(&X, p.Target.X); err != nil {
		return nil, err
	}
	q.Target.X = &X
	return &q, nil
}
