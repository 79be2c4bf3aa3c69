package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/modelfile"
)

func runPredict(args []string, e *env) error {
	fs := newFlags("dadil predict", e)
	model := fs.String("model", "", "model `FILE` written by dadil fit (DIR/model.dadil)")
	data := fs.String("data", "", "data `PATH` to classify (.csv, .npy, .npz or .mat); labels in it, if any, only score the predictions (on standard error)")
	method := fs.String("method", "r", "`r` for DaDiL-R (GMM-DaDiL-R), e for DaDiL-E (GMM-DaDiL-E); for a GMM-DaDiL model also map, the MAP rule of the target's reconstructed mixture, and e-map, the atoms' MAP rules weighed by the target's coordinates")
	out := fs.String("out", "", "write the CSV to `FILE` instead of standard output")
	var rf readerFlags
	rf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil predict --model FILE --data PATH [--method r|e|map|e-map] [--out FILE]")
		fmt.Fprintln(fs.Output(), "\nWrites one line \"row,label\" per row of the data, labels in the values of the training sources.")
		fmt.Fprintln(fs.Output(), "When the data carry labels, the accuracy against them is reported on standard error.")
		fmt.Fprintln(fs.Output(), "The data have the training files' columns; when those missed values, missing values (\"?\",")
		fmt.Fprintln(fs.Output(), "empty cells, NA, NaN) are filled, and dropped features ignored, as in training.")
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
	case *method != "r" && *method != "e" && *method != "map" && *method != "e-map":
		return usageError{fmt.Errorf("--method %s: want r, e, map or e-map", clip.Quote(*method))}
	}
	if *out != "" {
		if err := checkOutput("--out", *out); err != nil {
			return err
		}
	}
	f, err := modelfile.Load(*model)
	if err != nil {
		return err
	}
	d, unknown, err := f.ReadData(*data, rf.options())
	if err != nil {
		return err
	}
	var pred []int
	switch {
	case f.GMM != nil:
		pred, err = gmmPredictor(f.GMM, *method)(d.X)
	case *method == "map" || *method == "e-map":
		return usageError{fmt.Errorf("--method %s: the model %s is a DaDiL model; MAP rules apply to GMM-DaDiL models (dadil fit --method gmm)", *method, *model)}
	case *method == "e":
		pred, err = f.Model.PredictE(d.X)
	default:
		pred, err = f.Model.PredictR(d.X)
	}
	if err != nil {
		return err
	}
	if err := writePredictions(e, *out, pred, f.Labels); err != nil || d.Y == nil {
		return err
	}
	// The data carry labels: score the predictions against them.
	acc, err := classify.Accuracy(pred, d.Y)
	if err != nil {
		return err
	}
	n := len(pred)
	fmt.Fprintf(e.stderr, "accuracy against the labels in %s: %.2f%% (%d of %d rows)\n", *data, 100*acc, int(math.Round(acc*float64(n))), n)
	if len(unknown) > 0 {
		fmt.Fprintf(e.stderr, "note: labels %s of %s are not among the model's classes %s; those rows count as errors\n", clip.Ints(unknown, 20), *data, clip.Ints(f.Labels, 20))
	}
	return nil
}

// writePredictions writes "row,label" lines, labels in the user's values,
// to the file out or, when out is "", to standard output.
func writePredictions(e *env, out string, pred, labels []int) error {
	var b bytes.Buffer
	b.WriteString("row,label\n")
	for i, p := range pred {
		fmt.Fprintf(&b, "%d,%d\n", i, labels[p])
	}
	if out == "" {
		_, err := e.stdout.Write(b.Bytes())
		return err
	}
	return atomicfile.Write(out, b.Bytes())
}
