package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/modelfile"
)

func runPredict(args []string, e *env) error {
	fs := newFlags("dadil predict", e)
	model := fs.String("model", "", "model `FILE` written by dadil fit (DIR/model.dadil)")
	data := fs.String("data", "", "data `PATH` to classify (.csv, .npy, .npz or .mat); labels in it, if any, only score the predictions (on standard error)")
	method := fs.String("method", "r", "`r` for DaDiL-R, e for DaDiL-E")
	out := fs.String("out", "", "write the CSV to `FILE` instead of standard output")
	var rf readerFlags
	rf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil predict --model FILE --data PATH [--method r|e] [--out FILE]")
		fmt.Fprintln(fs.Output(), "\nWrites one line \"row,label\" per row of the data, labels in the values of the training sources.")
		fmt.Fprintln(fs.Output(), "When the data carry labels, the accuracy against them is reported on standard error.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *model == "":
		return usageError{errors.New("--model is required")}
	case *data == "":
		return usageError{errors.New("--data is required")}
	case *method != "r" && *method != "e":
		return usageError{fmt.Errorf("--method %q: want r or e", *method)}
	}
	f, err := modelfile.Load(*model)
	if err != nil {
		return err
	}
	opt := rf.options()
	opt.LabelsOptional = true
	d, err := dataset.Read(*data, opt)
	if err != nil {
		return err
	}
	if _, dim := d.X.Dims(); dim != len(f.Scaler.Offset) {
		return fmt.Errorf("%s has %d features but the model %s was fitted on %d", *data, dim, *model, len(f.Scaler.Offset))
	}
	if j := dataset.FeatureMismatch(f.Features, d.Features); j >= 0 {
		return fmt.Errorf("%s: column %d is %q, but the model %s was fitted with %q there (features are matched by position: put the columns in the same order)", *data, j+1, d.Features[j], *model, f.Features[j])
	}
	sd, err := f.Scaler.TransformDomain(d)
	if err != nil {
		return err
	}
	var pred []int
	if *method == "r" {
		pred, err = f.Model.PredictR(sd.X)
	} else {
		pred, err = f.Model.PredictE(sd.X)
	}
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("row,label\n")
	for i, p := range pred {
		fmt.Fprintf(&b, "%d,%d\n", i, f.Labels[p])
	}
	if *out == "" {
		_, err = e.stdout.Write(b.Bytes())
	} else {
		err = atomicfile.Write(*out, b.Bytes())
	}
	if err != nil || d.Labels == nil {
		return err
	}
	// The data carry labels: score the predictions against them.
	truth, unknown := classIndices(d.Labels, func(y int) (int, bool) {
		k := slices.Index(f.Labels, y)
		return k, k >= 0
	})
	acc, err := classify.Accuracy(pred, truth)
	if err != nil {
		return err
	}
	n := len(pred)
	fmt.Fprintf(e.stderr, "accuracy against the labels in %s: %.2f%% (%d of %d rows)\n", *data, 100*acc, int(math.Round(acc*float64(n))), n)
	if len(unknown) > 0 {
		slices.Sort(unknown)
		fmt.Fprintf(e.stderr, "note: labels %v of %s are not among the model's classes %v; those rows count as errors\n", unknown, *data, f.Labels)
	}
	return nil
}
