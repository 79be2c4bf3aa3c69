package synth_test

import (
	"fmt"

	"github.com/dadil/dadil/synth"
)

// The demo problem: three labeled sources and a target whose labels only
// score (Problem.Test).
func ExampleGenerate() {
	p := synth.Generate(synth.Default(), 1)
	for _, d := range p.Domains() {
		fmt.Printf("%-8s %d rows, labeled: %v\n", d.Name, d.Rows(), d.Labeled())
	}
	fmt.Println("classes:", p.Classes, "test rows:", p.Test.Rows())
	// Output:
	// source 1 300 rows, labeled: true
	// source 2 300 rows, labeled: true
	// source 3 300 rows, labeled: true
	// target   300 rows, labeled: false
	// classes: 3 test rows: 300
}
