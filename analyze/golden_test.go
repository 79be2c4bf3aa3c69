package analyze

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/internal/golden"
)

// TestHullGolden pins Hull's result, progress messages and errors to
// testdata/hull.golden.
func TestHullGolden(t *testing.T) {
	p := synthProblem()
	var b strings.Builder
	s := &HullSettings{Dictionary: quick(4), Steps: 2, Atoms: []int{3, 4}, Draws: 3, Workers: 1}
	s.Progress = func(done, total int, what string) { fmt.Fprintf(&b, "%d/%d %s\n", done, total, what) }
	res, err := Hull([]*dataset.Problem{p}, s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	b.Write(out)
	b.WriteString("\n")
	// K = 3 fitted for the grid only; no test labels.
	q := *p
	q.Test = nil
	res, err = Hull([]*dataset.Problem{&q}, &HullSettings{Dictionary: quick(5), Steps: 1, Atoms: []int{4}, Draws: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	out, _ = json.Marshal(res)
	b.Write(out)
	b.WriteString("\n")
	for _, s := range []*HullSettings{
		nil,
		{Draws: -1},
		{Atoms: []int{3, 1}},
		{Steps: -1, Atoms: []int{}},
	} {
		_, err := Hull([]*dataset.Problem{p}, s)
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	bad := *p
	bad.Test = &dataset.Domain{X: p.Test.X, Y: p.Test.Y[:5]}
	_, err = Hull([]*dataset.Problem{&bad}, &HullSettings{Dictionary: quick(4), Steps: 2, Atoms: []int{}})
	fmt.Fprintf(&b, "error: %v\n", err)
	golden.Check(t, "hull.golden", b.String())
}

// TestSweepGolden pins Sweep's runs (but their times), progress messages
// and errors to testdata/sweep.golden.
func TestSweepGolden(t *testing.T) {
	p := synthProblem()
	q := *p
	q.Name, q.Test = "no labels", nil
	var b strings.Builder
	set := quick(3)
	set.Epochs = 8
	s := &SweepSettings{Dictionary: set, Atoms: []int{3}, Samples: []int{40}, Batches: []int{10, 20}, Neighbours: 3, Workers: 1}
	s.Progress = func(done, total int, what string) { fmt.Fprintf(&b, "%d/%d %s\n", done, total, what) }
	runs, err := Sweep([]*dataset.Problem{p, &q}, s)
	if err != nil {
		t.Fatal(err)
	}
	for i := range runs {
		runs[i].Seconds = 0
	}
	out, err := json.MarshalIndent(runs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	b.Write(out)
	b.WriteString("\n")
	bad := *p
	bad.Test = &dataset.Domain{X: p.Test.X, Y: p.Test.Y[:5]}
	for _, tc := range []struct {
		p *dataset.Problem
		s *SweepSettings
	}{
		{p, nil},
		{p, &SweepSettings{Dictionary: set}},
		{p, &SweepSettings{Dictionary: set, Atoms: []int{3}, Batches: []int{0}}},
		{p, &SweepSettings{Dictionary: set, Samples: []int{-2}}},
		{&bad, &SweepSettings{Dictionary: set, Atoms: []int{3}}},
		{p, &SweepSettings{Dictionary: set, Samples: []int{5}, Batches: []int{30}}},
		{p, &SweepSettings{Dictionary: set, Atoms: []int{3}, Neighbours: -1}},
	} {
		_, err := Sweep([]*dataset.Problem{tc.p}, tc.s)
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	golden.Check(t, "sweep.golden", b.String())
}
