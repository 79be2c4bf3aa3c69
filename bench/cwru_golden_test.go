package bench

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/internal/golden"
	"github.com/dadil/dadil/mlp"
)

// failingTrainer is a classify.Trainer that always fails.
type failingTrainer struct{}

func (failingTrainer) Train(X, T *mat.Dense, w []float64) (classify.Classifier, error) {
	return nil, errors.New("no training today")
}
func (failingTrainer) Name() string { return "failing" }

// TestRunCWRUGolden pins RunCWRU's results (but their times), progress
// lines and encoder epochs, on the target or with sources held out, and its
// errors, to testdata/cwru.golden.
func TestRunCWRUGolden(t *testing.T) {
	dir, files := synthCWRU(t, []string{"a", "b", "c"}, 2, 1200)
	c, err := LoadCWRU(dir, files, 64)
	if err != nil {
		t.Fatal(err)
	}
	proto := &CWRUProtocol{
		Window: 64, Coeffs: 16, Windows: 12, Train: 8,
		Encoder: &mlp.Settings{Hidden: []int{8}, Epochs: 2, Batch: 8, LearningRate: 3e-3},
	}
	var b strings.Builder
	for _, held := range []bool{false, true} {
		opt := CWRUOptions{
			Methods: []string{"mlp", "source-only"}, Targets: []string{"c", "a"}, Seeds: 2, Seed: 5,
			Workers: 1, Protocol: proto, HeldOutSources: held,
			Progress: func(done, total int, what string, _ time.Duration) {
				fmt.Fprintf(&b, "%d/%d %s\n", done, total, what)
			},
			Encoder: func(target string, rep, epoch, epochs int, loss, accuracy float64) {
				fmt.Fprintf(&b, "encoder %s %d: epoch %d/%d, loss %v, accuracy %v\n", target, rep, epoch, epochs, loss, accuracy)
			},
		}
		res, err := RunCWRU(c, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			fmt.Fprintf(&b, "%s on %s (held out %q) seed %d: %v%%\n", r.Method, r.Target, r.HeldOut, r.Fold, r.Accuracy)
		}
	}
	two := &CWRU{Domains: c.Domains[:2], Labels: c.Labels, rec: c.rec[:2]}
	for _, tc := range []struct {
		c   *CWRU
		opt CWRUOptions
	}{
		{&CWRU{}, CWRUOptions{}},
		{c, CWRUOptions{Targets: []string{"d"}, Protocol: proto}},
		{c, CWRUOptions{Seeds: -1, Protocol: proto}},
		{c, CWRUOptions{Protocol: &CWRUProtocol{Window: 64, Coeffs: 16, Windows: 12, Train: 12}}},
		{c, CWRUOptions{Methods: []string{"dadil-x"}, Protocol: proto}},
		{c, CWRUOptions{Methods: []string{"mlp"}, Seeds: 1, Protocol: &CWRUProtocol{Window: 2048, Coeffs: 16, Windows: 12, Train: 8}}},
		{two, CWRUOptions{Methods: []string{"mlp"}, Protocol: proto, HeldOutSources: true}},
		{c, CWRUOptions{Methods: []string{"source-only"}, Targets: []string{"b"}, Seeds: 1, Protocol: proto, Classifier: failingTrainer{}}},
		{c, CWRUOptions{Methods: []string{"source-only"}, Targets: []string{"b"}, Seeds: 1, Protocol: proto, Classifier: failingTrainer{}, HeldOutSources: true}},
	} {
		_, err := RunCWRU(tc.c, tc.opt)
		fmt.Fprintf(&b, "error: %s\n", strings.ReplaceAll(fmt.Sprint(err), dir, "DIR"))
	}
	golden.Check(t, "cwru.golden", b.String())
}
