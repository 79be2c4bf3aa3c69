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
