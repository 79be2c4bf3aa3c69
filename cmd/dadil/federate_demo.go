package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
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
	var maxPayload, workers int
	var quiet bool
	var sources multiFlag
	var target string
	var rd readerFlags
	var bf demoBenchFlags
	rf.register(fs)
	rd.register(fs)
	bf.register(fs)
	fs.Var(&sources, "source", "a source site's labeled domain `PATH` instead of the generated problem; repeat for every source")
	fs.StringVar(&target, "target", "", "the target site's domain `PATH` (with --source); its labels, if any, only score")
	fs.IntVar(&workers, "workers", 0, "goroutines of every site's local updates and of the centralised fit (0: one per core)")
	fs.Uint64Var(&dataSeed, "data-seed", 1, "seed of the generated problem")
	fs.IntVar(&maxPayload, "max-payload", 0, "largest NATS message, in `bytes` (default 1 MiB)")
	fs.BoolVar(&quiet, "quiet", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil federate demo [--source FILE... --target FILE] [--rounds R] [--local-epochs E] [--fraction C] [--aggregation avg|wbary|random] [flags]")
		fmt.Fprintln(fs.Output(), "       dadil federate demo --bench office-caltech10 --data DIR [--features surf|decaf] [--targets W,A,D,C] [--folds 1,2,3,4,5] [flags]")
		fmt.Fprintln(fs.Output(), "\nRuns federated DaDiL on the generated problem of dadil demo (three sources, one target),")
		fmt.Fprintln(fs.Output(), "or on the files given, one site per domain as goroutines of this process over a NATS")
		fmt.Fprintln(fs.Output(), "server on 127.0.0.1, and the centralised DaDiL fit with")
		fmt.Fprintln(fs.Output(), "the same settings (scaling, R·E epochs, atoms started on the sources' rows, or N(0, I) with")
		fmt.Fprintln(fs.Output(), "--start gaussian); prints both target accuracies. With --bench office-caltech10, does so on")
		fmt.Fprintln(fs.Output(), "every split of the paper's folds asked (as dadil bench office-caltech10) and prints a table.")
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
	if err := checkWorkers(workers); err != nil {
		return err
	}
	if bf.bench != "" {
		return bf.run(fs, demoRunner{cfg: cfg, workers: workers, maxPayload: maxPayload, quiet: quiet}, e)
	}
	if err := bf.unused(fs); err != nil {
		return err
	}
	p, err := demoProblem(sources, target, rd.options(), dataSeed)
	if err != nil {
		return err
	}
	// On files, the classifier of dadil federate join; on the generated
	// problem, a softmax regression's defaults.
	d := demoRunner{cfg: cfg, workers: workers, maxPayload: maxPayload, quiet: quiet}
	if len(sources) > 0 {
		if d.trainer, err = (&dictFlags{classifier: defaultClassifier}).trainer(dataset.ScaleMinMax); err != nil {
			return err
		}
	}
	if err := d.start(e); err != nil {
		return err
	}
	defer d.srv.Shutdown()
	r, err := d.run(p)
	if err != nil {
		return err
	}
	w := e.stdout
	d.describe(w, r)
	fmt.Fprintf(w, "  bytes per round (mean): %s sent to the sites, %s received from them\n", byteSize(r.out), byteSize(r.in))
	fmt.Fprintf(w, "%-32s %8s %8s %8s\n", "target accuracy (%)", "DaDiL-R", "DaDiL-E", "seconds")
	fmt.Fprintf(w, "%-32s %8.2f %8.2f %8.2f\n", "federated", 100*r.fedR, 100*r.fedE, r.fedTime.Seconds())
	fmt.Fprintf(w, "%-32s %8.2f %8.2f %8.2f\n", fmt.Sprintf("centralised (%d epochs)", r.epochs), 100*r.cenR, 100*r.cenE, r.cenTime.Seconds())
	fmt.Fprintf(w, "%-32s %8.2f %8.2f %8.2f\n", "centralised, federation's start", 100*r.startR, 100*r.startE, r.startTime.Seconds())
	return nil
}

// demoRunner runs federated DaDiL on a problem, its sites as goroutines on
// an embedded NATS server, then the centralised fit with the same
// settings.
type demoRunner struct {
	cfg                 federate.Config
	workers, maxPayload int
	quiet               bool
	trainer             classify.Trainer // nil: a softmax regression's defaults
	srv                 *server.Server
}

// demoResult is one run of demoRunner: the target accuracies of the
// federation, of the centralised fit and of the centralised fit started
// from the federation's first atoms, their times, the mean bytes per round
// each way and the centralised fit's epochs.
type demoResult struct {
	sites                  int
	fedR, fedE, cenR, cenE float64
	startR, startE         float64
	fedTime, cenTime       time.Duration
	startTime              time.Duration
	out, in                int64
	epochs                 int
}

// start starts the embedded server and sets the progress lines.
func (d *demoRunner) start(e *env) error {
	srv, err := federate.StartServer(federate.ServerConfig{Token: "demo", MaxPayload: int32(d.maxPayload)})
	if err != nil {
		return err
	}
	d.srv = srv
	d.cfg.Subject = federate.DefaultSubject
	if !d.quiet {
		d.cfg.Progress = func(st federate.RoundStats) { fmt.Fprintln(e.stderr, roundLine(st)) }
		d.cfg.Log = func(format string, a ...any) { fmt.Fprintf(e.stderr, format+"\n", a...) }
	}
	return nil
}

