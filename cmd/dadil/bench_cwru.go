package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
)

func runBenchCWRU(args []string, e *env) error {
	fs := newFlags("dadil bench cwru", e)
	cf := addCWRUFlags(fs, "comma-separated target domains (rpm)")
	methods := fs.String("methods", "all", "comma-separated `LIST` of methods, or all")
	workers := fs.Int("workers", 0, "methods fitted at once (0: one per core); results do not depend on it")
	encEpochs := fs.Int("encoder-epochs", bench.CWRUEncoder().Epochs, "epochs of the encoder's training")
	encDecay := fs.Float64("encoder-weight-decay", bench.CWRUEncoder().WeightDecay, "L2 penalty λ on the encoder's weights")
	scaling := fs.String("scale", "standard", "scaling of the encoded features: standard, minmax or none")
	l2 := fs.String("l2", "", "penalty `λ` of every method's softmax classifier but the encoder's and the paper's DaDiL (default 0.01 with --scale standard, else 0.001)")
	paperScaling := fs.String("paper-scale", "standard", "scaling of the encoded features for dadil-r-paper and dadil-e-paper (chosen by --held-out-sources)")
	heldOut := fs.Bool("held-out-sources", false, "validate without the target instead: each source is held out in turn and plays the target")
	transport := fs.String("transport", "auto", transportUsage)
	fs.Usage = func() { benchCWRUUsage(fs) }
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkWorkers(*workers); err != nil {
		return err
	}
	if err := cf.check(); err != nil {
		return err
	}
	if err := checkEncoderFlags(*encEpochs, *encDecay); err != nil {
		return err
	}
	classifier, err := cwruClassifier(fs, *scaling, *l2)
	if err != nil {
		return err
	}
	dict, err := transportSettings(*transport)
	if err != nil {
		return err
	}
	enc := bench.CWRUEncoder()
	enc.Epochs = *encEpochs
	enc.WeightDecay = *encDecay
	proto := cf.protocol()
	proto.Encoder, proto.Scaling, proto.PaperScaling = enc, *scaling, *paperScaling
	announceMachine(e)
	start := time.Now()
	c, err := cf.load(e)
	if err != nil {
		return err
	}
	tl := splitList(*cf.targets)
	ml := splitList(*methods)
	res, err := bench.RunCWRU(c, bench.CWRUOptions{
		Methods: ml, Targets: tl, Seeds: *cf.seeds, Seed: *cf.seed, Workers: *workers, Protocol: proto,
		Progress: benchProgress(e), HeldOutSources: *heldOut, Classifier: classifier, Dictionary: dict,
		Encoder: func(target string, rep, epoch, epochs int, loss, acc float64) {
			fmt.Fprintf(e.stderr, "encoder for %s seed %d: epoch %d/%d, loss %.4g, training accuracy %.2f%%\n", target, rep, epoch, epochs, loss, 100*acc)
		},
	})
	if err != nil {
		return err
	}
	bench.SortResults(res, bench.CWRUMethodNames(), tl)
	printCWRUTitle(e, *heldOut, len(c.Labels), *cf.seeds, *cf.seed, time.Since(start))
	fmt.Fprintf(e.stdout, "Encoded features %s scaled, classifier %s (the paper's DaDiL: %s scaled, its own).\n\n", *scaling, classifier.Name(), *paperScaling)
	fmt.Fprint(e.stdout, bench.Table(res, tableMethods(ml, bench.CWRUMethodNames()), tl))
	if *cf.jsonPath != "" {
		return writeBenchJSON(*cf.jsonPath, map[string]any{
			"benchmark": "cwru", "classes": c.Labels, "class_names": c.Names, "dropped": c.Dropped,
			"protocol": proto, "classifier": classifier.Name(), "seeds": *cf.seeds, "seed": *cf.seed, "results": res, "validation": validation(*heldOut),
		})
	}
	return nil
}

// benchCWRUUsage prints the help of dadil bench cwru.
func benchCWRUUsage(fs *flag.FlagSet) {
	fmt.Fprintln(fs.Output(), "usage: dadil bench cwru --data DIR [--methods LIST] [--targets 1772,1750,1730] [--seeds 5] [--held-out-sources] [--json FILE]")
	fmt.Fprintln(fs.Output(), "\nReproduces the CWRU cross-domain fault-diagnosis experiment of the DaDiL paper (Table 5): from the")
	fmt.Fprintln(fs.Output(), "raw drive-end recordings, random windows → FFT magnitudes → an MLP encoder trained on the sources")
	fmt.Fprintln(fs.Output(), "→ every method on the encoded features; accuracy on the target's test windows, mean ± std over seeds.")
	fmt.Fprintln(fs.Output(), "With --held-out-sources, the target is not read: each source in turn is held out and plays the target,")
	fmt.Fprintln(fs.Output(), "with the encoder trained on the other sources (leave-one-domain-out validation, a label-free choice).")
	fmt.Fprintf(fs.Output(), "\nMethods: %s\n\n", strings.Join(bench.CWRUMethodNames(), ", "))
	fs.PrintDefaults()
}

// checkEncoderFlags checks --encoder-epochs (at least 1) and
// --encoder-weight-decay (finite, non-negative).
func checkEncoderFlags(epochs int, decay float64) error {
	if epochs < 1 {
		return usageError{fmt.Errorf("--encoder-epochs must be at least 1")}
	}
	if !(decay >= 0) || decay > 1e300 {
		return usageError{fmt.Errorf("--encoder-weight-decay must be a finite non-negative number")}
	}
	return nil
}

// printCWRUTitle prints the title of dadil bench cwru's table: what the
// accuracies of a run of the given seeds over the given number of classes
// measure, on the target or with sources held out, and its duration.
func printCWRUTitle(e *env, heldOut bool, classes, seeds int, seed uint64, took time.Duration) {
	if heldOut {
		fmt.Fprintf(e.stdout, "CWRU, %d classes: held-out-source validation, without the target. Column T: accuracy (%%) on T's sources,\n"+
			"each held out in turn as the target (encoder trained on the other); mean ± std over both and %s (base seed %d); %.0f s.\n\n",
			classes, plural(seeds, "seed"), seed, took.Seconds())
	} else {
		fmt.Fprintf(e.stdout, "CWRU, %d classes: target accuracy (%%), mean ± std over %s (base seed %d); %.0f s.\n\n",
			classes, plural(seeds, "seed"), seed, took.Seconds())
	}
}

// cwruClassifier returns the softmax regression of --l2, or else of the
// default penalty of --scale (adapt.DefaultPenalty).
func cwruClassifier(fs *flag.FlagSet, scaling, l2 string) (classify.Trainer, error) {
	kind, err := dataset.ParseScaling(scaling)
	if err != nil {
		return nil, usageError{err}
	}
	if l2 != "" || flagSet(fs, "l2") {
		lambda, err := parseL2(l2)
		if err != nil {
			return nil, err
		}
		if lambda == 0 {
			return nil, usageError{fmt.Errorf("--l2 auto: not on this benchmark; give a penalty")}
		}
	}
	return &classify.SoftmaxTrainer{Settings: &classify.Settings{L2: penalty(l2, kind)}}, nil
}