// run runs the federation on p (one site per domain, the target scored on
// p.Test), then the centralised fit.
func (d *demoRunner) run(p *dataset.Problem) (*demoResult, error) {
	cfg := d.cfg
	start := time.Now()
	site := federate.SiteConfig{Workers: d.workers, Classifier: d.trainer}
	res, sites, err := federate.RunProblem(context.Background(), d.srv.ClientURL(), "demo", p, cfg, site)
	if err != nil {
		return nil, err
	}
	r := &demoResult{sites: len(res.Sites), fedTime: time.Since(start)}
	tg := sites[len(sites)-1]
	r.fedR, r.fedE = tg.AccuracyR, tg.AccuracyE
	for _, st := range res.Rounds {
		r.out += st.BytesOut
		r.in += st.BytesIn
	}
	r.out /= int64(cfg.Rounds)
	r.in /= int64(cfg.Rounds)
	set := cfg.Settings
	set.Epochs, set.PlateauTol, set.Seed, set.Workers = cfg.Rounds*cfg.LocalEpochs, -1, cfg.Seed, d.workers
	// As in the federation, whose target site never learns the sources'
	// class proportions, the target's atom batches are class-balanced.
	set.BalancedTarget = true
	if cfg.Start == federate.StartGaussian {
		set.Init, set.FeatureScale = dictionary.InitGaussian, dictionary.ScaleNone
	}
	r.epochs = set.Epochs
	start = time.Now()
	if r.cenR, r.cenE, err = centralised(p, cfg.Scaling, &set, d.trainer, nil); err != nil {
		return nil, err
	}
	r.cenTime = time.Since(start)
	if res.Start == nil { // a federation that resumed a saved state
		return nil, errors.New("federate demo: the federation did not report its first atoms")
	}
	start = time.Now()
	if r.startR, r.startE, err = centralised(p, cfg.Scaling, &set, d.trainer, res.Start); err != nil {
		return nil, err
	}
	r.startTime = time.Since(start)
	return r, nil
}

// describe writes the federation's settings.
func (d *demoRunner) describe(w io.Writer, r *demoResult) {
	cfg := d.cfg
	kept := "restarted"
	switch {
	case cfg.ShareMoments:
		kept = "kept, second moments shared"
	case cfg.KeepLocalState:
		kept = "kept"
	}
	moves := "as they are"
	if cfg.WeighMoves {
		moves = "weighed by K·α"
	}
	logits := ""
	if cfg.SourceLogits && cfg.Aggregation != federate.Random {
		logits = ", label logits the sources' mean"
	}
	fmt.Fprintf(w, "federated DaDiL: %d sites, %d rounds of %d local epochs, C = %g, %v aggregation, %v server step, sites' Adam state %s, moves %s%s\n",
		r.sites, cfg.Rounds, cfg.LocalEpochs, cfg.Fraction, cfg.Aggregation, cfg.Server.Optimizer, kept, moves, logits)
}

// centralised fits DaDiL on the whole problem, scaled over all its
// domains, its atoms started as set says or, if start is not nil, from
// start (dictionary.FitFrom), and returns the accuracies of DaDiL-R and
// DaDiL-E on its test rows (the target's, or a benchmark's test fold,
// scaled alike). DaDiL-R trains on the reconstruction alone, as the
// target site's does: no site reads the sources' rows.
func centralised(p *dataset.Problem, kind dataset.Scaling, set *dictionary.Settings, t classify.Trainer, start []dictionary.Atom) (float64, float64, error) {
	p, err := scaledProblem(p, kind)
	if err != nil {
		return 0, 0, err
	}
	alone := *set
	alone.Transport = dictionary.TransportNone
	set = &alone
	var m *dictionary.Model
	if start == nil {
		m, err = dictionary.FitModel(p, set, t)
	} else {
		var d *dictionary.Dictionary
		if d, err = dictionary.FitFrom(p.Domains(), p.Classes, start, set); err == nil {
			m, err = dictionary.NewModel(d, p.TargetIndex(), t, set.Seed)
		}
	}
	if err != nil {
		return 0, 0, err
	}
	var acc [2]float64
	for i, pred := range []func(X *mat.Dense) ([]int, error){m.PredictR, m.PredictE} {
		y, err := pred(p.Test.X)
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

// demoProblem returns the problem of the files, unscaled, its domains
// named by the files' base names, or the generated problem of seed when no
// file is given.
func demoProblem(sources []string, target string, opt *dataset.ReadOptions, seed uint64) (*dataset.Problem, error) {
	if len(sources) == 0 && target == "" {
		return synth.Generate(synth.Default(), seed), nil
	}
	if len(sources) == 0 || target == "" {
		return nil, usageError{errors.New("--source and --target go together")}
	}
	lo := dataset.LoadOptions{}
	if opt != nil {
		lo.Read = *opt
	}
	ld, err := dataset.Load(sources, target, &lo)
	if err != nil {
		return nil, err
	}
	if ld.Test == nil {
		return nil, fmt.Errorf("%s: the demo needs the target's labels to score it", target)
	}
	p := ld.Problem
	for i := range p.Sources {
		p.Sources[i].Name = siteBase(sources[i])
	}
	p.Target.Name = siteBase(target)
	return p, nil
}

// siteBase is the site name of a file: its base name without extension.
func siteBase(path string) string {
	return federate.SiteName(dataset.Domain{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))}, 0)
}

// scaledProblem returns p with every domain, and its test rows, scaled by
// the scaling of kind fitted on all the domains together (not the test
// rows, unless they are the target's).
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
	if p.Test != nil {
		t := *p.Test
		if t.X == p.Target.X {
			t.X = &X
		} else {
			t.X = new(mat.Dense)
			if err := sc.Transform(t.X, p.Test.X); err != nil {
				return nil, err
			}
		}
		q.Test = &t
	}
	return &q, nil
}
